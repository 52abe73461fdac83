// ----- #[derive(Model)] Category -----

const _: () = {
    ///The serialized field names of [`Category`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct CategoryFields {
        ///`_id`
        pub id: ::pattern_runtime::__private::FieldName<ObjectId>,
        ///`name`
        pub name: ::pattern_runtime::__private::FieldName<String>,
        ///`parent`
        pub parent: ::pattern_runtime::__private::FieldName<Option<String>>,
        ///`ancestors`
        pub ancestors: ::pattern_runtime::__private::FieldName<Vec<String>>,
    }
    #[automatically_derived]
    impl Category {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: CategoryFields = CategoryFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            name: ::pattern_runtime::__private::FieldName::new("name"),
            parent: ::pattern_runtime::__private::FieldName::new("parent"),
            ancestors: ::pattern_runtime::__private::FieldName::new("ancestors"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for Category {
        type Names = CategoryFields;
        const FIELDS: CategoryFields = Category::FIELDS;
        const KEYS: &'static [&'static str] = &["_id", "name", "parent", "ancestors"];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for Category {
        type Inner = Category;
    }
    static __SCHEMA: ::pattern_runtime::__private::ModelSchema = ::pattern_runtime::__private::ModelSchema::from_parts(::pattern_runtime::__private::SchemaParts {
        name: "Category",
        collection: "categories",
        group: ::core::option::Option::Some("tree"),
        fields: &[
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "id",
                bson_name: "_id",
                rust_type: "ObjectId",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "name",
                bson_name: "name",
                rust_type: "String",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "parent",
                bson_name: "parent",
                rust_type: "Option<String>",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "ancestors",
                bson_name: "ancestors",
                rust_type: "Vec<String>",
                annotations: &[],
            }),
        ],
        indexes: &[],
        shard_key: ::core::option::Option::None,
        patterns: &[&__TREE],
    });
    #[automatically_derived]
    impl ::pattern_runtime::__private::Model for Category {
        const SCHEMA: &'static ::pattern_runtime::__private::ModelSchema = &__SCHEMA;
        type Id = ObjectId;
    }
    ::pattern_runtime::__private::inventory::submit! {
        ::pattern_runtime::__private::Registration { schema : & __SCHEMA }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Unversioned for Category {}
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::no_mode_error(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<ObjectId>::new()).held()
        },
        "this field holds extended references (`ObjectId`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`ObjectId`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
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
            (&&&::pattern_runtime::__private::RefProbe::<ObjectId>::new()).items()
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
            (&&&::pattern_runtime::__private::RefProbe::<Option<String>>::new()).held()
        },
        "this field holds extended references (`Option<String>`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`Option<String>`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
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
            (&&&::pattern_runtime::__private::RefProbe::<Vec<String>>::new()).held()
        },
        "this field holds extended references (`Vec<String>`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`Vec<String>`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
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
        true,
    ) {
        ::core::panic!("{}", __message)
    };
    #[automatically_derived]
    impl ::pattern_runtime::__private::Identified for Category {
        fn id(&self) -> &ObjectId {
            &self.id
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Relations for Category {
        const RELATIONS: &'static [::pattern_runtime::__private::RelationSide] = &[];
    }
    static __TREE: ::pattern_runtime::__private::TreeSpec = ::pattern_runtime::__private::TreeSpec::from_parts(::pattern_runtime::__private::TreeParts {
        model: "Category",
        collection: "categories",
        key: "name",
        parent: "parent",
        ancestors: "ancestors",
        indexes: &[
            ::pattern_runtime::__private::IndexSpec::from_parts(::pattern_runtime::__private::IndexParts {
                keys: &[
                    ::pattern_runtime::__private::IndexKey {
                        path: "parent",
                        kind: ::pattern_runtime::__private::IndexKind::Ascending,
                    },
                ],
                name: "parent_1",
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
                        path: "ancestors",
                        kind: ::pattern_runtime::__private::IndexKind::Ascending,
                    },
                ],
                name: "ancestors_1",
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
                        path: "name",
                        kind: ::pattern_runtime::__private::IndexKind::Ascending,
                    },
                ],
                name: "name_1",
                unique: true,
                sparse: false,
                hidden: false,
                expire_after_seconds: ::core::option::Option::None,
                collation: ::core::option::Option::None,
                partial: &[],
            }),
        ],
    });
    const _: () = if let ::core::option::Option::Some(__message) = if ::pattern_runtime::__private::passes(||
    {
        #[allow(unused_imports)]
        use ::pattern_runtime::__private::{
            ProbeKey as _, ProbeKeys as _, ProbeOptionalKey as _, ProbeOtherKey as _,
        };
        (&&::pattern_runtime::__private::KeyProbe::<
            _,
            String,
        >::of_field(Category::FIELDS.parent))
            .optional_key()
    }) {
        ::core::option::Option::None
    } else {
        ::core::option::Option::Some(
            "`parent` holds the parent's key: make it `Option<String>`, the type of `name` in an Option (`None` for a root)",
        )
    } {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = if ::pattern_runtime::__private::passes(||
    {
        #[allow(unused_imports)]
        use ::pattern_runtime::__private::{
            ProbeKey as _, ProbeKeys as _, ProbeOptionalKey as _, ProbeOtherKey as _,
        };
        (&&::pattern_runtime::__private::KeyProbe::<
            _,
            String,
        >::of_field(Category::FIELDS.ancestors))
            .keys()
    }) {
        ::core::option::Option::None
    } else {
        ::core::option::Option::Some(
            "`ancestors` holds the keys of the ancestors, root first: make it `Vec<String>`, a Vec of the type of `name`",
        )
    } {
        ::core::panic!("{}", __message)
    };
    #[automatically_derived]
    impl ::pattern_runtime::__private::TreeNode for Category {
        type Key = String;
        const TREE: &'static ::pattern_runtime::__private::TreeSpec = &__TREE;
    }
    #[automatically_derived]
    impl Category {
        ///The tree of `Category`: its nodes, their subtrees and the documents placed in them.
        pub fn tree(
            db: &::pattern_runtime::__private::Database,
        ) -> ::pattern_runtime::__private::Tree<Category> {
            ::pattern_runtime::__private::Tree::new(db)
        }
    }
};

// ----- #[derive(Model)] Product -----

const _: () = {
    ///The serialized field names of [`Product`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct ProductFields {
        ///`_id`
        pub id: ::pattern_runtime::__private::FieldName<ObjectId>,
        ///`name`
        pub name: ::pattern_runtime::__private::FieldName<String>,
        ///`directCategory`
        pub direct_category: ::pattern_runtime::__private::FieldName<String>,
        ///`categoryPath`
        pub category_path: ::pattern_runtime::__private::FieldName<Vec<String>>,
    }
    #[automatically_derived]
    impl Product {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: ProductFields = ProductFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            name: ::pattern_runtime::__private::FieldName::new("name"),
            direct_category: ::pattern_runtime::__private::FieldName::new(
                "directCategory",
            ),
            category_path: ::pattern_runtime::__private::FieldName::new("categoryPath"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for Product {
        type Names = ProductFields;
        const FIELDS: ProductFields = Product::FIELDS;
        const KEYS: &'static [&'static str] = &[
            "_id",
            "name",
            "directCategory",
            "categoryPath",
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
        group: ::core::option::Option::Some("tree"),
        fields: &[
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "id",
                bson_name: "_id",
                rust_type: "ObjectId",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "name",
                bson_name: "name",
                rust_type: "String",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "direct_category",
                bson_name: "directCategory",
                rust_type: "String",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "category_path",
                bson_name: "categoryPath",
                rust_type: "Vec<String>",
                annotations: &[],
            }),
        ],
        indexes: &[],
        shard_key: ::core::option::Option::None,
        patterns: &[&__IN_TREE_0],
    });
    #[automatically_derived]
    impl ::pattern_runtime::__private::Model for Product {
        const SCHEMA: &'static ::pattern_runtime::__private::ModelSchema = &__SCHEMA;
        type Id = ObjectId;
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
            (&&&::pattern_runtime::__private::RefProbe::<ObjectId>::new()).held()
        },
        "this field holds extended references (`ObjectId`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`ObjectId`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
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
            (&&&::pattern_runtime::__private::RefProbe::<ObjectId>::new()).items()
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
            (&&&::pattern_runtime::__private::RefProbe::<Vec<String>>::new()).held()
        },
        "this field holds extended references (`Vec<String>`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`Vec<String>`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
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
        true,
    ) {
        ::core::panic!("{}", __message)
    };
    #[automatically_derived]
    impl ::pattern_runtime::__private::Identified for Product {
        fn id(&self) -> &ObjectId {
            &self.id
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Relations for Product {
        const RELATIONS: &'static [::pattern_runtime::__private::RelationSide] = &[];
    }
    trait __TreeOf {
        type Tree;
        type Key;
        const TREE: &'static ::pattern_runtime::__private::TreeSpec;
    }
    struct __InTree0;
    impl __TreeOf for __InTree0 {
        type Tree = Category;
        type Key = <Category as ::pattern_runtime::__private::TreeNode>::Key;
        const TREE: &'static ::pattern_runtime::__private::TreeSpec = <Category as ::pattern_runtime::__private::TreeNode>::TREE;
    }
    static __IN_TREE_0: ::pattern_runtime::__private::HolderSpec = ::pattern_runtime::__private::HolderSpec::from_parts(::pattern_runtime::__private::HolderParts {
        model: "Product",
        collection: "products",
        tree: <__InTree0 as __TreeOf>::TREE,
        node: "directCategory",
        path: "categoryPath",
        indexes: &[
            ::pattern_runtime::__private::IndexSpec::from_parts(::pattern_runtime::__private::IndexParts {
                keys: &[
                    ::pattern_runtime::__private::IndexKey {
                        path: "directCategory",
                        kind: ::pattern_runtime::__private::IndexKind::Ascending,
                    },
                ],
                name: "directCategory_1",
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
                        path: "categoryPath",
                        kind: ::pattern_runtime::__private::IndexKind::Ascending,
                    },
                ],
                name: "categoryPath_1",
                unique: false,
                sparse: false,
                hidden: false,
                expire_after_seconds: ::core::option::Option::None,
                collation: ::core::option::Option::None,
                partial: &[],
            }),
        ],
    });
    const _: () = if let ::core::option::Option::Some(__message) = if ::pattern_runtime::__private::passes(||
    {
        #[allow(unused_imports)]
        use ::pattern_runtime::__private::{
            ProbeKey as _, ProbeKeys as _, ProbeOptionalKey as _, ProbeOtherKey as _,
        };
        (&&::pattern_runtime::__private::KeyProbe::<
            _,
            <__InTree0 as __TreeOf>::Key,
        >::of_field(Product::FIELDS.direct_category))
            .key()
    })
        || ::pattern_runtime::__private::passes(|| {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeKey as _, ProbeKeys as _, ProbeOptionalKey as _, ProbeOtherKey as _,
            };
            (&&::pattern_runtime::__private::KeyProbe::<
                _,
                <__InTree0 as __TreeOf>::Key,
            >::of_field(Product::FIELDS.direct_category))
                .optional_key()
        })
    {
        ::core::option::Option::None
    } else {
        ::core::option::Option::Some(
            "`direct_category` holds the key of the `Category` node the document sits in: give it the type of `Category`'s key, or an Option of it",
        )
    } {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = if ::pattern_runtime::__private::passes(||
    {
        #[allow(unused_imports)]
        use ::pattern_runtime::__private::{
            ProbeKey as _, ProbeKeys as _, ProbeOptionalKey as _, ProbeOtherKey as _,
        };
        (&&::pattern_runtime::__private::KeyProbe::<
            _,
            <__InTree0 as __TreeOf>::Key,
        >::of_field(Product::FIELDS.category_path))
            .keys()
    }) {
        ::core::option::Option::None
    } else {
        ::core::option::Option::Some(
            "`category_path` holds the path of the document's node, root first: make it a Vec of `Category`'s key type",
        )
    } {
        ::core::panic!("{}", __message)
    };
    #[automatically_derived]
    impl ::pattern_runtime::__private::InTree<<__InTree0 as __TreeOf>::Tree>
    for Product {
        const HOLDER: &'static ::pattern_runtime::__private::HolderSpec = &__IN_TREE_0;
    }
};

