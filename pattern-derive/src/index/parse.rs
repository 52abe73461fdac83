//! Reading `#[index(...)]`: keys, options, collations, partial filters and paths, every
//! mistake into `Errors` at its token.

use super::*;

pub(super) fn parse_attr(
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
    let mut keys = crate::options::Keys::new("index", OPTIONS);
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
            if keys.take(&key, ident.span(), errors) {
                parse_option(input, &ident, field, out, errors)?;
            } else {
                crate::options::skip_value(input)?;
            }
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
pub(super) fn is_dynamic(ty: &syn::Type) -> bool {
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
pub(super) fn is_bson_date(ty: &syn::Type) -> bool {
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
