//! The generated `AttributeSpec`s, the handle's field impls and the item struct's items.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::{DeriveInput, Ident};

use crate::ast::{self, Model};
use crate::attr::Attr;
use crate::errors::{did_you_mean, Errors};

use super::parse::ITEM_OPTIONS;

pub(super) fn spec_static(i: usize) -> Ident {
    format_ident!("__ATTRIBUTE_{}", i)
}

pub(super) fn item(input: &DeriveInput, model: &Model<'_>, errors: &mut Errors) -> TokenStream {
    let mut out = TokenStream::new();
    for attr in Attr::Attribute.find(&input.attrs) {
        let mut key: Option<Ident> = None;
        let mut value: Option<Ident> = None;
        let mut qualifiers: Vec<Ident> = Vec::new();
        let clean =
            crate::options::nested(attr, "attribute", ITEM_OPTIONS, errors, |k, meta, _| {
                if k == "key" {
                    key = Some(meta.value()?.parse()?);
                } else if k == "value" {
                    value = Some(meta.value()?.parse()?);
                } else {
                    meta.parse_nested_meta(|q| {
                        match q.path.get_ident() {
                            Some(i) => qualifiers.push(i.clone()),
                            None => return Err(q.error("a qualifier is a field name")),
                        }
                        Ok(())
                    })?;
                }
                Ok(())
            });
        if !clean {
            continue;
        }
        let (Some(key), Some(value)) = (key, value) else {
            errors.spanned(
                attr,
                "an attribute item names its key and value fields: \
                 `#[attribute(key = name, value = value)]`",
            );
            continue;
        };
        let names: Vec<&str> = model.fields.iter().map(|f| f.rust_name.as_str()).collect();
        let find = |i: &Ident, what: &str, errors: &mut Errors| {
            let n = ast::unraw(i);
            let f = model.fields.iter().find(|f| f.rust_name == n);
            if f.is_none() {
                errors.spanned(
                    i,
                    format!(
                        "the {what} `{n}` is not a field of `{}`{}",
                        model.ident,
                        did_you_mean(&n, names.iter().copied())
                    ),
                );
            }
            f
        };
        let before = errors.count();
        let k = find(&key, "key", errors);
        let v = find(&value, "value", errors);
        for q in &qualifiers {
            find(q, "qualifier", errors);
        }
        let names_known = errors.count() == before;
        if key == value {
            errors.spanned(&value, "the key and the value are two different fields");
        }
        // Every stored field is the key, the value or a qualifier: nothing is silently carried.
        let declared: Vec<String> = std::iter::once(&key)
            .chain([&value])
            .chain(&qualifiers)
            .map(ast::unraw)
            .collect();
        // (Only when every name was found: a misspelt one would report its field here too.)
        for f in model.fields.iter().filter(|f| f.serialized && names_known) {
            if !declared.contains(&f.rust_name) {
                errors.spanned(
                    f.ident,
                    format!(
                        "`{}` is neither the key, the value nor a qualifier of this attribute \
                         item: add it to `qualifiers({})`",
                        f.rust_name, f.rust_name
                    ),
                );
            }
        }
        let (Some(k), Some(v)) = (k, v) else {
            continue;
        };
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        let ident = model.ident;
        let key_ty = k.ty;
        let (lo, _) = crate::errors::span_range(key_ty);
        let key_ident = k.ident;
        let key_bson = &k.bson_name;
        let value_bson = &v.bson_name;
        let key_type = quote_spanned!(lo=> type Key = #key_ty;);
        out.extend(quote! {
            #[automatically_derived]
            impl #p::AttributeItem for #ident {
                #key_type
                const KEY: &'static str = #key_bson;
                const VALUE: &'static str = #value_bson;
                fn key(&self) -> &#key_ty {
                    &self.#key_ident
                }
            }
        });
    }
    out
}
