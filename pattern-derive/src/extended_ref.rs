//! `#[extended_ref(...)]`: reference shapes declared on a source model (`CustomerRef(name,
//! address)`), and the modes of the fields that hold them (`propagate`, `snapshot`, with `path`
//! for references inside the items of an array).
//!
//! What this derive can see is checked here: the copied fields exist on the source and are
//! stored, a mode is given once, `path` is on a `Vec`. What lives in other types (that a field's
//! type is a reference, that a shape declared `snapshot` is not propagated, that a field without a
//! mode holds no reference, the item's field names) is checked by code generated at the user's
//! tokens, so rustc's error points there.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::ext::IdentExt;
use syn::punctuated::Punctuated;
use syn::{Ident, Token};

use crate::ast::{Field, Model};
use crate::errors::{did_you_mean, fail_with, probe_closure, span_range, Errors};
use crate::schema::{Pattern, PatternDef};

/// The extended reference pattern's entry points: shapes and embeddings on models, and on
/// `#[derive(Fields)]` structs, which of their fields hold references.
pub(crate) const PATTERN: PatternDef = PatternDef {
    model: |input, model, errors| Box::new(collect(input, model, errors)),
    fields: Some(|input, model, errors| {
        misplaced_on_fields(input, errors);
        held_refs(model)
    }),
};

impl Pattern for ExtendedRefs {
    fn public_items(&self, input: &syn::DeriveInput, model: &Model<'_>) -> TokenStream {
        self.types(input, model)
    }

    fn annotations(&self, field: &Field<'_>, p: &TokenStream) -> Vec<TokenStream> {
        self.annotation(field, p).into_iter().collect()
    }

    fn items(&self, model: &Model<'_>) -> TokenStream {
        let mut out = self.embedding_items(model);
        out.extend(self.items(model, true));
        out
    }

    fn specs(&self) -> Vec<TokenStream> {
        let refs = (0..self.shapes.len()).map(|i| format_ident!("__REF_{}", i));
        let embeds = (0..self.embeds.len()).map(|i| format_ident!("__EMBED_{}", i));
        refs.chain(embeds).map(|s| quote!(&#s)).collect()
    }

    fn stubs(&self, model: &Model<'_>) -> TokenStream {
        self.items(model, false)
    }
}

/// The extended references of one model: shapes it declares, fields that embed others' shapes,
/// and the other stored fields, probed for references without a mode.
#[derive(Default)]
pub(crate) struct ExtendedRefs {
    shapes: Vec<Shape>,
    /// The source is `#[versioned]`: its writes (`save`, `update`, `delete`) keep the copies,
    /// and `References`, which would write around its revisions, is not generated.
    versioned: bool,
    embeds: Vec<Embed>,
    probes: Vec<Probe>,
}

/// A stored field without `#[extended_ref]`: checked to hold no reference, directly or in the
/// fields of the struct it holds.
struct Probe {
    ty: syn::Type,
    /// The type inside `Option`/`Vec`/`Box` wrappers, and whether one of them is a `Vec`.
    inner: syn::Type,
    in_array: bool,
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
const SHAPE_OPTIONS: &[&str] = &["snapshot", "derive"];

/// Reads every `#[extended_ref]` of the model.
fn collect(input: &syn::DeriveInput, model: &Model<'_>, errors: &mut Errors) -> ExtendedRefs {
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
    out.versioned = input.attrs.iter().any(|a| a.path().is_ident("versioned"));
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
                if let Some(embed) = parse_embed(attr, field, out.versioned, errors) {
                    out.embeds.push(embed);
                }
            }
            None if field.serialized => {
                let mut inner = field.ty;
                let mut in_array = false;
                while let Some((w, t)) = ["Option", "Vec", "Box"]
                    .iter()
                    .find_map(|w| Some((*w, crate::ast::wrapped(inner, w)?)))
                {
                    in_array |= w == "Vec";
                    inner = t;
                }
                out.probes.push(Probe {
                    ty: field.ty.clone(),
                    inner: inner.clone(),
                    in_array,
                });
            }
            None => {}
        }
    }
    out
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

/// The options of `#[extended_ref(...)]`, none for a bare `#[extended_ref]`.
fn options(
    attr: &syn::Attribute,
    each: impl FnMut(syn::meta::ParseNestedMeta<'_>) -> syn::Result<()>,
) -> syn::Result<()> {
    match attr.meta {
        syn::Meta::Path(_) => Ok(()),
        _ => attr.parse_nested_meta(each),
    }
}

fn parse_shape(attr: &syn::Attribute, model: &Model<'_>, errors: &mut Errors) -> Option<Shape> {
    let mut shape: Option<(Ident, Vec<Ident>)> = None;
    let mut snapshot_only = false;
    let mut derives = Vec::new();
    let before = errors.count();
    let result = options(attr, |meta| {
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
                let option_like = ident
                    .unraw()
                    .to_string()
                    .starts_with(|c: char| c.is_lowercase() || c == '_');
                if option_like && !meta.input.peek(syn::token::Paren) {
                    skip_value(&meta)?;
                    let key = ident.unraw().to_string();
                    errors.spanned(
                        &ident,
                        format!(
                            "unknown extended_ref option `{key}`{}; expected a reference \
                                 shape, `CustomerRef(name, address)`, or one of: {}",
                            did_you_mean(&key, SHAPE_OPTIONS.iter().copied()),
                            SHAPE_OPTIONS.join(", ")
                        ),
                    );
                    return Ok(());
                }
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
    });
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
        } else if !snapshot_only
            && source
                .attrs
                .iter()
                .any(|a| a.path().is_ident("approximate"))
        {
            errors.spanned(
                &f,
                format!(
                    "`{name}` is an `#[approximate]` counter: its events are written without \
                     reading the document, so a kept copy of it would go stale at the first \
                     one; copy it only as a `snapshot` (`#[extended_ref({ident}(..), \
                     snapshot)]`), or read the counter from the source"
                ),
            );
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

fn parse_embed(
    attr: &syn::Attribute,
    field: &Field<'_>,
    versioned: bool,
    errors: &mut Errors,
) -> Option<Embed> {
    let mut mode: Option<Mode> = None;
    let mut path: Option<Ident> = None;
    let mut local = Errors::default();
    let result = options(attr, |meta| {
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
                if versioned && this == Mode::Propagate {
                    local.spanned(
                        &meta.path,
                        "`#[extended_ref(propagate)]` is not supported on a `#[versioned]` model \
                         yet: a change of the source would rewrite this copy without a new \
                         version or a copy of the old one, and the next `save` would undo it. \
                         Keep a `snapshot` copy (frozen when written), or keep the copy in a \
                         model of its own",
                    );
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
    });
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
            let Some(item_ty) = crate::ast::wrapped(field.ty, "Vec") else {
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
    fn annotation(&self, field: &Field<'_>, p: &TokenStream) -> Option<TokenStream> {
        let embed = self.embeds.iter().find(|e| e.field == *field.ident)?;
        let mode = match embed.mode {
            Mode::Propagate => quote!(#p::Mode::Propagate),
            Mode::Snapshot => quote!(#p::Mode::Snapshot),
        };
        Some(quote!(#p::Annotation::ExtendedRef { mode: #mode }))
    }

    /// The generated reference types: outside the derive's `const _` block, so they can be named.
    fn types(&self, input: &syn::DeriveInput, model: &Model<'_>) -> TokenStream {
        let krate = &model.krate;
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
                let serde_attrs = crate::ast::serde_attrs_without_names(f.attrs);
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
            let type_attrs = crate::schema::generated_type_attrs(krate, &shape.derives);
            out.extend(quote! {
                #[doc = #doc]
                #type_attrs
                #vis struct #ident {
                    #(#fields,)*
                }
            });
        }
        out
    }

    /// The impls and statics, inside the derive's `const _` block: `From<&Source>`, the
    /// `RefSpec`s, `ExtendedRef`, `Propagatable`, `Referenced`, and the probes.
    fn items(&self, model: &Model<'_>, with_probes: bool) -> TokenStream {
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
            let copied: Vec<&Field<'_>> = shape
                .fields
                .iter()
                .filter_map(|f| model.field(&crate::ast::unraw(f)))
                .collect();
            let bson_names = copied.iter().map(|f| &f.bson_name);
            // Both impls copy each field with `<Type as Copied<Shape>>::copied`: a field that is not
            // `Clone` is one error (the same at both), at the field's type.
            let p = &p;
            let copies = |from: TokenStream| {
                id.into_iter()
                    .chain(copied.iter().copied())
                    .map(|f| {
                        let field = f.ident;
                        let ty = f.ty;
                        let (lo, hi) = span_range(ty);
                        let p_here = crate::errors::respan_all(p.clone(), lo);
                        let value = crate::errors::respan_all(quote!((&#from.#field)), hi);
                        quote!(#field: #p_here::Copied::<#ident>::copied #value)
                    })
                    .collect::<Vec<_>>()
            };
            let inits = copies(quote!(source));
            let clones = copies(quote!(self));
            let snapshot_only = shape.snapshot_only;
            let propagatable = (!snapshot_only).then(|| {
                quote! {
                    #[automatically_derived]
                    impl #p::Propagatable for #ident {}
                }
            });
            // A reference for relations too (loading the sources): when the source can be
            // referenced, its `_id` stored as its type's own serialization.
            let reference = id
                .filter(|f| f.serialized && !f.custom_serializer)
                .map(|f| {
                    let field = f.ident;
                    quote! {
                        #[automatically_derived]
                        impl #p::Reference for #ident {
                            type Target = #source;
                            fn target_id(&self) -> &<#source as #p::Model>::Id {
                                &self.#field
                            }
                        }
                    }
                });
            out.extend(quote! {
                #[automatically_derived]
                impl ::core::clone::Clone for #ident {
                    fn clone(&self) -> Self {
                        #ident { #(#clones,)* }
                    }
                }

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
                #reference
            });
        }
        // Only shapes that can be kept in sync give the model propagating writes; a versioned
        // model's own writes propagate (through the map of derived data).
        if !self.versioned && self.shapes.iter().any(|s| !s.snapshot_only) {
            out.extend(quote! {
                #[automatically_derived]
                impl #p::Referenced for #source {}
            });
        }
        if with_probes {
            for probe in &self.probes {
                out.extend(probe.check(&p));
            }
        }
        out
    }

    /// One constant per embedding, inside the derive's `const _` block. Its slot is where the
    /// field's type is checked: `ref_slot::<Type>` (an error points at the type), or for
    /// `path`, the item's field name bound first (an error points at `path`'s value).
    fn embedding_items(&self, model: &Model<'_>) -> TokenStream {
        let krate = &model.krate;
        let p = quote!(#krate::__private);
        let name = model.ident.to_string();
        let collection = &model.collection;
        let embeds = self.embeds.iter().enumerate().map(|(i, e)| {
            let konst = format_ident!("__EMBED_{}", i);
            let bson = &e.bson_name;
            // The slot comes from the field type's verdict, so no trait bound can fail: the
            // checks are constants that fail with the message alone, at the user's tokens.
            let (held, propagation, subject, lo, hi, slot_name) = match &e.item {
                None => {
                    let (lo, hi) = span_range(&e.ty);
                    (
                        probe_closure(&p, &e.ty, "held"),
                        probe_closure(&p, &e.ty, "propagation"),
                        format!("`{}`", crate::errors::type_string(&e.ty)),
                        lo,
                        hi,
                        quote!(#bson),
                    )
                }
                Some((item_ty, path)) => {
                    let span = path.span();
                    let names =
                        quote_spanned!(span_range(item_ty).0=> <#item_ty as #p::Fields>::FIELDS);
                    let field = quote_spanned!(span=> #names.#path);
                    let probe = |method: &str| {
                        let method = Ident::new(method, span);
                        quote_spanned! {span=> || {
                            #[allow(unused_imports)]
                            use #p::{
                                ProbeHeld as _, ProbeNested as _, ProbeOther as _,
                                ProbeSnapshotOnly as _, ProbeSyncable as _,
                            };
                            (&&&#p::RefProbe::of(#field)).#method()
                        }}
                    };
                    (
                        probe("held"),
                        probe("propagation"),
                        format!(
                            "`{}` of `{}`",
                            crate::ast::unraw(path),
                            crate::errors::type_string(item_ty)
                        ),
                        span,
                        span,
                        quote_spanned!(span=> #field.as_str()),
                    )
                }
            };
            let not_refs = format!(
                "{subject} is not a field of extended references: a mode goes on a field holding \
                 `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or \
                 `Option<Vec<CustomerRef>>`, where an extended reference is declared on its \
                 source model (`#[extended_ref(CustomerRef(name, ..))]` on `Customer` generates \
                 `CustomerRef`)"
            );
            let too_deep = format!(
                "{subject} holds extended references nested deeper than propagation can address: \
                 hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or \
                 `Option<Vec<CustomerRef>>`"
            );
            let mut checks = fail_with(quote!(#p::mode_error(#held, #not_refs, #too_deep)), lo, hi);
            if e.mode == Mode::Propagate {
                let message = format!(
                    "{subject} holds a reference shape declared `snapshot` on its source: its \
                     copies are frozen when written, so the field cannot be marked `propagate`; \
                     mark it `#[extended_ref(snapshot)]`, or declare a shape without `snapshot` \
                     on the source to keep copies in sync"
                );
                checks.extend(fail_with(
                    quote!(#p::propagate_error(#propagation, #message)),
                    lo,
                    hi,
                ));
            }
            let slot = quote!(#p::ref_slot(#held, #slot_name));
            // The other fields of the items hold no reference (one `path` per field).
            let beside = e.item.as_ref().map(|(item_ty, path)| {
                let items = probe_closure(&p, item_ty, "items");
                let name = crate::ast::unraw(path);
                fail_with(
                    quote!(#p::items_beside_path(#items, #name)),
                    path.span(),
                    path.span(),
                )
            });
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
                #beside
                #checks
            }
        });
        quote!(#(#embeds)*)
    }
}

impl Probe {
    /// The checks of a field without a mode: it holds no reference (`no_mode_needed`), and the
    /// struct it holds (`#[derive(Fields)]`) has no field holding one (a constant that fails to
    /// evaluate with the struct's message).
    fn check(&self, p: &TokenStream) -> TokenStream {
        let held = probe_closure(p, &self.ty, "held");
        let (lo, hi) = span_range(&self.ty);
        let ty = crate::errors::type_string(&self.ty);
        let no_mode = format!(
            "this field holds extended references (`{ty}`) without a mode: mark it \
             `#[extended_ref(propagate)]` to keep its copies in sync with the source, or \
             `#[extended_ref(snapshot)]` to keep them as written"
        );
        let too_deep = format!(
            "this field holds extended references (`{ty}`) nested deeper than propagation can \
             address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or \
             `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` \
             or `#[extended_ref(snapshot)]`"
        );
        let mut out = fail_with(
            quote!(#p::no_mode_error(#held, #no_mode, #too_deep)),
            lo,
            hi,
        );
        let simple = matches!(&self.inner, syn::Type::Path(t) if t.qself.is_none());
        if simple {
            let items = probe_closure(p, &self.inner, "items");
            let in_array = self.in_array;
            out.extend(fail_with(
                quote!(#p::items_without_mode(#items, #in_array)),
                lo,
                hi,
            ));
        }
        out
    }
}

/// `#[extended_ref]` on a `#[derive(Fields)]` struct (registered there only to say this):
/// shapes are declared on models, and modes go on the model's field holding the items.
fn misplaced_on_fields(input: &syn::DeriveInput, errors: &mut Errors) {
    for attr in input
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("extended_ref"))
    {
        errors.spanned(
            attr,
            "reference shapes are declared on a `#[derive(Model)]` struct: the source of the \
             copies, with an `_id`",
        );
    }
    let syn::Data::Struct(s) = &input.data else {
        return;
    };
    for field in &s.fields {
        for attr in field
            .attrs
            .iter()
            .filter(|a| a.path().is_ident("extended_ref"))
        {
            let name = field
                .ident
                .as_ref()
                .map_or_else(|| "field".to_owned(), |i| i.unraw().to_string());
            errors.spanned(
                attr,
                format!(
                    "the mode goes on the model's field holding these items, with `path`: \
                     `#[extended_ref(propagate, path = {name})] items: Vec<{}>`",
                    input.ident
                ),
            );
        }
    }
}

/// `impl HeldRefs` of a `#[derive(Fields)]` struct: for each stored field holding references, the
/// messages for a model field holding the struct (see `pattern_runtime::extended_ref::slot`).
fn held_refs(model: &Model<'_>) -> TokenStream {
    let krate = &model.krate;
    let p = quote!(#krate::__private);
    let ident = model.ident;
    let held = model.fields.iter().filter(|f| f.serialized).map(|f| {
        let name = &f.rust_name;
        let in_array = format!(
            "this field's items (`{ident}`) hold extended references in `{name}`, and the field \
             has no mode: mark it `#[extended_ref(propagate, path = {name})]` to keep the copies \
             in sync, or `#[extended_ref(snapshot, path = {name})]` to keep them as written"
        );
        let nested = format!(
            "this field holds a `{ident}`, whose `{name}` holds extended references: references \
             inside a nested struct are kept in sync only from a `Vec` of items \
             (`#[extended_ref(propagate, path = {name})] items: Vec<{ident}>`); hold the \
             reference on the model itself, or the struct in a `Vec`"
        );
        let beside = format!(
            "the items (`{ident}`) also hold extended references in `{name}`, which no mode \
             covers: one field tracks one reference of its items (`path`). Hold `{name}`'s \
             reference in an array of its own, or drop it from the items"
        );
        let check = probe_closure(&p, f.ty, "held");
        quote! {
            #p::when_held(#check, #p::HeldRef {
                field: #name,
                in_array: #in_array,
                nested: #nested,
                beside: #beside,
            })
        }
    });
    quote! {
        #[automatically_derived]
        impl #p::HeldRefs for #ident {
            const HELD: &'static [::core::option::Option<#p::HeldRef>] = &[#(#held),*];
        }
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
