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
        ///`posts`
        pub posts: ::pattern_runtime::__private::FieldName<Vec<Post>>,
        ///`isOutlier`
        pub is_outlier: ::pattern_runtime::__private::FieldName<bool>,
        ///`postsCount`
        pub posts_count: ::pattern_runtime::__private::FieldName<i64>,
    }
    #[automatically_derived]
    impl User {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: UserFields = UserFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            name: ::pattern_runtime::__private::FieldName::new("name"),
            posts: ::pattern_runtime::__private::FieldName::new("posts"),
            is_outlier: ::pattern_runtime::__private::FieldName::new("isOutlier"),
            posts_count: ::pattern_runtime::__private::FieldName::new("postsCount"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for User {
        type Names = UserFields;
        const FIELDS: UserFields = User::FIELDS;
        const KEYS: &'static [&'static str] = &[
            "_id",
            "name",
            "posts",
            "isOutlier",
            "postsCount",
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
        group: ::core::option::Option::Some("outlier"),
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
                rust_name: "posts",
                bson_name: "posts",
                rust_type: "Vec<Post>",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "is_outlier",
                bson_name: "isOutlier",
                rust_type: "bool",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "posts_count",
                bson_name: "postsCount",
                rust_type: "i64",
                annotations: &[],
            }),
        ],
        indexes: &[],
        shard_key: ::core::option::Option::None,
        patterns: &[&__OUTLIER_POSTS],
    });
    #[automatically_derived]
    impl ::pattern_runtime::__private::Model for User {
        const SCHEMA: &'static ::pattern_runtime::__private::ModelSchema = &__SCHEMA;
        type Id = String;
    }
    ::pattern_runtime::__private::inventory::submit! {
        ::pattern_runtime::__private::Registration { schema : & __SCHEMA }
    }
    static __OUTLIER_POSTS: ::pattern_runtime::__private::OutlierSpec = ::pattern_runtime::__private::OutlierSpec::from_parts(::pattern_runtime::__private::OutlierParts {
        field: "posts",
        limit: 5u32,
        capacity: 10u32,
        max_bytes: 8388608u32,
        overflow: "user_posts",
        parent: "userId",
        flag: User::FIELDS.is_outlier.as_str(),
        count: User::FIELDS.posts_count.as_str(),
        index: ::pattern_runtime::__private::IndexSpec::from_parts(::pattern_runtime::__private::IndexParts {
            keys: &[
                ::pattern_runtime::__private::IndexKey {
                    path: "userId",
                    kind: ::pattern_runtime::__private::IndexKind::Ascending,
                },
                ::pattern_runtime::__private::IndexKey {
                    path: "seq",
                    kind: ::pattern_runtime::__private::IndexKind::Ascending,
                },
            ],
            name: "userId_1_seq_1",
            unique: true,
            sparse: false,
            hidden: false,
            expire_after_seconds: ::core::option::Option::None,
            collation: ::core::option::Option::None,
            partial: &[],
        }),
    });
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::unless(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeBool as _, ProbeFloat as _, ProbeInteger as _, ProbeNumeric as _,
                ProbeOptional as _, ProbeOtherCheck as _,
            };
            (&&::pattern_runtime::__private::CheckProbe::of(User::FIELDS.is_outlier))
                .boolean()
        },
        "`is_outlier` is the outlier flag: make it a `bool`",
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
            (&&::pattern_runtime::__private::CheckProbe::of(User::FIELDS.posts_count))
                .integer()
        },
        "`posts_count` counts every item of the outlier array: use an integer (i64, i32 or u32)",
    ) {
        ::core::panic!("{}", __message)
    };
    #[automatically_derived]
    impl User {
        ///The operations of the `posts` outlier array: 5 items in the document, the rest in `user_posts`, 10 per document.
        pub fn posts_outlier(
            db: &::pattern_runtime::__private::Database,
        ) -> ::pattern_runtime::__private::Outlier<User, Post> {
            ::pattern_runtime::__private::Outlier::new(db, &__OUTLIER_POSTS)
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
            (&&&::pattern_runtime::__private::RefProbe::<Vec<Post>>::new()).held()
        },
        "this field holds extended references (`Vec<Post>`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`Vec<Post>`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
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
            (&&&::pattern_runtime::__private::RefProbe::<Post>::new()).items()
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
            (&&&::pattern_runtime::__private::RefProbe::<bool>::new()).held()
        },
        "this field holds extended references (`bool`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`bool`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
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
            (&&&::pattern_runtime::__private::RefProbe::<bool>::new()).items()
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

