//! Checking what was read against the model: paths resolved to their BSON names, option
//! combinations MongoDB refuses, keys of the right types.

use super::*;

/// Resolves a path to its BSON form; reports what is wrong. The first segment is a field of the
/// model; the segments below go through the nested struct's `Fields` (serde's names, checked when
/// the generated code compiles, at the user's tokens), or are kept as written below a document or
/// map field.
fn resolve(path: &KeyPath, model: &Model<'_>, what: &str, errors: &mut Errors) -> Option<BsonPath> {
    let Some(field) = model.field(&path.head) else {
        errors.spanned(&path.tokens, model.unknown_field_message(&path.head, what));
        return None;
    };
    if !field.serialized {
        errors.spanned(
            &path.tokens,
            format!(
                "field `{}` is never serialized (`#[serde(skip)]`): it cannot be {what}",
                field.rust_name
            ),
        );
        return None;
    }
    if path.rest.iter().any(|s| s.is_empty() || s.starts_with('$')) {
        errors.spanned(
            &path.tokens,
            "a path segment cannot be empty or start with `$`",
        );
        return None;
    }
    let mut out = BsonPath::text(&field.bson_name);
    if path.rest.is_empty() {
        return Some(out);
    }
    out.span = Some(path.span);
    let krate = &model.krate;
    let p = quote!(#krate::__private);
    let model_ident = model.ident;
    let mut head = field.ident.clone();
    head.set_span(path.span);
    // The typed names of the struct the path continues in, spanned at the segment that led there.
    let mut names = crate::errors::respan_all(
        quote!(#p::FieldName::nested(<#model_ident as #p::Fields>::FIELDS.#head)),
        path.span,
    );
    let mut typed = !is_dynamic(field.ty) && !field.custom_serializer;
    for (seg, ident) in path.rest.iter().zip(&path.rest_idents) {
        out.push_text(".");
        // A position in an array (`items.0`) or a name that is no identifier: as written, and
        // so is everything below it.
        if seg.parse::<usize>().is_ok() || *ident == "__not_an_ident" {
            typed = false;
        }
        if !typed {
            out.push_text(seg);
            continue;
        }
        let span = ident.span();
        let step = quote_spanned!(span=> #names.#ident);
        let p_here = crate::errors::respan_all(p.clone(), span);
        out.pieces.push(Piece::Step(
            quote_spanned!(span=> #p_here::step(#step)),
            seg.clone(),
        ));
        names = quote_spanned!(span=> #p_here::FieldName::nested(#step));
    }
    Some(out)
}

pub(super) fn check(a: IndexAttr, model: &Model<'_>, errors: &mut Errors) -> Option<Index> {
    let before = errors.count();
    let mut keys = Vec::new();
    for k in &a.keys {
        let what = if a.shard_key {
            "a shard key"
        } else {
            "an index key"
        };
        if let Some(path) = resolve(&k.path, model, what, errors) {
            keys.push((path, k.kind));
        }
    }
    if keys.len() != a.keys.len() {
        return None;
    }
    if !a.shard_key
        && keys.len() == 1
        && keys[0].0.literal().as_deref() == Some("_id")
        && matches!(keys[0].1, Kind::Asc | Kind::Desc)
    {
        errors.at(
            a.keys[0].kind_span,
            "`_id` is always indexed (the `_id_` index, unique): remove this index",
        );
    }
    let hashed: Vec<&Key> = a.keys.iter().filter(|k| k.kind == Kind::Hashed).collect();
    if hashed.len() > 1 {
        errors.at(hashed[1].kind_span, "an index can have only one hashed key");
    }
    if let Some((true, span)) = a.unique {
        if !hashed.is_empty() {
            errors.at(
                span,
                "a hashed index cannot be unique: index the field with `1` for uniqueness",
            );
        }
    }
    if let Some((_, span)) = a.expire {
        if a.keys.len() != 1 {
            errors.at(
                span,
                "a TTL index (`expire_after`) must have exactly one key, a date field",
            );
        } else {
            let k = &a.keys[0];
            let field = model.field(&k.path.head);
            if !matches!(k.kind, Kind::Asc | Kind::Desc) {
                errors.at(
                    span,
                    "a TTL index (`expire_after`) needs a `1` or `-1` key on a date field",
                );
            } else if let Some(f) = field.filter(|f| !f.custom_serializer && k.path.rest.is_empty())
            {
                if !is_bson_date(f.ty) {
                    errors.at(
                        span,
                        format!(
                            "a TTL index needs a field stored as a BSON date, and `{}` has type `{}`; \
                             use `bson::DateTime` (a `chrono::DateTime` is serialized as a string and \
                             would never expire), or a `#[serde(with = ...)]` helper that writes a \
                             BSON date",
                            f.rust_name,
                            crate::errors::type_string(f.ty)
                        ),
                    );
                }
            }
        }
    }
    let mut partial = Vec::new();
    for c in &a.partial {
        if let Some(path) = resolve(&c.path, model, "a partial filter field", errors) {
            partial.push((path, c.op, c.value.clone()));
        }
    }
    let collation = a.collation.as_ref().and_then(|c| {
        c.locale.as_ref().map(|l| CheckedCollation {
            locale: l.value(),
            strength: c.strength,
            case_level: c.case_level,
            numeric_ordering: c.numeric_ordering,
        })
    });
    if errors.count() != before {
        return None;
    }
    let name = a.name.as_ref().map_or_else(
        || {
            // mongod's default: `path_1_other_-1`.
            let mut name = BsonPath {
                pieces: Vec::new(),
                span: None,
            };
            for (i, (path, kind)) in keys.iter().enumerate() {
                if i > 0 {
                    name.push_text("_");
                }
                name.push_path(path);
                name.push_text(&format!("_{}", kind.suffix()));
            }
            name
        },
        |lit| BsonPath::text(&lit.value()),
    );
    Some(Index {
        span: a.name.as_ref().map_or(a.attr_span, LitStr::span),
        explicit_name: a.name.is_some(),
        name,
        first_field: a.keys[0].path.head.clone(),
        keys,
        unique: a.unique.is_some_and(|(u, _)| u),
        sparse: a.sparse,
        hidden: a.hidden,
        expire: a.expire.map(|(s, _)| s),
        collation,
        partial,
    })
}
