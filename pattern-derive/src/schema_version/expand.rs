//! The generated `SchemaVersionSpec` and the upgrade function that reads a document of any
//! older shape as the current one.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::Model;

use super::*;

impl Declared {
    /// The items of `Pattern::items`.
    pub(super) fn expand(&self, model: &Model<'_>) -> TokenStream {
        let d = self;

        let krate = &model.krate;
        let p = quote!(#krate::__private);
        let ident = model.ident;
        let field = &d.field;
        let current = d.current;
        let missing = d.missing;
        let versions: Vec<u32> = d.older.iter().map(|o| o.version).collect();
        // `__up_i` takes the shape of older version i to the current type, one step at a time.
        let steps = d.older.iter().enumerate().map(|(i, o)| {
            let name = format_ident!("__up_{}", i);
            let ty = &o.ty;
            let from = o.version;
            let next: TokenStream = match d.older.get(i + 1) {
                Some(n) => {
                    let next_ty = &n.ty;
                    let next_fn = format_ident!("__up_{}", i + 1);
                    quote_spanned!(ty.span()=> #next_fn(#p::upgrade_step::<#ty, #next_ty>(old, #from)?))
                }
                None => {
                    // The model's name at the older type, so that a missing `From` points there.
                    let target = syn::Ident::new(&ident.to_string(), ty.span());
                    quote_spanned!(ty.span()=> #p::upgrade_step::<#ty, #target>(old, #from))
                }
            };
            quote! {
                #[allow(non_snake_case)]
                fn #name(old: #ty) -> ::core::result::Result<#ident, #p::UpgradeFailure> {
                    #next
                }
            }
        });
        let arms = d.older.iter().enumerate().map(|(i, o)| {
            let name = format_ident!("__up_{}", i);
            let ty = &o.ty;
            let v = o.version;
            quote! {
                #v => {
                    let current = #name(#p::read_shape::<#ty>(doc, #v)?)?;
                    #p::upgraded(&current, #v)
                }
            }
        });
        quote! {
            #(#steps)*

            fn __upgrade(
                doc: #p::bson::Document,
                from: u32,
            ) -> ::core::result::Result<#p::bson::Document, #p::UpgradeFailure> {
                match from {
                    #(#arms)*
                    other => ::core::result::Result::Err(#p::undeclared(other)),
                }
            }

            static __SCHEMA_VERSIONS: #p::SchemaVersionSpec =
                #p::SchemaVersionSpec::from_parts(#p::SchemaVersionParts {
                    field: #field,
                    current: #current,
                    missing: #missing,
                    older: &[#(#versions),*],
                    upgrade: __upgrade,
                });

            #[automatically_derived]
            impl #p::SchemaVersioned for #ident {
                const VERSIONS: &'static #p::SchemaVersionSpec = &__SCHEMA_VERSIONS;
            }
        }
    }
}
