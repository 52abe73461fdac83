//! Reading `#[computed(sum = Order.amount, by = user_id)]` through `options.rs`.

use proc_macro2::{Span, TokenTree};
use quote::quote;
use syn::ext::IdentExt;
use syn::{Ident, Token};

use crate::ast::{Field, Model};
use crate::attr::Attr;
use crate::errors::Errors;

use super::*;

/// The options: a computation (one of the first four) and `by`.
const OPTIONS: &[&str] = &["count", "sum", "min", "max", "by"];

const HELP: &str = "`#[computed(sum = Order.amount, by = user_id)]`, `#[computed(count = Order, \
                    by = user_id)]`, `min = ..` or `max = ..`: `Order` is the model whose \
                    documents are summarised, `user_id` its field holding this document's `_id`";

pub(super) fn parse_field(
    model: &Model<'_>,
    field: &Field<'_>,
    errors: &mut Errors,
) -> Option<FromField> {
    let attrs: Vec<&syn::Attribute> = field.attrs_of(Attr::Computed).collect();
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
    if !crate::options::has_key(attr, "by") {
        without_by(model, attr, list, errors);
        return None;
    }
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

/// A `#[computed]` without `by`: a subset's summary under the name it had before `#[summary]`
/// (what it reads is a field of this struct: a `#[subset]`, or a name in lowercase, where a
/// model's is a type's), or a value from another model whose `by` is missing. One error, at the
/// attribute's name for the first (the fix is another name), at the attribute for the second.
fn without_by(model: &Model<'_>, attr: &syn::Attribute, list: &syn::MetaList, errors: &mut Errors) {
    let mut tokens = list.tokens.clone().into_iter();
    let source = match (tokens.next(), tokens.next(), tokens.next()) {
        (Some(TokenTree::Ident(_)), Some(TokenTree::Punct(eq)), Some(TokenTree::Ident(source)))
            if eq.as_char() == '=' =>
        {
            Some(source)
        }
        _ => None,
    };
    let of_this_struct = source.is_some_and(|source| {
        let name = crate::ast::unraw(&source);
        let subset = model
            .fields
            .iter()
            .any(|f| f.has(Attr::Subset) && crate::ast::unraw(f.ident) == name);
        subset || name.starts_with(|c: char| c.is_lowercase() || c == '_')
    });
    if of_this_struct {
        let name = attr
            .path()
            .get_ident()
            .map_or_else(Span::call_site, Ident::span);
        errors.at(
            name,
            format!(
                "`#[computed]` computes a value from another model's documents, named with \
                 `by = ..`; a count, sum or average of a `#[subset]` field of this struct is a \
                 `#[summary]`: write `#[summary({})]`",
                crate::errors::options_string(&list.tokens)
            ),
        );
    } else {
        errors.spanned(
            attr,
            format!(
                "`#[computed]` needs `by = ..`, the source's field holding this document's \
                 `_id`: {HELP}"
            ),
        );
    }
}
