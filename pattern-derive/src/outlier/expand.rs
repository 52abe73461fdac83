//! The generated `OutlierSpec` (with the overflow collection's `{parent, seq}` index) and the
//! `OutlierField` impl, with the constants that check the flag's and the count's types.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::Ident;

use crate::ast::Model;

use super::*;

impl OutlierField {
    pub(super) fn static_ident(&self) -> Ident {
        format_ident!(
            "__OUTLIER_{}",
            crate::ast::unraw(&self.ident).to_uppercase()
        )
    }

    /// The spec, the method, and (`with_checks`) the type checks of the flag and the count.
    pub(super) fn expand(
        &self,
        model: &Model<'_>,
        p: &TokenStream,
        with_checks: bool,
    ) -> TokenStream {
        let ident = model.ident;
        let mut checks = TokenStream::new();
        let mut checked = |field: &Ident, method: &str, message: String| {
            let span = field.span();
            let model_ident = Ident::new(&ident.to_string(), span);
            let (name, fail) = crate::errors::checked_name(
                p,
                quote_spanned!(span=> #model_ident::FIELDS.#field),
                method,
                &message,
                span,
            );
            checks.extend(fail);
            name
        };
        let flag_name = crate::ast::unraw(&self.flag);
        let count_name = crate::ast::unraw(&self.count);
        let flag = checked(
            &self.flag,
            "boolean",
            format!("`{flag_name}` is the outlier flag: make it a `bool`"),
        );
        let count = checked(
            &self.count,
            "integer",
            format!(
                "`{count_name}` counts every item of the outlier array: use an integer (i64, \
                 i32 or u32)"
            ),
        );
        if !with_checks {
            checks = TokenStream::new();
        }
        let field = &self.bson_name;
        let (limit, capacity, max_bytes) = (self.limit, self.capacity, self.max_bytes);
        let overflow = &self.overflow;
        let parent = &self.parent;
        let receipts = receipts_name(field);
        let index = crate::schema::plain_index(
            p,
            &[
                crate::schema::ascending(p, parent),
                crate::schema::ascending(p, "seq"),
            ],
            format!("{parent}_1_seq_1"),
            true,
        );
        let static_ident = self.static_ident();
        let elem = &self.elem;
        let handle = model.field_handle(
            &self.ident,
            "OutlierField",
            &quote!(#p::Outlier<#ident, #elem>),
            &quote!(#p::Outlier::new(db, &#static_ident)),
            None,
        );
        quote! {
            static #static_ident: #p::OutlierSpec = #p::OutlierSpec::from_parts(#p::OutlierParts {
                field: #field,
                limit: #limit,
                capacity: #capacity,
                max_bytes: #max_bytes,
                overflow: #overflow,
                parent: #parent,
                flag: #flag,
                count: #count,
                receipts: #receipts,
                index: #index,
            });
            #checks

            #handle
        }
    }
}
