//! The generated `VersionSpec` and `Versioned` impl.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::Ident;

use crate::ast::Model;

use super::*;

impl Versioning {
    /// The `VersionSpec` expression.
    pub(super) fn spec(&self, model: &Model<'_>) -> TokenStream {
        let v = self;
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        let ident = Ident::new(&model.ident.to_string(), v.field.span());
        let field = &v.field;
        let version_name = quote_spanned!(field.span()=> #p::version_name(#ident::FIELDS.#field));
        let history = &v.history;
        let keep = match v.keep {
            Some(k) => quote!(::core::option::Option::Some(#k)),
            None => quote!(::core::option::Option::None),
        };
        let mut indexes = vec![crate::index::plain_spec(
            &p,
            &["docId", "version"],
            None,
            true,
            None,
        )];
        if let Some(secs) = v.expire_after {
            indexes.push(crate::index::plain_spec(
                &p,
                &["archivedAt"],
                None,
                false,
                Some(secs),
            ));
        }
        quote!(#p::VersionSpec::from_parts(#p::VersionParts {
            history: #history,
            version_field: #version_name,
            keep: #keep,
            history_indexes: &[#(#indexes),*],
        }))
    }

    /// The `Versioned` impl.
    pub(super) fn items(&self, model: &Model<'_>) -> TokenStream {
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        let ident = model.ident;
        let field = &self.field;
        // The type was checked in `collect`; spanned at the field all the same.
        let get = quote_spanned!(field.span()=> #p::VersionInt::to_i64(&self.#field));
        let set = quote_spanned!(field.span()=> #p::VersionInt::from_i64(version));
        quote! {
            #[automatically_derived]
            impl #p::Versioned for #ident {
                fn version(&self) -> i64 {
                    #get
                }
                fn set_version(&mut self, version: i64) {
                    self.#field = #set;
                }
            }
        }
    }
}
