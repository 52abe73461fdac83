//! `#[schema_version(older(UserV1 = 1, UserV2 = 2), missing = 1)]` on a model with a field of
//! type `SchemaVersion<3>`: the older shapes, checked here (ascending, without gaps, below the
//! current version), and the upgrade function that reads a document of any of them as the
//! current one (each step `UpgradeFrom`, spanned at the older type so that a missing `From`
//! points there).
//!
//! `parse.rs` reads the attributes through `options.rs`; `validate.rs` checks what was read against
//! the model; `expand.rs` generates the code.

use proc_macro2::TokenStream;
use quote::quote;
use syn::Type;

use crate::ast::Model;
use crate::schema::{Pattern, PatternDef};

mod expand;
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
        self.0.as_ref().map(|d| d.expand(model)).unwrap_or_default()
    }

    fn specs(&self) -> Vec<TokenStream> {
        match self.0 {
            Some(_) => vec![quote!(&__SCHEMA_VERSIONS)],
            None => Vec::new(),
        }
    }
}
