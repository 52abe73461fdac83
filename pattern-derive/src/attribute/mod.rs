//! The attribute pattern: `#[attribute(key = .., value = .., qualifiers(..))]` on an item
//! struct (with `#[derive(Fields)]`), `#[attribute]` on a model's `Vec` of such items, and
//! `#[derive(AttributeKey)]` on a fieldless enum of keys.
//!
//! The item's declaration is checked where it is written (key, value and qualifiers are fields,
//! every field is one of them); the model's field is checked to be a `Vec`, and its items to be
//! attribute items, by the generated `<Item as AttributeItem>` path at the element type. The
//! index's paths are the item's serde names, concatenated at compile time.
//!
//! `parse.rs` reads the attributes through `options.rs`; `validate.rs` checks what was read against
//! the model; `expand.rs` generates the code; `key.rs` is `derive(AttributeKey)`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::{Ident, LitStr};

use crate::ast::{Field, Model};
use crate::schema::{Pattern, PatternDef};

mod expand;
mod key;

pub(crate) use key::derive_key;
mod parse;
mod validate;

use expand::{item, spec_static};
use parse::collect;

/// The attribute pattern's entry points.
pub(crate) const PATTERN: PatternDef = PatternDef {
    model: |_, model, errors| {
        let fields = collect(model, errors);
        Box::new(AttributeFields(fields))
    },
    fields: Some(item),
};

/// A model's `#[attribute]` fields.
struct AttributeFields(Vec<AttributeField>);

struct AttributeField {
    ident: Ident,
    bson_name: String,
    elem: syn::Type,
    name: Option<LitStr>,
}

impl Pattern for AttributeFields {
    fn handle(&self, field: &Field<'_>) -> bool {
        self.0.iter().any(|a| &a.ident == field.ident)
    }

    fn kept(&self, field: &Field<'_>) -> Option<&'static str> {
        self.handle(field).then_some("AttributeItems")
    }

    fn items(&self, model: &Model<'_>) -> TokenStream {
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        let ident = model.ident;
        self.0
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let stat = spec_static(i);
                let field = &a.bson_name;
                let elem = &a.elem;
                let (lo, hi) = crate::errors::span_range(elem);
                let p_lo = crate::errors::respan_all(p.clone(), lo);
                let item = quote_spanned!(lo=> <#elem as #p_lo::AttributeItem>);
                let key = quote_spanned!(hi=> #item::KEY);
                let value = quote_spanned!(hi=> #item::VALUE);
                let key_const = format_ident!("{}_KEY", stat);
                let value_const = format_ident!("{}_VALUE", stat);
                let name_const = format_ident!("{}_NAME", stat);
                let concat = |parts: Vec<TokenStream>| {
                    crate::index::concat_expr(&p, parts, proc_macro2::Span::call_site())
                };
                let key_path = concat(vec![quote!(#field), quote!("."), key]);
                let value_path = concat(vec![quote!(#field), quote!("."), value]);
                let name = match &a.name {
                    Some(n) => quote!(#n),
                    None => concat(vec![
                        quote!(#key_const),
                        quote!("_1_"),
                        quote!(#value_const),
                        quote!("_1"),
                    ]),
                };
                let index = crate::schema::plain_index(
                    &p,
                    &[
                        crate::schema::ascending(&p, &key_const),
                        crate::schema::ascending(&p, &value_const),
                    ],
                    &name_const,
                    false,
                );
                let handle = model.field_handle(
                    &a.ident,
                    "AttributeField",
                    &quote!(#p::Attributes<#ident, #elem>),
                    &quote!(#p::Attributes::new(db, &#stat)),
                    None,
                );
                quote! {
                    const #key_const: &str = #key_path;
                    const #value_const: &str = #value_path;
                    const #name_const: &str = #name;
                    static #stat: #p::AttributeSpec = #p::AttributeSpec::from_parts(#p::AttributeParts {
                        field: #field,
                        index: #index,
                    });

                    #handle
                }
            })
            .collect()
    }

    fn specs(&self) -> Vec<TokenStream> {
        (0..self.0.len())
            .map(|i| {
                let stat = spec_static(i);
                quote!(&#stat)
            })
            .collect()
    }
}
