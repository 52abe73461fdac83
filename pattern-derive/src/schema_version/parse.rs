//! Reading `#[schema_version(older(..))]` and the version field through `options.rs`.

use proc_macro2::Span;
use syn::{DeriveInput, LitInt, Token, Type};

use crate::ast::Model;
use crate::attr::Attr;
use crate::errors::Errors;

use super::validate::{version_type, VersionType};
use super::*;

const USAGE: &str = "`#[schema_version(older(UserV1 = 1, UserV2 = 2))]`, with a field \
                     `schema_version: SchemaVersion<3>` (the current version)";

pub(super) fn collect(input: &DeriveInput, model: &Model<'_>, errors: &mut Errors) -> Versions {
    let mut attrs = Attr::SchemaVersion.find(&input.attrs);
    let attr = attrs.next();
    for extra in attrs {
        errors.spanned(
            extra,
            "one `#[schema_version(...)]` per model: list every older shape in its `older(...)`",
        );
    }
    // The version fields, whatever the attribute says.
    let fields: Vec<(&crate::ast::Field<'_>, VersionType)> = model
        .fields
        .iter()
        .filter_map(|f| version_type(f.ty).map(|v| (f, v)))
        .collect();
    for f in &model.fields {
        for a in f.attrs_of(Attr::SchemaVersion) {
            errors.spanned(
                a,
                "`#[schema_version(...)]` goes on the struct; the version field is the field of \
                 type `SchemaVersion<N>`, with no attribute",
            );
        }
    }
    let Some(attr) = attr else {
        if let Some((f, _)) = fields.first() {
            errors.spanned(
                f.ty,
                format!(
                    "a `SchemaVersion` field needs `#[schema_version(older(...))]` on `{}`, \
                     listing the older shapes (without older shapes, remove the field)",
                    model.ident
                ),
            );
        }
        return Versions(None);
    };
    let mut older: Vec<Older> = Vec::new();
    let mut missing: Option<(u32, Span)> = None;
    let mut older_seen = false;
    let clean = match &attr.meta {
        syn::Meta::List(list) => crate::options::parse(
            list.tokens.clone(),
            "schema_version",
            &["older", "missing"],
            errors,
            |key, input, errors| {
                if key == "older" {
                    older_seen = true;
                    let content;
                    syn::parenthesized!(content in input);
                    while !content.is_empty() {
                        let ty: Type = content.parse()?;
                        content.parse::<Token![=]>()?;
                        let lit: LitInt = content.parse()?;
                        match lit.base10_parse::<u32>() {
                            Ok(v) if v > 0 => older.push(Older { ty, version: v }),
                            _ => errors.spanned(&lit, "a version is a number above 0"),
                        }
                        if !content.is_empty() {
                            content.parse::<Token![,]>()?;
                        }
                    }
                } else {
                    input.parse::<Token![=]>()?;
                    let lit: LitInt = input.parse()?;
                    match lit.base10_parse::<u32>() {
                        Ok(v) => missing = Some((v, lit.span())),
                        Err(_) => errors.spanned(&lit, "`missing` is a version number"),
                    }
                }
                Ok(())
            },
        ),
        _ => {
            errors.spanned(attr, format!("write {USAGE}"));
            false
        }
    };
    if !clean {
        return Versions(None);
    }
    if !older_seen || older.is_empty() {
        errors.spanned(
            attr,
            format!("list the older shapes and their versions: {USAGE}"),
        );
        return Versions(None);
    }
    if matches!(input.data, syn::Data::Enum(_)) {
        // Not reached: enums take the polymorphic derive, which refuses the attribute.
        return Versions(None);
    }
    let (field, current) = match fields.as_slice() {
        [] => {
            errors.spanned(
                attr,
                format!(
                    "`{}` has no version field: add `schema_version: SchemaVersion<{}>` (the \
                     current version; any name, stored under its serde name)",
                    model.ident,
                    older.last().map_or(2, |o| o.version + 1)
                ),
            );
            return Versions(None);
        }
        [(f, v)] => match v {
            Ok((n, _)) => (*f, *n),
            Err(span) => {
                errors.at(
                    *span,
                    "the current version is a number above 0, written as a literal: \
                     `SchemaVersion<3>`",
                );
                return Versions(None);
            }
        },
        [_, (second, _), ..] => {
            errors.spanned(
                second.ty,
                "one `SchemaVersion` field per model: the document's version is stored once",
            );
            return Versions(None);
        }
    };
    if !field.serialized || field.custom_serializer {
        errors.spanned(
            field.ty,
            "the version field is stored with every document: remove `#[serde(skip..)]` and \
             `with`",
        );
        return Versions(None);
    }
    // The version is stored under its own name: not `_id`, not another field's.
    if field.bson_name == "_id" {
        errors.spanned(
            field.ty,
            "the version field is stored as `_id`: the document's id would be the version; \
             give it a name of its own (`#[serde(rename = \"schemaVersion\")]`)",
        );
        return Versions(None);
    }
    if let Some(other) = model
        .fields
        .iter()
        .find(|f| f.serialized && f.rust_name != field.rust_name && f.bson_name == field.bson_name)
    {
        errors.spanned(
            field.ty,
            format!(
                "the version field is stored as `{}`, as the field `{}` is: one would overwrite \
                 the other; give it a name of its own",
                field.bson_name, other.rust_name
            ),
        );
        return Versions(None);
    }
    let mut ok = true;
    for pair in older.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if b.version <= a.version {
            errors.spanned(
                &b.ty,
                format!(
                    "versions increase: `{}` is version {}, after version {}",
                    crate::errors::type_string(&b.ty),
                    b.version,
                    a.version
                ),
            );
            ok = false;
        } else if b.version != a.version + 1 {
            errors.spanned(
                &b.ty,
                format!(
                    "a gap in the chain: no version between {} and {}; declare the shape of \
                     version {} (each shape upgrades to the next)",
                    a.version,
                    b.version,
                    a.version + 1
                ),
            );
            ok = false;
        }
    }
    if let Some(last) = older.last().filter(|_| ok) {
        if last.version >= current {
            errors.spanned(
                &last.ty,
                format!(
                    "an older version is below the current one: `{}` is version {}, and the \
                     field says the current version is {current}",
                    crate::errors::type_string(&last.ty),
                    last.version
                ),
            );
            ok = false;
        } else if last.version + 1 != current {
            errors.spanned(
                &last.ty,
                format!(
                    "a gap in the chain: version {} is the last older one, and the current is \
                     {current}; declare the shape of version {} too",
                    last.version,
                    last.version + 1
                ),
            );
            ok = false;
        }
    }
    let first = older.first().map_or(current, |o| o.version);
    let missing = match missing {
        None => first,
        Some((v, span)) => {
            if v != current && !older.iter().any(|o| o.version == v) {
                errors.at(
                    span,
                    format!(
                        "`missing` names a declared version ({first} to {current}), and {v} is \
                         not one"
                    ),
                );
                ok = false;
            }
            v
        }
    };
    if !ok {
        return Versions(None);
    }
    Versions(Some(Declared {
        field: field.bson_name.clone(),
        current,
        missing,
        older,
    }))
}
