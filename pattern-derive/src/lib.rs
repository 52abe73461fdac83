//! Derive macros of `pattern-runtime`. Depend on `pattern-runtime`, which re-exports them and
//! documents them; this crate is an implementation detail.

extern crate proc_macro;

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

// The layers, bottom up (each module imports only from those above it in this list):
// the input and errors, index paths and specifications, what every model generates (`schema`,
// with the `Pattern` trait), one module per pattern, then the derives.
mod ast;
mod attr;
mod combinations;
mod errors;
mod index;
mod keyset;
mod options;
mod schema;
mod shard;
mod types;

// One line per pattern.
mod approximation;
mod attribute;
mod bounded;
mod computed;
mod extended_ref;
mod outlier;
mod polymorphic;
mod preallocation;
mod relation;
mod schema_version;
mod subset;
mod tree;
mod validate;
mod versioning;

mod bucket;
mod model;
#[cfg(test)]
mod snapshots;

/// `#[derive(Model)]`: see `pattern_runtime`'s documentation.
#[proc_macro_derive(
    Model,
    attributes(
        model,
        index,
        shard_key,
        subset,
        summary,
        computed,
        approximate,
        outlier,
        versioned,
        version,
        extended_ref,
        attribute,
        relation,
        tree,
        in_tree,
        preallocated,
        bounded,
        schema_version,
        json_schema
    )
)]
pub fn derive_model(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    model::derive(&input).into()
}

/// `#[derive(Measurement)]`: see `pattern_runtime::bucket`.
#[proc_macro_derive(
    Measurement,
    attributes(bucket, model, versioned, version, json_schema)
)]
pub fn derive_measurement(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    bucket::derive(&input).into()
}

/// `#[derive(Fields)]`: see `pattern_runtime::Fields`.
#[proc_macro_derive(Fields, attributes(extended_ref, projection, attribute, json_schema))]
pub fn derive_fields(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    model::derive_fields(&input).into()
}

/// `#[derive(AttributeKey)]`: see `pattern_runtime::attribute`.
#[proc_macro_derive(AttributeKey)]
pub fn derive_attribute_key(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    attribute::derive_key(&input).into()
}
