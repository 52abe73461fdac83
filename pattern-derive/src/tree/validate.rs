//! Checking the attributes against the model: where they go, and the roles of the fields they
//! name (a key, an optional key, a list of keys) on the tree and on its holders.

use syn::{DeriveInput, Ident};

use super::{HOLDER_HELP, TREE_HELP};
use crate::ast::{Field, Model};
use crate::attr::Attr;
use crate::errors::{type_string, Errors};

/// `#[tree]` or `#[in_tree]` on a field: they go on the struct.
pub(super) fn refuse_misplaced(input: &DeriveInput, errors: &mut Errors) {
    let syn::Data::Struct(s) = &input.data else {
        return;
    };
    for attr in s.fields.iter().flat_map(|f| &f.attrs) {
        for (which, help) in [(Attr::Tree, TREE_HELP), (Attr::InTree, HOLDER_HELP)] {
            if which.is(attr) {
                errors.spanned(
                    attr,
                    format!(
                        "`#[{}(..)]` goes on the struct, naming its fields: {help}",
                        which.name()
                    ),
                );
            }
        }
    }
}

/// What each option of `#[tree]` names.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    Key,
    Parent,
    Ancestors,
}

impl Role {
    /// The role a field's type fits, by its syntax: a `Vec` holds the ancestors, an `Option`
    /// the parent, anything else the key.
    fn fitting(ty: &syn::Type) -> Role {
        if crate::types::vec_element(ty).is_some() {
            Role::Ancestors
        } else if crate::types::option_inner(ty).is_some() {
            Role::Parent
        } else {
            Role::Key
        }
    }

    pub(super) fn option(self) -> &'static str {
        match self {
            Role::Key => "key",
            Role::Parent => "parent",
            Role::Ancestors => "ancestors",
        }
    }

    /// What the option must name.
    fn names(self) -> &'static str {
        match self {
            Role::Key => {
                "`key` must name the node's own key, a field that is neither an Option nor a \
                 Vec, or be left out to name the nodes by `_id`"
            }
            Role::Parent => "`parent` must name the `Option<K>` field holding the parent's key",
            Role::Ancestors => {
                "`ancestors` must name the `Vec<K>` field holding the keys from the root down \
                 to the parent"
            }
        }
    }
}

/// Whether the key, `parent` and `ancestors` are three different fields; when two are one,
/// an error at each option whose role the field's type does not fit (a `Vec` is the
/// ancestors, an `Option` the parent, anything else the key), with what it must name and, when
/// one field of the model fits it, that field.
pub(super) fn same_fields(
    roles: &[(Role, Option<&Ident>, &Field<'_>); 3],
    model: &Model<'_>,
    errors: &mut Errors,
) -> bool {
    let shared = |i: usize| -> Vec<usize> {
        (0..roles.len())
            .filter(|&j| j != i && roles[j].2.bson_name == roles[i].2.bson_name)
            .collect()
    };
    let colliding: Vec<usize> = (0..roles.len())
        .filter(|&i| !shared(i).is_empty())
        .collect();
    if colliding.is_empty() {
        return true;
    }
    // The option the field's type fits is right, the others are wrong; when it fits none of
    // them, each is. The default key (`_id`) is never written, so never blamed: if it is the
    // one that does not fit, the written options are.
    let written: Vec<usize> = colliding
        .iter()
        .copied()
        .filter(|&i| roles[i].1.is_some())
        .collect();
    let misfits: Vec<usize> = written
        .iter()
        .copied()
        .filter(|&i| Role::fitting(roles[i].2.ty) != roles[i].0)
        .collect();
    let blamed = if misfits.is_empty() { written } else { misfits };
    let taken: Vec<&str> = roles.iter().map(|(_, _, f)| f.bson_name.as_str()).collect();
    for i in blamed {
        let (role, Some(ident), field) = roles[i] else {
            continue;
        };
        let same_as = shared(i)
            .into_iter()
            .map(|j| match roles[j].1 {
                Some(w) => format!("`{} = {}`", roles[j].0.option(), crate::ast::unraw(w)),
                None => "the key (`_id` by default)".to_owned(),
            })
            .collect::<Vec<_>>()
            .join(" and ");
        let candidates: Vec<&Field<'_>> = model
            .fields
            .iter()
            .filter(|f| f.serialized && !taken.contains(&f.bson_name.as_str()))
            .filter(|f| Role::fitting(f.ty) == role)
            // Nodes named by `_id` need no `key = ..`: `Role::names` says so.
            .filter(|f| !(role == Role::Key && f.bson_name == "_id"))
            .collect();
        let suggestion = match candidates.as_slice() {
            [one] => format!(
                " (`{}: {}` would fit: `{} = {}`)",
                one.rust_name,
                type_string(one.ty),
                role.option(),
                one.rust_name
            ),
            _ => String::new(),
        };
        let held = match Role::fitting(field.ty) {
            Role::Key => "the node's own key",
            Role::Parent => "the parent's key",
            Role::Ancestors => "the ancestors' keys",
        };
        errors.spanned(
            ident,
            format!(
                "`{} = {}` names the same field as {same_as}, whose type `{}` fits {held}: \
                 {}{suggestion}. The key, `parent` and `ancestors` are three different fields: \
                 `K`, `Option<K>` and `Vec<K>`",
                role.option(),
                crate::ast::unraw(ident),
                type_string(field.ty),
                role.names(),
            ),
        );
    }
    false
}
