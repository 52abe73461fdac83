//! One reader for every attribute's options, so that each behaves the same: an unknown key is
//! an error at the key with "did you mean" and the keys allowed, a repeated key an error at the
//! repetition (the first stays), and either way the value is skipped and the rest is still read,
//! so every mistake of the attribute shows at once. A value that does not parse is an error at
//! its token, and the reader goes on after the next comma.
//!
//! [`parse`] reads `key = value, key(..), flag` from tokens (keys may be keywords: `type`);
//! [`nested`] does the same through syn's `parse_nested_meta`, for readers written against
//! `ParseNestedMeta`. What a key's value is, and which keys are required, is the pattern's.

use proc_macro2::{Span, TokenStream, TokenTree};
use syn::ext::IdentExt;
use syn::meta::ParseNestedMeta;
use syn::parse::{ParseStream, Parser};
use syn::{Ident, Token};

use crate::errors::{did_you_mean, Errors};

/// The keys of one attribute (or of every attribute of one name on an item), and those read so
/// far: a key repeated in a second `#[model(..)]` is a repetition too.
pub(crate) struct Keys<'a> {
    /// How messages name the options: "outlier" for "unknown outlier option".
    what: &'a str,
    allowed: &'a [&'a str],
    /// The attribute's forms, said after the keys allowed when a key is unknown.
    help: Option<&'a str>,
    seen: Vec<String>,
    /// No unknown key and no value that failed to parse since the reading began: the caller
    /// reports missing keys only then (the keys an unknown one meant are not missing).
    clean: bool,
}

impl<'a> Keys<'a> {
    pub(crate) fn new(what: &'a str, allowed: &'a [&'a str]) -> Self {
        Keys {
            what,
            allowed,
            help: None,
            seen: Vec::new(),
            clean: true,
        }
    }

    /// The same keys, with the attribute's forms said after an unknown key's message.
    pub(crate) fn with_help(mut self, help: &'a str) -> Self {
        self.help = Some(help);
        self
    }

    /// [`nested`], remembering the keys across calls.
    pub(crate) fn nested(
        &mut self,
        attr: &syn::Attribute,
        errors: &mut Errors,
        value: impl FnMut(&str, &ParseNestedMeta<'_>, &mut Errors) -> syn::Result<()>,
    ) -> bool {
        nested_with(self, attr, errors, value)
    }

    /// Whether the value of `key` is to be read: `false` (reported) when it is unknown or given
    /// before.
    pub(crate) fn take(&mut self, key: &str, span: Span, errors: &mut Errors) -> bool {
        if !self.allowed.contains(&key) {
            self.clean = false;
            errors.at(
                span,
                format!(
                    "unknown {} option `{key}`{}; expected one of: {}{}",
                    self.what,
                    did_you_mean(key, self.allowed.iter().copied()),
                    self.allowed.join(", "),
                    self.help
                        .map(|h| format!("; write {h}"))
                        .unwrap_or_default()
                ),
            );
            return false;
        }
        if self.seen.iter().any(|k| k == key) {
            errors.at(
                span,
                format!(
                    "duplicate {} option `{key}`: give it once (the first is kept)",
                    self.what
                ),
            );
            return false;
        }
        self.seen.push(key.to_owned());
        true
    }

    /// One option: `key` checked ([`take`](Self::take)), then its value read by `value`; a value
    /// that does not parse is reported and leaves the reading unclean.
    fn option(
        &mut self,
        key: &str,
        span: Span,
        errors: &mut Errors,
        value: impl FnOnce(&mut Errors) -> syn::Result<()>,
    ) {
        if self.take(key, span, errors) {
            if let Err(e) = value(errors) {
                errors.push(e);
                self.clean = false;
            }
        }
    }
}

/// Skips the rest of an option: up to the next top-level comma, or the end.
pub(crate) fn skip_value(input: ParseStream<'_>) -> syn::Result<()> {
    while !input.is_empty() && !input.peek(Token![,]) {
        input.parse::<TokenTree>()?;
    }
    Ok(())
}

/// Whether `key = ..` is among the top-level options of `attr`, before any reader parses them:
/// for an attribute whose form says which reader, or which message, fits it (`by` tells a value
/// `#[computed]` from another model from a subset's `#[summary]`).
pub(crate) fn has_key(attr: &syn::Attribute, key: &str) -> bool {
    let syn::Meta::List(list) = &attr.meta else {
        return false;
    };
    let tokens: Vec<TokenTree> = list.tokens.clone().into_iter().collect();
    tokens.windows(2).any(|w| {
        matches!(&w[0], TokenTree::Ident(i) if i == key)
            && matches!(&w[1], TokenTree::Punct(p) if p.as_char() == '=')
    })
}

/// Reads `tokens` (an attribute's list) as options of `allowed`, calling `value` with each key
/// and the input right after it (`= ..`, `(..)`, or nothing for a flag). Returns whether every
/// option parsed and was known (so that the caller reports missing keys only then); repeated
/// keys are reported and skipped.
pub(crate) fn parse(
    tokens: TokenStream,
    what: &str,
    allowed: &[&str],
    errors: &mut Errors,
    value: impl FnMut(&Ident, ParseStream<'_>, &mut Errors) -> syn::Result<()>,
) -> bool {
    let parser = |input: ParseStream<'_>| read(input, what, allowed, errors, value);
    match parser.parse2(tokens) {
        Ok(clean) => clean,
        Err(e) => {
            errors.push(e);
            false
        }
    }
}

/// [`parse`] on the rest of a stream (after a leading value of the attribute's own, as in
/// `#[in_tree(Category, node = ..)]`). `Err` is a syntax error between options.
pub(crate) fn read(
    input: ParseStream<'_>,
    what: &str,
    allowed: &[&str],
    errors: &mut Errors,
    mut value: impl FnMut(&Ident, ParseStream<'_>, &mut Errors) -> syn::Result<()>,
) -> syn::Result<bool> {
    let mut keys = Keys::new(what, allowed);
    while !input.is_empty() {
        let key = Ident::parse_any(input)?;
        let name = key.unraw().to_string();
        keys.option(&name, key.span(), errors, |errors| {
            value(&key, input, errors)
        });
        skip_value(input)?;
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
        }
    }
    Ok(keys.clean)
}

/// [`parse`] through `attr.parse_nested_meta`: `value` gets each known key's
/// [`ParseNestedMeta`] (`meta.value()`, `meta.input`, `meta.parse_nested_meta`).
pub(crate) fn nested(
    attr: &syn::Attribute,
    what: &str,
    allowed: &[&str],
    errors: &mut Errors,
    value: impl FnMut(&str, &ParseNestedMeta<'_>, &mut Errors) -> syn::Result<()>,
) -> bool {
    nested_with(&mut Keys::new(what, allowed), attr, errors, value)
}

fn nested_with(
    keys: &mut Keys<'_>,
    attr: &syn::Attribute,
    errors: &mut Errors,
    mut value: impl FnMut(&str, &ParseNestedMeta<'_>, &mut Errors) -> syn::Result<()>,
) -> bool {
    keys.clean = true;
    let result = attr.parse_nested_meta(|meta| {
        let (name, span) = match meta.path.get_ident() {
            Some(ident) => (ident.unraw().to_string(), ident.span()),
            None => (
                {
                    let path = &meta.path;
                    quote::quote!(#path).to_string().replace(' ', "")
                },
                meta.path
                    .segments
                    .first()
                    .map_or_else(Span::call_site, |s| s.ident.span()),
            ),
        };
        keys.option(&name, span, errors, |errors| value(&name, &meta, errors));
        skip_value(meta.input)
    });
    if let Err(e) = result {
        errors.push(e);
        return false;
    }
    keys.clean
}
