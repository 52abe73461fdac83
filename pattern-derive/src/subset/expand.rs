//! The generated `SubsetSpec`, the handle's constructor and the compile-time checks of the
//! types the subset names.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::Ident;

use super::*;
use crate::ast::{Field, Model};

impl SubsetField {
    /// The `SubsetSpec` expression, and the compile-time checks of its fields' types.
    pub(super) fn spec(&self, model: &Model<'_>) -> (TokenStream, Vec<TokenStream>) {
        let checks = std::cell::RefCell::new(Vec::new());
        let checked = |(name, check): (TokenStream, TokenStream)| {
            checks.borrow_mut().push(check);
            name
        };
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        let full = &self.full;
        let field = &self.bson_name;
        let limit = self.limit;
        // Each reference is spanned at the field the user wrote, type path included, so an
        // error underlines that field alone.
        let name_of = |ident: &Ident| {
            let full = respan(quote!(#full), ident.span());
            quote_spanned!(ident.span()=> #full::FIELDS.#ident.as_str())
        };
        // One reference per field: its BSON name, and the compile-time check that it is numeric.
        let full_name = crate::errors::type_string(&syn::Type::Path(syn::TypePath {
            qself: None,
            path: full.clone(),
        }));
        let numeric_of = |ident: &Ident| {
            let full = respan(quote!(#full), ident.span());
            let message = format!(
                "`{}` of `{full_name}` is not a number: a summary's sum or average reads a numeric \
                 field; use i32, i64, u32, f32 or f64 (or an Option of one)",
                crate::ast::unraw(ident)
            );
            checked(crate::errors::checked_name(
                &p,
                quote_spanned!(ident.span()=> #full::FIELDS.#ident),
                "numeric",
                &message,
                ident.span(),
            ))
        };
        let model_ident = model.ident;
        let sort = self.sort.iter().map(|(f, d)| {
            let name = name_of(f);
            quote!((#name, #d))
        });
        let parent = name_of(&self.parent);
        let mut keys = vec![quote!(#p::IndexKey { path: #parent, kind: #p::IndexKind::Ascending })];
        keys.extend(self.sort.iter().map(|(f, d)| {
            let name = name_of(f);
            let kind = if *d < 0 {
                quote!(Descending)
            } else {
                quote!(Ascending)
            };
            quote!(#p::IndexKey { path: #name, kind: #p::IndexKind::#kind })
        }));
        let full_index = crate::schema::plain_index(
            &p,
            &keys,
            format!("subset_{}_{}", model.collection, self.bson_name),
            false,
        );
        let full_span = self
            .full
            .segments
            .last()
            .map_or_else(Span::call_site, |s| s.ident.span());
        let full_schema = quote_spanned!(full_span=> <#full as #p::Model>::SCHEMA);
        let count_field = self
            .summaries
            .iter()
            .find(|c| c.kind == Kind::Count)
            .map(|c| c.bson_name.clone())
            .unwrap_or_default();
        let summaries = self.summaries.iter().map(|c| {
            let target = checked(c.target_check(model, &p));
            let kind = match (c.kind, &c.item_field) {
                (Kind::Sum, Some(item)) => {
                    let item = numeric_of(item);
                    quote!(#p::SummaryKind::Sum { item_field: #item })
                }
                (Kind::Avg, Some(item)) => {
                    let item_str = item.to_string();
                    let sum_field = self
                        .summaries
                        .iter()
                        .find(|s| {
                            s.kind == Kind::Sum
                                && s.item_field.as_ref().is_some_and(|i| *i == item_str)
                        })
                        .map(|s| s.bson_name.clone())
                        .unwrap_or_default();
                    let item = numeric_of(item);
                    quote!(#p::SummaryKind::Avg {
                        item_field: #item,
                        sum_field: #sum_field,
                        count_field: #count_field,
                    })
                }
                _ => quote!(#p::SummaryKind::Count),
            };
            quote!(#p::Summary { field: #target, kind: #kind })
        });
        let elem = &self.elem;
        let spec = quote! {
            #p::SubsetSpec::from_parts(#p::SubsetParts {
                field: #field,
                limit: #limit,
                sort: &[#(#sort),*],
                parent_key: #parent,
                full: || #full_schema,
                embed: || {
                    #[allow(unused_imports)]
                    use #p::{ProbeNoRebuild as _, ProbeRebuild as _};
                    (&&#p::RebuildProbe::<#model_ident, #full, #elem>::new()).embed()
                },
                full_index: #full_index,
                summaries: &[#(#summaries),*],
            })
        };
        (spec, checks.into_inner())
    }

    /// The checks of the summary fields' own types, also emitted with the stubs: a mistake
    /// elsewhere in the model (an average without its sum and count) does not hide them.
    pub(super) fn target_checks(&self, model: &Model<'_>) -> TokenStream {
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        self.summaries
            .iter()
            .map(|c| c.target_check(model, &p).1)
            .collect()
    }

    /// The way to the subset's handle (`collection.subset(Model::FIELDS.field)`) and the
    /// compile-time assertions.
    pub(super) fn items(&self, model: &Model<'_>, spec: &Ident) -> TokenStream {
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        let ident = model.ident;
        let full = &self.full;
        let elem = &self.elem;
        let handle = model.field_handle(
            &self.ident,
            "SubsetField",
            &quote!(#p::Subset<#ident, #full, #elem>),
            &quote!(#p::Subset::new(db, &#spec)),
            None,
        );
        let elem_span = syn::spanned::Spanned::span(elem);
        // A path to the conversion, not a call through a bounded helper: the error names
        // `From<&Review>` alone.
        let embeds_check = quote_spanned!(elem_span=>
            let _ = <#elem as ::core::convert::From<&#full>>::from;
        );
        let sort_checks = self.sort_checks(&p);
        quote! {
            #handle

            const _: fn() = || {
                #embeds_check
            };

            #sort_checks
        }
    }

    /// The checks that the embedded type has each sort field, under the full item's BSON name:
    /// `$push`'s `$sort` orders the embedded elements by their own keys, while the index on the
    /// full collection uses the full item's names.
    ///
    /// Per sort field, a constant that fails to evaluate, at the field: when the embedded type
    /// lacks it (looked up by Rust name in `<Elem as Fields>::FIELDS.__names()`, so the message
    /// says what to add rather than rustc's "no field on type `ElemFields`"), or when the two
    /// BSON names differ. The `Fields` path is spanned at the first sort field for every field,
    /// so a missing `#[derive(Fields)]` is one error (rustc drops identical diagnostics). The
    /// embedded names go through `__embedded(&<full item's field>, names)`, whose type comes
    /// from the full item's field: when the full item lacks the field (an error at the same
    /// token, from the spec), the embedded lookup has an error type and reports nothing more.
    pub(super) fn sort_checks(&self, p: &TokenStream) -> TokenStream {
        let full = &self.full;
        let elem = &self.elem;
        let full_name = quote!(#full).to_string().replace(' ', "");
        let elem_name = crate::errors::type_string(elem);
        let Some(first) = self.sort.first().map(|(f, _)| f.span()) else {
            return TokenStream::new();
        };
        let names = respan(quote!(<#elem as #p::Fields>::FIELDS), first);
        let checks = self.sort.iter().map(|(f, _)| {
            let span = f.span();
            let full = respan(quote!(#full), span);
            let full_field = quote_spanned!(span=> #full::FIELDS.#f);
            let field = crate::ast::unraw(f);
            let embedded =
                quote_spanned!(span=> __bson_of(__embedded(&#full_field, #names).__names(), #field));
            let panic = quote_spanned!(span=> ::core::panic);
            let missing_args = quote_spanned!(span=> ("{}", __MISSING));
            let args = quote_spanned!(span=> ("{}", #p::utf8(&__MESSAGE)));
            let missing = format!(
                "`{elem_name}` has no field `{field}`: the subset sorts its embedded items by \
                 it ($push's $sort runs on them), so add `{field}` to `{elem_name}`, serialized \
                 as in `{full_name}`, and fill it in `From<&{full_name}>`"
            );
            let before = format!("`{elem_name}` serializes `{field}` as `");
            let between = format!("` but `{full_name}` as `");
            let after = "`: the subset's $sort runs on the embedded items and the index on the \
                         full items, so the names must match";
            quote! {
                const _: () = {
                    const __FULL: &str = #full_field.as_str();
                    const __FOUND: ::core::option::Option<&str> = #embedded;
                    const __MISSING: &str = #missing;
                    const __EMBEDDED: &str = match __FOUND {
                        ::core::option::Option::Some(name) => name,
                        ::core::option::Option::None => "",
                    };
                    const __PARTS: &[&str] = &[#before, __EMBEDDED, #between, __FULL, #after];
                    const __LEN: usize = #p::concat_len(__PARTS);
                    const __MESSAGE: [u8; __LEN] = #p::concat_bytes::<__LEN>(__PARTS);
                    if __FOUND.is_none() {
                        #panic!#missing_args
                    } else if !#p::str_eq(__EMBEDDED, __FULL) {
                        #panic!#args
                    }
                };
            }
        });
        quote! {
            const _: () = {
                // `<FieldName<T> as __Beside<N>>::Names` is `N`: an error type when the full
                // item's field is one.
                trait __Beside<N> {
                    type Names;
                }
                impl<N, T: ?::core::marker::Sized, K, M, const I: usize> __Beside<N>
                    for #p::FieldName<T, K, M, I>
                {
                    type Names = N;
                }
                const fn __embedded<F: __Beside<N, Names = N>, N>(_full: &F, names: N) -> F::Names {
                    names
                }
                // The serialized name of the embedded type's field `rust`, if it has one.
                const fn __bson_of(
                    names: &[(&'static str, &'static str)],
                    rust: &str,
                ) -> ::core::option::Option<&'static str> {
                    let mut i = 0;
                    while i < names.len() {
                        if #p::str_eq(names[i].0, rust) {
                            return ::core::option::Option::Some(names[i].1);
                        }
                        i += 1;
                    }
                    ::core::option::Option::None
                }
                #(#checks)*
            };
        }
    }

    /// The kind of a field this subset keeps: its array, and its summaries.
    pub(super) fn kept(&self, field: &Field<'_>) -> Option<&'static str> {
        if *field.ident == self.ident {
            return Some("SubsetArray");
        }
        self.summaries
            .iter()
            .any(|c| c.ident == *field.ident)
            .then_some("SummaryValue")
    }

    /// The schema annotation of the subset field, and of each summary field.
    pub(super) fn annotations(&self, field: &Field<'_>, p: &TokenStream) -> Vec<TokenStream> {
        let mut out = Vec::new();
        if *field.ident == self.ident {
            let full = &self.full;
            let full_name = quote!(#full).to_string().replace(' ', "");
            let limit = self.limit;
            out.push(quote!(#p::Annotation::Subset { full_model: #full_name, limit: #limit }));
        }
        if self.summaries.iter().any(|c| c.ident == *field.ident) {
            let subset = &self.bson_name;
            out.push(quote!(#p::Annotation::Summary { subset: #subset }));
        }
        out
    }
}

impl SummaryField {
    /// The field's BSON name, and the check that its type can hold the result: a number for a
    /// count or sum, a float for an average.
    fn target_check(&self, model: &Model<'_>, p: &TokenStream) -> (TokenStream, TokenStream) {
        let t = &self.ident;
        let model_ident = Ident::new(&model.ident.to_string(), t.span());
        let field = quote_spanned!(t.span()=> #model_ident::FIELDS.#t);
        let name = crate::ast::unraw(t);
        let (method, message) = if self.kind == Kind::Avg {
            (
                "float",
                format!(
                    "`{name}` cannot hold an average: use f64 or Option<f64> (null while there \
                     are no items)"
                ),
            )
        } else {
            (
                "numeric",
                format!(
                    "`{name}` is not a number: a summary's count or sum is kept in a numeric \
                     field; use i32, i64, u32, f32 or f64 (or an Option of one)"
                ),
            )
        };
        crate::errors::checked_name(p, field, method, &message, t.span())
    }
}

/// The same tokens, every one of them at `span`.
pub(crate) fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tt| {
            if let proc_macro2::TokenTree::Group(g) = &tt {
                let mut group = proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                group.set_span(span);
                tt = proc_macro2::TokenTree::Group(group);
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
}
