//! `TwoWay`: a relation kept on both sides, assigned in one transaction.

use super::*;
use crate::span::Spanned as _;

impl<S, T: Identified> crate::span::Spanned for TwoWay<S, T> {
    fn span_model(&self) -> &'static str {
        self.relation.spec.model().name()
    }
    fn span_collection(&self) -> &str {
        self.relation.spec.model().collection()
    }
}

// ----- two-way -----

crate::txn::bound!(impl<S: Identified, T: Identified> TwoWay<S, T>);

/// The single side of a two-way relation (a task's `owner`, whose target's array lists the
/// task): `Task::collection(&db).relation(Task::FIELDS.owner)`. Derefs to its [`Relation`].
#[derive_where::derive_where(Clone)]
pub struct TwoWay<S, T: Identified> {
    /// The relation, bound to the caller's transaction when this handle is: its `tx` is this
    /// handle's.
    pub(super) relation: Relation<S, T>,
}

impl<S, T: Identified> fmt::Debug for TwoWay<S, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("TwoWay").field(&self.relation).finish()
    }
}

impl<S, T: Identified> std::ops::Deref for TwoWay<S, T> {
    type Target = Relation<S, T>;
    fn deref(&self) -> &Relation<S, T> {
        &self.relation
    }
}

/// What [`TwoWay::assign`] changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assigned {
    /// The previous owner (`None` when the child had none), as stored.
    pub previous: Option<Bson>,
    /// Arrays the child was pulled from.
    pub pulled: u64,
    /// Whether the new owner's array gained the child (`false`: it listed it already).
    pub added: bool,
}

/// A disagreement between the two sides of a two-way relation, found by [`TwoWay::check`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Disagreement {
    /// The child's owner field names an owner whose array does not list the child.
    NotListed {
        /// The child's `_id`.
        child: Bson,
        /// The owner its field names.
        owner: Bson,
    },
    /// An owner's array lists a child whose owner field names someone else (or no one).
    ListedElsewhere {
        /// The owner whose array lists the child.
        owner: Bson,
        /// The child's `_id`.
        child: Bson,
        /// The owner the child's field names.
        actual: Option<Bson>,
    },
    /// An owner's array lists a child that does not exist.
    MissingChild {
        /// The owner whose array lists it.
        owner: Bson,
        /// The `_id` no child has.
        child: Bson,
    },
    /// A child's owner field names an owner that does not exist.
    MissingOwner {
        /// The child's `_id`.
        child: Bson,
        /// The `_id` no owner has.
        owner: Bson,
    },
}

impl fmt::Display for Disagreement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Disagreement::NotListed { child, owner } => {
                write!(
                    f,
                    "child {child} names owner {owner}, whose array does not list it"
                )
            }
            Disagreement::ListedElsewhere {
                owner,
                child,
                actual,
            } => match actual {
                Some(a) => write!(f, "owner {owner} lists child {child}, whose owner is {a}"),
                None => write!(f, "owner {owner} lists child {child}, which has no owner"),
            },
            Disagreement::MissingChild { owner, child } => {
                write!(f, "owner {owner} lists child {child}, which does not exist")
            }
            Disagreement::MissingOwner { child, owner } => {
                write!(f, "child {child} names owner {owner}, which does not exist")
            }
        }
    }
}

impl<S: Identified, T: Identified> TwoWay<S, T> {
    #[doc(hidden)]
    pub fn new(
        db: &Database,
        spec: &'static RelationSpec,
        ids: for<'a> fn(&'a S) -> Vec<&'a T::Id>,
    ) -> Self {
        TwoWay {
            relation: Relation::new(db, spec, ids),
        }
    }

    /// The same relation in the caller's transaction `tx`: [`assign`](Self::assign), with
    /// whatever derives from the fields it writes, and [`repair`](Self::repair)'s writes run
    /// in `tx`'s session, and so do its reads ([`check`](Self::check), the scans of `repair`,
    /// and the [`Relation`]'s [`load`](Relation::load) and
    /// [`children_of`](Relation::children_of)), which see what the transaction wrote before
    /// its commit; committing, aborting and retrying are the caller's. See
    /// [`Transaction`](crate::txn::Transaction).
    #[must_use]
    pub fn in_transaction(&self, tx: &crate::txn::Transaction) -> Self {
        TwoWay {
            relation: self.relation.in_transaction(tx),
        }
    }

    /// The caller's transaction, when bound to one.
    pub(super) fn tx(&self) -> Option<&crate::txn::Transaction> {
        self.relation.tx.as_ref()
    }

    /// The relation, for loading and children queries.
    pub fn relation(&self) -> &Relation<S, T> {
        &self.relation
    }

    pub(super) fn inverse(&self) -> &'static str {
        self.relation.spec.inverse().unwrap_or_default()
    }

    /// Makes `owner` the owner of `child`, in one transaction: `owner`'s array gains the child,
    /// the child's field names `owner`, and every other array listing the child loses it.
    ///
    /// [`Error::NotFound`] when the child or the new owner does not exist;
    /// [`Error::InvalidValue`] when either id would not act as an equality (an operator
    /// document, a regex, ...: see [safety](crate::guide::safety)); nothing is
    /// written then. (Without transactions, a missing child is found after the owner's array
    /// gained it: [`repair`](TwoWay::repair) removes such entries.)
    pub fn assign<'a>(
        &'a self,
        child: impl crate::model::IntoId<S::Id>,
        owner: impl crate::model::IntoId<T::Id>,
    ) -> crate::model::Pending<'a, Result<Assigned>> {
        crate::model::Pending::new(self.assign_op(child.into_id(), owner.into_id()))
    }

    async fn assign_op(&self, child: S::Id, owner: T::Id) -> Result<Assigned> {
        crate::span::operation(
            tracing::info_span!(
                "pattern_runtime::relation.assign",
                model = self.span_model(),
                collection = self.span_collection(),
                field = self.relation.spec.field(),
                child = tracing::field::Empty,
                owner = tracing::field::Empty
            ),
            async move {
                let child = bson::serialize_to_bson(&child)?;
                let owner = bson::serialize_to_bson(&owner)?;
                let span = tracing::Span::current();
                span.record("child", tracing::field::display(&child));
                span.record("owner", tracing::field::display(&owner));
                self.assign_inner(child, owner).await
            },
        )
        .await
    }

    async fn assign_inner(&self, child: Bson, owner: Bson) -> Result<Assigned> {
        let spec = self.relation.spec;
        // Both go into filters (`{_id: owner}`, `{tasks: child}`): an operator document or a
        // regex there would match other documents.
        crate::literal::check_id("_id", &child)?;
        crate::literal::check_id(spec.field(), &owner)?;
        // The owner field may be kept by another pattern too (a grid's holder: book it).
        crate::derived::check_kept_except(spec.model(), [spec.field()], &|s| {
            (s as &dyn std::any::Any).is::<RelationSpec>()
        })?;
        let db = &self.relation.db;
        let children = db.collection::<Document>(spec.model().collection());
        let owners = db.collection::<Document>(spec.target().collection());
        let field = spec.field();
        let inverse = self.inverse();
        /// A document found missing after the owner's array was written: returned as the
        /// body's error, so the transaction is aborted and that write undone.
        #[derive(Debug, Clone, Copy)]
        struct NoChild;
        let step = transact!(db, self.tx(), |s| async {
            let mut s: Option<&mut ClientSession> = s;
            // What derives from the owners' arrays (a copy of them, a count over them): the
            // new owner and those listing the child now.
            let owners_watch = crate::derived::watch(
                db,
                s.as_deref_mut(),
                spec.target(),
                Some(&[inverse]),
                &doc! { "$or": [{ "_id": owner.clone() }, { inverse: child.clone() }] },
            )
            .await?;
            let add = owners.update_one(
                doc! { "_id": owner.clone() },
                doc! { "$addToSet": { inverse: child.clone() } },
            );
            let added = in_session!(add, s.as_deref_mut())?;
            if added.matched_count == 0 {
                return Ok(None);
            }
            // What derives from the child's owner field (a count of children per owner), but
            // the owners' arrays, which this write keeps itself.
            let watch = crate::derived::watch_except(
                db,
                s.as_deref_mut(),
                spec.model(),
                Some(&[field]),
                &doc! { "_id": child.clone() },
                &|d| d.pattern() == "relation",
            )
            .await?;
            let set = children
                .find_one_and_update(
                    doc! { "_id": child.clone() },
                    doc! { "$set": { field: owner.clone() } },
                )
                .projection(doc! { field: 1 })
                .return_document(ReturnDocument::Before);
            let Some(before) = in_session!(set, s.as_deref_mut())? else {
                return Err(mongodb::error::Error::custom(NoChild));
            };
            if let Some(watch) = watch {
                watch.after(db, s.as_deref_mut()).await?;
            }
            let pull = owners.update_many(
                doc! { inverse: child.clone(), "_id": { "$ne": owner.clone() } },
                doc! { "$pull": { inverse: child.clone() } },
            );
            let pulled = in_session!(pull, s.as_deref_mut())?;
            if let Some(watch) = owners_watch {
                watch.after(db, s).await?;
            }
            Ok(Some(Assigned {
                previous: before
                    .get(field)
                    .filter(|b| !matches!(b, Bson::Null))
                    .cloned(),
                pulled: pulled.modified_count,
                added: added.modified_count == 1,
            }))
        });
        match step {
            Ok(Some(a)) => {
                tracing::debug!(
                    target: "pattern_runtime::relation",
                    pulled = a.pulled,
                    added = a.added,
                    "assigned"
                );
                Ok(a)
            }
            Ok(None) => Err(Error::NotFound {
                collection: spec.target().collection().to_owned(),
                missing: Box::new(crate::error::Missing::Document { id: owner }),
            }),
            Err(Error::Driver { source, .. }) if source.get_custom::<NoChild>().is_some() => {
                Err(Error::NotFound {
                    collection: spec.model().collection().to_owned(),
                    missing: Box::new(crate::error::Missing::Document { id: child }),
                })
            }
            Err(e) => Err(e),
        }
    }
}
