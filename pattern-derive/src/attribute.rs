//! The attribute pattern: `#[attribute(key = .., value = .., qualifiers(..))]` on an item
//! struct (with `#[derive(Fields)]`), `#[attribute]` on a model's `Vec` of such items, and
//! `#[derive(AttributeKey)]` on a fieldless enum of keys.
//!
//! The item's declaration is checked where it is written (key, value and qualifiers are fields,
//! every field is one of them); the model's field is checked to be a `Vec`, and its items to be
//! attribute items, by the generated `<Item as AttributeItem>` path at the element type. The
//! index's paths are the item's serde names, concatenated at compile time.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use serde_derive_internals::{ast as serde_ast, Ctxt, Derive};
use syn::{DeriveInput, Ident, LitStr};

use crate::ast::{self, Field, Model};
use crate::attr::Attr;
use crate::errors::{did_you_mean, Errors};
use crate::schema::{Pattern, PatternDef};

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

fn spec_static(i: usize) -> Ident {
    format_ident!("__ATTRIBUTE_{}", i)
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

/// Every `#[attribute]` field of a model.
fn collect(model: &Model<'_>, errors: &mut Errors) -> Vec<AttributeField> {
    let mut out: Vec<AttributeField> = Vec::new();
    for field in &model.fields {
        for attr in field.attrs_of(Attr::Attribute) {
            if let Some(a) = parse_field(attr, field, errors) {
                if let Some(n) = &a.name {
                    if out
                        .iter()
                        .any(|o| o.name.as_ref().is_some_and(|m| m.value() == n.value()))
                    {
                        errors.spanned(
                            n,
                            format!(
                                "two attribute fields of this model name their index `{}`: give \
                                 one of them another `name = \"...\"`",
                                n.value()
                            ),
                        );
                        continue;
                    }
                }
                out.push(a);
            }
        }
    }
    out
}

/// What an `#[attribute]` field that is not a `Vec` should be, in the user's names: its item
/// type when the field's type shows it (`specs: Spec`, `specs: Option<Vec<Spec>>`, `[Spec; 4]`),
/// a placeholder otherwise.
fn not_a_vec(field: &Field<'_>) -> String {
    let name = &field.rust_name;
    let in_option = crate::types::option_inner(field.ty).and_then(crate::types::vec_element);
    let item = match (&in_option, field.ty) {
        (Some(elem), _) => Some(elem.clone()),
        (None, syn::Type::Array(a)) => Some((*a.elem).clone()),
        (None, syn::Type::Slice(s)) => Some((*s.elem).clone()),
        (None, syn::Type::Path(p))
            if p.qself.is_none()
                && p.path.segments.iter().all(|s| s.arguments.is_none())
                && !crate::types::is_plain_scalar(field.ty) =>
        {
            Some(field.ty.clone())
        }
        _ => None,
    };
    let item = item.map(|t| crate::errors::type_string(&t));
    let what = match &item {
        Some(item) => {
            format!("`{name}: Vec<{item}>`, with `#[attribute(key = .., value = ..)]` on `{item}`")
        }
        None => format!(
            "`{name}: Vec<Item>`, `Item` being a `#[derive(Fields)]` struct with \
             `#[attribute(key = .., value = ..)]`"
        ),
    };
    let option = if in_option.is_some() {
        ", not in an `Option` (no items is an empty `Vec`)"
    } else {
        ""
    };
    format!("an `#[attribute]` field holds the items in a `Vec`{option}: {what}")
}

const FIELD_HELP: &str =
    "`#[attribute]` on a `Vec` of items, or `#[attribute(name = \"index_name\")]`";

fn parse_field(
    attr: &syn::Attribute,
    field: &Field<'_>,
    errors: &mut Errors,
) -> Option<AttributeField> {
    let Some(elem) = crate::types::vec_element(field.ty) else {
        errors.spanned(field.ty, not_a_vec(field));
        return None;
    };
    if !field.serialized {
        errors.spanned(
            field.ident,
            "an `#[attribute]` field must be serialized (no `#[serde(skip)]`)",
        );
        return None;
    }
    let mut name = None;
    if let syn::Meta::List(_) = &attr.meta {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("name") {
                name = Some(ast::lit_str(meta.value()?, "`name`")?);
                Ok(())
            } else if ["key", "value", "qualifiers"]
                .iter()
                .any(|k| meta.path.is_ident(k))
            {
                Err(meta.error(
                    "the key, value and qualifiers are declared on the item struct: \
                     `#[attribute(key = name, value = value)]` beside its `#[derive(Fields)]`",
                ))
            } else {
                Err(meta.error(format!("unknown attribute option; {FIELD_HELP}")))
            }
        });
        if let Err(e) = result {
            errors.push(e);
            return None;
        }
    } else if !matches!(attr.meta, syn::Meta::Path(_)) {
        errors.spanned(attr, FIELD_HELP);
        return None;
    }
    Some(AttributeField {
        bson_name: field.bson_name.clone(),
        ident: field.ident.clone(),
        elem,
        name,
    })
}

/// `#[attribute(key = .., value = .., qualifiers(..))]` on a `#[derive(Fields)]` struct: the
/// `AttributeItem` impl.
/// The options of `#[attribute(..)]` on an item struct.
const ITEM_OPTIONS: &[&str] = &["key", "value", "qualifiers"];

fn item(input: &DeriveInput, model: &Model<'_>, errors: &mut Errors) -> TokenStream {
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

/// `#[derive(AttributeKey)]`: a fieldless enum whose serde names are the keys.
pub(crate) fn derive_key(input: &DeriveInput) -> TokenStream {
    let mut errors = Errors::default();
    let ident = &input.ident;
    let syn::Data::Enum(e) = &input.data else {
        errors.spanned(
            ident,
            "`derive(AttributeKey)` goes on a fieldless enum of keys; a `String` key needs no derive",
        );
        return errors
            .into_result()
            .err()
            .map(|e| e.to_compile_error())
            .unwrap_or_default();
    };
    if !input.generics.params.is_empty() {
        errors.spanned(
            &input.generics,
            "`derive(AttributeKey)` does not support generic enums",
        );
    }
    for v in &e.variants {
        if !matches!(v.fields, syn::Fields::Unit) {
            errors.spanned(
                &v.fields,
                format!(
                    "`{}` has fields: an attribute key is one of a fixed set of names, so every \
                     variant is a unit variant",
                    v.ident
                ),
            );
        }
    }
    let cx = Ctxt::new();
    let container = serde_ast::Container::from_ast(&cx, input, Derive::Serialize);
    let serde_ok = cx.check().is_ok();
    let (Some(container), true) = (container, serde_ok) else {
        return errors
            .into_result()
            .err()
            .map(|e| e.to_compile_error())
            .unwrap_or_default();
    };
    let serde_ast::Data::Enum(variants) = &container.data else {
        return TokenStream::new();
    };
    if !matches!(
        container.attrs.tag(),
        serde_derive_internals::attr::TagType::External
    ) {
        errors.spanned(
            ident,
            "an attribute key enum is serialized as its variants' names: remove `tag` / `untagged`",
        );
    }
    let arms = variants.iter().map(|v| {
        let vi = &v.original.ident;
        let name = v.attrs.name().serialize_name();
        quote!(#ident::#vi => #name)
    });
    let krate: syn::Path = syn::parse_quote!(::pattern_runtime);
    if let Err(e) = errors.into_result() {
        return e.to_compile_error();
    }
    let mut out = TokenStream::new();
    out.extend(quote! {
        #[automatically_derived]
        impl #krate::__private::AttributeKey for #ident {
            fn as_key(&self) -> &str {
                match self {
                    #(#arms,)*
                }
            }
        }
    });
    out
}
