//! `#[tree(parent = parent, ancestors = ancestors, key = name)]` on a node model and
//! `#[in_tree(Category, node = direct_category, path = category_path)]` on a model whose
//! documents sit in the tree: the `TreeSpec` and `HolderSpec` (with their indexes), `TreeNode`
//! and `InTree`, and so `Model::collection(&db).tree()`. The options are checked here; the fields' types against
//! the tree's key type by constants of generated code (the runtime's `tree::key_probe`).

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{DeriveInput, Ident, Token};

use crate::ast::{Field, Model};
use crate::attr::Attr;
use crate::errors::{fail_with, type_string, Errors};
use crate::schema::{Pattern, PatternDef};

/// The tree pattern's entry points.
pub(crate) const PATTERN: PatternDef = PatternDef {
    model: |input: &DeriveInput, model, errors| {
        refuse_misplaced(input, errors);
        // Refused on a `#[versioned]` model (`combinations.rs`).
        let mut trees = Attr::Tree.find(&input.attrs);
        let tree = trees.next().and_then(|attr| {
            if crate::combinations::model_refuses(input, model, Attr::Tree) {
                return None;
            }
            parse_tree(attr, model, errors)
        });
        for extra in trees {
            errors.spanned(extra, "one `#[tree(..)]` per model");
        }
        let holders = Attr::InTree
            .find(&input.attrs)
            .filter_map(|attr| {
                if crate::combinations::model_refuses(input, model, Attr::InTree) {
                    return None;
                }
                parse_holder(attr, model, errors)
            })
            .collect();
        Box::new(Trees { tree, holders })
    },
    fields: None,
};

/// `#[tree]` or `#[in_tree]` on a field: they go on the struct.
fn refuse_misplaced(input: &DeriveInput, errors: &mut Errors) {
    let syn::Data::Struct(s) = &input.data else {
        return;
    };
    for attr in s.fields.iter().flat_map(|f| &f.attrs) {
        for name in ["tree", "in_tree"] {
            if attr.path().is_ident(name) {
                errors.spanned(
                    attr,
                    format!(
                        "`#[{name}(..)]` goes on the struct, naming its fields: {}",
                        if name == "tree" {
                            TREE_HELP
                        } else {
                            HOLDER_HELP
                        }
                    ),
                );
            }
        }
    }
}

const TREE_HELP: &str = "`#[tree(parent = parent, ancestors = ancestors)]`: `parent: \
                         Option<K>` holds the parent's key, `ancestors: Vec<K>` the keys from the \
                         root down to the parent; `key = name` names nodes by a field other than \
                         `_id`";

const HOLDER_HELP: &str = "`#[in_tree(Category, node = category, path = category_path)]`: \
                           `category: K` (or `Option<K>`) holds the key of the node the document \
                           sits in, `category_path: Vec<K>` the keys from the root down to it; \
                           `copy = category_ref` names a field holding an extended reference to \
                           that node, which then follows it";

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

/// A field of the model, by Rust name: what the generated code names.
struct Named {
    ident: Ident,
    bson_name: String,
}

impl Named {
    fn of(field: &Field<'_>, span: Span) -> Self {
        Named {
            ident: Ident::new(&field.ident.unraw().to_string(), span),
            bson_name: field.bson_name.clone(),
        }
    }
}

struct TreeDecl {
    key: Named,
    key_ty: syn::Type,
    /// The key field as written in the attribute, or the `_id` field.
    key_display: String,
    parent: Named,
    ancestors: Named,
}

fn parse_tree(attr: &syn::Attribute, model: &Model<'_>, errors: &mut Errors) -> Option<TreeDecl> {
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

/// What each option of `#[tree]` names.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
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

    fn option(self) -> &'static str {
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
fn same_fields(
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

struct HolderDecl {
    tree: syn::Path,
    node: Named,
    path: Named,
    /// `copy = ..`: the field holding a copy of the node (an extended reference), and its type.
    copy: Option<(Named, syn::Type)>,
}

fn parse_holder(
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

struct Trees {
    tree: Option<TreeDecl>,
    holders: Vec<HolderDecl>,
}

/// The constant that fails with `message`, at the field's name in the attribute, unless one of
/// `methods` of the key probe of the model's `field` against `key_ty` passes.
fn key_check(
    p: &TokenStream,
    model: &Ident,
    field: &Named,
    key_ty: &TokenStream,
    methods: &[&str],
    message: &str,
) -> TokenStream {
    let f = &field.ident;
    let span = f.span();
    let model_ident = Ident::new(&model.to_string(), span);
    let field = quote_spanned!(span=> #model_ident::FIELDS.#f);
    let verdicts = methods.iter().map(|m| {
        let m = Ident::new(m, span);
        quote_spanned! {span=>
            #p::passes(|| {
                #[allow(unused_imports)]
                use #p::{ProbeKey as _, ProbeKeys as _, ProbeOptionalKey as _, ProbeOtherKey as _};
                (&&#p::KeyProbe::<_, #key_ty>::of(#field)).#m()
            })
        }
    });
    let fails = quote_spanned! {span=>
        if #(#verdicts)||* {
            ::core::option::Option::None
        } else {
            ::core::option::Option::Some(#message)
        }
    };
    fail_with(fails, span, span)
}

impl Trees {
    fn tree_items(
        &self,
        tree: &TreeDecl,
        model: &Model<'_>,
        p: &TokenStream,
        with_checks: bool,
    ) -> TokenStream {
        let ident = model.ident;
        let (key, parent, ancestors) = (
            &tree.key.bson_name,
            &tree.parent.bson_name,
            &tree.ancestors.bson_name,
        );
        // The parent and the ancestors, and the key (unique) unless it is `_id`.
        let indexes: Vec<TokenStream> = tree
            .index_keys()
            .iter()
            .map(|k| crate::index::plain_spec(p, &[k.as_str()], None, k == key, None))
            .collect();
        let key_ty = &tree.key_ty;
        let mut checks = TokenStream::new();
        if with_checks {
            let key_text = type_string(key_ty);
            let key_name = &tree.key_display;
            for (field, methods, message) in [
                (
                    &tree.parent,
                    &["optional_key"][..],
                    format!(
                        "`{}` holds the parent's key: make it `Option<{key_text}>`, the type of \
                         `{key_name}` in an Option (`None` for a root)",
                        tree.parent.ident
                    ),
                ),
                (
                    &tree.ancestors,
                    &["keys"][..],
                    format!(
                        "`{}` holds the keys of the ancestors, root first: make it \
                         `Vec<{key_text}>`, a Vec of the type of `{key_name}`",
                        tree.ancestors.ident
                    ),
                ),
            ] {
                checks.extend(key_check(
                    p,
                    ident,
                    field,
                    &quote!(#key_ty),
                    methods,
                    &message,
                ));
            }
        }
        // A node named by a field other than `_id` can be renamed.
        let renamable = (key != "_id").then(|| {
            quote! {
                #[automatically_derived]
                impl #p::RenamableTree for #ident {}
            }
        });
        quote! {
            #renamable
            static __TREE: #p::TreeSpec = #p::TreeSpec::from_parts(#p::TreeParts {
                model: || <#ident as #p::Model>::SCHEMA,
                key: #key,
                parent: #parent,
                ancestors: #ancestors,
                indexes: &[#(#indexes),*],
            });
            #checks

            #[automatically_derived]
            impl #p::TreeNode for #ident {
                type Key = #key_ty;
                const TREE: &'static #p::TreeSpec = &__TREE;
            }
        }
    }

    fn holder_items(
        &self,
        index: usize,
        holder: &HolderDecl,
        model: &Model<'_>,
        p: &TokenStream,
        with_checks: bool,
    ) -> TokenStream {
        let ident = model.ident;
        let tree = &holder.tree;
        let tree_span = tree.span();
        let tree_text = tree.to_token_stream().to_string().replace(' ', "");
        let of = format_ident!("__InTree{}", index);
        let static_ident = format_ident!("__IN_TREE_{}", index);
        let (node, path) = (&holder.node.bson_name, &holder.path.bson_name);
        let indexes = [node, path].map(|k| crate::index::plain_spec(p, &[k], None, false, None));
        let tree_key = quote_spanned!(tree_span=> <#tree as #p::TreeNode>::Key);
        let tree_spec = quote_spanned!(tree_span=> <#tree as #p::TreeNode>::TREE);
        let key_ty = quote_spanned!(tree_span=> <#of as __TreeOf>::Key);
        let mut checks = TokenStream::new();
        let copies: Vec<&str> = holder
            .copy
            .iter()
            .map(|(c, _)| c.bson_name.as_str())
            .collect();
        if let (true, Some((copy, ty))) = (with_checks, &holder.copy) {
            // The copy's type copies the tree's node model: one error at the field's name.
            let span = copy.ident.span();
            checks.extend(quote_spanned! {span=>
                const _: fn() = || {
                    fn node_copy<C: #p::NodeCopy<<#of as __TreeOf>::Tree>>() {}
                    node_copy::<#ty>();
                };
            });
        }
        if with_checks {
            for (field, methods, message) in [
                (
                    &holder.node,
                    &["key", "optional_key"][..],
                    format!(
                        "`{}` holds the key of the `{tree_text}` node the document sits in: give \
                         it the type of `{tree_text}`'s key, or an Option of it",
                        holder.node.ident
                    ),
                ),
                (
                    &holder.path,
                    &["keys"][..],
                    format!(
                        "`{}` holds the path of the document's node, root first: make it a Vec \
                         of `{tree_text}`'s key type",
                        holder.path.ident
                    ),
                ),
            ] {
                checks.extend(key_check(p, ident, field, &key_ty, methods, &message));
            }
        }
        quote! {
            struct #of;
            // The one place that names the tree as a `TreeNode`: a model that is not a tree is
            // one error, at its name.
            impl __TreeOf for #of {
                type Tree = #tree;
                type Key = #tree_key;
                const TREE: &'static #p::TreeSpec = #tree_spec;
            }
            static #static_ident: #p::HolderSpec = #p::HolderSpec::from_parts(#p::HolderParts {
                model: || <#ident as #p::Model>::SCHEMA,
                tree: <#of as __TreeOf>::TREE,
                node: #node,
                path: #path,
                copies: &[#(#copies),*],
                indexes: &[#(#indexes),*],
            });
            #checks

            #[automatically_derived]
            impl #p::InTree<<#of as __TreeOf>::Tree> for #ident {
                const HOLDER: &'static #p::HolderSpec = &#static_ident;
            }
        }
    }

    fn expand(&self, model: &Model<'_>, with_checks: bool) -> TokenStream {
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        let mut out = TokenStream::new();
        if let Some(tree) = &self.tree {
            out.extend(self.tree_items(tree, model, &p, with_checks));
        }
        if !self.holders.is_empty() {
            out.extend(quote! {
                trait __TreeOf {
                    type Tree;
                    type Key;
                    const TREE: &'static #p::TreeSpec;
                }
            });
            for (i, h) in self.holders.iter().enumerate() {
                out.extend(self.holder_items(i, h, model, &p, with_checks));
            }
        }
        out
    }
}

impl TreeDecl {
    /// The keys of the node model's indexes, one key each: the parent, the ancestors, and the
    /// key (unique) unless it is `_id`.
    fn index_keys(&self) -> Vec<String> {
        let mut keys = vec![
            self.parent.bson_name.clone(),
            self.ancestors.bson_name.clone(),
        ];
        if self.key.bson_name != "_id" {
            keys.push(self.key.bson_name.clone());
        }
        keys
    }
}

impl Pattern for Trees {
    fn own_indexes(&self) -> Vec<Vec<(String, i32)>> {
        let tree = self.tree.iter().flat_map(TreeDecl::index_keys);
        // A holder's node and path.
        let holders = self
            .holders
            .iter()
            .flat_map(|h| [h.node.bson_name.clone(), h.path.bson_name.clone()]);
        tree.chain(holders).map(|k| vec![(k, 1)]).collect()
    }

    fn kept(&self, field: &Field<'_>) -> Option<&'static str> {
        let named = |n: &Named| n.ident == field.rust_name;
        let in_tree = self
            .tree
            .iter()
            .any(|t| named(&t.key) || named(&t.parent) || named(&t.ancestors))
            || self
                .holders
                .iter()
                .any(|h| named(&h.node) || named(&h.path));
        if in_tree {
            return Some("TreeLink");
        }
        self.holders
            .iter()
            .any(|h| h.copy.as_ref().is_some_and(|(c, _)| named(c)))
            .then_some("ExtendedRefCopy")
    }

    fn items(&self, model: &Model<'_>) -> TokenStream {
        self.expand(model, true)
    }

    fn specs(&self) -> Vec<TokenStream> {
        let tree = self.tree.as_ref().map(|_| format_ident!("__TREE"));
        let holders = (0..self.holders.len()).map(|i| format_ident!("__IN_TREE_{}", i));
        crate::schema::spec_refs(tree.into_iter().chain(holders))
    }

    fn stubs(&self, model: &Model<'_>) -> TokenStream {
        // What read well keeps its impls (without the type checks), so uses of `tree()` and
        // `holders::<Self>()` do not cascade.
        self.expand(model, false)
    }
}
