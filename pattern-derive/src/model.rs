//! `#[derive(Model)]`: reads the input, checks it, and generates the `Model` impl, the schema,
//! the typed field names and the registry entry. On any error it generates stubs instead, so the
//! user sees the real mistakes and not a cascade of missing items.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::DeriveInput;

use crate::ast::{self, Model, Unsupported};
use crate::errors::Errors;
use crate::extended_ref::{self, ExtendedRefs};
use crate::index::{self, Index};
use crate::subset::{self, SubsetField};
use crate::versioning::{self, Versioning};

pub(crate) fn derive(input: &DeriveInput) -> TokenStream {
    let mut errors = Errors::default();
    let model = ast::parse(input, &mut errors);
    let indexes = match &model {
        Ok(m) => index::collect(input, m, &mut errors),
        Err(_) => Vec::new(),
    };
    let subsets = match &model {
        Ok(m) => subset::collect(m, &mut errors),
        Err(_) => Vec::new(),
    };
    let versioning = match &model {
        Ok(m) => versioning::collect(input, m, &mut errors),
        Err(_) => None,
    };
    let refs = match &model {
        Ok(m) => extended_ref::collect(input, m, &mut errors),
        Err(_) => ExtendedRefs::default(),
    };
    // `#[model]` on a field is a misplaced attribute.
    if let syn::Data::Struct(s) = &input.data {
        for attr in s.fields.iter().flat_map(|f| &f.attrs) {
            if attr.path().is_ident("model") {
                errors.spanned(attr, "`#[model(...)]` goes on the struct, not on a field");
            }
        }
    }
    output(
        input,
        model,
        errors,
        |m| {
            let mut out = refs.types(input, m);
            out.extend(expand(m, &indexes, &subsets, versioning.as_ref(), &refs));
            out
        },
        |m| {
            let mut out = refs.types(input, m);
            out.extend(fallback(m, true, &refs));
            out
        },
    )
}

/// The derive's output for each way reading the input can end: `ok` when all is well, the errors
/// and `stubs` when the model was read but has mistakes, the errors and the field names when
/// serde's own attributes are wrong (serde reports those), the errors alone when the input's
/// shape is unsupported.
fn output(
    input: &DeriveInput,
    model: Result<Model<'_>, Unsupported>,
    errors: Errors,
    ok: impl FnOnce(&Model<'_>) -> TokenStream,
    stubs: impl FnOnce(&Model<'_>) -> TokenStream,
) -> TokenStream {
    match (model, errors.into_result()) {
        (Ok(m), Ok(())) => ok(&m),
        (Ok(m), Err(e)) => {
            let mut out = e.to_compile_error();
            out.extend(stubs(&m));
            out
        }
        (Err(Unsupported::Serde), result) => {
            let mut out = result
                .err()
                .map(|e| e.to_compile_error())
                .unwrap_or_default();
            out.extend(fallback_fields_only(input));
            out
        }
        (Err(Unsupported::Shape), result) => result
            .err()
            .map(|e| e.to_compile_error())
            .unwrap_or_default(),
    }
}

/// `<Model>Fields` (one `FieldName` per stored field) and the `Model::FIELDS` constant.
pub(crate) fn field_names(model: &Model<'_>) -> TokenStream {
    let ident = model.ident;
    let krate = &model.krate;
    let fields_ident = format_ident!("{}Fields", ident);
    let stored: Vec<_> = model.fields.iter().filter(|f| f.serialized).collect();
    let decls = stored.iter().map(|f| {
        let id = f.ident;
        let ty = f.ty;
        let doc = format!("`{}`", f.bson_name);
        quote!(#[doc = #doc] pub #id: #krate::__private::FieldName<#ty>)
    });
    let values = stored.iter().map(|f| {
        let id = f.ident;
        let name = &f.bson_name;
        quote!(#id: #krate::__private::FieldName::new(#name))
    });
    let struct_doc = format!("The serialized field names of [`{ident}`].");
    quote! {
        #[doc = #struct_doc]
        #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
        #[allow(dead_code)]
        pub struct #fields_ident { #(#decls,)* }

        #[automatically_derived]
        impl #ident {
            /// The serialized (BSON) name of every stored field, for filters and updates.
            pub const FIELDS: #fields_ident = #fields_ident { #(#values,)* };
        }

        #[automatically_derived]
        impl #krate::__private::Fields for #ident {
            type Names = #fields_ident;
            const FIELDS: #fields_ident = #ident::FIELDS;
        }
    }
}

/// The `FieldSchema` expression of one stored field.
pub(crate) fn field_schema(
    f: &crate::ast::Field<'_>,
    p: &TokenStream,
    annotations: impl Iterator<Item = TokenStream>,
) -> TokenStream {
    let rust_name = &f.rust_name;
    let bson_name = &f.bson_name;
    let rust_type = crate::errors::type_string(f.ty);
    quote! {
        #p::FieldSchema::from_parts(#p::FieldParts {
            rust_name: #rust_name,
            bson_name: #bson_name,
            rust_type: #rust_type,
            annotations: &[#(#annotations),*],
        })
    }
}

fn expand(
    model: &Model<'_>,
    indexes: &[Index],
    subsets: &[SubsetField],
    versioning: Option<&Versioning>,
    refs: &ExtendedRefs,
) -> TokenStream {
    let ident = model.ident;
    let krate = &model.krate;
    let p = quote!(#krate::__private);
    let name = ident.to_string();
    let collection = &model.collection;
    let field_names = field_names(model);
    let field_schemas = model.fields.iter().filter(|f| f.serialized).map(|f| {
        let annotations = indexes
            .iter()
            .filter(|i| i.first_field == f.rust_name)
            .map(|i| {
                let index_name = &i.name;
                quote!(#p::Annotation::Index { name: #index_name })
            })
            .chain(subsets.iter().flat_map(|s| s.annotations(f, krate)))
            .chain(
                versioning
                    .filter(|v| v.is_field(f.ident))
                    .map(|_| quote!(#p::Annotation::Version)),
            )
            .chain(refs.annotation(f, &p));
        field_schema(f, &p, annotations)
    });
    let index_specs = indexes.iter().map(|i| i.expand(krate));
    let subset_specs = subsets.iter().map(|s| s.spec(model));
    let subset_items = subsets.iter().enumerate().map(|(i, s)| s.items(model, i));
    let version_spec = Versioning::spec(versioning, model);
    let version_items = versioning.map(|v| v.items(model));
    let ref_parts = refs.schema_parts();
    let ref_items = refs.items(model, true);
    let embeddings = refs.embedding_items(model);
    quote! {
        const _: () = {
            #field_names
            #embeddings

            static __SCHEMA: #p::ModelSchema = #p::ModelSchema::from_parts(#p::SchemaParts {
                name: #name,
                collection: #collection,
                fields: &[#(#field_schemas),*],
                indexes: &[#(#index_specs),*],
                subsets: &[#(#subset_specs),*],
                versioning: #version_spec,
                series: ::core::option::Option::None,
                #ref_parts
            });

            #[automatically_derived]
            impl #p::Model for #ident {
                const SCHEMA: &'static #p::ModelSchema = &__SCHEMA;
            }

            #p::inventory::submit! {
                #p::Registration { schema: &__SCHEMA }
            }

            #(#subset_items)*
            #version_items
            #ref_items
        };
    }
}

/// Stubs after an error: the field names and a `Model` impl with an empty schema, unregistered,
/// and the reference types the model declares (with the copied fields that exist).
fn fallback(model: &Model<'_>, with_impl: bool, refs: &ExtendedRefs) -> TokenStream {
    let ident = model.ident;
    let krate = &model.krate;
    let p = quote!(#krate::__private);
    let name = ident.to_string();
    let field_names = field_names(model);
    let model_impl = with_impl.then(|| {
        quote! {
            #[automatically_derived]
            impl #p::Model for #ident {
                const SCHEMA: &'static #p::ModelSchema = &#p::ModelSchema::from_parts(#p::SchemaParts {
                    name: #name,
                    collection: "",
                    fields: &[],
                    indexes: &[],
                    subsets: &[],
                    versioning: ::core::option::Option::None,
                    series: ::core::option::Option::None,
                    references: &[],
                    embeddings: &[],
                });
            }
        }
    });
    let ref_items = with_impl.then(|| refs.items(model, false));
    quote! {
        const _: () = {
            #field_names

            #model_impl
            #ref_items
        };
    }
}

/// Stubs when serde's attributes could not be read: field names as written, no `Model` impl
/// (it would only add an error about the `Serialize` impl serde could not generate).
fn fallback_fields_only(input: &DeriveInput) -> TokenStream {
    let syn::Data::Struct(s) = &input.data else {
        return TokenStream::new();
    };
    if !input.generics.params.is_empty() {
        return TokenStream::new();
    }
    let fields = s
        .fields
        .iter()
        .filter_map(|f| {
            let ident = f.ident.as_ref()?;
            Some(ast::Field {
                ident,
                rust_name: ast::unraw(ident),
                bson_name: ast::unraw(ident),
                ty: &f.ty,
                serialized: true,
                custom_serializer: false,
                attrs: &f.attrs,
            })
        })
        .collect();
    let model = Model {
        ident: &input.ident,
        krate: syn::parse_quote!(::pattern_runtime),
        collection: String::new(),
        fields,
    };
    fallback(&model, false, &ExtendedRefs::default())
}

/// `#[derive(Fields)]`: the typed field names of any struct with named fields.
pub(crate) fn derive_fields(input: &DeriveInput) -> TokenStream {
    let mut errors = Errors::default();
    let model = ast::parse_as(input, &mut errors, ast::DeriveKind::Fields);
    extended_ref::misplaced_on_fields(input, &mut errors);
    let names = |m: &Model<'_>| {
        let names = field_names(m);
        let held = extended_ref::held_refs(m);
        quote! {
            const _: () = {
                #names
                #held
            };
        }
    };
    output(input, model, errors, names, names)
}
