//! `#[outlier(limit = 50, overflow = "user_posts", capacity = 1000, flag = is_outlier, count =
//! posts_count)]` on a `Vec<T>` field: the `OutlierSpec` (with the overflow collection's
//! `{parent, seq}` index) and the `OutlierField` impl behind `collection.outlier(Model::FIELDS.field)`. The options are checked here; the
//! flag's type (`bool`) and the count's (an integer) by constants of generated code.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::{Ident, LitInt, LitStr, Token};

use crate::ast::{Field, Model};
use crate::attr::Attr;
use crate::errors::Errors;
use crate::schema::{Pattern, PatternDef};

/// The outlier pattern's entry points.
pub(crate) const PATTERN: PatternDef = PatternDef {
    model: |input, model, errors| {
        let fields = crate::schema::each_field(model, errors, parse_field);
        if let Some(first) = fields.first() {
            // The receipts are a field of the stored document that the struct does not have.
            if let Some(span) = crate::ast::serde_key_span(&input.attrs, "deny_unknown_fields") {
                errors.at(
                    span,
                    format!(
                        "`#[serde(deny_unknown_fields)]` cannot be used with `#[outlier]`: the \
                         main document also keeps `{}`, the receipts of its last pushes (so \
                         that a push sent twice applies once), which the struct does not \
                         declare. Remove `deny_unknown_fields`; a strict validator \
                         (`ValidatorOptions::strict`) refuses unknown fields on the server \
                         instead",
                        receipts_name(&first.bson_name)
                    ),
                );
            }
        }
        Box::new(Outliers { fields })
    },
    fields: None,
};

const OPTIONS: &[&str] = &[
    "limit",
    "overflow",
    "capacity",
    "flag",
    "count",
    "parent",
    "max_bytes",
];

const HELP: &str = "`#[outlier(limit = 50, overflow = \"user_posts\", flag = is_outlier, count = \
                    posts_count)]`: 50 items in the document, the rest in `user_posts`, the \
                    model's `is_outlier: bool` set once it overflows and `posts_count` counting \
                    every item";

/// The default number of items per overflow document.
const DEFAULT_CAPACITY: u32 = 1000;

/// The default byte budget of a document holding items: half of MongoDB's 16 MiB.
const DEFAULT_MAX_BYTES: u32 = 8 * 1024 * 1024;
/// The smallest byte budget accepted (a budget below it would overflow on every push).
const MIN_MAX_BYTES: u32 = 1024;
/// The largest: MongoDB's limit less room for the document's other fields.
const MAX_MAX_BYTES: u32 = 15 * 1024 * 1024;

struct OutlierField {
    ident: Ident,
    bson_name: String,
    elem: syn::Type,
    limit: u32,
    capacity: u32,
    max_bytes: u32,
    overflow: String,
    parent: String,
    flag: Ident,
    count: Ident,
}

struct Outliers {
    fields: Vec<OutlierField>,
}

/// The main document's field keeping the receipts of its last pushes: `posts` ->
/// `__postsPushes`.
fn receipts_name(field: &str) -> String {
    format!("__{field}Pushes")
}

/// `User` -> `userId`.
fn default_parent(model: &Ident) -> String {
    let name = model.to_string();
    let mut chars = name.chars();
    match chars.next() {
        Some(first) => format!("{}{}Id", first.to_lowercase(), chars.as_str()),
        None => "parentId".to_owned(),
    }
}

fn parse_field(field: &Field<'_>, model: &Model<'_>, errors: &mut Errors) -> Option<OutlierField> {
    let mut attrs = field.attrs_of(Attr::Outlier);
    let attr = attrs.next()?;
    for extra in attrs {
        errors.spanned(extra, "one `#[outlier]` per field");
    }
    let Some(elem) = crate::types::vec_element(field.ty) else {
        errors.spanned(
            field.ty,
            "`#[outlier]` goes on a `Vec<T>` field: the items kept in the document, the rest \
             overflowing into other documents",
        );
        return None;
    };
    // Refused beside `#[subset]` or a two-way relation (`combinations.rs`).
    if crate::combinations::field_refuses(field, Attr::Outlier) {
        return None;
    }
    let list = crate::ast::stored_field_list(
        field,
        attr,
        "outlier",
        "an `#[outlier]` array",
        HELP,
        errors,
    )?;
    let mut limit: Option<u32> = None;
    let mut capacity: Option<u32> = None;
    let mut max_bytes: Option<u32> = None;
    let mut overflow: Option<String> = None;
    let mut parent: Option<String> = None;
    let mut flag: Option<Ident> = None;
    let mut count: Option<Ident> = None;
    let before = errors.count();
    let clean = crate::options::parse(
        list.tokens.clone(),
        "outlier",
        OPTIONS,
        errors,
        |key, input, local| {
            let name = key.to_string();
            input.parse::<Token![=]>()?;
            match name.as_str() {
                "max_bytes" => {
                    let lit: LitInt = input.parse()?;
                    match lit.base10_parse::<u32>() {
                        Ok(n) if (MIN_MAX_BYTES..=MAX_MAX_BYTES).contains(&n) => {
                            max_bytes = Some(n)
                        }
                        _ => local.spanned(
                            &lit,
                            format!(
                                "`max_bytes` is the byte budget of a document holding items (the \
                                 main document's and each overflow document's): between \
                                 {MIN_MAX_BYTES} and {MAX_MAX_BYTES} (15 MiB, leaving room \
                                 below MongoDB's 16 MiB); by default {DEFAULT_MAX_BYTES} (8 MiB)"
                            ),
                        ),
                    }
                }
                "limit" | "capacity" => {
                    let lit: LitInt = input.parse()?;
                    match lit.base10_parse::<u32>() {
                        Ok(n) if n > 0 => {
                            if name == "limit" {
                                limit = Some(n);
                            } else {
                                capacity = Some(n);
                            }
                        }
                        _ => local.spanned(
                            &lit,
                            if name == "limit" {
                                "`limit` is how many items the document keeps: a whole number \
                                 above 0"
                            } else {
                                "`capacity` is how many items one overflow document holds: a \
                                 whole number above 0"
                            },
                        ),
                    }
                }
                "overflow" | "parent" => {
                    let lit: LitStr = input.parse()?;
                    let value = lit.value();
                    if name == "overflow" {
                        match crate::ast::collection_name_problem(&value) {
                            Some(problem) => local.spanned(&lit, problem),
                            None if value == model.collection => local.spanned(
                                &lit,
                                format!(
                                    "the overflow documents need a collection of their own: \
                                     `{value}` is `{name}`'s own collection, where the unique \
                                     index on the overflow documents' parent and number would \
                                     let only one `{name}` in; name another collection \
                                     (`overflow = \"{value}_overflow\"`)",
                                    name = model.ident
                                ),
                            ),
                            None => overflow = Some(value),
                        }
                    } else if value.is_empty() || value.starts_with('$') || value.contains('.') {
                        local.spanned(
                            &lit,
                            "`parent` is a field name of the overflow documents: not empty, no \
                             `$` at the start, no `.`",
                        );
                    } else {
                        parent = Some(value);
                    }
                }
                _ => {
                    let ident = Ident::parse_any(input)?;
                    if name == "flag" {
                        flag = Some(ident);
                    } else {
                        count = Some(ident);
                    }
                }
            }
            Ok(())
        },
    );
    if !clean {
        return None;
    }
    let had_errors = errors.count() > before;
    let mut missing = |what: &str, example: &str| {
        errors.spanned(
            attr.path(),
            format!("`#[outlier]` needs `{what}`: `{example}`; {HELP}"),
        );
    };
    if limit.is_none() && !had_errors {
        missing("limit", "limit = 50");
    }
    if overflow.is_none() && !had_errors {
        missing("overflow", "overflow = \"user_posts\"");
    }
    if flag.is_none() {
        missing("flag", "flag = is_outlier");
    }
    if count.is_none() {
        missing("count", "count = posts_count");
    }
    // `flag` and `count` name fields of this model.
    for ident in [&flag, &count].into_iter().flatten() {
        let name = crate::ast::unraw(ident);
        if model.field(&name).is_none() {
            errors.spanned(ident, model.unknown_field_message(&name, "outlier field"));
            return None;
        }
    }
    let receipts = receipts_name(&field.bson_name);
    if let Some(taken) = model.fields.iter().find(|f| f.bson_name == receipts) {
        errors.spanned(
            taken.ident,
            format!(
                "`{receipts}` is the field in which the outlier array `{}` keeps the receipts \
                 of its last pushes: rename this field",
                field.bson_name
            ),
        );
        return None;
    }
    Some(OutlierField {
        ident: field.ident.clone(),
        bson_name: field.bson_name.clone(),
        elem,
        limit: limit?,
        capacity: capacity.unwrap_or(DEFAULT_CAPACITY),
        max_bytes: max_bytes.unwrap_or(DEFAULT_MAX_BYTES),
        overflow: overflow?,
        parent: parent.unwrap_or_else(|| default_parent(model.ident)),
        flag: flag?,
        count: count?,
    })
}

impl OutlierField {
    fn static_ident(&self) -> Ident {
        format_ident!(
            "__OUTLIER_{}",
            crate::ast::unraw(&self.ident).to_uppercase()
        )
    }

    /// The spec, the method, and (`with_checks`) the type checks of the flag and the count.
    fn expand(&self, model: &Model<'_>, p: &TokenStream, with_checks: bool) -> TokenStream {
        let ident = model.ident;
        let mut checks = TokenStream::new();
        let mut checked = |field: &Ident, method: &str, message: String| {
            let span = field.span();
            let model_ident = Ident::new(&ident.to_string(), span);
            let (name, fail) = crate::errors::checked_name(
                p,
                quote_spanned!(span=> #model_ident::FIELDS.#field),
                method,
                &message,
                span,
            );
            checks.extend(fail);
            name
        };
        let flag_name = crate::ast::unraw(&self.flag);
        let count_name = crate::ast::unraw(&self.count);
        let flag = checked(
            &self.flag,
            "boolean",
            format!("`{flag_name}` is the outlier flag: make it a `bool`"),
        );
        let count = checked(
            &self.count,
            "integer",
            format!(
                "`{count_name}` counts every item of the outlier array: use an integer (i64, \
                 i32 or u32)"
            ),
        );
        if !with_checks {
            checks = TokenStream::new();
        }
        let field = &self.bson_name;
        let (limit, capacity, max_bytes) = (self.limit, self.capacity, self.max_bytes);
        let overflow = &self.overflow;
        let parent = &self.parent;
        let receipts = receipts_name(field);
        let index = crate::schema::plain_index(
            p,
            &[
                crate::schema::ascending(p, parent),
                crate::schema::ascending(p, "seq"),
            ],
            format!("{parent}_1_seq_1"),
            true,
        );
        let static_ident = self.static_ident();
        let elem = &self.elem;
        let handle = model.field_handle(
            &self.ident,
            "OutlierField",
            &quote!(#p::Outlier<#ident, #elem>),
            &quote!(#p::Outlier::new(db, &#static_ident)),
            None,
        );
        quote! {
            static #static_ident: #p::OutlierSpec = #p::OutlierSpec::from_parts(#p::OutlierParts {
                field: #field,
                limit: #limit,
                capacity: #capacity,
                max_bytes: #max_bytes,
                overflow: #overflow,
                parent: #parent,
                flag: #flag,
                count: #count,
                receipts: #receipts,
                index: #index,
            });
            #checks

            #handle
        }
    }
}

impl Pattern for Outliers {
    fn kept(&self, field: &Field<'_>) -> Option<&'static str> {
        self.fields
            .iter()
            .any(|o| [&o.ident, &o.flag, &o.count].contains(&field.ident))
            .then_some("OutlierArray")
    }

    fn handle(&self, field: &Field<'_>) -> bool {
        self.fields.iter().any(|o| &o.ident == field.ident)
    }

    fn items(&self, model: &Model<'_>) -> TokenStream {
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        self.fields
            .iter()
            .map(|f| f.expand(model, &p, true))
            .collect()
    }

    fn specs(&self) -> Vec<TokenStream> {
        crate::schema::spec_refs(self.fields.iter().map(|f| f.static_ident()))
    }

    fn stubs(&self, model: &Model<'_>) -> TokenStream {
        // The fields whose attribute read well keep their method (without the type checks);
        // a field whose attribute failed has none.
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        self.fields
            .iter()
            .map(|f| f.expand(model, &p, false))
            .collect()
    }
}
