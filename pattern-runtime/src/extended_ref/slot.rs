//! Compile-time plumbing of the derives: what a field holding references is, and the checks
//! that point at the user's tokens. Not a stable API.
//!
//! The checks classify a field's type by autoref specialisation: `(&&&Probe::<T>::new())`
//! resolves a method on the most specific of `&&Probe<T>`, `&Probe<T>` and `Probe<T>` whose
//! bounds hold, and the method's return type is the verdict. No trait bound fails on a user's
//! mistake: each check is a constant that reads the verdict and fails to evaluate with the
//! derive's message (E0080), spanned at the user's tokens, so a mistake is one error saying what
//! to do, without naming this module. Even the slot of a misdeclared field is built (on a
//! placeholder reference), since the build fails at its check anyway.

use super::*;
use crate::checks::Probe;
use std::collections::{BTreeMap, HashMap};

/// A field type holding extended references in a layout propagation can address: `R`,
/// `Option<R>`, `Vec<R>` or `Option<Vec<R>>`.
pub trait RefSlot {
    /// The reference type.
    type Ref: ExtendedRef;
    /// Whether the field is an array of references.
    const MANY: bool;
}
#[diagnostic::do_not_recommend]
impl<T: ExtendedRef> RefSlot for T {
    type Ref = T;
    const MANY: bool = false;
}
#[diagnostic::do_not_recommend]
impl<T: ExtendedRef> RefSlot for Option<T> {
    type Ref = T;
    const MANY: bool = false;
}
#[diagnostic::do_not_recommend]
impl<T: ExtendedRef> RefSlot for Vec<T> {
    type Ref = T;
    const MANY: bool = true;
}
#[diagnostic::do_not_recommend]
impl<T: ExtendedRef> RefSlot for Option<Vec<T>> {
    type Ref = T;
    const MANY: bool = true;
}

/// A type holding extended references at any depth (`Vec<Vec<R>>`, `HashMap<K, R>`, ...).
pub trait HoldsRef {}
impl<T: ExtendedRef> HoldsRef for T {}
impl<T: HoldsRef> HoldsRef for Option<T> {}
impl<T: HoldsRef> HoldsRef for Vec<T> {}
impl<T: HoldsRef, const N: usize> HoldsRef for [T; N] {}
impl<K, T: HoldsRef> HoldsRef for BTreeMap<K, T> {}
impl<K, T: HoldsRef, S> HoldsRef for HashMap<K, T, S> {}

/// A reference shape that may be kept in sync (not declared `snapshot`).
pub trait Propagatable: ExtendedRef {}

/// The reference spec a [`Slot`] holds while its field's check fails the build: never read
/// at run time, since a program with such a field does not compile.
static UNRESOLVED: RefSpec = RefSpec::from_parts(RefParts {
    name: "",
    source: || &NO_SOURCE,
    fields: &[],
    snapshot_only: true,
});

/// [`UNRESOLVED`]'s source: no model.
static NO_SOURCE: ModelSchema = ModelSchema::bare("", "");

/// The slot of a field marked with a mode, from its `held()` verdict (the check that the
/// verdict is [`Held`] is [`mode_error`]'s, a separate constant).
pub const fn slot<V: Verdict>(_check: fn() -> V, name: &'static str) -> Slot {
    match V::SLOT {
        Some((reference, many)) => Slot {
            reference,
            many,
            name,
        },
        None => Slot {
            reference: &UNRESOLVED,
            many: false,
            name,
        },
    }
}

/// The error of a field marked with a mode: `not_refs` unless it holds references,
/// `too_deep` unless propagation can address them.
pub const fn mode_error<V: Verdict>(
    _check: fn() -> V,
    not_refs: &'static str,
    too_deep: &'static str,
) -> Option<&'static str> {
    match (V::HOLDS, V::SLOT.is_some()) {
        (false, _) => Some(not_refs),
        (true, false) => Some(too_deep),
        (true, true) => None,
    }
}

/// The error of a field marked `propagate`: `message` if its reference shape is declared
/// `snapshot` on the source.
pub const fn propagate_error<V: SyncVerdict>(
    _check: fn() -> V,
    message: &'static str,
) -> Option<&'static str> {
    if V::SNAPSHOT_ONLY {
        Some(message)
    } else {
        None
    }
}

/// The probe of a type: see the module docs.
pub type RefProbe<T> = Probe<T>;

/// Verdict: nothing to say.
pub struct Plain;
/// Verdict: `T` holds references in a layout propagation addresses.
pub struct Held<T: ?Sized>(PhantomData<fn() -> T>);
/// Verdict: `T` holds references deeper than propagation addresses.
pub struct Nested<T: ?Sized>(PhantomData<fn() -> T>);
/// Verdict: `T` holds a reference declared `snapshot` on its source.
pub struct SnapshotOnly<R: ?Sized>(PhantomData<fn() -> R>);
/// Verdict: `T` has `#[derive(Fields)]`, which says what its fields hold.
pub struct ItemsOf<T: ?Sized>(PhantomData<fn() -> T>);

/// `held()` when `T` holds references addressably.
pub trait ProbeHeld {
    /// The verdict.
    type Verdict;
    /// Classifies.
    fn held(&self) -> Self::Verdict;
}
impl<T: RefSlot> ProbeHeld for &&Probe<T> {
    type Verdict = Held<T>;
    fn held(&self) -> Held<T> {
        Held(PhantomData)
    }
}
/// `held()` when `T` holds references deeper.
pub trait ProbeNested {
    /// The verdict.
    type Verdict;
    /// Classifies.
    fn held(&self) -> Self::Verdict;
}
impl<T: HoldsRef> ProbeNested for &Probe<T> {
    type Verdict = Nested<T>;
    fn held(&self) -> Nested<T> {
        Nested(PhantomData)
    }
}
/// `propagation()` when `T` holds references that may be kept in sync.
pub trait ProbeSyncable {
    /// Classifies.
    fn propagation(&self) -> Plain {
        Plain
    }
}
impl<T: RefSlot> ProbeSyncable for &&Probe<T> where T::Ref: Propagatable {}
/// `propagation()` when `T` holds references declared `snapshot`.
pub trait ProbeSnapshotOnly {
    /// The verdict.
    type Verdict;
    /// Classifies.
    fn propagation(&self) -> Self::Verdict;
}
impl<T: RefSlot> ProbeSnapshotOnly for &Probe<T> {
    type Verdict = SnapshotOnly<T::Ref>;
    fn propagation(&self) -> SnapshotOnly<T::Ref> {
        SnapshotOnly(PhantomData)
    }
}
/// `items()` when `T` has `#[derive(Fields)]`.
pub trait ProbeItems {
    /// The verdict.
    type Verdict;
    /// Classifies.
    fn items(&self) -> Self::Verdict;
}
impl<T: HeldRefs> ProbeItems for &&Probe<T> {
    type Verdict = ItemsOf<T>;
    fn items(&self) -> ItemsOf<T> {
        ItemsOf(PhantomData)
    }
}
/// Every method, when nothing more specific holds.
pub trait ProbeOther {
    /// Nothing to say.
    fn held(&self) -> Plain {
        Plain
    }
    /// Nothing to say (not a reference: [`RefSlot`] reports it).
    fn propagation(&self) -> Plain {
        Plain
    }
    /// Nothing to say.
    fn items(&self) -> Plain {
        Plain
    }
}
impl<T: ?Sized> ProbeOther for Probe<T> {}

/// What a `held()` verdict says.
pub trait Verdict {
    /// Whether the type holds references.
    const HOLDS: bool;
    /// The reference and whether the field holds an array of them, when propagation can
    /// address them.
    const SLOT: Option<(&'static RefSpec, bool)>;
}
impl Verdict for Plain {
    const HOLDS: bool = false;
    const SLOT: Option<(&'static RefSpec, bool)> = None;
}
impl<T: RefSlot + ?Sized> Verdict for Held<T> {
    const HOLDS: bool = true;
    const SLOT: Option<(&'static RefSpec, bool)> = Some((<T::Ref as ExtendedRef>::SPEC, T::MANY));
}
impl<T: ?Sized> Verdict for Nested<T> {
    const HOLDS: bool = true;
    const SLOT: Option<(&'static RefSpec, bool)> = None;
}

/// The error of a stored field without a mode: `no_mode` if it holds references,
/// `too_deep` if it holds them deeper than propagation can address.
pub const fn no_mode_error<V: Verdict>(
    _check: fn() -> V,
    no_mode: &'static str,
    too_deep: &'static str,
) -> Option<&'static str> {
    match (V::HOLDS, V::SLOT.is_some()) {
        (false, _) => None,
        (true, true) => Some(no_mode),
        (true, false) => Some(too_deep),
    }
}

/// What a `propagation()` verdict says.
pub trait SyncVerdict {
    /// Whether the reference shape is declared `snapshot` on its source.
    const SNAPSHOT_ONLY: bool;
}
impl SyncVerdict for Plain {
    const SNAPSHOT_ONLY: bool = false;
}
impl<R: ?Sized> SyncVerdict for SnapshotOnly<R> {
    const SNAPSHOT_ONLY: bool = true;
}

/// A field of a `#[derive(Fields)]` struct that holds references, with the messages for a
/// model field holding the struct.
#[derive(Clone, Copy, Debug)]
pub struct HeldRef {
    /// The field's Rust name (what `path` names).
    pub field: &'static str,
    /// The model field holds the struct in an array, without a mode.
    pub in_array: &'static str,
    /// The model field holds the struct directly, without a mode.
    pub nested: &'static str,
    /// The model field names another field of the items with `path`.
    pub beside: &'static str,
}

/// What `#[derive(Fields)]` says of a struct's fields holding references.
pub trait HeldRefs {
    /// One entry per stored field, `Some` for those holding references.
    const HELD: &'static [Option<HeldRef>];
}

/// What an `items()` verdict says.
pub trait ItemVerdict {
    /// See [`HeldRefs::HELD`].
    const HELD: &'static [Option<HeldRef>];
}
impl ItemVerdict for Plain {
    const HELD: &'static [Option<HeldRef>] = &[];
}
impl<T: HeldRefs + ?Sized> ItemVerdict for ItemsOf<T> {
    const HELD: &'static [Option<HeldRef>] = T::HELD;
}

/// `held` when the verdict holds references.
pub const fn when_held<V: Verdict>(_check: fn() -> V, held: HeldRef) -> Option<HeldRef> {
    if V::HOLDS {
        Some(held)
    } else {
        None
    }
}

/// The error of a model field without a mode holding the struct (in an array or not), if
/// one of its fields holds references.
pub const fn items_without_mode<V: ItemVerdict>(
    _check: fn() -> V,
    in_array: bool,
) -> Option<&'static str> {
    let held = V::HELD;
    let mut i = 0;
    while i < held.len() {
        if let Some(h) = held[i] {
            return Some(if in_array { h.in_array } else { h.nested });
        }
        i += 1;
    }
    None
}

/// The error of a model field marked with `path`, if another field of its items holds
/// references (which no mode covers).
pub const fn items_beside_path<V: ItemVerdict>(
    _check: fn() -> V,
    path: &'static str,
) -> Option<&'static str> {
    let held = V::HELD;
    // A `path` that names no field holding references has its own error.
    let mut named = false;
    let mut i = 0;
    while i < held.len() {
        if let Some(h) = held[i] {
            named |= crate::checks::str_eq(h.field, path);
        }
        i += 1;
    }
    let mut i = 0;
    while named && i < held.len() {
        if let Some(h) = held[i]
            && !crate::checks::str_eq(h.field, path)
        {
            return Some(h.beside);
        }
        i += 1;
    }
    None
}
