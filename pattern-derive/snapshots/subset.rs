// ----- #[derive(Model)] Product -----

const _: () = {
    ///The serialized field names of [`Product`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct ProductFields {
        ///`_id`
        pub id: ::pattern_runtime::__private::FieldName<String>,
        ///`name`
        pub name: ::pattern_runtime::__private::FieldName<String>,
        ///`price`
        pub price: ::pattern_runtime::__private::FieldName<f64>,
        ///`recentReviews`
        pub recent_reviews: ::pattern_runtime::__private::FieldName<Vec<ReviewExcerpt>>,
        ///`ratingCount`
        pub rating_count: ::pattern_runtime::__private::FieldName<i64>,
        ///`ratingSum`
        pub rating_sum: ::pattern_runtime::__private::FieldName<i64>,
        ///`ratingAvg`
        pub rating_avg: ::pattern_runtime::__private::FieldName<Option<f64>>,
        ///`updatedAt`
        pub updated_at: ::pattern_runtime::__private::FieldName<Option<DateTime>>,
    }
    #[automatically_derived]
    impl Product {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: ProductFields = ProductFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            name: ::pattern_runtime::__private::FieldName::new("name"),
            price: ::pattern_runtime::__private::FieldName::new("price"),
            recent_reviews: ::pattern_runtime::__private::FieldName::new(
                "recentReviews",
            ),
            rating_count: ::pattern_runtime::__private::FieldName::new("ratingCount"),
            rating_sum: ::pattern_runtime::__private::FieldName::new("ratingSum"),
            rating_avg: ::pattern_runtime::__private::FieldName::new("ratingAvg"),
            updated_at: ::pattern_runtime::__private::FieldName::new("updatedAt"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for Product {
        type Names = ProductFields;
        const FIELDS: ProductFields = Product::FIELDS;
        const KEYS: &'static [&'static str] = &[
            "_id",
            "name",
            "price",
            "recentReviews",
            "ratingCount",
            "ratingSum",
            "ratingAvg",
            "updatedAt",
        ];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for Product {
        type Inner = Product;
    }
    static __SCHEMA: ::pattern_runtime::__private::ModelSchema = ::pattern_runtime::__private::ModelSchema::from_parts(::pattern_runtime::__private::SchemaParts {
        name: "Product",
        collection: "products",
        group: ::core::option::Option::Some("subset"),
        fields: &[
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "id",
                bson_name: "_id",
                rust_type: "String",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "name",
                bson_name: "name",
                rust_type: "String",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "price",
                bson_name: "price",
                rust_type: "f64",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "recent_reviews",
                bson_name: "recentReviews",
                rust_type: "Vec<ReviewExcerpt>",
                annotations: &[
                    ::pattern_runtime::__private::Annotation::Subset {
                        full_model: "Review",
                        limit: 10u32,
                    },
                ],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "rating_count",
                bson_name: "ratingCount",
                rust_type: "i64",
                annotations: &[
                    ::pattern_runtime::__private::Annotation::Computed {
                        subset: "recentReviews",
                    },
                ],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "rating_sum",
                bson_name: "ratingSum",
                rust_type: "i64",
                annotations: &[
                    ::pattern_runtime::__private::Annotation::Computed {
                        subset: "recentReviews",
                    },
                ],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "rating_avg",
                bson_name: "ratingAvg",
                rust_type: "Option<f64>",
                annotations: &[
                    ::pattern_runtime::__private::Annotation::Computed {
                        subset: "recentReviews",
                    },
                ],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "updated_at",
                bson_name: "updatedAt",
                rust_type: "Option<DateTime>",
                annotations: &[],
            }),
        ],
        indexes: &[],
        shard_key: ::core::option::Option::None,
        patterns: &[&__SUBSET_0],
    });
    #[automatically_derived]
    impl ::pattern_runtime::__private::Model for Product {
        const SCHEMA: &'static ::pattern_runtime::__private::ModelSchema = &__SCHEMA;
        type Id = String;
    }
    ::pattern_runtime::__private::inventory::submit! {
        ::pattern_runtime::__private::Registration { schema : & __SCHEMA }
    }
    static __SUBSET_0: ::pattern_runtime::__private::SubsetSpec = ::pattern_runtime::__private::SubsetSpec::from_parts(::pattern_runtime::__private::SubsetParts {
        field: "recentReviews",
        limit: 10u32,
        sort: &[(Review::FIELDS.created_at.as_str(), -1i32)],
        parent_key: Review::FIELDS.product_id.as_str(),
        full_collection: || {
            <Review as ::pattern_runtime::__private::Model>::SCHEMA.collection()
        },
        full_model: "Review",
        rebuild: || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{ProbeNoRebuild as _, ProbeRebuild as _};
            (&&::pattern_runtime::__private::RebuildProbe::<
                Product,
                Review,
                ReviewExcerpt,
            >::new())
                .rebuild()
        },
        full_index: ::pattern_runtime::__private::IndexSpec::from_parts(::pattern_runtime::__private::IndexParts {
            keys: &[
                ::pattern_runtime::__private::IndexKey {
                    path: Review::FIELDS.product_id.as_str(),
                    kind: ::pattern_runtime::__private::IndexKind::Ascending,
                },
                ::pattern_runtime::__private::IndexKey {
                    path: Review::FIELDS.created_at.as_str(),
                    kind: ::pattern_runtime::__private::IndexKind::Descending,
                },
            ],
            name: "subset_products_recentReviews",
            unique: false,
            sparse: false,
            hidden: false,
            expire_after_seconds: ::core::option::Option::None,
            collation: ::core::option::Option::None,
            partial: &[],
        }),
        computed: &[
            ::pattern_runtime::__private::Computed {
                field: Product::FIELDS.rating_count.as_str(),
                kind: ::pattern_runtime::__private::ComputedKind::Count,
            },
            ::pattern_runtime::__private::Computed {
                field: Product::FIELDS.rating_sum.as_str(),
                kind: ::pattern_runtime::__private::ComputedKind::Sum {
                    item_field: Review::FIELDS.stars.as_str(),
                },
            },
            ::pattern_runtime::__private::Computed {
                field: Product::FIELDS.rating_avg.as_str(),
                kind: ::pattern_runtime::__private::ComputedKind::Avg {
                    item_field: Review::FIELDS.stars.as_str(),
                    sum_field: "ratingSum",
                    count_field: "ratingCount",
                },
            },
        ],
    });
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::unless(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeBool as _, ProbeFloat as _, ProbeInteger as _, ProbeNumeric as _,
                ProbeOptional as _, ProbeOtherCheck as _,
            };
            (&&::pattern_runtime::__private::CheckProbe::of(
                Product::FIELDS.rating_count,
            ))
                .numeric()
        },
        "`rating_count` is not a number: a computed count or sum is kept in a numeric field; use i32, i64, u32, f32 or f64 (or an Option of one)",
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::unless(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeBool as _, ProbeFloat as _, ProbeInteger as _, ProbeNumeric as _,
                ProbeOptional as _, ProbeOtherCheck as _,
            };
            (&&::pattern_runtime::__private::CheckProbe::of(Product::FIELDS.rating_sum))
                .numeric()
        },
        "`rating_sum` is not a number: a computed count or sum is kept in a numeric field; use i32, i64, u32, f32 or f64 (or an Option of one)",
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::unless(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeBool as _, ProbeFloat as _, ProbeInteger as _, ProbeNumeric as _,
                ProbeOptional as _, ProbeOtherCheck as _,
            };
            (&&::pattern_runtime::__private::CheckProbe::of(Review::FIELDS.stars))
                .numeric()
        },
        "`stars` of `Review` is not a number: a computed sum or average reads a numeric field; use i32, i64, u32, f32 or f64 (or an Option of one)",
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::unless(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeBool as _, ProbeFloat as _, ProbeInteger as _, ProbeNumeric as _,
                ProbeOptional as _, ProbeOtherCheck as _,
            };
            (&&::pattern_runtime::__private::CheckProbe::of(Product::FIELDS.rating_avg))
                .float()
        },
        "`rating_avg` cannot hold an average: use f64 or Option<f64> (null while there are no items)",
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::unless(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeBool as _, ProbeFloat as _, ProbeInteger as _, ProbeNumeric as _,
                ProbeOptional as _, ProbeOtherCheck as _,
            };
            (&&::pattern_runtime::__private::CheckProbe::of(Review::FIELDS.stars))
                .numeric()
        },
        "`stars` of `Review` is not a number: a computed sum or average reads a numeric field; use i32, i64, u32, f32 or f64 (or an Option of one)",
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = {
        #[allow(unused_imports)]
        use ::pattern_runtime::__private::{ProbeUnversioned as _, ProbeVersioned as _};
        ::pattern_runtime::__private::unless(
            || {
                (&&::pattern_runtime::__private::ModelProbe::<Review>::new())
                    .unversioned()
            },
            "`Review` is `#[versioned]`: it cannot be the full items of a `#[subset]` yet, whose `push` and `remove` write them without a new version or a copy of the old one. Keep the items in a model without `#[versioned]`, or embed a subset of them by hand through the versioned model's own writes",
        )
    } {
        ::core::panic!("{}", __message)
    };
    #[automatically_derived]
    impl Product {
        ///The operations of the `recent_reviews` subset: the first 10 `Review` items, embedded.
        pub fn recent_reviews_subset(
            db: &::pattern_runtime::__private::Database,
        ) -> ::pattern_runtime::__private::Subset<Product, Review, ReviewExcerpt> {
            ::pattern_runtime::__private::Subset::new(db, &__SUBSET_0)
        }
    }
    const _: fn() = || {
        let _ = <ReviewExcerpt as ::core::convert::From<&Review>>::from;
    };
    const _: () = {
        trait __Beside<N> {
            type Names;
        }
        impl<N, T: ?::core::marker::Sized> __Beside<N>
        for ::pattern_runtime::__private::FieldName<T> {
            type Names = N;
        }
        const fn __embedded<F: __Beside<N, Names = N>, N>(
            _full: &F,
            names: N,
        ) -> F::Names {
            names
        }
        const _: () = {
            const __EMBEDDED: &str = __embedded(
                    &Review::FIELDS.created_at,
                    <ReviewExcerpt as ::pattern_runtime::__private::Fields>::FIELDS,
                )
                .created_at
                .as_str();
            const __FULL: &str = Review::FIELDS.created_at.as_str();
            const __PARTS: &[&str] = &[
                "`ReviewExcerpt` serializes `created_at` as `",
                __EMBEDDED,
                "` but `Review` as `",
                __FULL,
                "`: the subset's $sort runs on the embedded items and the index on the full items, so the names must match",
            ];
            const __LEN: usize = ::pattern_runtime::__private::concat_len(__PARTS);
            const __MESSAGE: [u8; __LEN] = ::pattern_runtime::__private::concat_bytes::<
                __LEN,
            >(__PARTS);
            if !::pattern_runtime::__private::str_eq(__EMBEDDED, __FULL) {
                ::core::panic!("{}", ::pattern_runtime::__private::utf8(& __MESSAGE))
            }
        };
    };
    #[automatically_derived]
    impl ::pattern_runtime::__private::Unversioned for Product {}
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::no_mode_error(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<String>::new()).held()
        },
        "this field holds extended references (`String`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`String`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::items_without_mode(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<String>::new()).items()
        },
        false,
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::no_mode_error(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<String>::new()).held()
        },
        "this field holds extended references (`String`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`String`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::items_without_mode(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<String>::new()).items()
        },
        false,
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::no_mode_error(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<f64>::new()).held()
        },
        "this field holds extended references (`f64`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`f64`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::items_without_mode(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<f64>::new()).items()
        },
        false,
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::no_mode_error(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<Vec<ReviewExcerpt>>::new())
                .held()
        },
        "this field holds extended references (`Vec<ReviewExcerpt>`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`Vec<ReviewExcerpt>`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::items_without_mode(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<ReviewExcerpt>::new()).items()
        },
        true,
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::no_mode_error(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<i64>::new()).held()
        },
        "this field holds extended references (`i64`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`i64`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::items_without_mode(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<i64>::new()).items()
        },
        false,
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::no_mode_error(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<i64>::new()).held()
        },
        "this field holds extended references (`i64`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`i64`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::items_without_mode(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<i64>::new()).items()
        },
        false,
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::no_mode_error(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<Option<f64>>::new()).held()
        },
        "this field holds extended references (`Option<f64>`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`Option<f64>`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::items_without_mode(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<f64>::new()).items()
        },
        false,
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::no_mode_error(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<Option<DateTime>>::new()).held()
        },
        "this field holds extended references (`Option<DateTime>`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`Option<DateTime>`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::items_without_mode(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<DateTime>::new()).items()
        },
        false,
    ) {
        ::core::panic!("{}", __message)
    };
    #[automatically_derived]
    impl ::pattern_runtime::__private::Identified for Product {
        fn id(&self) -> &String {
            &self.id
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Relations for Product {
        const RELATIONS: &'static [::pattern_runtime::__private::RelationSide] = &[];
    }
};

// ----- #[derive(Model)] Review -----

const _: () = {
    ///The serialized field names of [`Review`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct ReviewFields {
        ///`_id`
        pub id: ::pattern_runtime::__private::FieldName<String>,
        ///`productId`
        pub product_id: ::pattern_runtime::__private::FieldName<String>,
        ///`userId`
        pub user_id: ::pattern_runtime::__private::FieldName<String>,
        ///`stars`
        pub stars: ::pattern_runtime::__private::FieldName<i32>,
        ///`content`
        pub content: ::pattern_runtime::__private::FieldName<String>,
        ///`createdAt`
        pub created_at: ::pattern_runtime::__private::FieldName<DateTime>,
    }
    #[automatically_derived]
    impl Review {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: ReviewFields = ReviewFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            product_id: ::pattern_runtime::__private::FieldName::new("productId"),
            user_id: ::pattern_runtime::__private::FieldName::new("userId"),
            stars: ::pattern_runtime::__private::FieldName::new("stars"),
            content: ::pattern_runtime::__private::FieldName::new("content"),
            created_at: ::pattern_runtime::__private::FieldName::new("createdAt"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for Review {
        type Names = ReviewFields;
        const FIELDS: ReviewFields = Review::FIELDS;
        const KEYS: &'static [&'static str] = &[
            "_id",
            "productId",
            "userId",
            "stars",
            "content",
            "createdAt",
        ];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for Review {
        type Inner = Review;
    }
    static __SCHEMA: ::pattern_runtime::__private::ModelSchema = ::pattern_runtime::__private::ModelSchema::from_parts(::pattern_runtime::__private::SchemaParts {
        name: "Review",
        collection: "product_reviews",
        group: ::core::option::Option::Some("subset"),
        fields: &[
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "id",
                bson_name: "_id",
                rust_type: "String",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "product_id",
                bson_name: "productId",
                rust_type: "String",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "user_id",
                bson_name: "userId",
                rust_type: "String",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "stars",
                bson_name: "stars",
                rust_type: "i32",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "content",
                bson_name: "content",
                rust_type: "String",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "created_at",
                bson_name: "createdAt",
                rust_type: "DateTime",
                annotations: &[],
            }),
        ],
        indexes: &[],
        shard_key: ::core::option::Option::None,
        patterns: &[],
    });
    #[automatically_derived]
    impl ::pattern_runtime::__private::Model for Review {
        const SCHEMA: &'static ::pattern_runtime::__private::ModelSchema = &__SCHEMA;
        type Id = String;
    }
    ::pattern_runtime::__private::inventory::submit! {
        ::pattern_runtime::__private::Registration { schema : & __SCHEMA }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Unversioned for Review {}
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::no_mode_error(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<String>::new()).held()
        },
        "this field holds extended references (`String`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`String`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::items_without_mode(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<String>::new()).items()
        },
        false,
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::no_mode_error(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<String>::new()).held()
        },
        "this field holds extended references (`String`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`String`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::items_without_mode(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<String>::new()).items()
        },
        false,
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::no_mode_error(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<String>::new()).held()
        },
        "this field holds extended references (`String`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`String`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::items_without_mode(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<String>::new()).items()
        },
        false,
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::no_mode_error(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<i32>::new()).held()
        },
        "this field holds extended references (`i32`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`i32`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::items_without_mode(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<i32>::new()).items()
        },
        false,
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::no_mode_error(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<String>::new()).held()
        },
        "this field holds extended references (`String`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`String`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::items_without_mode(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<String>::new()).items()
        },
        false,
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::no_mode_error(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<DateTime>::new()).held()
        },
        "this field holds extended references (`DateTime`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`DateTime`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::items_without_mode(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<DateTime>::new()).items()
        },
        false,
    ) {
        ::core::panic!("{}", __message)
    };
    #[automatically_derived]
    impl ::pattern_runtime::__private::Identified for Review {
        fn id(&self) -> &String {
            &self.id
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Relations for Review {
        const RELATIONS: &'static [::pattern_runtime::__private::RelationSide] = &[];
    }
};

// ----- #[derive(Fields)] ReviewExcerpt -----

const _: () = {
    ///The serialized field names of [`ReviewExcerpt`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct ReviewExcerptFields {
        ///`reviewId`
        pub review_id: ::pattern_runtime::__private::FieldName<String>,
        ///`userId`
        pub user_id: ::pattern_runtime::__private::FieldName<String>,
        ///`stars`
        pub stars: ::pattern_runtime::__private::FieldName<i32>,
        ///`excerpt`
        pub excerpt: ::pattern_runtime::__private::FieldName<String>,
        ///`createdAt`
        pub created_at: ::pattern_runtime::__private::FieldName<DateTime>,
    }
    #[automatically_derived]
    impl ReviewExcerpt {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: ReviewExcerptFields = ReviewExcerptFields {
            review_id: ::pattern_runtime::__private::FieldName::new("reviewId"),
            user_id: ::pattern_runtime::__private::FieldName::new("userId"),
            stars: ::pattern_runtime::__private::FieldName::new("stars"),
            excerpt: ::pattern_runtime::__private::FieldName::new("excerpt"),
            created_at: ::pattern_runtime::__private::FieldName::new("createdAt"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for ReviewExcerpt {
        type Names = ReviewExcerptFields;
        const FIELDS: ReviewExcerptFields = ReviewExcerpt::FIELDS;
        const KEYS: &'static [&'static str] = &[
            "reviewId",
            "userId",
            "stars",
            "excerpt",
            "createdAt",
        ];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for ReviewExcerpt {
        type Inner = ReviewExcerpt;
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::HeldRefs for ReviewExcerpt {
        const HELD: &'static [::core::option::Option<
            ::pattern_runtime::__private::HeldRef,
        >] = &[
            ::pattern_runtime::__private::when_held(
                || {
                    #[allow(unused_imports)]
                    use ::pattern_runtime::__private::{
                        ProbeHeld as _, ProbeItems as _, ProbeNested as _,
                        ProbeOther as _, ProbeSnapshotOnly as _, ProbeSyncable as _,
                    };
                    (&&&::pattern_runtime::__private::RefProbe::<String>::new()).held()
                },
                ::pattern_runtime::__private::HeldRef {
                    field: "review_id",
                    in_array: "this field's items (`ReviewExcerpt`) hold extended references in `review_id`, and the field has no mode: mark it `#[extended_ref(propagate, path = review_id)]` to keep the copies in sync, or `#[extended_ref(snapshot, path = review_id)]` to keep them as written",
                    nested: "this field holds a `ReviewExcerpt`, whose `review_id` holds extended references: references inside a nested struct are kept in sync only from a `Vec` of items (`#[extended_ref(propagate, path = review_id)] items: Vec<ReviewExcerpt>`); hold the reference on the model itself, or the struct in a `Vec`",
                    beside: "the items (`ReviewExcerpt`) also hold extended references in `review_id`, which no mode covers: one field tracks one reference of its items (`path`). Hold `review_id`'s reference in an array of its own, or drop it from the items",
                },
            ),
            ::pattern_runtime::__private::when_held(
                || {
                    #[allow(unused_imports)]
                    use ::pattern_runtime::__private::{
                        ProbeHeld as _, ProbeItems as _, ProbeNested as _,
                        ProbeOther as _, ProbeSnapshotOnly as _, ProbeSyncable as _,
                    };
                    (&&&::pattern_runtime::__private::RefProbe::<String>::new()).held()
                },
                ::pattern_runtime::__private::HeldRef {
                    field: "user_id",
                    in_array: "this field's items (`ReviewExcerpt`) hold extended references in `user_id`, and the field has no mode: mark it `#[extended_ref(propagate, path = user_id)]` to keep the copies in sync, or `#[extended_ref(snapshot, path = user_id)]` to keep them as written",
                    nested: "this field holds a `ReviewExcerpt`, whose `user_id` holds extended references: references inside a nested struct are kept in sync only from a `Vec` of items (`#[extended_ref(propagate, path = user_id)] items: Vec<ReviewExcerpt>`); hold the reference on the model itself, or the struct in a `Vec`",
                    beside: "the items (`ReviewExcerpt`) also hold extended references in `user_id`, which no mode covers: one field tracks one reference of its items (`path`). Hold `user_id`'s reference in an array of its own, or drop it from the items",
                },
            ),
            ::pattern_runtime::__private::when_held(
                || {
                    #[allow(unused_imports)]
                    use ::pattern_runtime::__private::{
                        ProbeHeld as _, ProbeItems as _, ProbeNested as _,
                        ProbeOther as _, ProbeSnapshotOnly as _, ProbeSyncable as _,
                    };
                    (&&&::pattern_runtime::__private::RefProbe::<i32>::new()).held()
                },
                ::pattern_runtime::__private::HeldRef {
                    field: "stars",
                    in_array: "this field's items (`ReviewExcerpt`) hold extended references in `stars`, and the field has no mode: mark it `#[extended_ref(propagate, path = stars)]` to keep the copies in sync, or `#[extended_ref(snapshot, path = stars)]` to keep them as written",
                    nested: "this field holds a `ReviewExcerpt`, whose `stars` holds extended references: references inside a nested struct are kept in sync only from a `Vec` of items (`#[extended_ref(propagate, path = stars)] items: Vec<ReviewExcerpt>`); hold the reference on the model itself, or the struct in a `Vec`",
                    beside: "the items (`ReviewExcerpt`) also hold extended references in `stars`, which no mode covers: one field tracks one reference of its items (`path`). Hold `stars`'s reference in an array of its own, or drop it from the items",
                },
            ),
            ::pattern_runtime::__private::when_held(
                || {
                    #[allow(unused_imports)]
                    use ::pattern_runtime::__private::{
                        ProbeHeld as _, ProbeItems as _, ProbeNested as _,
                        ProbeOther as _, ProbeSnapshotOnly as _, ProbeSyncable as _,
                    };
                    (&&&::pattern_runtime::__private::RefProbe::<String>::new()).held()
                },
                ::pattern_runtime::__private::HeldRef {
                    field: "excerpt",
                    in_array: "this field's items (`ReviewExcerpt`) hold extended references in `excerpt`, and the field has no mode: mark it `#[extended_ref(propagate, path = excerpt)]` to keep the copies in sync, or `#[extended_ref(snapshot, path = excerpt)]` to keep them as written",
                    nested: "this field holds a `ReviewExcerpt`, whose `excerpt` holds extended references: references inside a nested struct are kept in sync only from a `Vec` of items (`#[extended_ref(propagate, path = excerpt)] items: Vec<ReviewExcerpt>`); hold the reference on the model itself, or the struct in a `Vec`",
                    beside: "the items (`ReviewExcerpt`) also hold extended references in `excerpt`, which no mode covers: one field tracks one reference of its items (`path`). Hold `excerpt`'s reference in an array of its own, or drop it from the items",
                },
            ),
            ::pattern_runtime::__private::when_held(
                || {
                    #[allow(unused_imports)]
                    use ::pattern_runtime::__private::{
                        ProbeHeld as _, ProbeItems as _, ProbeNested as _,
                        ProbeOther as _, ProbeSnapshotOnly as _, ProbeSyncable as _,
                    };
                    (&&&::pattern_runtime::__private::RefProbe::<DateTime>::new()).held()
                },
                ::pattern_runtime::__private::HeldRef {
                    field: "created_at",
                    in_array: "this field's items (`ReviewExcerpt`) hold extended references in `created_at`, and the field has no mode: mark it `#[extended_ref(propagate, path = created_at)]` to keep the copies in sync, or `#[extended_ref(snapshot, path = created_at)]` to keep them as written",
                    nested: "this field holds a `ReviewExcerpt`, whose `created_at` holds extended references: references inside a nested struct are kept in sync only from a `Vec` of items (`#[extended_ref(propagate, path = created_at)] items: Vec<ReviewExcerpt>`); hold the reference on the model itself, or the struct in a `Vec`",
                    beside: "the items (`ReviewExcerpt`) also hold extended references in `created_at`, which no mode covers: one field tracks one reference of its items (`path`). Hold `created_at`'s reference in an array of its own, or drop it from the items",
                },
            ),
        ];
    }
};

