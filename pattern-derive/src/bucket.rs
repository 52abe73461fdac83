//! `#[derive(Measurement)]` with `#[bucket(...)]`: parsing, checks, and the generated
//! `SeriesSpec`, schema (bucket collection and its indexes) and `Measurement` impl.
//!
//! Checked here: the key and time fields exist, the time is a bare `bson::DateTime`, the limits
//! are positive and parseable, and native mode gets no option it cannot honour. Numeric types of
//! summarised fields are checked by generated code at the field's token.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::meta::ParseNestedMeta;
use syn::{DeriveInput, Ident, LitStr};

use crate::ast::{self, DeriveKind, Field, Model, Unsupported};
use crate::errors::{did_you_mean, Errors};
use crate::schema::{self, field_names};

/// The bucket document's own fields (`pattern_runtime::bucket::fields::RESERVED`).
const RESERVED: &[&str] = &[
    "_id",
    "start",
    "end",
    "count",
    "first",
    "last",
    "measurements",
    "summary",
    "bytes",
];

const OPTIONS: &[&str] = &[
    "native",
    "rollup",
    "slots",
    "nest",
    "collection",
    "key",
    "time",
    "max_count",
    "span",
    "granularity",
    "summary",
    "expire_after",
    "group",
    "crate",
];

const SUMMARY_OPS: &[&str] = &["min", "max", "sum"];

/// How the measurements are laid out.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// Bucket documents with an array of measurements.
    Array,
    /// A native time-series collection.
    Native,
    /// Per-window counts and sums only.
    Rollup,
    /// Per-window maps from slot to value.
    Slots { slot: u64, nest: Option<u64> },
}

/// A checked `#[bucket(...)]`.
struct Bucket {
    layout: Layout,
    native: bool,
    collection: String,
    keys: Vec<Ident>,
    time: Ident,
    max_count: u32,
    span: Option<u64>,
    granularity: Option<&'static str>,
    summaries: Vec<(Ident, [bool; 3])>,
    expire_after: Option<u64>,
}

/// What the attribute says, before the checks against the fields.
#[derive(Default)]
struct Raw {
    native: Option<Span>,
    rollup: Option<Span>,
    slots: Option<(u64, Span)>,
    nest: Option<(u64, Span)>,
    collection: Option<LitStr>,
    keys: Vec<Ident>,
    key_span: Option<Span>,
    time: Option<Ident>,
    time_span: Option<Span>,
    max_count: Option<(u32, Span)>,
    span: Option<(u64, Span)>,
    granularity: Option<(&'static str, Span)>,
    summaries: Vec<(Ident, [bool; 3])>,
    expire_after: Option<u64>,
    group: Option<String>,
    krate: Option<syn::Path>,
}

pub(crate) fn derive(input: &DeriveInput) -> TokenStream {
    let mut errors = Errors::default();
    let model = ast::parse_as(input, &mut errors, DeriveKind::Measurement);
    let mut model = match model {
        Ok(m) => m,
        Err(Unsupported::Shape) | Err(Unsupported::Serde) => {
            // serde reports its own errors; a shape error is already recorded.
            return errors
                .into_result()
                .err()
                .map(|e| e.to_compile_error())
                .unwrap_or_default();
        }
    };
    let bucket = collect(input, &mut model, &mut errors);
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("model")) {
        errors.spanned(
            attr,
            "`#[model(...)]` belongs to `derive(Model)`; a measurement's options go in `#[bucket(...)]`",
        );
    }
    for attr in input
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("versioned"))
    {
        errors.spanned(
            attr,
            "a measurement cannot be `#[versioned]`: measurements are appended to bucket \
             documents shared by many writers, which have no versions of their own. Keep what \
             needs revisions (a device's settings) in a `#[versioned]` model of its own",
        );
    }
    if let syn::Data::Struct(data) = &input.data {
        for attr in data
            .fields
            .iter()
            .flat_map(|f| &f.attrs)
            .filter(|a| a.path().is_ident("version"))
        {
            errors.spanned(
                attr,
                "`#[version]` belongs to a `#[versioned]` model; a measurement has no version",
            );
        }
    }
    match (bucket, errors.into_result()) {
        (Some(b), Ok(())) => expand(&model, &b),
        (_, Err(e)) => {
            let mut out = e.to_compile_error();
            out.extend(fallback(&model));
            out
        }
        (None, Ok(())) => fallback(&model),
    }
}

fn collect(input: &DeriveInput, model: &mut Model<'_>, errors: &mut Errors) -> Option<Bucket> {
    let attrs: Vec<&syn::Attribute> = input
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("bucket"))
        .collect();
    let Some(attr) = attrs.first() else {
        errors.spanned(
            &input.ident,
            "`derive(Measurement)` needs `#[bucket(key = .., time = .., max_count = .., span = \"1h\")]` \
             (or `#[bucket(native, key = .., time = ..)]` for a native time-series collection)",
        );
        return None;
    };
    for extra in attrs.iter().skip(1) {
        errors.spanned(
            extra,
            "one `#[bucket(...)]` per measurement: merge the options into the first one",
        );
    }
    let mut raw = Raw::default();
    let mut seen: Vec<String> = Vec::new();
    let parsed = attr.parse_nested_meta(|meta| parse_option(&meta, &mut raw, &mut seen, errors));
    let parsed_ok = parsed.is_ok();
    if let Err(e) = parsed {
        errors.push(e);
    }
    if let Some(k) = raw.krate.clone() {
        model.krate = k;
    }
    model.group = raw.group.take();
    let native = raw.native.is_some();
    let rollup = raw.rollup.is_some();
    let slots = raw.slots.is_some();

    // One layout.
    let layouts: Vec<(&str, Span)> = [
        ("native", raw.native),
        ("rollup", raw.rollup),
        ("slots", raw.slots.map(|s| s.1)),
    ]
    .into_iter()
    .filter_map(|(name, span)| span.map(|s| (name, s)))
    .collect();
    if let [(first, _), rest @ ..] = layouts.as_slice() {
        for (name, span) in rest {
            errors.at(
                *span,
                format!(
                    "`{first}` and `{name}` are two layouts: a series has one (array buckets by \
                     default, or `native`, `rollup` or `slots = \"1s\"`)"
                ),
            );
        }
    }
    let keyed = (rollup || slots) && !native;
    if keyed {
        let what = if rollup { "rollup" } else { "slots" };
        if let Some((_, span)) = raw.max_count {
            errors.at(
                span,
                format!(
                    "a `{what}` series has one document per key and window: remove `max_count` \
                     (it caps the array of the default layout)"
                ),
            );
        }
    }
    if rollup && raw.summaries.is_empty() {
        errors.at(
            raw.rollup.unwrap_or_else(Span::call_site),
            "a `rollup` keeps only summaries: declare what to keep, e.g. `summary(speed(sum))` \
             (the count of each field is always kept, as `speed_num`)",
        );
    }
    if let Some((nest, nest_span)) = raw.nest {
        match (raw.slots, raw.span) {
            (None, _) => errors.at(
                nest_span,
                "`nest` groups the slots of a `slots` series: add `slots = \"1s\"`, or remove `nest`",
            ),
            (Some((slot, _)), Some((span, _))) if nest % slot != 0 || span % nest != 0 || nest >= span => {
                errors.at(
                    nest_span,
                    format!(
                        "`nest` must be a multiple of `slots` ({slot} s) that divides `span` ({span} s) \
                         and is smaller than it, e.g. slots = \"1s\", nest = \"1m\", span = \"1h\""
                    ),
                )
            }
            _ => {}
        }
    }
    if let (Some((slot, slot_span)), Some((span, _))) = (raw.slots, raw.span) {
        if span % slot != 0 {
            errors.at(
                slot_span,
                format!(
                    "`slots` must divide `span` ({span} s) into whole slots, e.g. slots = \"1s\" \
                     with span = \"1m\""
                ),
            );
        }
    }

    // Options native mode cannot honour, and the other way round.
    if native {
        if let Some((_, span)) = raw.max_count {
            errors.at(
                span,
                "a native time-series collection decides how many measurements a bucket holds \
                 (up to 1000, or 125 KB): remove `max_count`, or remove `native` to use bucket \
                 documents",
            );
        }
        if let (Some((_, g)), Some((_, _))) = (raw.granularity, raw.span) {
            errors.at(
                g,
                "give either `granularity` or `span` for a native time-series collection, not \
                 both (`span` sets bucketMaxSpanSeconds = bucketRoundingSeconds)",
            );
        }
        if let Some((s, span)) = raw.span {
            if s > 31_536_000 {
                errors.at(
                    span,
                    "a native time-series bucket spans at most one year (31536000 s)",
                );
            }
        }
        if raw.keys.len() > 1 {
            errors.at(
                raw.key_span.unwrap_or_else(Span::call_site),
                "a native time-series collection has one `metaField`: give one key field (a \
                 struct field holding the parts of the key, if there are several)",
            );
        }
    } else if let Some((_, span)) = raw.granularity {
        errors.at(
            span,
            "`granularity` is an option of native time-series collections (`#[bucket(native, ..)]`); \
             bucket documents take `span = \"1h\"`",
        );
    }

    // Required options.
    let mut missing = Vec::new();
    if raw.key_span.is_none() {
        missing.push("`key = <field>` (what groups the measurements, e.g. `key = device_id`)");
    }
    if raw.time_span.is_none() {
        missing.push("`time = <field>` (the `bson::DateTime` of each measurement)");
    }
    if !native {
        if raw.max_count.is_none() && !keyed {
            missing.push("`max_count = <n>` (the most measurements in one bucket, e.g. 200)");
        }
        if raw.span.is_none() {
            missing.push("`span = \"<duration>\"` (the window of one bucket, e.g. \"1h\")");
        }
    }
    if !missing.is_empty() && parsed_ok && attrs.len() == 1 {
        errors.spanned(
            attr,
            format!("`#[bucket(...)]` is missing {}", missing.join(", ")),
        );
    }

    // The fields.
    let mut keys_ok = Vec::new();
    for key in &raw.keys {
        let Some(f) = field(model, key, "key", errors) else {
            continue;
        };
        if keys_ok.iter().any(|k: &Ident| k == key) {
            errors.spanned(key, format!("`{key}` is already a key field"));
            continue;
        }
        if f.custom_serializer {
            errors.spanned(
                key,
                "a key field cannot have `#[serde(with)]` / `serialize_with`: the key passed to \
                 `range` and `summary` is serialized on its own and would not match",
            );
        }
        if !native && !keyed && RESERVED.contains(&f.bson_name.as_str()) {
            errors.spanned(
                key,
                format!(
                    "a key field cannot be stored as `{}`: the bucket document uses that name. \
                     Rename it with `#[serde(rename = \"...\")]`",
                    f.bson_name
                ),
            );
        }
        keys_ok.push(key.clone());
    }
    let mut time_ok = None;
    if let Some(time) = &raw.time {
        if let Some(f) = field(model, time, "time", errors) {
            if raw.keys.iter().any(|k| k == time) {
                errors.spanned(time, "the time field cannot also be a key field");
            } else if let Some(problem) = time_type_problem(f.ty) {
                errors.spanned(f.ty, problem);
            } else if f.custom_serializer {
                errors.spanned(
                    time,
                    "the time field cannot have `#[serde(with)]` / `serialize_with`: it must be \
                     stored as a BSON date",
                );
            } else {
                time_ok = Some(time.clone());
            }
        }
    }
    let mut summaries: Vec<(Ident, [bool; 3])> = Vec::new();
    for (ident, ops) in &raw.summaries {
        if field(model, ident, "summary", errors).is_none() {
            continue;
        }
        if raw.keys.contains(ident) || raw.time.as_ref() == Some(ident) {
            errors.spanned(ident, "a key or time field cannot be summarised");
            continue;
        }
        if summaries.iter().any(|(i, _)| i == ident) {
            errors.spanned(
                ident,
                format!("`{ident}` is summarised twice: list its summaries once"),
            );
            continue;
        }
        summaries.push((ident.clone(), *ops));
    }

    let collection = match &raw.collection {
        Some(c) => {
            if let Some(problem) = ast::collection_name_problem(&c.value()) {
                errors.spanned(c, problem);
            }
            c.value()
        }
        None if native => ast::default_collection(&model.ident.to_string()),
        None => {
            let plural = ast::default_collection(&model.ident.to_string());
            let singular = plural.strip_suffix('s').unwrap_or(&plural);
            format!("{singular}_buckets")
        }
    };
    let layout = if native {
        Layout::Native
    } else if rollup {
        Layout::Rollup
    } else if let Some((slot, _)) = raw.slots {
        Layout::Slots {
            slot,
            nest: raw.nest.map(|n| n.0),
        }
    } else {
        Layout::Array
    };
    if let Layout::Slots { .. } = layout {
        let values = value_fields(model, &raw.keys, raw.time.as_ref());
        if values.is_empty() {
            errors.at(
                raw.slots.map_or_else(Span::call_site, |s| s.1),
                "a `slots` series stores each field other than the key and the time as a map of \
                 slots: this measurement has none (add the measured value, e.g. `speed: i32`)",
            );
        }
        // A window must stay far below MongoDB's 16 MiB: about 16 bytes per slot and field (a
        // key of up to 6 digits, a type byte, an 8-byte number), half the limit at most.
        if let (Layout::Slots { slot, .. }, Some((span, _))) = (layout, raw.span) {
            let per_window = span / slot.max(1);
            let bytes = per_window
                .saturating_mul(values.len() as u64)
                .saturating_mul(16);
            if bytes > 8 << 20 {
                errors.at(
                    raw.slots.map_or_else(Span::call_site, |s| s.1),
                    format!(
                        "a window of {per_window} slots × {} field(s) is about {} MiB of numbers \
                         alone, over half of MongoDB's 16 MiB document limit: shorten `span` or \
                         widen `slots`",
                        values.len(),
                        bytes >> 20
                    ),
                );
            }
        }
        for f in values {
            if f.bson_name.contains('.') || f.bson_name.starts_with('$') || f.bson_name == "_id" {
                errors.at(
                    f.ident.span(),
                    format!(
                        "`{}` cannot hold a map of slots: a `.`, a leading `$` or `_id` would be \
                         read as a path or an operator; rename it with `#[serde(rename = \"...\")]`",
                        f.bson_name
                    ),
                );
            }
        }
    }
    if keyed {
        // The key and time fields sit beside the stored values: no name may be taken twice.
        let mut taken: Vec<String> = vec!["_id".to_owned()];
        if rollup {
            for (ident, _) in &summaries {
                if let Some(f) = model.field(&ast::unraw(ident)) {
                    for op in ["num", "sum", "min", "max"] {
                        taken.push(format!("{}_{op}", f.bson_name));
                    }
                }
            }
        }
        for ident in raw.keys.iter().chain(raw.time.as_ref()) {
            if let Some(f) = model.field(&ast::unraw(ident)) {
                if taken.contains(&f.bson_name) {
                    errors.spanned(
                        ident,
                        format!(
                            "`{}` is stored as `{}`, a name the window's document uses (`_id`, or \
                             a rollup's `<field>_num`, `_sum`, `_min`, `_max`): rename it with \
                             `#[serde(rename = \"...\")]`",
                            f.rust_name, f.bson_name
                        ),
                    );
                }
            }
        }
    }
    let time = time_ok?;
    if keys_ok.is_empty() || keys_ok.len() != raw.keys.len() {
        return None;
    }
    Some(Bucket {
        layout,
        native,
        collection,
        keys: keys_ok,
        time,
        max_count: raw.max_count.map_or(0, |m| m.0),
        span: raw.span.map(|s| s.0),
        granularity: raw.granularity.map(|g| g.0),
        summaries,
        expire_after: raw.expire_after,
    })
}

/// The stored fields that are neither a key nor the time: a `slots` series' maps of slots.
fn value_fields<'m>(
    model: &'m Model<'_>,
    keys: &[Ident],
    time: Option<&Ident>,
) -> Vec<&'m Field<'m>> {
    let time = time.map(ast::unraw);
    model
        .fields
        .iter()
        .filter(|f| f.serialized)
        .filter(|f| {
            !keys.iter().any(|k| ast::unraw(k) == f.rust_name)
                && time.as_ref() != Some(&f.rust_name)
        })
        .collect()
}

fn field<'m>(
    model: &'m Model<'_>,
    ident: &Ident,
    what: &str,
    errors: &mut Errors,
) -> Option<&'m Field<'m>> {
    let name = ast::unraw(ident);
    match model.field(&name) {
        Some(f) if !f.serialized => {
            errors.spanned(
                ident,
                format!(
                    "`{name}` is not stored (`#[serde(skip)]` or `skip_serializing`): it cannot \
                     be the {what}"
                ),
            );
            None
        }
        Some(f) => Some(f),
        None => {
            errors.spanned(ident, model.unknown_field_message(&name, what));
            None
        }
    }
}

/// Why a type cannot be a measurement's time, if it cannot.
fn time_type_problem(ty: &syn::Type) -> Option<String> {
    let found = crate::errors::type_string(ty);
    let syn::Type::Path(p) = ty else {
        return Some(format!(
            "the time field must be a `bson::DateTime`, not `{found}`"
        ));
    };
    let last = p.path.segments.last()?;
    match (last.ident.to_string().as_str(), &last.arguments) {
        ("DateTime", syn::PathArguments::None) => None,
        ("DateTime", _) => Some(format!(
            "the time field must be a `bson::DateTime`: `{found}` (chrono) is serialized as a \
             string, so windows, ranges and expiry would not work"
        )),
        ("Option", _) => Some(format!(
            "every measurement needs a time: use `bson::DateTime`, not `{found}`"
        )),
        _ => Some(format!(
            "the time field must be a date, `bson::DateTime`, not `{found}`"
        )),
    }
}

fn parse_option(
    meta: &ParseNestedMeta<'_>,
    raw: &mut Raw,
    seen: &mut Vec<String>,
    errors: &mut Errors,
) -> syn::Result<()> {
    let key = meta
        .path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_default();
    if !OPTIONS.contains(&key.as_str()) {
        return Err(meta.error(format!(
            "unknown bucket option `{key}`{}; expected one of: {}",
            did_you_mean(&key, OPTIONS.iter().copied()),
            OPTIONS.join(", ")
        )));
    }
    if seen.contains(&key) {
        errors.spanned(&meta.path, format!("duplicate bucket option `{key}`"));
    }
    seen.push(key.clone());
    let span = meta
        .path
        .get_ident()
        .map_or_else(Span::call_site, Ident::span);
    match key.as_str() {
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
            match (key.as_str(), secs) {
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

fn opt_u64(v: Option<u64>) -> TokenStream {
    match v {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    }
}

/// The `ModelSchema` field entries (no annotations).
fn field_schemas(model: &Model<'_>) -> Vec<TokenStream> {
    let krate = &model.krate;
    let p = quote!(#krate::__private);
    model
        .fields
        .iter()
        .filter(|f| f.serialized)
        .map(|f| schema::field_schema(f, &p, std::iter::empty()))
        .collect()
}

fn index_spec(p: &TokenStream, keys: &[String], ttl: Option<u64>) -> TokenStream {
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    crate::index::plain_spec(p, &keys, None, false, ttl)
}

fn expand(model: &Model<'_>, b: &Bucket) -> TokenStream {
    let ident = model.ident;
    let krate = &model.krate;
    let p = quote!(#krate::__private);
    let collection = &b.collection;
    let bson = |i: &Ident| {
        model
            .field(&ast::unraw(i))
            .map_or_else(|| ast::unraw(i), |f| f.bson_name.clone())
    };
    let key_names: Vec<String> = b.keys.iter().map(bson).collect();
    let time_name = bson(&b.time);
    let mut checks = Vec::new();
    let summaries: Vec<TokenStream> = b
        .summaries
        .iter()
        .map(|(field, [min, max, sum])| {
            let owner = Ident::new(&ident.to_string(), field.span());
            let message = format!(
            "`{f}` cannot be summarised: `summary({f}(min, max, sum))` needs a numeric field; use \
             i32, i64, u32, f32 or f64 (or an Option of one)",
            f = ast::unraw(field)
        );
            let (name, check) = crate::errors::checked_name(
                &p,
                quote_spanned!(field.span()=> #owner::FIELDS.#field),
                "numeric",
                &message,
                field.span(),
            );
            checks.push(check);
            quote!(#p::SummarySpec { field: #name, min: #min, max: #max, sum: #sum })
        })
        .collect();
    let expire = opt_u64(b.expire_after);
    let values: Vec<String> = value_fields(model, &b.keys, Some(&b.time))
        .into_iter()
        .map(|f| f.bson_name.clone())
        .collect();
    let keyed = matches!(b.layout, Layout::Rollup | Layout::Slots { .. });
    let (storage, indexes) = if keyed {
        let span = b.span.unwrap_or(1);
        let mut key_time = key_names.clone();
        key_time.push(time_name.clone());
        let keys: Vec<&str> = key_time.iter().map(String::as_str).collect();
        let mut indexes = vec![crate::index::plain_spec(&p, &keys, None, true, None)];
        if let Some(secs) = b.expire_after {
            // The time is the window's start: expire `expire_after` after the window closes.
            let ttl = secs.saturating_add(span).min(i32::MAX as u64);
            indexes.push(index_spec(&p, std::slice::from_ref(&time_name), Some(ttl)));
        }
        let storage = match b.layout {
            Layout::Slots { slot, nest } => {
                let nest = opt_u64(nest);
                quote!(#p::Storage::Slots { span_seconds: #span, slot_seconds: #slot, nest_seconds: #nest })
            }
            _ => quote!(#p::Storage::Rollup { span_seconds: #span }),
        };
        (storage, indexes)
    } else if b.native {
        let granularity = match b.granularity {
            Some(g) => {
                let g = Ident::new(g, Span::call_site());
                quote!(::core::option::Option::Some(#p::Granularity::#g))
            }
            None => quote!(::core::option::Option::None),
        };
        let span = opt_u64(b.span);
        let mut meta_time = key_names.clone();
        meta_time.push(time_name.clone());
        (
            quote!(#p::Storage::Native { granularity: #granularity, span_seconds: #span }),
            vec![index_spec(&p, &meta_time, None)],
        )
    } else {
        let max_count = b.max_count;
        let span = b.span.unwrap_or(1);
        let mut key_start = key_names.clone();
        key_start.push("start".to_owned());
        let mut indexes = vec![index_spec(&p, &key_start, None)];
        if let Some(secs) = b.expire_after {
            indexes.push(index_spec(&p, &["end".to_owned()], Some(secs)));
        }
        (
            quote!(#p::Storage::Buckets { max_count: #max_count, span_seconds: #span }),
            indexes,
        )
    };
    let key_types: Vec<&syn::Type> = b
        .keys
        .iter()
        .filter_map(|k| model.field(&ast::unraw(k)).map(|f| f.ty))
        .collect();
    let key_type = match key_types.as_slice() {
        [one] => quote!(#one),
        many => quote!((#(#many),*)),
    };
    let time = &b.time;
    let time_fn = quote_spanned!(time.span()=>
        fn time(&self) -> #p::bson::DateTime {
            self.#time
        }
    );
    let keeps = (b.layout != Layout::Rollup).then(|| {
        quote! {
            #[automatically_derived]
            impl #p::KeepsMeasurements for #ident {}
        }
    });
    let field_names = field_names(model);
    let field_schemas = field_schemas(model);
    let schema = schema::schema_static(
        model,
        collection,
        &field_schemas,
        &indexes,
        None,
        &[quote!(&__SERIES)],
    );
    quote! {
        const _: () = {
            #field_names

            static __SERIES: #p::SeriesSpec = #p::SeriesSpec::from_parts(#p::SeriesParts {
                collection: #collection,
                keys: &[#(#key_names),*],
                time: #time_name,
                summaries: &[#(#summaries),*],
                values: &[#(#values),*],
                expire_after_seconds: #expire,
                storage: #storage,
            });
            #(#checks)*

            #schema

            #[automatically_derived]
            impl #p::Measurement for #ident {
                type Key = #key_type;
                const SCHEMA: &'static #p::ModelSchema = &__SCHEMA;
                const SERIES: &'static #p::SeriesSpec = &__SERIES;
                #time_fn
            }
            #keeps

            #p::inventory::submit! {
                #p::Registration { schema: &__SCHEMA }
            }
        };
    }
}

/// Stubs after an error: the field names and an unregistered `Measurement` impl.
fn fallback(model: &Model<'_>) -> TokenStream {
    let ident = model.ident;
    let krate = &model.krate;
    let p = quote!(#krate::__private);
    let field_names = field_names(model);
    let schema = schema::empty_schema(model);
    quote! {
        const _: () = {
            #field_names

            static __SERIES: #p::SeriesSpec = #p::SeriesSpec::from_parts(#p::SeriesParts {
                collection: "",
                keys: &[],
                time: "",
                summaries: &[],
                values: &[],
                expire_after_seconds: ::core::option::Option::None,
                storage: #p::Storage::Buckets { max_count: 1, span_seconds: 1 },
            });

            #schema

            #[automatically_derived]
            impl #p::Measurement for #ident {
                type Key = ();
                const SCHEMA: &'static #p::ModelSchema = &__SCHEMA;
                const SERIES: &'static #p::SeriesSpec = &__SERIES;
                fn time(&self) -> #p::bson::DateTime {
                    #p::bson::DateTime::MIN
                }
            }

            #[automatically_derived]
            impl #p::KeepsMeasurements for #ident {}
        };
    }
}
