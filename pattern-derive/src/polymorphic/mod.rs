//! `#[derive(Model)]` on an enum: the polymorphic pattern. One collection, a serde internal tag
//! telling the variants apart, the fields common to every variant, and one generated struct per
//! variant for typed access. Indexes on the enum take common fields; indexes on a variant are
//! partial indexes restricted to its tag value.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, ToTokens};
use serde_derive_internals::{ast as serde_ast, attr::TagType, Ctxt, Derive};
use syn::{DeriveInput, Ident};

use crate::ast::{self, Field, Model};
use crate::errors::Errors;
use crate::index::{self, Index};
use crate::schema;
use crate::shard::{self, ShardKey};

mod expand;
mod parse;

use crate::attr::Attr;
use expand::generate;
pub(crate) use expand::projections;
use parse::read;

/// Attributes of other patterns, refused on an enum model (with where they would go).
const REFUSED: &[Attr] = &[
    Attr::Versioned,
    Attr::Version,
    Attr::Subset,
    Attr::Summary,
    Attr::Computed,
    Attr::Approximate,
    Attr::Outlier,
    Attr::ExtendedRef,
    Attr::Attribute,
    Attr::Relation,
    Attr::Tree,
    Attr::InTree,
    Attr::Preallocated,
    Attr::Bounded,
];

/// One struct variant.
struct VariantDef<'a> {
    ident: &'a Ident,
    tag_value: String,
    /// The generated struct (`NotificationPush`).
    struct_ident: Ident,
    fields: Vec<Field<'a>>,
    attrs: &'a [syn::Attribute],
}

/// What the derive read of the enum.
struct Poly<'a> {
    input: &'a DeriveInput,
    attrs: ast::ModelAttrs,
    tag: String,
    variants: Vec<VariantDef<'a>>,
    /// The `#[serde(other)]` unit variant.
    catch_all: Option<&'a Ident>,
    kind_ident: Ident,
    common_ident: Ident,
    /// Indices into the first variant's fields: the common ones.
    common: Vec<usize>,
    /// Fields of some variants only: (Rust name, the variants having it).
    partial: Vec<(String, Vec<String>)>,
}

pub(crate) fn derive(input: &DeriveInput) -> TokenStream {
    let mut errors = Errors::default();
    let poly = read(input, &mut errors);
    let indexes = match &poly {
        Some(p) if errors.is_empty() => Some(collect_indexes(p, &mut errors)),
        _ => None,
    };
    let mut out = match errors.into_result() {
        Ok(()) => TokenStream::new(),
        Err(e) => e.to_compile_error(),
    };
    if let Some(p) = &poly {
        // With errors, the same items without indexes and unregistered: uses of the generated
        // types do not cascade into more errors.
        let (indexes, shard) = match &indexes {
            Some((i, s)) => (Some(i.as_slice()), s.as_ref()),
            None => (None, None),
        };
        out.extend(generate(p, indexes, shard));
    }
    out
}

impl<'a> Poly<'a> {
    fn common_fields(&self) -> impl Iterator<Item = &Field<'a>> {
        let first = self.variants.first();
        self.common
            .iter()
            .filter_map(move |&i| first.map(|v| &v.fields[i]))
    }

    fn krate(&self) -> syn::Path {
        self.attrs
            .krate
            .clone()
            .unwrap_or_else(|| syn::parse_quote!(::pattern_runtime))
    }

    fn collection(&self) -> String {
        self.attrs
            .collection
            .clone()
            .unwrap_or_else(|| ast::default_collection(&self.input.ident.to_string()))
    }
}

/// The model of the generated common struct: the tag (`kind`) and the common fields, without
/// their attributes (field-level `#[index]` belongs to the variant it is written in).
fn common_model<'p>(
    poly: &'p Poly<'_>,
    kind_field_ident: &'p Ident,
    kind_ty: &'p syn::Type,
) -> Model<'p> {
    let mut fields = vec![Field {
        ident: kind_field_ident,
        rust_name: "kind".to_owned(),
        bson_name: poly.tag.clone(),
        ty: kind_ty,
        serialized: true,
        custom_serializer: false,
        omittable: false,
        validate: crate::validate::Validate::Derived,
        attrs: &[],
        carries: crate::attr::Attrs::NONE,
    }];
    fields.extend(poly.common_fields().map(|f| Field {
        ident: f.ident,
        rust_name: f.rust_name.clone(),
        bson_name: f.bson_name.clone(),
        ty: f.ty,
        serialized: true,
        custom_serializer: f.custom_serializer,
        omittable: f.omittable,
        validate: f.validate.clone(),
        attrs: &[],
        carries: crate::attr::Attrs::NONE,
    }));
    Model {
        ident: &poly.common_ident,
        krate: poly.krate(),
        collection: poly.collection(),
        group: poly.attrs.group.clone(),
        fields,
        partial_fields: poly.partial.clone(),
        described_as: Some(format!("any variant of `{}`", poly.input.ident)),
        carries: crate::attr::Attrs::of(&poly.input.attrs),
    }
}

/// The model of one variant's generated struct.
fn variant_model<'p>(poly: &'p Poly<'_>, v: &'p VariantDef<'_>) -> Model<'p> {
    Model {
        ident: &v.struct_ident,
        krate: poly.krate(),
        collection: poly.collection(),
        group: poly.attrs.group.clone(),
        fields: v
            .fields
            .iter()
            .map(|f| Field {
                ident: f.ident,
                rust_name: f.rust_name.clone(),
                bson_name: f.bson_name.clone(),
                ty: f.ty,
                serialized: f.serialized,
                custom_serializer: f.custom_serializer,
                omittable: f.omittable,
                validate: f.validate.clone(),
                attrs: f.attrs,
                carries: f.carries,
            })
            .collect(),
        partial_fields: Vec::new(),
        described_as: Some(format!("variant `{}` of `{}`", v.ident, poly.input.ident)),
        carries: crate::attr::Attrs::of(&poly.input.attrs),
    }
}

/// The indexes: the enum's (common fields, every variant), then each variant's (restricted to
/// its tag value); and the shard key, on common fields. `None` in the output's place when an
/// index is wrong.
fn collect_indexes(poly: &Poly<'_>, errors: &mut Errors) -> (Vec<Index>, Option<ShardKey>) {
    let kind_field = Ident::new("kind", Span::call_site());
    let kind_ident = &poly.kind_ident;
    let kind_ty: syn::Type = syn::parse_quote!(#kind_ident);
    let common = common_model(poly, &kind_field, &kind_ty);
    let mut all = index::collect(&poly.input.attrs, &common, errors);
    for v in &poly.variants {
        let model = variant_model(poly, v);
        for mut i in index::collect(v.attrs, &model, errors) {
            let named = i.is_named();
            i.restrict_to(&poly.tag, &v.tag_value, named);
            all.push(i);
        }
    }
    let all = index::dedupe(all, errors);
    let shard = shard::collect(&poly.input.attrs, &common, &all, errors);
    (all, shard)
}
