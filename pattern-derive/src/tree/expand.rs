//! The generated `TreeSpec`, the holders' `InTreeSpec`s and the constants that check the key
//! types of the fields named.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::Ident;

use crate::ast::Model;
use crate::errors::{fail_with, type_string};

use super::*;

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

    pub(super) fn expand(&self, model: &Model<'_>, with_checks: bool) -> TokenStream {
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
