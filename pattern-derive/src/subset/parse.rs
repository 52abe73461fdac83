//! Reading `#[subset(..)]` and its `#[summary(..)]` fields, with the checks that need no other type.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Ident, LitInt, Token};

use super::*;
use crate::ast::{Field, Model};
use crate::attr::Attr;
use crate::errors::{did_you_mean, Errors};

const SUBSET_OPTIONS: &[&str] = &["limit", "sort", "full", "parent"];
const LIMIT_ABOVE_ZERO: &str = "`limit` is how many items the parent keeps: a whole number above 0";
const SUMMARY_KINDS: &[&str] = &["count", "sum", "avg"];

/// Every subset of the model, with its summary fields.
pub(super) fn collect(model: &Model<'_>, errors: &mut Errors) -> Vec<SubsetField> {
    let mut subsets = Vec::new();
    for field in &model.fields {
        for attr in field.attrs_of(Attr::Subset) {
            if let Some(s) = parse_subset(attr, field, errors) {
                subsets.push(s);
            }
        }
    }
    // A `#[subset]` field that is also a `#[summary]` is refused (`combinations.rs`), and so
    // is a `#[summary]` that is also `#[computed]`.
    let summaries = model
        .fields
        .iter()
        .filter(|f| !crate::combinations::field_refuses(f, Attr::Summary));
    for field in summaries {
        for attr in field.attrs_of(Attr::Summary) {
            parse_summary(attr, field, &mut subsets, errors);
        }
    }
    for s in &subsets {
        check_averages(s, errors);
    }
    subsets
}

fn parse_subset(
    attr: &syn::Attribute,
    field: &Field<'_>,
    errors: &mut Errors,
) -> Option<SubsetField> {
    let Some(elem) = crate::types::vec_element(field.ty) else {
        errors.spanned(
            field.ty,
            "`#[subset]` goes on a `Vec<T>` field: the embedded first items, `T` being their \
             embedded form",
        );
        return None;
    };
    if !field.serialized {
        errors.spanned(
            field.ident,
            "a `#[subset]` field must be serialized (no `#[serde(skip)]`)",
        );
        return None;
    }
    let mut limit: Option<(u32, Span)> = None;
    let mut sort: Option<Vec<(Ident, i32)>> = None;
    let mut full: Option<syn::Path> = None;
    let mut parent: Option<Ident> = None;
    let mut limit_given = false;
    let mut local = Errors::default();
    let clean = match &attr.meta {
        syn::Meta::List(list) => crate::options::parse(
            list.tokens.clone(),
            "subset",
            SUBSET_OPTIONS,
            &mut local,
            |key, input, local| {
                let name = key.to_string();
                match name.as_str() {
                    "limit" => {
                        limit_given = true;
                        input.parse::<Token![=]>()?;
                        let lit: LitInt = input.parse()?;
                        match lit.base10_parse::<u32>() {
                            Ok(n) if n > 0 => limit = Some((n, lit.span())),
                            _ => local.spanned(&lit, LIMIT_ABOVE_ZERO),
                        }
                    }
                    "sort" => {
                        let content;
                        syn::parenthesized!(content in input);
                        let mut keys = Vec::new();
                        while !content.is_empty() {
                            let f = Ident::parse_any(&content)?;
                            content.parse::<Token![=]>()?;
                            let negative = content.peek(Token![-]);
                            if negative {
                                content.parse::<Token![-]>()?;
                            }
                            let lit: LitInt = content.parse()?;
                            if lit.base10_digits() != "1" {
                                local.spanned(&lit, "a sort direction is `1` or `-1`");
                            }
                            keys.push((f, if negative { -1 } else { 1 }));
                            if content.is_empty() {
                                break;
                            }
                            content.parse::<Token![,]>()?;
                        }
                        if keys.is_empty() {
                            local.at(
                                key.span(),
                                "`sort(...)` needs a field: `sort(created_at = -1)`",
                            );
                        }
                        sort = Some(keys);
                    }
                    "full" => {
                        input.parse::<Token![=]>()?;
                        full = Some(input.parse()?);
                    }
                    _ => {
                        input.parse::<Token![=]>()?;
                        parent = Some(Ident::parse_any(input)?);
                    }
                }
                Ok(())
            },
        ),
        other => {
            local.spanned(other, SUBSET_HELP);
            false
        }
    };
    let span = attr
        .path()
        .get_ident()
        .map_or_else(Span::call_site, Ident::span);
    let missing = |what: &str, local: &mut Errors| {
        local.at(span, format!("`#[subset]` needs `{what}`: {SUBSET_HELP}"));
    };
    if clean {
        if limit.is_none() && !limit_given {
            missing("limit = N", &mut local);
        }
        if sort.is_none() {
            missing("sort(field = -1)", &mut local);
        }
        if full.is_none() {
            missing("full = ItemModel", &mut local);
        }
        if parent.is_none() {
            missing("parent = field_of_the_item", &mut local);
        }
    }
    let ok = local.is_empty();
    if let Err(e) = local.into_result() {
        errors.push(e);
    }
    if !ok {
        return None;
    }
    Some(SubsetField {
        ident: field.ident.clone(),
        bson_name: field.bson_name.clone(),
        elem,
        limit: limit?.0,
        sort: sort?,
        full: full?,
        parent: parent?,
        summaries: Vec::new(),
    })
}

const SUBSET_HELP: &str = "`#[subset(limit = 10, sort(created_at = -1), full = Review, \
     parent = product_id)]`: keep the first 10 `Review`s by `created_at` descending, the full \
     items being in `Review`'s collection with `product_id` pointing at this document";

fn parse_summary(
    attr: &syn::Attribute,
    field: &Field<'_>,
    subsets: &mut [SubsetField],
    errors: &mut Errors,
) {
    // `by = ..` names another model's field: a value computed from its documents.
    if crate::options::has_key(attr, "by") {
        if let syn::Meta::List(list) = &attr.meta {
            return errors.spanned(
                attr.path(),
                format!(
                    "`#[summary]` summarises a `#[subset]` field of this struct; a value computed \
                     from another model's documents is `#[computed]`: write `#[computed({})]`",
                    crate::errors::options_string(&list.tokens)
                ),
            );
        }
    }
    let parser = |input: ParseStream<'_>| -> syn::Result<(Ident, Ident, Option<Ident>)> {
        let kind = Ident::parse_any(input)?;
        input.parse::<Token![=]>()?;
        let subset = Ident::parse_any(input)?;
        let item = if input.peek(Token![.]) {
            input.parse::<Token![.]>()?;
            Some(Ident::parse_any(input)?)
        } else {
            None
        };
        if !input.is_empty() {
            return Err(input.error("one summary per field: `#[summary(sum = reviews.stars)]`"));
        }
        Ok((kind, subset, item))
    };
    let parsed = match &attr.meta {
        syn::Meta::List(list) => parser.parse2(list.tokens.clone()),
        other => Err(syn::Error::new_spanned(other, SUMMARY_HELP)),
    };
    let (kind_ident, subset_ident, item) = match parsed {
        Ok(p) => p,
        Err(e) => return errors.push(e),
    };
    let kind = match kind_ident.to_string().as_str() {
        "count" => Kind::Count,
        "sum" => Kind::Sum,
        "avg" => Kind::Avg,
        other => {
            return errors.at(
                kind_ident.span(),
                format!(
                    "unknown summary `{other}`{}; expected one of: {}",
                    did_you_mean(other, SUMMARY_KINDS.iter().copied()),
                    SUMMARY_KINDS.join(", ")
                ),
            )
        }
    };
    match (kind, &item) {
        (Kind::Count, Some(item)) => {
            return errors.spanned(
                item,
                "`count` counts items: write `count = reviews`, no item field",
            )
        }
        (Kind::Sum | Kind::Avg, None) => {
            return errors.spanned(
                &subset_ident,
                format!(
                    "`{kind_ident}` needs an item field: `{kind_ident} = {subset_ident}.stars`"
                ),
            )
        }
        _ => {}
    }
    let names: Vec<String> = subsets.iter().map(|s| s.ident.to_string()).collect();
    let Some(subset) = subsets.iter_mut().find(|s| s.ident == subset_ident) else {
        return errors.spanned(
            &subset_ident,
            format!(
                "`{subset_ident}` is not a `#[subset]` field of this struct{}: a `#[summary]` \
                 summarises one; a value computed from another model's documents is \
                 `#[computed(sum = Order.amount, by = user_id)]`, `by` naming its field that \
                 holds this document's `_id`",
                did_you_mean(&subset_ident.to_string(), names.iter().map(String::as_str))
            ),
        );
    };
    subset.summaries.push(SummaryField {
        ident: field.ident.clone(),
        bson_name: field.bson_name.clone(),
        kind,
        item_field: item,
    });
}

const SUMMARY_HELP: &str = "`#[summary(count = reviews)]`, `#[summary(sum = reviews.stars)]` \
     or `#[summary(avg = reviews.stars)]`";

/// An average is kept as sum / count: both must be declared.
fn check_averages(s: &SubsetField, errors: &mut Errors) {
    let has_count = s.summaries.iter().any(|c| c.kind == Kind::Count);
    for avg in s.summaries.iter().filter(|c| c.kind == Kind::Avg) {
        let item = avg.item_field.as_ref().map(ToString::to_string);
        let has_sum = s
            .summaries
            .iter()
            .any(|c| c.kind == Kind::Sum && c.item_field.as_ref().map(ToString::to_string) == item);
        if !has_count || !has_sum {
            errors.spanned(
                &avg.ident,
                format!(
                    "an average is kept as sum / count: also declare `#[summary(sum = {}.{})]` and \
                     `#[summary(count = {})]` on two numeric fields",
                    s.ident,
                    item.unwrap_or_default(),
                    s.ident
                ),
            );
        }
    }
}
