//! Reading `#[computed(sum = Order.amount, by = user_id)]` through `options.rs`.

use proc_macro2::TokenTree;
use quote::quote;
use syn::ext::IdentExt;
use syn::{Ident, Token};

use crate::ast::Field;
use crate::attr::Attr;
use crate::errors::Errors;

use super::*;

/// The options: a computation (one of the first four) and `by`.
const OPTIONS: &[&str] = &["count", "sum", "min", "max", "by"];

const HELP: &str = "`#[computed(sum = Order.amount, by = user_id)]`, `#[computed(count = Order, \
                    by = user_id)]`, `min = ..` or `max = ..`: `Order` is the model whose \
                    documents are summarised, `user_id` its field holding this document's `_id`";

pub(super) fn parse_field(field: &Field<'_>, errors: &mut Errors) -> Option<FromField> {
    let attrs: Vec<&syn::Attribute> = field
        .attrs
        .iter()
        .filter(|a| Attr::Computed.is(a) && crate::ast::computed_from_another_model(a))
        .collect();
    let attr = *attrs.first()?;
    for extra in &attrs[1..] {
        errors.spanned(
            extra,
            "one `#[computed]` per field: a field keeps one value; declare another field for the \
             other computation",
        );
    }
    // Refused beside `#[subset]` or `#[approximate]` (`combinations.rs`).
    if crate::combinations::field_refuses(field, Attr::Computed) {
        return None;
    }
    let list =
        crate::ast::stored_field_list(field, attr, "computed", "a computed field", HELP, errors)?;
    // An average has an answer of its own, not "unknown option".
    let mut tokens = list.tokens.clone().into_iter().peekable();
    while let Some(t) = tokens.next() {
        let next_is_eq = matches!(tokens.peek(), Some(TokenTree::Punct(p)) if p.as_char() == '=');
        if let TokenTree::Ident(i) = &t {
            if i == "avg" && next_is_eq {
                errors.at(
                    i.span(),
                    "an average across collections is not kept: declare a `sum` and a `count` \
                     field and divide them when reading (both stay exact)",
                );
                return None;
            }
        }
    }
    // The computation and `by`, read by the options reader: an unknown or repeated key is an
    // error at the key, and the rest is still read.
    let mut kind: Option<(Ident, syn::Path, Option<Ident>)> = None;
    let mut by: Option<Ident> = None;
    let clean = crate::options::parse(
        list.tokens.clone(),
        "computed",
        OPTIONS,
        errors,
        |key, input, _| {
            input.parse::<Token![=]>()?;
            if key == "by" {
                by = Some(Ident::parse_any(input)?);
                return Ok(());
            }
            let path = input.call(syn::Path::parse_mod_style)?;
            let item = if input.peek(Token![.]) {
                input.parse::<Token![.]>()?;
                Some(Ident::parse_any(input)?)
            } else {
                None
            };
            if kind.is_some() {
                return Err(syn::Error::new(
                    key.span(),
                    "one computation per field: `#[computed(sum = Order.amount, by = user_id)]`; \
                     declare another field for the other computation",
                ));
            }
            kind = Some((key.clone(), path, item));
            Ok(())
        },
    );
    if !clean {
        return None;
    }
    let Some((kind_ident, source, source_field)) = kind else {
        errors.spanned(attr, format!("say what is computed: {HELP}"));
        return None;
    };
    let by = by?;
    let kind = match kind_ident.to_string().as_str() {
        "count" => Kind::Count,
        "sum" => Kind::Sum,
        "min" => Kind::Min,
        "max" => Kind::Max,
        // The options reader let only these through.
        _ => return None,
    };
    let source_name = quote!(#source).to_string().replace(' ', "");
    match (kind, &source_field) {
        (Kind::Count, Some(item)) => {
            errors.spanned(
                item,
                format!("`count` counts documents: write `count = {source_name}`, no field"),
            );
            return None;
        }
        (Kind::Sum | Kind::Min | Kind::Max, None) => {
            errors.spanned(
                &source,
                format!(
                    "`{kind_ident}` needs a field of the source: `{kind_ident} = \
                     {source_name}.amount`"
                ),
            );
            return None;
        }
        _ => {}
    }
    Some(FromField {
        ident: field.ident.clone(),
        kind,
        source,
        source_field,
        by,
    })
}
