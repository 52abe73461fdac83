//! Reading `#[extended_ref(Shape(fields..))]` on a source model and `#[extended_ref(mode)]` on
//! a holding field, each mistake into `Errors` at its token.

use super::*;
use crate::attr::Attr;

fn key_of(path: &syn::Path) -> String {
    path.get_ident()
        .map(IdentExt::unraw)
        .map_or_else(|| path.to_token_stream().to_string(), |i| i.to_string())
}

/// Skips an option's value (`= expr` or `(...)`) so parsing goes on after an error.
fn skip_value(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        let _: syn::Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        let _: TokenStream = content.parse()?;
    }
    Ok(())
}

/// The options of `#[extended_ref(...)]`, none for a bare `#[extended_ref]`.
fn options(
    attr: &syn::Attribute,
    each: impl FnMut(syn::meta::ParseNestedMeta<'_>) -> syn::Result<()>,
) -> syn::Result<()> {
    match attr.meta {
        syn::Meta::Path(_) => Ok(()),
        _ => attr.parse_nested_meta(each),
    }
}

pub(super) fn parse_shape(
    attr: &syn::Attribute,
    model: &Model<'_>,
    errors: &mut Errors,
) -> Option<Shape> {
    let mut shape: Option<(Ident, Vec<Ident>)> = None;
    let mut snapshot_only = false;
    let mut derives = Vec::new();
    let before = errors.count();
    let result = options(attr, |meta| {
        let key = key_of(&meta.path);
        match key.as_str() {
            "snapshot" => {
                if snapshot_only {
                    errors.spanned(&meta.path, "duplicate `snapshot`");
                }
                snapshot_only = true;
            }
            "derive" => {
                meta.parse_nested_meta(|d| {
                    derives.push(d.path.clone());
                    Ok(())
                })?;
            }
            "propagate" | "path" => {
                skip_value(&meta)?;
                errors.spanned(
                    &meta.path,
                    format!(
                        "`{key}` goes on a field that holds a reference; on the struct, \
                         `#[extended_ref]` declares a reference shape: \
                         `#[extended_ref(CustomerRef(name, address))]`"
                    ),
                );
            }
            _ => {
                let Some(ident) = meta.path.get_ident().cloned() else {
                    skip_value(&meta)?;
                    errors.spanned(
                        &meta.path,
                        "expected a reference shape: `#[extended_ref(CustomerRef(name, address))]`",
                    );
                    return Ok(());
                };
                let option_like = ident
                    .unraw()
                    .to_string()
                    .starts_with(|c: char| c.is_lowercase() || c == '_');
                if option_like && !meta.input.peek(syn::token::Paren) {
                    skip_value(&meta)?;
                    let key = ident.unraw().to_string();
                    errors.spanned(
                        &ident,
                        format!(
                            "unknown extended_ref option `{key}`{}; expected a reference \
                                 shape, `CustomerRef(name, address)`, or one of: {}",
                            did_you_mean(&key, SHAPE_OPTIONS.iter().copied()),
                            SHAPE_OPTIONS.join(", ")
                        ),
                    );
                    return Ok(());
                }
                if !meta.input.peek(syn::token::Paren) {
                    skip_value(&meta)?;
                    errors.spanned(
                        &ident,
                        format!(
                            "list the fields `{ident}` copies: `{ident}(name, address)` (the \
                             `_id` is always copied)"
                        ),
                    );
                    return Ok(());
                }
                let content;
                syn::parenthesized!(content in meta.input);
                let fields: Punctuated<Ident, Token![,]> =
                    content.parse_terminated(Ident::parse_any, Token![,])?;
                if shape.is_some() {
                    errors.spanned(
                        &ident,
                        "one reference shape per `#[extended_ref(...)]`: add another attribute \
                         for another shape",
                    );
                    return Ok(());
                }
                shape = Some((ident, fields.into_iter().collect()));
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        errors.push(e);
        return None;
    }
    let Some((ident, written)) = shape else {
        if errors.count() > before {
            return None; // the options already had an error
        }
        errors.spanned(
            attr,
            "`#[extended_ref]` on a struct declares a reference shape: the type to generate and \
             the fields it copies, `#[extended_ref(CustomerRef(name, address))]`",
        );
        return None;
    };
    if written.is_empty() {
        errors.spanned(
            &ident,
            format!(
                "`{ident}` copies no field: list the fields to copy, `{ident}(name, address)` \
                 (the `_id` is always copied)"
            ),
        );
    }
    let mut fields: Vec<Ident> = Vec::new();
    for f in written {
        let name = crate::ast::unraw(&f);
        let Some(source) = model.field(&name) else {
            errors.spanned(&f, model.unknown_field_message(&name, "copied field"));
            continue;
        };
        if source.bson_name == "_id" {
            errors.spanned(
                &f,
                "the `_id` is always copied (the copies are found by it): list only the other \
                 fields",
            );
        } else if !source.serialized {
            errors.spanned(
                &f,
                format!(
                    "`{name}` is never serialized (`#[serde(skip)]`): there is no stored value \
                     to copy"
                ),
            );
        } else if fields.iter().any(|g| crate::ast::unraw(g) == name) {
            errors.spanned(&f, format!("`{name}` is listed twice"));
        } else if !snapshot_only && source.has(Attr::Approximate) {
            errors.spanned(
                &f,
                format!(
                    "`{name}` is an `#[approximate]` counter: its events are written without \
                     reading the document, so a kept copy of it would go stale at the first \
                     one; copy it only as a `snapshot` (`#[extended_ref({ident}(..), \
                     snapshot)]`), or read the counter from the source"
                ),
            );
        } else {
            fields.push(f);
        }
    }
    Some(Shape {
        ident,
        fields,
        snapshot_only,
        derives,
    })
}

pub(super) fn parse_embed(
    attr: &syn::Attribute,
    field: &Field<'_>,
    versioned: bool,
    errors: &mut Errors,
) -> Option<Embed> {
    let mut mode: Option<Mode> = None;
    let mut path: Option<Ident> = None;
    let mut local = Errors::default();
    let result = options(attr, |meta| {
        let key = key_of(&meta.path);
        match key.as_str() {
            "propagate" | "snapshot" => {
                let this = if key == "propagate" {
                    Mode::Propagate
                } else {
                    Mode::Snapshot
                };
                match mode {
                    Some(m) if m == this => {
                        local.spanned(&meta.path, format!("duplicate `{key}`"));
                    }
                    Some(_) => local.spanned(
                        &meta.path,
                        "a field has one mode: `propagate` keeps the copies in sync with the \
                         source, `snapshot` keeps them as written",
                    ),
                    None => mode = Some(this),
                }
                if versioned && this == Mode::Propagate {
                    local.spanned(
                        &meta.path,
                        "`#[extended_ref(propagate)]` is not supported on a `#[versioned]` model \
                         yet: a change of the source would rewrite this copy without a new \
                         version or a copy of the old one, and the next `save` would undo it. \
                         Keep a `snapshot` copy (frozen when written), or keep the copy in a \
                         model of its own",
                    );
                }
            }
            "path" => {
                let value = meta.value()?;
                let ident = Ident::parse_any(value).map_err(|e| {
                    syn::Error::new(
                        e.span(),
                        "`path` names the item's field holding the reference: `path = product`",
                    )
                })?;
                if path.is_some() {
                    local.spanned(&meta.path, "duplicate `path`");
                }
                path = Some(ident);
            }
            _ if meta.input.peek(syn::token::Paren) => {
                skip_value(&meta)?;
                local.spanned(
                    &meta.path,
                    "reference shapes are declared on the source struct \
                     (`#[extended_ref(CustomerRef(name))]` on `Customer`); on a field, give the \
                     mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
                );
            }
            _ => {
                skip_value(&meta)?;
                local.spanned(
                    &meta.path,
                    format!(
                        "unknown extended_ref option `{key}`{}; expected one of: {}",
                        did_you_mean(&key, FIELD_OPTIONS.iter().copied()),
                        FIELD_OPTIONS.join(", ")
                    ),
                );
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        errors.push(e);
        return None;
    }
    let failed = !local.is_empty();
    if let Err(e) = local.into_result() {
        errors.push(e);
    }
    let Some(mode) = mode else {
        if !failed {
            errors.spanned(
                attr,
                "`#[extended_ref]` on a field needs a mode: `propagate` (the copies follow every \
                 change of the source) or `snapshot` (they keep the values they were written with)",
            );
        }
        return None;
    };
    if !field.serialized {
        errors.spanned(
            field.ident,
            "a field under `#[serde(skip)]` stores no copy: remove `#[extended_ref]` or the skip",
        );
        return None;
    }
    let item = match path {
        None => None,
        Some(p) => {
            let Some(item_ty) = crate::types::wrapped(field.ty, "Vec") else {
                errors.spanned(
                    field.ty,
                    format!(
                        "`path = {p}` names a field of the items of an array: it goes on a \
                         `Vec` of items (`items: Vec<OrderItem>`, the items holding `{p}`)"
                    ),
                );
                return None;
            };
            Some((item_ty.clone(), p))
        }
    };
    if failed {
        return None;
    }
    Some(Embed {
        field: field.ident.clone(),
        bson_name: field.bson_name.clone(),
        ty: field.ty.clone(),
        mode,
        item,
    })
}
