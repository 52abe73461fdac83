//! Compile-time checks of a field that holds the `_id` of a `U` (generated code: a computed
//! field's `by`): the probe of the field's type `T` for the model `U`, by autoref
//! specialisation as in `checks`.

use std::marker::PhantomData;

use super::{Identified, Ref};
use crate::checks::{Fail, Pass};
use crate::schema::FieldName;

/// The probe of a field of type `T` meant to hold the `_id` of a `U`.
pub struct IdProbe<T: ?Sized, U>(PhantomData<fn() -> U>, PhantomData<fn() -> T>);

impl<T: ?Sized, U> IdProbe<T, U> {
    /// The probe of `field`'s type.
    pub const fn of(_field: FieldName<T>) -> Self {
        IdProbe(PhantomData, PhantomData)
    }
}

/// `T` is `U`'s `_id` type.
pub trait ProbeId {
    /// Passes.
    fn id(&self) -> Pass {
        Pass
    }
}
impl<U: Identified> ProbeId for &IdProbe<U::Id, U> {}

/// `T` is `Option` of `U`'s `_id` type.
pub trait ProbeOptionalId {
    /// Passes.
    fn optional_id(&self) -> Pass {
        Pass
    }
}
impl<U: Identified> ProbeOptionalId for &IdProbe<Option<U::Id>, U> {}

/// `T` is `Ref<U>`.
pub trait ProbeRefTo {
    /// Passes.
    fn ref_to(&self) -> Pass {
        Pass
    }
}
impl<U: Identified> ProbeRefTo for &IdProbe<Ref<U>, U> {}

/// `T` is `Option<Ref<U>>`.
pub trait ProbeOptionalRefTo {
    /// Passes.
    fn optional_ref_to(&self) -> Pass {
        Pass
    }
}
impl<U: Identified> ProbeOptionalRefTo for &IdProbe<Option<Ref<U>>, U> {}

/// Every check, when nothing more specific holds.
pub trait ProbeOtherId {
    /// Fails.
    fn id(&self) -> Fail {
        Fail
    }
    /// Fails.
    fn optional_id(&self) -> Fail {
        Fail
    }
    /// Fails.
    fn ref_to(&self) -> Fail {
        Fail
    }
    /// Fails.
    fn optional_ref_to(&self) -> Fail {
        Fail
    }
}
impl<T: ?Sized, U> ProbeOtherId for IdProbe<T, U> {}
