//! The code `#[derive(Measurement)]` writes: the series spec, the schema and the impls.

use super::*;

/// The `ModelSchema` field entries (no annotations).
fn field_schemas(model: &Model<'_>) -> Vec<TokenStream> {
    let krate = &model.krate;
    let p = quote!(#krate::__private);
    model
        .fields
        .iter()
        .filter(|f| f.serialized)
        .map(|f| schema::field_schema(f, &p, std::iter::empty()))
        .collect()
}

fn index_spec(p: &TokenStream, keys: &[String], ttl: Option<u64>) -> TokenStream {
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    crate::index::plain_spec(p, &keys, None, false, ttl)
}

pub(super) fn expand(model: &Model<'_>, b: &Bucket) -> TokenStream {
    let ident = model.ident;
    let krate = &model.krate;
    let p = quote!(#krate::__private);
    let collection = &b.collection;
    let bson = |i: &Ident| {
        model
            .field(&ast::unraw(i))
            .map_or_else(|| ast::unraw(i), |f| f.bson_name.clone())
    };
    let key_names: Vec<String> = b.keys.iter().map(bson).collect();
    let time_name = bson(&b.time);
    let mut checks = Vec::new();
    let summaries: Vec<TokenStream> = b
        .summaries
        .iter()
        .map(|(field, [min, max, sum])| {
            let owner = Ident::new(&ident.to_string(), field.span());
            let message = format!(
            "`{f}` cannot be summarised: `summary({f}(min, max, sum))` needs a numeric field; use \
             i32, i64, u32, f32 or f64 (or an Option of one)",
            f = ast::unraw(field)
        );
            let (name, check) = crate::errors::checked_name(
                &p,
                quote_spanned!(field.span()=> #owner::FIELDS.#field),
                "numeric",
                &message,
                field.span(),
            );
            checks.push(check);
            quote!(#p::SummarySpec { field: #name, min: #min, max: #max, sum: #sum })
        })
        .collect();
    let expire = opt_u64(b.expire_after);
    let values: Vec<String> = value_fields(model, &b.keys, Some(&b.time))
        .into_iter()
        .map(|f| f.bson_name.clone())
        .collect();
    let keyed = matches!(b.layout, Layout::Rollup | Layout::Slots { .. });
    let (storage, indexes) = if keyed {
        let span = b.span.unwrap_or(1);
        let mut key_time = key_names.clone();
        key_time.push(time_name.clone());
        let keys: Vec<&str> = key_time.iter().map(String::as_str).collect();
        let mut indexes = vec![crate::index::plain_spec(&p, &keys, None, true, None)];
        if let Some(secs) = b.expire_after {
            // The time is the window's start: expire `expire_after` after the window closes.
            let ttl = secs.saturating_add(span).min(i32::MAX as u64);
            indexes.push(index_spec(&p, std::slice::from_ref(&time_name), Some(ttl)));
        }
        let storage = match b.layout {
            Layout::Slots { slot, nest } => {
                let nest = opt_u64(nest);
                quote!(#p::Storage::Slots { span_seconds: #span, slot_seconds: #slot, nest_seconds: #nest })
            }
            _ => quote!(#p::Storage::Rollup { span_seconds: #span }),
        };
        (storage, indexes)
    } else if b.native {
        let granularity = match b.granularity {
            Some(g) => {
                let g = Ident::new(g, Span::call_site());
                quote!(::core::option::Option::Some(#p::Granularity::#g))
            }
            None => quote!(::core::option::Option::None),
        };
        let span = opt_u64(b.span);
        let mut meta_time = key_names.clone();
        meta_time.push(time_name.clone());
        (
            quote!(#p::Storage::Native { granularity: #granularity, span_seconds: #span }),
            vec![index_spec(&p, &meta_time, None)],
        )
    } else {
        let max_count = b.max_count;
        let span = b.span.unwrap_or(1);
        let mut key_start = key_names.clone();
        key_start.push("start".to_owned());
        let mut indexes = vec![index_spec(&p, &key_start, None)];
        if let Some(secs) = b.expire_after {
            indexes.push(index_spec(&p, &["end".to_owned()], Some(secs)));
        }
        (
            quote!(#p::Storage::Buckets { max_count: #max_count, span_seconds: #span }),
            indexes,
        )
    };
    let key_types: Vec<&syn::Type> = b
        .keys
        .iter()
        .filter_map(|k| model.field(&ast::unraw(k)).map(|f| f.ty))
        .collect();
    let key_type = match key_types.as_slice() {
        [one] => quote!(#one),
        many => quote!((#(#many),*)),
    };
    let time = &b.time;
    let time_fn = quote_spanned!(time.span()=>
        fn time(&self) -> #p::bson::DateTime {
            self.#time
        }
    );
    let keeps = (b.layout != Layout::Rollup).then(|| {
        quote! {
            #[automatically_derived]
            impl #p::KeepsMeasurements for #ident {}
        }
    });
    let field_names = field_names(model, &[]);
    let field_schemas = field_schemas(model);
    let schema = schema::schema_static(
        model,
        schema::SchemaItems {
            collection,
            fields: &field_schemas,
            indexes: &indexes,
            shard_key: None,
            patterns: &[quote!(&__SERIES)],
            // A series' documents are buckets, which no `find` pages through.
            orders: &[],
            validated: true,
        },
    );
    quote! {
        const _: () = {
            #field_names

            static __SERIES: #p::SeriesSpec = #p::SeriesSpec::from_parts(#p::SeriesParts {
                collection: #collection,
                keys: &[#(#key_names),*],
                time: #time_name,
                summaries: &[#(#summaries),*],
                values: &[#(#values),*],
                expire_after_seconds: #expire,
                storage: #storage,
            });
            #(#checks)*

            #schema

            #[automatically_derived]
            impl #p::Measurement for #ident {
                type Key = #key_type;
                const SCHEMA: &'static #p::ModelSchema = &__SCHEMA;
                const SERIES: &'static #p::SeriesSpec = &__SERIES;
                #time_fn
            }
            #keeps

            #p::inventory::submit! {
                #p::Registration { schema: &__SCHEMA, module: ::core::module_path!() }
            }
        };
    }
}

/// Stubs after an error: the field names and an unregistered `Measurement` impl.
pub(super) fn fallback(model: &Model<'_>) -> TokenStream {
    let ident = model.ident;
    let krate = &model.krate;
    let p = quote!(#krate::__private);
    let field_names = field_names(model, &[]);
    let schema = schema::empty_schema(model);
    quote! {
        const _: () = {
            #field_names

            static __SERIES: #p::SeriesSpec = #p::SeriesSpec::from_parts(#p::SeriesParts {
                collection: "",
                keys: &[],
                time: "",
                summaries: &[],
                values: &[],
                expire_after_seconds: ::core::option::Option::None,
                storage: #p::Storage::Buckets { max_count: 1, span_seconds: 1 },
            });

            #schema

            #[automatically_derived]
            impl #p::Measurement for #ident {
                type Key = ();
                const SCHEMA: &'static #p::ModelSchema = &__SCHEMA;
                const SERIES: &'static #p::SeriesSpec = &__SERIES;
                fn time(&self) -> #p::bson::DateTime {
                    #p::bson::DateTime::MIN
                }
            }

            #[automatically_derived]
            impl #p::KeepsMeasurements for #ident {}
        };
    }
}
