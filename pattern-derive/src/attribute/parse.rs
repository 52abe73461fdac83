//! Reading `#[attribute(..)]` on a `Vec` field and on an item struct through `options.rs`.

use crate::ast::{self, Field, Model};
use crate::attr::Attr;
use crate::errors::Errors;

use super::validate::not_a_vec;
use super::*;

/// Every `#[attribute]` field of a model.
pub(super) fn collect(model: &Model<'_>, errors: &mut Errors) -> Vec<AttributeField> {
    let mut out: Vec<AttributeField> = Vec::new();
    for field in &model.fields {
        for attr in field.attrs_of(Attr::Attribute) {
            if let Some(a) = parse_field(attr, field, errors) {
                if let Some(n) = &a.name {
                    if out
                        .iter()
                        .any(|o| o.name.as_ref().is_some_and(|m| m.value() == n.value()))
                    {
                        errors.spanned(
                            n,
                            format!(
                                "two attribute fields of this model name their index `{}`: give \
                                 one of them another `name = \"...\"`",
                                n.value()
                            ),
                        );
                        continue;
                    }
                }
                out.push(a);
            }
        }
    }
    out
}

const FIELD_HELP: &str =
    "`#[attribute]` on a `Vec` of items, or `#[attribute(name = \"index_name\")]`";

fn parse_field(
    attr: &syn::Attribute,
    field: &Field<'_>,
    errors: &mut Errors,
) -> Option<AttributeField> {
    let Some(elem) = crate::types::vec_element(field.ty) else {
        errors.spanned(field.ty, not_a_vec(field));
        return None;
    };
    if !field.serialized {
        errors.spanned(
            field.ident,
            "an `#[attribute]` field must be serialized (no `#[serde(skip)]`)",
        );
        return None;
    }
    let mut name = None;
    if let syn::Meta::List(_) = &attr.meta {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("name") {
                name = Some(ast::lit_str(meta.value()?, "`name`")?);
                Ok(())
            } else if ["key", "value", "qualifiers"]
                .iter()
                .any(|k| meta.path.is_ident(k))
            {
                Err(meta.error(
                    "the key, value and qualifiers are declared on the item struct: \
                     `#[attribute(key = name, value = value)]` beside its `#[derive(Fields)]`",
                ))
            } else {
                Err(meta.error(format!("unknown attribute option; {FIELD_HELP}")))
            }
        });
        if let Err(e) = result {
            errors.push(e);
            return None;
        }
    } else if !matches!(attr.meta, syn::Meta::Path(_)) {
        errors.spanned(attr, FIELD_HELP);
        return None;
    }
    Some(AttributeField {
        bson_name: field.bson_name.clone(),
        ident: field.ident.clone(),
        elem,
        name,
    })
}

/// `#[attribute(key = .., value = .., qualifiers(..))]` on a `#[derive(Fields)]` struct: the
/// `AttributeItem` impl.
/// The options of `#[attribute(..)]` on an item struct.
pub(super) const ITEM_OPTIONS: &[&str] = &["key", "value", "qualifiers"];
