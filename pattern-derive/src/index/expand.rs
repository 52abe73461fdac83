//! The `IndexSpec` expressions generated code holds.

use super::*;

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

    /// The keys, each a BSON path (a nested one as a person reads it: dotted) with its
    /// direction, `0` for a text, hashed or geo key: what [`crate::keyset`] reads. None for a
    /// sparse, hidden or partial index (the planner does not use it to sort every document)
    /// or one with a collation (it orders strings by it), as the runtime's check.
    pub(crate) fn key_list(&self) -> Vec<(String, i32)> {
        if self.sparse || self.hidden || !self.partial.is_empty() || self.collation.is_some() {
            return Vec::new();
        }
        self.keys
            .iter()
            .map(|(path, kind)| {
                let dir = match kind {
                    Kind::Asc => 1,
                    Kind::Desc => -1,
                    Kind::Text | Kind::Geo | Kind::Hashed => 0,
                };
                (path.literal().unwrap_or_else(|| path.display()), dir)
            })
            .collect()
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
    pub(super) fn same_pattern(&self, other: &Index) -> bool {
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
