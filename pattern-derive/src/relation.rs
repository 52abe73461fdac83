//! Relationships: `#[relation]`, `#[relation(parent, sort(..))]` and `#[relation(inverse = ..)]`
//! on fields holding references, and, for every struct model, what other models' references
//! need of it (`Identified`: its `_id`; `Relations`: its relation fields, for the two-way checks).
//!
//! The field's type is checked to hold references by the `RefField` projection: every use of the
//! type in generated code is spanned over the whole type (see `across`), so a type holding no
//! reference is one error at the field's type, the same one from every item, printed once. A
//! two-way relation is checked against the other side's `Relations` in a constant, which fails
//! with a message naming both sides; a model with a mistake still lists its relation fields, so
//! the models naming them are not told they are missing.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::{Ident, LitInt};

use crate::ast::{self, Field, Model};
use crate::attr::Attr;
use crate::errors::{did_you_mean, Errors};
use crate::schema::{Pattern, PatternDef};

/// The relation pattern's entry points.
pub(crate) const PATTERN: PatternDef = PatternDef {
    model: |_, model, errors| {
        Box::new(Relations {
            fields: crate::schema::each_field(model, errors, parse_field),
        })
    },
    fields: None,
};

const HELP: &str = "`#[relation]`, `#[relation(parent)]`, `#[relation(parent, sort(time = -1))]` \
                    or `#[relation(inverse = other_side_field)]`";

struct Relations {
    fields: Vec<RelationField>,
}

struct RelationField {
    ident: Ident,
    rust_name: String,
    bson_name: String,
    ty: syn::Type,
    /// The field's type is written as a `Vec` (or `Option<Vec>`).
    many: bool,
    parent: bool,
    /// `(BSON name, direction)`.
    sort: Vec<(String, i32)>,
    inverse: Option<Ident>,
}

impl RelationField {
    /// The keys of the index the relation declares: parents and both sides of a two-way
    /// relation are queried by the field (then the children's sort).
    fn index_keys(&self) -> Option<Vec<(String, i32)>> {
        (self.parent || self.inverse.is_some()).then(|| {
            std::iter::once((self.bson_name.clone(), 1))
                .chain(self.sort.iter().cloned())
                .collect()
        })
    }
}

/// `Vec<T>` or `Option<Vec<T>>`, as written.
fn written_many(ty: &syn::Type) -> bool {
    if crate::types::vec_element(ty).is_some() {
        return true;
    }
    let syn::Type::Path(p) = ty else { return false };
    let Some(last) = p.path.segments.last() else {
        return false;
    };
    if last.ident != "Option" {
        return false;
    }
    match &last.arguments {
        syn::PathArguments::AngleBracketed(a) => matches!(
            a.args.first(),
            Some(syn::GenericArgument::Type(t)) if crate::types::vec_element(t).is_some()
        ),
        _ => false,
    }
}

/// The innermost type argument's last segment (`Task` in `Vec<Ref<Task>>`), for messages.
fn target_name(ty: &syn::Type) -> String {
    let mut ty = ty;
    loop {
        let syn::Type::Path(p) = ty else {
            return crate::errors::type_string(ty);
        };
        let Some(last) = p.path.segments.last() else {
            return crate::errors::type_string(ty);
        };
        match &last.arguments {
            syn::PathArguments::AngleBracketed(a) => match a.args.first() {
                Some(syn::GenericArgument::Type(t)) => ty = t,
                _ => return last.ident.to_string(),
            },
            _ => return last.ident.to_string(),
        }
    }
}

fn parse_field(field: &Field<'_>, model: &Model<'_>, errors: &mut Errors) -> Option<RelationField> {
    let attr = field.attrs_of(Attr::Relation).next()?;
    if let Some(second) = field.attrs_of(Attr::Relation).nth(1) {
        errors.spanned(
            second,
            "one `#[relation(...)]` per field: put every option in one attribute",
        );
    }
    if !field.serialized {
        errors.spanned(
            field.ident,
            "a `#[relation]` field must be stored (no `#[serde(skip)]`)",
        );
        return None;
    }
    let mut parent: Option<Span> = None;
    let mut sort: Vec<(String, i32)> = Vec::new();
    let mut sort_span: Option<Span> = None;
    let mut inverse: Option<Ident> = None;
    if let syn::Meta::List(_) = &attr.meta {
        // On a mistake the field is still listed with what was read (for the two-way checks of
        // the models naming it, which would otherwise report it missing); the model's errors
        // stop the rest of its generated code.
        let options = ["parent", "sort", "inverse"];
        let mut keys = crate::options::Keys::new("relation", &options).with_help(HELP);
        keys.nested(attr, errors, |key, meta, _| {
            if key == "parent" {
                parent = Some(meta.path.segments[0].ident.span());
            } else if key == "inverse" {
                inverse = Some(meta.value()?.parse()?);
            } else {
                sort_span = Some(meta.path.segments[0].ident.span());
                meta.parse_nested_meta(|key| {
                    let Some(name) = key.path.get_ident() else {
                        return Err(key.error("a sort key is a field of this model"));
                    };
                    let dir: LitInt = key.value()?.parse()?;
                    let dir: i32 = match dir.base10_parse::<i32>() {
                        Ok(d @ (1 | -1)) => d,
                        _ => {
                            return Err(syn::Error::new(
                                dir.span(),
                                "a sort direction is 1 (ascending) or -1 (descending)",
                            ))
                        }
                    };
                    let rust = ast::unraw(name);
                    match model.field(&rust) {
                        Some(f) if f.serialized => sort.push((f.bson_name.clone(), dir)),
                        _ => {
                            let names = model.fields.iter().map(|f| f.rust_name.as_str());
                            return Err(syn::Error::new(
                                name.span(),
                                format!(
                                    "`{rust}` is not a stored field of `{}`{}: the children are \
                                     sorted by their own fields",
                                    model.ident,
                                    did_you_mean(&rust, names)
                                ),
                            ));
                        }
                    }
                    Ok(())
                })?;
            }
            Ok(())
        });
    } else if !matches!(attr.meta, syn::Meta::Path(_)) {
        errors.spanned(
            attr,
            format!("`#[relation]` takes its options in parentheses: write {HELP}"),
        );
    }
    let many = written_many(field.ty);
    if let Some(span) = parent {
        if many {
            let target = target_name(field.ty);
            errors.at(
                span,
                format!(
                    "a parent reference is a single reference in the child (`{}: Ref<{target}>` \
                     or `Option<Ref<{target}>>`), not an array: for an array of children's ids \
                     in the parent, drop `parent` (`#[relation]`)",
                    field.rust_name
                ),
            );
            parent = None;
        } else if inverse.is_some() {
            errors.at(
                span,
                "`parent` and `inverse` do not go together: the single side of a two-way \
                 relation is already indexed and queried like a parent reference; drop `parent`",
            );
            parent = None;
        }
    } else if let Some(span) = sort_span {
        errors.at(
            span,
            "`sort(..)` orders a parent's children: it goes with `parent` \
             (`#[relation(parent, sort(time = -1))]`)",
        );
    }
    if parent.is_none() {
        sort.clear();
    }
    if let (Some(inv), true) = (&inverse, field.has(Attr::ExtendedRef)) {
        errors.spanned(
            inv,
            format!(
                "a two-way relation's side holds bare `_id`s, which `assign` and `repair` write; \
                 an extended-reference copy here would be overwritten by them: keep the relation \
                 on a field of its own holding the other model's `_id` (`Ref<..>`, with \
                 `#[relation(inverse = {inv})]`) and the copy beside it \
                 (`#[extended_ref(propagate)]`)"
            ),
        );
    }
    Some(RelationField {
        ident: field.ident.clone(),
        rust_name: field.rust_name.clone(),
        bson_name: field.bson_name.clone(),
        ty: field.ty.clone(),
        many,
        parent: parent.is_some(),
        sort,
        inverse,
    })
}

fn spec_static(i: usize) -> Ident {
    format_ident!("__RELATION_{}", i)
}

/// `impl Identified` (when the `_id` is stored as its type's own serialization) and
/// `impl Relations` for `model`, from `fields`.
fn identity(model: &Model<'_>, fields: &[RelationField]) -> TokenStream {
    let krate = &model.krate;
    let p = quote!(#krate::__private);
    let ident = model.ident;
    let identified = model
        .fields
        .iter()
        .find(|f| f.bson_name == "_id" && f.serialized && !f.custom_serializer)
        .map(|f| {
            let id = f.ident;
            let ty = f.ty;
            quote! {
                #[automatically_derived]
                impl #p::Identified for #ident {
                    fn id(&self) -> &#ty {
                        &self.#id
                    }
                }
            }
        });
    let sides = fields.iter().map(|f| {
        let rust = &f.rust_name;
        let bson = &f.bson_name;
        let schema = target_schema(&p, &f.ty);
        let many = f.many;
        let inverse = match &f.inverse {
            Some(i) => {
                let i = ast::unraw(i);
                quote!(::core::option::Option::Some(#i))
            }
            None => quote!(::core::option::Option::None),
        };
        quote! {
            #p::RelationSide {
                rust: #rust,
                bson: #bson,
                target: #schema.name(),
                inverse: #inverse,
                many: #many,
            }
        }
    });
    quote! {
        #identified

        #[automatically_derived]
        impl #p::Relations for #ident {
            const RELATIONS: &'static [#p::RelationSide] = &[#(#sides),*];
        }
    }
}

/// `first`, `middle` as it is, then `last`: every token of `first` at `lo` and of `last` at
/// `hi`, so that rustc's span of them together runs from `lo` to `hi`, the field's type.
///
/// Every use of the field's type in generated code is spanned over the whole type this way:
/// the error each one reports for a type holding no reference is then the same error at the
/// same span, which rustc prints once.
fn across(
    (lo, hi): (Span, Span),
    first: TokenStream,
    middle: impl quote::ToTokens,
    last: TokenStream,
) -> TokenStream {
    let first = crate::errors::respan_all(first, lo);
    let last = crate::errors::respan_all(last, hi);
    quote!(#first #middle #last)
}

/// `<ty as RefField>::Target`, spanned over `ty`: a field holding no reference fails here.
fn target_ty(p: &TokenStream, ty: &syn::Type) -> TokenStream {
    let span = crate::errors::span_range(ty);
    across(span, quote!(<), ty, quote!(as #p::RefField>::Target))
}

/// `<<ty as RefField>::Target as Model>::SCHEMA`, spanned over `ty`.
fn target_schema(p: &TokenStream, ty: &syn::Type) -> TokenStream {
    let span = crate::errors::span_range(ty);
    across(
        span,
        quote!(<),
        target_ty(p, ty),
        quote!(as #p::Model>::SCHEMA),
    )
}

impl Pattern for Relations {
    fn kept(&self, field: &Field<'_>) -> Option<&'static str> {
        self.fields
            .iter()
            .any(|r| r.inverse.is_some() && r.ident == *field.ident)
            .then_some("TwoWaySide")
    }

    fn handle(&self, field: &Field<'_>) -> bool {
        self.fields.iter().any(|r| r.ident == *field.ident)
    }

    fn own_indexes(&self) -> Vec<Vec<(String, i32)>> {
        self.fields
            .iter()
            .filter_map(RelationField::index_keys)
            .collect()
    }

    fn items(&self, model: &Model<'_>) -> TokenStream {
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        let ident = model.ident;
        let model_name = ident.to_string();
        let mut out = identity(model, &self.fields);
        for (i, f) in self.fields.iter().enumerate() {
            let stat = spec_static(i);
            let field = &f.bson_name;
            let fident = &f.ident;
            let ty = &f.ty;
            let target = target_ty(&p, ty);
            let schema = target_schema(&p, ty);
            let many = f.many;
            let (lo, hi) = crate::errors::span_range(ty);
            // The `Vec` the derive read in the type is the one the type has.
            let shape = if many {
                format!(
                    "`{}` is not an array of references although its type reads like one: write \
                     `Vec<..>` or `Option<Vec<..>>` of `Ref<T>` in the field's type",
                    f.rust_name
                )
            } else {
                format!(
                    "`{}` holds an array of references, which the derive cannot see in its type: \
                     write `Vec<Ref<T>>` (or `Option<Vec<Ref<T>>>`) in the field's type, not an \
                     alias",
                    f.rust_name
                )
            };
            // The one check of the field's type: the constant's type names `Target`, so a field
            // holding no reference fails there, with the error every other use of `Target` (all
            // spanned over the type) reports identically, and rustc prints it once; the body's
            // `MANY` then reports nothing more.
            let shape_check = {
                let panic = quote_spanned!(lo=> ::core::panic);
                let args = {
                    // Resolved where the binding is (a field token from inside a `macro_rules!`
                    // would otherwise not see it), located at the field.
                    let message = proc_macro2::Ident::new(
                        "__message",
                        proc_macro2::Span::call_site().located_at(hi),
                    );
                    quote_spanned!(hi=> ("{}", #message))
                };
                let identity = crate::errors::respan_all(quote!(::core::convert::identity), lo);
                let mut body = proc_macro2::Group::new(
                    proc_macro2::Delimiter::Parenthesis,
                    quote! {{
                        if let ::core::option::Option::Some(__message) =
                            if <#ty as #p::RefField>::MANY == #many {
                                ::core::option::Option::None
                            } else {
                                ::core::option::Option::Some(#shape)
                            }
                        {
                            #panic!#args
                        }
                        ::core::option::Option::None
                    }},
                );
                body.set_span(hi);
                quote! {
                    const _: ::core::option::Option<fn() -> #target> = #identity #body;
                }
            };
            let kind = if f.inverse.is_some() {
                quote!(#p::RelationKind::TwoWay)
            } else if f.parent {
                quote!(#p::RelationKind::Parent)
            } else {
                quote!(#p::RelationKind::Reference)
            };
            let (inverse, inverse_check) = match &f.inverse {
                Some(inv) => {
                    let inv_name = ast::unraw(inv);
                    let other = target_name(ty);
                    let me = &f.rust_name;
                    let declare = if many {
                        format!("#[relation(inverse = {me})] {inv_name}: Ref<{model_name}>")
                    } else {
                        format!("#[relation(inverse = {me})] {inv_name}: Vec<Ref<{model_name}>>")
                    };
                    let messages = [
                        format!(
                            "`{other}` has no `#[relation]` field `{inv_name}`: both sides of a \
                             two-way relation name each other; declare `{declare}` on `{other}`"
                        ),
                        format!(
                            "`{other}.{inv_name}` does not refer to `{model_name}`: the other \
                             side of `{model_name}.{me}` refers back to `{model_name}` \
                             (`{declare}`)"
                        ),
                        format!(
                            "`{other}.{inv_name}` does not name `{me}` back: both sides of a \
                             two-way relation name each other; write \
                             `#[relation(inverse = {me})]` on `{other}.{inv_name}`"
                        ),
                        format!(
                            "`{model_name}.{me}` and `{other}.{inv_name}` are both arrays: a \
                             two-way relation has one array side (the owner's list) and one \
                             single reference (each child's owner); make the child's side \
                             `Ref<..>` or `Option<Ref<..>>`, or, for many-to-many, drop \
                             `inverse` on both sides (`#[relation]`)"
                        ),
                        format!(
                            "`{model_name}.{me}` and `{other}.{inv_name}` are both single \
                             references: a two-way relation has one array side (the owner's \
                             list) and one single reference (each child's owner); make the \
                             owner's side `Vec<Ref<..>>`, or, for one-to-one, drop `inverse` on \
                             both sides (`#[relation]`)"
                        ),
                    ];
                    let span = inv.span();
                    let relations = quote_spanned!(span=> <#target as #p::Relations>::RELATIONS);
                    let check = crate::errors::fail_with(
                        quote! {
                            #p::inverse_error(#relations, #inv_name, #model_name, #me, #many, [#(#messages),*])
                        },
                        span,
                        span,
                    );
                    (quote!(::core::option::Option::Some(#inv_name)), check)
                }
                None => (quote!(::core::option::Option::None), TokenStream::new()),
            };
            // Parents and both sides of a two-way relation are queried by the field.
            let index = if let Some(keys) = f.index_keys() {
                let keys: Vec<(&str, i32)> = keys.iter().map(|(k, d)| (k.as_str(), *d)).collect();
                let spec = crate::index::directed_spec(&p, &keys, None, false, None);
                quote!(::core::option::Option::Some(#spec))
            } else {
                quote!(::core::option::Option::None)
            };
            let sort = f.sort.iter().map(|(k, d)| quote!((#k, #d)));
            let two_way_single = f.inverse.is_some() && !many;
            let handle = if two_way_single {
                format_ident!("TwoWay")
            } else {
                format_ident!("Relation")
            };
            // The handle's type and its construction, spanned over the field's type too (the
            // handle's path ends at the type's last token, so its well-formedness is checked over
            // the whole type), and the ids read through `<ty as RefField>`.
            let span = (lo, hi);
            let handle_path = across(span, quote!(#p::), TokenStream::new(), quote!(#handle));
            let handle_ty = across(
                span,
                TokenStream::new(),
                quote!(#handle_path <#ident, #target),
                quote!(>),
            );
            let ids = across(
                span,
                quote!(|s: &#ident| <),
                ty,
                quote!(as #p::RefField>::ids(&s.#fident)),
            );
            let mut args = proc_macro2::Group::new(
                proc_macro2::Delimiter::Parenthesis,
                quote!(db, &#stat, #ids),
            );
            args.set_span(hi);
            let call = across(span, TokenStream::new(), handle_path, quote!(::new));
            let field_handle = model.field_handle(
                &f.ident,
                "RelationField",
                &handle_ty,
                &quote!(#call #args),
                Some(span),
            );
            out.extend(quote! {
                #shape_check
                #inverse_check

                static #stat: #p::RelationSpec = #p::RelationSpec::from_parts(#p::RelationParts {
                    model: &__SCHEMA,
                    field: #field,
                    target: || #schema,
                    kind: #kind,
                    many: #many,
                    inverse: #inverse,
                    index: #index,
                    sort: &[#(#sort),*],
                });

                #field_handle
            });
        }
        out
    }

    fn specs(&self) -> Vec<TokenStream> {
        (0..self.fields.len())
            .map(|i| {
                let stat = spec_static(i);
                quote!(&#stat)
            })
            .collect()
    }

    fn stubs(&self, model: &Model<'_>) -> TokenStream {
        // What other models' references need of this one, its relation fields included (those
        // with a mistake too, as far as they were read), so a mistake here does not show up
        // again in every model referring to it.
        identity(model, &self.fields)
    }
}
