//! `#[derive(Model)]` and `#[derive(Fields)]`: read the input, let each pattern read and check its
//! attributes, and generate the `Model` impl, the schema, the typed field names and the registry
//! entry. On any error it generates stubs instead, so the user sees the real mistakes and not a
//! cascade of missing items.

use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;

use crate::ast::{self, Model};
use crate::attr::Attr;
use crate::errors::Errors;
use crate::index::{self, Index};
use crate::schema::{self, Pattern, PatternDef};
use crate::shard::{self, ShardKey};
use crate::{
    approximation, attribute, bounded, combinations, computed, extended_ref, outlier, polymorphic,
    preallocation, relation, schema_version, subset, tree, versioning,
};

/// The patterns of `#[derive(Model)]`, one line each, in the order their specs are listed in the
/// schema. Adding a pattern: a module with a `PATTERN`, a line here, and its attribute names in
/// `lib.rs`'s `proc_macro_derive` list and in `attr.rs`'s `Attr`.
const PATTERNS: &[&PatternDef] = &[
    &attribute::PATTERN,
    &subset::PATTERN,
    &computed::PATTERN,
    &approximation::PATTERN,
    &outlier::PATTERN,
    &versioning::PATTERN,
    &extended_ref::PATTERN,
    &relation::PATTERN,
    &tree::PATTERN,
    &preallocation::PATTERN,
    &bounded::PATTERN,
    &schema_version::PATTERN,
];

pub(crate) fn derive(input: &DeriveInput) -> TokenStream {
    // An enum is a polymorphic model: its own reading and output.
    if matches!(input.data, syn::Data::Enum(_)) {
        return polymorphic::derive(input);
    }
    let mut errors = Errors::default();
    let model = ast::parse(input, &mut errors);
    let (indexes, shard, patterns) = match &model {
        Ok(m) => {
            let indexes = index::collect(&input.attrs, m, &mut errors);
            let shard = shard::collect(&input.attrs, m, &indexes, &mut errors);
            combinations::check(input, m, &mut errors);
            let patterns: Vec<Box<dyn Pattern>> = PATTERNS
                .iter()
                .map(|def| (def.model)(input, m, &mut errors))
                .collect();
            (indexes, shard, patterns)
        }
        Err(_) => (Vec::new(), None, Vec::new()),
    };
    // `#[model]` on a field is a misplaced attribute.
    if let syn::Data::Struct(s) = &input.data {
        for attr in s.fields.iter().flat_map(|f| &f.attrs) {
            if Attr::Model.is(attr) {
                errors.spanned(attr, "`#[model(...)]` goes on the struct, not on a field");
            }
            if Attr::ShardKey.is(attr) {
                errors.spanned(
                    attr,
                    "`#[shard_key(...)]` goes on the struct, naming its fields: \
                     `#[shard_key(user_id)]`",
                );
            }
        }
    }
    let public = |m: &Model<'_>| -> TokenStream {
        patterns.iter().map(|p| p.public_items(input, m)).collect()
    };
    schema::output(
        input,
        model,
        errors,
        |m| {
            let mut out = public(m);
            out.extend(expand(m, &indexes, shard.as_ref(), &patterns));
            out
        },
        |m| {
            let mut out = public(m);
            out.extend(fallback(m, true, &patterns));
            out
        },
    )
}

fn expand(
    model: &Model<'_>,
    indexes: &[Index],
    shard: Option<&ShardKey>,
    patterns: &[Box<dyn Pattern>],
) -> TokenStream {
    let ident = model.ident;
    let krate = &model.krate;
    let p = quote!(#krate::__private);
    let field_names = schema::field_names(model, patterns);
    let id_type = model.id_type(&p);
    let writes = schema::writes(patterns, &p);
    let field_schemas: Vec<TokenStream> = model
        .fields
        .iter()
        .filter(|f| f.serialized)
        .map(|f| {
            let annotations = indexes
                .iter()
                .filter(|i| i.first_field == f.rust_name)
                .map(|i| {
                    let index_name = i.name_expr(&p);
                    quote!(#p::Annotation::Index { name: #index_name })
                })
                .chain(patterns.iter().flat_map(|pat| pat.annotations(f, &p)));
            schema::field_schema(f, &p, annotations)
        })
        .collect();
    let index_specs: Vec<TokenStream> = indexes.iter().map(|i| i.expand(krate)).collect();
    let specs: Vec<TokenStream> = patterns.iter().flat_map(|pat| pat.specs()).collect();
    let items = patterns.iter().map(|pat| pat.items(model));
    let index_keys: Vec<Vec<(String, i32)>> = indexes
        .iter()
        .map(Index::key_list)
        .chain(patterns.iter().flat_map(|pat| pat.own_indexes()))
        .collect();
    let orders = crate::keyset::orders(&index_keys);
    let names = crate::keyset::sort_names(model.fields.iter());
    let served = crate::keyset::served_impls(&p, ident, &names, &orders);
    let schema = schema::schema_static(
        model,
        schema::SchemaItems {
            collection: &model.collection,
            fields: &field_schemas,
            indexes: &index_specs,
            shard_key: shard.map(|k| k.expand(krate)),
            patterns: &specs,
            orders: &orders,
            validated: true,
        },
    );
    quote! {
        const _: () = {
            #field_names
            #schema
            #served

            #[automatically_derived]
            impl #p::Model for #ident {
                const SCHEMA: &'static #p::ModelSchema = &__SCHEMA;
                type Id = #id_type;
                type Writes = #writes;
            }

            #p::inventory::submit! {
                #p::Registration { schema: &__SCHEMA, module: ::core::module_path!() }
            }

            #(#items)*
        };
    }
}

/// Stubs after an error: the field names and a `Model` impl with an empty schema, unregistered,
/// and what each pattern stubs.
fn fallback(model: &Model<'_>, with_impl: bool, patterns: &[Box<dyn Pattern>]) -> TokenStream {
    let ident = model.ident;
    let krate = &model.krate;
    let p = quote!(#krate::__private);
    let field_names = schema::field_names(model, patterns);
    let model_impl = with_impl.then(|| {
        let schema = schema::empty_schema(model);
        let id_type = model.id_type(&p);
        let writes = schema::writes(patterns, &p);
        quote! {
            #schema

            #[automatically_derived]
            impl #p::Model for #ident {
                const SCHEMA: &'static #p::ModelSchema = &__SCHEMA;
                type Id = #id_type;
                type Writes = #writes;
            }
        }
    });
    let stubs = patterns.iter().map(|pat| pat.stubs(model));
    quote! {
        const _: () = {
            #field_names

            #model_impl
            #(#stubs)*
        };
    }
}

/// `#[derive(Fields)]`: the typed field names of any struct with named fields, and what each
/// pattern adds to a struct nested in models.
pub(crate) fn derive_fields(input: &DeriveInput) -> TokenStream {
    let mut errors = Errors::default();
    let model = ast::parse_as(input, &mut errors, ast::DeriveKind::Fields);
    let added: Vec<TokenStream> = match &model {
        Ok(m) => {
            let mut added: Vec<TokenStream> = PATTERNS
                .iter()
                .filter_map(|def| def.fields)
                .map(|fields| fields(input, m, &mut errors))
                .collect();
            added.push(polymorphic::projections(input, m, &mut errors));
            added
        }
        Err(_) => Vec::new(),
    };
    let names = |m: &Model<'_>| {
        let names = schema::field_names(m, &[]);
        quote! {
            const _: () = {
                #names
                #(#added)*
            };
        }
    };
    schema::output(input, model, errors, names, names)
}
