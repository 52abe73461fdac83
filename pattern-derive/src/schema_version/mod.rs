//! `#[schema_version(older(UserV1 = 1, UserV2 = 2), missing = 1)]` on a model with a field of
//! type `SchemaVersion<3>`: the older shapes, checked here (ascending, without gaps, below the
//! current version), and the upgrade function that reads a document of any of them as the
//! current one (each step `UpgradeFrom`, spanned at the older type so that a missing `From`
//! points there).

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::Type;

use crate::ast::Model;
use crate::schema::{Pattern, PatternDef};

mod parse;
mod validate;

use parse::collect;

/// The schema-versioning pattern's entry points.
pub(crate) const PATTERN: PatternDef = PatternDef {
    model: |input, model, errors| Box::new(collect(input, model, errors)),
    fields: None,
};

/// One older shape: its type and version.
struct Older {
    ty: Type,
    version: u32,
}

/// The checked declaration, when the model has one.
struct Versions(Option<Declared>);

struct Declared {
    field: String,
    current: u32,
    missing: u32,
    older: Vec<Older>,
}

impl Pattern for Versions {
    fn kept(&self, field: &crate::ast::Field<'_>) -> Option<&'static str> {
        self.0
            .as_ref()
            .is_some_and(|d| d.field == field.rust_name || d.field == field.bson_name)
            .then_some("SchemaVersionField")
    }

    fn items(&self, model: &Model<'_>) -> TokenStream {
        let Some(d) = &self.0 else {
            return TokenStream::new();
        };
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

    fn specs(&self) -> Vec<TokenStream> {
        match self.0 {
            Some(_) => vec![quote!(&__SCHEMA_VERSIONS)],
            None => Vec::new(),
        }
    }
}
