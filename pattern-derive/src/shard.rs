//! `#[shard_key(...)]`: a model's shard key, read and checked next to its indexes, and the
//! generated `ShardKey` the index sync shards the collection by.
//!
//! ```text
//! #[shard_key(user_id)]                      {userId: 1}
//! #[shard_key(id = "hashed")]                {_id: "hashed"}
//! #[shard_key(region = 1, user_id = 1)]      {region: 1, userId: 1}
//! #[shard_key(created_at, allow_monotonic)]  ranged on a date, knowingly
//! ```
//!
//! The checks that need nothing but the declarations: the keys are fields (serde's names, like
//! index keys), each ranged (`1`) or `"hashed"`, at most one hashed; every `unique` index starts
//! with the shard key's fields (MongoDB refuses any other unique index on a sharded
//! collection); a ranged shard key does not start on a field that only grows (an `ObjectId` or a
//! date) unless `allow_monotonic` says so.
//!
//! Its list is not read by `options.rs`: its keys are the model's field paths (as an index's
//! keys are), not a fixed set of options, so "unknown option" has no meaning here. An unknown
//! field is reported by the index reader with the model's fields; each item is read on after an
//! error, as the options reader does.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{quote, quote_spanned};
use syn::parse::{ParseStream, Parser};
use syn::{Ident, Token};

use crate::ast::Model;
use crate::attr::Attr;
use crate::errors::Errors;
use crate::index::{self, Index};

/// A checked shard key: its keys as an index (the one that supports it), and whether a ranged
/// key on a growing field was allowed.
pub(crate) struct ShardKey {
    index: Index,
    allow_monotonic: bool,
}

/// One key as written: its path tokens, and `hashed` with where the kind was written.
struct Written {
    path: TokenStream,
    hashed: bool,
    kind_span: Span,
}

const USAGE: &str = "write the shard key's fields in order, each ranged or hashed: \
     `#[shard_key(user_id)]`, `#[shard_key(id = \"hashed\")]`, \
     `#[shard_key(region = 1, user_id = 1)]`";

/// The model's `#[shard_key(...)]`, checked against its fields and its declared `indexes`.
pub(crate) fn collect(
    attrs: &[syn::Attribute],
    model: &Model<'_>,
    indexes: &[Index],
    errors: &mut Errors,
) -> Option<ShardKey> {
    let mut found = Attr::ShardKey.find(attrs);
    let attr = found.next()?;
    for extra in found {
        errors.spanned(
            extra,
            "a collection has one shard key: merge these into one `#[shard_key(...)]`",
        );
    }
    let span = attr
        .path()
        .get_ident()
        .map_or(attr.pound_token.span, Ident::span);
    let syn::Meta::List(list) = &attr.meta else {
        errors.spanned(attr, USAGE);
        return None;
    };
    let mut written: Vec<Written> = Vec::new();
    let mut allow_monotonic = false;
    let mut local = Errors::default();
    let parsed = (|input: ParseStream<'_>| {
        parse_items(input, &mut written, &mut allow_monotonic, &mut local)
    })
    .parse2(list.tokens.clone());
    if let Err(e) = parsed {
        local.push(e);
    }
    if written.is_empty() && local.is_empty() {
        local.at(span, USAGE);
    }
    let hashed: Vec<&Written> = written.iter().filter(|w| w.hashed).collect();
    if hashed.len() > 1 {
        local.at(
            hashed[1].kind_span,
            "a shard key has at most one hashed field: make the others ranged (`= 1`)",
        );
    }
    if !local.is_empty() {
        if let Err(e) = local.into_result() {
            errors.push(e);
        }
        return None;
    }
    let keys = written.iter().map(|w| {
        let path = &w.path;
        let kind = if w.hashed {
            quote_spanned!(w.kind_span=> "hashed")
        } else {
            quote_spanned!(w.kind_span=> 1)
        };
        quote!(#path = #kind)
    });
    let index = index::from_keys(quote!(#(#keys),*), span, model, errors)?;
    let key = ShardKey {
        index,
        allow_monotonic,
    };
    key.check_unique(indexes, errors);
    key.check_monotonic(&written, model, errors);
    Some(key)
}

fn parse_items(
    input: ParseStream<'_>,
    written: &mut Vec<Written>,
    allow_monotonic: &mut bool,
    errors: &mut Errors,
) -> syn::Result<()> {
    while !input.is_empty() {
        // The tokens up to `=` or `,`: a path as `#[index(keys(...))]` takes it.
        let mut path = TokenStream::new();
        while !input.is_empty() && !input.peek(Token![=]) && !input.peek(Token![,]) {
            path.extend([input.parse::<TokenTree>()?]);
        }
        let flag = syn::parse2::<Ident>(path.clone()).ok();
        if flag.as_ref().is_some_and(|i| i == "allow_monotonic") && !input.peek(Token![=]) {
            *allow_monotonic = true;
        } else if path.is_empty() {
            return Err(input.error(USAGE));
        } else if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            let kind_tokens: TokenStream = {
                let mut t = TokenStream::new();
                while !input.is_empty() && !input.peek(Token![,]) {
                    t.extend([input.parse::<TokenTree>()?]);
                }
                t
            };
            let kind_span = kind_tokens
                .clone()
                .into_iter()
                .next()
                .map_or_else(Span::call_site, |t| t.span());
            let text = kind_tokens.to_string();
            let hashed = match text.as_str() {
                "1" => false,
                "\"hashed\"" => true,
                "- 1" | "-1" => {
                    errors.spanned(
                        &kind_tokens,
                        "a shard key field is ranged (`1`) or `\"hashed\"`, never descending: \
                         write `= 1`",
                    );
                    false
                }
                _ => {
                    errors.spanned(
                        &kind_tokens,
                        format!(
                            "unknown shard key kind `{text}`: a field is ranged (`= 1`, the \
                             default) or hashed (`= \"hashed\"`)"
                        ),
                    );
                    false
                }
            };
            written.push(Written {
                path,
                hashed,
                kind_span,
            });
        } else {
            let kind_span = path
                .clone()
                .into_iter()
                .next()
                .map_or_else(Span::call_site, |t| t.span());
            written.push(Written {
                path,
                hashed: false,
                kind_span,
            });
        }
        if input.is_empty() {
            break;
        }
        input.parse::<Token![,]>()?;
    }
    Ok(())
}

impl ShardKey {
    /// Every unique index starts with the shard key's fields.
    fn check_unique(&self, indexes: &[Index], errors: &mut Errors) {
        let shard: Vec<String> = self.index.key_paths().into_iter().map(|(p, _)| p).collect();
        let shard_display = self.index.key_display();
        for index in indexes.iter().filter(|i| i.is_unique()) {
            let paths: Vec<String> = index.key_paths().into_iter().map(|(p, _)| p).collect();
            if paths.len() >= shard.len() && paths[..shard.len()] == shard[..] {
                continue;
            }
            errors.at(
                index.span(),
                format!(
                    "this unique index does not start with the shard key {shard_display}: on a \
                     sharded collection MongoDB refuses it (each shard could only check its own \
                     documents); put the shard key's fields first in `keys(...)`, or drop \
                     `unique` and enforce it another way"
                ),
            );
        }
    }

    /// A ranged shard key does not start on a field that only grows, unless allowed.
    fn check_monotonic(&self, written: &[Written], model: &Model<'_>, errors: &mut Errors) {
        let Some(first) = written.first() else { return };
        if first.hashed || self.allow_monotonic {
            return;
        }
        let Some(bson) = self.index.first_key_literal() else {
            return;
        };
        let Some(field) = model
            .fields
            .iter()
            .find(|f| f.serialized && f.bson_name == bson)
        else {
            return;
        };
        let Some(what) = growing(field.ty) else {
            return;
        };
        let path = &first.path;
        errors.spanned(
            path,
            format!(
                "a ranged shard key on `{bson}` ({what}, which only grows) sends every insert to \
                 the last chunk, on one shard: hash it, `#[shard_key({path} = \"hashed\")]`, or \
                 put a field that spreads the writes first; if the writes are spread another way, \
                 add `allow_monotonic`"
            ),
        );
    }

    /// The `ShardKey` expression of the runtime.
    pub(crate) fn expand(&self, krate: &syn::Path) -> TokenStream {
        let p = quote!(#krate::__private);
        let index = self.index.expand(krate);
        let allow = self.allow_monotonic;
        quote! {
            #p::ShardKey::from_parts(#p::ShardKeyParts {
                index: #index,
                allow_monotonic: #allow,
            })
        }
    }
}

/// What a field type that only grows is, by its last path segment (inside `Option`): an
/// `ObjectId` or a date. A type alias or a counter is not recognised.
fn growing(ty: &syn::Type) -> Option<&'static str> {
    let ty = crate::types::option_inner(ty).unwrap_or(ty);
    let syn::Type::Path(tp) = ty else { return None };
    let last = tp.path.segments.last()?.ident.to_string();
    match last.as_str() {
        "ObjectId" => Some("an `ObjectId`"),
        "DateTime" | "SystemTime" | "NaiveDateTime" | "OffsetDateTime" | "PrimitiveDateTime"
        | "Timestamp" => Some("a date"),
        _ => None,
    }
}
