//! Checking the attribute against the model: on the struct, not a field, and naming stored
//! fields of it.

use syn::{DeriveInput, Ident};

use crate::ast::Model;
use crate::attr::Attr;
use crate::errors::Errors;

use super::*;

pub(super) fn refuse_on_fields(input: &DeriveInput, errors: &mut Errors) {
    let syn::Data::Struct(s) = &input.data else {
        return;
    };
    for attr in s.fields.iter().flat_map(|f| &f.attrs) {
        if Attr::Preallocated.is(attr) {
            errors.spanned(
                attr,
                format!("`#[preallocated(..)]` goes on the struct, naming its fields: {HELP}"),
            );
        }
    }
}

pub(super) fn named(
    model: &Model<'_>,
    ident: &Ident,
    what: &str,
    errors: &mut Errors,
) -> Option<Named> {
    let field = crate::ast::stored_field(model, ident, what, errors)?;
    Some(Named {
        ident: Ident::new(&crate::ast::unraw(ident), ident.span()),
        bson_name: field.bson_name.clone(),
        stored_ty: (!field.custom_serializer).then(|| field.ty.clone()),
    })
}
