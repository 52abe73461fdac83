//! `#[approximate(batched, threshold = 100)]`, `#[approximate(sampled, p = 0.01)]` and
//! `#[approximate(sharded, shards = 16)]` on an integer field: the counter handle
//! the `CounterField` impl behind `collection.counter(Model::FIELDS.field)` and the schema's
//! `ApproximateSpec`. The settings are checked here; the field's type (an integer) by a constant
//! of generated code.
//!
//! `parse.rs` reads the attribute (the kind, then its settings through `options::read`),
//! `expand.rs` generates the counter's spec and handle. There is no `validate.rs`: the counter
//! names nothing else of the model, and its refusals beside `#[computed]`, `#[summary]`,
//! `#[subset]` and `#[version]` are in `combinations.rs`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::Ident;

use crate::ast::{Field, Model};
use crate::schema::{Pattern, PatternDef};

mod expand;
mod parse;

use parse::parse_field;

/// The approximation pattern's entry points.
pub(crate) const PATTERN: PatternDef = PatternDef {
    model: |_, model, errors| {
        Box::new(Approximate {
            fields: crate::schema::each_field(model, errors, parse_field),
        })
    },
    fields: None,
};

enum Kind {
    Batched { threshold: u32 },
    Sampled { p: f64 },
    Sharded { shards: u32, collection: String },
}

struct ApproxField {
    ident: Ident,
    bson_name: String,
    kind: Kind,
}

struct Approximate {
    fields: Vec<ApproxField>,
}

impl Pattern for Approximate {
    fn handle(&self, field: &Field<'_>) -> bool {
        self.fields.iter().any(|f| &f.ident == field.ident)
    }

    fn items(&self, model: &Model<'_>) -> TokenStream {
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        self.fields.iter().map(|f| f.expand(model, &p)).collect()
    }

    fn specs(&self) -> Vec<TokenStream> {
        crate::schema::spec_refs(self.fields.iter().map(|f| f.static_ident()))
    }
}
