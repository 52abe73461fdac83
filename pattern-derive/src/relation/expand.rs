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
