//! `#[outlier(limit = 50, overflow = "user_posts", capacity = 1000, flag = is_outlier, count =
//! posts_count)]` on a `Vec<T>` field: the `OutlierSpec` (with the overflow collection's
//! `{parent, seq}` index) and the `OutlierField` impl behind `collection.outlier(Model::FIELDS.field)`. The options are checked here; the
//! flag's type (`bool`) and the count's (an integer) by constants of generated code.
//!
//! `parse.rs` reads the attributes through `options.rs`; `validate.rs` checks what was read against
//! the model; `expand.rs` generates the code.

use proc_macro2::TokenStream;
use quote::quote;
use syn::Ident;

use crate::ast::{Field, Model};
use crate::schema::{Pattern, PatternDef};

mod expand;
mod parse;
mod validate;

use parse::parse_field;

/// The outlier pattern's entry points.
pub(crate) const PATTERN: PatternDef = PatternDef {
    model: |input, model, errors| {
        let fields = crate::schema::each_field(model, errors, parse_field);
        if let Some(first) = fields.first() {
            // The receipts are a field of the stored document that the struct does not have.
            if let Some(span) = crate::ast::serde_key_span(&input.attrs, "deny_unknown_fields") {
                errors.at(
                    span,
                    format!(
                        "`#[serde(deny_unknown_fields)]` cannot be used with `#[outlier]`: the \
                         main document also keeps `{}`, the receipts of its last pushes (so \
                         that a push sent twice applies once), which the struct does not \
                         declare. Remove `deny_unknown_fields`; a strict validator \
                         (`ValidatorOptions::strict`) refuses unknown fields on the server \
                         instead",
                        receipts_name(&first.bson_name)
                    ),
                );
            }
        }
        Box::new(Outliers { fields })
    },
    fields: None,
};

struct OutlierField {
    ident: Ident,
    bson_name: String,
    elem: syn::Type,
    limit: u32,
    capacity: u32,
    max_bytes: u32,
    overflow: String,
    parent: String,
    flag: Ident,
    count: Ident,
}

struct Outliers {
    fields: Vec<OutlierField>,
}

/// The main document's field keeping the receipts of its last pushes: `posts` ->
/// `__postsPushes`.
fn receipts_name(field: &str) -> String {
    format!("__{field}Pushes")
}

impl Pattern for Outliers {
    fn kept(&self, field: &Field<'_>) -> Option<&'static str> {
        self.fields
            .iter()
            .any(|o| [&o.ident, &o.flag, &o.count].contains(&field.ident))
            .then_some("OutlierArray")
    }

    fn handle(&self, field: &Field<'_>) -> bool {
        self.fields.iter().any(|o| &o.ident == field.ident)
    }

    fn items(&self, model: &Model<'_>) -> TokenStream {
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        self.fields
            .iter()
            .map(|f| f.expand(model, &p, true))
            .collect()
    }

    fn specs(&self) -> Vec<TokenStream> {
        crate::schema::spec_refs(self.fields.iter().map(|f| f.static_ident()))
    }

    fn stubs(&self, model: &Model<'_>) -> TokenStream {
        // The fields whose attribute read well keep their method (without the type checks);
        // a field whose attribute failed has none.
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        self.fields
            .iter()
            .map(|f| f.expand(model, &p, false))
            .collect()
    }
}
