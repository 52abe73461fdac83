//! Reading `#[outlier(..)]` through `options.rs`: every mistake into `Errors`, at its token.

use syn::ext::IdentExt;
use syn::{Ident, LitInt, LitStr, Token};

use crate::ast::{Field, Model};
use crate::attr::Attr;
use crate::errors::Errors;

use super::*;

const OPTIONS: &[&str] = &[
    "limit",
    "overflow",
    "capacity",
    "flag",
    "count",
    "parent",
    "max_bytes",
];

const HELP: &str = "`#[outlier(limit = 50, overflow = \"user_posts\", flag = is_outlier, count = \
                    posts_count)]`: 50 items in the document, the rest in `user_posts`, the \
                    model's `is_outlier: bool` set once it overflows and `posts_count` counting \
                    every item";

/// The default number of items per overflow document.
const DEFAULT_CAPACITY: u32 = 1000;

/// The default byte budget of a document holding items: half of MongoDB's 16 MiB.
const DEFAULT_MAX_BYTES: u32 = 8 * 1024 * 1024;

/// The smallest byte budget accepted (a budget below it would overflow on every push).
const MIN_MAX_BYTES: u32 = 1024;

/// The largest: MongoDB's limit less room for the document's other fields.
const MAX_MAX_BYTES: u32 = 15 * 1024 * 1024;

/// `User` -> `userId`.
fn default_parent(model: &Ident) -> String {
    let name = model.to_string();
    let mut chars = name.chars();
    match chars.next() {
        Some(first) => format!("{}{}Id", first.to_lowercase(), chars.as_str()),
        None => "parentId".to_owned(),
    }
}

pub(super) fn parse_field(
    field: &Field<'_>,
    model: &Model<'_>,
    errors: &mut Errors,
) -> Option<OutlierField> {
    let mut attrs = field.attrs_of(Attr::Outlier);
    let attr = attrs.next()?;
    for extra in attrs {
        errors.spanned(extra, "one `#[outlier]` per field");
    }
    let Some(elem) = crate::types::vec_element(field.ty) else {
        errors.spanned(
            field.ty,
            "`#[outlier]` goes on a `Vec<T>` field: the items kept in the document, the rest \
             overflowing into other documents",
        );
        return None;
    };
    // Refused beside `#[subset]` or a two-way relation (`combinations.rs`).
    if crate::combinations::field_refuses(field, Attr::Outlier) {
        return None;
    }
    let list = crate::ast::stored_field_list(
        field,
        attr,
        "outlier",
        "an `#[outlier]` array",
        HELP,
        errors,
    )?;
    let mut limit: Option<u32> = None;
    let mut capacity: Option<u32> = None;
    let mut max_bytes: Option<u32> = None;
    let mut overflow: Option<String> = None;
    let mut parent: Option<String> = None;
    let mut flag: Option<Ident> = None;
    let mut count: Option<Ident> = None;
    let before = errors.count();
    let clean = crate::options::parse(
        list.tokens.clone(),
        "outlier",
        OPTIONS,
        errors,
        |key, input, local| {
            let name = key.to_string();
            input.parse::<Token![=]>()?;
            match name.as_str() {
                "max_bytes" => {
                    let lit: LitInt = input.parse()?;
                    match lit.base10_parse::<u32>() {
                        Ok(n) if (MIN_MAX_BYTES..=MAX_MAX_BYTES).contains(&n) => {
                            max_bytes = Some(n)
                        }
                        _ => local.spanned(
                            &lit,
                            format!(
                                "`max_bytes` is the byte budget of a document holding items (the \
                                 main document's and each overflow document's): between \
                                 {MIN_MAX_BYTES} and {MAX_MAX_BYTES} (15 MiB, leaving room \
                                 below MongoDB's 16 MiB); by default {DEFAULT_MAX_BYTES} (8 MiB)"
                            ),
                        ),
                    }
                }
                "limit" | "capacity" => {
                    let lit: LitInt = input.parse()?;
                    match lit.base10_parse::<u32>() {
                        Ok(n) if n > 0 => {
                            if name == "limit" {
                                limit = Some(n);
                            } else {
                                capacity = Some(n);
                            }
                        }
                        _ => local.spanned(
                            &lit,
                            if name == "limit" {
                                "`limit` is how many items the document keeps: a whole number \
                                 above 0"
                            } else {
                                "`capacity` is how many items one overflow document holds: a \
                                 whole number above 0"
                            },
                        ),
                    }
                }
                "overflow" | "parent" => {
                    let lit: LitStr = input.parse()?;
                    let value = lit.value();
                    if name == "overflow" {
                        match crate::ast::collection_name_problem(&value) {
                            Some(problem) => local.spanned(&lit, problem),
                            None if value == model.collection => local.spanned(
                                &lit,
                                format!(
                                    "the overflow documents need a collection of their own: \
                                     `{value}` is `{name}`'s own collection, where the unique \
                                     index on the overflow documents' parent and number would \
                                     let only one `{name}` in; name another collection \
                                     (`overflow = \"{value}_overflow\"`)",
                                    name = model.ident
                                ),
                            ),
                            None => overflow = Some(value),
                        }
                    } else if value.is_empty() || value.starts_with('$') || value.contains('.') {
                        local.spanned(
                            &lit,
                            "`parent` is a field name of the overflow documents: not empty, no \
                             `$` at the start, no `.`",
                        );
                    } else {
                        parent = Some(value);
                    }
                }
                _ => {
                    let ident = Ident::parse_any(input)?;
                    if name == "flag" {
                        flag = Some(ident);
                    } else {
                        count = Some(ident);
                    }
                }
            }
            Ok(())
        },
    );
    if !clean {
        return None;
    }
    let had_errors = errors.count() > before;
    let mut missing = |what: &str, example: &str| {
        errors.spanned(
            attr.path(),
            format!("`#[outlier]` needs `{what}`: `{example}`; {HELP}"),
        );
    };
    if limit.is_none() && !had_errors {
        missing("limit", "limit = 50");
    }
    if overflow.is_none() && !had_errors {
        missing("overflow", "overflow = \"user_posts\"");
    }
    if flag.is_none() {
        missing("flag", "flag = is_outlier");
    }
    if count.is_none() {
        missing("count", "count = posts_count");
    }
    super::validate::check(field, model, [&flag, &count], errors)?;
    Some(OutlierField {
        ident: field.ident.clone(),
        bson_name: field.bson_name.clone(),
        elem,
        limit: limit?,
        capacity: capacity.unwrap_or(DEFAULT_CAPACITY),
        max_bytes: max_bytes.unwrap_or(DEFAULT_MAX_BYTES),
        overflow: overflow?,
        parent: parent.unwrap_or_else(|| default_parent(model.ident)),
        flag: flag?,
        count: count?,
    })
}
