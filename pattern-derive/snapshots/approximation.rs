// ----- #[derive(Model)] User -----

const _: () = {
    ///The serialized field names of [`User`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct UserFields {
        ///`_id`
        pub id: ::pattern_runtime::__private::FieldName<String>,
        ///`name`
        pub name: ::pattern_runtime::__private::FieldName<String>,
        ///`totalSpent`
        pub total_spent: ::pattern_runtime::__private::FieldName<i64>,
        ///`orderCount`
        pub order_count: ::pattern_runtime::__private::FieldName<i64>,
        ///`largestOrder`
        pub largest_order: ::pattern_runtime::__private::FieldName<Option<i64>>,
    }
    #[automatically_derived]
    impl User {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: UserFields = UserFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            name: ::pattern_runtime::__private::FieldName::new("name"),
            total_spent: ::pattern_runtime::__private::FieldName::new("totalSpent"),
            order_count: ::pattern_runtime::__private::FieldName::new("orderCount"),
            largest_order: ::pattern_runtime::__private::FieldName::new("largestOrder"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for User {
        type Names = UserFields;
        const FIELDS: UserFields = User::FIELDS;
        const KEYS: &'static [&'static str] = &[
            "_id",
            "name",
            "totalSpent",
            "orderCount",
            "largestOrder",
        ];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for User {
        type Inner = User;
    }
    static __SCHEMA: ::pattern_runtime::__private::ModelSchema = ::pattern_runtime::__private::ModelSchema::from_parts(::pattern_runtime::__private::SchemaParts {
        name: "User",
        collection: "users",
        group: ::core::option::Option::Some("approximation"),
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
                rust_name: "total_spent",
                bson_name: "totalSpent",
                rust_type: "i64",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "order_count",
                bson_name: "orderCount",
                rust_type: "i64",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "largest_order",
                bson_name: "largestOrder",
                rust_type: "Option<i64>",
                annotations: &[],
            }),
        ],
        indexes: &[],
        shard_key: ::core::option::Option::None,
        patterns: &[
            &__COMPUTED_FROM_TOTAL_SPENT,
            &__COMPUTED_FROM_ORDER_COUNT,
            &__COMPUTED_FROM_LARGEST_ORDER,
        ],
    });
    #[automatically_derived]
    impl ::pattern_runtime::__private::Model for User {
        const SCHEMA: &'static ::pattern_runtime::__private::ModelSchema = &__SCHEMA;
        type Id = String;
    }
    ::pattern_runtime::__private::inventory::submit! {
        ::pattern_runtime::__private::Registration { schema : & __SCHEMA }
    }
    static __COMPUTED_FROM_TOTAL_SPENT: ::pattern_runtime::__private::ComputedFromSpec = {
        trait __ComputedSource {
            type Model;
        }
        impl __ComputedSource
        for <Order as ::pattern_runtime::__private::Fields>::Names {
            type Model = Order;
        }
        ::pattern_runtime::__private::ComputedFromSpec::from_parts(::pattern_runtime::__private::ComputedFromParts {
            field: User::FIELDS.total_spent.as_str(),
            aggregate: ::pattern_runtime::__private::Aggregate::Sum,
            source: || {
                <<<Order as ::pattern_runtime::__private::Fields>::Names as __ComputedSource>::Model as ::pattern_runtime::__private::Model>::SCHEMA
            },
            source_field: <Order as ::pattern_runtime::__private::Fields>::FIELDS
                .amount
                .as_str(),
            by: <Order as ::pattern_runtime::__private::Fields>::FIELDS.user_id.as_str(),
        })
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::unless(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeBool as _, ProbeFloat as _, ProbeInteger as _, ProbeNumeric as _,
                ProbeOptional as _, ProbeOtherCheck as _,
            };
            (&&::pattern_runtime::__private::CheckProbe::of(User::FIELDS.total_spent))
                .numeric()
        },
        "`total_spent` keeps a sum: use a number (i64, i32, u32 or f64)",
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
            (&&::pattern_runtime::__private::CheckProbe::of(
                <Order as ::pattern_runtime::__private::Fields>::FIELDS.amount,
            ))
                .numeric()
        },
        "`amount` of `Order` is not a number: a computed sum, min or max reads a numeric field (i32, i64, u32, f64, or an Option of one)",
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = if ::pattern_runtime::__private::passes(||
    {
        #[allow(unused_imports)]
        use ::pattern_runtime::__private::{
            ProbeFloat as _, ProbeInteger as _, ProbeNumeric as _, ProbeOptional as _,
            ProbeOtherCheck as _,
        };
        (&&::pattern_runtime::__private::CheckProbe::of(
            <Order as ::pattern_runtime::__private::Fields>::FIELDS.amount,
        ))
            .float()
    })
        && ::pattern_runtime::__private::passes(|| {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeFloat as _, ProbeInteger as _, ProbeNumeric as _,
                ProbeOptional as _, ProbeOtherCheck as _,
            };
            (&&::pattern_runtime::__private::CheckProbe::of(User::FIELDS.total_spent))
                .numeric()
        })
        && !::pattern_runtime::__private::passes(|| {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeFloat as _, ProbeInteger as _, ProbeNumeric as _,
                ProbeOptional as _, ProbeOtherCheck as _,
            };
            (&&::pattern_runtime::__private::CheckProbe::of(User::FIELDS.total_spent))
                .float()
        })
    {
        ::core::option::Option::Some(
            "`total_spent` sums `Order.amount`, a float: keep it in an f64",
        )
    } else {
        ::core::option::Option::None
    } {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = if ::pattern_runtime::__private::contains_str(
        <Order as ::pattern_runtime::__private::Fields>::APPROXIMATE,
        <Order as ::pattern_runtime::__private::Fields>::FIELDS.amount.as_str(),
    ) {
        ::core::option::Option::Some(
            "`amount` of `Order` is an `#[approximate]` counter: its events are written without reading the document, so `total_spent` would go stale at the first one; compute it from the events themselves, or read the counter where it is needed",
        )
    } else {
        ::core::option::Option::None
    } {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = if ::pattern_runtime::__private::passes(||
    {
        #[allow(unused_imports)]
        use ::pattern_runtime::__private::{
            ProbeId as _, ProbeOptionalId as _, ProbeOptionalRefTo as _,
            ProbeOtherId as _, ProbeRefTo as _,
        };
        (&&::pattern_runtime::__private::IdProbe::<
            _,
            User,
        >::of(<Order as ::pattern_runtime::__private::Fields>::FIELDS.user_id))
            .id()
    })
        || ::pattern_runtime::__private::passes(|| {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeId as _, ProbeOptionalId as _, ProbeOptionalRefTo as _,
                ProbeOtherId as _, ProbeRefTo as _,
            };
            (&&::pattern_runtime::__private::IdProbe::<
                _,
                User,
            >::of(<Order as ::pattern_runtime::__private::Fields>::FIELDS.user_id))
                .optional_id()
        })
        || ::pattern_runtime::__private::passes(|| {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeId as _, ProbeOptionalId as _, ProbeOptionalRefTo as _,
                ProbeOtherId as _, ProbeRefTo as _,
            };
            (&&::pattern_runtime::__private::IdProbe::<
                _,
                User,
            >::of(<Order as ::pattern_runtime::__private::Fields>::FIELDS.user_id))
                .ref_to()
        })
        || ::pattern_runtime::__private::passes(|| {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeId as _, ProbeOptionalId as _, ProbeOptionalRefTo as _,
                ProbeOtherId as _, ProbeRefTo as _,
            };
            (&&::pattern_runtime::__private::IdProbe::<
                _,
                User,
            >::of(<Order as ::pattern_runtime::__private::Fields>::FIELDS.user_id))
                .optional_ref_to()
        })
    {
        ::core::option::Option::None
    } else {
        ::core::option::Option::Some(
            "`user_id` of `Order` must hold the `_id` of a `User`: give it the type of `User`'s `_id`, an Option of it, `Ref<User>` or `Option<Ref<User>>`",
        )
    } {
        ::core::panic!("{}", __message)
    };
    static __COMPUTED_FROM_ORDER_COUNT: ::pattern_runtime::__private::ComputedFromSpec = {
        trait __ComputedSource {
            type Model;
        }
        impl __ComputedSource
        for <Order as ::pattern_runtime::__private::Fields>::Names {
            type Model = Order;
        }
        ::pattern_runtime::__private::ComputedFromSpec::from_parts(::pattern_runtime::__private::ComputedFromParts {
            field: User::FIELDS.order_count.as_str(),
            aggregate: ::pattern_runtime::__private::Aggregate::Count,
            source: || {
                <<<Order as ::pattern_runtime::__private::Fields>::Names as __ComputedSource>::Model as ::pattern_runtime::__private::Model>::SCHEMA
            },
            source_field: "",
            by: <Order as ::pattern_runtime::__private::Fields>::FIELDS.user_id.as_str(),
        })
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::unless(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeBool as _, ProbeFloat as _, ProbeInteger as _, ProbeNumeric as _,
                ProbeOptional as _, ProbeOtherCheck as _,
            };
            (&&::pattern_runtime::__private::CheckProbe::of(User::FIELDS.order_count))
                .integer()
        },
        "`order_count` keeps a count of `Order` documents: use an integer (i64, i32 or u32)",
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = if ::pattern_runtime::__private::passes(||
    {
        #[allow(unused_imports)]
        use ::pattern_runtime::__private::{
            ProbeId as _, ProbeOptionalId as _, ProbeOptionalRefTo as _,
            ProbeOtherId as _, ProbeRefTo as _,
        };
        (&&::pattern_runtime::__private::IdProbe::<
            _,
            User,
        >::of(<Order as ::pattern_runtime::__private::Fields>::FIELDS.user_id))
            .id()
    })
        || ::pattern_runtime::__private::passes(|| {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeId as _, ProbeOptionalId as _, ProbeOptionalRefTo as _,
                ProbeOtherId as _, ProbeRefTo as _,
            };
            (&&::pattern_runtime::__private::IdProbe::<
                _,
                User,
            >::of(<Order as ::pattern_runtime::__private::Fields>::FIELDS.user_id))
                .optional_id()
        })
        || ::pattern_runtime::__private::passes(|| {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeId as _, ProbeOptionalId as _, ProbeOptionalRefTo as _,
                ProbeOtherId as _, ProbeRefTo as _,
            };
            (&&::pattern_runtime::__private::IdProbe::<
                _,
                User,
            >::of(<Order as ::pattern_runtime::__private::Fields>::FIELDS.user_id))
                .ref_to()
        })
        || ::pattern_runtime::__private::passes(|| {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeId as _, ProbeOptionalId as _, ProbeOptionalRefTo as _,
                ProbeOtherId as _, ProbeRefTo as _,
            };
            (&&::pattern_runtime::__private::IdProbe::<
                _,
                User,
            >::of(<Order as ::pattern_runtime::__private::Fields>::FIELDS.user_id))
                .optional_ref_to()
        })
    {
        ::core::option::Option::None
    } else {
        ::core::option::Option::Some(
            "`user_id` of `Order` must hold the `_id` of a `User`: give it the type of `User`'s `_id`, an Option of it, `Ref<User>` or `Option<Ref<User>>`",
        )
    } {
        ::core::panic!("{}", __message)
    };
    static __COMPUTED_FROM_LARGEST_ORDER: ::pattern_runtime::__private::ComputedFromSpec = {
        trait __ComputedSource {
            type Model;
        }
        impl __ComputedSource
        for <Order as ::pattern_runtime::__private::Fields>::Names {
            type Model = Order;
        }
        ::pattern_runtime::__private::ComputedFromSpec::from_parts(::pattern_runtime::__private::ComputedFromParts {
            field: User::FIELDS.largest_order.as_str(),
            aggregate: ::pattern_runtime::__private::Aggregate::Max,
            source: || {
                <<<Order as ::pattern_runtime::__private::Fields>::Names as __ComputedSource>::Model as ::pattern_runtime::__private::Model>::SCHEMA
            },
            source_field: <Order as ::pattern_runtime::__private::Fields>::FIELDS
                .amount
                .as_str(),
            by: <Order as ::pattern_runtime::__private::Fields>::FIELDS.user_id.as_str(),
        })
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::unless(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeBool as _, ProbeFloat as _, ProbeInteger as _, ProbeNumeric as _,
                ProbeOptional as _, ProbeOtherCheck as _,
            };
            (&&::pattern_runtime::__private::CheckProbe::of(User::FIELDS.largest_order))
                .optional()
        },
        "`largest_order` has no value while no `Order` points at the document: use an Option (Option<i64>, Option<f64>)",
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
            (&&::pattern_runtime::__private::CheckProbe::of(
                <Order as ::pattern_runtime::__private::Fields>::FIELDS.amount,
            ))
                .numeric()
        },
        "`amount` of `Order` is not a number: a computed sum, min or max reads a numeric field (i32, i64, u32, f64, or an Option of one)",
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = if ::pattern_runtime::__private::contains_str(
        <Order as ::pattern_runtime::__private::Fields>::APPROXIMATE,
        <Order as ::pattern_runtime::__private::Fields>::FIELDS.amount.as_str(),
    ) {
        ::core::option::Option::Some(
            "`amount` of `Order` is an `#[approximate]` counter: its events are written without reading the document, so `largest_order` would go stale at the first one; compute it from the events themselves, or read the counter where it is needed",
        )
    } else {
        ::core::option::Option::None
    } {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = if ::pattern_runtime::__private::passes(||
    {
        #[allow(unused_imports)]
        use ::pattern_runtime::__private::{
            ProbeFloat as _, ProbeInteger as _, ProbeNumeric as _, ProbeOptional as _,
            ProbeOtherCheck as _,
        };
        (&&::pattern_runtime::__private::CheckProbe::of(User::FIELDS.largest_order))
            .optional()
    })
        && !::pattern_runtime::__private::passes(|| {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeFloat as _, ProbeInteger as _, ProbeNumeric as _,
                ProbeOptional as _, ProbeOtherCheck as _,
            };
            (&&::pattern_runtime::__private::CheckProbe::of(User::FIELDS.largest_order))
                .numeric()
        })
    {
        ::core::option::Option::Some(
            "`largest_order` keeps the largest value of a field: use an Option of a number (Option<i64>, Option<f64>)",
        )
    } else {
        ::core::option::Option::None
    } {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = if ::pattern_runtime::__private::passes(||
    {
        #[allow(unused_imports)]
        use ::pattern_runtime::__private::{
            ProbeId as _, ProbeOptionalId as _, ProbeOptionalRefTo as _,
            ProbeOtherId as _, ProbeRefTo as _,
        };
        (&&::pattern_runtime::__private::IdProbe::<
            _,
            User,
        >::of(<Order as ::pattern_runtime::__private::Fields>::FIELDS.user_id))
            .id()
    })
        || ::pattern_runtime::__private::passes(|| {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeId as _, ProbeOptionalId as _, ProbeOptionalRefTo as _,
                ProbeOtherId as _, ProbeRefTo as _,
            };
            (&&::pattern_runtime::__private::IdProbe::<
                _,
                User,
            >::of(<Order as ::pattern_runtime::__private::Fields>::FIELDS.user_id))
                .optional_id()
        })
        || ::pattern_runtime::__private::passes(|| {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeId as _, ProbeOptionalId as _, ProbeOptionalRefTo as _,
                ProbeOtherId as _, ProbeRefTo as _,
            };
            (&&::pattern_runtime::__private::IdProbe::<
                _,
                User,
            >::of(<Order as ::pattern_runtime::__private::Fields>::FIELDS.user_id))
                .ref_to()
        })
        || ::pattern_runtime::__private::passes(|| {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeId as _, ProbeOptionalId as _, ProbeOptionalRefTo as _,
                ProbeOtherId as _, ProbeRefTo as _,
            };
            (&&::pattern_runtime::__private::IdProbe::<
                _,
                User,
            >::of(<Order as ::pattern_runtime::__private::Fields>::FIELDS.user_id))
                .optional_ref_to()
        })
    {
        ::core::option::Option::None
    } else {
        ::core::option::Option::Some(
            "`user_id` of `Order` must hold the `_id` of a `User`: give it the type of `User`'s `_id`, an Option of it, `Ref<User>` or `Option<Ref<User>>`",
        )
    } {
        ::core::panic!("{}", __message)
    };
    #[automatically_derived]
    impl User {
        /// The fields of this model computed from other models' documents: verify and
        /// recompute them (`pattern_runtime::computed`).
        pub fn computed(
            db: &::pattern_runtime::__private::Database,
        ) -> ::pattern_runtime::__private::ComputedFields<User> {
            ::pattern_runtime::__private::ComputedFields::new(db)
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Unversioned for User {}
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
            (&&&::pattern_runtime::__private::RefProbe::<Option<i64>>::new()).held()
        },
        "this field holds extended references (`Option<i64>`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`Option<i64>`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
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
    #[automatically_derived]
    impl ::pattern_runtime::__private::Identified for User {
        fn id(&self) -> &String {
            &self.id
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Relations for User {
        const RELATIONS: &'static [::pattern_runtime::__private::RelationSide] = &[];
    }
};

// ----- #[derive(Model)] Order -----

const _: () = {
    ///The serialized field names of [`Order`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct OrderFields {
        ///`_id`
        pub id: ::pattern_runtime::__private::FieldName<i64>,
        ///`userId`
        pub user_id: ::pattern_runtime::__private::FieldName<String>,
        ///`amount`
        pub amount: ::pattern_runtime::__private::FieldName<i64>,
    }
    #[automatically_derived]
    impl Order {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: OrderFields = OrderFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            user_id: ::pattern_runtime::__private::FieldName::new("userId"),
            amount: ::pattern_runtime::__private::FieldName::new("amount"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for Order {
        type Names = OrderFields;
        const FIELDS: OrderFields = Order::FIELDS;
        const KEYS: &'static [&'static str] = &["_id", "userId", "amount"];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for Order {
        type Inner = Order;
    }
    static __SCHEMA: ::pattern_runtime::__private::ModelSchema = ::pattern_runtime::__private::ModelSchema::from_parts(::pattern_runtime::__private::SchemaParts {
        name: "Order",
        collection: "orders",
        group: ::core::option::Option::Some("approximation"),
        fields: &[
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "id",
                bson_name: "_id",
                rust_type: "i64",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "user_id",
                bson_name: "userId",
                rust_type: "String",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "amount",
                bson_name: "amount",
                rust_type: "i64",
                annotations: &[],
            }),
        ],
        indexes: &[],
        shard_key: ::core::option::Option::None,
        patterns: &[],
    });
    #[automatically_derived]
    impl ::pattern_runtime::__private::Model for Order {
        const SCHEMA: &'static ::pattern_runtime::__private::ModelSchema = &__SCHEMA;
        type Id = i64;
    }
    ::pattern_runtime::__private::inventory::submit! {
        ::pattern_runtime::__private::Registration { schema : & __SCHEMA }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Unversioned for Order {}
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
    #[automatically_derived]
    impl ::pattern_runtime::__private::Identified for Order {
        fn id(&self) -> &i64 {
            &self.id
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Relations for Order {
        const RELATIONS: &'static [::pattern_runtime::__private::RelationSide] = &[];
    }
};

// ----- #[derive(Model)] Page -----

const _: () = {
    ///The serialized field names of [`Page`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct PageFields {
        ///`_id`
        pub id: ::pattern_runtime::__private::FieldName<String>,
        ///`batchedViews`
        pub batched_views: ::pattern_runtime::__private::FieldName<i64>,
        ///`sampledViews`
        pub sampled_views: ::pattern_runtime::__private::FieldName<i64>,
        ///`shardedViews`
        pub sharded_views: ::pattern_runtime::__private::FieldName<i64>,
    }
    #[automatically_derived]
    impl Page {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: PageFields = PageFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            batched_views: ::pattern_runtime::__private::FieldName::new("batchedViews"),
            sampled_views: ::pattern_runtime::__private::FieldName::new("sampledViews"),
            sharded_views: ::pattern_runtime::__private::FieldName::new("shardedViews"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for Page {
        type Names = PageFields;
        const FIELDS: PageFields = Page::FIELDS;
        const KEYS: &'static [&'static str] = &[
            "_id",
            "batchedViews",
            "sampledViews",
            "shardedViews",
        ];
        const APPROXIMATE: &'static [&'static str] = &[
            "batchedViews",
            "sampledViews",
            "shardedViews",
        ];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for Page {
        type Inner = Page;
    }
    static __SCHEMA: ::pattern_runtime::__private::ModelSchema = ::pattern_runtime::__private::ModelSchema::from_parts(::pattern_runtime::__private::SchemaParts {
        name: "Page",
        collection: "pages",
        group: ::core::option::Option::Some("approximation"),
        fields: &[
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "id",
                bson_name: "_id",
                rust_type: "String",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "batched_views",
                bson_name: "batchedViews",
                rust_type: "i64",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "sampled_views",
                bson_name: "sampledViews",
                rust_type: "i64",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "sharded_views",
                bson_name: "shardedViews",
                rust_type: "i64",
                annotations: &[],
            }),
        ],
        indexes: &[],
        shard_key: ::core::option::Option::None,
        patterns: &[
            &__APPROXIMATE_BATCHED_VIEWS,
            &__APPROXIMATE_SAMPLED_VIEWS,
            &__APPROXIMATE_SHARDED_VIEWS,
        ],
    });
    #[automatically_derived]
    impl ::pattern_runtime::__private::Model for Page {
        const SCHEMA: &'static ::pattern_runtime::__private::ModelSchema = &__SCHEMA;
        type Id = String;
    }
    ::pattern_runtime::__private::inventory::submit! {
        ::pattern_runtime::__private::Registration { schema : & __SCHEMA }
    }
    static __APPROXIMATE_BATCHED_VIEWS: ::pattern_runtime::__private::ApproximateSpec = ::pattern_runtime::__private::ApproximateSpec::from_parts(::pattern_runtime::__private::ApproximateParts {
        field: Page::FIELDS.batched_views.as_str(),
        approximation: ::pattern_runtime::__private::Approximation::Batched {
            threshold: 1000u32,
        },
    });
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::unless(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeBool as _, ProbeFloat as _, ProbeInteger as _, ProbeNumeric as _,
                ProbeOptional as _, ProbeOtherCheck as _,
            };
            (&&::pattern_runtime::__private::CheckProbe::of(Page::FIELDS.batched_views))
                .integer()
        },
        "`batched_views` is an approximate counter: it counts in an integer field (i64, i32 or u32)",
    ) {
        ::core::panic!("{}", __message)
    };
    #[automatically_derived]
    impl Page {
        ///The batched counter of `batchedViews`: one `$inc` per 1000 events of a document; `flush` it before the program ends.
        pub fn batched_views_counter(
            db: &::pattern_runtime::__private::Database,
        ) -> ::pattern_runtime::__private::BatchedCounter<
            <Self as ::pattern_runtime::__private::Model>::Id,
        > {
            ::pattern_runtime::__private::BatchedCounter::declared(
                db.collection("pages"),
                "batchedViews",
                1000u32,
            )
        }
    }
    static __APPROXIMATE_SAMPLED_VIEWS: ::pattern_runtime::__private::ApproximateSpec = ::pattern_runtime::__private::ApproximateSpec::from_parts(::pattern_runtime::__private::ApproximateParts {
        field: Page::FIELDS.sampled_views.as_str(),
        approximation: ::pattern_runtime::__private::Approximation::Sampled {
            p: 0.01f64,
        },
    });
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::unless(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeBool as _, ProbeFloat as _, ProbeInteger as _, ProbeNumeric as _,
                ProbeOptional as _, ProbeOtherCheck as _,
            };
            (&&::pattern_runtime::__private::CheckProbe::of(Page::FIELDS.sampled_views))
                .integer()
        },
        "`sampled_views` is an approximate counter: it counts in an integer field (i64, i32 or u32)",
    ) {
        ::core::panic!("{}", __message)
    };
    #[automatically_derived]
    impl Page {
        ///The sampled counter of `sampledViews`: each event written with probability 0.01, as an increment of its inverse.
        pub fn sampled_views_counter(
            db: &::pattern_runtime::__private::Database,
        ) -> ::pattern_runtime::__private::SampledCounter<
            <Self as ::pattern_runtime::__private::Model>::Id,
        > {
            ::pattern_runtime::__private::SampledCounter::declared(
                db.collection("pages"),
                "sampledViews",
                0.01f64,
            )
        }
    }
    static __APPROXIMATE_SHARDED_VIEWS: ::pattern_runtime::__private::ApproximateSpec = ::pattern_runtime::__private::ApproximateSpec::from_parts(::pattern_runtime::__private::ApproximateParts {
        field: Page::FIELDS.sharded_views.as_str(),
        approximation: ::pattern_runtime::__private::Approximation::Sharded {
            shards: 8u32,
            collection: "pages.shardedViews",
        },
    });
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::unless(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeBool as _, ProbeFloat as _, ProbeInteger as _, ProbeNumeric as _,
                ProbeOptional as _, ProbeOtherCheck as _,
            };
            (&&::pattern_runtime::__private::CheckProbe::of(Page::FIELDS.sharded_views))
                .integer()
        },
        "`sharded_views` is an approximate counter: it counts in an integer field (i64, i32 or u32)",
    ) {
        ::core::panic!("{}", __message)
    };
    #[automatically_derived]
    impl Page {
        ///The sharded counter of `shardedViews` of the document `id`: 8 shard documents in `pages.shardedViews`, read exactly.
        pub fn sharded_views_counter(
            db: &::pattern_runtime::__private::Database,
            id: impl ::pattern_runtime::__private::IntoId<
                <Self as ::pattern_runtime::__private::Model>::Id,
            >,
        ) -> ::pattern_runtime::__private::ShardedField {
            ::pattern_runtime::__private::ShardedField::declared(
                db.collection("pages"),
                "shardedViews",
                db.collection("pages.shardedViews"),
                8u32,
                ::pattern_runtime::__private::IntoId::into_id(id),
            )
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Unversioned for Page {}
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
    #[automatically_derived]
    impl ::pattern_runtime::__private::Identified for Page {
        fn id(&self) -> &String {
            &self.id
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Relations for Page {
        const RELATIONS: &'static [::pattern_runtime::__private::RelationSide] = &[];
    }
};

