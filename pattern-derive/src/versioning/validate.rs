//! Checking what was read against the model: the history collection differs from the model's
//! and is usable, and exactly one field, an integer, is marked `#[version]`.

use syn::LitStr;

use crate::ast::{Field, Model};
use crate::errors::Errors;

/// The `#[version]` field among `marked`, or `None` (reported).
pub(super) fn check<'f, 'a>(
    attr: &syn::Attribute,
    history: &LitStr,
    marked: &[&'f Field<'a>],
    model: &Model<'_>,
    errors: &mut Errors,
) -> Option<&'f Field<'a>> {
    if history.value() == model.collection {
        errors.spanned(
            history,
            "the history collection must differ from the model's own collection: revisions and \
             current documents would mix",
        );
    } else if history.value().is_empty()
        || history.value().contains('$')
        || history.value().starts_with("system.")
    {
        errors.spanned(history, "not a usable collection name");
    }
    let field = match marked {
        [] => {
            errors.spanned(
                attr,
                "a versioned model needs one integer field marked `#[version]` (e.g. \
                 `#[version] version: i64`)",
            );
            return None;
        }
        [one] => one,
        [_, second, ..] => {
            errors.spanned(second.ident, "only one field can be the `#[version]`");
            return None;
        }
    };
    let integer = matches!(
        &field.ty,
        syn::Type::Path(p) if p.qself.is_none()
            && p.path.segments.last().is_some_and(|s| {
                s.arguments.is_empty() && ["i64", "i32", "u32"].iter().any(|t| s.ident == t)
            })
    );
    if !integer {
        errors.spanned(
            field.ty,
            format!(
                "`{}` cannot be a version: use i64, i32 or u32",
                crate::errors::type_string(field.ty)
            ),
        );
        return None;
    }
    Some(field)
}
