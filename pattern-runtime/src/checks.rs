//! Compile-time checks of field types that the derives generate, shared by the patterns.
//!
//! A check classifies a field's type by autoref specialisation and reads the verdict in a
//! constant: `(&&Probe::of(FIELDS.unit)).numeric()` resolves to the impl for `&Probe<T>` when
//! `T` is numeric and to the fallback for `Probe<T>` otherwise, and the generated
//! `const _: () = if let Some(m) = unless(|| ..., "message") { panic!("{}", m) };` fails to
//! evaluate with the derive's message, spanned at the user's token. No trait bound fails, so
//! rustc prints that message alone, without naming this plumbing.

use std::marker::PhantomData;

use crate::schema::FieldName;

/// The probe of a field's type.
pub struct Probe<T: ?Sized>(PhantomData<fn() -> T>);

impl<T: ?Sized> Probe<T> {
    /// The probe of `field`'s type.
    pub const fn of(_field: FieldName<T>) -> Self {
        Probe(PhantomData)
    }
}

/// Verdict: the type passes.
pub struct Pass;
/// Verdict: the type fails.
pub struct Fail;

/// A check's outcome.
pub trait Verdict {
    /// Whether the type passes.
    const PASS: bool;
}
impl Verdict for Pass {
    const PASS: bool = true;
}
impl Verdict for Fail {
    const PASS: bool = false;
}

/// `message` unless `check`'s verdict passes (the closure is never called: its type is the
/// verdict).
pub const fn unless<V: Verdict>(_check: fn() -> V, message: &'static str) -> Option<&'static str> {
    if V::PASS {
        None
    } else {
        Some(message)
    }
}

/// A numeric type: what a bucket summarises, and what a computed count or sum is kept in or
/// read from.
pub trait Numeric {}
macro_rules! numeric {
    ($($t:ty),*) => { $(impl Numeric for $t {})* };
}
numeric!(i8, i16, i32, i64, u8, u16, u32, f32, f64);
impl<T: Numeric> Numeric for Option<T> {}

/// An integer type: what a count is kept in, and what an approximate counter counts in.
pub trait Integer {}
macro_rules! integer {
    ($($t:ty),*) => { $(impl Integer for $t {})* };
}
integer!(i8, i16, i32, i64, u8, u16, u32);
impl<T: Integer> Integer for Option<T> {}

/// A type that can hold an average.
pub trait Float {}
impl Float for f64 {}
impl Float for f32 {}
impl<T: Float> Float for Option<T> {}

/// `numeric()` when the type is `Numeric`.
pub trait ProbeNumeric {
    /// Passes.
    fn numeric(&self) -> Pass {
        Pass
    }
}
impl<T: Numeric> ProbeNumeric for &Probe<T> {}

/// `float()` when the type is `Float`.
pub trait ProbeFloat {
    /// Passes.
    fn float(&self) -> Pass {
        Pass
    }
}
impl<T: Float> ProbeFloat for &Probe<T> {}

/// `integer()` when the type is `Integer`.
pub trait ProbeInteger {
    /// Passes.
    fn integer(&self) -> Pass {
        Pass
    }
}
impl<T: Integer> ProbeInteger for &Probe<T> {}

/// `boolean()` when the type is `bool`.
pub trait ProbeBool {
    /// Passes.
    fn boolean(&self) -> Pass {
        Pass
    }
}
impl ProbeBool for &Probe<bool> {}

/// `optional()` when the type is an `Option`.
pub trait ProbeOptional {
    /// Passes.
    fn optional(&self) -> Pass {
        Pass
    }
}
impl<T> ProbeOptional for &Probe<Option<T>> {}

/// Every check, when nothing more specific holds.
pub trait ProbeOther {
    /// Fails: not numeric.
    fn numeric(&self) -> Fail {
        Fail
    }
    /// Fails: not a float.
    fn float(&self) -> Fail {
        Fail
    }
    /// Fails: not an integer.
    fn integer(&self) -> Fail {
        Fail
    }
    /// Fails: not an `Option`.
    fn optional(&self) -> Fail {
        Fail
    }
    /// Fails: not a `bool`.
    fn boolean(&self) -> Fail {
        Fail
    }
}

/// Whether `check`'s verdict passes (the closure is never called: its type is the verdict).
pub const fn passes<V: Verdict>(_check: fn() -> V) -> bool {
    V::PASS
}
impl<T: ?Sized> ProbeOther for Probe<T> {}

/// `a == b`, in a constant.
pub const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Whether `list` holds `s`, in a constant.
pub const fn contains_str(list: &[&str], s: &str) -> bool {
    let mut i = 0;
    while i < list.len() {
        if str_eq(list[i], s) {
            return true;
        }
        i += 1;
    }
    false
}

/// The probe of a model type (not of a field): `(&&ModelProbe::<T>::new()).unversioned()`.
pub struct ModelProbe<T>(PhantomData<fn() -> T>);

impl<T> ModelProbe<T> {
    /// The probe of `T`.
    #[allow(clippy::new_without_default)] // a probe, built in generated constants only
    pub const fn new() -> Self {
        ModelProbe(PhantomData)
    }
}

/// `unversioned()` of a `#[versioned]` model: fails.
pub trait ProbeVersioned {
    /// Fails.
    fn unversioned(&self) -> Fail {
        Fail
    }
}
impl<T: crate::versioning::Versioned> ProbeVersioned for &ModelProbe<T> {}

/// `unversioned()` of any other type (a model without `#[versioned]`, or a type that is no model
/// at all, which its own error reports): passes.
pub trait ProbeUnversioned {
    /// Passes.
    fn unversioned(&self) -> Pass {
        Pass
    }
}
impl<T> ProbeUnversioned for ModelProbe<T> {}
