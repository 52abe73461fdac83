//! Error accumulation: every mistake is reported at once, each at its own token.

use std::fmt::Display;

use proc_macro2::Span;

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

/// `; did you mean `x`?` when a candidate is close to `got`, else nothing.
pub(crate) fn did_you_mean<'a>(got: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let best = candidates
        .into_iter()
        .map(|c| (distance(&got.to_lowercase(), &c.to_lowercase()), c))
        .filter(|(d, c)| *d <= (c.len().max(got.len()) / 3).max(1))
        .min_by_key(|(d, _)| *d);
    match best {
        Some((_, c)) => format!("; did you mean `{c}`?"),
        None => String::new(),
    }
}

/// Levenshtein distance.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(
            did_you_mean("uniqe", ["unique", "sparse"]),
            "; did you mean `unique`?"
        );
        assert_eq!(did_you_mean("zzz", ["unique", "sparse"]), "");
        assert_eq!(
            did_you_mean("ratingcount", ["rating_count", "name"]),
            "; did you mean `rating_count`?"
        );
    }
}
