//! Reading `#[approximate(kind, settings..)]` through `options.rs`: the kind, its settings, and the
//! field's being stored.

use proc_macro2::TokenStream;
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Ident, Lit, Token};

use crate::ast::{Field, Model};
use crate::attr::Attr;
use crate::errors::{did_you_mean, Errors};

use super::*;

const KINDS: &[&str] = &["batched", "sampled", "sharded"];

const HELP: &str = "`#[approximate(batched, threshold = 100)]` (one `$inc` per 100 events), \
                    `#[approximate(sampled, p = 0.01)]` (one write of 100 per 100 events on \
                    average) or `#[approximate(sharded, shards = 16)]` (16 shard documents)";

/// One `key = literal` setting.
struct Setting {
    key: Ident,
    value: Lit,
}

pub(super) fn parse_field(
    field: &Field<'_>,
    model: &Model<'_>,
    errors: &mut Errors,
) -> Option<ApproxField> {
    let mut attrs = field.attrs_of(Attr::Approximate);
    let attr = attrs.next()?;
    for extra in attrs {
        errors.spanned(extra, "one `#[approximate]` per field");
    }
    // Refused beside `#[computed]`, `#[summary]`, `#[subset]` or `#[version]`
    // (`combinations.rs`).
    if crate::combinations::field_refuses(field, Attr::Approximate) {
        return None;
    }
    let list = crate::ast::stored_field_list(
        field,
        attr,
        "approximate",
        "an approximate counter",
        HELP,
        errors,
    )?;
    // The kind, then its settings, read by the options reader: an unknown or repeated setting
    // is an error at its key, and the rest is still read.
    let mut settings: Vec<Setting> = Vec::new();
    let mut read: Option<(Ident, bool)> = None;
    let parser = |input: ParseStream<'_>| -> syn::Result<()> {
        let kind = Ident::parse_any(input)?;
        let allowed: &[&str] = match kind.to_string().as_str() {
            "batched" => &["threshold"],
            "sampled" => &["p"],
            "sharded" => &["shards", "collection"],
            other => {
                errors.at(
                    kind.span(),
                    format!(
                        "unknown approximation `{other}`{}; expected one of: {}",
                        did_you_mean(other, KINDS.iter().copied()),
                        KINDS.join(", ")
                    ),
                );
                input.parse::<TokenStream>()?;
                return Ok(());
            }
        };
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
        }
        let what = format!("{kind} counter");
        let clean = crate::options::read(input, &what, allowed, errors, |key, input, _| {
            input.parse::<Token![=]>()?;
            let value: Lit = input.parse()?;
            settings.push(Setting {
                key: key.clone(),
                value,
            });
            Ok(())
        })?;
        read = Some((kind, clean));
        Ok(())
    };
    if let Err(e) = parser.parse2(list.tokens.clone()) {
        errors.push(syn::Error::new(e.span(), format!("{e}: {HELP}")));
        return None;
    }
    // Missing settings are reported only when every given one was known and parsed (a
    // misspelt key is not also missing); the given values are checked either way.
    let (kind, clean) = read?;
    let find = |key: &str| settings.iter().find(|s| s.key == key);
    let required = |key: &str, example: &str, errors: &mut Errors| {
        let found = find(key);
        if found.is_none() && clean {
            errors.at(
                kind.span(),
                format!(
                    "a {kind} counter needs `{key}`: `#[approximate({kind}, {key} = {example})]`"
                ),
            );
        }
        found
    };
    let parsed = match kind.to_string().as_str() {
        "batched" => {
            let s = required("threshold", "100", errors)?;
            let threshold = positive_int(&s.value, "a threshold", "events per write", errors)?;
            Kind::Batched { threshold }
        }
        "sampled" => {
            let s = required("p", "0.01", errors)?;
            let p = match &s.value {
                Lit::Float(f) => f.base10_parse::<f64>().ok(),
                Lit::Int(i) => i.base10_parse::<f64>().ok(),
                _ => None,
            };
            match p {
                Some(p) if p > 0.0 && p <= 1.0 => Kind::Sampled { p },
                Some(p) => {
                    errors.spanned(
                        &s.value,
                        format!(
                            "`p` is a probability in (0, 1], not {p}: `p = 0.01` writes one \
                             event in 100, as an increment of 100"
                        ),
                    );
                    return None;
                }
                None => {
                    errors.spanned(&s.value, "`p` is a number in (0, 1], like `p = 0.01`");
                    return None;
                }
            }
        }
        _ => {
            let s = required("shards", "16", errors)?;
            let shards = positive_int(&s.value, "a shard count", "shard documents", errors)?;
            let collection = match find("collection").map(|s| &s.value) {
                Some(Lit::Str(c)) => {
                    let name = c.value();
                    if let Some(problem) = crate::ast::collection_name_problem(&name) {
                        errors.spanned(c, problem);
                        return None;
                    }
                    name
                }
                Some(other) => {
                    errors.spanned(
                        other,
                        "`collection` is a string: `collection = \"page_hits\"`",
                    );
                    return None;
                }
                None => format!("{}.{}", model.collection, field.bson_name),
            };
            Kind::Sharded { shards, collection }
        }
    };
    clean.then(|| ApproxField {
        ident: field.ident.clone(),
        bson_name: field.bson_name.clone(),
        kind: parsed,
    })
}

/// A literal integer of at least 1.
fn positive_int(value: &Lit, what: &str, unit: &str, errors: &mut Errors) -> Option<u32> {
    let n = match value {
        Lit::Int(i) => i.base10_parse::<u32>().ok(),
        _ => None,
    };
    match n {
        Some(0) => {
            errors.spanned(value, format!("{what} is at least 1 ({unit})"));
            None
        }
        Some(n) => Some(n),
        None => {
            errors.spanned(
                value,
                format!("{what} is a whole number of {unit}, at least 1"),
            );
            None
        }
    }
}
