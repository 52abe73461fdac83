//! `#[index(...)]`: parsing, checks against the model, and the generated `IndexSpec`.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Ident, LitBool, LitInt, LitStr, Token};

use crate::ast::{Field, Model};
use crate::errors::{did_you_mean, Errors};

mod expand;
mod parse;
mod validate;

use crate::attr::Attr;
pub(crate) use expand::{directed_spec, from_keys, plain_spec};
pub(crate) use parse::parse_duration;
use parse::{is_bson_date, is_dynamic, parse_attr};
use validate::check;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Asc,
    Desc,
    Text,
    Geo,
    Hashed,
}

impl Kind {
    fn suffix(self) -> &'static str {
        match self {
            Kind::Asc => "1",
            Kind::Desc => "-1",
            Kind::Text => "text",
            Kind::Geo => "2dsphere",
            Kind::Hashed => "hashed",
        }
    }

    fn variant(self) -> Ident {
        let name = match self {
            Kind::Asc => "Ascending",
            Kind::Desc => "Descending",
            Kind::Text => "Text",
            Kind::Geo => "Geo2dSphere",
            Kind::Hashed => "Hashed",
        };
        Ident::new(name, Span::call_site())
    }
}

/// A key path as written: `field` or `field.sub.path`, or a string `"field.sub"`.
#[derive(Clone)]
struct KeyPath {
    /// The first segment (a Rust field name).
    head: String,
    /// Dotted segments below the field: Rust field names of the nested struct (resolved through
    /// its `Fields`), or keys kept as written below a document or map field.
    rest: Vec<String>,
    /// The segments as identifiers, spanned where the user wrote them.
    rest_idents: Vec<Ident>,
    span: Span,
    tokens: TokenStream,
}

/// A resolved BSON path (or index name): text the derive knows, and steps only the nested
/// structs' `Fields` impls know, concatenated at compile time.
#[derive(Clone)]
pub(crate) struct BsonPath {
    pieces: Vec<Piece>,
    /// Where the user wrote the path (for paths with nested steps).
    span: Option<Span>,
}

#[derive(Clone)]
enum Piece {
    Text(String),
    /// A `&'static str` const expression, and the Rust name it stands for.
    Step(TokenStream, String),
}

impl BsonPath {
    fn text(s: &str) -> Self {
        BsonPath {
            pieces: vec![Piece::Text(s.to_owned())],
            span: None,
        }
    }

    fn push_text(&mut self, s: &str) {
        match self.pieces.last_mut() {
            Some(Piece::Text(t)) => t.push_str(s),
            _ => self.pieces.push(Piece::Text(s.to_owned())),
        }
    }

    fn push_path(&mut self, other: &BsonPath) {
        self.span = self.span.or(other.span);
        for piece in &other.pieces {
            match piece {
                Piece::Text(t) => self.push_text(t),
                step => self.pieces.push(step.clone()),
            }
        }
    }

    /// The whole text, when no step needs a nested struct's names.
    pub(crate) fn literal(&self) -> Option<String> {
        match self.pieces.as_slice() {
            [] => Some(String::new()),
            [Piece::Text(t)] => Some(t.clone()),
            _ => None,
        }
    }

    /// The path as a person reads it in a message: nested steps by their Rust names.
    pub(crate) fn display(&self) -> String {
        self.pieces
            .iter()
            .map(|p| match p {
                Piece::Text(t) => t.clone(),
                Piece::Step(_, rust) => rust.clone(),
            })
            .collect()
    }

    /// A `&'static str` const expression of the path.
    pub(crate) fn expr(&self, p: &TokenStream) -> TokenStream {
        if let Some(text) = self.literal() {
            return quote!(#text);
        }
        let parts = self.pieces.iter().map(|piece| match piece {
            Piece::Text(t) => quote!(#t),
            Piece::Step(e, _) => e.clone(),
        });
        // Spanned at the user's path: a missing `Fields` is one error, there.
        concat_expr(p, parts, self.span.unwrap_or_else(Span::call_site))
    }
}

/// A `&'static str` const expression: the concatenation of `parts` (`&str` const expressions),
/// spanned at `span`.
pub(crate) fn concat_expr(
    p: &TokenStream,
    parts: impl IntoIterator<Item = TokenStream>,
    span: Span,
) -> TokenStream {
    let parts = parts.into_iter();
    let p = &crate::errors::respan_all(p.clone(), span);
    quote_spanned!(span=> {
        const __PARTS: &[&str] = &[#(#parts),*];
        const __LEN: usize = #p::concat_len(__PARTS);
        const __BYTES: [u8; __LEN] = #p::concat_bytes::<__LEN>(__PARTS);
        #p::utf8(&__BYTES)
    })
}

impl PartialEq for BsonPath {
    fn eq(&self, other: &Self) -> bool {
        self.display() == other.display()
    }
}

struct Key {
    path: KeyPath,
    kind: Kind,
    kind_span: Span,
}

#[derive(Clone, PartialEq)]
enum Lit {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
}

struct Clause {
    path: KeyPath,
    op: &'static str,
    value: Lit,
}

struct CollationDecl {
    locale: Option<LitStr>,
    strength: Option<u8>,
    case_level: Option<bool>,
    numeric_ordering: Option<bool>,
}

/// One `#[index(...)]` as parsed, before it is checked against the model.
struct IndexAttr {
    /// The `index` of the attribute: where errors about the whole index point.
    attr_span: Span,
    /// From `keys(...)` on the struct, or the field itself.
    keys: Vec<Key>,
    has_keys_list: bool,
    name: Option<LitStr>,
    unique: Option<(bool, Span)>,
    sparse: bool,
    hidden: bool,
    expire: Option<(u64, Span)>,
    collation: Option<CollationDecl>,
    partial: Vec<Clause>,
    /// The keys are a shard key's: named so in messages, and `_id` alone is fine.
    shard_key: bool,
}

/// A collation with its locale.
struct CheckedCollation {
    locale: String,
    strength: Option<u8>,
    case_level: Option<bool>,
    numeric_ordering: Option<bool>,
}

/// A checked index, ready to expand.
pub(crate) struct Index {
    name: BsonPath,
    /// `name = "..."` was given.
    explicit_name: bool,
    /// The `name = "..."` literal, else the attribute: where errors about this index point.
    span: Span,
    /// The Rust name of the field of the first key: where the schema records the annotation.
    pub first_field: String,
    keys: Vec<(BsonPath, Kind)>,
    unique: bool,
    sparse: bool,
    hidden: bool,
    expire: Option<u64>,
    collation: Option<CheckedCollation>,
    partial: Vec<(BsonPath, &'static str, Lit)>,
}

const OPTIONS: &[&str] = &[
    "keys",
    "unique",
    "sparse",
    "hidden",
    "name",
    "expire_after",
    "collation",
    "partial",
];
const COLLATION_OPTIONS: &[&str] = &["locale", "strength", "case_level", "numeric_ordering"];
const PARTIAL_OPS: &[&str] = &["eq", "gt", "gte", "lt", "lte", "exists", "type"];

/// Every index of the model: struct-level attributes first, then field-level ones.
pub(crate) fn collect(
    container_attrs: &[syn::Attribute],
    model: &Model<'_>,
    errors: &mut Errors,
) -> Vec<Index> {
    let mut parsed: Vec<IndexAttr> = Vec::new();
    for attr in Attr::Index.find(container_attrs) {
        if let Some(a) = parse_attr(attr, None, errors) {
            parsed.push(a);
        }
    }
    for field in &model.fields {
        for attr in field.attrs_of(Attr::Index) {
            if let Some(a) = parse_attr(attr, Some(field), errors) {
                parsed.push(a);
            }
        }
    }
    let checked = parsed
        .into_iter()
        .filter_map(|a| check(a, model, errors))
        .collect();
    dedupe(checked, errors)
}

/// `indexes` without those MongoDB would refuse beside an earlier one (the same name, or the
/// same keys and options), each refused one reported at its own `index`.
pub(crate) fn dedupe(indexes: Vec<Index>, errors: &mut Errors) -> Vec<Index> {
    let mut out: Vec<Index> = Vec::new();
    for index in indexes {
        if index.name.literal().as_deref() == Some("_id_") {
            errors.at(
                index.span,
                "the name `_id_` is reserved for the `_id` index",
            );
            continue;
        }
        if out.iter().any(|o| o.name == index.name) {
            errors.at(
                index.span,
                format!(
                    "two indexes of this model are named `{}`: give one of them another `name = \"...\"`",
                    index.name.display()
                ),
            );
            continue;
        }
        if let Some(same) = out.iter().find(|o| o.same_pattern(&index)) {
            let ttl = if index.expire.is_some() && same.expire.is_some() {
                " (a field has at most one TTL: keep one `expire_after`)"
            } else {
                ""
            };
            errors.at(
                index.span,
                format!(
                    "this index has the same keys and options as index `{}` of this model: \
                     MongoDB keeps one index per key pattern (unless `unique`, `sparse`, the \
                     partial filter or the collation differ) and would refuse to create the \
                     second; merge them into one `#[index(...)]`{ttl}",
                    same.name.display()
                ),
            );
            continue;
        }
        out.push(index);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30d"), Some(30 * 86_400));
        assert_eq!(parse_duration("1d12h"), Some(86_400 + 12 * 3600));
        assert_eq!(parse_duration("90s"), Some(90));
        assert_eq!(parse_duration("2w"), Some(2 * 604_800));
        assert_eq!(parse_duration("30"), None);
        assert_eq!(parse_duration("3 days"), None);
        assert_eq!(parse_duration(""), None);
    }

    #[test]
    fn date_types() {
        assert!(is_bson_date(&syn::parse_quote!(bson::DateTime)));
        assert!(is_bson_date(&syn::parse_quote!(Option<DateTime>)));
        assert!(!is_bson_date(&syn::parse_quote!(
            chrono::DateTime<chrono::Utc>
        )));
        assert!(!is_bson_date(&syn::parse_quote!(String)));
    }
}
