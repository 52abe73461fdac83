//! `#[versioned(...)]` on the struct and `#[version]` on its integer field: parsing, checks, and
//! the generated `VersionSpec` and `Versioned` impl.
//!
//! `parse.rs` reads the attributes through `options.rs`; `validate.rs` checks what was read against
//! the model; `expand.rs` generates the code.

use proc_macro2::TokenStream;
use quote::quote;
use syn::Ident;

use crate::ast::Model;
use crate::schema::{Pattern, PatternDef};

mod expand;
mod parse;
mod validate;

use parse::collect;

/// The versioning pattern's entry points.
pub(crate) const PATTERN: PatternDef = PatternDef {
    model: |input, model, errors| Box::new(collect(input, model, errors)),
    fields: None,
};

impl Pattern for Option<Versioning> {
    fn writes(&self) -> Option<&'static str> {
        self.as_ref().map(|_| "Revised")
    }

    fn kept(&self, field: &crate::ast::Field<'_>) -> Option<&'static str> {
        self.as_ref()
            .is_some_and(|v| v.field == *field.ident)
            .then_some("VersionField")
    }

    fn annotations(&self, field: &crate::ast::Field<'_>, p: &TokenStream) -> Vec<TokenStream> {
        self.iter()
            .filter(|v| v.field == *field.ident)
            .map(|_| quote!(#p::Annotation::Version))
            .collect()
    }

    fn items(&self, model: &Model<'_>) -> TokenStream {
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        let Some(v) = self else {
            return unversioned(model.ident, &p);
        };
        let spec = v.spec(model);
        let items = v.items(model);
        quote! {
            static __VERSIONING: #p::VersionSpec = #spec;
            #items
        }
    }

    fn specs(&self) -> Vec<TokenStream> {
        self.iter().map(|_| quote!(&__VERSIONING)).collect()
    }

    /// A versioned model whose other attributes have mistakes keeps its `Versioned` impl, so
    /// that its `insert` and `replace` calls do not add errors of their own.
    fn stubs(&self, model: &Model<'_>) -> TokenStream {
        self.iter().map(|v| v.items(model)).collect()
    }
}

/// What a model without `#[versioned]` gets: `Unversioned` (its documents may be written many
/// at once, and by other patterns' handles).
pub(crate) fn unversioned(ident: &Ident, p: &TokenStream) -> TokenStream {
    quote! {
        #[automatically_derived]
        impl #p::Unversioned for #ident {}
    }
}

/// A checked `#[versioned]` model.
pub(crate) struct Versioning {
    history: String,
    keep: Option<u32>,
    expire_after: Option<u64>,
    field: Ident,
}
