//! The generated counter spec and handle of each `#[approximate]` field.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::Ident;

use crate::ast::Model;

use super::*;

impl ApproxField {
    pub(super) fn static_ident(&self) -> Ident {
        format_ident!(
            "__APPROXIMATE_{}",
            crate::ast::unraw(&self.ident).to_uppercase()
        )
    }

    pub(super) fn expand(&self, model: &Model<'_>, p: &TokenStream) -> TokenStream {
        let ident = model.ident;
        let field = &self.ident;
        let name = crate::ast::unraw(field);
        let span = field.span();
        let model_ident = Ident::new(&ident.to_string(), span);
        let (bson, check) = crate::errors::checked_name(
            p,
            quote_spanned!(span=> #model_ident::FIELDS.#field),
            "integer",
            &format!(
                "`{name}` is an approximate counter: it counts in an integer field (i64, i32 or \
                 u32)"
            ),
            span,
        );
        let collection = &model.collection;
        let bson_name = &self.bson_name;
        let static_ident = self.static_ident();
        let id = quote!(<#ident as #p::Model>::Id);
        let (approximation, handle_ty, body) = match &self.kind {
            Kind::Batched { threshold } => (
                quote!(#p::Approximation::Batched { threshold: #threshold }),
                quote!(#p::BatchedCounter<#id>),
                quote!(#p::BatchedCounter::declared(db.collection(#collection), #bson_name, #threshold)),
            ),
            Kind::Sampled { p: prob } => (
                quote!(#p::Approximation::Sampled { p: #prob }),
                quote!(#p::SampledCounter<#id>),
                quote!(#p::SampledCounter::declared(db.collection(#collection), #bson_name, #prob)),
            ),
            Kind::Sharded {
                shards,
                collection: shards_collection,
            } => (
                quote!(#p::Approximation::Sharded {
                    shards: #shards,
                    collection: #shards_collection,
                }),
                quote!(#p::ShardedFields<#id>),
                quote!(#p::ShardedFields::declared(
                    db.collection(#collection),
                    #bson_name,
                    db.collection(#shards_collection),
                    #shards,
                )),
            ),
        };
        let handle = model.field_handle(field, "CounterField", &handle_ty, &body, None);
        quote! {
            static #static_ident: #p::ApproximateSpec =
                #p::ApproximateSpec::from_parts(#p::ApproximateParts {
                    field: #bson,
                    approximation: #approximation,
                });
            #check

            #handle
        }
    }
}
