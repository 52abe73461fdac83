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

/// The probe of a type `T`, the one every compile-time check of the derives classifies (here
/// and in the patterns: `extended_ref::slot`, `relation::id_probe`, `tree::key_probe`,
/// `preallocation::slot_probe`). `U` is what a check compares `T` with (a model, a key type),
/// `()` when nothing.
pub struct Probe<T: ?Sized, U: ?Sized = ()>(PhantomData<fn() -> T>, PhantomData<fn() -> U>);

impl<T: ?Sized, U: ?Sized> Probe<T, U> {
    /// The probe of `T`.
    pub const fn new() -> Self {
        Probe(PhantomData, PhantomData)
    }

    /// The probe of `field`'s type.
    pub const fn of<K, M, const I: usize>(_field: FieldName<T, K, M, I>) -> Self {
        Probe(PhantomData, PhantomData)
    }
}

impl<T: ?Sized, U: ?Sized> Default for Probe<T, U> {
    fn default() -> Self {
        Self::new()
    }
}

/// The probe of a field's type for the checks of this module, as generated code names it.
pub type CheckProbe<T> = Probe<T>;

/// Declares a family of checks on [`Probe`]: per check, a trait whose method passes, implemented
/// for the probes the check accepts (written `&Probe<..>`, one autoref above the fallback), and
/// the family's fallback trait, implemented for every probe, whose methods fail. Generated code
/// imports a family's traits and calls `(&&Probe::of(field)).method()`.
macro_rules! probe_family {
    (
        $(#[$other_attr:meta])*
        fallback $other:ident;
        $(
            $(#[$attr:meta])*
            $probe:ident::$method:ident for impl<$($g:ident $(: $bound:path)?),*> $ty:ty;
        )*
    ) => {
        $(
            $(#[$attr])*
            pub trait $probe {
                /// Passes.
                fn $method(&self) -> $crate::checks::Pass {
                    $crate::checks::Pass
                }
            }
            impl<$($g $(: $bound)?),*> $probe for $ty {}
        )*

        $(#[$other_attr])*
        pub trait $other {
            $(
                /// Fails.
                fn $method(&self) -> $crate::checks::Fail {
                    $crate::checks::Fail
                }
            )*
        }
        impl<T: ?Sized, U: ?Sized> $other for $crate::checks::Probe<T, U> {}
    };
}
pub(crate) use probe_family;

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

/// A numeric type: what a bucket summarises, and what a summary's or computed count or sum is
/// kept in or read from.
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

probe_family! {
    /// Every check, when nothing more specific holds.
    fallback ProbeOther;
    /// `numeric()` when the type is `Numeric`.
    ProbeNumeric::numeric for impl<T: Numeric> &Probe<T>;
    /// `float()` when the type is `Float`.
    ProbeFloat::float for impl<T: Float> &Probe<T>;
    /// `integer()` when the type is `Integer`.
    ProbeInteger::integer for impl<T: Integer> &Probe<T>;
    /// `optional()` when the type is an `Option`.
    ProbeOptional::optional for impl<T> &Probe<Option<T>>;
    /// `boolean()` when the type is `bool`.
    ProbeBool::boolean for impl<> &Probe<bool>;
}

/// Whether `check`'s verdict passes (the closure is never called: its type is the verdict).
pub const fn passes<V: Verdict>(_check: fn() -> V) -> bool {
    V::PASS
}

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
pub type ModelProbe<T> = Probe<T>;

/// `unversioned()` of a `#[versioned]` model: fails.
pub trait ProbeVersioned {
    /// Fails.
    fn unversioned(&self) -> Fail {
        Fail
    }
}
impl<T: crate::versioning::Versioned> ProbeVersioned for &Probe<T> {}

/// `unversioned()` of any other type (a model without `#[versioned]`, or a type that is no model
/// at all, which its own error reports): passes.
pub trait ProbeUnversioned {
    /// Passes.
    fn unversioned(&self) -> Pass {
        Pass
    }
}
impl<T> ProbeUnversioned for Probe<T> {}
