//! `#[subset(...)]` and `#[summary(...)]`: parsing, checks, and the generated `SubsetSpec`,
//! operations constructor and compile-time assertions.
//!
//! What can be checked inside this derive is checked here (the field is a `Vec`, a limit above 0,
//! one `full` type, summary fields naming a subset of this struct). What lives in other types
//! (the sort, parent and summed fields of the full item, its `Model` impl, the conversion to the
//! embedded type, the sort fields of the embedded type under the full item's BSON names, numeric
//! types) is checked by code generated at the user's tokens, so rustc's error points at the
//! offending token.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::Ident;

use crate::ast::{Field, Model};
use crate::schema::{Pattern, PatternDef};

mod expand;
mod parse;

use parse::collect;

/// The subset pattern's entry points.
pub(crate) const PATTERN: PatternDef = PatternDef {
    model: |_, model, errors| Box::new(Subsets(collect(model, errors))),
    fields: None,
};

/// Every `#[subset]` field of a model, each with its `#[summary]` fields.
struct Subsets(Vec<SubsetField>);

impl Pattern for Subsets {
    fn kept(&self, field: &Field<'_>) -> Option<&'static str> {
        self.0.iter().find_map(|s| s.kept(field))
    }

    fn handle(&self, field: &Field<'_>) -> bool {
        self.0.iter().any(|s| &s.ident == field.ident)
    }

    fn annotations(&self, field: &Field<'_>, p: &TokenStream) -> Vec<TokenStream> {
        self.0
            .iter()
            .flat_map(|s| s.annotations(field, p))
            .collect()
    }

    fn items(&self, model: &Model<'_>) -> TokenStream {
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        self.0
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let stat = spec_static(i);
                let (spec, checks) = s.spec(model);
                let items = s.items(model, &stat);
                // The full items are written by the subset's handle (`push`, `remove`): a
                // versioned model's would go around its revisions.
                let full = &s.full;
                let full_span = full
                    .segments
                    .last()
                    .map_or_else(Span::call_site, |seg| seg.ident.span());
                let full_name = quote!(#full).to_string().replace(' ', "");
                let message = format!(
                    "`{full_name}` is `#[versioned]`: it cannot be the full items of a \
                     `#[subset]` yet, whose `push` and `remove` write them without a new \
                     version or a copy of the old one. Keep the items in a model without \
                     `#[versioned]`, or embed a subset of them by hand through the versioned \
                     model's own writes"
                );
                let unversioned = crate::errors::fail_with(
                    quote_spanned! {full_span=>
                        {
                            #[allow(unused_imports)]
                            use #p::{ProbeUnversioned as _, ProbeVersioned as _};
                            #p::unless(|| (&&#p::ModelProbe::<#full>::new()).unversioned(), #message)
                        }
                    },
                    full_span,
                    full_span,
                );
                quote! {
                    static #stat: #p::SubsetSpec = #spec;
                    #(#checks)*
                    #unversioned
                    #items
                }
            })
            .collect()
    }

    /// The summary fields' type checks: an average kept in an integer is reported with the
    /// model's other mistakes (its missing sum and count), not in a second build.
    fn stubs(&self, model: &Model<'_>) -> TokenStream {
        self.0.iter().map(|s| s.target_checks(model)).collect()
    }

    fn specs(&self) -> Vec<TokenStream> {
        (0..self.0.len())
            .map(|i| {
                let stat = spec_static(i);
                quote!(&#stat)
            })
            .collect()
    }
}

fn spec_static(position: usize) -> Ident {
    format_ident!("__SUBSET_{}", position)
}

/// A parsed `#[subset(...)]` field.
pub(crate) struct SubsetField {
    /// The field (Rust ident) and its BSON name.
    ident: Ident,
    bson_name: String,
    elem: syn::Type,
    limit: u32,
    sort: Vec<(Ident, i32)>,
    full: syn::Path,
    parent: Ident,
    summaries: Vec<SummaryField>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Count,
    Sum,
    Avg,
}

/// A parsed `#[summary(...)]` field.
struct SummaryField {
    /// The parent field.
    ident: Ident,
    bson_name: String,
    kind: Kind,
    /// The summed item field (sum, avg).
    item_field: Option<Ident>,
}
