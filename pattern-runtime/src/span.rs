//! What every operation span of a handle records, and how it runs in it. Each operation opens
//! its span with `tracing`'s own macros (`info_span!("pattern_runtime::tree.insert", model =
//! self.span_model(), collection = self.span_collection(), ..)`, `debug_span!` for the cheap
//! reads) and runs its body in it through [`operation`]: [`Spanned`] gives the two names, the
//! extra fields follow (`tracing::field::Empty` for those the body records later), and a
//! returned error is a `DEBUG` event, never `ERROR` (the caller decides). No attribute macro:
//! what a span holds is written where the operation is.

use std::future::Future;

/// Runs an operation's `body` in its `span`; a returned error is a `DEBUG` event of the span
/// (field `error`), as `tracing`'s `#[instrument(err(level = "debug"))]` would record it.
pub(crate) async fn operation<T, E: std::fmt::Display>(
    span: tracing::Span,
    body: impl Future<Output = Result<T, E>>,
) -> Result<T, E> {
    let result = tracing::Instrument::instrument(body, span.clone()).await;
    if let Err(e) = &result {
        span.in_scope(|| tracing::debug!(error = %e));
    }
    result
}

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

/// Declares a handle on one model `M` in a database: the struct (`Clone` with no bound on `M`),
/// holding the database, the caller's transaction when bound to one, and the model's type; its
/// [`Spanned`] impl, from `M`'s schema and the collection's expression; and its `Debug`, which
/// shows the model's name and the database's; and its constructor `new(&db)`, the handle
/// bound to no transaction. The handle's `in_transaction` stays with it, with its own docs.
macro_rules! model_handle {
    (
        $(#[$attr:meta])*
        pub struct $name:ident<M: $bound:path> => $collection:expr;
    ) => {
        $(#[$attr])*
        #[derive_where::derive_where(Clone)]
        pub struct $name<M> {
            db: mongodb::Database,
            /// The caller's transaction, when bound to one.
            tx: Option<$crate::txn::Transaction>,
            _model: std::marker::PhantomData<fn() -> M>,
        }

        $crate::span::spanned!(impl<M: $bound> $name<M> => M::SCHEMA, $collection);

        impl<M: $bound> $name<M> {
            #[doc = concat!("The [`", stringify!($name), "`] of `M` in `db`.")]
            pub fn new(db: &mongodb::Database) -> Self {
                $name {
                    db: db.clone(),
                    tx: None,
                    _model: std::marker::PhantomData,
                }
            }
        }

        impl<M: $bound> std::fmt::Debug for $name<M> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("model", &M::SCHEMA.name())
                    .field("database", &self.db.name())
                    .finish()
            }
        }
    };
}
pub(crate) use model_handle;
