//! Relationships: `#[relation]`, `#[relation(parent, sort(..))]` and `#[relation(inverse = ..)]`
//! on fields holding references, and, for every struct model, what other models' references
//! need of it (`Identified`: its `_id`; `Relations`: its relation fields, for the two-way checks).
//!
//! The field's type is checked to hold references by the `RefField` projection at its span; a
//! two-way relation is checked against the other side's `Relations` in a constant, which fails
//! with a message naming both sides.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::{DeriveInput, Ident, LitInt};

use crate::ast::{self, Field, Model};
use crate::errors::{did_you_mean, Errors};
use crate::schema::{Pattern, PatternDef};

/// The relation pattern's entry points.
pub(crate) const PATTERN: PatternDef = PatternDef {
    model: |_input: &DeriveInput, model, errors| {
        let fields = model
            .fields
            .iter()
            .filter_map(|f| parse_field(f, model, errors))
            .collect();
        Box::new(Relations { fields })
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

/// `Vec<T>` or `Option<Vec<T>>`, as written.
fn written_many(ty: &syn::Type) -> bool {
    if ast::vec_element(ty).is_some() {
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
            Some(syn::GenericArgument::Type(t)) if ast::vec_element(t).is_some()
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
    let attr = field.attrs.iter().find(|a| a.path().is_ident("relation"))?;
    if let Some(second) = field
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("relation"))
        .nth(1)
    {
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
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("parent") {
                parent = Some(meta.path.segments[0].ident.span());
            } else if meta.path.is_ident("inverse") {
                inverse = Some(meta.value()?.parse()?);
            } else if meta.path.is_ident("sort") {
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
            } else {
                return Err(meta.error(format!("unknown relation option; {HELP}")));
            }
            Ok(())
        });
        if let Err(e) = result {
            errors.push(e);
            return None;
        }
    } else if !matches!(attr.meta, syn::Meta::Path(_)) {
        errors.spanned(attr, HELP);
        return None;
    }
    let many = written_many(field.ty);
    if let Some(span) = parent {
        if many {
            errors.at(
                span,
                format!(
                    "a parent reference is a single reference in the child (`{}: Ref<Parent>` or \
                     `Option<Ref<Parent>>`), not an array: for an array of children's ids in the \
                     parent, use `#[relation]`",
                    field.rust_name
                ),
            );
            return None;
        }
        if let Some(inv) = &inverse {
            errors.spanned(
                inv,
                "`parent` and `inverse` do not go together: the single side of a two-way \
                 relation is already indexed and queried like a parent reference; drop `parent`",
            );
            return None;
        }
    } else if let Some(span) = sort_span {
        errors.at(
            span,
            "`sort(..)` orders a parent's children: it goes with `parent` \
             (`#[relation(parent, sort(time = -1))]`)",
        );
        return None;
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
                    type Id = #ty;
                    fn id(&self) -> &#ty {
                        &self.#id
                    }
                }
            }
        });
    let sides = fields.iter().map(|f| {
        let rust = &f.rust_name;
        let bson = &f.bson_name;
        let target = target_ty(&p, &f.ty);
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
                target: <#target as #p::Model>::SCHEMA.name(),
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

/// `<ty as RefField>::Target`, spanned at `ty`: a field holding no reference fails here.
fn target_ty(p: &TokenStream, ty: &syn::Type) -> TokenStream {
    let (lo, hi) = crate::errors::span_range(ty);
    let p_lo = crate::errors::respan_all(p.clone(), lo);
    let target = quote_spanned!(hi=> Target);
    quote_spanned!(lo=> <#ty as #p_lo::RefField>::#target)
}

impl Pattern for Relations {
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
            let shape_check = crate::errors::fail_with(
                quote! {
                    if <#ty as #p::RefField>::MANY == #many {
                        ::core::option::Option::None
                    } else {
                        ::core::option::Option::Some(#shape)
                    }
                },
                lo,
                hi,
            );
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
                             two-way relation name each other; write `{declare}` on `{other}`"
                        ),
                        format!(
                            "`{model_name}.{me}` and `{other}.{inv_name}` are both arrays: a \
                             two-way relation has one array side (the owner's list) and one \
                             single reference (each child's owner)"
                        ),
                        format!(
                            "`{model_name}.{me}` and `{other}.{inv_name}` are both single \
                             references: a two-way relation has one array side (the owner's \
                             list) and one single reference (each child's owner)"
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
            let index = if f.parent || f.inverse.is_some() {
                let mut keys =
                    vec![quote!(#p::IndexKey { path: #field, kind: #p::IndexKind::Ascending })];
                let mut name = format!("{field}_1");
                for (k, dir) in &f.sort {
                    let kind = if *dir == 1 {
                        quote!(#p::IndexKind::Ascending)
                    } else {
                        quote!(#p::IndexKind::Descending)
                    };
                    keys.push(quote!(#p::IndexKey { path: #k, kind: #kind }));
                    name.push_str(&format!("_{k}_{dir}"));
                }
                quote! {
                    ::core::option::Option::Some(#p::IndexSpec::from_parts(#p::IndexParts {
                        keys: &[#(#keys),*],
                        name: #name,
                        unique: false,
                        sparse: false,
                        hidden: false,
                        expire_after_seconds: ::core::option::Option::None,
                        collation: ::core::option::Option::None,
                        partial: &[],
                    }))
                }
            } else {
                quote!(::core::option::Option::None)
            };
            let sort = f.sort.iter().map(|(k, d)| quote!((#k, #d)));
            let method = format_ident!("{}_relation", f.rust_name);
            let two_way_single = f.inverse.is_some() && !many;
            let (handle, doc) = if two_way_single {
                (
                    quote!(#p::TwoWay),
                    format!(
                        "The two-way relation `{}` (`{field}`): assign, check and repair, and \
                         loading.",
                        f.rust_name
                    ),
                )
            } else {
                (
                    quote!(#p::Relation),
                    format!(
                        "The relation `{}` (`{field}`): batch loading of the referenced \
                         documents{}.",
                        f.rust_name,
                        if f.parent {
                            " and the children of a parent"
                        } else {
                            ""
                        }
                    ),
                )
            };
            out.extend(quote! {
                #shape_check
                #inverse_check

                static #stat: #p::RelationSpec = #p::RelationSpec::from_parts(#p::RelationParts {
                    model: &__SCHEMA,
                    field: #field,
                    target: || <#target as #p::Model>::SCHEMA,
                    kind: #kind,
                    many: #many,
                    inverse: #inverse,
                    index: #index,
                    sort: &[#(#sort),*],
                });

                #[automatically_derived]
                impl #ident {
                    #[doc = #doc]
                    pub fn #method(db: &#p::Database) -> #handle<#ident, #target> {
                        #handle::new(db, &#stat, |s: &#ident| #p::RefField::ids(&s.#fident))
                    }
                }
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
        // What other models' references need of this one, so a mistake here does not show up
        // again in every model referring to it.
        identity(model, &[])
    }
}
