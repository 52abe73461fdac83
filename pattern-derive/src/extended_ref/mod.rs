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

mod expand;
mod parse;

use crate::attr::Attr;
use parse::{parse_embed, parse_shape};

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
    fn kept(&self, field: &Field<'_>) -> Option<&'static str> {
        self.embeds
            .iter()
            .any(|e| e.field == *field.ident)
            .then_some("ExtendedRefCopy")
    }

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
    for attr in Attr::ExtendedRef.find(&input.attrs) {
        if let Some(shape) = parse_shape(attr, model, errors) {
            if shape.ident == *model.ident {
                errors.spanned(
                    &shape.ident,
                    format!(
                        "the reference type needs a name of its own: it is generated next to the \
                         source model (e.g. `{0}Ref` for `{0}`)",
                        model.ident
                    ),
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
    out.versioned = model.has(Attr::Versioned);
    for field in &model.fields {
        let attrs: Vec<&syn::Attribute> = field.attrs_of(Attr::ExtendedRef).collect();
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
                    .find_map(|w| Some((*w, crate::types::wrapped(inner, w)?)))
                {
                    in_array |= w == "Vec";
                    inner = t;
                }
                // A scalar holds no reference: nothing to probe.
                if crate::types::is_plain_scalar(inner) {
                    continue;
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

/// `#[extended_ref]` on a `#[derive(Fields)]` struct (registered there only to say this):
/// shapes are declared on models, and modes go on the model's field holding the items.
fn misplaced_on_fields(input: &syn::DeriveInput, errors: &mut Errors) {
    for attr in Attr::ExtendedRef.find(&input.attrs) {
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
        for attr in Attr::ExtendedRef.find(&field.attrs) {
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
        // A scalar holds no reference: nothing to probe.
        if crate::types::holds_only_scalars(f.ty) {
            return quote!(::core::option::Option::None);
        }
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
