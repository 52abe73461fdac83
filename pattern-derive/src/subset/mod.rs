//! `#[subset(...)]` and `#[computed(...)]`: parsing, checks, and the generated `SubsetSpec`,
//! operations constructor and compile-time assertions.
//!
//! What can be checked inside this derive is checked here (the field is a `Vec`, a limit above 0,
//! one `full` type, computed fields naming a subset of this struct). What lives in other types
//! (the sort, parent and summed fields of the full item, its `Model` impl, the conversion to the
//! embedded type, the sort fields of the embedded type under the full item's BSON names, numeric
//! types) is checked by code generated at the user's tokens, so rustc's error points at the
//! offending token.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Ident, LitInt, Token};

use crate::ast::{Field, Model};
use crate::errors::{did_you_mean, Errors};
use crate::schema::{Pattern, PatternDef};

/// The subset pattern's entry points.
/// `#[subset]` on a `#[versioned]` model: its pushes and removals would change the parent
/// without a new version or a copy of the old one, and the next `save` would undo them.
fn refuse_when_versioned(input: &syn::DeriveInput, model: &Model<'_>, errors: &mut Errors) {
    if !input.attrs.iter().any(|a| a.path().is_ident("versioned")) {
        return;
    }
    for attr in model
        .fields
        .iter()
        .flat_map(|f| f.attrs)
        .filter(|a| a.path().is_ident("subset"))
    {
        errors.spanned(
            attr.path(),
            "`#[subset]` is not supported on a `#[versioned]` model yet: its pushes and removals \
             would change the document without a new version or a copy of the old one, and the \
             next `save` would undo them. Keep the subset on a model of its own (the versioned \
             model's fields in a document it references), or change the array through the \
             versioned model's `modify`",
        );
    }
}

pub(crate) const PATTERN: PatternDef = PatternDef {
    model: |input, model, errors| {
        refuse_when_versioned(input, model, errors);
        Box::new(Subsets(collect(model, errors)))
    },
    fields: None,
};

/// Every `#[subset]` field of a model, each with its `#[computed]` fields.
struct Subsets(Vec<SubsetField>);

impl Pattern for Subsets {
    fn annotations(&self, field: &Field<'_>, p: &TokenStream) -> Vec<TokenStream> {
        self.0
            .iter()
            .flat_map(|s| s.annotations(field, p))
            .collect()
    }

    fn items(&self, model: &Model<'_>) -> TokenStream {
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        self.0
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let stat = spec_static(i);
                let (spec, checks) = s.spec(model);
                let items = s.items(model, &stat);
                // The full items are written by the subset's handle (`push`, `remove`): a
                // versioned model's would go around its revisions.
                let full = &s.full;
                let full_span = full
                    .segments
                    .last()
                    .map_or_else(Span::call_site, |seg| seg.ident.span());
                let full_name = quote!(#full).to_string().replace(' ', "");
                let message = format!(
                    "`{full_name}` is `#[versioned]`: it cannot be the full items of a \
                     `#[subset]` yet, whose `push` and `remove` write them without a new \
                     version or a copy of the old one. Keep the items in a model without \
                     `#[versioned]`, or embed a subset of them by hand through the versioned \
                     model's own writes"
                );
                let unversioned = crate::errors::fail_with(
                    quote_spanned! {full_span=>
                        {
                            #[allow(unused_imports)]
                            use #p::{ProbeUnversioned as _, ProbeVersioned as _};
                            #p::unless(|| (&&#p::ModelProbe::<#full>::new()).unversioned(), #message)
                        }
                    },
                    full_span,
                    full_span,
                );
                quote! {
                    static #stat: #p::SubsetSpec = #spec;
                    #(#checks)*
                    #unversioned
                    #items
                }
            })
            .collect()
    }

    fn specs(&self) -> Vec<TokenStream> {
        (0..self.0.len())
            .map(|i| {
                let stat = spec_static(i);
                quote!(&#stat)
            })
            .collect()
    }
}

fn spec_static(position: usize) -> Ident {
    format_ident!("__SUBSET_{}", position)
}

/// A parsed `#[subset(...)]` field.
pub(crate) struct SubsetField {
    /// The field (Rust ident) and its BSON name.
    ident: Ident,
    bson_name: String,
    elem: syn::Type,
    limit: u32,
    sort: Vec<(Ident, i32)>,
    full: syn::Path,
    parent: Ident,
    computed: Vec<ComputedField>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Count,
    Sum,
    Avg,
}

/// A parsed `#[computed(...)]` field.
struct ComputedField {
    /// The parent field.
    ident: Ident,
    bson_name: String,
    kind: Kind,
    /// The summed item field (sum, avg).
    item_field: Option<Ident>,
}

const SUBSET_OPTIONS: &[&str] = &["limit", "sort", "full", "parent"];
const COMPUTED_KINDS: &[&str] = &["count", "sum", "avg"];

/// Every subset of the model, with its computed fields.
fn collect(model: &Model<'_>, errors: &mut Errors) -> Vec<SubsetField> {
    let mut subsets = Vec::new();
    for field in &model.fields {
        for attr in field.attrs.iter().filter(|a| a.path().is_ident("subset")) {
            if let Some(s) = parse_subset(attr, field, errors) {
                subsets.push(s);
            }
        }
    }
    for field in &model.fields {
        let of_subsets = field.attrs.iter().filter(|a| {
            a.path().is_ident("computed") && !crate::ast::computed_from_another_model(a)
        });
        for attr in of_subsets {
            parse_computed(attr, field, &mut subsets, errors);
        }
    }
    for s in &subsets {
        check_averages(s, errors);
    }
    subsets
}

fn parse_subset(
    attr: &syn::Attribute,
    field: &Field<'_>,
    errors: &mut Errors,
) -> Option<SubsetField> {
    let Some(elem) = crate::ast::vec_element(field.ty) else {
        errors.spanned(
            field.ty,
            "`#[subset]` goes on a `Vec<T>` field: the embedded first items, `T` being their \
             embedded form",
        );
        return None;
    };
    if !field.serialized {
        errors.spanned(
            field.ident,
            "a `#[subset]` field must be serialized (no `#[serde(skip)]`)",
        );
        return None;
    }
    let mut limit: Option<(u32, Span)> = None;
    let mut sort: Option<Vec<(Ident, i32)>> = None;
    let mut full: Option<syn::Path> = None;
    let mut parent: Option<Ident> = None;
    let mut seen: Vec<String> = Vec::new();
    let mut local = Errors::default();
    let parser = |input: ParseStream<'_>| -> syn::Result<()> {
        while !input.is_empty() {
            let key = Ident::parse_any(input)?;
            let name = key.to_string();
            if !SUBSET_OPTIONS.contains(&name.as_str()) {
                return Err(syn::Error::new(
                    key.span(),
                    format!(
                        "unknown subset option `{name}`{}; expected one of: {}",
                        did_you_mean(&name, SUBSET_OPTIONS.iter().copied()),
                        SUBSET_OPTIONS.join(", ")
                    ),
                ));
            }
            if seen.contains(&name) {
                local.at(key.span(), format!("duplicate subset option `{name}`"));
            }
            seen.push(name.clone());
            match name.as_str() {
                "limit" => {
                    input.parse::<Token![=]>()?;
                    let lit: LitInt = input.parse()?;
                    match lit.base10_parse::<u32>() {
                        Ok(n) if n > 0 => limit = Some((n, lit.span())),
                        _ => local.spanned(
                            &lit,
                            "`limit` is how many items the parent keeps: a whole number above 0",
                        ),
                    }
                }
                "sort" => {
                    let content;
                    syn::parenthesized!(content in input);
                    let mut keys = Vec::new();
                    while !content.is_empty() {
                        let f = Ident::parse_any(&content)?;
                        content.parse::<Token![=]>()?;
                        let negative = content.peek(Token![-]);
                        if negative {
                            content.parse::<Token![-]>()?;
                        }
                        let lit: LitInt = content.parse()?;
                        if lit.base10_digits() != "1" {
                            local.spanned(&lit, "a sort direction is `1` or `-1`");
                        }
                        keys.push((f, if negative { -1 } else { 1 }));
                        if content.is_empty() {
                            break;
                        }
                        content.parse::<Token![,]>()?;
                    }
                    if keys.is_empty() {
                        local.at(
                            key.span(),
                            "`sort(...)` needs a field: `sort(created_at = -1)`",
                        );
                    }
                    sort = Some(keys);
                }
                "full" => {
                    input.parse::<Token![=]>()?;
                    full = Some(input.parse()?);
                }
                _ => {
                    input.parse::<Token![=]>()?;
                    parent = Some(Ident::parse_any(input)?);
                }
            }
            if input.is_empty() {
                break;
            }
            input.parse::<Token![,]>()?;
        }
        Ok(())
    };
    let result = match &attr.meta {
        syn::Meta::List(list) => parser.parse2(list.tokens.clone()),
        other => Err(syn::Error::new_spanned(other, SUBSET_HELP)),
    };
    if let Err(e) = result {
        local.push(e);
    }
    let span = attr
        .path()
        .get_ident()
        .map_or_else(Span::call_site, Ident::span);
    let missing = |what: &str, local: &mut Errors| {
        local.at(span, format!("`#[subset]` needs `{what}`: {SUBSET_HELP}"));
    };
    if limit.is_none() && !seen.iter().any(|s| s == "limit") {
        missing("limit = N", &mut local);
    }
    if sort.is_none() {
        missing("sort(field = -1)", &mut local);
    }
    if full.is_none() {
        missing("full = ItemModel", &mut local);
    }
    if parent.is_none() {
        missing("parent = field_of_the_item", &mut local);
    }
    let ok = local.is_empty();
    if let Err(e) = local.into_result() {
        errors.push(e);
    }
    if !ok {
        return None;
    }
    Some(SubsetField {
        ident: field.ident.clone(),
        bson_name: field.bson_name.clone(),
        elem,
        limit: limit?.0,
        sort: sort?,
        full: full?,
        parent: parent?,
        computed: Vec::new(),
    })
}

const SUBSET_HELP: &str = "`#[subset(limit = 10, sort(created_at = -1), full = Review, \
     parent = product_id)]`: keep the first 10 `Review`s by `created_at` descending, the full \
     items being in `Review`'s collection with `product_id` pointing at this document";

fn parse_computed(
    attr: &syn::Attribute,
    field: &Field<'_>,
    subsets: &mut [SubsetField],
    errors: &mut Errors,
) {
    let parser = |input: ParseStream<'_>| -> syn::Result<(Ident, Ident, Option<Ident>)> {
        let kind = Ident::parse_any(input)?;
        input.parse::<Token![=]>()?;
        let subset = Ident::parse_any(input)?;
        let item = if input.peek(Token![.]) {
            input.parse::<Token![.]>()?;
            Some(Ident::parse_any(input)?)
        } else {
            None
        };
        if !input.is_empty() {
            return Err(
                input.error("one computation per field: `#[computed(sum = reviews.stars)]`")
            );
        }
        Ok((kind, subset, item))
    };
    let parsed = match &attr.meta {
        syn::Meta::List(list) => parser.parse2(list.tokens.clone()),
        other => Err(syn::Error::new_spanned(other, COMPUTED_HELP)),
    };
    let (kind_ident, subset_ident, item) = match parsed {
        Ok(p) => p,
        Err(e) => return errors.push(e),
    };
    let kind = match kind_ident.to_string().as_str() {
        "count" => Kind::Count,
        "sum" => Kind::Sum,
        "avg" => Kind::Avg,
        other => {
            return errors.at(
                kind_ident.span(),
                format!(
                    "unknown computation `{other}`{}; expected one of: {}",
                    did_you_mean(other, COMPUTED_KINDS.iter().copied()),
                    COMPUTED_KINDS.join(", ")
                ),
            )
        }
    };
    match (kind, &item) {
        (Kind::Count, Some(item)) => {
            return errors.spanned(
                item,
                "`count` counts items: write `count = reviews`, no item field",
            )
        }
        (Kind::Sum | Kind::Avg, None) => {
            return errors.spanned(
                &subset_ident,
                format!(
                    "`{kind_ident}` needs an item field: `{kind_ident} = {subset_ident}.stars`"
                ),
            )
        }
        _ => {}
    }
    let names: Vec<String> = subsets.iter().map(|s| s.ident.to_string()).collect();
    let Some(subset) = subsets.iter_mut().find(|s| s.ident == subset_ident) else {
        return errors.spanned(
            &subset_ident,
            format!(
                "`{subset_ident}` is not a `#[subset]` field of this struct{}; to compute from \
                 another model's documents, name its field that holds this document's `_id`: \
                 `#[computed(sum = Order.amount, by = user_id)]`",
                did_you_mean(&subset_ident.to_string(), names.iter().map(String::as_str))
            ),
        );
    };
    if subset.ident == *field.ident {
        return errors.spanned(
            field.ident,
            "a `#[subset]` field cannot also be `#[computed]`",
        );
    }
    subset.computed.push(ComputedField {
        ident: field.ident.clone(),
        bson_name: field.bson_name.clone(),
        kind,
        item_field: item,
    });
}

const COMPUTED_HELP: &str = "`#[computed(count = reviews)]`, `#[computed(sum = reviews.stars)]` \
     or `#[computed(avg = reviews.stars)]`";

/// An average is kept as sum / count: both must be declared.
fn check_averages(s: &SubsetField, errors: &mut Errors) {
    let has_count = s.computed.iter().any(|c| c.kind == Kind::Count);
    for avg in s.computed.iter().filter(|c| c.kind == Kind::Avg) {
        let item = avg.item_field.as_ref().map(ToString::to_string);
        let has_sum = s
            .computed
            .iter()
            .any(|c| c.kind == Kind::Sum && c.item_field.as_ref().map(ToString::to_string) == item);
        if !has_count || !has_sum {
            errors.spanned(
                &avg.ident,
                format!(
                    "an average is kept as sum / count: also declare `#[computed(sum = {}.{})]` and \
                     `#[computed(count = {})]` on two numeric fields",
                    s.ident,
                    item.unwrap_or_default(),
                    s.ident
                ),
            );
        }
    }
}

impl SubsetField {
    /// The `SubsetSpec` expression, and the compile-time checks of its fields' types.
    fn spec(&self, model: &Model<'_>) -> (TokenStream, Vec<TokenStream>) {
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
                "`{}` of `{full_name}` is not a number: a computed sum or average reads a numeric \
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
        let index_name = format!("subset_{}_{}", model.collection, self.bson_name);
        let full_span = self
            .full
            .segments
            .last()
            .map_or_else(Span::call_site, |s| s.ident.span());
        let full_collection = quote_spanned!(full_span=> <#full as #p::Model>::SCHEMA.collection());
        let count_field = self
            .computed
            .iter()
            .find(|c| c.kind == Kind::Count)
            .map(|c| c.bson_name.clone())
            .unwrap_or_default();
        let computed = self.computed.iter().map(|c| {
            let t = &c.ident;
            let model_ident = Ident::new(&model_ident.to_string(), t.span());
            let field = quote_spanned!(t.span()=> #model_ident::FIELDS.#t);
            let name = crate::ast::unraw(t);
            let target = if c.kind == Kind::Avg {
                let message = format!(
                    "`{name}` cannot hold an average: use f64 or Option<f64> (null while there \
                     are no items)"
                );
                checked(crate::errors::checked_name(
                    &p,
                    field,
                    "float",
                    &message,
                    t.span(),
                ))
            } else {
                let message = format!(
                    "`{name}` is not a number: a computed count or sum is kept in a numeric \
                     field; use i32, i64, u32, f32 or f64 (or an Option of one)"
                );
                checked(crate::errors::checked_name(
                    &p,
                    field,
                    "numeric",
                    &message,
                    t.span(),
                ))
            };
            let kind = match (c.kind, &c.item_field) {
                (Kind::Sum, Some(item)) => {
                    let item = numeric_of(item);
                    quote!(#p::ComputedKind::Sum { item_field: #item })
                }
                (Kind::Avg, Some(item)) => {
                    let item_str = item.to_string();
                    let sum_field = self
                        .computed
                        .iter()
                        .find(|s| {
                            s.kind == Kind::Sum
                                && s.item_field.as_ref().is_some_and(|i| *i == item_str)
                        })
                        .map(|s| s.bson_name.clone())
                        .unwrap_or_default();
                    let item = numeric_of(item);
                    quote!(#p::ComputedKind::Avg {
                        item_field: #item,
                        sum_field: #sum_field,
                        count_field: #count_field,
                    })
                }
                _ => quote!(#p::ComputedKind::Count),
            };
            quote!(#p::Computed { field: #target, kind: #kind })
        });
        let full_name = quote!(#full).to_string().replace(' ', "");
        let elem = &self.elem;
        let spec = quote! {
            #p::SubsetSpec::from_parts(#p::SubsetParts {
                field: #field,
                limit: #limit,
                sort: &[#(#sort),*],
                parent_key: #parent,
                full_collection: || #full_collection,
                full_model: #full_name,
                rebuild: || {
                    #[allow(unused_imports)]
                    use #p::{ProbeNoRebuild as _, ProbeRebuild as _};
                    (&&#p::RebuildProbe::<#model_ident, #full, #elem>::new()).rebuild()
                },
                full_index: #p::IndexSpec::from_parts(#p::IndexParts {
                    keys: &[#(#keys),*],
                    name: #index_name,
                    unique: false,
                    sparse: false,
                    hidden: false,
                    expire_after_seconds: ::core::option::Option::None,
                    collation: ::core::option::Option::None,
                    partial: &[],
                }),
                computed: &[#(#computed),*],
            })
        };
        (spec, checks.into_inner())
    }

    /// The `Model::<field>_subset(&db)` constructor and the compile-time assertions.
    fn items(&self, model: &Model<'_>, spec: &Ident) -> TokenStream {
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        let ident = model.ident;
        let full = &self.full;
        let elem = &self.elem;
        let method = format_ident!("{}_subset", crate::ast::unraw(&self.ident));
        let doc = format!(
            "The operations of the `{}` subset: the first {} `{}` items, embedded.",
            self.ident,
            self.limit,
            quote!(#full).to_string().replace(' ', "")
        );
        let elem_span = syn::spanned::Spanned::span(elem);
        // A path to the conversion, not a call through a bounded helper: the error names
        // `From<&Review>` alone.
        let embeds_check = quote_spanned!(elem_span=>
            let _ = <#elem as ::core::convert::From<&#full>>::from;
        );
        let sort_checks = self.sort_checks(&p);
        quote! {
            #[automatically_derived]
            impl #ident {
                #[doc = #doc]
                pub fn #method(db: &#p::Database) -> #p::Subset<#ident, #full, #elem> {
                    #p::Subset::new(db, &#spec)
                }
            }

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
    /// Per sort field: `<Elem as Fields>::FIELDS.<field>` at the field (rustc's E0609, with the
    /// available fields, when the embedded type lacks it), and a constant that fails to evaluate,
    /// at the field, when the two BSON names differ. The `Fields` path is spanned at the first
    /// sort field for every field, so a missing `#[derive(Fields)]` is one error (rustc drops
    /// identical diagnostics). The embedded names go through `__embedded(&<full item's field>,
    /// names)`, whose type comes from the full item's field: when the full item lacks the field
    /// (an error at the same token, from the spec), the embedded lookup has an error type and
    /// reports nothing more.
    fn sort_checks(&self, p: &TokenStream) -> TokenStream {
        let full = &self.full;
        let elem = &self.elem;
        let full_name = quote!(#full).to_string().replace(' ', "");
        let elem_name = quote!(#elem).to_string().replace(' ', "");
        let Some(first) = self.sort.first().map(|(f, _)| f.span()) else {
            return TokenStream::new();
        };
        let names = respan(quote!(<#elem as #p::Fields>::FIELDS), first);
        let checks = self.sort.iter().map(|(f, _)| {
            let span = f.span();
            let full = respan(quote!(#full), span);
            let full_field = quote_spanned!(span=> #full::FIELDS.#f);
            let embedded = quote_spanned!(span=> __embedded(&#full_field, #names).#f.as_str());
            let panic = quote_spanned!(span=> ::core::panic);
            let args = quote_spanned!(span=> ("{}", #p::utf8(&__MESSAGE)));
            let field = crate::ast::unraw(f);
            let before = format!("`{elem_name}` serializes `{field}` as `");
            let between = format!("` but `{full_name}` as `");
            let after = "`: the subset's $sort runs on the embedded items and the index on the \
                         full items, so the names must match";
            quote! {
                const _: () = {
                    const __EMBEDDED: &str = #embedded;
                    const __FULL: &str = #full_field.as_str();
                    const __PARTS: &[&str] = &[#before, __EMBEDDED, #between, __FULL, #after];
                    const __LEN: usize = #p::concat_len(__PARTS);
                    const __MESSAGE: [u8; __LEN] = #p::concat_bytes::<__LEN>(__PARTS);
                    if !#p::str_eq(__EMBEDDED, __FULL) {
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
                impl<N, T: ?::core::marker::Sized> __Beside<N> for #p::FieldName<T> {
                    type Names = N;
                }
                const fn __embedded<F: __Beside<N, Names = N>, N>(_full: &F, names: N) -> F::Names {
                    names
                }
                #(#checks)*
            };
        }
    }

    /// The schema annotation of the subset field, and of each computed field.
    fn annotations(&self, field: &Field<'_>, p: &TokenStream) -> Vec<TokenStream> {
        let mut out = Vec::new();
        if *field.ident == self.ident {
            let full = &self.full;
            let full_name = quote!(#full).to_string().replace(' ', "");
            let limit = self.limit;
            out.push(quote!(#p::Annotation::Subset { full_model: #full_name, limit: #limit }));
        }
        if self.computed.iter().any(|c| c.ident == *field.ident) {
            let subset = &self.bson_name;
            out.push(quote!(#p::Annotation::Computed { subset: #subset }));
        }
        out
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
