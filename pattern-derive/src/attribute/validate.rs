//! Checking the `#[attribute]` field against the model: it is a `Vec` of items.

use crate::ast::Field;

/// What an `#[attribute]` field that is not a `Vec` should be, in the user's names: its item
/// type when the field's type shows it (`specs: Spec`, `specs: Option<Vec<Spec>>`, `[Spec; 4]`),
/// a placeholder otherwise.
pub(super) fn not_a_vec(field: &Field<'_>) -> String {
    let name = &field.rust_name;
    let in_option = crate::types::option_inner(field.ty).and_then(crate::types::vec_element);
    let item = match (&in_option, field.ty) {
        (Some(elem), _) => Some(elem.clone()),
        (None, syn::Type::Array(a)) => Some((*a.elem).clone()),
        (None, syn::Type::Slice(s)) => Some((*s.elem).clone()),
        (None, syn::Type::Path(p))
            if p.qself.is_none()
                && p.path.segments.iter().all(|s| s.arguments.is_none())
                && !crate::types::is_plain_scalar(field.ty) =>
        {
            Some(field.ty.clone())
        }
        _ => None,
    };
    let item = item.map(|t| crate::errors::type_string(&t));
    let what = match &item {
        Some(item) => {
            format!("`{name}: Vec<{item}>`, with `#[attribute(key = .., value = ..)]` on `{item}`")
        }
        None => format!(
            "`{name}: Vec<Item>`, `Item` being a `#[derive(Fields)]` struct with \
             `#[attribute(key = .., value = ..)]`"
        ),
    };
    let option = if in_option.is_some() {
        ", not in an `Option` (no items is an empty `Vec`)"
    } else {
        ""
    };
    format!("an `#[attribute]` field holds the items in a `Vec`{option}: {what}")
}
