//! Reading `#[bucket(...)]`'s options, each mistake into `Errors` at its token.

use super::*;

pub(super) fn parse_option(
    key: &str,
    meta: &ParseNestedMeta<'_>,
    raw: &mut Raw,
    errors: &mut Errors,
) -> syn::Result<()> {
    let span = meta
        .path
        .get_ident()
        .map_or_else(Span::call_site, Ident::span);
    match key {
        "native" => raw.native = Some(span),
        "rollup" => raw.rollup = Some(span),
        "collection" => raw.collection = Some(ast::lit_str(meta.value()?, "collection")?),
        "group" => {
            let lit = ast::lit_str(meta.value()?, "group")?;
            if let Some(problem) = ast::group_name_problem(&lit.value()) {
                errors.spanned(&lit, problem);
            }
            raw.group = Some(lit.value());
        }
        "key" => {
            raw.key_span = Some(span);
            if meta.input.peek(syn::token::Paren) {
                let content;
                syn::parenthesized!(content in meta.input);
                let idents = content.parse_terminated(syn::Ident::parse_any, syn::Token![,]);
                match idents {
                    Ok(list) if list.is_empty() => errors.at(
                        span,
                        "`key(...)` lists the key fields: `key(site, device_id)`",
                    ),
                    Ok(list) => raw.keys.extend(list),
                    Err(e) => errors.at(
                        e.span(),
                        "`key(...)` lists the key fields by name: `key(site, device_id)`",
                    ),
                }
            } else if let Some(ident) = field_ident(meta, "key", errors)? {
                raw.keys.push(ident);
            }
        }
        "time" => {
            raw.time_span = Some(span);
            raw.time = field_ident(meta, "time", errors)?;
        }
        "max_count" => {
            let lit: syn::LitInt = meta.value()?.parse()?;
            match lit.base10_parse::<u32>() {
                Ok(n) if n > 0 => raw.max_count = Some((n, lit.span())),
                _ => {
                    errors.spanned(
                        &lit,
                        "`max_count` is the most measurements one bucket holds: above 0 (e.g. 200)",
                    );
                    raw.max_count = Some((1, lit.span()));
                }
            }
        }
        "slots" | "nest" => {
            let (lit, secs) = duration(meta)?;
            match secs {
                Some(s) if s > 0 => {
                    let value = Some((s, lit.span()));
                    if key == "slots" {
                        raw.slots = value;
                    } else {
                        raw.nest = value;
                    }
                }
                _ => {
                    errors.spanned(
                        &lit,
                        format!(
                            "`{key}` is a duration above 0: seconds, or such as \"1s\" or \"1m\""
                        ),
                    );
                    if key == "slots" {
                        raw.slots = Some((1, lit.span()));
                    }
                }
            }
        }
        "span" | "expire_after" => {
            let (lit, secs) = duration(meta)?;
            match (key, secs) {
                (_, Some(0)) => {
                    errors.spanned(&lit, format!("`{key}` must be above 0"));
                    if key == "span" {
                        raw.span = Some((1, lit.span()));
                    }
                }
                ("span", Some(s)) => raw.span = Some((s, lit.span())),
                ("span", _) => {
                    errors.spanned(
                        &lit,
                        "`span` is the window of one bucket: seconds, or a duration such as \
                         \"1h\", \"15m\" or \"1d\" (units s, m, h, d, w)",
                    );
                    raw.span = Some((1, lit.span()));
                }
                (_, Some(s)) if s > 0 && s <= i32::MAX as u64 => raw.expire_after = Some(s),
                _ => errors.spanned(
                    &lit,
                    "`expire_after` takes seconds or a duration such as \"30d\" (at most 2^31 - 1 \
                     seconds)",
                ),
            }
        }
        "granularity" => {
            let lit = ast::lit_str(meta.value()?, "granularity")?;
            let value = match lit.value().as_str() {
                "seconds" => "Seconds",
                "minutes" => "Minutes",
                "hours" => "Hours",
                other => {
                    errors.spanned(
                        &lit,
                        format!(
                            "unknown granularity \"{other}\"{}; expected \"seconds\", \"minutes\" \
                             or \"hours\" (or give `span` instead)",
                            did_you_mean(other, ["seconds", "minutes", "hours"])
                        ),
                    );
                    "Seconds"
                }
            };
            raw.granularity = Some((value, lit.span()));
        }
        "summary" => {
            meta.parse_nested_meta(|field| {
                let Some(ident) = field.path.get_ident().cloned() else {
                    return Err(
                        field.error("a summarised field is a field name: `value(min, max)`")
                    );
                };
                let mut ops = [false; 3];
                if !field.input.peek(syn::token::Paren) {
                    errors.spanned(
                        &ident,
                        format!(
                            "say which summaries of `{ident}` to keep: `{ident}(min, max, sum)`"
                        ),
                    );
                    return Ok(());
                }
                let mut any = false;
                field.parse_nested_meta(|op| {
                    let name = op
                        .path
                        .get_ident()
                        .map(ToString::to_string)
                        .unwrap_or_default();
                    match SUMMARY_OPS.iter().position(|o| *o == name) {
                        Some(i) if ops[i] => {
                            errors.spanned(&op.path, format!("`{name}` is listed twice"));
                        }
                        Some(i) => ops[i] = true,
                        None => errors.spanned(
                            &op.path,
                            format!(
                                "unknown summary `{name}`{}; expected min, max or sum (the count \
                                 of measurements is always kept)",
                                did_you_mean(&name, SUMMARY_OPS.iter().copied())
                            ),
                        ),
                    }
                    any = true;
                    Ok(())
                })?;
                if !any {
                    errors.spanned(
                        &ident,
                        format!(
                            "say which summaries of `{ident}` to keep: `{ident}(min, max, sum)`"
                        ),
                    );
                }
                if ops.iter().any(|o| *o) {
                    raw.summaries.push((ident, ops));
                }
                Ok(())
            })?;
        }
        _ => {
            let lit = ast::lit_str(meta.value()?, "crate")?;
            match lit.parse::<syn::Path>() {
                Ok(path) => raw.krate = Some(path),
                Err(_) => errors.spanned(
                    &lit,
                    "`crate` takes a path to the runtime crate: `crate = \"::pattern_runtime\"`",
                ),
            }
        }
    }
    Ok(())
}

/// `option = 3600` or `option = "1h"`: the literal and its seconds, `None` when unparseable.
fn duration(meta: &ParseNestedMeta<'_>) -> syn::Result<(syn::Lit, Option<u64>)> {
    let lit: syn::Lit = meta.value()?.parse()?;
    let secs = match &lit {
        syn::Lit::Int(i) => i.base10_parse::<u64>().ok(),
        syn::Lit::Str(s) => crate::index::parse_duration(&s.value()),
        _ => None,
    };
    Ok((lit, secs))
}

/// `key = field` / `time = field`; a string gets a message saying to drop the quotes.
fn field_ident(
    meta: &ParseNestedMeta<'_>,
    what: &str,
    errors: &mut Errors,
) -> syn::Result<Option<Ident>> {
    let value = meta.value()?;
    if value.peek(LitStr) {
        let s: LitStr = value.parse()?;
        errors.spanned(
            &s,
            format!(
                "`{what}` takes a field name, not a string: `{what} = {}`",
                s.value()
            ),
        );
        return Ok(None);
    }
    Ok(Some(value.parse()?))
}

pub(super) fn opt_u64(v: Option<u64>) -> TokenStream {
    match v {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    }
}
