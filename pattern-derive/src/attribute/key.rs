//! `#[derive(AttributeKey)]`: the key enum of an attribute's items.

use proc_macro2::TokenStream;
use quote::quote;
use serde_derive_internals::{ast as serde_ast, Ctxt, Derive};
use syn::DeriveInput;

use crate::errors::Errors;

/// `#[derive(AttributeKey)]`: a fieldless enum whose serde names are the keys.
pub(crate) fn derive_key(input: &DeriveInput) -> TokenStream {
    let mut errors = Errors::default();
    let ident = &input.ident;
    let syn::Data::Enum(e) = &input.data else {
        errors.spanned(
            ident,
            "`derive(AttributeKey)` goes on a fieldless enum of keys; a `String` key needs no derive",
        );
        return errors
            .into_result()
            .err()
            .map(|e| e.to_compile_error())
            .unwrap_or_default();
    };
    if !input.generics.params.is_empty() {
        errors.spanned(
            &input.generics,
            "`derive(AttributeKey)` does not support generic enums",
        );
    }
    for v in &e.variants {
        if !matches!(v.fields, syn::Fields::Unit) {
            errors.spanned(
                &v.fields,
                format!(
                    "`{}` has fields: an attribute key is one of a fixed set of names, so every \
                     variant is a unit variant",
                    v.ident
                ),
            );
        }
    }
    let cx = Ctxt::new();
    let container = serde_ast::Container::from_ast(&cx, input, Derive::Serialize);
    let serde_ok = cx.check().is_ok();
    let (Some(container), true) = (container, serde_ok) else {
        return errors
            .into_result()
            .err()
            .map(|e| e.to_compile_error())
            .unwrap_or_default();
    };
    let serde_ast::Data::Enum(variants) = &container.data else {
        return TokenStream::new();
    };
    if !matches!(
        container.attrs.tag(),
        serde_derive_internals::attr::TagType::External
    ) {
        errors.spanned(
            ident,
            "an attribute key enum is serialized as its variants' names: remove `tag` / `untagged`",
        );
    }
    let arms = variants.iter().map(|v| {
        let vi = &v.original.ident;
        let name = v.attrs.name().serialize_name();
        quote!(#ident::#vi => #name)
    });
    let krate: syn::Path = syn::parse_quote!(::pattern_runtime);
    if let Err(e) = errors.into_result() {
        return e.to_compile_error();
    }
    let mut out = TokenStream::new();
    out.extend(quote! {
        #[automatically_derived]
        impl #krate::__private::AttributeKey for #ident {
            fn as_key(&self) -> &str {
                match self {
                    #(#arms,)*
                }
            }
        }
    });
    out
}
