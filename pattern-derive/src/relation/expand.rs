//! The generated `RelationSpec`s, the identity checks of the references and the target's schema.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::Ident;

use crate::ast::{self, Model};

use super::*;

pub(super) fn spec_static(i: usize) -> Ident {
    format_ident!("__RELATION_{}", i)
}

/// `impl Identified` (when the `_id` is stored as its type's own serialization) and
/// `impl Relations` for `model`, from `fields`.
pub(super) fn identity(model: &Model<'_>, fields: &[RelationField]) -> TokenStream {
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
pub(super) fn across(
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
pub(super) fn target_ty(p: &TokenStream, ty: &syn::Type) -> TokenStream {
    let span = crate::errors::span_range(ty);
    across(span, quote!(<), ty, quote!(as #p::RefField>::Target))
}

/// `<<ty as RefField>::Target as Model>::SCHEMA`, spanned over `ty`.
pub(super) fn target_schema(p: &TokenStream, ty: &syn::Type) -> TokenStream {
    let span = crate::errors::span_range(ty);
    across(
        span,
        quote!(<),
        target_ty(p, ty),
        quote!(as #p::Model>::SCHEMA),
    )
}

impl Relations {
    /// The items of `Pattern::items`.
    pub(super) fn expand(&self, model: &Model<'_>) -> TokenStream {
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
}
