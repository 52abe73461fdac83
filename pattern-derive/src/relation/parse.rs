//! Reading `#[relation(..)]` through `options.rs`, with the checks of the field it is on.

use proc_macro2::Span;
use syn::{Ident, LitInt};

use crate::ast::{self, Field, Model};
use crate::attr::Attr;
use crate::errors::{did_you_mean, Errors};

use super::validate::{target_name, written_many};
use super::*;

const HELP: &str = "`#[relation]`, `#[relation(parent)]`, `#[relation(parent, sort(time = -1))]` \
                    or `#[relation(inverse = other_side_field)]`";

pub(super) fn parse_field(
    field: &Field<'_>,
    model: &Model<'_>,
    errors: &mut Errors,
) -> Option<RelationField> {
    let attr = field.attrs_of(Attr::Relation).next()?;
    if let Some(second) = field.attrs_of(Attr::Relation).nth(1) {
        errors.spanned(
            second,
            "one `#[relation(...)]` per field: put every option in one attribute",
        );
    }
    if !field.serialized {
        errors.spanned(
            field.ident,
            "a `#[relation]` field must be stored (no `#[serde(skip)]`)",
        );
        return None;
    }
    let mut parent: Option<Span> = None;
    let mut sort: Vec<(String, i32)> = Vec::new();
    let mut sort_span: Option<Span> = None;
    let mut inverse: Option<Ident> = None;
    if let syn::Meta::List(_) = &attr.meta {
        // On a mistake the field is still listed with what was read (for the two-way checks of
        // the models naming it, which would otherwise report it missing); the model's errors
        // stop the rest of its generated code.
        let options = ["parent", "sort", "inverse"];
        let mut keys = crate::options::Keys::new("relation", &options).with_help(HELP);
        keys.nested(attr, errors, |key, meta, _| {
            if key == "parent" {
                parent = Some(meta.path.segments[0].ident.span());
            } else if key == "inverse" {
                inverse = Some(meta.value()?.parse()?);
            } else {
                sort_span = Some(meta.path.segments[0].ident.span());
                meta.parse_nested_meta(|key| {
                    let Some(name) = key.path.get_ident() else {
                        return Err(key.error("a sort key is a field of this model"));
                    };
                    let dir: LitInt = key.value()?.parse()?;
                    let dir: i32 = match dir.base10_parse::<i32>() {
                        Ok(d @ (1 | -1)) => d,
                        _ => {
                            return Err(syn::Error::new(
                                dir.span(),
                                "a sort direction is 1 (ascending) or -1 (descending)",
                            ))
                        }
                    };
                    let rust = ast::unraw(name);
                    match model.field(&rust) {
                        Some(f) if f.serialized => sort.push((f.bson_name.clone(), dir)),
                        _ => {
                            let names = model.fields.iter().map(|f| f.rust_name.as_str());
                            return Err(syn::Error::new(
                                name.span(),
                                format!(
                                    "`{rust}` is not a stored field of `{}`{}: the children are \
                                     sorted by their own fields",
                                    model.ident,
                                    did_you_mean(&rust, names)
                                ),
                            ));
                        }
                    }
                    Ok(())
                })?;
            }
            Ok(())
        });
    } else if !matches!(attr.meta, syn::Meta::Path(_)) {
        errors.spanned(
            attr,
            format!("`#[relation]` takes its options in parentheses: write {HELP}"),
        );
    }
    let many = written_many(field.ty);
    if let Some(span) = parent {
        if many {
            let target = target_name(field.ty);
            errors.at(
                span,
                format!(
                    "a parent reference is a single reference in the child (`{}: Ref<{target}>` \
                     or `Option<Ref<{target}>>`), not an array: for an array of children's ids \
                     in the parent, drop `parent` (`#[relation]`)",
                    field.rust_name
                ),
            );
            parent = None;
        } else if inverse.is_some() {
            errors.at(
                span,
                "`parent` and `inverse` do not go together: the single side of a two-way \
                 relation is already indexed and queried like a parent reference; drop `parent`",
            );
            parent = None;
        }
    } else if let Some(span) = sort_span {
        errors.at(
            span,
            "`sort(..)` orders a parent's children: it goes with `parent` \
             (`#[relation(parent, sort(time = -1))]`)",
        );
    }
    if parent.is_none() {
        sort.clear();
    }
    if let (Some(inv), true) = (&inverse, field.has(Attr::ExtendedRef)) {
        errors.spanned(
            inv,
            format!(
                "a two-way relation's side holds bare `_id`s, which `assign` and `repair` write; \
                 an extended-reference copy here would be overwritten by them: keep the relation \
                 on a field of its own holding the other model's `_id` (`Ref<..>`, with \
                 `#[relation(inverse = {inv})]`) and the copy beside it \
                 (`#[extended_ref(propagate)]`)"
            ),
        );
    }
    Some(RelationField {
        ident: field.ident.clone(),
        rust_name: field.rust_name.clone(),
        bson_name: field.bson_name.clone(),
        ty: field.ty.clone(),
        many,
        parent: parent.is_some(),
        sort,
        inverse,
    })
}
