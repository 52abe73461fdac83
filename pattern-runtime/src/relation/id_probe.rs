//! Compile-time checks of a field that holds the `_id` of a `U` (generated code: a computed
//! field's `by`): the probe of the field's type `T` for the model `U`, a family of checks as in
//! `checks`.

use super::{Identified, Ref};
use crate::checks::{probe_family, Probe};

/// The probe of a field of type `T` meant to hold the `_id` of a `U`.
pub type IdProbe<T, U> = Probe<T, U>;

probe_family! {
    /// Every check, when nothing more specific holds.
    fallback ProbeOtherId;
    /// `T` is `U`'s `_id` type.
    ProbeId::id for impl<U: Identified> &Probe<U::Id, U>;
    /// `T` is `Option` of `U`'s `_id` type.
    ProbeOptionalId::optional_id for impl<U: Identified> &Probe<Option<U::Id>, U>;
    /// `T` is `Ref<U>`.
    ProbeRefTo::ref_to for impl<U: Identified> &Probe<Ref<U>, U>;
    /// `T` is `Option<Ref<U>>`.
    ProbeOptionalRefTo::optional_ref_to for impl<U: Identified> &Probe<Option<Ref<U>>, U>;
}
