//! `#[extended_ref(...)]`: reference shapes declared on a source model (`CustomerRef(name,
//! address)`), and the modes of the fields that hold them (`propagate`, `snapshot`, with `path`
//! for references inside the items of an array).
//!
//! What this derive can see is checked here: the copied fields exist on the source and are
//! stored, a mode is given once, `path` is on a `Vec`. What lives in other types (that a field's
//! type is a reference, that a shape declared `snapshot` is not propagated, that a field without a
//! mode holds no reference, the item's field names) is checked by code generated at the user's
//! tokens, so rustc's error points there.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::ext::IdentExt;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Ident, Token};

use crate::ast::{Field, Model};
use crate::errors::{did_you_mean, Errors};

/// The extended references of one model: shapes it declares, fields that embed others' shapes,
/// and the other stored fields, probed for references without a mode.
#[derive(Default)]
pub(crate) struct ExtendedRefs {
    shapes: Vec<Shape>,
    embeds: Vec<Embed>,
    probes: Vec<syn::Type>,
}

/// `#[extended_ref(CustomerRef(name, address), snapshot, derive(PartialEq))]` on the struct.
struct Shape {
    ident: Ident,
    /// The copied fields as written (Rust names), each known to be a stored field.
    fields: Vec<Ident>,
    snapshot_only: bool,
    derives: Vec<syn::Path>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Propagate,
    Snapshot,
}

/// `#[extended_ref(propagate | snapshot, path = item_field)]` on a field.
struct Embed {
    field: Ident,
    bson_name: String,
    ty: syn::Type,
    mode: Mode,
    /// With `path`: the item type and its field holding the reference.
    item: Option<(syn::Type, Ident)>,
}

const FIELD_OPTIONS: &[&str] = &["propagate", "snapshot", "path"];

/// Reads every `#[extended_ref]` of the model.
pub(crate) fn collect(
    input: &syn::DeriveInput,
    model: &Model<'_>,
    errors: &mut Errors,
) -> ExtendedRefs {
    let mut out = ExtendedRefs::default();
    for attr in input
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("extended_ref"))
    {
        if let Some(shape) = parse_shape(attr, model, errors) {
            if shape.ident == *model.ident {
                errors.spanned(
                    &shape.ident,
                    "the reference type needs a name of its own: it is generated next to the \
                     source model (e.g. `CustomerRef` for `Customer`)",
                );
            } else if out.shapes.iter().any(|s| s.ident == shape.ident) {
                errors.spanned(
                    &shape.ident,
                    format!("the reference shape `{}` is declared twice", shape.ident),
                );
            } else {
                out.shapes.push(shape);
            }
        }
    }
    let versioned = input.attrs.iter().any(|a| a.path().is_ident("versioned"));
    if let Some(shape) = out.shapes.iter().find(|s| versioned && !s.snapshot_only) {
        errors.spanned(
            &shape.ident,
            format!(
                "a `#[versioned]` model cannot keep copies in sync yet: its writes go through \
                 `save` and `update`, which archive revisions but do not propagate. Declare the \
                 shape `snapshot` (`#[extended_ref({}(..), snapshot)]`: copies frozen when \
                 written), or reference an unversioned model",
                shape.ident
            ),
        );
    }
    for field in &model.fields {
        let attrs: Vec<&syn::Attribute> = field
            .attrs
            .iter()
            .filter(|a| a.path().is_ident("extended_ref"))
            .collect();
        for extra in attrs.iter().skip(1) {
            errors.spanned(extra, "one `#[extended_ref(...)]` per field");
        }
        match attrs.first() {
            Some(attr) => {
                if let Some(embed) = parse_embed(attr, field, errors) {
                    out.embeds.push(embed);
                }
            }
            None if field.serialized => {
                let mut ty = field.ty;
                while let Some(inner) = ["Option", "Vec", "Box"].iter().find_map(|w| wrapped(ty, w))
                {
                    ty = inner;
                }
                out.probes.push(ty.clone());
            }
            None => {}
        }
    }
    out
}

/// `T` when `ty` is `wrapper<T>` (by its last path segment).
fn wrapped<'t>(ty: &'t syn::Type, wrapper: &str) -> Option<&'t syn::Type> {
    let syn::Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != wrapper {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first() {
        Some(syn::GenericArgument::Type(t)) if args.args.len() == 1 => Some(t),
        _ => None,
    }
}

fn key_of(path: &syn::Path) -> String {
    path.get_ident()
        .map(IdentExt::unraw)
        .map_or_else(|| path.to_token_stream().to_string(), |i| i.to_string())
}

/// Skips an option's value (`= expr` or `(...)`) so parsing goes on after an error.
fn skip_value(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        let _: syn::Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        let _: TokenStream = content.parse()?;
    }
    Ok(())
}

fn parse_shape(attr: &syn::Attribute, model: &Model<'_>, errors: &mut Errors) -> Option<Shape> {
    let mut shape: Option<(Ident, Vec<Ident>)> = None;
    let mut snapshot_only = false;
    let mut derives = Vec::new();
    let before = errors.count();
    let bare = matches!(attr.meta, syn::Meta::Path(_));
    let result = if bare {
        Ok(())
    } else {
        attr.parse_nested_meta(|meta| {
            let key = key_of(&meta.path);
            match key.as_str() {
                "snapshot" => {
                    if snapshot_only {
                        errors.spanned(&meta.path, "duplicate `snapshot`");
                    }
                    snapshot_only = true;
                }
                "derive" => {
                    meta.parse_nested_meta(|d| {
                        derives.push(d.path.clone());
                        Ok(())
                    })?;
                }
                "propagate" | "path" => {
                    skip_value(&meta)?;
                    errors.spanned(
                        &meta.path,
                        format!(
                            "`{key}` goes on a field that holds a reference; on the struct, \
                         `#[extended_ref]` declares a reference shape: \
                         `#[extended_ref(CustomerRef(name, address))]`"
                        ),
                    );
                }
                _ => {
                    let Some(ident) = meta.path.get_ident().cloned() else {
                        skip_value(&meta)?;
                        errors.spanned(
                        &meta.path,
                        "expected a reference shape: `#[extended_ref(CustomerRef(name, address))]`",
                    );
                        return Ok(());
                    };
                    if !meta.input.peek(syn::token::Paren) {
                        skip_value(&meta)?;
                        errors.spanned(
                            &ident,
                            format!(
                                "list the fields `{ident}` copies: `{ident}(name, address)` (the \
                             `_id` is always copied)"
                            ),
                        );
                        return Ok(());
                    }
                    let content;
                    syn::parenthesized!(content in meta.input);
                    let fields: Punctuated<Ident, Token![,]> =
                        content.parse_terminated(Ident::parse_any, Token![,])?;
                    if shape.is_some() {
                        errors.spanned(
                        &ident,
                        "one reference shape per `#[extended_ref(...)]`: add another attribute \
                         for another shape",
                    );
                        return Ok(());
                    }
                    shape = Some((ident, fields.into_iter().collect()));
                }
            }
            Ok(())
        })
    };
    if let Err(e) = result {
        errors.push(e);
        return None;
    }
    let Some((ident, written)) = shape else {
        if errors.count() > before {
            return None; // the options already had an error
        }
        errors.spanned(
            attr,
            "`#[extended_ref]` on a struct declares a reference shape: the type to generate and \
             the fields it copies, `#[extended_ref(CustomerRef(name, address))]`",
        );
        return None;
    };
    if written.is_empty() {
        errors.spanned(
            &ident,
            format!(
                "`{ident}` copies no field: list the fields to copy, `{ident}(name, address)` \
                 (the `_id` is always copied)"
            ),
        );
    }
    let mut fields: Vec<Ident> = Vec::new();
    for f in written {
        let name = crate::ast::unraw(&f);
        let Some(source) = model.field(&name) else {
            errors.spanned(&f, model.unknown_field_message(&name, "copied field"));
            continue;
        };
        if source.bson_name == "_id" {
            errors.spanned(
                &f,
                "the `_id` is always copied (the copies are found by it): list only the other \
                 fields",
            );
        } else if !source.serialized {
            errors.spanned(
                &f,
                format!(
                    "`{name}` is never serialized (`#[serde(skip)]`): there is no stored value \
                     to copy"
                ),
            );
        } else if fields.iter().any(|g| crate::ast::unraw(g) == name) {
            errors.spanned(&f, format!("`{name}` is listed twice"));
        } else {
            fields.push(f);
        }
    }
    Some(Shape {
        ident,
        fields,
        snapshot_only,
        derives,
    })
}

fn parse_embed(attr: &syn::Attribute, field: &Field<'_>, errors: &mut Errors) -> Option<Embed> {
    let mut mode: Option<Mode> = None;
    let mut path: Option<Ident> = None;
    let mut local = Errors::default();
    let bare = matches!(attr.meta, syn::Meta::Path(_));
    let result = if bare {
        Ok(())
    } else {
        attr.parse_nested_meta(|meta| {
            let key = key_of(&meta.path);
            match key.as_str() {
                "propagate" | "snapshot" => {
                    let this = if key == "propagate" {
                        Mode::Propagate
                    } else {
                        Mode::Snapshot
                    };
                    match mode {
                        Some(m) if m == this => {
                            local.spanned(&meta.path, format!("duplicate `{key}`"));
                        }
                        Some(_) => local.spanned(
                            &meta.path,
                            "a field has one mode: `propagate` keeps the copies in sync with the \
                         source, `snapshot` keeps them as written",
                        ),
                        None => mode = Some(this),
                    }
                }
                "path" => {
                    let value = meta.value()?;
                    let ident = Ident::parse_any(value).map_err(|e| {
                        syn::Error::new(
                            e.span(),
                            "`path` names the item's field holding the reference: `path = product`",
                        )
                    })?;
                    if path.is_some() {
                        local.spanned(&meta.path, "duplicate `path`");
                    }
                    path = Some(ident);
                }
                _ if meta.input.peek(syn::token::Paren) => {
                    skip_value(&meta)?;
                    local.spanned(
                        &meta.path,
                        "reference shapes are declared on the source struct \
                     (`#[extended_ref(CustomerRef(name))]` on `Customer`); on a field, give the \
                     mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
                    );
                }
                _ => {
                    skip_value(&meta)?;
                    local.spanned(
                        &meta.path,
                        format!(
                            "unknown extended_ref option `{key}`{}; expected one of: {}",
                            did_you_mean(&key, FIELD_OPTIONS.iter().copied()),
                            FIELD_OPTIONS.join(", ")
                        ),
                    );
                }
            }
            Ok(())
        })
    };
    if let Err(e) = result {
        errors.push(e);
        return None;
    }
    let failed = !local.is_empty();
    if let Err(e) = local.into_result() {
        errors.push(e);
    }
    let Some(mode) = mode else {
        if !failed {
            errors.spanned(
                attr,
                "`#[extended_ref]` on a field needs a mode: `propagate` (the copies follow every \
                 change of the source) or `snapshot` (they keep the values they were written with)",
            );
        }
        return None;
    };
    if !field.serialized {
        errors.spanned(
            field.ident,
            "a field under `#[serde(skip)]` stores no copy: remove `#[extended_ref]` or the skip",
        );
        return None;
    }
    let item = match path {
        None => None,
        Some(p) => {
            let Some(item_ty) = wrapped(field.ty, "Vec") else {
                errors.spanned(
                    field.ty,
                    format!(
                        "`path = {p}` names a field of the items of an array: it goes on a \
                         `Vec` of items (`items: Vec<OrderItem>`, the items holding `{p}`)"
                    ),
                );
                return None;
            };
            Some((item_ty.clone(), p))
        }
    };
    if failed {
        return None;
    }
    Some(Embed {
        field: field.ident.clone(),
        bson_name: field.bson_name.clone(),
        ty: field.ty.clone(),
        mode,
        item,
    })
}

impl ExtendedRefs {
    /// The field annotation of an embedding field.
    pub(crate) fn annotation(&self, field: &Field<'_>, p: &TokenStream) -> Option<TokenStream> {
        let embed = self.embeds.iter().find(|e| e.field == *field.ident)?;
        let mode = match embed.mode {
            Mode::Propagate => quote!(#p::Mode::Propagate),
            Mode::Snapshot => quote!(#p::Mode::Snapshot),
        };
        Some(quote!(#p::Annotation::ExtendedRef { mode: #mode }))
    }

    /// The generated reference types: outside the derive's `const _` block, so they can be named.
    pub(crate) fn types(&self, input: &syn::DeriveInput, model: &Model<'_>) -> TokenStream {
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        let serde_crate = format!("{}::__private::serde", krate.to_token_stream());
        let vis = &input.vis;
        let source = model.ident;
        let id = model.fields.iter().find(|f| f.bson_name == "_id");
        let mut out = TokenStream::new();
        for shape in &self.shapes {
            let ident = &shape.ident;
            let copied: Vec<&Field<'_>> = id
                .into_iter()
                .chain(
                    shape
                        .fields
                        .iter()
                        .filter_map(|f| model.field(&crate::ast::unraw(f))),
                )
                .collect();
            let fields = copied.iter().map(|f| {
                let name = &f.ident;
                let ty = f.ty;
                let bson = &f.bson_name;
                let field_vis = field_vis(input, f.ident);
                let serde_attrs = copied_serde_attrs(f.attrs);
                let doc = format!("`{bson}`, copied from `{source}::{}`.", f.rust_name);
                quote! {
                    #[doc = #doc]
                    #[serde(rename = #bson)]
                    #(#serde_attrs)*
                    #field_vis #name: #ty
                }
            });
            let names: Vec<String> = copied
                .iter()
                .map(|f| format!("`{}`", f.bson_name))
                .collect();
            let doc = format!(
                "An extended reference to a [`{source}`]: {} copied from it{}. Build it from a \
                 loaded document with `{ident}::from(&{})`. Generated by \
                 `#[extended_ref({ident}(..))]`.",
                names.join(", "),
                if shape.snapshot_only {
                    ", frozen when written (declared `snapshot`)"
                } else {
                    ""
                },
                crate::ast::unraw(source).to_lowercase(),
            );
            let derives = &shape.derives;
            out.extend(quote! {
                #[doc = #doc]
                #[derive(
                    ::core::clone::Clone,
                    ::core::fmt::Debug,
                    #p::serde::Serialize,
                    #p::serde::Deserialize,
                    #(#derives),*
                )]
                #[serde(crate = #serde_crate)]
                #vis struct #ident {
                    #(#fields,)*
                }
            });
        }
        out
    }

    /// The impls and statics, inside the derive's `const _` block: `From<&Source>`, the
    /// `RefSpec`s, `ExtendedRef`, `Propagatable`, `Referenced`, and the probes.
    pub(crate) fn items(&self, model: &Model<'_>, with_probes: bool) -> TokenStream {
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        let source = model.ident;
        let source_name = source.to_string();
        let collection = &model.collection;
        let id = model.fields.iter().find(|f| f.bson_name == "_id");
        let mut out = TokenStream::new();
        for (i, shape) in self.shapes.iter().enumerate() {
            let ident = &shape.ident;
            let name = ident.to_string();
            let stat = format_ident!("__REF_{}", i);
            let copied: Vec<(&Field<'_>, Span)> = shape
                .fields
                .iter()
                .filter_map(|f| Some((model.field(&crate::ast::unraw(f))?, f.span())))
                .collect();
            let bson_names = copied.iter().map(|(f, _)| &f.bson_name);
            let inits = id
                .map(|f| (f, f.ident.span()))
                .into_iter()
                .chain(copied.iter().copied())
                .map(|(f, span)| {
                    let field = f.ident;
                    quote_spanned!(span=> #field: ::core::clone::Clone::clone(&source.#field))
                });
            let snapshot_only = shape.snapshot_only;
            let propagatable = (!snapshot_only).then(|| {
                quote! {
                    #[automatically_derived]
                    impl #p::Propagatable for #ident {}
                }
            });
            out.extend(quote! {
                #[automatically_derived]
                impl ::core::convert::From<&#source> for #ident {
                    fn from(source: &#source) -> Self {
                        #ident { #(#inits,)* }
                    }
                }

                static #stat: #p::RefSpec = #p::RefSpec::from_parts(#p::RefParts {
                    name: #name,
                    source: #source_name,
                    source_collection: #collection,
                    fields: &[#(#bson_names),*],
                    snapshot_only: #snapshot_only,
                });

                #[automatically_derived]
                impl #p::ExtendedRef for #ident {
                    type Source = #source;
                    const SPEC: &'static #p::RefSpec = &#stat;
                }

                #propagatable
            });
        }
        // Only shapes that can be kept in sync give the model propagating writes.
        if self.shapes.iter().any(|s| !s.snapshot_only) {
            out.extend(quote! {
                #[automatically_derived]
                impl #p::Referenced for #source {}
            });
        }
        if with_probes && !self.probes.is_empty() {
            let probes = self.probes.iter().map(|ty| {
                quote_spanned! {ty.span()=>
                    #p::no_mode_needed((&#p::RefProbe::<#ty>::new()).probe());
                }
            });
            out.extend(quote! {
                // Never called: type-checking it is the check.
                #[allow(dead_code, clippy::all)]
                fn __extended_ref_probes() {
                    use #p::{RefProbePlain as _, RefProbeRef as _};
                    #(#probes)*
                }
            });
        }
        out
    }

    /// The `references` and `embeddings` of the model's `SchemaParts`.
    pub(crate) fn schema_parts(&self) -> TokenStream {
        let refs = (0..self.shapes.len()).map(|i| format_ident!("__REF_{}", i));
        let embeds = (0..self.embeds.len()).map(|i| format_ident!("__EMBED_{}", i));
        quote! {
            references: &[#(&#refs),*],
            embeddings: &[#(#embeds),*],
        }
    }

    /// One constant per embedding, inside the derive's `const _` block (a constant, so the
    /// compile-time checks can bind the field name first).
    pub(crate) fn embedding_items(&self, model: &Model<'_>) -> TokenStream {
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        let ident = model.ident;
        let name = ident.to_string();
        let collection = &model.collection;
        let embeds = self.embeds.iter().enumerate().map(|(i, e)| {
            let konst = format_ident!("__EMBED_{}", i);
            let field = &e.field;
            let bson = &e.bson_name;
            // The field name is bound first, so the check's argument is spanned at one token:
            // the field's type, or the item field named by `path`.
            let (names, span, slot_field) = match &e.item {
                None => (quote!(#ident::FIELDS), e.ty.span(), field.clone()),
                Some((item_ty, path)) => {
                    let names = quote_spanned!(item_ty.span()=> <#item_ty as #p::Fields>::FIELDS);
                    (names, path.span(), path.clone())
                }
            };
            let check = match e.mode {
                Mode::Propagate => quote_spanned!(span=> #p::propagated_ref),
                Mode::Snapshot => quote_spanned!(span=> #p::snapshot_ref),
            };
            let bound = quote_spanned!(span=> __field);
            let slot = quote! {{
                let #bound = #names.#slot_field;
                #check(#bound)
            }};
            let items = e.item.is_some();
            let mode = match e.mode {
                Mode::Propagate => quote!(#p::Mode::Propagate),
                Mode::Snapshot => quote!(#p::Mode::Snapshot),
            };
            quote! {
                const #konst: #p::Embedding = #p::Embedding::from_parts(#p::EmbeddingParts {
                    model: #name,
                    collection: #collection,
                    field: #bson,
                    items: #items,
                    slot: #slot,
                    mode: #mode,
                });
            }
        });
        quote!(#(#embeds)*)
    }
}

/// The visibility of the source field `ident`.
fn field_vis<'a>(input: &'a syn::DeriveInput, ident: &Ident) -> Option<&'a syn::Visibility> {
    let syn::Data::Struct(s) = &input.data else {
        return None;
    };
    s.fields
        .iter()
        .find(|f| f.ident.as_ref() == Some(ident))
        .map(|f| &f.vis)
}

/// The source field's serde attributes without `rename` and `alias` (the copy is renamed
/// explicitly to the source's serialized name): `with`, `skip_serializing_if`, `default`, ...
/// keep the copy's stored form equal to the source's.
fn copied_serde_attrs(attrs: &[syn::Attribute]) -> Vec<TokenStream> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("serde"))
        .filter_map(|a| {
            let metas = a
                .parse_args_with(Punctuated::<syn::Meta, Token![,]>::parse_terminated)
                .ok()?;
            let kept: Vec<&syn::Meta> = metas
                .iter()
                .filter(|m| !(m.path().is_ident("rename") || m.path().is_ident("alias")))
                .collect();
            (!kept.is_empty()).then(|| quote!(#[serde(#(#kept),*)]))
        })
        .collect()
}
