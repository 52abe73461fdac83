//! The generated `ComputedSpec`s, the source's dependents and the constants that check the
//! types named (the source model, the summed field, the kept field, `by`).

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::Ident;

use crate::ast::Model;
use crate::errors::fail_with;

use super::*;

impl FromField {
    pub(super) fn static_ident(&self) -> Ident {
        format_ident!(
            "__COMPUTED_FROM_{}",
            crate::ast::unraw(&self.ident).to_uppercase()
        )
    }

    fn source_name(&self) -> String {
        let source = &self.source;
        quote!(#source).to_string().replace(' ', "")
    }

    /// `<Order as Fields>::Names`, spanned at the path: what the source is named through.
    /// Every mention of the source goes through its field names, so a source that is not a
    /// model (nor has field names) fails once, at the path ("`Order` has no typed field names",
    /// its note naming `#[derive(Model)]`: rustc prints one error per message and span), and
    /// the rest sees an error type and says nothing. (Named directly, `Order`'s `FIELDS` and
    /// `SCHEMA` failed apart: three errors.)
    pub(super) fn source_names(&self, p: &TokenStream) -> TokenStream {
        let source = &self.source;
        quote_spanned!(self.source_span()=> <#source as #p::Fields>::Names)
    }

    /// The last segment of the source's path: where errors about the source point.
    fn source_span(&self) -> Span {
        self.source
            .segments
            .last()
            .map_or_else(Span::call_site, |s| s.ident.span())
    }

    /// `<Order as Fields>::FIELDS.field`, the names spanned at the path and the field at
    /// `field`: a misspelt field is one error there, and a source that is not a model is one
    /// error at the path (`source_names`).
    fn source_field_expr(&self, field: &Ident, p: &TokenStream) -> TokenStream {
        let source = &self.source;
        let fields = quote_spanned!(self.source_span()=> <#source as #p::Fields>::FIELDS);
        quote_spanned!(field.span()=> #fields.#field)
    }

    /// The static spec and the checks beside it.
    pub(super) fn expand(&self, model: &Model<'_>, p: &TokenStream) -> TokenStream {
        let ident = model.ident;
        let target = &self.ident;
        let name = crate::ast::unraw(target);
        let source = &self.source;
        let source_name = self.source_name();
        let mut checks = TokenStream::new();
        // A min or max of a number in the Option, beside `checks` (which `check` borrows).
        let mut min_max_check = TokenStream::new();
        let target_field = {
            let model_ident = Ident::new(&ident.to_string(), target.span());
            quote_spanned!(target.span()=> #model_ident::FIELDS.#target)
        };
        let mut check = |field: TokenStream, method: &str, message: String, span: Span| {
            let (name, fail) = crate::errors::checked_name(p, field, method, &message, span);
            checks.extend(fail);
            name
        };
        let (target_name, aggregate) = match self.kind {
            Kind::Count => (
                check(
                    target_field.clone(),
                    "integer",
                    format!(
                        "`{name}` keeps a count of `{source_name}` documents: use an integer \
                         (i64, i32 or u32)"
                    ),
                    target.span(),
                ),
                quote!(Count),
            ),
            Kind::Sum => (
                check(
                    target_field.clone(),
                    "numeric",
                    format!("`{name}` keeps a sum: use a number (i64, i32, u32 or f64)"),
                    target.span(),
                ),
                quote!(Sum),
            ),
            Kind::Min | Kind::Max => {
                let which = if self.kind == Kind::Min {
                    "smallest"
                } else {
                    "largest"
                };
                let named = check(
                    target_field.clone(),
                    "optional",
                    format!(
                        "`{name}` has no value while no `{source_name}` points at the document: \
                         use an Option (Option<i64>, Option<f64>)"
                    ),
                    target.span(),
                );
                // Of an Option only: a `String` is the Option check's error alone, not two.
                let span = target.span();
                let message = format!(
                    "`{name}` keeps the {which} value of a field: use an Option of a number \
                     (Option<i64>, Option<f64>)"
                );
                let optional = verdict(p, &target_field, "optional", span);
                let numeric = verdict(p, &target_field, "numeric", span);
                let fails = quote_spanned! {span=>
                    if #optional && !#numeric {
                        ::core::option::Option::Some(#message)
                    } else {
                        ::core::option::Option::None
                    }
                };
                min_max_check = fail_with(fails, span, span);
                let aggregate = if self.kind == Kind::Min {
                    quote!(Min)
                } else {
                    quote!(Max)
                };
                (named, aggregate)
            }
        };
        let source_field = match &self.source_field {
            Some(f) => {
                let field = self.source_field_expr(f, p);
                let f_name = crate::ast::unraw(f);
                let named = check(
                    field.clone(),
                    "numeric",
                    format!(
                        "`{f_name}` of `{source_name}` is not a number: a computed sum, min or \
                         max reads a numeric field (i32, i64, u32, f64, or an Option of one)"
                    ),
                    f.span(),
                );
                if self.kind == Kind::Sum {
                    // A sum of floats is a float: an integer field could not be read back.
                    let span = target.span();
                    let message = format!(
                        "`{name}` sums `{source_name}.{f_name}`, a float: keep it in an f64"
                    );
                    // Only of a number: another type is the numeric check's error alone.
                    let source_float = verdict(p, &field, "float", span);
                    let numeric = verdict(p, &target_field, "numeric", span);
                    let float = verdict(p, &target_field, "float", span);
                    let fails = quote_spanned! {span=>
                        if #source_float && #numeric && !#float {
                            ::core::option::Option::Some(#message)
                        } else {
                            ::core::option::Option::None
                        }
                    };
                    checks.extend(fail_with(fails, span, span));
                }
                {
                    // A counter's events are single `$inc`s the map does not watch: a sum of
                    // one would go stale at its first event.
                    let span = f.span();
                    let source = &self.source;
                    let message = format!(
                        "`{f_name}` of `{source_name}` is an `#[approximate]` counter: its \
                         events are written without reading the document, so `{name}` would \
                         go stale at the first one; compute it from the events themselves, or \
                         read the counter where it is needed"
                    );
                    let fails = quote_spanned! {span=>
                        if #p::contains_str(
                            <#source as #p::Fields>::APPROXIMATE,
                            #field.as_str(),
                        ) {
                            ::core::option::Option::Some(#message)
                        } else {
                            ::core::option::Option::None
                        }
                    };
                    checks.extend(fail_with(fails, span, span));
                }
                named
            }
            None => quote!(""),
        };
        checks.extend(min_max_check);
        let by = &self.by;
        let by_field = self.source_field_expr(by, p);
        {
            let span = by.span();
            let by_name = crate::ast::unraw(by);
            let message = format!(
                "`{by_name}` of `{source_name}` must hold the `_id` of a `{ident}`: give it the \
                 type of `{ident}`'s `_id`, an Option of it, `Ref<{ident}>` or \
                 `Option<Ref<{ident}>>`"
            );
            let verdict = |method: &str| {
                let method = Ident::new(method, span);
                quote_spanned! {span=>
                    #p::passes(|| {
                        #[allow(unused_imports)]
                        use #p::{
                            ProbeId as _, ProbeOptionalId as _, ProbeOptionalRefTo as _,
                            ProbeOtherId as _, ProbeRefTo as _,
                        };
                        (&&#p::IdProbe::<_, #ident>::of(#by_field)).#method()
                    })
                }
            };
            let (a, b, c, d) = (
                verdict("id"),
                verdict("optional_id"),
                verdict("ref_to"),
                verdict("optional_ref_to"),
            );
            let fails = quote_spanned! {span=>
                if #a || #b || #c || #d {
                    ::core::option::Option::None
                } else {
                    ::core::option::Option::Some(#message)
                }
            };
            checks.extend(fail_with(fails, span, span));
        }
        let static_ident = self.static_ident();
        let source_names = self.source_names(p);
        let span = self.source_span();
        // `Order`'s `SCHEMA` through its field names: a source without names fails there alone,
        // one with names that is not a model fails here alone ("`Order` is not a model").
        let schema = quote_spanned! {span=>
            <<#source_names as __ComputedSource>::Model as #p::Model>::SCHEMA
        };
        quote! {
            static #static_ident: #p::ComputedFromSpec = {
                trait __ComputedSource {
                    type Model;
                }
                impl __ComputedSource for #source_names {
                    type Model = #source;
                }
                #p::ComputedFromSpec::from_parts(#p::ComputedFromParts {
                    field: #target_name,
                    aggregate: #p::Aggregate::#aggregate,
                    source: || #schema,
                    source_field: #source_field,
                    by: #by_field.as_str(),
                })
            };
            #checks
        }
    }
}

/// `passes(|| (&&CheckProbe::of(field)).method())`, spanned at `span`: whether `field`'s type
/// passes the check, in a constant (see `pattern_runtime`'s `checks`).
fn verdict(p: &TokenStream, field: &TokenStream, method: &str, span: Span) -> TokenStream {
    let method = Ident::new(method, span);
    quote_spanned! {span=>
        #p::passes(|| {
            #[allow(unused_imports)]
            use #p::{
                ProbeFloat as _, ProbeInteger as _, ProbeNumeric as _, ProbeOptional as _,
                ProbeOtherCheck as _,
            };
            (&&#p::CheckProbe::of(#field)).#method()
        })
    }
}

/// `HasComputedFields` (behind `Model::collection(&db).computed()`).
pub(super) fn constructor(model: &Model<'_>) -> TokenStream {
    let ident = model.ident;
    let krate = &model.krate;
    let p = quote!(#krate::__private);
    quote! {
        #[automatically_derived]
        impl #p::HasComputedFields for #ident {}
    }
}
