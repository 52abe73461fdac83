// ----- #[derive(Model)] Person -----

const _: () = {
    ///The serialized field names of [`Person`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct PersonFields {
        ///`_id`
        pub id: ::pattern_runtime::__private::FieldName<ObjectId>,
        ///`name`
        pub name: ::pattern_runtime::__private::FieldName<String>,
        ///`ssn`
        pub ssn: ::pattern_runtime::__private::FieldName<String>,
        ///`addresses`
        pub addresses: ::pattern_runtime::__private::FieldName<Vec<Address>>,
        ///`tasks`
        pub tasks: ::pattern_runtime::__private::FieldName<Vec<Ref<Task>>>,
    }
    #[automatically_derived]
    impl Person {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: PersonFields = PersonFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            name: ::pattern_runtime::__private::FieldName::new("name"),
            ssn: ::pattern_runtime::__private::FieldName::new("ssn"),
            addresses: ::pattern_runtime::__private::FieldName::new("addresses"),
            tasks: ::pattern_runtime::__private::FieldName::new("tasks"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for Person {
        type Names = PersonFields;
        const FIELDS: PersonFields = Person::FIELDS;
        const KEYS: &'static [&'static str] = &[
            "_id",
            "name",
            "ssn",
            "addresses",
            "tasks",
        ];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for Person {
        type Inner = Person;
    }
    static __SCHEMA: ::pattern_runtime::__private::ModelSchema = ::pattern_runtime::__private::ModelSchema::from_parts(::pattern_runtime::__private::SchemaParts {
        name: "Person",
        collection: "person",
        group: ::core::option::Option::Some("relation"),
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
                rust_name: "ssn",
                bson_name: "ssn",
                rust_type: "String",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "addresses",
                bson_name: "addresses",
                rust_type: "Vec<Address>",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "tasks",
                bson_name: "tasks",
                rust_type: "Vec<Ref<Task>>",
                annotations: &[],
            }),
        ],
        indexes: &[],
        shard_key: ::core::option::Option::None,
        patterns: &[&__RELATION_0, &__BOUNDED_0, &__BOUNDED_1],
    });
    #[automatically_derived]
    impl ::pattern_runtime::__private::Model for Person {
        const SCHEMA: &'static ::pattern_runtime::__private::ModelSchema = &__SCHEMA;
        type Id = ObjectId;
    }
    ::pattern_runtime::__private::inventory::submit! {
        ::pattern_runtime::__private::Registration { schema : & __SCHEMA }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Unversioned for Person {}
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
            (&&&::pattern_runtime::__private::RefProbe::<Vec<Address>>::new()).held()
        },
        "this field holds extended references (`Vec<Address>`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`Vec<Address>`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
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
            (&&&::pattern_runtime::__private::RefProbe::<Address>::new()).items()
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
            (&&&::pattern_runtime::__private::RefProbe::<Vec<Ref<Task>>>::new()).held()
        },
        "this field holds extended references (`Vec<Ref<Task>>`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`Vec<Ref<Task>>`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
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
            (&&&::pattern_runtime::__private::RefProbe::<Ref<Task>>::new()).items()
        },
        true,
    ) {
        ::core::panic!("{}", __message)
    };
    #[automatically_derived]
    impl ::pattern_runtime::__private::Identified for Person {
        fn id(&self) -> &ObjectId {
            &self.id
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Relations for Person {
        const RELATIONS: &'static [::pattern_runtime::__private::RelationSide] = &[
            ::pattern_runtime::__private::RelationSide {
                rust: "tasks",
                bson: "tasks",
                target: <<Vec<
                    Ref<Task>,
                > as ::pattern_runtime::__private::RefField>::Target as ::pattern_runtime::__private::Model>::SCHEMA
                    .name(),
                inverse: ::core::option::Option::Some("owner"),
                many: true,
            },
        ];
    }
    const _: ::core::option::Option<
        fn() -> <Vec<Ref<Task>> as ::pattern_runtime::__private::RefField>::Target,
    > = ::core::convert::identity({
        if let ::core::option::Option::Some(__message) = if <Vec<
            Ref<Task>,
        > as ::pattern_runtime::__private::RefField>::MANY == true
        {
            ::core::option::Option::None
        } else {
            ::core::option::Option::Some(
                "`tasks` is not an array of references although its type reads like one: write `Vec<..>` or `Option<Vec<..>>` of `Ref<T>` in the field's type",
            )
        } {
            ::core::panic!("{}", __message)
        }
        ::core::option::Option::None
    });
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::inverse_error(
        <<Vec<
            Ref<Task>,
        > as ::pattern_runtime::__private::RefField>::Target as ::pattern_runtime::__private::Relations>::RELATIONS,
        "owner",
        "Person",
        "tasks",
        true,
        [
            "`Task` has no `#[relation]` field `owner`: both sides of a two-way relation name each other; declare `#[relation(inverse = tasks)] owner: Ref<Person>` on `Task`",
            "`Task.owner` does not refer to `Person`: the other side of `Person.tasks` refers back to `Person` (`#[relation(inverse = tasks)] owner: Ref<Person>`)",
            "`Task.owner` does not name `tasks` back: both sides of a two-way relation name each other; write `#[relation(inverse = tasks)]` on `Task.owner`",
            "`Person.tasks` and `Task.owner` are both arrays: a two-way relation has one array side (the owner's list) and one single reference (each child's owner); make the child's side `Ref<..>` or `Option<Ref<..>>`, or, for many-to-many, drop `inverse` on both sides (`#[relation]`)",
            "`Person.tasks` and `Task.owner` are both single references: a two-way relation has one array side (the owner's list) and one single reference (each child's owner); make the owner's side `Vec<Ref<..>>`, or, for one-to-one, drop `inverse` on both sides (`#[relation]`)",
        ],
    ) {
        ::core::panic!("{}", __message)
    };
    static __RELATION_0: ::pattern_runtime::__private::RelationSpec = ::pattern_runtime::__private::RelationSpec::from_parts(::pattern_runtime::__private::RelationParts {
        model: &__SCHEMA,
        field: "tasks",
        target: || {
            <<Vec<
                Ref<Task>,
            > as ::pattern_runtime::__private::RefField>::Target as ::pattern_runtime::__private::Model>::SCHEMA
        },
        kind: ::pattern_runtime::__private::RelationKind::TwoWay,
        many: true,
        inverse: ::core::option::Option::Some("owner"),
        index: ::core::option::Option::Some(
            ::pattern_runtime::__private::IndexSpec::from_parts(::pattern_runtime::__private::IndexParts {
                keys: &[
                    ::pattern_runtime::__private::IndexKey {
                        path: "tasks",
                        kind: ::pattern_runtime::__private::IndexKind::Ascending,
                    },
                ],
                name: "tasks_1",
                unique: false,
                sparse: false,
                hidden: false,
                expire_after_seconds: ::core::option::Option::None,
                collation: ::core::option::Option::None,
                partial: &[],
            }),
        ),
        sort: &[],
    });
    #[automatically_derived]
    impl Person {
        ///The relation `tasks` (`tasks`): batch loading of the referenced documents.
        pub fn tasks_relation(
            db: &::pattern_runtime::__private::Database,
        ) -> ::pattern_runtime::__private::Relation<
            Person,
            <Vec<Ref<Task>> as ::pattern_runtime::__private::RefField>::Target,
        > {
            ::pattern_runtime::__private::Relation::new(
                db,
                &__RELATION_0,
                |s: &Person| <Vec<
                    Ref<Task>,
                > as ::pattern_runtime::__private::RefField>::ids(&s.tasks),
            )
        }
    }
    static __BOUNDED_0: ::pattern_runtime::__private::BoundSpec = ::pattern_runtime::__private::BoundSpec::from_parts(::pattern_runtime::__private::BoundParts {
        field: "addresses",
        max: 10u32,
    });
    static __BOUNDED_1: ::pattern_runtime::__private::BoundSpec = ::pattern_runtime::__private::BoundSpec::from_parts(::pattern_runtime::__private::BoundParts {
        field: "tasks",
        max: 1000u32,
    });
};

// ----- #[derive(Model)] Task -----

const _: () = {
    ///The serialized field names of [`Task`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct TaskFields {
        ///`_id`
        pub id: ::pattern_runtime::__private::FieldName<ObjectId>,
        ///`description`
        pub description: ::pattern_runtime::__private::FieldName<String>,
        ///`due_date`
        pub due_date: ::pattern_runtime::__private::FieldName<DateTime>,
        ///`owner`
        pub owner: ::pattern_runtime::__private::FieldName<Ref<Person>>,
    }
    #[automatically_derived]
    impl Task {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: TaskFields = TaskFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            description: ::pattern_runtime::__private::FieldName::new("description"),
            due_date: ::pattern_runtime::__private::FieldName::new("due_date"),
            owner: ::pattern_runtime::__private::FieldName::new("owner"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for Task {
        type Names = TaskFields;
        const FIELDS: TaskFields = Task::FIELDS;
        const KEYS: &'static [&'static str] = &[
            "_id",
            "description",
            "due_date",
            "owner",
        ];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for Task {
        type Inner = Task;
    }
    static __SCHEMA: ::pattern_runtime::__private::ModelSchema = ::pattern_runtime::__private::ModelSchema::from_parts(::pattern_runtime::__private::SchemaParts {
        name: "Task",
        collection: "tasks",
        group: ::core::option::Option::Some("relation"),
        fields: &[
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "id",
                bson_name: "_id",
                rust_type: "ObjectId",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "description",
                bson_name: "description",
                rust_type: "String",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "due_date",
                bson_name: "due_date",
                rust_type: "DateTime",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "owner",
                bson_name: "owner",
                rust_type: "Ref<Person>",
                annotations: &[],
            }),
        ],
        indexes: &[],
        shard_key: ::core::option::Option::None,
        patterns: &[&__RELATION_0],
    });
    #[automatically_derived]
    impl ::pattern_runtime::__private::Model for Task {
        const SCHEMA: &'static ::pattern_runtime::__private::ModelSchema = &__SCHEMA;
        type Id = ObjectId;
    }
    ::pattern_runtime::__private::inventory::submit! {
        ::pattern_runtime::__private::Registration { schema : & __SCHEMA }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Unversioned for Task {}
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
            (&&&::pattern_runtime::__private::RefProbe::<Ref<Person>>::new()).held()
        },
        "this field holds extended references (`Ref<Person>`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`Ref<Person>`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
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
            (&&&::pattern_runtime::__private::RefProbe::<Ref<Person>>::new()).items()
        },
        false,
    ) {
        ::core::panic!("{}", __message)
    };
    #[automatically_derived]
    impl ::pattern_runtime::__private::Identified for Task {
        fn id(&self) -> &ObjectId {
            &self.id
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Relations for Task {
        const RELATIONS: &'static [::pattern_runtime::__private::RelationSide] = &[
            ::pattern_runtime::__private::RelationSide {
                rust: "owner",
                bson: "owner",
                target: <<Ref<
                    Person,
                > as ::pattern_runtime::__private::RefField>::Target as ::pattern_runtime::__private::Model>::SCHEMA
                    .name(),
                inverse: ::core::option::Option::Some("tasks"),
                many: false,
            },
        ];
    }
    const _: ::core::option::Option<
        fn() -> <Ref<Person> as ::pattern_runtime::__private::RefField>::Target,
    > = ::core::convert::identity({
        if let ::core::option::Option::Some(__message) = if <Ref<
            Person,
        > as ::pattern_runtime::__private::RefField>::MANY == false
        {
            ::core::option::Option::None
        } else {
            ::core::option::Option::Some(
                "`owner` holds an array of references, which the derive cannot see in its type: write `Vec<Ref<T>>` (or `Option<Vec<Ref<T>>>`) in the field's type, not an alias",
            )
        } {
            ::core::panic!("{}", __message)
        }
        ::core::option::Option::None
    });
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::inverse_error(
        <<Ref<
            Person,
        > as ::pattern_runtime::__private::RefField>::Target as ::pattern_runtime::__private::Relations>::RELATIONS,
        "tasks",
        "Task",
        "owner",
        false,
        [
            "`Person` has no `#[relation]` field `tasks`: both sides of a two-way relation name each other; declare `#[relation(inverse = owner)] tasks: Vec<Ref<Task>>` on `Person`",
            "`Person.tasks` does not refer to `Task`: the other side of `Task.owner` refers back to `Task` (`#[relation(inverse = owner)] tasks: Vec<Ref<Task>>`)",
            "`Person.tasks` does not name `owner` back: both sides of a two-way relation name each other; write `#[relation(inverse = owner)]` on `Person.tasks`",
            "`Task.owner` and `Person.tasks` are both arrays: a two-way relation has one array side (the owner's list) and one single reference (each child's owner); make the child's side `Ref<..>` or `Option<Ref<..>>`, or, for many-to-many, drop `inverse` on both sides (`#[relation]`)",
            "`Task.owner` and `Person.tasks` are both single references: a two-way relation has one array side (the owner's list) and one single reference (each child's owner); make the owner's side `Vec<Ref<..>>`, or, for one-to-one, drop `inverse` on both sides (`#[relation]`)",
        ],
    ) {
        ::core::panic!("{}", __message)
    };
    static __RELATION_0: ::pattern_runtime::__private::RelationSpec = ::pattern_runtime::__private::RelationSpec::from_parts(::pattern_runtime::__private::RelationParts {
        model: &__SCHEMA,
        field: "owner",
        target: || {
            <<Ref<
                Person,
            > as ::pattern_runtime::__private::RefField>::Target as ::pattern_runtime::__private::Model>::SCHEMA
        },
        kind: ::pattern_runtime::__private::RelationKind::TwoWay,
        many: false,
        inverse: ::core::option::Option::Some("tasks"),
        index: ::core::option::Option::Some(
            ::pattern_runtime::__private::IndexSpec::from_parts(::pattern_runtime::__private::IndexParts {
                keys: &[
                    ::pattern_runtime::__private::IndexKey {
                        path: "owner",
                        kind: ::pattern_runtime::__private::IndexKind::Ascending,
                    },
                ],
                name: "owner_1",
                unique: false,
                sparse: false,
                hidden: false,
                expire_after_seconds: ::core::option::Option::None,
                collation: ::core::option::Option::None,
                partial: &[],
            }),
        ),
        sort: &[],
    });
    #[automatically_derived]
    impl Task {
        ///The two-way relation `owner` (`owner`): assign, check and repair, and loading.
        pub fn owner_relation(
            db: &::pattern_runtime::__private::Database,
        ) -> ::pattern_runtime::__private::TwoWay<
            Task,
            <Ref<Person> as ::pattern_runtime::__private::RefField>::Target,
        > {
            ::pattern_runtime::__private::TwoWay::new(
                db,
                &__RELATION_0,
                |s: &Task| <Ref<
                    Person,
                > as ::pattern_runtime::__private::RefField>::ids(&s.owner),
            )
        }
    }
};

// ----- #[derive(Model)] Part -----

///An extended reference to a [`Part`]: `_id`, `name` copied from it. Build it from a loaded document with `PartName::from(&part)`. Generated by `#[extended_ref(PartName(..))]`.
#[derive(
    ::core::fmt::Debug,
    ::pattern_runtime::__private::serde::Serialize,
    ::pattern_runtime::__private::serde::Deserialize,
)]
#[serde(crate = "::pattern_runtime::__private::serde")]
pub struct PartName {
    ///`_id`, copied from `Part::id`.
    #[serde(rename = "_id")]
    pub id: ObjectId,
    ///`name`, copied from `Part::name`.
    #[serde(rename = "name")]
    pub name: String,
}
const _: () = {
    ///The serialized field names of [`Part`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct PartFields {
        ///`_id`
        pub id: ::pattern_runtime::__private::FieldName<ObjectId>,
        ///`partno`
        pub partno: ::pattern_runtime::__private::FieldName<String>,
        ///`name`
        pub name: ::pattern_runtime::__private::FieldName<String>,
        ///`qty`
        pub qty: ::pattern_runtime::__private::FieldName<i32>,
        ///`cost`
        pub cost: ::pattern_runtime::__private::FieldName<f64>,
        ///`price`
        pub price: ::pattern_runtime::__private::FieldName<f64>,
    }
    #[automatically_derived]
    impl Part {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: PartFields = PartFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            partno: ::pattern_runtime::__private::FieldName::new("partno"),
            name: ::pattern_runtime::__private::FieldName::new("name"),
            qty: ::pattern_runtime::__private::FieldName::new("qty"),
            cost: ::pattern_runtime::__private::FieldName::new("cost"),
            price: ::pattern_runtime::__private::FieldName::new("price"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for Part {
        type Names = PartFields;
        const FIELDS: PartFields = Part::FIELDS;
        const KEYS: &'static [&'static str] = &[
            "_id",
            "partno",
            "name",
            "qty",
            "cost",
            "price",
        ];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for Part {
        type Inner = Part;
    }
    static __SCHEMA: ::pattern_runtime::__private::ModelSchema = ::pattern_runtime::__private::ModelSchema::from_parts(::pattern_runtime::__private::SchemaParts {
        name: "Part",
        collection: "parts",
        group: ::core::option::Option::Some("relation"),
        fields: &[
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "id",
                bson_name: "_id",
                rust_type: "ObjectId",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "partno",
                bson_name: "partno",
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
                rust_name: "qty",
                bson_name: "qty",
                rust_type: "i32",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "cost",
                bson_name: "cost",
                rust_type: "f64",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "price",
                bson_name: "price",
                rust_type: "f64",
                annotations: &[],
            }),
        ],
        indexes: &[],
        shard_key: ::core::option::Option::None,
        patterns: &[&__REF_0],
    });
    #[automatically_derived]
    impl ::pattern_runtime::__private::Model for Part {
        const SCHEMA: &'static ::pattern_runtime::__private::ModelSchema = &__SCHEMA;
        type Id = ObjectId;
    }
    ::pattern_runtime::__private::inventory::submit! {
        ::pattern_runtime::__private::Registration { schema : & __SCHEMA }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Unversioned for Part {}
    #[automatically_derived]
    impl ::core::clone::Clone for PartName {
        fn clone(&self) -> Self {
            PartName {
                id: ::pattern_runtime::__private::Copied::<PartName>::copied(&self.id),
                name: ::pattern_runtime::__private::Copied::<
                    PartName,
                >::copied(&self.name),
            }
        }
    }
    #[automatically_derived]
    impl ::core::convert::From<&Part> for PartName {
        fn from(source: &Part) -> Self {
            PartName {
                id: ::pattern_runtime::__private::Copied::<PartName>::copied(&source.id),
                name: ::pattern_runtime::__private::Copied::<
                    PartName,
                >::copied(&source.name),
            }
        }
    }
    static __REF_0: ::pattern_runtime::__private::RefSpec = ::pattern_runtime::__private::RefSpec::from_parts(::pattern_runtime::__private::RefParts {
        name: "PartName",
        source: "Part",
        source_collection: "parts",
        fields: &["name"],
        snapshot_only: false,
    });
    #[automatically_derived]
    impl ::pattern_runtime::__private::ExtendedRef for PartName {
        type Source = Part;
        const SPEC: &'static ::pattern_runtime::__private::RefSpec = &__REF_0;
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Propagatable for PartName {}
    #[automatically_derived]
    impl ::pattern_runtime::__private::Reference for PartName {
        type Target = Part;
        fn target_id(&self) -> &<Part as ::pattern_runtime::__private::Model>::Id {
            &self.id
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Referenced for Part {}
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
    #[automatically_derived]
    impl ::pattern_runtime::__private::Identified for Part {
        fn id(&self) -> &ObjectId {
            &self.id
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Relations for Part {
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
        pub id: ::pattern_runtime::__private::FieldName<ObjectId>,
        ///`name`
        pub name: ::pattern_runtime::__private::FieldName<String>,
        ///`manufacturer`
        pub manufacturer: ::pattern_runtime::__private::FieldName<String>,
        ///`catalog_number`
        pub catalog_number: ::pattern_runtime::__private::FieldName<i32>,
        ///`parts`
        pub parts: ::pattern_runtime::__private::FieldName<Vec<Ref<Part>>>,
    }
    #[automatically_derived]
    impl Product {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: ProductFields = ProductFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            name: ::pattern_runtime::__private::FieldName::new("name"),
            manufacturer: ::pattern_runtime::__private::FieldName::new("manufacturer"),
            catalog_number: ::pattern_runtime::__private::FieldName::new(
                "catalog_number",
            ),
            parts: ::pattern_runtime::__private::FieldName::new("parts"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for Product {
        type Names = ProductFields;
        const FIELDS: ProductFields = Product::FIELDS;
        const KEYS: &'static [&'static str] = &[
            "_id",
            "name",
            "manufacturer",
            "catalog_number",
            "parts",
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
        group: ::core::option::Option::Some("relation"),
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
                rust_name: "manufacturer",
                bson_name: "manufacturer",
                rust_type: "String",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "catalog_number",
                bson_name: "catalog_number",
                rust_type: "i32",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "parts",
                bson_name: "parts",
                rust_type: "Vec<Ref<Part>>",
                annotations: &[],
            }),
        ],
        indexes: &[],
        shard_key: ::core::option::Option::None,
        patterns: &[&__RELATION_0, &__BOUNDED_0],
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
            (&&&::pattern_runtime::__private::RefProbe::<Vec<Ref<Part>>>::new()).held()
        },
        "this field holds extended references (`Vec<Ref<Part>>`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`Vec<Ref<Part>>`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
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
            (&&&::pattern_runtime::__private::RefProbe::<Ref<Part>>::new()).items()
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
        const RELATIONS: &'static [::pattern_runtime::__private::RelationSide] = &[
            ::pattern_runtime::__private::RelationSide {
                rust: "parts",
                bson: "parts",
                target: <<Vec<
                    Ref<Part>,
                > as ::pattern_runtime::__private::RefField>::Target as ::pattern_runtime::__private::Model>::SCHEMA
                    .name(),
                inverse: ::core::option::Option::None,
                many: true,
            },
        ];
    }
    const _: ::core::option::Option<
        fn() -> <Vec<Ref<Part>> as ::pattern_runtime::__private::RefField>::Target,
    > = ::core::convert::identity({
        if let ::core::option::Option::Some(__message) = if <Vec<
            Ref<Part>,
        > as ::pattern_runtime::__private::RefField>::MANY == true
        {
            ::core::option::Option::None
        } else {
            ::core::option::Option::Some(
                "`parts` is not an array of references although its type reads like one: write `Vec<..>` or `Option<Vec<..>>` of `Ref<T>` in the field's type",
            )
        } {
            ::core::panic!("{}", __message)
        }
        ::core::option::Option::None
    });
    static __RELATION_0: ::pattern_runtime::__private::RelationSpec = ::pattern_runtime::__private::RelationSpec::from_parts(::pattern_runtime::__private::RelationParts {
        model: &__SCHEMA,
        field: "parts",
        target: || {
            <<Vec<
                Ref<Part>,
            > as ::pattern_runtime::__private::RefField>::Target as ::pattern_runtime::__private::Model>::SCHEMA
        },
        kind: ::pattern_runtime::__private::RelationKind::Reference,
        many: true,
        inverse: ::core::option::Option::None,
        index: ::core::option::Option::None,
        sort: &[],
    });
    #[automatically_derived]
    impl Product {
        ///The relation `parts` (`parts`): batch loading of the referenced documents.
        pub fn parts_relation(
            db: &::pattern_runtime::__private::Database,
        ) -> ::pattern_runtime::__private::Relation<
            Product,
            <Vec<Ref<Part>> as ::pattern_runtime::__private::RefField>::Target,
        > {
            ::pattern_runtime::__private::Relation::new(
                db,
                &__RELATION_0,
                |s: &Product| <Vec<
                    Ref<Part>,
                > as ::pattern_runtime::__private::RefField>::ids(&s.parts),
            )
        }
    }
    static __BOUNDED_0: ::pattern_runtime::__private::BoundSpec = ::pattern_runtime::__private::BoundSpec::from_parts(::pattern_runtime::__private::BoundParts {
        field: "parts",
        max: 1000u32,
    });
};

// ----- #[derive(Model)] NamedProduct -----

const _: () = {
    ///The serialized field names of [`NamedProduct`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct NamedProductFields {
        ///`_id`
        pub id: ::pattern_runtime::__private::FieldName<ObjectId>,
        ///`name`
        pub name: ::pattern_runtime::__private::FieldName<String>,
        ///`manufacturer`
        pub manufacturer: ::pattern_runtime::__private::FieldName<String>,
        ///`catalog_number`
        pub catalog_number: ::pattern_runtime::__private::FieldName<i32>,
        ///`parts`
        pub parts: ::pattern_runtime::__private::FieldName<Vec<PartName>>,
    }
    #[automatically_derived]
    impl NamedProduct {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: NamedProductFields = NamedProductFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            name: ::pattern_runtime::__private::FieldName::new("name"),
            manufacturer: ::pattern_runtime::__private::FieldName::new("manufacturer"),
            catalog_number: ::pattern_runtime::__private::FieldName::new(
                "catalog_number",
            ),
            parts: ::pattern_runtime::__private::FieldName::new("parts"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for NamedProduct {
        type Names = NamedProductFields;
        const FIELDS: NamedProductFields = NamedProduct::FIELDS;
        const KEYS: &'static [&'static str] = &[
            "_id",
            "name",
            "manufacturer",
            "catalog_number",
            "parts",
        ];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for NamedProduct {
        type Inner = NamedProduct;
    }
    static __SCHEMA: ::pattern_runtime::__private::ModelSchema = ::pattern_runtime::__private::ModelSchema::from_parts(::pattern_runtime::__private::SchemaParts {
        name: "NamedProduct",
        collection: "named_products",
        group: ::core::option::Option::Some("relation"),
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
                rust_name: "manufacturer",
                bson_name: "manufacturer",
                rust_type: "String",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "catalog_number",
                bson_name: "catalog_number",
                rust_type: "i32",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "parts",
                bson_name: "parts",
                rust_type: "Vec<PartName>",
                annotations: &[
                    ::pattern_runtime::__private::Annotation::ExtendedRef {
                        mode: ::pattern_runtime::__private::Mode::Propagate,
                    },
                ],
            }),
        ],
        indexes: &[],
        shard_key: ::core::option::Option::None,
        patterns: &[&__EMBED_0, &__RELATION_0, &__BOUNDED_0],
    });
    #[automatically_derived]
    impl ::pattern_runtime::__private::Model for NamedProduct {
        const SCHEMA: &'static ::pattern_runtime::__private::ModelSchema = &__SCHEMA;
        type Id = ObjectId;
    }
    ::pattern_runtime::__private::inventory::submit! {
        ::pattern_runtime::__private::Registration { schema : & __SCHEMA }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Unversioned for NamedProduct {}
    const __EMBED_0: ::pattern_runtime::__private::Embedding = ::pattern_runtime::__private::Embedding::from_parts(::pattern_runtime::__private::EmbeddingParts {
        model: "NamedProduct",
        collection: "named_products",
        field: "parts",
        items: false,
        slot: ::pattern_runtime::__private::ref_slot(
            || {
                #[allow(unused_imports)]
                use ::pattern_runtime::__private::{
                    ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                    ProbeSnapshotOnly as _, ProbeSyncable as _,
                };
                (&&&::pattern_runtime::__private::RefProbe::<Vec<PartName>>::new())
                    .held()
            },
            "parts",
        ),
        mode: ::pattern_runtime::__private::Mode::Propagate,
    });
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::mode_error(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<Vec<PartName>>::new()).held()
        },
        "`Vec<PartName>` is not a field of extended references: a mode goes on a field holding `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, where an extended reference is declared on its source model (`#[extended_ref(CustomerRef(name, ..))]` on `Customer` generates `CustomerRef`)",
        "`Vec<PartName>` holds extended references nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`",
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::propagate_error(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<Vec<PartName>>::new())
                .propagation()
        },
        "`Vec<PartName>` holds a reference shape declared `snapshot` on its source: its copies are frozen when written, so the field cannot be marked `propagate`; mark it `#[extended_ref(snapshot)]`, or declare a shape without `snapshot` on the source to keep copies in sync",
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
    #[automatically_derived]
    impl ::pattern_runtime::__private::Identified for NamedProduct {
        fn id(&self) -> &ObjectId {
            &self.id
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Relations for NamedProduct {
        const RELATIONS: &'static [::pattern_runtime::__private::RelationSide] = &[
            ::pattern_runtime::__private::RelationSide {
                rust: "parts",
                bson: "parts",
                target: <<Vec<
                    PartName,
                > as ::pattern_runtime::__private::RefField>::Target as ::pattern_runtime::__private::Model>::SCHEMA
                    .name(),
                inverse: ::core::option::Option::None,
                many: true,
            },
        ];
    }
    const _: ::core::option::Option<
        fn() -> <Vec<PartName> as ::pattern_runtime::__private::RefField>::Target,
    > = ::core::convert::identity({
        if let ::core::option::Option::Some(__message) = if <Vec<
            PartName,
        > as ::pattern_runtime::__private::RefField>::MANY == true
        {
            ::core::option::Option::None
        } else {
            ::core::option::Option::Some(
                "`parts` is not an array of references although its type reads like one: write `Vec<..>` or `Option<Vec<..>>` of `Ref<T>` in the field's type",
            )
        } {
            ::core::panic!("{}", __message)
        }
        ::core::option::Option::None
    });
    static __RELATION_0: ::pattern_runtime::__private::RelationSpec = ::pattern_runtime::__private::RelationSpec::from_parts(::pattern_runtime::__private::RelationParts {
        model: &__SCHEMA,
        field: "parts",
        target: || {
            <<Vec<
                PartName,
            > as ::pattern_runtime::__private::RefField>::Target as ::pattern_runtime::__private::Model>::SCHEMA
        },
        kind: ::pattern_runtime::__private::RelationKind::Reference,
        many: true,
        inverse: ::core::option::Option::None,
        index: ::core::option::Option::None,
        sort: &[],
    });
    #[automatically_derived]
    impl NamedProduct {
        ///The relation `parts` (`parts`): batch loading of the referenced documents.
        pub fn parts_relation(
            db: &::pattern_runtime::__private::Database,
        ) -> ::pattern_runtime::__private::Relation<
            NamedProduct,
            <Vec<PartName> as ::pattern_runtime::__private::RefField>::Target,
        > {
            ::pattern_runtime::__private::Relation::new(
                db,
                &__RELATION_0,
                |s: &NamedProduct| <Vec<
                    PartName,
                > as ::pattern_runtime::__private::RefField>::ids(&s.parts),
            )
        }
    }
    static __BOUNDED_0: ::pattern_runtime::__private::BoundSpec = ::pattern_runtime::__private::BoundSpec::from_parts(::pattern_runtime::__private::BoundParts {
        field: "parts",
        max: 1000u32,
    });
};

// ----- #[derive(Model)] Host -----

const _: () = {
    ///The serialized field names of [`Host`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct HostFields {
        ///`_id`
        pub id: ::pattern_runtime::__private::FieldName<ObjectId>,
        ///`name`
        pub name: ::pattern_runtime::__private::FieldName<String>,
        ///`ipaddr`
        pub ipaddr: ::pattern_runtime::__private::FieldName<String>,
    }
    #[automatically_derived]
    impl Host {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: HostFields = HostFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            name: ::pattern_runtime::__private::FieldName::new("name"),
            ipaddr: ::pattern_runtime::__private::FieldName::new("ipaddr"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for Host {
        type Names = HostFields;
        const FIELDS: HostFields = Host::FIELDS;
        const KEYS: &'static [&'static str] = &["_id", "name", "ipaddr"];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for Host {
        type Inner = Host;
    }
    static __SCHEMA: ::pattern_runtime::__private::ModelSchema = ::pattern_runtime::__private::ModelSchema::from_parts(::pattern_runtime::__private::SchemaParts {
        name: "Host",
        collection: "hosts",
        group: ::core::option::Option::Some("relation"),
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
                rust_name: "ipaddr",
                bson_name: "ipaddr",
                rust_type: "String",
                annotations: &[
                    ::pattern_runtime::__private::Annotation::Index {
                        name: "ipaddr_1",
                    },
                ],
            }),
        ],
        indexes: &[
            ::pattern_runtime::__private::IndexSpec::from_parts(::pattern_runtime::__private::IndexParts {
                keys: &[
                    ::pattern_runtime::__private::IndexKey {
                        path: "ipaddr",
                        kind: ::pattern_runtime::__private::IndexKind::Ascending,
                    },
                ],
                name: "ipaddr_1",
                unique: true,
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
    impl ::pattern_runtime::__private::Model for Host {
        const SCHEMA: &'static ::pattern_runtime::__private::ModelSchema = &__SCHEMA;
        type Id = ObjectId;
    }
    ::pattern_runtime::__private::inventory::submit! {
        ::pattern_runtime::__private::Registration { schema : & __SCHEMA }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Unversioned for Host {}
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
    #[automatically_derived]
    impl ::pattern_runtime::__private::Identified for Host {
        fn id(&self) -> &ObjectId {
            &self.id
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Relations for Host {
        const RELATIONS: &'static [::pattern_runtime::__private::RelationSide] = &[];
    }
};

// ----- #[derive(Model)] LogMsg -----

const _: () = {
    ///The serialized field names of [`LogMsg`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct LogMsgFields {
        ///`_id`
        pub id: ::pattern_runtime::__private::FieldName<ObjectId>,
        ///`time`
        pub time: ::pattern_runtime::__private::FieldName<DateTime>,
        ///`message`
        pub message: ::pattern_runtime::__private::FieldName<String>,
        ///`host`
        pub host: ::pattern_runtime::__private::FieldName<Ref<Host>>,
    }
    #[automatically_derived]
    impl LogMsg {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: LogMsgFields = LogMsgFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            time: ::pattern_runtime::__private::FieldName::new("time"),
            message: ::pattern_runtime::__private::FieldName::new("message"),
            host: ::pattern_runtime::__private::FieldName::new("host"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for LogMsg {
        type Names = LogMsgFields;
        const FIELDS: LogMsgFields = LogMsg::FIELDS;
        const KEYS: &'static [&'static str] = &["_id", "time", "message", "host"];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for LogMsg {
        type Inner = LogMsg;
    }
    static __SCHEMA: ::pattern_runtime::__private::ModelSchema = ::pattern_runtime::__private::ModelSchema::from_parts(::pattern_runtime::__private::SchemaParts {
        name: "LogMsg",
        collection: "logmsg",
        group: ::core::option::Option::Some("relation"),
        fields: &[
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "id",
                bson_name: "_id",
                rust_type: "ObjectId",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "time",
                bson_name: "time",
                rust_type: "DateTime",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "message",
                bson_name: "message",
                rust_type: "String",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "host",
                bson_name: "host",
                rust_type: "Ref<Host>",
                annotations: &[],
            }),
        ],
        indexes: &[],
        shard_key: ::core::option::Option::None,
        patterns: &[&__RELATION_0],
    });
    #[automatically_derived]
    impl ::pattern_runtime::__private::Model for LogMsg {
        const SCHEMA: &'static ::pattern_runtime::__private::ModelSchema = &__SCHEMA;
        type Id = ObjectId;
    }
    ::pattern_runtime::__private::inventory::submit! {
        ::pattern_runtime::__private::Registration { schema : & __SCHEMA }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Unversioned for LogMsg {}
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
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::no_mode_error(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<Ref<Host>>::new()).held()
        },
        "this field holds extended references (`Ref<Host>`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`Ref<Host>`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
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
            (&&&::pattern_runtime::__private::RefProbe::<Ref<Host>>::new()).items()
        },
        false,
    ) {
        ::core::panic!("{}", __message)
    };
    #[automatically_derived]
    impl ::pattern_runtime::__private::Identified for LogMsg {
        fn id(&self) -> &ObjectId {
            &self.id
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Relations for LogMsg {
        const RELATIONS: &'static [::pattern_runtime::__private::RelationSide] = &[
            ::pattern_runtime::__private::RelationSide {
                rust: "host",
                bson: "host",
                target: <<Ref<
                    Host,
                > as ::pattern_runtime::__private::RefField>::Target as ::pattern_runtime::__private::Model>::SCHEMA
                    .name(),
                inverse: ::core::option::Option::None,
                many: false,
            },
        ];
    }
    const _: ::core::option::Option<
        fn() -> <Ref<Host> as ::pattern_runtime::__private::RefField>::Target,
    > = ::core::convert::identity({
        if let ::core::option::Option::Some(__message) = if <Ref<
            Host,
        > as ::pattern_runtime::__private::RefField>::MANY == false
        {
            ::core::option::Option::None
        } else {
            ::core::option::Option::Some(
                "`host` holds an array of references, which the derive cannot see in its type: write `Vec<Ref<T>>` (or `Option<Vec<Ref<T>>>`) in the field's type, not an alias",
            )
        } {
            ::core::panic!("{}", __message)
        }
        ::core::option::Option::None
    });
    static __RELATION_0: ::pattern_runtime::__private::RelationSpec = ::pattern_runtime::__private::RelationSpec::from_parts(::pattern_runtime::__private::RelationParts {
        model: &__SCHEMA,
        field: "host",
        target: || {
            <<Ref<
                Host,
            > as ::pattern_runtime::__private::RefField>::Target as ::pattern_runtime::__private::Model>::SCHEMA
        },
        kind: ::pattern_runtime::__private::RelationKind::Parent,
        many: false,
        inverse: ::core::option::Option::None,
        index: ::core::option::Option::Some(
            ::pattern_runtime::__private::IndexSpec::from_parts(::pattern_runtime::__private::IndexParts {
                keys: &[
                    ::pattern_runtime::__private::IndexKey {
                        path: "host",
                        kind: ::pattern_runtime::__private::IndexKind::Ascending,
                    },
                    ::pattern_runtime::__private::IndexKey {
                        path: "time",
                        kind: ::pattern_runtime::__private::IndexKind::Descending,
                    },
                ],
                name: "host_1_time_-1",
                unique: false,
                sparse: false,
                hidden: false,
                expire_after_seconds: ::core::option::Option::None,
                collation: ::core::option::Option::None,
                partial: &[],
            }),
        ),
        sort: &[("time", -1i32)],
    });
    #[automatically_derived]
    impl LogMsg {
        ///The relation `host` (`host`): batch loading of the referenced documents and the children of a parent.
        pub fn host_relation(
            db: &::pattern_runtime::__private::Database,
        ) -> ::pattern_runtime::__private::Relation<
            LogMsg,
            <Ref<Host> as ::pattern_runtime::__private::RefField>::Target,
        > {
            ::pattern_runtime::__private::Relation::new(
                db,
                &__RELATION_0,
                |s: &LogMsg| <Ref<
                    Host,
                > as ::pattern_runtime::__private::RefField>::ids(&s.host),
            )
        }
    }
};

