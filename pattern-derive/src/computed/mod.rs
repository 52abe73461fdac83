//! `#[computed(sum = Order.amount, by = user_id)]`: fields computed from another model's
//! documents (a count, sum or average of a subset of the same struct is a `#[summary]`:
//! `subset/`; a `#[computed]` without `by` written for one is an error that says so).
//!
//! `parse.rs` reads the attribute through `options::parse`, `expand.rs` generates the spec and
//! the checks. There is no `validate.rs`: what the attribute names lives in another model, so
//! nothing can be checked against this one inside the derive (its refusal beside `#[subset]` is
//! in `combinations.rs`).
//!
//! Every check of a type is a constant of generated code, spanned at the token it is about: the
//! source is a model (`<Order as Model>`, the source named once: `FromField::source_names`), the
//! summed field is a number, the kept field can hold the result (an integer for a count, a float
//! for a sum of floats, an `Option` for a min or max), and `by` holds the target's `_id` (the
//! `IdProbe` verdicts of the runtime's `relation`).

use proc_macro2::TokenStream;
use quote::quote;
use syn::Ident;

use crate::ast::{Field, Model};
use crate::attr::Attr;
use crate::schema::{Pattern, PatternDef};

mod expand;
mod parse;

use expand::constructor;
use parse::parse_field;

/// The computed pattern's entry points.
pub(crate) const PATTERN: PatternDef = PatternDef {
    model: |_, model, errors| {
        let declared = model.fields.iter().any(|f| f.has(Attr::Computed));
        let fields = model
            .fields
            .iter()
            .filter_map(|f| parse_field(model, f, errors))
            .collect();
        Box::new(ComputedFrom { fields, declared })
    },
    fields: None,
};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Count,
    Sum,
    Min,
    Max,
}

/// One field computed from another model.
struct FromField {
    /// The kept field.
    ident: Ident,
    kind: Kind,
    /// The source model, as written.
    source: syn::Path,
    /// The source's summed field (not for a count).
    source_field: Option<Ident>,
    /// The source's field holding this document's `_id`.
    by: Ident,
}

struct ComputedFrom {
    fields: Vec<FromField>,
    /// Whether any field declares one, read or not: the stubs keep `Model::computed`.
    declared: bool,
}

impl Pattern for ComputedFrom {
    fn kept(&self, field: &Field<'_>) -> Option<&'static str> {
        self.fields
            .iter()
            .any(|c| c.ident == *field.ident)
            .then_some("ComputedValue")
    }

    fn items(&self, model: &Model<'_>) -> TokenStream {
        if self.fields.is_empty() {
            return TokenStream::new();
        }
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        let specs = self.fields.iter().map(|f| f.expand(model, &p));
        let constructor = constructor(model);
        quote! {
            #(#specs)*
            #constructor
        }
    }

    fn specs(&self) -> Vec<TokenStream> {
        crate::schema::spec_refs(self.fields.iter().map(|f| f.static_ident()))
    }

    fn stubs(&self, model: &Model<'_>) -> TokenStream {
        if !self.declared {
            return TokenStream::new();
        }
        constructor(model)
    }
}
