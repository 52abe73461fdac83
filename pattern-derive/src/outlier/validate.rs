//! Checking what was read against the model: `flag` and `count` are its fields, and no field
//! takes the name of the array's receipts.

use syn::Ident;

use crate::ast::{Field, Model};
use crate::errors::Errors;

use super::receipts_name;

/// `None` (reported) when `named` (`flag` and `count`, as read) are not fields of the model or a
/// field takes the name of `field`'s receipts.
pub(super) fn check(
    field: &Field<'_>,
    model: &Model<'_>,
    named: [&Option<Ident>; 2],
    errors: &mut Errors,
) -> Option<()> {
    // `flag` and `count` name fields of this model.
    for ident in named.into_iter().flatten() {
        let name = crate::ast::unraw(ident);
        if model.field(&name).is_none() {
            errors.spanned(ident, model.unknown_field_message(&name, "outlier field"));
            return None;
        }
    }
    let receipts = receipts_name(&field.bson_name);
    if let Some(taken) = model.fields.iter().find(|f| f.bson_name == receipts) {
        errors.spanned(
            taken.ident,
            format!(
                "`{receipts}` is the field in which the outlier array `{}` keeps the receipts \
                 of its last pushes: rename this field",
                field.bson_name
            ),
        );
        return None;
    }
    Some(())
}
