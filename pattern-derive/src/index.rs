//! `#[index(...)]`: parsing, checks against the model, and the generated `IndexSpec`.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Ident, LitBool, LitInt, LitStr, Token};

use crate::ast::{Field, Model};
use crate::errors::{did_you_mean, Errors};

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
    for attr in container_attrs
        .iter()
        .filter(|a| a.path().is_ident("index"))
    {
        if let Some(a) = parse_attr(attr, None, errors) {
            parsed.push(a);
        }
    }
    for field in &model.fields {
        for attr in field.attrs.iter().filter(|a| a.path().is_ident("index")) {
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

fn parse_attr(
    attr: &syn::Attribute,
    field: Option<&Field<'_>>,
    errors: &mut Errors,
) -> Option<IndexAttr> {
    let mut out = IndexAttr {
        attr_span: attr
            .path()
            .get_ident()
            .map_or(attr.pound_token.span, Ident::span),
        keys: Vec::new(),
        has_keys_list: false,
        name: None,
        unique: None,
        sparse: false,
        hidden: false,
        expire: None,
        collation: None,
        partial: Vec::new(),
        shard_key: false,
    };
    // `#[index]` alone: an ascending index on the field.
    if matches!(attr.meta, syn::Meta::Path(_)) {
        return match field {
            Some(f) => {
                out.keys.push(field_key(f, Kind::Asc, out.attr_span));
                Some(out)
            }
            None => {
                errors.spanned(attr, STRUCT_NEEDS_KEYS);
                None
            }
        };
    }
    let mut local = Errors::default();
    let result = (|input: ParseStream<'_>| parse_items(input, field, &mut out, &mut local)).parse2(
        match &attr.meta {
            syn::Meta::List(list) => list.tokens.clone(),
            other => {
                errors.spanned(other, "write `#[index(...)]`, or `#[index]` on a field");
                return None;
            }
        },
    );
    if let Err(e) = result {
        local.push(e);
    }
    let ok = local.is_empty();
    if let Err(e) = local.into_result() {
        errors.push(e);
    }
    if field.is_none() && !out.has_keys_list && ok {
        errors.spanned(attr, STRUCT_NEEDS_KEYS);
        return None;
    }
    ok.then_some(out)
}

const STRUCT_NEEDS_KEYS: &str = "an `#[index]` on the struct needs its keys: \
     `#[index(keys(category = 1, price = -1))]`; to index one field, put `#[index]` on the field";

fn field_key(f: &Field<'_>, kind: Kind, span: Span) -> Key {
    Key {
        path: KeyPath {
            head: f.rust_name.clone(),
            rest: Vec::new(),
            rest_idents: Vec::new(),
            span: f.ident.span(),
            tokens: quote!(#f),
        },
        kind,
        kind_span: span,
    }
}

impl quote::ToTokens for Field<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        self.ident.to_tokens(tokens);
    }
}

fn parse_items(
    input: ParseStream<'_>,
    field: Option<&Field<'_>>,
    out: &mut IndexAttr,
    errors: &mut Errors,
) -> syn::Result<()> {
    let mut seen: Vec<String> = Vec::new();
    let mut first = true;
    while !input.is_empty() {
        // On a field, a leading key kind: `#[index(-1, unique)]`, `#[index("text")]`.
        if input.peek(Token![-]) || input.peek(LitInt) || input.peek(LitStr) {
            let (kind, span) = parse_kind(input)?;
            match field {
                Some(f) if first => out.keys.push(field_key(f, kind, span)),
                Some(_) => errors.at(span, "the key kind goes first: `#[index(-1, unique)]`"),
                None => errors.at(
                    span,
                    "on the struct, give each key its kind inside `keys(...)`: \
                     `#[index(keys(price = -1))]`",
                ),
            }
        } else {
            let ident = Ident::parse_any(input)?;
            let key = ident.to_string();
            if !OPTIONS.contains(&key.as_str()) {
                return Err(syn::Error::new(
                    ident.span(),
                    format!(
                        "unknown index option `{key}`{}; expected one of: {}",
                        did_you_mean(&key, OPTIONS.iter().copied()),
                        OPTIONS.join(", ")
                    ),
                ));
            }
            if seen.contains(&key) {
                errors.at(ident.span(), format!("duplicate index option `{key}`"));
            }
            seen.push(key.clone());
            parse_option(input, &ident, field, out, errors)?;
        }
        first = false;
        if input.is_empty() {
            break;
        }
        input.parse::<Token![,]>()?;
    }
    // `#[index(unique)]` on a field: ascending.
    if let (Some(f), true) = (field, out.keys.is_empty()) {
        out.keys.push(field_key(f, Kind::Asc, out.attr_span));
    }
    Ok(())
}

fn parse_bool_flag(input: ParseStream<'_>) -> syn::Result<bool> {
    if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        let lit: syn::Lit = input.parse()?;
        match lit {
            syn::Lit::Bool(b) => Ok(b.value),
            other => Err(syn::Error::new_spanned(other, "expected `true` or `false`")),
        }
    } else {
        Ok(true)
    }
}

fn parse_option(
    input: ParseStream<'_>,
    ident: &Ident,
    field: Option<&Field<'_>>,
    out: &mut IndexAttr,
    errors: &mut Errors,
) -> syn::Result<()> {
    match ident.to_string().as_str() {
        "keys" => {
            let content;
            syn::parenthesized!(content in input);
            // Parsed even where it does not belong, so the one error is about its place.
            let mut keys: Vec<Key> = Vec::new();
            while !content.is_empty() {
                let path = parse_path(&content)?;
                content.parse::<Token![=]>()?;
                let (kind, kind_span) = parse_kind(&content)?;
                if keys
                    .iter()
                    .any(|k| k.path.head == path.head && k.path.rest == path.rest)
                {
                    errors.at(path.span, "this key appears twice in the index");
                }
                keys.push(Key {
                    path,
                    kind,
                    kind_span,
                });
                if content.is_empty() {
                    break;
                }
                content.parse::<Token![,]>()?;
            }
            if field.is_some() {
                errors.at(
                    ident.span(),
                    "`keys(...)` belongs on the struct; on a field the key is the field itself: \
                     write `#[index(-1)]`, or move the compound index to the struct",
                );
                return Ok(());
            }
            if keys.is_empty() {
                errors.at(
                    ident.span(),
                    "`keys(...)` needs at least one key: `keys(name = 1)`",
                );
            }
            out.has_keys_list = true;
            out.keys = keys;
        }
        "unique" => {
            let v = parse_bool_flag(input)?;
            out.unique = Some((v, ident.span()));
        }
        "sparse" => out.sparse = parse_bool_flag(input)?,
        "hidden" => out.hidden = parse_bool_flag(input)?,
        "name" => {
            input.parse::<Token![=]>()?;
            let name = crate::ast::lit_str(input, "`name`")?;
            if name.value().is_empty() || name.value() == "*" {
                errors.spanned(&name, "an index name cannot be empty or `*`");
            }
            out.name = Some(name);
        }
        "expire_after" => {
            input.parse::<Token![=]>()?;
            let lit: syn::Lit = input.parse()?;
            let secs = match &lit {
                syn::Lit::Int(i) => i.base10_parse::<u64>().ok(),
                syn::Lit::Str(s) => parse_duration(&s.value()),
                _ => None,
            };
            match secs {
                Some(s) if s <= i32::MAX as u64 => out.expire = Some((s, ident.span())),
                _ => errors.spanned(
                    &lit,
                    "`expire_after` takes seconds (`expire_after = 3600`) or a duration string \
                     of whole units s, m, h, d, w (`expire_after = \"30d\"`, `\"1d12h\"`), at \
                     most 2147483647 seconds",
                ),
            }
        }
        "collation" => {
            let content;
            syn::parenthesized!(content in input);
            out.collation = Some(parse_collation(&content, ident.span(), errors)?);
        }
        _ => {
            // "partial"
            let content;
            syn::parenthesized!(content in input);
            while !content.is_empty() {
                parse_clause(&content, &mut out.partial)?;
                if content.is_empty() {
                    break;
                }
                content.parse::<Token![,]>()?;
            }
            if out.partial.is_empty() {
                errors.at(
                    ident.span(),
                    "`partial(...)` needs a condition: `partial(status = \"active\")`",
                );
            }
        }
    }
    Ok(())
}

fn parse_collation(
    content: ParseStream<'_>,
    span: Span,
    errors: &mut Errors,
) -> syn::Result<CollationDecl> {
    let mut c = CollationDecl {
        locale: None,
        strength: None,
        case_level: None,
        numeric_ordering: None,
    };
    while !content.is_empty() {
        let key: Ident = content.parse()?;
        content.parse::<Token![=]>()?;
        match key.to_string().as_str() {
            "locale" => c.locale = Some(crate::ast::lit_str(content, "`locale`")?),
            "strength" => {
                let lit: LitInt = content.parse()?;
                match lit.base10_parse::<u8>() {
                    Ok(s @ 1..=5) => c.strength = Some(s),
                    _ => errors.spanned(&lit, "`strength` is a collation level from 1 to 5"),
                }
            }
            "case_level" => c.case_level = Some(content.parse::<LitBool>()?.value),
            "numeric_ordering" => c.numeric_ordering = Some(content.parse::<LitBool>()?.value),
            other => {
                return Err(syn::Error::new(
                    key.span(),
                    format!(
                        "unknown collation option `{other}`{}; expected one of: {}",
                        did_you_mean(other, COLLATION_OPTIONS.iter().copied()),
                        COLLATION_OPTIONS.join(", ")
                    ),
                ))
            }
        }
        if content.is_empty() {
            break;
        }
        content.parse::<Token![,]>()?;
    }
    if c.locale.is_none() {
        errors.at(
            span,
            "`collation(...)` needs a `locale`: `collation(locale = \"en\", strength = 2)`",
        );
    }
    Ok(c)
}

fn parse_clause(content: ParseStream<'_>, out: &mut Vec<Clause>) -> syn::Result<()> {
    let path = parse_path(content)?;
    if content.peek(Token![=]) {
        content.parse::<Token![=]>()?;
        let value = parse_lit(content)?;
        out.push(Clause {
            path,
            op: "eq",
            value,
        });
        return Ok(());
    }
    let ops;
    syn::parenthesized!(ops in content);
    while !ops.is_empty() {
        let op = Ident::parse_any(&ops)?;
        let name = op.to_string();
        let Some(op_name) = PARTIAL_OPS.iter().find(|o| **o == name) else {
            return Err(syn::Error::new(
                op.span(),
                format!(
                    "unknown partial filter operator `{name}`{}; expected one of: {}",
                    did_you_mean(&name, PARTIAL_OPS.iter().copied()),
                    PARTIAL_OPS.join(", ")
                ),
            ));
        };
        ops.parse::<Token![=]>()?;
        let value = parse_lit(&ops)?;
        let wrong = match (*op_name, &value) {
            ("exists", Lit::Bool(_)) => None,
            ("exists", _) => Some("`exists` takes `true` or `false`"),
            ("type", Lit::Str(..)) => None,
            ("type", _) => Some("`type` takes a BSON type alias: `type = \"string\"`"),
            _ => None,
        };
        if let Some(message) = wrong {
            return Err(syn::Error::new(op.span(), message));
        }
        out.push(Clause {
            path: path.clone(),
            op: op_name,
            value,
        });
        if ops.is_empty() {
            break;
        }
        ops.parse::<Token![,]>()?;
    }
    Ok(())
}

fn parse_lit(input: ParseStream<'_>) -> syn::Result<Lit> {
    let negative = input.peek(Token![-]);
    if negative {
        input.parse::<Token![-]>()?;
    }
    let lit: syn::Lit = input.parse()?;
    let sign = if negative { -1 } else { 1 };
    let value = match &lit {
        syn::Lit::Int(i) if i.suffix().is_empty() => Lit::Int(sign * i.base10_parse::<i64>()?),
        syn::Lit::Float(f) if f.suffix().is_empty() => {
            Lit::Float(if negative { -1.0 } else { 1.0 } * f.base10_parse::<f64>()?)
        }
        syn::Lit::Str(s) if !negative => Lit::Str(s.value()),
        syn::Lit::Bool(b) if !negative => Lit::Bool(b.value),
        other => {
            return Err(syn::Error::new_spanned(
                other,
                "a partial filter value is a string, an integer, a float or a bool literal",
            ))
        }
    };
    Ok(value)
}

fn parse_path(input: ParseStream<'_>) -> syn::Result<KeyPath> {
    if input.peek(LitStr) {
        let s: LitStr = input.parse()?;
        let value = s.value();
        let mut parts = value.split('.').map(str::to_owned);
        let head = parts.next().unwrap_or_default();
        let rest: Vec<String> = parts.collect();
        let rest_idents = rest.iter().map(|seg| ident_at(seg, s.span())).collect();
        return Ok(KeyPath {
            head,
            rest,
            rest_idents,
            span: s.span(),
            tokens: quote!(#s),
        });
    }
    let first = Ident::parse_any(input)?;
    let mut tokens = quote!(#first);
    let mut rest = Vec::new();
    let mut rest_idents = Vec::new();
    while input.peek(Token![.]) {
        let dot: Token![.] = input.parse()?;
        let seg = Ident::parse_any(input)?;
        rest.push(crate::ast::unraw(&seg));
        tokens.extend(quote!(#dot #seg));
        rest_idents.push(seg);
    }
    Ok(KeyPath {
        head: crate::ast::unraw(&first),
        rest,
        rest_idents,
        span: first.span(),
        tokens,
    })
}

/// `name` as an identifier at `span` (raw when it is a keyword); a name that is no identifier at
/// all (`0`, `a-b`) gives a placeholder, used only where the text is kept as written.
fn ident_at(name: &str, span: Span) -> Ident {
    match syn::parse_str::<Ident>(name) {
        Ok(mut ident) => {
            ident.set_span(span);
            ident
        }
        Err(_) if !name.is_empty() && syn::parse_str::<Ident>(&format!("r#{name}")).is_ok() => {
            Ident::new_raw(name, span)
        }
        Err(_) => Ident::new("__not_an_ident", span),
    }
}

/// Whether a field of this type is a document or map: a path below it is kept as written.
fn is_dynamic(ty: &syn::Type) -> bool {
    let syn::Type::Path(p) = ty else { return false };
    let Some(last) = p.path.segments.last() else {
        return false;
    };
    match (last.ident.to_string().as_str(), &last.arguments) {
        ("Option" | "Vec" | "Box", syn::PathArguments::AngleBracketed(args)) => {
            matches!(args.args.first(), Some(syn::GenericArgument::Type(inner)) if is_dynamic(inner))
        }
        (name, _) => [
            "Document",
            "RawDocumentBuf",
            "Bson",
            "HashMap",
            "BTreeMap",
            "IndexMap",
            "Map",
            "Value",
        ]
        .contains(&name),
    }
}

fn parse_kind(input: ParseStream<'_>) -> syn::Result<(Kind, Span)> {
    if input.peek(Token![-]) {
        let minus: Token![-] = input.parse()?;
        let lit: LitInt = input.parse()?;
        return if lit.base10_digits() == "1" {
            Ok((Kind::Desc, minus.span))
        } else {
            Err(syn::Error::new(lit.span(), KIND_HELP))
        };
    }
    if input.peek(LitInt) {
        let lit: LitInt = input.parse()?;
        return if lit.base10_digits() == "1" {
            Ok((Kind::Asc, lit.span()))
        } else {
            Err(syn::Error::new(lit.span(), KIND_HELP))
        };
    }
    if input.peek(LitStr) {
        let lit: LitStr = input.parse()?;
        return match lit.value().as_str() {
            "text" => Ok((Kind::Text, lit.span())),
            "2dsphere" => Ok((Kind::Geo, lit.span())),
            "hashed" => Ok((Kind::Hashed, lit.span())),
            _ => Err(syn::Error::new(lit.span(), KIND_HELP)),
        };
    }
    Err(input.error(KIND_HELP))
}

const KIND_HELP: &str = "an index key is `1`, `-1`, `\"text\"`, `\"2dsphere\"` or `\"hashed\"`";

/// `"30d"`, `"12h"`, `"1d12h"`, `"90s"`: whole units s, m, h, d, w.
pub(crate) fn parse_duration(s: &str) -> Option<u64> {
    let mut total: u64 = 0;
    let mut digits = String::new();
    let mut any = false;
    for c in s.trim().chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            'w' => 604_800,
            _ => return None,
        };
        let n: u64 = digits.parse().ok()?;
        total = total.checked_add(n.checked_mul(unit)?)?;
        digits.clear();
        any = true;
    }
    (any && digits.is_empty()).then_some(total)
}

/// Whether a field type is stored as a BSON date: `bson::DateTime` (possibly in an `Option` or a
/// `Vec`). `chrono::DateTime<Utc>` is not: serde writes it as a string.
fn is_bson_date(ty: &syn::Type) -> bool {
    let syn::Type::Path(p) = ty else {
        return false;
    };
    let Some(last) = p.path.segments.last() else {
        return false;
    };
    match (&last.ident.to_string()[..], &last.arguments) {
        ("DateTime", syn::PathArguments::None) => true,
        ("Option" | "Vec", syn::PathArguments::AngleBracketed(args)) => {
            matches!(args.args.first(), Some(syn::GenericArgument::Type(inner)) if is_bson_date(inner))
        }
        _ => false,
    }
}

/// Resolves a path to its BSON form; reports what is wrong. The first segment is a field of the
/// model; the segments below go through the nested struct's `Fields` (serde's names, checked when
/// the generated code compiles, at the user's tokens), or are kept as written below a document or
/// map field.
fn resolve(path: &KeyPath, model: &Model<'_>, what: &str, errors: &mut Errors) -> Option<BsonPath> {
    let Some(field) = model.field(&path.head) else {
        errors.spanned(&path.tokens, model.unknown_field_message(&path.head, what));
        return None;
    };
    if !field.serialized {
        errors.spanned(
            &path.tokens,
            format!(
                "field `{}` is never serialized (`#[serde(skip)]`): it cannot be {what}",
                field.rust_name
            ),
        );
        return None;
    }
    if path.rest.iter().any(|s| s.is_empty() || s.starts_with('$')) {
        errors.spanned(
            &path.tokens,
            "a path segment cannot be empty or start with `$`",
        );
        return None;
    }
    let mut out = BsonPath::text(&field.bson_name);
    if path.rest.is_empty() {
        return Some(out);
    }
    out.span = Some(path.span);
    let krate = &model.krate;
    let p = quote!(#krate::__private);
    let model_ident = model.ident;
    let mut head = field.ident.clone();
    head.set_span(path.span);
    // The typed names of the struct the path continues in, spanned at the segment that led there.
    let mut names = crate::errors::respan_all(
        quote!(#p::FieldName::nested(<#model_ident as #p::Fields>::FIELDS.#head)),
        path.span,
    );
    let mut typed = !is_dynamic(field.ty) && !field.custom_serializer;
    for (seg, ident) in path.rest.iter().zip(&path.rest_idents) {
        out.push_text(".");
        // A position in an array (`items.0`) or a name that is no identifier: as written, and
        // so is everything below it.
        if seg.parse::<usize>().is_ok() || *ident == "__not_an_ident" {
            typed = false;
        }
        if !typed {
            out.push_text(seg);
            continue;
        }
        let span = ident.span();
        let step = quote_spanned!(span=> #names.#ident);
        let p_here = crate::errors::respan_all(p.clone(), span);
        out.pieces.push(Piece::Step(
            quote_spanned!(span=> #p_here::step(#step)),
            seg.clone(),
        ));
        names = quote_spanned!(span=> #p_here::FieldName::nested(#step));
    }
    Some(out)
}

fn check(a: IndexAttr, model: &Model<'_>, errors: &mut Errors) -> Option<Index> {
    let before = errors.count();
    let mut keys = Vec::new();
    for k in &a.keys {
        let what = if a.shard_key {
            "a shard key"
        } else {
            "an index key"
        };
        if let Some(path) = resolve(&k.path, model, what, errors) {
            keys.push((path, k.kind));
        }
    }
    if keys.len() != a.keys.len() {
        return None;
    }
    if !a.shard_key
        && keys.len() == 1
        && keys[0].0.literal().as_deref() == Some("_id")
        && matches!(keys[0].1, Kind::Asc | Kind::Desc)
    {
        errors.at(
            a.keys[0].kind_span,
            "`_id` is always indexed (the `_id_` index, unique): remove this index",
        );
    }
    let hashed: Vec<&Key> = a.keys.iter().filter(|k| k.kind == Kind::Hashed).collect();
    if hashed.len() > 1 {
        errors.at(hashed[1].kind_span, "an index can have only one hashed key");
    }
    if let Some((true, span)) = a.unique {
        if !hashed.is_empty() {
            errors.at(
                span,
                "a hashed index cannot be unique: index the field with `1` for uniqueness",
            );
        }
    }
    if let Some((_, span)) = a.expire {
        if a.keys.len() != 1 {
            errors.at(
                span,
                "a TTL index (`expire_after`) must have exactly one key, a date field",
            );
        } else {
            let k = &a.keys[0];
            let field = model.field(&k.path.head);
            if !matches!(k.kind, Kind::Asc | Kind::Desc) {
                errors.at(
                    span,
                    "a TTL index (`expire_after`) needs a `1` or `-1` key on a date field",
                );
            } else if let Some(f) = field.filter(|f| !f.custom_serializer && k.path.rest.is_empty())
            {
                if !is_bson_date(f.ty) {
                    errors.at(
                        span,
                        format!(
                            "a TTL index needs a field stored as a BSON date, and `{}` has type `{}`; \
                             use `bson::DateTime` (a `chrono::DateTime` is serialized as a string and \
                             would never expire), or a `#[serde(with = ...)]` helper that writes a \
                             BSON date",
                            f.rust_name,
                            crate::errors::type_string(f.ty)
                        ),
                    );
                }
            }
        }
    }
    let mut partial = Vec::new();
    for c in &a.partial {
        if let Some(path) = resolve(&c.path, model, "a partial filter field", errors) {
            partial.push((path, c.op, c.value.clone()));
        }
    }
    let collation = a.collation.as_ref().and_then(|c| {
        c.locale.as_ref().map(|l| CheckedCollation {
            locale: l.value(),
            strength: c.strength,
            case_level: c.case_level,
            numeric_ordering: c.numeric_ordering,
        })
    });
    if errors.count() != before {
        return None;
    }
    let name = a.name.as_ref().map_or_else(
        || {
            // mongod's default: `path_1_other_-1`.
            let mut name = BsonPath {
                pieces: Vec::new(),
                span: None,
            };
            for (i, (path, kind)) in keys.iter().enumerate() {
                if i > 0 {
                    name.push_text("_");
                }
                name.push_path(path);
                name.push_text(&format!("_{}", kind.suffix()));
            }
            name
        },
        |lit| BsonPath::text(&lit.value()),
    );
    Some(Index {
        span: a.name.as_ref().map_or(a.attr_span, LitStr::span),
        explicit_name: a.name.is_some(),
        name,
        first_field: a.keys[0].path.head.clone(),
        keys,
        unique: a.unique.is_some_and(|(u, _)| u),
        sparse: a.sparse,
        hidden: a.hidden,
        expire: a.expire.map(|(s, _)| s),
        collation,
        partial,
    })
}

/// The `IndexSpec` expression of an index the derive declares itself: ascending keys (BSON
/// paths), no collation or partial filter, named like mongod unless `name` is given.
pub(crate) fn plain_spec(
    p: &TokenStream,
    keys: &[&str],
    name: Option<&str>,
    unique: bool,
    ttl: Option<u64>,
) -> TokenStream {
    let keys: Vec<(&str, i32)> = keys.iter().map(|k| (*k, 1)).collect();
    directed_spec(p, &keys, name, unique, ttl)
}

/// [`plain_spec`] with a direction per key (`1` or `-1`): `{host: 1, time: -1}`, named
/// `host_1_time_-1` unless `name` is given.
pub(crate) fn directed_spec(
    p: &TokenStream,
    keys: &[(&str, i32)],
    name: Option<&str>,
    unique: bool,
    ttl: Option<u64>,
) -> TokenStream {
    let name = name.map_or_else(
        || {
            keys.iter()
                .map(|(k, d)| format!("{k}_{d}"))
                .collect::<Vec<_>>()
                .join("_")
        },
        str::to_owned,
    );
    let ttl = match ttl {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    };
    let keys = keys.iter().map(|(path, d)| {
        let kind = if *d < 0 {
            quote!(#p::IndexKind::Descending)
        } else {
            quote!(#p::IndexKind::Ascending)
        };
        quote!(#p::IndexKey { path: #path, kind: #kind })
    });
    quote!(#p::IndexSpec::from_parts(#p::IndexParts {
        keys: &[#(#keys),*],
        name: #name,
        unique: #unique,
        sparse: false,
        hidden: false,
        expire_after_seconds: #ttl,
        collation: ::core::option::Option::None,
        partial: &[],
    }))
}

/// The index of a key list written elsewhere than `#[index]` (a shard key's): `keys` as inside
/// `keys(...)`, each path resolved and checked like an index key; errors point at `span` and at
/// the user's tokens.
pub(crate) fn from_keys(
    keys: TokenStream,
    span: Span,
    model: &Model<'_>,
    errors: &mut Errors,
) -> Option<Index> {
    let attr: syn::Attribute = syn::parse_quote_spanned!(span=> #[index(keys(#keys))]);
    let mut parsed = parse_attr(&attr, None, errors)?;
    parsed.shard_key = true;
    check(parsed, model, errors)
}

impl Index {
    /// The index name, a `&'static str` const expression.
    pub(crate) fn name_expr(&self, p: &TokenStream) -> TokenStream {
        self.name.expr(p)
    }

    /// Whether the first key is the BSON path `path`.
    pub(crate) fn starts_with_key(&self, path: &str) -> bool {
        self.keys
            .first()
            .is_some_and(|(k, _)| k.literal().as_deref() == Some(path))
    }

    /// Restricts the index to the documents whose `field` equals `value` (a partial filter
    /// clause), and, when the name is mongod's default, suffixes it with `_value` so the same
    /// keys can be indexed for another value under another name.
    pub(crate) fn restrict_to(&mut self, field: &str, value: &str, named: bool) {
        self.partial
            .push((BsonPath::text(field), "eq", Lit::Str(value.to_owned())));
        if !named {
            self.name.push_text(&format!("_{value}"));
        }
    }

    /// The keys as a person reads them (nested steps by their Rust names), each with whether it
    /// is hashed: what two declarations of one model compare by.
    pub(crate) fn key_paths(&self) -> Vec<(String, bool)> {
        self.keys
            .iter()
            .map(|(path, kind)| (path.display(), *kind == Kind::Hashed))
            .collect()
    }

    /// The BSON path of the first key, when it is a top-level field (no nested step).
    pub(crate) fn first_key_literal(&self) -> Option<String> {
        self.keys.first().and_then(|(k, _)| k.literal())
    }

    /// Whether the index is `unique`.
    pub(crate) fn is_unique(&self) -> bool {
        self.unique
    }

    /// Where errors about this index point: its `name = "..."`, else its attribute.
    pub(crate) fn span(&self) -> Span {
        self.span
    }

    /// The key document as a person reads it: `{userId: 1, region: "hashed"}`.
    pub(crate) fn key_display(&self) -> String {
        let keys: Vec<String> = self
            .keys
            .iter()
            .map(|(path, kind)| match kind {
                Kind::Asc | Kind::Desc => format!("{}: {}", path.display(), kind.suffix()),
                _ => format!("{}: \"{}\"", path.display(), kind.suffix()),
            })
            .collect();
        format!("{{{}}}", keys.join(", "))
    }

    /// Whether the name was given with `name = "..."`.
    pub(crate) fn is_named(&self) -> bool {
        self.explicit_name
    }

    /// Whether the server would take `other` for this index: the same keys, `unique`, `sparse`,
    /// partial filter and collation (MongoDB 5.0+ keeps one index per such signature, whatever
    /// the names, TTLs and `hidden`).
    fn same_pattern(&self, other: &Index) -> bool {
        let collation = |i: &Index| {
            i.collation.as_ref().map(|c| {
                (
                    c.locale.clone(),
                    c.strength,
                    c.case_level,
                    c.numeric_ordering,
                )
            })
        };
        self.keys == other.keys
            && (self.unique, self.sparse) == (other.unique, other.sparse)
            && self.partial == other.partial
            && collation(self) == collation(other)
    }

    /// The `IndexSpec` expression.
    pub(crate) fn expand(&self, krate: &syn::Path) -> TokenStream {
        let p = quote!(#krate::__private);
        let keys = self.keys.iter().map(|(path, kind)| {
            let variant = kind.variant();
            let path = path.expr(&p);
            quote!(#p::IndexKey { path: #path, kind: #p::IndexKind::#variant })
        });
        let name = self.name.expr(&p);
        let (unique, sparse, hidden) = (self.unique, self.sparse, self.hidden);
        let expire = match self.expire {
            Some(s) => quote!(::core::option::Option::Some(#s)),
            None => quote!(::core::option::Option::None),
        };
        let opt = |v: Option<TokenStream>| match v {
            Some(t) => quote!(::core::option::Option::Some(#t)),
            None => quote!(::core::option::Option::None),
        };
        let collation = opt(self.collation.as_ref().map(|c| {
            let locale = &c.locale;
            let strength = opt(c.strength.map(|s| quote!(#s)));
            let case_level = opt(c.case_level.map(|b| quote!(#b)));
            let numeric = opt(c.numeric_ordering.map(|b| quote!(#b)));
            quote!(#p::Collation {
                locale: #locale,
                strength: #strength,
                case_level: #case_level,
                numeric_ordering: #numeric,
            })
        }));
        let partial = self.partial.iter().map(|(path, op, value)| {
            let op = Ident::new(
                match *op {
                    "eq" => "Eq",
                    "gt" => "Gt",
                    "gte" => "Gte",
                    "lt" => "Lt",
                    "lte" => "Lte",
                    "exists" => "Exists",
                    _ => "Type",
                },
                Span::call_site(),
            );
            let value = match value {
                Lit::Str(s) => quote!(#p::Literal::Str(#s)),
                Lit::Int(i) => quote!(#p::Literal::Int(#i)),
                Lit::Float(f) => quote!(#p::Literal::Float(#f)),
                Lit::Bool(b) => quote!(#p::Literal::Bool(#b)),
            };
            let path = path.expr(&p);
            quote!(#p::PartialClause { path: #path, op: #p::PartialOp::#op, value: #value })
        });
        quote! {
            #p::IndexSpec::from_parts(#p::IndexParts {
                keys: &[#(#keys),*],
                name: #name,
                unique: #unique,
                sparse: #sparse,
                hidden: #hidden,
                expire_after_seconds: #expire,
                collation: #collation,
                partial: &[#(#partial),*],
            })
        }
    }
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
