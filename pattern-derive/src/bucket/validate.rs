//! Checking the measurement: its key, time and value fields, and the options against them.

use super::*;
use crate::attr::Attr;

pub(super) fn collect(
    input: &DeriveInput,
    model: &mut Model<'_>,
    errors: &mut Errors,
) -> Option<Bucket> {
    let attrs: Vec<&syn::Attribute> = Attr::Bucket.find(&input.attrs).collect();
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
    let parsed_ok = crate::options::nested(attr, "bucket", OPTIONS, errors, |key, meta, errors| {
        parse_option(key, meta, &mut raw, errors)
    });
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
            rollup_without_summary(model, &raw),
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

/// A `rollup` without `summary(..)`: what to declare, with one of the measurement's own value
/// fields (a number by its type's name first), or a placeholder when it has none.
fn rollup_without_summary(model: &Model<'_>, raw: &Raw) -> String {
    const NUMBERS: &[&str] = &["i32", "i64", "u32", "f32", "f64"];
    let number = |ty: &syn::Type| {
        let ty = crate::types::option_inner(ty).unwrap_or(ty);
        matches!(ty, syn::Type::Path(p) if p.path.get_ident().is_some_and(|i| NUMBERS.iter().any(|n| i == n)))
    };
    let values = value_fields(model, &raw.keys, raw.time.as_ref());
    let field = values
        .iter()
        .find(|f| number(f.ty))
        .or_else(|| values.first());
    match field {
        Some(f) => format!(
            "a `rollup` keeps only summaries: declare what to keep, e.g. `summary({}(sum))` (the \
             count of each field is always kept, as `{}_num`)",
            f.rust_name, f.bson_name
        ),
        None => "a `rollup` keeps only summaries of the measured fields, and this measurement \
                 has none besides the key and the time: add one and declare what to keep, \
                 `summary(<field>(sum))`"
            .to_owned(),
    }
}

/// The stored fields that are neither a key nor the time: a `slots` series' maps of slots.
pub(super) fn value_fields<'m>(
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
