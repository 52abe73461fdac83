//! `#[bounded(n)]`: an array field the application keeps at most `n` items long (a product's
//! tags, a user's few addresses).
//!
//! The declaration is for the [doctor](mod@crate::doctor): an array field (`Vec`, `VecDeque`, a set)
//! that no pattern caps (`#[subset]`, `#[outlier]`, ...) is reported as an array that can grow
//! without bound, the checklist's "数组是否可能无限增长?". `#[bounded(n)]` says why it cannot;
//! the doctor then checks the stored documents against `n` instead. Nothing is enforced on
//! writes: a bound the application must hold as items arrive is a [`subset`](crate::subset)
//! (`$push` with `$slice`) or an [`outlier`](crate::outlier).
//!
//! ```
//! use pattern_runtime::Model;
//!
//! #[derive(serde::Serialize, serde::Deserialize, Model)]
//! struct Product {
//!     #[serde(rename = "_id")]
//!     id: String,
//!     #[bounded(20)]
//!     tags: Vec<String>,
//! }
//!
//! let bound = Product::SCHEMA.specs::<pattern_runtime::bounded::BoundSpec>().next().unwrap();
//! assert_eq!((bound.field(), bound.max()), ("tags", 20));
//! ```
//!
//! On a field that is not an array, or with a bound of 0, it is a compile error.

use bson::Bson;
use futures_util::future::BoxFuture;

use crate::error::Result;
use crate::finding::{Bounded, Check, Finding};
use crate::schema::{spec, PatternSpec, Sample};

spec! {
    /// A `#[bounded(n)]` field, as static data.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct BoundSpec { parts: BoundParts }
    #[derive(PartialEq, Eq)]
    pub struct BoundParts {
        pub field: &'static str,
        pub max: u32,
    }
}

impl BoundSpec {
    /// The array field's BSON name.
    pub fn field(&self) -> &'static str {
        self.parts.field
    }

    /// The most items it holds.
    pub fn max(&self) -> u32 {
        self.parts.max
    }
}

impl PatternSpec for BoundSpec {
    fn bounded_arrays(&'static self) -> Vec<Bounded> {
        vec![Bounded::new(self.parts.field, "`#[bounded]`").at_most(self.max())]
    }

    /// The sampled documents whose array is over the bound.
    fn audit<'a>(
        &'static self,
        sample: &'a Sample<'a>,
    ) -> Option<BoxFuture<'a, Result<Vec<Finding>>>> {
        let lengths: Vec<usize> = sample
            .documents
            .iter()
            .filter_map(|d| match d.get(self.field()) {
                Some(Bson::Array(a)) => Some(a.len()),
                _ => None,
            })
            .collect();
        let over = lengths.iter().filter(|n| **n > self.max() as usize).count();
        let largest = lengths.iter().copied().max().unwrap_or(0);
        let findings = (over > 0)
            .then(|| {
                sample.finding(
                    Check::OverBound,
                    self.field(),
                    format!(
                        "{over} of {} sampled documents hold more than {} items (largest {largest})",
                        sample.documents.len(),
                        self.max()
                    ),
                    format!(
                        "trim those arrays, or raise the declared bound to what the data needs \
                         (`#[bounded({largest})]`); to enforce a bound on writes use \
                         `#[subset(limit = ..)]`"
                    ),
                )
            })
            .into_iter()
            .collect();
        Some(Box::pin(async move { Ok(findings) }))
    }
}
