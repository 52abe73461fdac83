// ----- #[derive(Model)] Notification -----

const _: () = {
    ///The serialized field names of [`Notification`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct NotificationFields {
        ///`_id`
        pub id: ::pattern_runtime::__private::FieldName<bson::oid::ObjectId>,
        ///`type`
        pub kind: ::pattern_runtime::__private::FieldName<String>,
        ///`to`
        pub to: ::pattern_runtime::__private::FieldName<String>,
        ///`subject`
        pub subject: ::pattern_runtime::__private::FieldName<String>,
        ///`createdAt`
        pub created_at: ::pattern_runtime::__private::FieldName<DateTime>,
    }
    #[automatically_derived]
    impl Notification {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: NotificationFields = NotificationFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            kind: ::pattern_runtime::__private::FieldName::new("type"),
            to: ::pattern_runtime::__private::FieldName::new("to"),
            subject: ::pattern_runtime::__private::FieldName::new("subject"),
            created_at: ::pattern_runtime::__private::FieldName::new("createdAt"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for Notification {
        type Names = NotificationFields;
        const FIELDS: NotificationFields = Notification::FIELDS;
        const KEYS: &'static [&'static str] = &[
            "_id",
            "type",
            "to",
            "subject",
            "createdAt",
        ];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for Notification {
        type Inner = Notification;
    }
    static __SCHEMA: ::pattern_runtime::__private::ModelSchema = ::pattern_runtime::__private::ModelSchema::from_parts(::pattern_runtime::__private::SchemaParts {
        name: "Notification",
        collection: "notifications",
        group: ::core::option::Option::Some("indexes"),
        fields: &[
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "id",
                bson_name: "_id",
                rust_type: "bson::oid::ObjectId",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "kind",
                bson_name: "type",
                rust_type: "String",
                annotations: &[
                    ::pattern_runtime::__private::Annotation::Index {
                        name: "type_1_createdAt_-1",
                    },
                ],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "to",
                bson_name: "to",
                rust_type: "String",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "subject",
                bson_name: "subject",
                rust_type: "String",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "created_at",
                bson_name: "createdAt",
                rust_type: "DateTime",
                annotations: &[
                    ::pattern_runtime::__private::Annotation::Index {
                        name: "createdAt_1",
                    },
                ],
            }),
        ],
        indexes: &[
            ::pattern_runtime::__private::IndexSpec::from_parts(::pattern_runtime::__private::IndexParts {
                keys: &[
                    ::pattern_runtime::__private::IndexKey {
                        path: "type",
                        kind: ::pattern_runtime::__private::IndexKind::Ascending,
                    },
                    ::pattern_runtime::__private::IndexKey {
                        path: "createdAt",
                        kind: ::pattern_runtime::__private::IndexKind::Descending,
                    },
                ],
                name: "type_1_createdAt_-1",
                unique: false,
                sparse: false,
                hidden: false,
                expire_after_seconds: ::core::option::Option::None,
                collation: ::core::option::Option::None,
                partial: &[],
            }),
            ::pattern_runtime::__private::IndexSpec::from_parts(::pattern_runtime::__private::IndexParts {
                keys: &[
                    ::pattern_runtime::__private::IndexKey {
                        path: "createdAt",
                        kind: ::pattern_runtime::__private::IndexKind::Ascending,
                    },
                ],
                name: "createdAt_1",
                unique: false,
                sparse: false,
                hidden: false,
                expire_after_seconds: ::core::option::Option::Some(7776000u64),
                collation: ::core::option::Option::None,
                partial: &[],
            }),
        ],
        shard_key: ::core::option::Option::None,
        patterns: &[],
    });
    #[automatically_derived]
    impl ::pattern_runtime::__private::Model for Notification {
        const SCHEMA: &'static ::pattern_runtime::__private::ModelSchema = &__SCHEMA;
        type Id = bson::oid::ObjectId;
    }
    ::pattern_runtime::__private::inventory::submit! {
        ::pattern_runtime::__private::Registration { schema : & __SCHEMA }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Unversioned for Notification {}
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::no_mode_error(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<bson::oid::ObjectId>::new())
                .held()
        },
        "this field holds extended references (`bson::oid::ObjectId`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`bson::oid::ObjectId`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
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
            (&&&::pattern_runtime::__private::RefProbe::<bson::oid::ObjectId>::new())
                .items()
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
    impl ::pattern_runtime::__private::Identified for Notification {
        fn id(&self) -> &bson::oid::ObjectId {
            &self.id
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Relations for Notification {
        const RELATIONS: &'static [::pattern_runtime::__private::RelationSide] = &[];
    }
};

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
        ///`ratingCount`
        pub rating_count: ::pattern_runtime::__private::FieldName<i64>,
        ///`ratingAvg`
        pub rating_avg: ::pattern_runtime::__private::FieldName<f64>,
        ///`updatedAt`
        pub updated_at: ::pattern_runtime::__private::FieldName<DateTime>,
    }
    #[automatically_derived]
    impl Product {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: ProductFields = ProductFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            name: ::pattern_runtime::__private::FieldName::new("name"),
            price: ::pattern_runtime::__private::FieldName::new("price"),
            rating_count: ::pattern_runtime::__private::FieldName::new("ratingCount"),
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
            "ratingCount",
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
        group: ::core::option::Option::Some("indexes"),
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
                annotations: &[
                    ::pattern_runtime::__private::Annotation::Index {
                        name: "name_1",
                    },
                ],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "price",
                bson_name: "price",
                rust_type: "f64",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "rating_count",
                bson_name: "ratingCount",
                rust_type: "i64",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "rating_avg",
                bson_name: "ratingAvg",
                rust_type: "f64",
                annotations: &[
                    ::pattern_runtime::__private::Annotation::Index {
                        name: "top_rated",
                    },
                ],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "updated_at",
                bson_name: "updatedAt",
                rust_type: "DateTime",
                annotations: &[],
            }),
        ],
        indexes: &[
            ::pattern_runtime::__private::IndexSpec::from_parts(::pattern_runtime::__private::IndexParts {
                keys: &[
                    ::pattern_runtime::__private::IndexKey {
                        path: "name",
                        kind: ::pattern_runtime::__private::IndexKind::Ascending,
                    },
                ],
                name: "name_1",
                unique: true,
                sparse: false,
                hidden: false,
                expire_after_seconds: ::core::option::Option::None,
                collation: ::core::option::Option::Some(::pattern_runtime::__private::Collation {
                    locale: "zh",
                    strength: ::core::option::Option::Some(2u8),
                    case_level: ::core::option::Option::None,
                    numeric_ordering: ::core::option::Option::None,
                }),
                partial: &[],
            }),
            ::pattern_runtime::__private::IndexSpec::from_parts(::pattern_runtime::__private::IndexParts {
                keys: &[
                    ::pattern_runtime::__private::IndexKey {
                        path: "ratingAvg",
                        kind: ::pattern_runtime::__private::IndexKind::Descending,
                    },
                ],
                name: "top_rated",
                unique: false,
                sparse: false,
                hidden: false,
                expire_after_seconds: ::core::option::Option::None,
                collation: ::core::option::Option::None,
                partial: &[
                    ::pattern_runtime::__private::PartialClause {
                        path: "ratingCount",
                        op: ::pattern_runtime::__private::PartialOp::Gt,
                        value: ::pattern_runtime::__private::Literal::Int(0i64),
                    },
                ],
            }),
        ],
        shard_key: ::core::option::Option::None,
        patterns: &[],
    });
    #[automatically_derived]
    impl ::pattern_runtime::__private::Model for Product {
        const SCHEMA: &'static ::pattern_runtime::__private::ModelSchema = &__SCHEMA;
        type Id = String;
    }
    ::pattern_runtime::__private::inventory::submit! {
        ::pattern_runtime::__private::Registration { schema : & __SCHEMA }
    }
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

// ----- #[derive(Model)] HealthRecord -----

const _: () = {
    ///The serialized field names of [`HealthRecord`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct HealthRecordFields {
        ///`_id`
        pub id: ::pattern_runtime::__private::FieldName<i32>,
        ///`attributes`
        pub attributes: ::pattern_runtime::__private::FieldName<Vec<Attribute>>,
    }
    #[automatically_derived]
    impl HealthRecord {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: HealthRecordFields = HealthRecordFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            attributes: ::pattern_runtime::__private::FieldName::new("attributes"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for HealthRecord {
        type Names = HealthRecordFields;
        const FIELDS: HealthRecordFields = HealthRecord::FIELDS;
        const KEYS: &'static [&'static str] = &["_id", "attributes"];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for HealthRecord {
        type Inner = HealthRecord;
    }
    static __SCHEMA: ::pattern_runtime::__private::ModelSchema = ::pattern_runtime::__private::ModelSchema::from_parts(::pattern_runtime::__private::SchemaParts {
        name: "HealthRecord",
        collection: "records",
        group: ::core::option::Option::Some("indexes"),
        fields: &[
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "id",
                bson_name: "_id",
                rust_type: "i32",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "attributes",
                bson_name: "attributes",
                rust_type: "Vec<Attribute>",
                annotations: &[
                    ::pattern_runtime::__private::Annotation::Index {
                        name: {
                            const __PARTS: &[&str] = &[
                                "attributes.",
                                ::pattern_runtime::__private::step(
                                    ::pattern_runtime::__private::FieldName::nested(
                                            <HealthRecord as ::pattern_runtime::__private::Fields>::FIELDS
                                                .attributes,
                                        )
                                        .name,
                                ),
                                "_1_attributes.",
                                ::pattern_runtime::__private::step(
                                    ::pattern_runtime::__private::FieldName::nested(
                                            <HealthRecord as ::pattern_runtime::__private::Fields>::FIELDS
                                                .attributes,
                                        )
                                        .value,
                                ),
                                "_1",
                            ];
                            const __LEN: usize = ::pattern_runtime::__private::concat_len(
                                __PARTS,
                            );
                            const __BYTES: [u8; __LEN] = ::pattern_runtime::__private::concat_bytes::<
                                __LEN,
                            >(__PARTS);
                            ::pattern_runtime::__private::utf8(&__BYTES)
                        },
                    },
                ],
            }),
        ],
        indexes: &[
            ::pattern_runtime::__private::IndexSpec::from_parts(::pattern_runtime::__private::IndexParts {
                keys: &[
                    ::pattern_runtime::__private::IndexKey {
                        path: {
                            const __PARTS: &[&str] = &[
                                "attributes.",
                                ::pattern_runtime::__private::step(
                                    ::pattern_runtime::__private::FieldName::nested(
                                            <HealthRecord as ::pattern_runtime::__private::Fields>::FIELDS
                                                .attributes,
                                        )
                                        .name,
                                ),
                            ];
                            const __LEN: usize = ::pattern_runtime::__private::concat_len(
                                __PARTS,
                            );
                            const __BYTES: [u8; __LEN] = ::pattern_runtime::__private::concat_bytes::<
                                __LEN,
                            >(__PARTS);
                            ::pattern_runtime::__private::utf8(&__BYTES)
                        },
                        kind: ::pattern_runtime::__private::IndexKind::Ascending,
                    },
                    ::pattern_runtime::__private::IndexKey {
                        path: {
                            const __PARTS: &[&str] = &[
                                "attributes.",
                                ::pattern_runtime::__private::step(
                                    ::pattern_runtime::__private::FieldName::nested(
                                            <HealthRecord as ::pattern_runtime::__private::Fields>::FIELDS
                                                .attributes,
                                        )
                                        .value,
                                ),
                            ];
                            const __LEN: usize = ::pattern_runtime::__private::concat_len(
                                __PARTS,
                            );
                            const __BYTES: [u8; __LEN] = ::pattern_runtime::__private::concat_bytes::<
                                __LEN,
                            >(__PARTS);
                            ::pattern_runtime::__private::utf8(&__BYTES)
                        },
                        kind: ::pattern_runtime::__private::IndexKind::Ascending,
                    },
                ],
                name: {
                    const __PARTS: &[&str] = &[
                        "attributes.",
                        ::pattern_runtime::__private::step(
                            ::pattern_runtime::__private::FieldName::nested(
                                    <HealthRecord as ::pattern_runtime::__private::Fields>::FIELDS
                                        .attributes,
                                )
                                .name,
                        ),
                        "_1_attributes.",
                        ::pattern_runtime::__private::step(
                            ::pattern_runtime::__private::FieldName::nested(
                                    <HealthRecord as ::pattern_runtime::__private::Fields>::FIELDS
                                        .attributes,
                                )
                                .value,
                        ),
                        "_1",
                    ];
                    const __LEN: usize = ::pattern_runtime::__private::concat_len(
                        __PARTS,
                    );
                    const __BYTES: [u8; __LEN] = ::pattern_runtime::__private::concat_bytes::<
                        __LEN,
                    >(__PARTS);
                    ::pattern_runtime::__private::utf8(&__BYTES)
                },
                unique: false,
                sparse: false,
                hidden: false,
                expire_after_seconds: ::core::option::Option::None,
                collation: ::core::option::Option::None,
                partial: &[],
            }),
        ],
        shard_key: ::core::option::Option::None,
        patterns: &[&__BOUNDED_0],
    });
    #[automatically_derived]
    impl ::pattern_runtime::__private::Model for HealthRecord {
        const SCHEMA: &'static ::pattern_runtime::__private::ModelSchema = &__SCHEMA;
        type Id = i32;
    }
    ::pattern_runtime::__private::inventory::submit! {
        ::pattern_runtime::__private::Registration { schema : & __SCHEMA }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Unversioned for HealthRecord {}
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
            (&&&::pattern_runtime::__private::RefProbe::<Vec<Attribute>>::new()).held()
        },
        "this field holds extended references (`Vec<Attribute>`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`Vec<Attribute>`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
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
            (&&&::pattern_runtime::__private::RefProbe::<Attribute>::new()).items()
        },
        true,
    ) {
        ::core::panic!("{}", __message)
    };
    #[automatically_derived]
    impl ::pattern_runtime::__private::Identified for HealthRecord {
        fn id(&self) -> &i32 {
            &self.id
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Relations for HealthRecord {
        const RELATIONS: &'static [::pattern_runtime::__private::RelationSide] = &[];
    }
    static __BOUNDED_0: ::pattern_runtime::__private::BoundSpec = ::pattern_runtime::__private::BoundSpec::from_parts(::pattern_runtime::__private::BoundParts {
        field: "attributes",
        max: 200u32,
    });
};

// ----- #[derive(Fields)] Attribute -----

const _: () = {
    ///The serialized field names of [`Attribute`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct AttributeFields {
        ///`name`
        pub name: ::pattern_runtime::__private::FieldName<String>,
        ///`value`
        pub value: ::pattern_runtime::__private::FieldName<bson::Bson>,
    }
    #[automatically_derived]
    impl Attribute {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: AttributeFields = AttributeFields {
            name: ::pattern_runtime::__private::FieldName::new("name"),
            value: ::pattern_runtime::__private::FieldName::new("value"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for Attribute {
        type Names = AttributeFields;
        const FIELDS: AttributeFields = Attribute::FIELDS;
        const KEYS: &'static [&'static str] = &["name", "value"];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for Attribute {
        type Inner = Attribute;
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::HeldRefs for Attribute {
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
                    field: "name",
                    in_array: "this field's items (`Attribute`) hold extended references in `name`, and the field has no mode: mark it `#[extended_ref(propagate, path = name)]` to keep the copies in sync, or `#[extended_ref(snapshot, path = name)]` to keep them as written",
                    nested: "this field holds a `Attribute`, whose `name` holds extended references: references inside a nested struct are kept in sync only from a `Vec` of items (`#[extended_ref(propagate, path = name)] items: Vec<Attribute>`); hold the reference on the model itself, or the struct in a `Vec`",
                    beside: "the items (`Attribute`) also hold extended references in `name`, which no mode covers: one field tracks one reference of its items (`path`). Hold `name`'s reference in an array of its own, or drop it from the items",
                },
            ),
            ::pattern_runtime::__private::when_held(
                || {
                    #[allow(unused_imports)]
                    use ::pattern_runtime::__private::{
                        ProbeHeld as _, ProbeItems as _, ProbeNested as _,
                        ProbeOther as _, ProbeSnapshotOnly as _, ProbeSyncable as _,
                    };
                    (&&&::pattern_runtime::__private::RefProbe::<bson::Bson>::new())
                        .held()
                },
                ::pattern_runtime::__private::HeldRef {
                    field: "value",
                    in_array: "this field's items (`Attribute`) hold extended references in `value`, and the field has no mode: mark it `#[extended_ref(propagate, path = value)]` to keep the copies in sync, or `#[extended_ref(snapshot, path = value)]` to keep them as written",
                    nested: "this field holds a `Attribute`, whose `value` holds extended references: references inside a nested struct are kept in sync only from a `Vec` of items (`#[extended_ref(propagate, path = value)] items: Vec<Attribute>`); hold the reference on the model itself, or the struct in a `Vec`",
                    beside: "the items (`Attribute`) also hold extended references in `value`, which no mode covers: one field tracks one reference of its items (`path`). Hold `value`'s reference in an array of its own, or drop it from the items",
                },
            ),
        ];
    }
};

// ----- #[derive(Model)] User -----

const _: () = {
    ///The serialized field names of [`User`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct UserFields {
        ///`_id`
        pub id: ::pattern_runtime::__private::FieldName<i32>,
        ///`country`
        pub country: ::pattern_runtime::__private::FieldName<String>,
        ///`last_login`
        pub last_login: ::pattern_runtime::__private::FieldName<DateTime>,
        ///`status`
        pub status: ::pattern_runtime::__private::FieldName<String>,
    }
    #[automatically_derived]
    impl User {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: UserFields = UserFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            country: ::pattern_runtime::__private::FieldName::new("country"),
            last_login: ::pattern_runtime::__private::FieldName::new("last_login"),
            status: ::pattern_runtime::__private::FieldName::new("status"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for User {
        type Names = UserFields;
        const FIELDS: UserFields = User::FIELDS;
        const KEYS: &'static [&'static str] = &[
            "_id",
            "country",
            "last_login",
            "status",
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
        group: ::core::option::Option::Some("indexes"),
        fields: &[
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "id",
                bson_name: "_id",
                rust_type: "i32",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "country",
                bson_name: "country",
                rust_type: "String",
                annotations: &[
                    ::pattern_runtime::__private::Annotation::Index {
                        name: "country_lastLogin_status_idx",
                    },
                ],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "last_login",
                bson_name: "last_login",
                rust_type: "DateTime",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "status",
                bson_name: "status",
                rust_type: "String",
                annotations: &[],
            }),
        ],
        indexes: &[
            ::pattern_runtime::__private::IndexSpec::from_parts(::pattern_runtime::__private::IndexParts {
                keys: &[
                    ::pattern_runtime::__private::IndexKey {
                        path: "country",
                        kind: ::pattern_runtime::__private::IndexKind::Ascending,
                    },
                    ::pattern_runtime::__private::IndexKey {
                        path: "last_login",
                        kind: ::pattern_runtime::__private::IndexKind::Descending,
                    },
                    ::pattern_runtime::__private::IndexKey {
                        path: "status",
                        kind: ::pattern_runtime::__private::IndexKind::Ascending,
                    },
                ],
                name: "country_lastLogin_status_idx",
                unique: false,
                sparse: false,
                hidden: false,
                expire_after_seconds: ::core::option::Option::None,
                collation: ::core::option::Option::None,
                partial: &[],
            }),
        ],
        shard_key: ::core::option::Option::None,
        patterns: &[],
    });
    #[automatically_derived]
    impl ::pattern_runtime::__private::Model for User {
        const SCHEMA: &'static ::pattern_runtime::__private::ModelSchema = &__SCHEMA;
        type Id = i32;
    }
    ::pattern_runtime::__private::inventory::submit! {
        ::pattern_runtime::__private::Registration { schema : & __SCHEMA }
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
    #[automatically_derived]
    impl ::pattern_runtime::__private::Identified for User {
        fn id(&self) -> &i32 {
            &self.id
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Relations for User {
        const RELATIONS: &'static [::pattern_runtime::__private::RelationSide] = &[];
    }
};

// ----- #[derive(Model)] Session -----

const _: () = {
    ///The serialized field names of [`Session`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct SessionFields {
        ///`_id`
        pub id: ::pattern_runtime::__private::FieldName<String>,
        ///`created_at`
        pub created_at: ::pattern_runtime::__private::FieldName<DateTime>,
    }
    #[automatically_derived]
    impl Session {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: SessionFields = SessionFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            created_at: ::pattern_runtime::__private::FieldName::new("created_at"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for Session {
        type Names = SessionFields;
        const FIELDS: SessionFields = Session::FIELDS;
        const KEYS: &'static [&'static str] = &["_id", "created_at"];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for Session {
        type Inner = Session;
    }
    static __SCHEMA: ::pattern_runtime::__private::ModelSchema = ::pattern_runtime::__private::ModelSchema::from_parts(::pattern_runtime::__private::SchemaParts {
        name: "Session",
        collection: "sessions",
        group: ::core::option::Option::Some("indexes"),
        fields: &[
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "id",
                bson_name: "_id",
                rust_type: "String",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "created_at",
                bson_name: "created_at",
                rust_type: "DateTime",
                annotations: &[
                    ::pattern_runtime::__private::Annotation::Index {
                        name: "session_ttl_idx",
                    },
                ],
            }),
        ],
        indexes: &[
            ::pattern_runtime::__private::IndexSpec::from_parts(::pattern_runtime::__private::IndexParts {
                keys: &[
                    ::pattern_runtime::__private::IndexKey {
                        path: "created_at",
                        kind: ::pattern_runtime::__private::IndexKind::Ascending,
                    },
                ],
                name: "session_ttl_idx",
                unique: false,
                sparse: false,
                hidden: false,
                expire_after_seconds: ::core::option::Option::Some(2592000u64),
                collation: ::core::option::Option::None,
                partial: &[],
            }),
        ],
        shard_key: ::core::option::Option::None,
        patterns: &[],
    });
    #[automatically_derived]
    impl ::pattern_runtime::__private::Model for Session {
        const SCHEMA: &'static ::pattern_runtime::__private::ModelSchema = &__SCHEMA;
        type Id = String;
    }
    ::pattern_runtime::__private::inventory::submit! {
        ::pattern_runtime::__private::Registration { schema : & __SCHEMA }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Unversioned for Session {}
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
    impl ::pattern_runtime::__private::Identified for Session {
        fn id(&self) -> &String {
            &self.id
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Relations for Session {
        const RELATIONS: &'static [::pattern_runtime::__private::RelationSide] = &[];
    }
};

// ----- #[derive(Model)] LogEntry -----

const _: () = {
    ///The serialized field names of [`LogEntry`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct LogEntryFields {
        ///`_id`
        pub id: ::pattern_runtime::__private::FieldName<bson::oid::ObjectId>,
        ///`timestamp`
        pub timestamp: ::pattern_runtime::__private::FieldName<DateTime>,
        ///`message`
        pub message: ::pattern_runtime::__private::FieldName<String>,
    }
    #[automatically_derived]
    impl LogEntry {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: LogEntryFields = LogEntryFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            timestamp: ::pattern_runtime::__private::FieldName::new("timestamp"),
            message: ::pattern_runtime::__private::FieldName::new("message"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for LogEntry {
        type Names = LogEntryFields;
        const FIELDS: LogEntryFields = LogEntry::FIELDS;
        const KEYS: &'static [&'static str] = &["_id", "timestamp", "message"];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for LogEntry {
        type Inner = LogEntry;
    }
    static __SCHEMA: ::pattern_runtime::__private::ModelSchema = ::pattern_runtime::__private::ModelSchema::from_parts(::pattern_runtime::__private::SchemaParts {
        name: "LogEntry",
        collection: "logs",
        group: ::core::option::Option::Some("indexes"),
        fields: &[
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "id",
                bson_name: "_id",
                rust_type: "bson::oid::ObjectId",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "timestamp",
                bson_name: "timestamp",
                rust_type: "DateTime",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "message",
                bson_name: "message",
                rust_type: "String",
                annotations: &[],
            }),
        ],
        indexes: &[],
        shard_key: ::core::option::Option::Some(
            &::pattern_runtime::__private::ShardKey::from_parts(::pattern_runtime::__private::ShardKeyParts {
                index: ::pattern_runtime::__private::IndexSpec::from_parts(::pattern_runtime::__private::IndexParts {
                    keys: &[
                        ::pattern_runtime::__private::IndexKey {
                            path: "_id",
                            kind: ::pattern_runtime::__private::IndexKind::Hashed,
                        },
                    ],
                    name: "_id_hashed",
                    unique: false,
                    sparse: false,
                    hidden: false,
                    expire_after_seconds: ::core::option::Option::None,
                    collation: ::core::option::Option::None,
                    partial: &[],
                }),
                allow_monotonic: false,
            }),
        ),
        patterns: &[],
    });
    #[automatically_derived]
    impl ::pattern_runtime::__private::Model for LogEntry {
        const SCHEMA: &'static ::pattern_runtime::__private::ModelSchema = &__SCHEMA;
        type Id = bson::oid::ObjectId;
    }
    ::pattern_runtime::__private::inventory::submit! {
        ::pattern_runtime::__private::Registration { schema : & __SCHEMA }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Unversioned for LogEntry {}
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::no_mode_error(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<bson::oid::ObjectId>::new())
                .held()
        },
        "this field holds extended references (`bson::oid::ObjectId`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`bson::oid::ObjectId`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
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
            (&&&::pattern_runtime::__private::RefProbe::<bson::oid::ObjectId>::new())
                .items()
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
    #[automatically_derived]
    impl ::pattern_runtime::__private::Identified for LogEntry {
        fn id(&self) -> &bson::oid::ObjectId {
            &self.id
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Relations for LogEntry {
        const RELATIONS: &'static [::pattern_runtime::__private::RelationSide] = &[];
    }
};

// ----- #[derive(Model)] Place -----

const _: () = {
    ///The serialized field names of [`Place`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct PlaceFields {
        ///`_id`
        pub id: ::pattern_runtime::__private::FieldName<i32>,
        ///`name`
        pub name: ::pattern_runtime::__private::FieldName<String>,
        ///`description`
        pub description: ::pattern_runtime::__private::FieldName<String>,
        ///`location`
        pub location: ::pattern_runtime::__private::FieldName<Document>,
    }
    #[automatically_derived]
    impl Place {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: PlaceFields = PlaceFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            name: ::pattern_runtime::__private::FieldName::new("name"),
            description: ::pattern_runtime::__private::FieldName::new("description"),
            location: ::pattern_runtime::__private::FieldName::new("location"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for Place {
        type Names = PlaceFields;
        const FIELDS: PlaceFields = Place::FIELDS;
        const KEYS: &'static [&'static str] = &[
            "_id",
            "name",
            "description",
            "location",
        ];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for Place {
        type Inner = Place;
    }
    static __SCHEMA: ::pattern_runtime::__private::ModelSchema = ::pattern_runtime::__private::ModelSchema::from_parts(::pattern_runtime::__private::SchemaParts {
        name: "Place",
        collection: "places",
        group: ::core::option::Option::Some("indexes"),
        fields: &[
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "id",
                bson_name: "_id",
                rust_type: "i32",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "name",
                bson_name: "name",
                rust_type: "String",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "description",
                bson_name: "description",
                rust_type: "String",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "location",
                bson_name: "location",
                rust_type: "Document",
                annotations: &[
                    ::pattern_runtime::__private::Annotation::Index {
                        name: "location_geo_idx",
                    },
                ],
            }),
        ],
        indexes: &[
            ::pattern_runtime::__private::IndexSpec::from_parts(::pattern_runtime::__private::IndexParts {
                keys: &[
                    ::pattern_runtime::__private::IndexKey {
                        path: "location",
                        kind: ::pattern_runtime::__private::IndexKind::Geo2dSphere,
                    },
                ],
                name: "location_geo_idx",
                unique: false,
                sparse: false,
                hidden: false,
                expire_after_seconds: ::core::option::Option::None,
                collation: ::core::option::Option::None,
                partial: &[],
            }),
        ],
        shard_key: ::core::option::Option::None,
        patterns: &[],
    });
    #[automatically_derived]
    impl ::pattern_runtime::__private::Model for Place {
        const SCHEMA: &'static ::pattern_runtime::__private::ModelSchema = &__SCHEMA;
        type Id = i32;
    }
    ::pattern_runtime::__private::inventory::submit! {
        ::pattern_runtime::__private::Registration { schema : & __SCHEMA }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Unversioned for Place {}
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
            (&&&::pattern_runtime::__private::RefProbe::<Document>::new()).held()
        },
        "this field holds extended references (`Document`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`Document`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
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
            (&&&::pattern_runtime::__private::RefProbe::<Document>::new()).items()
        },
        false,
    ) {
        ::core::panic!("{}", __message)
    };
    #[automatically_derived]
    impl ::pattern_runtime::__private::Identified for Place {
        fn id(&self) -> &i32 {
            &self.id
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Relations for Place {
        const RELATIONS: &'static [::pattern_runtime::__private::RelationSide] = &[];
    }
};

