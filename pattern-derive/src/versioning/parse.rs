//! Reading `#[versioned(..)]` through `options.rs`, and the field marked `#[version]`.

use syn::{LitInt, LitStr};

use crate::ast::Model;
use crate::attr::Attr;
use crate::errors::Errors;

use super::*;

const OPTIONS: &[&str] = &["history", "keep", "expire_after"];

/// Reads `#[versioned]` and `#[version]`; `None` when the model is not versioned (or is wrong).
pub(super) fn collect(
    input: &syn::DeriveInput,
    model: &Model<'_>,
    errors: &mut Errors,
) -> Option<Versioning> {
    let attrs: Vec<&syn::Attribute> = Attr::Versioned.find(&input.attrs).collect();
    let marked: Vec<&crate::ast::Field<'_>> = model
        .fields
        .iter()
        .filter(|f| f.has(Attr::Version))
        .collect();
    if attrs.is_empty() {
        for f in &marked {
            errors.spanned(
                f.ident,
                "`#[version]` needs `#[versioned(history = \"...\")]` on the struct",
            );
        }
        return None;
    }
    for extra in attrs.iter().skip(1) {
        errors.spanned(extra, "one `#[versioned(...)]` per model");
    }
    let attr = attrs[0];
    let mut history: Option<LitStr> = None;
    let mut keep = None;
    let mut expire_after = None;
    let parsed =
        crate::options::nested(attr, "versioning", OPTIONS, errors, |key, meta, errors| {
            match key {
                "history" => history = Some(meta.value()?.parse::<LitStr>()?),
                "keep" => {
                    let lit: LitInt = meta.value()?.parse()?;
                    match lit.base10_parse::<u32>() {
                        Ok(n) if n > 0 => keep = Some(n),
                        _ => errors.spanned(
                            &lit,
                            "`keep` is how many revisions to keep per document: above 0",
                        ),
                    }
                }
                _ => {
                    let lit: syn::Lit = meta.value()?.parse()?;
                    let secs = match &lit {
                        syn::Lit::Int(i) => i.base10_parse::<u64>().ok(),
                        syn::Lit::Str(s) => crate::index::parse_duration(&s.value()),
                        _ => None,
                    };
                    match secs {
                        Some(s) if s > 0 && s <= i32::MAX as u64 => expire_after = Some(s),
                        _ => errors.spanned(
                            &lit,
                            "`expire_after` takes seconds or a duration such as \"90d\"",
                        ),
                    }
                }
            }
            Ok(())
        });
    let Some(history) = history else {
        if !parsed {
            return None; // the parse error already points at the attribute
        }
        errors.spanned(attr, "`#[versioned]` needs the history collection: `#[versioned(history = \"article_revisions\")]`");
        return None;
    };
    let field = super::validate::check(attr, &history, &marked, model, errors)?;
    Some(Versioning {
        history: history.value(),
        keep,
        expire_after,
        field: field.ident.clone(),
    })
}
