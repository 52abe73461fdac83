//! What every operation span of a handle records: the model and its collection. The runtime's
//! operations carry `#[operation(pattern.name, ..)]` (from `pattern-derive`), which expands to
//! `tracing`'s `#[instrument]` with these two fields, unless the operation gives its own.

/// A handle whose operations open spans: the model it works on and the collection it writes.
pub(crate) trait Spanned {
    /// The model's name, the span's `model` field.
    fn span_model(&self) -> &'static str;
    /// The collection, the span's `collection` field.
    fn span_collection(&self) -> &str;
}

/// `impl Spanned` for a handle, from the model's schema and the collection's expression.
macro_rules! spanned {
    (impl<$($p:ident $(: $b:path)?),+> $ty:ty => $model:expr, $collection:expr) => {
        impl<$($p $(: $b)?),+> crate::span::Spanned for $ty {
            fn span_model(&self) -> &'static str {
                $model.name()
            }
            fn span_collection(&self) -> &str {
                $collection
            }
        }
    };
}
pub(crate) use spanned;
