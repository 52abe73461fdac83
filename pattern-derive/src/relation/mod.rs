//! Relationships: `#[relation]`, `#[relation(parent, sort(..))]` and `#[relation(inverse = ..)]`
//! on fields holding references, and, for every struct model, what other models' references
//! need of it (`Identified`: its `_id`; `Relations`: its relation fields, for the two-way checks).
//!
//! The field's type is checked to hold references by the `RefField` projection: every use of the
//! type in generated code is spanned over the whole type (see `across`), so a type holding no
//! reference is one error at the field's type, the same one from every item, printed once. A
//! two-way relation is checked against the other side's `Relations` in a constant, which fails
//! with a message naming both sides; a model with a mistake still lists its relation fields, so
//! the models naming them are not told they are missing.
//!
//! `parse.rs` reads the attributes through `options.rs`; `validate.rs` checks what was read against
//! the model; `expand.rs` generates the code.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::Ident;

use crate::ast::{Field, Model};
use crate::schema::{Pattern, PatternDef};

mod expand;
mod parse;
mod validate;

use expand::{identity, spec_static};
use parse::parse_field;
use validate::target_name;

/// The relation pattern's entry points.
pub(crate) const PATTERN: PatternDef = PatternDef {
    model: |_, model, errors| {
        Box::new(Relations {
            fields: crate::schema::each_field(model, errors, parse_field),
        })
    },
    fields: None,
};

struct Relations {
    fields: Vec<RelationField>,
}

struct RelationField {
    ident: Ident,
    rust_name: String,
    bson_name: String,
    ty: syn::Type,
    /// The field's type is written as a `Vec` (or `Option<Vec>`).
    many: bool,
    parent: bool,
    /// `(BSON name, direction)`.
    sort: Vec<(String, i32)>,
    inverse: Option<Ident>,
}

impl RelationField {
    /// The keys of the index the relation declares: parents and both sides of a two-way
    /// relation are queried by the field (then the children's sort).
    fn index_keys(&self) -> Option<Vec<(String, i32)>> {
        (self.parent || self.inverse.is_some()).then(|| {
            std::iter::once((self.bson_name.clone(), 1))
                .chain(self.sort.iter().cloned())
                .collect()
        })
    }
}

impl Pattern for Relations {
    fn kept(&self, field: &Field<'_>) -> Option<&'static str> {
        self.fields
            .iter()
            .any(|r| r.inverse.is_some() && r.ident == *field.ident)
            .then_some("TwoWaySide")
    }

    fn handle(&self, field: &Field<'_>) -> bool {
        self.fields.iter().any(|r| r.ident == *field.ident)
    }

    fn own_indexes(&self) -> Vec<Vec<(String, i32)>> {
        self.fields
            .iter()
            .filter_map(RelationField::index_keys)
            .collect()
    }

    fn items(&self, model: &Model<'_>) -> TokenStream {
        self.expand(model)
    }

    fn specs(&self) -> Vec<TokenStream> {
        (0..self.fields.len())
            .map(|i| {
                let stat = spec_static(i);
                quote!(&#stat)
            })
            .collect()
    }

    fn stubs(&self, model: &Model<'_>) -> TokenStream {
        // What other models' references need of this one, its relation fields included (those
        // with a mistake too, as far as they were read), so a mistake here does not show up
        // again in every model referring to it.
        identity(model, &self.fields)
    }
}
