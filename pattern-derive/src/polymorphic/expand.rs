//! The code `#[derive(Model)]` writes for an enum: the kind enum, the common struct, one
//! struct per variant, the schemas and the impls; and the projections of a variant's handle.

use super::*;
use crate::attr::Attr;

pub(super) fn generate(
    poly: &Poly<'_>,
    indexes: Option<&[Index]>,
    shard: Option<&ShardKey>,
) -> TokenStream {
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
    let unversioned = crate::versioning::unversioned(ident, &p);
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
    let common_names = schema::field_names_of(&common, &[], ident);
    let variant_models: Vec<Model<'_>> = poly
        .variants
        .iter()
        .map(|v| variant_model(poly, v))
        .collect();
    let variant_names = variant_models.iter().map(|m| schema::field_names(m, &[]));
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
    let mut index_keys: Vec<Vec<(String, i32)>> = Vec::new();
    if let Some(indexes) = indexes {
        index_keys.extend(indexes.iter().map(index::Index::key_list));
        if !indexes.iter().any(|i| i.starts_with_key(tag)) {
            index_keys.push(vec![(tag.clone(), 1)]);
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
        carries: crate::attr::Attrs::of(&poly.input.attrs),
    };
    let (collection, schema_fields) = if indexes.is_some() {
        (poly.collection(), field_schemas)
    } else {
        (String::new(), Vec::new())
    };
    let shard = shard.map(|k| k.expand(&krate));
    // The enum's keyset pages follow its common fields (`Item::FIELDS`).
    let orders = crate::keyset::orders(&index_keys);
    let common_keys = crate::keyset::sort_names(common.fields.iter());
    let served = crate::keyset::served_impls(&p, ident, &common_keys, &orders);
    let schema = schema::schema_static(
        &enum_model,
        schema::SchemaItems {
            collection: &collection,
            fields: &schema_fields,
            indexes: &index_specs,
            shard_key: shard,
            patterns: &pattern_refs,
            orders: &orders,
            validated: indexes.is_some(),
        },
    );
    // The enum's stored shape: each tag value with its variant struct's shape, open to other
    // tags when a `#[serde(other)]` variant reads them.
    let tag = &poly.tag;
    let variant_shapes = poly.variants.iter().map(|v| {
        let value = &v.tag_value;
        let st = &v.struct_ident;
        quote!((#value, <#st as #p::BsonShape>::bson_shape as fn() -> #p::Shape))
    });
    let open = poly.catch_all.is_some();
    let schema = quote! {
        #pattern_statics
        #schema
        #served

        #[automatically_derived]
        impl #p::BsonShape for #ident {
            fn bson_shape() -> #p::Shape {
                #p::tagged_shape(#tag, &[#(#variant_shapes),*], #open)
            }
        }
    };
    let registration = indexes.is_some().then(|| {
        quote! {
            #p::inventory::submit! {
                #p::Registration { schema: &__SCHEMA, module: ::core::module_path!() }
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
        let handle_doc = format!(
            "The handle on the `{value}` documents of `{ident}`'s collection: every read and \
             write adds `{{{tag}: \"{value}\"}}` itself."
        );
        quote! {
            #[automatically_derived]
            impl #p::Variant for #sident {
                type Model = #ident;
                const TAG_VALUE: &'static str = #value;
            }

            #[automatically_derived]
            impl #sident {
                #[doc = #handle_doc]
                #[inline]
                pub fn collection(db: &#p::Database) -> #p::VariantCollection<#sident> {
                    #p::VariantCollection::new(db)
                }
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
        .filter(|f| f.serialized && !f.has(Attr::ExtendedRef))
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
                type Writes = #p::Plain;
                fn unreadable(
                    doc: &#p::bson::Document,
                    error: #p::bson::error::Error,
                ) -> #p::Error {
                    #p::unreadable_variant::<Self>(doc, error)
                }
            }

            #unversioned

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
    for attr in Attr::Projection.find(&input.attrs) {
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
            let expected = quote::quote_spanned!(ty_lo=> #p_ty::CheckProbe<#ty>);
            quote::quote_spanned! {span=>
                const _: () = {
                    let #bound = #field;
                    let _: #expected = #p::CheckProbe::of(#bound);
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
