//! Reading `#[tree(..)]` and `#[in_tree(..)]` through `options.rs`.

use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{Ident, Token};

use crate::ast::Model;
use crate::attr::Attr;
use crate::errors::Errors;

use super::validate::{same_fields, Role};
use super::*;

/// `key = value` pairs whose values are field names, with the keys allowed; `None` when one
/// was unknown or did not parse (reported).
fn parse_pairs(
    input: ParseStream<'_>,
    options: &[&str],
    what: &str,
    errors: &mut Errors,
) -> syn::Result<Option<Vec<(Ident, Ident)>>> {
    let mut pairs: Vec<(Ident, Ident)> = Vec::new();
    let clean = crate::options::read(input, what, options, errors, |key, input, _| {
        input.parse::<Token![=]>()?;
        pairs.push((key.clone(), Ident::parse_any(input)?));
        Ok(())
    })?;
    Ok(clean.then_some(pairs))
}

fn value_of<'a>(pairs: &'a [(Ident, Ident)], key: &str) -> Option<&'a Ident> {
    pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

pub(super) fn parse_tree(
    attr: &syn::Attribute,
    model: &Model<'_>,
    errors: &mut Errors,
) -> Option<TreeDecl> {
    let syn::Meta::List(list) = &attr.meta else {
        errors.spanned(attr, TREE_HELP);
        return None;
    };
    let pairs = match (|input: ParseStream<'_>| {
        parse_pairs(input, &["parent", "ancestors", "key"], "tree", errors)
    })
    .parse2(list.tokens.clone())
    {
        Ok(Some(p)) => p,
        Ok(None) => return None,
        Err(e) => {
            errors.push(e);
            return None;
        }
    };
    let mut ok = true;
    for required in ["parent", "ancestors"] {
        if value_of(&pairs, required).is_none() {
            errors.spanned(
                attr.path(),
                format!("`#[tree]` needs `{required} = ..`; {TREE_HELP}"),
            );
            ok = false;
        }
    }
    let mut field = |key: &str, what: &str| {
        value_of(&pairs, key)
            .map(|ident| (ident, crate::ast::stored_field(model, ident, what, errors)))
    };
    let parent = field("parent", "the tree's parent field");
    let ancestors = field("ancestors", "the tree's ancestors field");
    let key = field("key", "the tree's key field");
    let key_field = match &key {
        Some((_, f)) => *f,
        None => {
            let id = model.fields.iter().find(|f| f.bson_name == "_id");
            if id.is_none() {
                errors.spanned(
                    attr.path(),
                    "a tree names its nodes by `_id` unless `key = ..` says otherwise, and this \
                     model has no field serialized as `_id`",
                );
            }
            id
        }
    };
    let (
        Some((parent_ident, Some(parent))),
        Some((ancestors_ident, Some(ancestors))),
        Some(key_field),
    ) = (parent, ancestors, key_field)
    else {
        return None;
    };
    if !ok {
        return None;
    }
    if let Some((key_ident, _)) = &key {
        if key_field.bson_name == "_id" {
            errors.spanned(
                key_ident,
                "the key is `_id` by default: leave `key = ..` out",
            );
            return None;
        }
    }
    let roles = [
        (Role::Key, key.as_ref().map(|(i, _)| *i), key_field),
        (Role::Parent, Some(parent_ident), parent),
        (Role::Ancestors, Some(ancestors_ident), ancestors),
    ];
    if !same_fields(&roles, model, errors) {
        return None;
    }
    Some(TreeDecl {
        key: Named::of(
            key_field,
            key.as_ref().map_or(attr.path().span(), |(i, _)| i.span()),
        ),
        key_ty: key_field.ty.clone(),
        key_display: key_field.rust_name.clone(),
        parent: Named::of(parent, parent_ident.span()),
        ancestors: Named::of(ancestors, ancestors_ident.span()),
    })
}

pub(super) fn parse_holder(
    attr: &syn::Attribute,
    model: &Model<'_>,
    errors: &mut Errors,
) -> Option<HolderDecl> {
    let syn::Meta::List(list) = &attr.meta else {
        errors.spanned(attr, HOLDER_HELP);
        return None;
    };
    let parsed = (|input: ParseStream<'_>| {
        let tree: syn::Path = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                format!("name the tree's node model first; {HOLDER_HELP}"),
            )
        })?;
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
        }
        let pairs = parse_pairs(input, &["node", "path", "copy"], "in_tree", errors)?;
        Ok((tree, pairs))
    })
    .parse2(list.tokens.clone());
    let (tree, pairs) = match parsed {
        Ok((tree, Some(pairs))) => (tree, pairs),
        Ok((_, None)) => return None,
        Err(e) => {
            errors.push(e);
            return None;
        }
    };
    let mut fields = Vec::new();
    for (key, what) in [
        ("node", "the holder's node field"),
        ("path", "the holder's path field"),
    ] {
        match value_of(&pairs, key) {
            None => {
                errors.spanned(
                    attr.path(),
                    format!("`#[in_tree]` needs `{key} = ..`; {HOLDER_HELP}"),
                );
                fields.push(None);
            }
            Some(ident) => fields.push(
                crate::ast::stored_field(model, ident, what, errors)
                    .map(|f| Named::of(f, ident.span())),
            ),
        }
    }
    let copy = value_of(&pairs, "copy").and_then(|ident| {
        let field =
            crate::ast::stored_field(model, ident, "the holder's copy of its node", errors)?;
        let propagated = field.attrs.iter().any(|a| {
            Attr::ExtendedRef.is(a)
                && a.meta
                    .require_list()
                    .is_ok_and(|l| l.tokens.to_string().contains("propagate"))
        });
        if !propagated {
            errors.spanned(
                ident,
                format!(
                    "`copy = {ident}` names the copy of the node that follows it: mark the field \
                     `#[extended_ref(propagate)]`, so that it follows the node's changes too"
                ),
            );
            return None;
        }
        Some((Named::of(field, ident.span()), field.ty.clone()))
    });
    let path = fields.pop().flatten();
    let node = fields.pop().flatten();
    let (node, path) = (node?, path?);
    if node.bson_name == path.bson_name {
        errors.spanned(&path.ident, "`node` and `path` are two different fields");
        return None;
    }
    if let Some((copy, _)) = &copy {
        if copy.bson_name == node.bson_name || copy.bson_name == path.bson_name {
            errors.spanned(
                &copy.ident,
                "`copy` holds the node's extended reference, beside `node` and `path`: three \
                 different fields",
            );
            return None;
        }
    }
    Some(HolderDecl {
        tree,
        node,
        path,
        copy,
    })
}
