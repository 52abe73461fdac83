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

/// Attributes of other patterns, refused on an enum model (with where they would go).
const REFUSED: &[&str] = &[
    "versioned",
    "version",
    "subset",
    "computed",
    "approximate",
    "outlier",
    "extended_ref",
    "attribute",
    "relation",
    "tree",
    "in_tree",
    "preallocated",
    "bounded",
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

/// Reads the enum; `None` when nothing can be generated (serde's attributes are wrong, which
/// serde reports, or the enum is generic or not internally tagged).
fn read<'a>(input: &'a DeriveInput, errors: &mut Errors) -> Option<Poly<'a>> {
    if !input.generics.params.is_empty() {
        errors.spanned(
            &input.generics,
            "`derive(Model)` does not support generic enums: a model is registered once, for one \
             collection. Derive it on a concrete enum",
        );
        return None;
    }
    let attrs = ast::parse_model_attrs(input, errors);
    refuse_other_patterns(input, errors);
    let cx = Ctxt::new();
    let container = serde_ast::Container::from_ast(&cx, input, Derive::Serialize);
    let serde_ok = cx.check().is_ok();
    let container = container.filter(|_| serde_ok)?;
    ast::check_container_serde(input, &container, errors);
    let serde_ast::Data::Enum(serde_variants) = &container.data else {
        return None;
    };
    let advice = "store one shape per variant with `#[serde(tag = \"type\")]` on the enum (the \
                  tag's key, here `type`, is a field of every document)";
    let tag = match container.attrs.tag() {
        TagType::Internal { tag } => tag.clone(),
        TagType::External => {
            errors.spanned(
                &input.ident,
                format!(
                    "`derive(Model)` on an enum needs an internally tagged enum: by default serde \
                     nests each variant's fields under its name (`{{\"Email\": {{..}}}}`), so no \
                     field is common to every document and none can be indexed; {advice}"
                ),
            );
            return None;
        }
        TagType::Adjacent { .. } => {
            let span =
                ast::serde_key_span(&input.attrs, "content").unwrap_or_else(|| input.ident.span());
            errors.at(
                span,
                format!(
                    "an adjacently tagged enum (`tag` + `content`) nests each variant's fields \
                     under `content`, so no field is common to every document; remove \
                     `content`: {advice}"
                ),
            );
            return None;
        }
        TagType::None => {
            let span =
                ast::serde_key_span(&input.attrs, "untagged").unwrap_or_else(|| input.ident.span());
            errors.at(
                span,
                format!(
                    "an untagged enum stores no field saying which variant a document is, so it \
                     cannot be read back reliably nor queried by variant; {advice}"
                ),
            );
            return None;
        }
    };

    let mut variants: Vec<VariantDef<'a>> = Vec::new();
    let mut catch_all = None;
    for v in serde_variants {
        let ident = &v.original.ident;
        if v.attrs.other() {
            catch_all = Some(ident);
            continue;
        }
        match v.style {
            serde_ast::Style::Struct => {}
            serde_ast::Style::Unit => {
                errors.spanned(
                    ident,
                    format!(
                        "unit variant `{ident}` would store only the tag, and every document \
                         needs an `_id`: give it fields (one serialized as `_id`), or mark it \
                         `#[serde(other)]` to read documents whose tag no variant has"
                    ),
                );
                continue;
            }
            serde_ast::Style::Newtype => {
                errors.spanned(
                    &v.original.fields,
                    format!(
                        "newtype variant `{ident}(..)` is not supported: the derive cannot see \
                         the inner struct's fields, which it needs for the common fields, the \
                         indexes and the variant's struct; write them in the variant: \
                         `{ident} {{ .. }}`"
                    ),
                );
                continue;
            }
            serde_ast::Style::Tuple => {
                errors.spanned(
                    &v.original.fields,
                    format!(
                        "tuple variant `{ident}(..)` has no field names to store as BSON keys: \
                         write a struct variant, `{ident} {{ .. }}`"
                    ),
                );
                continue;
            }
        }
        let tag_value = v.attrs.name().serialize_name().to_owned();
        if let Some(first) = variants.iter().find(|o| o.tag_value == tag_value) {
            errors.spanned(
                ident,
                format!(
                    "variants `{}` and `{ident}` are both stored with `{tag}: \"{tag_value}\"`, \
                     so a document could not say which one it is: give one of them another \
                     `#[serde(rename = \"...\")]`",
                    first.ident
                ),
            );
            continue;
        }
        let fields = ast::fields_of(&v.fields, errors);
        if !ast::has_id(&fields, errors) {
            errors.spanned(
                ident,
                format!(
                    "variant `{ident}` has no field serialized as `_id`: every document needs \
                     one; add `#[serde(rename = \"_id\")] id: bson::oid::ObjectId` (the same in \
                     every variant, so it is a common field)"
                ),
            );
        }
        variants.push(VariantDef {
            ident,
            tag_value,
            struct_ident: format_ident!("{}{}", input.ident, ast::unraw(ident)),
            fields,
            attrs: &v.original.attrs,
        });
    }
    if variants.is_empty() && serde_variants.iter().all(|v| v.attrs.other()) {
        errors.spanned(
            &input.ident,
            "an enum model needs at least one struct variant with fields (one of them serialized \
             as `_id`)",
        );
    }

    let (common, partial) = common_fields(&variants);
    let poly = Poly {
        input,
        attrs,
        tag,
        catch_all,
        kind_ident: format_ident!("{}Kind", input.ident),
        common_ident: format_ident!("{}Common", input.ident),
        common,
        partial,
        variants,
    };
    if let Some(f) = poly.common_fields().find(|f| f.rust_name == "kind") {
        errors.spanned(
            f.ident,
            format!(
                "`kind` is a field of every variant, and `{}` names the tag `kind`: rename this \
                 field",
                poly.common_ident
            ),
        );
    }
    Some(poly)
}

/// `#[versioned]`, `#[subset]`, ... anywhere on the enum: refused, with why.
fn refuse_other_patterns(input: &DeriveInput, errors: &mut Errors) {
    let syn::Data::Enum(e) = &input.data else {
        return;
    };
    let on_fields = e
        .variants
        .iter()
        .flat_map(|v| v.attrs.iter().chain(v.fields.iter().flat_map(|f| &f.attrs)));
    for attr in input.attrs.iter().chain(on_fields) {
        if let Some(name) = REFUSED.iter().find(|n| attr.path().is_ident(n)) {
            errors.spanned(
                attr.path(),
                format!(
                    "`#[{name}]` is not supported on an enum model (the polymorphic pattern) \
                     yet: its operations address the fields of one shape. Keep this data in a \
                     struct model of its own"
                ),
            );
        }
    }
    for v in &e.variants {
        for attr in v.fields.iter().flat_map(|f| &f.attrs).chain(&v.attrs) {
            if attr.path().is_ident("shard_key") {
                errors.spanned(
                    attr,
                    "`#[shard_key(...)]` goes on the enum: the variants share one collection, \
                     sharded by fields every variant has",
                );
            }
            if attr.path().is_ident("model") {
                errors.spanned(
                    attr,
                    "`#[model(...)]` goes on the enum, not on a variant or field",
                );
            }
        }
    }
}

/// The first variant's fields that every variant has under the same Rust name, BSON name and
/// type; and the names only some variants have.
fn common_fields(variants: &[VariantDef<'_>]) -> (Vec<usize>, Vec<(String, Vec<String>)>) {
    let Some(first) = variants.first() else {
        return (Vec::new(), Vec::new());
    };
    let same = |f: &Field<'_>, g: &Field<'_>| {
        f.rust_name == g.rust_name
            && f.bson_name == g.bson_name
            && g.serialized
            && crate::errors::type_string(f.ty) == crate::errors::type_string(g.ty)
    };
    let common = first
        .fields
        .iter()
        .enumerate()
        .filter(|(_, f)| {
            f.serialized && variants.iter().all(|v| v.fields.iter().any(|g| same(f, g)))
        })
        .map(|(i, _)| i)
        .collect::<Vec<_>>();
    let mut partial: Vec<(String, Vec<String>)> = Vec::new();
    for v in variants {
        for f in v.fields.iter().filter(|f| f.serialized) {
            let is_common = common
                .iter()
                .any(|&i| first.fields[i].rust_name == f.rust_name);
            if is_common {
                continue;
            }
            match partial.iter_mut().find(|(n, _)| *n == f.rust_name) {
                Some((_, vs)) => vs.push(v.ident.to_string()),
                None => partial.push((f.rust_name.clone(), vec![v.ident.to_string()])),
            }
        }
    }
    (common, partial)
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
        attrs: &[],
    }];
    fields.extend(poly.common_fields().map(|f| Field {
        ident: f.ident,
        rust_name: f.rust_name.clone(),
        bson_name: f.bson_name.clone(),
        ty: f.ty,
        serialized: true,
        custom_serializer: f.custom_serializer,
        attrs: &[],
    }));
    Model {
        ident: &poly.common_ident,
        krate: poly.krate(),
        collection: poly.collection(),
        group: poly.attrs.group.clone(),
        fields,
        partial_fields: poly.partial.clone(),
        described_as: Some(format!("any variant of `{}`", poly.input.ident)),
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
                attrs: f.attrs,
            })
            .collect(),
        partial_fields: Vec::new(),
        described_as: Some(format!("variant `{}` of `{}`", v.ident, poly.input.ident)),
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

fn generate(poly: &Poly<'_>, indexes: Option<&[Index]>, shard: Option<&ShardKey>) -> TokenStream {
    let input = poly.input;
    let krate = poly.krate();
    let p = quote!(#krate::__private);
    let serde_crate = format!("{}::__private::serde", krate.to_token_stream()).replace(' ', "");
    let vis = &input.vis;
    let ident = &input.ident;
    let kind_ident = &poly.kind_ident;
    let common_ident = &poly.common_ident;
    let id_type = crate::ast::id_type(poly.common_fields(), &p);
    let tag = &poly.tag;
    let type_attrs = schema::generated_type_attrs(&krate, &poly.attrs.derives);

    // The kind enum.
    let kind_variants = poly.variants.iter().map(|v| {
        let vi = v.ident;
        let value = &v.tag_value;
        let doc = format!("`{tag}: \"{value}\"`");
        quote!(#[doc = #doc] #[serde(rename = #value)] #vi)
    });
    let other_kind = poly.catch_all.map(|o| {
        quote!(
            /// Any other tag (the enum's `#[serde(other)]` variant).
            #[serde(other)]
            #o
        )
    });
    let kind_tags = poly.variants.iter().map(|v| {
        let vi = v.ident;
        let value = &v.tag_value;
        quote!(#kind_ident::#vi => ::core::option::Option::Some(#value))
    });
    let other_tag = poly
        .catch_all
        .map(|o| quote!(#kind_ident::#o => ::core::option::Option::None));
    let kind_doc = format!("The variants of [`{ident}`], stored as its `{tag}` field.");

    // The common struct.
    let common_fields = poly.common_fields().map(|f| generated_field(vis, f, ident));
    let common_doc = format!(
        "The tag and the fields every variant of [`{ident}`] has: what a query over all of them \
         projects to."
    );
    let kind_field_doc = format!("`{tag}`: the variant.");

    // The variant structs.
    let variant_structs = poly.variants.iter().map(|v| {
        let sident = &v.struct_ident;
        let fields = v.fields.iter().map(|f| generated_field(vis, f, ident));
        let doc = format!(
            "The `{}` variant of [`{ident}`] (`{tag}: \"{}\"`): what its handle reads and writes.",
            v.ident, v.tag_value
        );
        quote! {
            #[doc = #doc]
            #type_attrs
            #vis struct #sident {
                #(#fields,)*
            }
        }
    });

    let public = quote! {
        #[doc = #kind_doc]
        #[derive(
            ::core::clone::Clone,
            ::core::marker::Copy,
            ::core::fmt::Debug,
            ::core::cmp::PartialEq,
            ::core::cmp::Eq,
            ::core::hash::Hash,
            #p::serde::Serialize,
            #p::serde::Deserialize,
        )]
        #[serde(crate = #serde_crate)]
        #vis enum #kind_ident {
            #(#kind_variants,)*
            #other_kind
        }

        #[automatically_derived]
        impl #kind_ident {
            /// The tag value (`None` for the `#[serde(other)]` variant).
            #vis const fn tag(self) -> ::core::option::Option<&'static str> {
                match self {
                    #(#kind_tags,)*
                    #other_tag
                }
            }
        }

        #[doc = #common_doc]
        #type_attrs
        #vis struct #common_ident {
            #[doc = #kind_field_doc]
            #[serde(rename = #tag)]
            #vis kind: #kind_ident,
            #(#common_fields,)*
        }

        #(#variant_structs)*
    };

    // Inside the `const _` block.
    let kind_field = Ident::new("kind", Span::call_site());
    let kind_ty: syn::Type = syn::parse_quote!(#kind_ident);
    let common = common_model(poly, &kind_field, &kind_ty);
    let common_names = schema::field_names(&common);
    let variant_models: Vec<Model<'_>> = poly
        .variants
        .iter()
        .map(|v| variant_model(poly, v))
        .collect();
    let variant_names = variant_models.iter().map(schema::field_names);
    let field_schemas: Vec<TokenStream> = common
        .fields
        .iter()
        .map(|f| {
            let annotations = indexes
                .unwrap_or_default()
                .iter()
                .filter(|i| i.first_field == f.rust_name)
                .map(|i| {
                    let name = i.name_expr(&p);
                    quote!(#p::Annotation::Index { name: #name })
                })
                .collect::<Vec<_>>();
            schema::field_schema(f, &p, annotations.into_iter())
        })
        .collect();
    let mut index_specs: Vec<TokenStream> = Vec::new();
    // The tag's index is the pattern's (not the user's): listed through its spec.
    let mut pattern_statics = TokenStream::new();
    let mut pattern_refs: Vec<TokenStream> = Vec::new();
    if let Some(indexes) = indexes {
        if !indexes.iter().any(|i| i.starts_with_key(tag)) {
            let spec = index::plain_spec(&p, &[tag.as_str()], None, false, None);
            pattern_statics = quote! {
                static __TAG_INDEX: #p::IndexSpec = #spec;
                static __POLYMORPHIC: #p::PolymorphicSpec =
                    #p::PolymorphicSpec::from_parts(&__TAG_INDEX);
            };
            pattern_refs.push(quote!(&__POLYMORPHIC));
        }
        index_specs.extend(indexes.iter().map(|i| i.expand(&krate)));
    }
    let enum_model = Model {
        ident,
        krate: krate.clone(),
        collection: poly.collection(),
        group: poly.attrs.group.clone(),
        fields: Vec::new(),
        partial_fields: Vec::new(),
        described_as: None,
    };
    let (collection, schema_fields) = if indexes.is_some() {
        (poly.collection(), field_schemas)
    } else {
        (String::new(), Vec::new())
    };
    let shard = shard.map(|k| k.expand(&krate));
    let schema = schema::schema_static(
        &enum_model,
        &collection,
        &schema_fields,
        &index_specs,
        shard,
        &pattern_refs,
    );
    let schema = quote! {
        #pattern_statics
        #schema
    };
    let registration = indexes.is_some().then(|| {
        quote! {
            #p::inventory::submit! {
                #p::Registration { schema: &__SCHEMA }
            }
        }
    });
    let tags = poly.variants.iter().map(|v| &v.tag_value);
    let catch_all = poly.catch_all.is_some();
    let kind_arms = poly.variants.iter().map(|v| {
        let vi = v.ident;
        quote!(#ident::#vi { .. } => #kind_ident::#vi)
    });
    let other_arm = poly
        .catch_all
        .map(|o| quote!(#ident::#o => #kind_ident::#o));
    // After an error, variants the derive refused have no kind: the build fails anyway, so the
    // arm is never reached; it only keeps the match from adding an error of its own.
    let refused_arm = indexes.is_none().then(|| {
        quote! {
            #[allow(unreachable_patterns)]
            _ => ::core::unreachable!("`derive(Model)` reported an error on this enum"),
        }
    });
    let variant_impls = poly.variants.iter().map(|v| {
        let vi = v.ident;
        let sident = &v.struct_ident;
        let value = &v.tag_value;
        let names: Vec<&Ident> = v.fields.iter().map(|f| f.ident).collect();
        quote! {
            #[automatically_derived]
            impl #p::Variant for #sident {
                type Model = #ident;
                const TAG_VALUE: &'static str = #value;
            }

            #[automatically_derived]
            impl ::core::convert::From<#sident> for #ident {
                fn from(v: #sident) -> Self {
                    #ident::#vi { #(#names: v.#names),* }
                }
            }

            #[automatically_derived]
            impl ::core::convert::TryFrom<#ident> for #sident {
                /// The value, when it is another variant.
                type Error = #ident;
                fn try_from(m: #ident) -> ::core::result::Result<Self, #ident> {
                    match m {
                        #ident::#vi { #(#names),* } => ::core::result::Result::Ok(#sident { #(#names),* }),
                        #[allow(unreachable_patterns)]
                        other => ::core::result::Result::Err(other),
                    }
                }
            }
        }
    });
    // Extended references are not tracked in enum models yet: a field holding one (without the
    // refused `#[extended_ref]`) would silently never be updated.
    let ref_checks = poly
        .variants
        .iter()
        .flat_map(|v| v.fields.iter())
        .filter(|f| f.serialized && !f.attrs.iter().any(|a| a.path().is_ident("extended_ref")))
        .map(|f| {
            let (lo, hi) = crate::errors::span_range(f.ty);
            let held = crate::errors::probe_closure(&p, f.ty, "held");
            let message = format!(
            "this field holds extended references (`{}`), which an enum model does not keep in \
             sync yet: hold them in a struct model, or store plain values here",
            crate::errors::type_string(f.ty)
        );
            crate::errors::fail_with(quote!(#p::no_mode_error(#held, #message, #message)), lo, hi)
        });
    quote! {
        #public

        const _: () = {
            #(#ref_checks)*
            #common_names
            #(#variant_names)*
            #schema

            #[automatically_derived]
            impl #ident {
                /// The serialized (BSON) names of the tag (`kind`) and of the fields every
                /// variant has, for filters across variants.
                pub const FIELDS: <#common_ident as #p::Fields>::Names = #common_ident::FIELDS;
            }

            // The common fields are every document's fields: what other models name (a field
            // computed from this model, by a common field).
            #[automatically_derived]
            impl #p::Fields for #ident {
                type Names = <#common_ident as #p::Fields>::Names;
                const FIELDS: Self::Names = <#common_ident as #p::Fields>::FIELDS;
                const KEYS: &'static [&'static str] = <#common_ident as #p::Fields>::KEYS;
            }

            #[automatically_derived]
            impl #p::Model for #ident {
                const SCHEMA: &'static #p::ModelSchema = &__SCHEMA;
                type Id = #id_type;
            }

            #[automatically_derived]
            impl #p::Unversioned for #ident {}

            #[automatically_derived]
            impl #p::Polymorphic for #ident {
                const TAG: &'static str = #tag;
                const TAGS: &'static [&'static str] = &[#(#tags),*];
                const CATCH_ALL: bool = #catch_all;
                type Kind = #kind_ident;
                type Common = #common_ident;
                fn kind(&self) -> #kind_ident {
                    match self {
                        #(#kind_arms,)*
                        #other_arm
                        #refused_arm
                    }
                }
            }

            #(#variant_impls)*

            #registration
        };
    }
}

/// A field of a generated struct: its docs and serde attributes, renamed explicitly to the
/// enum's serialized name, public like the enum.
fn generated_field(vis: &syn::Visibility, f: &Field<'_>, ident: &Ident) -> TokenStream {
    let name = f.ident;
    let ty = f.ty;
    let bson = &f.bson_name;
    let serde_attrs = ast::serde_attrs_without_names(f.attrs);
    let docs = f.attrs.iter().filter(|a| a.path().is_ident("doc"));
    let fallback_doc = format!("`{bson}`, as in [`{ident}`].");
    let has_doc = f.attrs.iter().any(|a| a.path().is_ident("doc"));
    let doc = (!has_doc).then(|| quote!(#[doc = #fallback_doc]));
    quote! {
        #(#docs)*
        #doc
        #[serde(rename = #bson)]
        #(#serde_attrs)*
        #vis #name: #ty
    }
}

/// `#[projection(of = Variant)]` on a `#[derive(Fields)]` struct: each field is checked to be a
/// field of `Variant` with the same BSON name and type, and the struct implements
/// `Projection<Variant>`.
pub(crate) fn projections(
    input: &DeriveInput,
    model: &Model<'_>,
    errors: &mut Errors,
) -> TokenStream {
    let krate = &model.krate;
    let p = quote!(#krate::__private);
    let ident = model.ident;
    let mut out = TokenStream::new();
    for attr in input
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("projection"))
    {
        let mut of: Option<syn::Type> = None;
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("of") {
                of = Some(meta.value()?.parse()?);
                Ok(())
            } else {
                Err(meta.error(
                    "unknown projection option: write `#[projection(of = NotificationPush)]`, \
                     naming the struct (or model) whose fields this one projects",
                ))
            }
        });
        if let Err(e) = result {
            errors.push(e);
            continue;
        }
        let Some(of) = of else {
            errors.spanned(
                attr,
                "`#[projection]` needs the projected type: `#[projection(of = NotificationPush)]`",
            );
            continue;
        };
        let (lo, _) = crate::errors::span_range(&of);
        let p_lo = crate::errors::respan_all(p.clone(), lo);
        let checks = model.fields.iter().filter(|f| f.serialized).map(|f| {
            let name = f.ident;
            let ty = f.ty;
            let span = name.span();
            // `<Of as Fields>::FIELDS` at `of` (a type without names is one error there), the
            // field at the field.
            let source = quote::quote_spanned!(lo=> <#of as #p_lo::Fields>::FIELDS);
            let field = quote::quote_spanned!(span=> #source.#name);
            let bound = Ident::new("__field", span);
            let bson = &f.bson_name;
            let message = format!(
                "`{}` is serialized as `{bson}` here but under another name in `{}`: a \
                 projection asks the server for the projected type's names, so they must match \
                 (check the two structs' `rename` / `rename_all`)",
                f.rust_name,
                crate::errors::type_string(&of)
            );
            let same_name = crate::errors::fail_with(
                quote!(if #p::str_eq(#field.as_str(), #bson) {
                    ::core::option::Option::None
                } else {
                    ::core::option::Option::Some(#message)
                }),
                span,
                span,
            );
            // A field missing from `of` is E0609 at the field; another type is E0308 there.
            let (ty_lo, _) = crate::errors::span_range(ty);
            let p_ty = crate::errors::respan_all(p.clone(), ty_lo);
            let expected = quote::quote_spanned!(ty_lo=> #p_ty::FieldName<#ty>);
            quote::quote_spanned! {span=>
                const _: () = {
                    let #bound = #field;
                    let _: #expected = #bound;
                };
                #same_name
            }
        });
        out.extend(quote! {
            #(#checks)*

            #[automatically_derived]
            impl #p::Projection<#of> for #ident {}
        });
    }
    out
}
