//! `#[approximate(batched, threshold = 100)]`, `#[approximate(sampled, p = 0.01)]` and
//! `#[approximate(sharded, shards = 16)]` on an integer field: the counter handle
//! the `CounterField` impl behind `collection.counter(Model::FIELDS.field)` and the schema's
//! `ApproximateSpec`. The settings are checked here; the field's type (an integer) by a constant
//! of generated code.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Ident, Lit, Token};

use crate::ast::{Field, Model};
use crate::attr::Attr;
use crate::errors::{did_you_mean, Errors};
use crate::schema::{Pattern, PatternDef};

/// The approximation pattern's entry points.
pub(crate) const PATTERN: PatternDef = PatternDef {
    model: |_, model, errors| {
        Box::new(Approximate {
            fields: crate::schema::each_field(model, errors, parse_field),
        })
    },
    fields: None,
};

const KINDS: &[&str] = &["batched", "sampled", "sharded"];

const HELP: &str = "`#[approximate(batched, threshold = 100)]` (one `$inc` per 100 events), \
                    `#[approximate(sampled, p = 0.01)]` (one write of 100 per 100 events on \
                    average) or `#[approximate(sharded, shards = 16)]` (16 shard documents)";

enum Kind {
    Batched { threshold: u32 },
    Sampled { p: f64 },
    Sharded { shards: u32, collection: String },
}

struct ApproxField {
    ident: Ident,
    bson_name: String,
    kind: Kind,
}

struct Approximate {
    fields: Vec<ApproxField>,
}

/// One `key = literal` setting.
struct Setting {
    key: Ident,
    value: Lit,
}

fn parse_field(field: &Field<'_>, model: &Model<'_>, errors: &mut Errors) -> Option<ApproxField> {
    let mut attrs = field.attrs_of(Attr::Approximate);
    let attr = attrs.next()?;
    for extra in attrs {
        errors.spanned(extra, "one `#[approximate]` per field");
    }
    // Refused beside `#[computed]`, `#[subset]` or `#[version]` (`combinations.rs`).
    if crate::combinations::field_refuses(field, Attr::Approximate) {
        return None;
    }
    let list = crate::ast::stored_field_list(
        field,
        attr,
        "approximate",
        "an approximate counter",
        HELP,
        errors,
    )?;
    // The kind, then its settings, read by the options reader: an unknown or repeated setting
    // is an error at its key, and the rest is still read.
    let mut settings: Vec<Setting> = Vec::new();
    let mut read: Option<(Ident, bool)> = None;
    let parser = |input: ParseStream<'_>| -> syn::Result<()> {
        let kind = Ident::parse_any(input)?;
        let allowed: &[&str] = match kind.to_string().as_str() {
            "batched" => &["threshold"],
            "sampled" => &["p"],
            "sharded" => &["shards", "collection"],
            other => {
                errors.at(
                    kind.span(),
                    format!(
                        "unknown approximation `{other}`{}; expected one of: {}",
                        did_you_mean(other, KINDS.iter().copied()),
                        KINDS.join(", ")
                    ),
                );
                input.parse::<TokenStream>()?;
                return Ok(());
            }
        };
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
        }
        let what = format!("{kind} counter");
        let clean = crate::options::read(input, &what, allowed, errors, |key, input, _| {
            input.parse::<Token![=]>()?;
            let value: Lit = input.parse()?;
            settings.push(Setting {
                key: key.clone(),
                value,
            });
            Ok(())
        })?;
        read = Some((kind, clean));
        Ok(())
    };
    if let Err(e) = parser.parse2(list.tokens.clone()) {
        errors.push(syn::Error::new(e.span(), format!("{e}: {HELP}")));
        return None;
    }
    // Missing settings are reported only when every given one was known and parsed (a
    // misspelt key is not also missing); the given values are checked either way.
    let (kind, clean) = read?;
    let find = |key: &str| settings.iter().find(|s| s.key == key);
    let required = |key: &str, example: &str, errors: &mut Errors| {
        let found = find(key);
        if found.is_none() && clean {
            errors.at(
                kind.span(),
                format!(
                    "a {kind} counter needs `{key}`: `#[approximate({kind}, {key} = {example})]`"
                ),
            );
        }
        found
    };
    let parsed = match kind.to_string().as_str() {
        "batched" => {
            let s = required("threshold", "100", errors)?;
            let threshold = positive_int(&s.value, "a threshold", "events per write", errors)?;
            Kind::Batched { threshold }
        }
        "sampled" => {
            let s = required("p", "0.01", errors)?;
            let p = match &s.value {
                Lit::Float(f) => f.base10_parse::<f64>().ok(),
                Lit::Int(i) => i.base10_parse::<f64>().ok(),
                _ => None,
            };
            match p {
                Some(p) if p > 0.0 && p <= 1.0 => Kind::Sampled { p },
                Some(p) => {
                    errors.spanned(
                        &s.value,
                        format!(
                            "`p` is a probability in (0, 1], not {p}: `p = 0.01` writes one \
                             event in 100, as an increment of 100"
                        ),
                    );
                    return None;
                }
                None => {
                    errors.spanned(&s.value, "`p` is a number in (0, 1], like `p = 0.01`");
                    return None;
                }
            }
        }
        _ => {
            let s = required("shards", "16", errors)?;
            let shards = positive_int(&s.value, "a shard count", "shard documents", errors)?;
            let collection = match find("collection").map(|s| &s.value) {
                Some(Lit::Str(c)) => {
                    let name = c.value();
                    if let Some(problem) = crate::ast::collection_name_problem(&name) {
                        errors.spanned(c, problem);
                        return None;
                    }
                    name
                }
                Some(other) => {
                    errors.spanned(
                        other,
                        "`collection` is a string: `collection = \"page_hits\"`",
                    );
                    return None;
                }
                None => format!("{}.{}", model.collection, field.bson_name),
            };
            Kind::Sharded { shards, collection }
        }
    };
    clean.then(|| ApproxField {
        ident: field.ident.clone(),
        bson_name: field.bson_name.clone(),
        kind: parsed,
    })
}

/// A literal integer of at least 1.
fn positive_int(value: &Lit, what: &str, unit: &str, errors: &mut Errors) -> Option<u32> {
    let n = match value {
        Lit::Int(i) => i.base10_parse::<u32>().ok(),
        _ => None,
    };
    match n {
        Some(0) => {
            errors.spanned(value, format!("{what} is at least 1 ({unit})"));
            None
        }
        Some(n) => Some(n),
        None => {
            errors.spanned(
                value,
                format!("{what} is a whole number of {unit}, at least 1"),
            );
            None
        }
    }
}

impl ApproxField {
    fn static_ident(&self) -> Ident {
        format_ident!(
            "__APPROXIMATE_{}",
            crate::ast::unraw(&self.ident).to_uppercase()
        )
    }

    fn expand(&self, model: &Model<'_>, p: &TokenStream) -> TokenStream {
        let ident = model.ident;
        let field = &self.ident;
        let name = crate::ast::unraw(field);
        let span = field.span();
        let model_ident = Ident::new(&ident.to_string(), span);
        let (bson, check) = crate::errors::checked_name(
            p,
            quote_spanned!(span=> #model_ident::FIELDS.#field),
            "integer",
            &format!(
                "`{name}` is an approximate counter: it counts in an integer field (i64, i32 or \
                 u32)"
            ),
            span,
        );
        let collection = &model.collection;
        let bson_name = &self.bson_name;
        let static_ident = self.static_ident();
        let id = quote!(<#ident as #p::Model>::Id);
        let (approximation, handle_ty, body) = match &self.kind {
            Kind::Batched { threshold } => (
                quote!(#p::Approximation::Batched { threshold: #threshold }),
                quote!(#p::BatchedCounter<#id>),
                quote!(#p::BatchedCounter::declared(db.collection(#collection), #bson_name, #threshold)),
            ),
            Kind::Sampled { p: prob } => (
                quote!(#p::Approximation::Sampled { p: #prob }),
                quote!(#p::SampledCounter<#id>),
                quote!(#p::SampledCounter::declared(db.collection(#collection), #bson_name, #prob)),
            ),
            Kind::Sharded {
                shards,
                collection: shards_collection,
            } => (
                quote!(#p::Approximation::Sharded {
                    shards: #shards,
                    collection: #shards_collection,
                }),
                quote!(#p::ShardedFields<#id>),
                quote!(#p::ShardedFields::declared(
                    db.collection(#collection),
                    #bson_name,
                    db.collection(#shards_collection),
                    #shards,
                )),
            ),
        };
        let handle = model.field_handle(field, "CounterField", &handle_ty, &body, None);
        quote! {
            static #static_ident: #p::ApproximateSpec =
                #p::ApproximateSpec::from_parts(#p::ApproximateParts {
                    field: #bson,
                    approximation: #approximation,
                });
            #check

            #handle
        }
    }
}

impl Pattern for Approximate {
    fn handle(&self, field: &Field<'_>) -> bool {
        self.fields.iter().any(|f| &f.ident == field.ident)
    }

    fn items(&self, model: &Model<'_>) -> TokenStream {
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        self.fields.iter().map(|f| f.expand(model, &p)).collect()
    }

    fn specs(&self) -> Vec<TokenStream> {
        crate::schema::spec_refs(self.fields.iter().map(|f| f.static_ident()))
    }
}
