//! `#[tree(parent = parent, ancestors = ancestors, key = name)]` on a node model and
//! `#[in_tree(Category, node = direct_category, path = category_path)]` on a model whose
//! documents sit in the tree: the `TreeSpec` and `HolderSpec` (with their indexes), `TreeNode`
//! and `InTree`, and so `Model::collection(&db).tree()`. The options are checked here; the fields' types against
//! the tree's key type by constants of generated code (the runtime's `tree::key_probe`).
//!
//! `parse.rs` reads the attributes through `options.rs`; `validate.rs` checks what was read against
//! the model; `expand.rs` generates the code.

use proc_macro2::{Span, TokenStream};
use quote::format_ident;
use syn::ext::IdentExt;
use syn::{DeriveInput, Ident};

use crate::ast::{Field, Model};
use crate::attr::Attr;
use crate::schema::{Pattern, PatternDef};

mod expand;
mod parse;
mod validate;

const TREE_HELP: &str = "`#[tree(parent = parent, ancestors = ancestors)]`: `parent: \
                         Option<K>` holds the parent's key, `ancestors: Vec<K>` the keys from the \
                         root down to the parent; `key = name` names nodes by a field other than \
                         `_id`";

const HOLDER_HELP: &str = "`#[in_tree(Category, node = category, path = category_path)]`: \
                           `category: K` (or `Option<K>`) holds the key of the node the document \
                           sits in, `category_path: Vec<K>` the keys from the root down to it; \
                           `copy = category_ref` names a field holding an extended reference to \
                           that node, which then follows it";

use parse::{parse_holder, parse_tree};
use validate::refuse_misplaced;

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

struct HolderDecl {
    tree: syn::Path,
    node: Named,
    path: Named,
    /// `copy = ..`: the field holding a copy of the node (an extended reference), and its type.
    copy: Option<(Named, syn::Type)>,
}

struct Trees {
    tree: Option<TreeDecl>,
    holders: Vec<HolderDecl>,
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
