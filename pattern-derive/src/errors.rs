//! Error accumulation: every mistake is reported at once, each at its own token.

use std::fmt::Display;

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned, ToTokens};

/// Collects errors so the user sees all of them, not just the first.
#[derive(Default)]
pub(crate) struct Errors {
    first: Option<syn::Error>,
    count: usize,
}

impl Errors {
    /// An error at `span`.
    pub(crate) fn at(&mut self, span: Span, message: impl Display) {
        self.push(syn::Error::new(span, message));
    }

    /// An error covering the tokens of `tokens`.
    pub(crate) fn spanned(&mut self, tokens: impl quote::ToTokens, message: impl Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// An already-built error (a parse error, or several combined).
    pub(crate) fn push(&mut self, error: syn::Error) {
        self.count += error.clone().into_iter().count();
        match &mut self.first {
            Some(first) => first.combine(error),
            None => self.first = Some(error),
        }
    }

    /// How many messages were recorded so far.
    pub(crate) fn count(&self) -> usize {
        self.count
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    /// The combined error, if any was recorded.
    pub(crate) fn into_result(self) -> Result<(), syn::Error> {
        self.first.map_or(Ok(()), Err)
    }
}

/// ` (did you mean `x`?)` when a candidate is close to `got`, else nothing.
pub(crate) fn did_you_mean<'a>(got: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let best = candidates
        .into_iter()
        .map(|c| (distance(&got.to_lowercase(), &c.to_lowercase()), c))
        .filter(|(d, c)| *d <= (c.len().max(got.len()) / 3).max(1))
        .min_by_key(|(d, _)| *d);
    match best {
        Some((_, c)) => format!(" (did you mean `{c}`?)"),
        None => String::new(),
    }
}

/// Edit distance where a swap of two neighbours counts as one edit (optimal string alignment).
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// The same tokens, every one of them at `span`: so an error in generated code points at the
/// user's token, interpolated paths (`::pattern_runtime::__private::...`) included.
pub(crate) fn respan_all(tokens: proc_macro2::TokenStream, span: Span) -> proc_macro2::TokenStream {
    tokens
        .into_iter()
        .map(|mut tt| {
            if let proc_macro2::TokenTree::Group(g) = &tt {
                let mut group =
                    proc_macro2::Group::new(g.delimiter(), respan_all(g.stream(), span));
                group.set_span(span);
                tt = proc_macro2::TokenTree::Group(group);
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
}

/// A type as a person writes it: `DateTime<Utc>`, `Option<Vec<u8>>`, `&'a str`.
pub(crate) fn type_string(ty: &syn::Type) -> String {
    let raw = quote::ToTokens::to_token_stream(ty).to_string();
    // No space before these, nor after the opening ones.
    let tight = |c: char| matches!(c, '<' | '>' | ':' | '(' | ')' | '[' | ']' | '&' | ',' | ';');
    let opening = |c: char| matches!(c, '<' | ':' | '(' | '[' | '&');
    let chars: Vec<char> = raw.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c == ' ' {
            let prev = out.chars().last();
            let next = chars.get(i + 1).copied();
            if prev.is_none_or(|p| p == ' ' || opening(p)) || next.is_some_and(tight) {
                continue;
            }
        }
        out.push(c);
        if c == ',' || c == ';' {
            out.push(' ');
        }
    }
    out.trim().to_owned()
}

/// An attribute's options as a person writes them, for a message that gives the attribute back
/// under another name: `sum = Order.amount, by = user_id`.
pub(crate) fn options_string(tokens: &TokenStream) -> String {
    use proc_macro2::{Delimiter, TokenTree};
    let mut out = String::new();
    for tt in tokens.clone() {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == ',' => out.push_str(", "),
            TokenTree::Punct(p) if p.as_char() == '=' => out.push_str(" = "),
            TokenTree::Group(g) => {
                let (open, close) = match g.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::Brace => ("{", "}"),
                    Delimiter::None => ("", ""),
                };
                out.push_str(open);
                out.push_str(&options_string(&g.stream()));
                out.push_str(close);
            }
            other => {
                // Two words in a row keep their space (`r#type` is one token).
                let word = |c: char| c.is_alphanumeric() || c == '_';
                let text = other.to_string();
                if out.ends_with(word) && text.starts_with(word) {
                    out.push(' ');
                }
                out.push_str(&text);
            }
        }
    }
    out
}

/// The spans of the first and last tokens of `tokens`. Generated code starting at the first and
/// ending at the second makes rustc point at all of `tokens` (a proc macro cannot join spans on
/// stable Rust).
pub(crate) fn span_range(tokens: &impl ToTokens) -> (Span, Span) {
    let mut iter = tokens.to_token_stream().into_iter();
    let first = iter.next().map_or_else(Span::call_site, |t| t.span());
    let last = iter.last().map_or(first, |t| t.span());
    (first, last)
}

/// `const _: () = if let Some(m) = <message> { panic!("{}", m) };`, the panic spanned from `lo` to
/// `hi`: a compile-time check whose message is computed from other types' constants.
pub(crate) fn fail_with(message: TokenStream, lo: Span, hi: Span) -> TokenStream {
    let panic = quote_spanned!(lo=> ::core::panic);
    let args = {
        // Resolved where the binding is (a field token from inside a `macro_rules!`
        // would otherwise not see it), located at the field.
        let message =
            proc_macro2::Ident::new("__message", proc_macro2::Span::call_site().located_at(hi));
        quote_spanned!(hi=> ("{}", #message))
    };
    quote! {
        const _: () = if let ::core::option::Option::Some(__message) = #message {
            #panic!#args
        };
    }
}

/// `|| (&&&Probe::<Type>::new()).method()`, spanned over the whole of `ty`: the verdict of
/// `ty` (see `pattern_runtime::extended_ref::slot`).
pub(crate) fn probe_closure(p: &TokenStream, ty: &syn::Type, method: &str) -> TokenStream {
    let (lo, hi) = span_range(ty);
    let method = proc_macro2::Ident::new(method, hi);
    let imports = quote_spanned! {lo=>
        #[allow(unused_imports)]
        use #p::{
            ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
            ProbeSnapshotOnly as _, ProbeSyncable as _,
        };
    };
    let receiver = quote_spanned!(lo=> (&&&#p::RefProbe::<#ty>::new()));
    let call = quote_spanned!(hi=> .#method());
    let mut body = proc_macro2::Group::new(
        proc_macro2::Delimiter::Brace,
        quote!(#imports #receiver #call),
    );
    body.set_span(hi);
    quote_spanned!(lo=> || #body)
}

/// The BSON name of `field` (a `FieldName<T>` expression), and a compile-time check of `T` to
/// emit beside the static that uses the name: `(&&CheckProbe::of(field)).method()` must pass
/// (see `pattern_runtime`'s `checks`), or the build fails with `message` alone, at `span`.
pub(crate) fn checked_name(
    p: &TokenStream,
    field: TokenStream,
    method: &str,
    message: &str,
    span: Span,
) -> (TokenStream, TokenStream) {
    let method = proc_macro2::Ident::new(method, span);
    let check = quote_spanned! {span=> || {
        #[allow(unused_imports)]
        use #p::{
            ProbeBool as _, ProbeFloat as _, ProbeInteger as _, ProbeNumeric as _,
            ProbeOptional as _,
            ProbeOtherCheck as _,
        };
        (&&#p::CheckProbe::of(#field)).#method()
    }};
    let fail = fail_with(quote!(#p::unless(#check, #message)), span, span);
    (quote_spanned!(span=> #field.as_str()), fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(
            did_you_mean("uniqe", ["unique", "sparse"]),
            " (did you mean `unique`?)"
        );
        assert_eq!(
            did_you_mean("emial", ["email", "name"]),
            " (did you mean `email`?)"
        );
        assert_eq!(did_you_mean("zzz", ["unique", "sparse"]), "");
        assert_eq!(
            did_you_mean("ratingcount", ["rating_count", "name"]),
            " (did you mean `rating_count`?)"
        );
    }

    #[test]
    fn types_print_as_written() {
        let t = |s: &str| type_string(&syn::parse_str(s).unwrap());
        assert_eq!(
            t("chrono::DateTime<chrono::Utc>"),
            "chrono::DateTime<chrono::Utc>"
        );
        assert_eq!(t("Option<Vec<u8>>"), "Option<Vec<u8>>");
        assert_eq!(t("Box<dyn Fn(u8) -> u8>"), "Box<dyn Fn(u8) -> u8>");
        assert_eq!(t("&'a str"), "&'a str");
        assert_eq!(t("HashMap<String, u8>"), "HashMap<String, u8>");
        assert_eq!(t("[u8; 4]"), "[u8; 4]");
    }

    #[test]
    fn options_print_as_written() {
        let o = |s: &str| options_string(&s.parse().unwrap());
        assert_eq!(
            o("sum = Order . amount , by = user_id"),
            "sum = Order.amount, by = user_id"
        );
        assert_eq!(o("count = recent_reviews"), "count = recent_reviews");
        assert_eq!(
            o("sum = crate::orders::Order.amount,by=user_id"),
            "sum = crate::orders::Order.amount, by = user_id"
        );
        assert_eq!(
            o("sort(created_at = -1), limit = 10"),
            "sort(created_at = -1), limit = 10"
        );
    }
}
