//! [`IntoValue`]: what a typed filter or update takes as a field's value.

#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a value of the field's type `{T}`",
    label = "expected a `{T}` here",
    note = "a typed filter or update takes the field's own type `{T}`, or a type that converts \
            to it without loss (see `IntoValue`): convert the value first, or write this \
            condition as a `doc!`"
)]
/// What a typed [`Filter`](super::Filter) or [`Update`](super::Update) takes as a value of a
/// field of type `T`: a `T`, or a value that converts to one without loss. Unlike `Into<T>`,
/// a value of another type is a compile error that names the field's type, at the value.
///
/// | the field's type | also accepted |
/// |---|---|
/// | any `T` | |
/// | `Option<T>` | `T` |
/// | `String` | `&str`, `&String` |
/// | `Vec<T>` | `[T; N]`, `&[T]` (cloned) |
/// | `i64` | `i32`, `i16`, `i8`, `u32`, `u16`, `u8` |
/// | `i32` | `i16`, `i8`, `u16`, `u8` |
/// | `f64` | `f32`, `i32`, `i16`, `i8`, `u32`, `u16`, `u8` |
///
/// Other types (`u32`, `u64`, a type of your own) take only `T`: an integer literal then takes
/// the field's type, as it would with no conversion at all. A value is serialized as the field
/// is stored, and sent as a literal: it can never become an operator.
pub trait IntoValue<T> {
    /// The value.
    fn into_value(self) -> T;
}

impl<T> IntoValue<T> for T {
    fn into_value(self) -> T {
        self
    }
}

impl<T> IntoValue<Option<T>> for T {
    fn into_value(self) -> Option<T> {
        Some(self)
    }
}

impl IntoValue<String> for &str {
    fn into_value(self) -> String {
        self.to_owned()
    }
}

impl IntoValue<String> for &String {
    fn into_value(self) -> String {
        self.clone()
    }
}

impl<T, const N: usize> IntoValue<Vec<T>> for [T; N] {
    fn into_value(self) -> Vec<T> {
        Vec::from(self)
    }
}

impl<T: Clone> IntoValue<Vec<T>> for &[T] {
    fn into_value(self) -> Vec<T> {
        self.to_vec()
    }
}

/// Lossless conversions, as `From` has them.
macro_rules! widening {
    ($to:ty: $($from:ty),*) => {$(
        impl IntoValue<$to> for $from {
            fn into_value(self) -> $to {
                <$to>::from(self)
            }
        }
    )*};
}
widening!(i64: i32, i16, i8, u32, u16, u8);
widening!(i32: i16, i8, u16, u8);
widening!(f64: f32, i32, i16, i8, u32, u16, u8);
