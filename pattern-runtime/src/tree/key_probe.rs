//! Compile-time checks of the fields a tree declares (generated code): the probe of a field's
//! type `T` against the tree's key type `K`, by autoref specialisation as in `checks`.
use std::marker::PhantomData;

use crate::checks::{Fail, Pass};
use crate::schema::FieldName;

/// The probe of a field of type `T` meant to hold keys of type `K`.
pub struct KeyProbe<T: ?Sized, K: ?Sized>(PhantomData<fn() -> T>, PhantomData<fn() -> K>);

impl<T: ?Sized, K: ?Sized> KeyProbe<T, K> {
    /// The probe of `field`'s type against the type of `key`.
    pub const fn of(_field: FieldName<T>, _key: FieldName<K>) -> Self {
        KeyProbe(PhantomData, PhantomData)
    }

    /// The probe of `field`'s type against a key type named by the caller.
    pub const fn of_field(_field: FieldName<T>) -> Self {
        KeyProbe(PhantomData, PhantomData)
    }
}

/// `T` is `K`.
pub trait ProbeKey {
    /// Passes.
    fn key(&self) -> Pass {
        Pass
    }
}
impl<K> ProbeKey for &KeyProbe<K, K> {}

/// `T` is `Option<K>`.
pub trait ProbeOptionalKey {
    /// Passes.
    fn optional_key(&self) -> Pass {
        Pass
    }
}
impl<K> ProbeOptionalKey for &KeyProbe<Option<K>, K> {}

/// `T` is `Vec<K>`.
pub trait ProbeKeys {
    /// Passes.
    fn keys(&self) -> Pass {
        Pass
    }
}
impl<K> ProbeKeys for &KeyProbe<Vec<K>, K> {}

/// Every check, when nothing more specific holds.
pub trait ProbeOtherKey {
    /// Fails.
    fn key(&self) -> Fail {
        Fail
    }
    /// Fails.
    fn optional_key(&self) -> Fail {
        Fail
    }
    /// Fails.
    fn keys(&self) -> Fail {
        Fail
    }
}
impl<T: ?Sized, K: ?Sized> ProbeOtherKey for KeyProbe<T, K> {}
