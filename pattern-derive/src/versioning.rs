//! `#[versioned(...)]` on the struct and `#[version]` on its integer field: parsing, checks, and
//! the generated `VersionSpec` and `Versioned` impl.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::{Ident, LitInt, LitStr};

use crate::ast::Model;
use crate::attr::Attr;
use crate::errors::Errors;
use crate::schema::{Pattern, PatternDef};

/// The versioning pattern's entry points.
pub(crate) const PATTERN: PatternDef = PatternDef {
    model: |input, model, errors| Box::new(collect(input, model, errors)),
    fields: None,
};

impl Pattern for Option<Versioning> {
    fn writes(&self) -> Option<&'static str> {
        self.as_ref().map(|_| "Revised")
    }

    fn kept(&self, field: &crate::ast::Field<'_>) -> Option<&'static str> {
        self.as_ref()
            .is_some_and(|v| v.field == *field.ident)
            .then_some("VersionField")
    }

    fn annotations(&self, field: &crate::ast::Field<'_>, p: &TokenStream) -> Vec<TokenStream> {
        self.iter()
            .filter(|v| v.field == *field.ident)
            .map(|_| quote!(#p::Annotation::Version))
            .collect()
    }

    fn items(&self, model: &Model<'_>) -> TokenStream {
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        let Some(v) = self else {
            return unversioned(model.ident, &p);
        };
        let spec = v.spec(model);
        let items = v.items(model);
        quote! {
            static __VERSIONING: #p::VersionSpec = #spec;
            #items
        }
    }

    fn specs(&self) -> Vec<TokenStream> {
        self.iter().map(|_| quote!(&__VERSIONING)).collect()
    }

    /// A versioned model whose other attributes have mistakes keeps its `Versioned` impl, so
    /// that its `insert` and `replace` calls do not add errors of their own.
    fn stubs(&self, model: &Model<'_>) -> TokenStream {
        self.iter().map(|v| v.items(model)).collect()
    }
}

/// What a model without `#[versioned]` gets: `Unversioned` (its documents may be written many
/// at once, and by other patterns' handles).
pub(crate) fn unversioned(ident: &Ident, p: &TokenStream) -> TokenStream {
    quote! {
        #[automatically_derived]
        impl #p::Unversioned for #ident {}
    }
}

/// A checked `#[versioned]` model.
pub(crate) struct Versioning {
    history: String,
    keep: Option<u32>,
    expire_after: Option<u64>,
    field: Ident,
}

const OPTIONS: &[&str] = &["history", "keep", "expire_after"];

/// Reads `#[versioned]` and `#[version]`; `None` when the model is not versioned (or is wrong).
fn collect(input: &syn::DeriveInput, model: &Model<'_>, errors: &mut Errors) -> Option<Versioning> {
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
    if history.value() == model.collection {
        errors.spanned(
            &history,
            "the history collection must differ from the model's own collection: revisions and \
             current documents would mix",
        );
    } else if history.value().is_empty()
        || history.value().contains('$')
        || history.value().starts_with("system.")
    {
        errors.spanned(&history, "not a usable collection name");
    }
    let field = match marked.as_slice() {
        [] => {
            errors.spanned(
                attr,
                "a versioned model needs one integer field marked `#[version]` (e.g. \
                 `#[version] version: i64`)",
            );
            return None;
        }
        [one] => one,
        [_, second, ..] => {
            errors.spanned(second.ident, "only one field can be the `#[version]`");
            return None;
        }
    };
    let integer = matches!(
        &field.ty,
        syn::Type::Path(p) if p.qself.is_none()
            && p.path.segments.last().is_some_and(|s| {
                s.arguments.is_empty() && ["i64", "i32", "u32"].iter().any(|t| s.ident == t)
            })
    );
    if !integer {
        errors.spanned(
            field.ty,
            format!(
                "`{}` cannot be a version: use i64, i32 or u32",
                crate::errors::type_string(field.ty)
            ),
        );
        return None;
    }
    Some(Versioning {
        history: history.value(),
        keep,
        expire_after,
        field: field.ident.clone(),
    })
}

impl Versioning {
    /// The `VersionSpec` expression.
    fn spec(&self, model: &Model<'_>) -> TokenStream {
        let v = self;
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        let ident = Ident::new(&model.ident.to_string(), v.field.span());
        let field = &v.field;
        let version_name = quote_spanned!(field.span()=> #p::version_name(#ident::FIELDS.#field));
        let history = &v.history;
        let keep = match v.keep {
            Some(k) => quote!(::core::option::Option::Some(#k)),
            None => quote!(::core::option::Option::None),
        };
        let mut indexes = vec![crate::index::plain_spec(
            &p,
            &["docId", "version"],
            None,
            true,
            None,
        )];
        if let Some(secs) = v.expire_after {
            indexes.push(crate::index::plain_spec(
                &p,
                &["archivedAt"],
                None,
                false,
                Some(secs),
            ));
        }
        quote!(#p::VersionSpec::from_parts(#p::VersionParts {
            history: #history,
            version_field: #version_name,
            keep: #keep,
            history_indexes: &[#(#indexes),*],
        }))
    }

    /// The `Versioned` impl.
    fn items(&self, model: &Model<'_>) -> TokenStream {
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        let ident = model.ident;
        let field = &self.field;
        // The type was checked in `collect`; spanned at the field all the same.
        let get = quote_spanned!(field.span()=> #p::VersionInt::to_i64(&self.#field));
        let set = quote_spanned!(field.span()=> #p::VersionInt::from_i64(version));
        quote! {
            #[automatically_derived]
            impl #p::Versioned for #ident {
                fn version(&self) -> i64 {
                    #get
                }
                fn set_version(&mut self, version: i64) {
                    self.#field = #set;
                }
            }
        }
    }
}
