//! Reading `#[preallocated(..)]` through `options.rs`.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::{Ident, LitInt, Token};

use crate::ast::Model;
use crate::errors::Errors;

use super::validate::named;
use super::*;

const OPTIONS: &[&str] = &["resource", "slot", "holder", "bitmap", "sub_slots"];

pub(super) fn parse(attr: &syn::Attribute, model: &Model<'_>, errors: &mut Errors) -> Option<Grid> {
    let syn::Meta::List(list) = &attr.meta else {
        errors.spanned(attr, HELP);
        return None;
    };
    let mut fields: Vec<(Ident, Ident)> = Vec::new();
    let mut sub_slots: Option<(u32, Span)> = None;
    let before = errors.count();
    let clean = crate::options::parse(
        list.tokens.clone(),
        "preallocated",
        OPTIONS,
        errors,
        |key, input, errors| {
            input.parse::<Token![=]>()?;
            if key == "sub_slots" {
                let lit: LitInt = input.parse()?;
                match lit.base10_parse::<u32>() {
                    Ok(n) if n > 0 => sub_slots = Some((n, lit.span())),
                    _ => errors.spanned(
                        &lit,
                        "`sub_slots` is how many sub-slots the bitmap has: a whole number above 0",
                    ),
                }
            } else {
                fields.push((key.clone(), Ident::parse_any(input)?));
            }
            Ok(())
        },
    );
    if !clean {
        return None;
    }
    let had_errors = errors.count() > before;
    let value = |key: &str| fields.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    let mut missing = false;
    for required in ["resource", "slot"] {
        if value(required).is_none() {
            errors.spanned(
                attr.path(),
                format!("`#[preallocated]` needs `{required} = ..`; {HELP}"),
            );
            missing = true;
        }
    }
    match (value("holder"), value("bitmap")) {
        (None, None) => {
            errors.spanned(
                attr.path(),
                format!("`#[preallocated]` needs `holder = ..` or `bitmap = ..`; {HELP}"),
            );
            missing = true;
        }
        (Some(_), Some(b)) => {
            errors.spanned(
                b,
                "a slot is booked whole (`holder`) or by sub-slots (`bitmap`), not both: a \
                 booking of the whole slot would not see the sub-slots booked, nor the reverse. \
                 Keep one, or model the two grains as two slot models",
            );
            missing = true;
        }
        _ => {}
    }
    match (value("bitmap"), sub_slots) {
        (Some(b), None) if !had_errors => {
            errors.spanned(
                b,
                "a bitmap needs `sub_slots = ..`: how many sub-slots it has (`sub_slots = 48` \
                 for half hours)",
            );
            missing = true;
        }
        (None, Some((_, span))) => {
            errors.at(
                span,
                "`sub_slots` counts the bits of a bitmap: add `bitmap = ..`",
            );
            missing = true;
        }
        _ => {}
    }
    let resource = value("resource").and_then(|i| named(model, i, "the resource field", errors));
    let slot = value("slot").and_then(|i| named(model, i, "the slot field", errors));
    let holder = value("holder").map(|i| named(model, i, "the holder field", errors));
    let bitmap = value("bitmap").map(|i| named(model, i, "the bitmap field", errors));
    if missing || had_errors {
        return None;
    }
    let holder = match holder {
        Some(None) => return None,
        Some(Some(h)) => Some(h),
        None => None,
    };
    let bitmap = match (bitmap, sub_slots) {
        (Some(None), _) => return None,
        (Some(Some(b)), Some((n, span))) => Some((b, n, span)),
        _ => None,
    };
    let (resource, slot) = (resource?, slot?);
    let names: Vec<&Named> = [
        Some(&resource),
        Some(&slot),
        holder.as_ref(),
        bitmap.as_ref().map(|b| &b.0),
    ]
    .into_iter()
    .flatten()
    .collect();
    for (i, a) in names.iter().enumerate() {
        if names[..i].iter().any(|b| b.bson_name == a.bson_name) {
            errors.spanned(
                &a.ident,
                "the resource, the slot, the holder and the bitmap are different fields",
            );
            return None;
        }
    }
    Some(Grid {
        resource,
        slot,
        holder,
        bitmap,
    })
}
