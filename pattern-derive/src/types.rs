//! What the derives read from a field's type by its syntax: the `T` of an `Option<T>` or a
//! `Vec<T>`, and whether it is a scalar (which spares the generated code its probes).

/// `T` when `ty` is `wrapper<T>` (by its last path segment).
pub(crate) fn wrapped<'t>(ty: &'t syn::Type, wrapper: &str) -> Option<&'t syn::Type> {
    let syn::Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != wrapper {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first() {
        Some(syn::GenericArgument::Type(t)) if args.args.len() == 1 => Some(t),
        _ => None,
    }
}

/// Whether `ty` names a scalar that holds no other type: a primitive, `String`, or BSON's
/// `ObjectId`, `DateTime`, `Decimal128` (alone or by a `bson::` path). Like [`wrapped`], by
/// name: a user type that shadows one of these names is taken for it. The generated code
/// skips the compile-time probes of such a field (an extended reference cannot be inside), the
/// largest part of a model's type-checking.
pub(crate) fn is_plain_scalar(ty: &syn::Type) -> bool {
    const SCALARS: &[&str] = &[
        "bool", "char", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64",
        "u128", "usize", "f32", "f64", "String",
    ];
    const BSON: &[&str] = &["ObjectId", "DateTime", "Decimal128"];
    let syn::Type::Path(p) = ty else { return false };
    if p.qself.is_some() || p.path.segments.iter().any(|s| !s.arguments.is_none()) {
        return false;
    }
    let names: Vec<String> = p
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    match names.as_slice() {
        [one] => SCALARS.contains(&one.as_str()) || BSON.contains(&one.as_str()),
        [first, .., last] if first == "bson" || first == "mongodb" => BSON.contains(&last.as_str()),
        [std, string, last] => std == "std" && string == "string" && last == "String",
        _ => false,
    }
}

/// Whether `ty` is a primitive, `String` or a `bson::` scalar by its path: a type the runtime
/// gives a `BsonShape`, that no user type can pass for (a bare `DateTime` may be the user's).
pub(crate) fn is_shaped_scalar(ty: &syn::Type) -> bool {
    let syn::Type::Path(p) = ty else { return false };
    let single = p.path.segments.len() == 1;
    let last = p.path.segments.last().map(|s| s.ident.to_string());
    is_plain_scalar(ty)
        && !matches!(last.as_deref(), Some("i128" | "isize" | "u128" | "usize"))
        && !(single
            && matches!(
                last.as_deref(),
                Some("ObjectId" | "DateTime" | "Decimal128")
            ))
}

/// [`is_plain_scalar`] of `ty` inside its `Option`, `Vec` and `Box` wrappers.
pub(crate) fn holds_only_scalars(mut ty: &syn::Type) -> bool {
    while let Some(inner) = ["Option", "Vec", "Box"].iter().find_map(|w| wrapped(ty, w)) {
        ty = inner;
    }
    is_plain_scalar(ty)
}

/// The `T` of an `Option<T>` (by its last path segment).
pub(crate) fn option_inner(ty: &syn::Type) -> Option<&syn::Type> {
    wrapped(ty, "Option")
}

/// `T` of a field typed `Vec<T>` (by its last path segment).
pub(crate) fn vec_element(ty: &syn::Type) -> Option<syn::Type> {
    wrapped(ty, "Vec").cloned()
}
