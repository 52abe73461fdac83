//! `#[derive(Measurement)]` with `#[bucket(...)]`: parsing, checks, and the generated
//! `SeriesSpec`, schema (bucket collection and its indexes) and `Measurement` impl.
//!
//! Checked here: the key and time fields exist, the time is a bare `bson::DateTime`, the limits
//! are positive and parseable, and native mode gets no option it cannot honour. Numeric types of
//! summarised fields are checked by generated code at the field's token.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::meta::ParseNestedMeta;
use syn::{DeriveInput, Ident, LitStr};

use crate::ast::{self, DeriveKind, Field, Model, Unsupported};
use crate::errors::{did_you_mean, Errors};
use crate::schema::{self, field_names};

mod expand;
mod parse;
mod validate;

use crate::attr::Attr;
use expand::{expand, fallback};
use parse::{opt_u64, parse_option};
use validate::{collect, value_fields};

/// The bucket document's own fields (`pattern_runtime::bucket::fields::RESERVED`).
const RESERVED: &[&str] = &[
    "_id",
    "start",
    "end",
    "count",
    "first",
    "last",
    "measurements",
    "summary",
    "bytes",
];

const OPTIONS: &[&str] = &[
    "native",
    "rollup",
    "slots",
    "nest",
    "collection",
    "key",
    "time",
    "max_count",
    "span",
    "granularity",
    "summary",
    "expire_after",
    "group",
    "crate",
];

const SUMMARY_OPS: &[&str] = &["min", "max", "sum"];

/// How the measurements are laid out.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// Bucket documents with an array of measurements.
    Array,
    /// A native time-series collection.
    Native,
    /// Per-window counts and sums only.
    Rollup,
    /// Per-window maps from slot to value.
    Slots { slot: u64, nest: Option<u64> },
}

/// A checked `#[bucket(...)]`.
struct Bucket {
    layout: Layout,
    native: bool,
    collection: String,
    keys: Vec<Ident>,
    time: Ident,
    max_count: u32,
    span: Option<u64>,
    granularity: Option<&'static str>,
    summaries: Vec<(Ident, [bool; 3])>,
    expire_after: Option<u64>,
}

/// What the attribute says, before the checks against the fields.
#[derive(Default)]
struct Raw {
    native: Option<Span>,
    rollup: Option<Span>,
    slots: Option<(u64, Span)>,
    nest: Option<(u64, Span)>,
    collection: Option<LitStr>,
    keys: Vec<Ident>,
    key_span: Option<Span>,
    time: Option<Ident>,
    time_span: Option<Span>,
    max_count: Option<(u32, Span)>,
    span: Option<(u64, Span)>,
    granularity: Option<(&'static str, Span)>,
    summaries: Vec<(Ident, [bool; 3])>,
    expire_after: Option<u64>,
    group: Option<String>,
    krate: Option<syn::Path>,
}

pub(crate) fn derive(input: &DeriveInput) -> TokenStream {
    let mut errors = Errors::default();
    let model = ast::parse_as(input, &mut errors, DeriveKind::Measurement);
    let mut model = match model {
        Ok(m) => m,
        Err(Unsupported::Shape) | Err(Unsupported::Serde) => {
            // serde reports its own errors; a shape error is already recorded.
            return errors
                .into_result()
                .err()
                .map(|e| e.to_compile_error())
                .unwrap_or_default();
        }
    };
    let bucket = collect(input, &mut model, &mut errors);
    for attr in Attr::Model.find(&input.attrs) {
        errors.spanned(
            attr,
            "`#[model(...)]` belongs to `derive(Model)`; a measurement's options go in `#[bucket(...)]`",
        );
    }
    // `#[versioned]` and `#[version]` are refused (`combinations.rs`).
    crate::combinations::check(input, &model, &mut errors);
    match (bucket, errors.into_result()) {
        (Some(b), Ok(())) => expand(&model, &b),
        (_, Err(e)) => {
            let mut out = e.to_compile_error();
            out.extend(fallback(&model));
            out
        }
        (None, Ok(())) => fallback(&model),
    }
}
