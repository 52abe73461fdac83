//! Reading the enum: its serde tag, its variants and the fields they share, and the
//! attributes of other patterns, refused on an enum.

use super::*;
use crate::attr::Attr;

/// Reads the enum; `None` when nothing can be generated (serde's attributes are wrong, which
/// serde reports, or the enum is generic or not internally tagged).
pub(super) fn read<'a>(input: &'a DeriveInput, errors: &mut Errors) -> Option<Poly<'a>> {
    if !input.generics.params.is_empty() {
        errors.spanned(
            &input.generics,
            "`derive(Model)` does not support generic enums: a model is registered once, for one \
             collection. Derive it on a concrete enum",
        );
        return None;
    }
    let attrs = ast::parse_model_attrs(input, errors);
    refuse_other_patterns(input, errors);
    let cx = Ctxt::new();
    let container = serde_ast::Container::from_ast(&cx, input, Derive::Serialize);
    let serde_ok = cx.check().is_ok();
    let container = container.filter(|_| serde_ok)?;
    ast::check_container_serde(input, &container, errors);
    let serde_ast::Data::Enum(serde_variants) = &container.data else {
        return None;
    };
    let advice = "store one shape per variant with `#[serde(tag = \"type\")]` on the enum (the \
                  tag's key, here `type`, is a field of every document)";
    let tag = match container.attrs.tag() {
        TagType::Internal { tag } => tag.clone(),
        TagType::External => {
            errors.spanned(
                &input.ident,
                format!(
                    "`derive(Model)` on an enum needs an internally tagged enum: by default serde \
                     nests each variant's fields under its name (`{{\"Email\": {{..}}}}`), so no \
                     field is common to every document and none can be indexed; {advice}"
                ),
            );
            return None;
        }
        TagType::Adjacent { .. } => {
            let span =
                ast::serde_key_span(&input.attrs, "content").unwrap_or_else(|| input.ident.span());
            errors.at(
                span,
                format!(
                    "an adjacently tagged enum (`tag` + `content`) nests each variant's fields \
                     under `content`, so no field is common to every document; remove \
                     `content`: {advice}"
                ),
            );
            return None;
        }
        TagType::None => {
            let span =
                ast::serde_key_span(&input.attrs, "untagged").unwrap_or_else(|| input.ident.span());
            errors.at(
                span,
                format!(
                    "an untagged enum stores no field saying which variant a document is, so it \
                     cannot be read back reliably nor queried by variant; {advice}"
                ),
            );
            return None;
        }
    };

    let mut variants: Vec<VariantDef<'a>> = Vec::new();
    let mut catch_all = None;
    for v in serde_variants {
        let ident = &v.original.ident;
        if v.attrs.other() {
            catch_all = Some(ident);
            continue;
        }
        match v.style {
            serde_ast::Style::Struct => {}
            serde_ast::Style::Unit => {
                errors.spanned(
                    ident,
                    format!(
                        "unit variant `{ident}` would store only the tag, and every document \
                         needs an `_id`: give it fields (one serialized as `_id`), or mark it \
                         `#[serde(other)]` to read documents whose tag no variant has"
                    ),
                );
                continue;
            }
            serde_ast::Style::Newtype => {
                errors.spanned(
                    &v.original.fields,
                    format!(
                        "newtype variant `{ident}(..)` is not supported: the derive cannot see \
                         the inner struct's fields, which it needs for the common fields, the \
                         indexes and the variant's struct; write them in the variant: \
                         `{ident} {{ .. }}`"
                    ),
                );
                continue;
            }
            serde_ast::Style::Tuple => {
                errors.spanned(
                    &v.original.fields,
                    format!(
                        "tuple variant `{ident}(..)` has no field names to store as BSON keys: \
                         write a struct variant, `{ident} {{ .. }}`"
                    ),
                );
                continue;
            }
        }
        let tag_value = v.attrs.name().serialize_name().to_owned();
        if let Some(first) = variants.iter().find(|o| o.tag_value == tag_value) {
            errors.spanned(
                ident,
                format!(
                    "variants `{}` and `{ident}` are both stored with `{tag}: \"{tag_value}\"`, \
                     so a document could not say which one it is: give one of them another \
                     `#[serde(rename = \"...\")]`",
                    first.ident
                ),
            );
            continue;
        }
        let fields = ast::fields_of(&v.fields, errors);
        if !ast::has_id(&fields, errors) {
            errors.spanned(
                ident,
                format!(
                    "variant `{ident}` has no field serialized as `_id`: every document needs \
                     one; add `#[serde(rename = \"_id\")] id: bson::oid::ObjectId` (the same in \
                     every variant, so it is a common field)"
                ),
            );
        }
        variants.push(VariantDef {
            ident,
            tag_value,
            struct_ident: format_ident!("{}{}", input.ident, ast::unraw(ident)),
            fields,
            attrs: &v.original.attrs,
        });
    }
    if variants.is_empty() && serde_variants.iter().all(|v| v.attrs.other()) {
        errors.spanned(
            &input.ident,
            "an enum model needs at least one struct variant with fields (one of them serialized \
             as `_id`)",
        );
    }

    let (common, partial) = common_fields(&variants);
    let poly = Poly {
        input,
        attrs,
        tag,
        catch_all,
        kind_ident: format_ident!("{}Kind", input.ident),
        common_ident: format_ident!("{}Common", input.ident),
        common,
        partial,
        variants,
    };
    if let Some(f) = poly.common_fields().find(|f| f.rust_name == "kind") {
        errors.spanned(
            f.ident,
            format!(
                "`kind` is a field of every variant, and `{}` names the tag `kind`: rename this \
                 field",
                poly.common_ident
            ),
        );
    }
    Some(poly)
}

/// `#[versioned]`, `#[subset]`, ... anywhere on the enum: refused, with why.
fn refuse_other_patterns(input: &DeriveInput, errors: &mut Errors) {
    let syn::Data::Enum(e) = &input.data else {
        return;
    };
    let on_fields = e
        .variants
        .iter()
        .flat_map(|v| v.attrs.iter().chain(v.fields.iter().flat_map(|f| &f.attrs)));
    for attr in input.attrs.iter().chain(on_fields) {
        if Attr::SchemaVersion.is(attr) {
            errors.spanned(
                attr.path(),
                "`#[schema_version]` is not supported on an enum model (the polymorphic pattern) \
                 yet: its documents are read per variant by their tag, and an older shape would \
                 need a version per variant. Version the data in a struct model, or add a new \
                 variant for the new shape",
            );
        }
        if let Some(name) = REFUSED.iter().find(|a| a.is(attr)).map(|a| a.name()) {
            errors.spanned(
                attr.path(),
                format!(
                    "`#[{name}]` is not supported on an enum model (the polymorphic pattern) \
                     yet: its operations address the fields of one shape. Keep this data in a \
                     struct model of its own"
                ),
            );
        }
    }
    for v in &e.variants {
        for attr in v.fields.iter().flat_map(|f| &f.attrs).chain(&v.attrs) {
            if Attr::ShardKey.is(attr) {
                errors.spanned(
                    attr,
                    "`#[shard_key(...)]` goes on the enum: the variants share one collection, \
                     sharded by fields every variant has",
                );
            }
            if Attr::Model.is(attr) {
                errors.spanned(
                    attr,
                    "`#[model(...)]` goes on the enum, not on a variant or field",
                );
            }
        }
    }
}

/// The first variant's fields that every variant has under the same Rust name, BSON name and
/// type; and the names only some variants have.
fn common_fields(variants: &[VariantDef<'_>]) -> (Vec<usize>, Vec<(String, Vec<String>)>) {
    let Some(first) = variants.first() else {
        return (Vec::new(), Vec::new());
    };
    let same = |f: &Field<'_>, g: &Field<'_>| {
        f.rust_name == g.rust_name
            && f.bson_name == g.bson_name
            && g.serialized
            && crate::errors::type_string(f.ty) == crate::errors::type_string(g.ty)
    };
    let common = first
        .fields
        .iter()
        .enumerate()
        .filter(|(_, f)| {
            f.serialized && variants.iter().all(|v| v.fields.iter().any(|g| same(f, g)))
        })
        .map(|(i, _)| i)
        .collect::<Vec<_>>();
    let mut partial: Vec<(String, Vec<String>)> = Vec::new();
    for v in variants {
        for f in v.fields.iter().filter(|f| f.serialized) {
            let is_common = common
                .iter()
                .any(|&i| first.fields[i].rust_name == f.rust_name);
            if is_common {
                continue;
            }
            match partial.iter_mut().find(|(n, _)| *n == f.rust_name) {
                Some((_, vs)) => vs.push(v.ident.to_string()),
                None => partial.push((f.rust_name.clone(), vec![v.ident.to_string()])),
            }
        }
    }
    (common, partial)
}
