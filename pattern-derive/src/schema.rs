//! What both derives generate for every model, and the [`Pattern`] trait through which each
//! pattern adds its part: the typed field names, the field schemas, the `static` schema with its
//! pattern list, and the choice between the real output and stubs.
//!
//! The layers of this crate, bottom up: `ast` and `errors` (the input, serde's names, error
//! accumulation); `index` (paths and index specifications); this module; one module per pattern;
//! `model` and `bucket` (the two derives); `lib` (the entry points).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::DeriveInput;

use crate::ast::{Field, Model, Unsupported};
use crate::errors::Errors;

/// What one pattern adds to a `#[derive(Model)]`, once its attributes are read and checked.
///
/// A pattern module provides a [`PatternDef`] whose `model` function reads the pattern's
/// attributes (recording every mistake in `errors`) and returns this; `model.rs` lists the
/// `PatternDef`s, one line each, and asks each pattern for its part of the output.
pub(crate) trait Pattern {
    /// Items outside the derive's `const _` block (types other code names, like an extended
    /// reference type). Generated with the stubs too, so uses of them do not cascade.
    fn public_items(&self, _input: &DeriveInput, _model: &Model<'_>) -> TokenStream {
        TokenStream::new()
    }

    /// The schema annotations (`Annotation` expressions) of one stored field.
    fn annotations(&self, _field: &Field<'_>, _p: &TokenStream) -> Vec<TokenStream> {
        Vec::new()
    }

    /// Statics, impls and compile-time checks inside the `const _` block, when the model has no
    /// error. The pattern's specs are `static`s declared here.
    fn items(&self, model: &Model<'_>) -> TokenStream;

    /// The pattern's entries of the schema's `patterns` list: `&'static` expressions of types
    /// implementing the runtime's `PatternSpec` (the statics `items` declares).
    fn specs(&self) -> Vec<TokenStream>;

    /// Stubs inside the `const _` block when the model has errors: what other code may name.
    fn stubs(&self, _model: &Model<'_>) -> TokenStream {
        TokenStream::new()
    }

    /// The kind (a type of the runtime's `query::kept`) of a field this pattern keeps: its
    /// typed field name then has no setter in a typed update.
    fn kept(&self, _field: &Field<'_>) -> Option<&'static str> {
        None
    }

    /// Whether `field` leads to a handle of this pattern (`products.subset(FIELDS.field)`): its
    /// typed name's kind is then `Handled<K, N>`, `N` its place in the model, and the pattern's
    /// `items` implement the runtime's trait for it ([`Model::field_handle`]).
    fn handle(&self, _field: &Field<'_>) -> bool {
        false
    }

    /// The keys (BSON paths, `1` or `-1`) of each index this pattern declares on the model's
    /// own collection, as its spec declares them: the orders a keyset page may follow (see
    /// [`crate::keyset`]).
    fn own_indexes(&self) -> Vec<Vec<(String, i32)>> {
        Vec::new()
    }

    /// How the model's own documents are written, when this pattern decides it (the runtime's
    /// `Revised` for `#[versioned]`): the `Model` impl's `Writes`. `None`: `Plain`.
    fn writes(&self) -> Option<&'static str> {
        None
    }
}

/// A pattern's entry points: what it reads on a `#[derive(Model)]`, and what it adds to a
/// `#[derive(Fields)]` (the structs nested in models), if anything.
pub(crate) struct PatternDef {
    /// Reads and checks the pattern's attributes on a model.
    pub model: fn(&DeriveInput, &Model<'_>, &mut Errors) -> Box<dyn Pattern>,
    /// Checks and items for a `#[derive(Fields)]` struct.
    pub fields: Option<fn(&DeriveInput, &Model<'_>, &mut Errors) -> TokenStream>,
}

/// What `parse` makes of each field of the model: the fields a per-field pattern carries.
pub(crate) fn each_field<'a, T>(
    model: &'a Model<'a>,
    errors: &mut Errors,
    parse: fn(&Field<'a>, &Model<'a>, &mut Errors) -> Option<T>,
) -> Vec<T> {
    model
        .fields
        .iter()
        .filter_map(|f| parse(f, model, errors))
        .collect()
}

/// An ascending key of [`plain_index`], `path` an expression of its path.
pub(crate) fn ascending(p: &TokenStream, path: impl quote::ToTokens) -> TokenStream {
    quote!(#p::IndexKey { path: #path, kind: #p::IndexKind::Ascending })
}

/// An index the pattern needs, as generated code builds it: `keys` (`IndexKey` expressions),
/// no options but `unique`.
pub(crate) fn plain_index(
    p: &TokenStream,
    keys: &[TokenStream],
    name: impl quote::ToTokens,
    unique: bool,
) -> TokenStream {
    quote! {
        #p::IndexSpec::from_parts(#p::IndexParts {
            keys: &[#(#keys),*],
            name: #name,
            unique: #unique,
            sparse: false,
            hidden: false,
            expire_after_seconds: ::core::option::Option::None,
            collation: ::core::option::Option::None,
            partial: &[],
        })
    }
}

/// `&STATIC` for each of a pattern's spec statics: its entries of the schema's `patterns` list.
pub(crate) fn spec_refs(statics: impl Iterator<Item = syn::Ident>) -> Vec<TokenStream> {
    statics.map(|s| quote!(&#s)).collect()
}

/// What a model's schema lists, beside its name and group: see [`schema_static`].
pub(crate) struct SchemaItems<'a> {
    pub collection: &'a str,
    /// `FieldSchema` expressions.
    pub fields: &'a [TokenStream],
    /// `IndexSpec` expressions.
    pub indexes: &'a [TokenStream],
    /// A `ShardKey` expression.
    pub shard_key: Option<TokenStream>,
    /// `&'static` expressions of the pattern specs.
    pub patterns: &'a [TokenStream],
    /// The orders compiled into keyset impls ([`crate::keyset::orders`]).
    pub orders: &'a [Vec<(String, i32)>],
    /// Whether the model has a stored shape (its validator's).
    pub validated: bool,
}

/// The `static __SCHEMA` of a model: its fields, indexes, shard key and pattern specs, and the group
/// `#[model(group = "...")]` names.
pub(crate) fn schema_static(model: &Model<'_>, items: SchemaItems<'_>) -> TokenStream {
    let SchemaItems {
        collection,
        fields,
        indexes,
        shard_key,
        patterns,
        orders,
        validated,
    } = items;
    let orders = crate::keyset::schema_orders(orders);
    let krate = &model.krate;
    let p = quote!(#krate::__private);
    let name = model.ident.to_string();
    let group = match &model.group {
        Some(g) => quote!(::core::option::Option::Some(#g)),
        None => quote!(::core::option::Option::None),
    };
    let shard_key = match shard_key {
        Some(k) => quote!(::core::option::Option::Some(&#k)),
        None => quote!(::core::option::Option::None),
    };
    let ident = model.ident;
    let shape = if validated {
        quote!(::core::option::Option::Some(<#ident as #p::BsonShape>::bson_shape))
    } else {
        quote!(::core::option::Option::None)
    };
    quote! {
        static __SCHEMA: #p::ModelSchema = #p::ModelSchema::from_parts(#p::SchemaParts {
            name: #name,
            collection: #collection,
            group: #group,
            fields: &[#(#fields),*],
            indexes: &[#(#indexes),*],
            shard_key: #shard_key,
            patterns: &[#(#patterns),*],
            orders: #orders,
            shape: #shape,
        });
    }
}

/// The schema of a stub: the model's name, nothing else.
pub(crate) fn empty_schema(model: &Model<'_>) -> TokenStream {
    schema_static(
        model,
        SchemaItems {
            collection: "",
            fields: &[],
            indexes: &[],
            shard_key: None,
            patterns: &[],
            orders: &[],
            validated: false,
        },
    )
}

/// The derive's output for each way reading the input can end: `ok` when all is well, the errors
/// and `stubs` when the model was read but has mistakes, the errors and the field names when
/// serde's own attributes are wrong (serde reports those), the errors alone when the input's
/// shape is unsupported.
pub(crate) fn output(
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
            out.extend(fields_only(input));
            out
        }
        (Err(Unsupported::Shape), result) => result
            .err()
            .map(|e| e.to_compile_error())
            .unwrap_or_default(),
    }
}

/// The `Model` impl's `Writes`: the one a pattern decides (`#[versioned]`), or `Plain`.
pub(crate) fn writes(patterns: &[Box<dyn Pattern>], p: &TokenStream) -> TokenStream {
    let name = patterns
        .iter()
        .find_map(|pat| pat.writes())
        .unwrap_or("Plain");
    let ident = syn::Ident::new(name, proc_macro2::Span::call_site());
    quote!(#p::#ident)
}

/// `<Model>Fields` (one `FieldName` per stored field), the `Model::FIELDS` constant and the
/// model's validator shape.
pub(crate) fn field_names(model: &Model<'_>, patterns: &[Box<dyn Pattern>]) -> TokenStream {
    field_names_of(model, patterns, model.ident)
}

/// [`field_names`], the names being `root`'s: a polymorphic model's common fields are the enum's.
pub(crate) fn field_names_of(
    model: &Model<'_>,
    patterns: &[Box<dyn Pattern>],
    root: &syn::Ident,
) -> TokenStream {
    let ident = model.ident;
    let krate = &model.krate;
    let stored: Vec<_> = model.fields.iter().filter(|f| f.serialized).collect();
    let kinds = |f: &Field<'_>| {
        // Who writes the field: a custom serializer takes no typed value, `_id` and what a
        // pattern keeps have no typed setter.
        let kind = if f.custom_serializer {
            Some("Custom")
        } else if f.bson_name == "_id" {
            Some("IdField")
        } else {
            patterns.iter().find_map(|p| p.kept(f))
        };
        let (doc, kind) = match kind {
            Some(k) => {
                let k_ident = format_ident!("{}", k);
                (
                    format!(
                        "`{}`, kept: [`query::kept::{k}`]({krate}::query::kept::{k})",
                        f.bson_name,
                        krate = quote!(#krate).to_string().replace(' ', "")
                    ),
                    Some(quote!(#krate::__private::kept::#k_ident)),
                )
            }
            None => (format!("`{}`", f.bson_name), None),
        };
        // A field that leads to a pattern's handle carries its place in the model.
        let kind = if patterns.iter().any(|p| p.handle(f)) {
            let index = proc_macro2::Literal::usize_unsuffixed(model.field_index(f.ident));
            let inner = kind.unwrap_or_else(|| quote!(#krate::__private::Free));
            quote!(#krate::__private::Handled<#inner, #index>)
        } else {
            kind.unwrap_or_else(|| quote!(#krate::__private::Free))
        };
        (doc, kind)
    };
    let shape = shape_impl(model.ident, &model.krate, &stored);
    let names = names_items(ident, root, krate, &stored, kinds);
    quote! {
        #shape
        #names
    }
}

/// `<ident>Fields`, `ident::FIELDS` and the `Fields` and `Nests` impls of struct `ident` (a model
/// or a type generated from a model's fields) with `stored` fields, names of model `root`;
/// `kinds` gives each field's doc line and kind.
pub(crate) fn names_items(
    ident: &syn::Ident,
    root: &syn::Ident,
    krate: &syn::Path,
    stored: &[&Field<'_>],
    kinds: impl Fn(&Field<'_>) -> (String, TokenStream),
) -> TokenStream {
    let fields_ident = format_ident!("{}Fields", ident);
    // Each name's tag is its place among the stored fields: what a typed sort's keys hold, and
    // what `keyset::served_impls` names.
    let decls = stored.iter().enumerate().map(|(place, f)| {
        let id = f.ident;
        let ty = f.ty;
        let (doc, kind) = kinds(f);
        let place = proc_macro2::Literal::usize_unsuffixed(place);
        quote!(#[doc = #doc] pub #id: #krate::__private::FieldName<#ty, #kind, #root, #place>)
    });
    let values = stored.iter().map(|f| {
        let id = f.ident;
        let name = &f.bson_name;
        quote!(#id: #krate::__private::FieldName::new(#name))
    });
    let keys: Vec<&String> = stored.iter().map(|f| &f.bson_name).collect();
    let rust_names = stored.iter().map(|f| &f.rust_name);
    let approximate: Vec<&String> = stored
        .iter()
        .filter(|f| f.has(crate::attr::Attr::Approximate))
        .map(|f| &f.bson_name)
        .collect();
    let struct_doc = format!("The serialized field names of [`{ident}`].");
    quote! {
        #[doc = #struct_doc]
        #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
        #[allow(dead_code)]
        pub struct #fields_ident { #(#decls,)* }

        // Each stored field's Rust name with its serialized name, in declaration order: how a
        // generated check looks up a field that may be missing, with a message of its own
        // rather than rustc's "no field on type `..Fields`" (a subset's sort fields).
        #[automatically_derived]
        #[allow(dead_code)]
        impl #fields_ident {
            #[doc(hidden)]
            pub const fn __names(&self) -> &'static [(&'static str, &'static str)] {
                &[#((#rust_names, #keys)),*]
            }
        }

        #[automatically_derived]
        impl #ident {
            /// The serialized (BSON) name of every stored field, for filters and updates.
            pub const FIELDS: #fields_ident = #fields_ident { #(#values,)* };
        }

        #[automatically_derived]
        impl #krate::__private::Fields for #ident {
            type Names = #fields_ident;
            const FIELDS: #fields_ident = #ident::FIELDS;
            const KEYS: &'static [&'static str] = &[#(#keys),*];
            const APPROXIMATE: &'static [&'static str] = &[#(#approximate),*];
        }

        #[automatically_derived]
        #[diagnostic::do_not_recommend]
        impl #krate::__private::Nests for #ident {
            type Inner = #ident;
            type Step = #krate::__private::Direct;
        }
    }
}

/// The `BsonShape` of struct `ident` (a model, or a type the derive generates from a model's
/// fields: an extended reference): an object of its `stored` fields, each with its type's shape
/// when it has one (asked through autoref: a type without one leaves the field unchecked), a
/// field with a custom serializer left unchecked.
pub(crate) fn shape_impl(
    ident: &syn::Ident,
    krate: &syn::Path,
    stored: &[&Field<'_>],
) -> TokenStream {
    let p = quote!(#krate::__private);
    let properties = stored.iter().map(|f| {
        let name = &f.bson_name;
        let ty = f.ty;
        let omittable = f.omittable;
        let optional = crate::types::option_inner(ty).is_some();
        let shape = match crate::validate::shape(&f.validate, optional, &p) {
            Some(declared) => declared,
            None if f.custom_serializer => quote!(::core::option::Option::None),
            None => shape_of(ty, &p),
        };
        quote!(#p::property(#name, #shape, #omittable))
    });
    quote! {
        #[automatically_derived]
        impl #p::BsonShape for #ident {
            fn bson_shape() -> #p::Shape {
                #[allow(unused_imports)]
                use #p::{HasShape as _, NoShape as _};
                #p::object_shape(|| ::std::vec![#(#properties),*])
            }
        }
    }
}

/// The `Option<Shape>` expression of a field of type `ty`: an `Option` or a collection of the
/// standard library by its syntax (so that a collection of a type without a shape is still
/// known to be an array, of anything), any other type through the autoref probe.
fn shape_of(ty: &syn::Type, p: &TokenStream) -> TokenStream {
    let any = |inner: &syn::Type| {
        let inner = shape_of(inner, p);
        quote!(#inner.unwrap_or(#p::Shape::Any))
    };
    match ty {
        syn::Type::Array(a) => {
            let items = any(&a.elem);
            quote!(::core::option::Option::Some(#p::Shape::Array(::std::boxed::Box::new(#items))))
        }
        syn::Type::Path(tp) if tp.qself.is_none() => {
            let Some(last) = tp.path.segments.last() else {
                return quote!((&&#p::ShapeProbe::<#ty>::NEW).shape_of());
            };
            let inner = match &last.arguments {
                syn::PathArguments::AngleBracketed(args) if args.args.len() == 1 => {
                    match args.args.first() {
                        Some(syn::GenericArgument::Type(t)) => Some(t),
                        _ => None,
                    }
                }
                _ => None,
            };
            let name = last.ident.to_string();
            match (name.as_str(), inner) {
                ("Option", Some(inner)) => {
                    let inner = any(inner);
                    quote!(::core::option::Option::Some(#inner.nullable()))
                }
                ("Vec" | "VecDeque" | "HashSet" | "BTreeSet", Some(inner)) => {
                    let items = any(inner);
                    quote!(::core::option::Option::Some(#p::Shape::Array(::std::boxed::Box::new(#items))))
                }
                // Known to have a shape: no probe to resolve.
                _ if crate::types::is_shaped_scalar(ty) => {
                    quote!(::core::option::Option::Some(<#ty as #p::BsonShape>::bson_shape()))
                }
                _ => quote!((&&#p::ShapeProbe::<#ty>::NEW).shape_of()),
            }
        }
        _ => quote!((&&#p::ShapeProbe::<#ty>::NEW).shape_of()),
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

/// Stubs when serde's attributes could not be read: field names as written, no `Model` impl
/// (it would only add an error about the `Serialize` impl serde could not generate).
fn fields_only(input: &DeriveInput) -> TokenStream {
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
            Some(Field {
                ident,
                rust_name: crate::ast::unraw(ident),
                bson_name: crate::ast::unraw(ident),
                ty: &f.ty,
                serialized: true,
                custom_serializer: false,
                omittable: false,
                validate: crate::validate::Validate::Derived,
                attrs: &f.attrs,
                carries: crate::attr::Attrs::of(&f.attrs),
            })
        })
        .collect();
    let model = Model {
        ident: &input.ident,
        krate: syn::parse_quote!(::pattern_runtime),
        collection: String::new(),
        group: None,
        fields,
        partial_fields: Vec::new(),
        described_as: None,
        carries: crate::attr::Attrs::of(&input.attrs),
    };
    let names = field_names(&model, &[]);
    quote! {
        const _: () = {
            #names
        };
    }
}

/// The attributes of a struct the derive generates for the user (an extended reference's shape,
/// an enum model's variant and common structs): `Debug`, serde through the runtime's re-export,
/// and the user's extra `derives`.
pub(crate) fn generated_type_attrs(krate: &syn::Path, derives: &[syn::Path]) -> TokenStream {
    let serde_crate = format!("{}::__private::serde", quote!(#krate)).replace(' ', "");
    quote! {
        #[derive(
            ::core::fmt::Debug,
            #krate::__private::serde::Serialize,
            #krate::__private::serde::Deserialize,
            #(#derives),*
        )]
        #[serde(crate = #serde_crate)]
    }
}
