//! Keyset pages known at compile time: for each order an index of the model serves, an impl of
//! the runtime's `query::order::ServedBy`, so that `Find::after` over a typed sort no index
//! serves is a compile error (the runtime's `query::order` says how a sort's keys are typed).
//!
//! The orders come from the model's `#[index]`es and the indexes its patterns declare on its
//! own collection ([`Pattern::own_indexes`](crate::schema::Pattern::own_indexes)): the
//! indexes the runtime's own check (`keyset::served`) reads. The schema lists them too
//! (`SchemaParts::orders`), and a test compares that list with the runtime's for every model.

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::Field;

/// Each index's keys up to the first one a sort cannot follow from the index's start: a text,
/// hashed or geo key (direction `0`), a dotted path, or `_id` (which a keyset sort ends with
/// anyway). Empty lists are left out, and repeats.
pub(crate) fn orders(indexes: &[Vec<(String, i32)>]) -> Vec<Vec<(String, i32)>> {
    let mut seen = BTreeSet::new();
    indexes
        .iter()
        .map(|keys| {
            keys.iter()
                .take_while(|(path, d)| *d != 0 && !path.contains('.') && path != "_id")
                .cloned()
                .collect::<Vec<_>>()
        })
        .filter(|order| !order.is_empty() && seen.insert(order.clone()))
        .collect()
}

/// The `orders` entry of the schema: `&[&[(path, direction)], ..]`.
pub(crate) fn schema_orders(orders: &[Vec<(String, i32)>]) -> TokenStream {
    let lists = orders.iter().map(|o| {
        let keys = o.iter().map(|(k, d)| quote!((#k, #d)));
        quote!(&[#(#keys),*])
    });
    quote!(&[#(#lists),*])
}

/// The BSON name of each stored field, in the order of the typed names, for
/// [`served_impls`]: empty for an array field (a `Vec`, an array, or an `Option` of one), which
/// a sort orders by one of its items, so that a page after its value has no single place.
pub(crate) fn sort_names<'a>(fields: impl Iterator<Item = &'a Field<'a>>) -> Vec<&'a str> {
    fields
        .filter(|f| f.serialized)
        .map(|f| {
            let ty = crate::types::option_inner(f.ty).unwrap_or(f.ty);
            let array =
                crate::types::vec_element(ty).is_some() || matches!(ty, syn::Type::Array(_));
            if array {
                ""
            } else {
                f.bson_name.as_str()
            }
        })
        .collect()
}

/// The `ServedBy<root>` impls of every sort a keyset page may follow: a prefix of an order
/// (each key a field of `names`, the stored fields in the order of their typed names), in its
/// directions or all reversed, then `_id` either way; and `_id` alone. Nothing when `names`
/// has no `_id`.
pub(crate) fn served_impls(
    p: &TokenStream,
    root: &syn::Ident,
    names: &[&str],
    orders: &[Vec<(String, i32)>],
) -> TokenStream {
    let Some(id) = names.iter().position(|n| *n == "_id") else {
        return TokenStream::new();
    };
    let place = |path: &str| names.iter().position(|n| !n.is_empty() && *n == path);
    let mut sorts: BTreeSet<Vec<(usize, i32)>> = BTreeSet::new();
    for dir in [1, -1] {
        sorts.insert(vec![(id, dir)]);
    }
    for order in orders {
        let keys: Vec<(usize, i32)> = order
            .iter()
            .map_while(|(path, d)| place(path).map(|i| (i, *d)))
            .collect();
        for len in 1..=keys.len() {
            for flip in [1, -1] {
                for id_dir in [1, -1] {
                    let mut sort: Vec<(usize, i32)> =
                        keys[..len].iter().map(|(i, d)| (*i, d * flip)).collect();
                    sort.push((id, id_dir));
                    sorts.insert(sort);
                }
            }
        }
    }
    let impls = sorts.iter().map(|sort| {
        // Last key first, as `Sort` builds its list.
        let list = sort.iter().fold(quote!(()), |rest, (i, d)| {
            let i = proc_macro2::Literal::usize_unsuffixed(*i);
            let key = if *d < 0 {
                quote!(#p::order::Desc<#p::order::Field<#i>>)
            } else {
                quote!(#p::order::Asc<#p::order::Field<#i>>)
            };
            quote!((#key, #rest))
        });
        // Not listed as a candidate in the error of an unserved sort: its keys are places,
        // which say nothing to the reader; the message says what to do.
        quote! {
            #[automatically_derived]
            #[diagnostic::do_not_recommend]
            impl #p::order::ServedBy<#root> for (#p::order::Known, #list) {}
        }
    });
    quote!(#(#impls)*)
}
