// ----- #[derive(Fields)] Measurement -----

const _: () = {
    ///The serialized field names of [`Measurement`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct MeasurementFields {
        ///`name`
        pub name: ::pattern_runtime::__private::FieldName<String>,
        ///`value`
        pub value: ::pattern_runtime::__private::FieldName<Bson>,
        ///`unit`
        pub unit: ::pattern_runtime::__private::FieldName<Option<String>>,
    }
    #[automatically_derived]
    impl Measurement {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: MeasurementFields = MeasurementFields {
            name: ::pattern_runtime::__private::FieldName::new("name"),
            value: ::pattern_runtime::__private::FieldName::new("value"),
            unit: ::pattern_runtime::__private::FieldName::new("unit"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for Measurement {
        type Names = MeasurementFields;
        const FIELDS: MeasurementFields = Measurement::FIELDS;
        const KEYS: &'static [&'static str] = &["name", "value", "unit"];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for Measurement {
        type Inner = Measurement;
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::AttributeItem for Measurement {
        type Key = String;
        const KEY: &'static str = "name";
        const VALUE: &'static str = "value";
        fn key(&self) -> &String {
            &self.name
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::HeldRefs for Measurement {
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
                    in_array: "this field's items (`Measurement`) hold extended references in `name`, and the field has no mode: mark it `#[extended_ref(propagate, path = name)]` to keep the copies in sync, or `#[extended_ref(snapshot, path = name)]` to keep them as written",
                    nested: "this field holds a `Measurement`, whose `name` holds extended references: references inside a nested struct are kept in sync only from a `Vec` of items (`#[extended_ref(propagate, path = name)] items: Vec<Measurement>`); hold the reference on the model itself, or the struct in a `Vec`",
                    beside: "the items (`Measurement`) also hold extended references in `name`, which no mode covers: one field tracks one reference of its items (`path`). Hold `name`'s reference in an array of its own, or drop it from the items",
                },
            ),
            ::pattern_runtime::__private::when_held(
                || {
                    #[allow(unused_imports)]
                    use ::pattern_runtime::__private::{
                        ProbeHeld as _, ProbeItems as _, ProbeNested as _,
                        ProbeOther as _, ProbeSnapshotOnly as _, ProbeSyncable as _,
                    };
                    (&&&::pattern_runtime::__private::RefProbe::<Bson>::new()).held()
                },
                ::pattern_runtime::__private::HeldRef {
                    field: "value",
                    in_array: "this field's items (`Measurement`) hold extended references in `value`, and the field has no mode: mark it `#[extended_ref(propagate, path = value)]` to keep the copies in sync, or `#[extended_ref(snapshot, path = value)]` to keep them as written",
                    nested: "this field holds a `Measurement`, whose `value` holds extended references: references inside a nested struct are kept in sync only from a `Vec` of items (`#[extended_ref(propagate, path = value)] items: Vec<Measurement>`); hold the reference on the model itself, or the struct in a `Vec`",
                    beside: "the items (`Measurement`) also hold extended references in `value`, which no mode covers: one field tracks one reference of its items (`path`). Hold `value`'s reference in an array of its own, or drop it from the items",
                },
            ),
            ::pattern_runtime::__private::when_held(
                || {
                    #[allow(unused_imports)]
                    use ::pattern_runtime::__private::{
                        ProbeHeld as _, ProbeItems as _, ProbeNested as _,
                        ProbeOther as _, ProbeSnapshotOnly as _, ProbeSyncable as _,
                    };
                    (&&&::pattern_runtime::__private::RefProbe::<Option<String>>::new())
                        .held()
                },
                ::pattern_runtime::__private::HeldRef {
                    field: "unit",
                    in_array: "this field's items (`Measurement`) hold extended references in `unit`, and the field has no mode: mark it `#[extended_ref(propagate, path = unit)]` to keep the copies in sync, or `#[extended_ref(snapshot, path = unit)]` to keep them as written",
                    nested: "this field holds a `Measurement`, whose `unit` holds extended references: references inside a nested struct are kept in sync only from a `Vec` of items (`#[extended_ref(propagate, path = unit)] items: Vec<Measurement>`); hold the reference on the model itself, or the struct in a `Vec`",
                    beside: "the items (`Measurement`) also hold extended references in `unit`, which no mode covers: one field tracks one reference of its items (`path`). Hold `unit`'s reference in an array of its own, or drop it from the items",
                },
            ),
        ];
    }
};

// ----- #[derive(Model)] Record -----

const _: () = {
    ///The serialized field names of [`Record`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct RecordFields {
        ///`_id`
        pub id: ::pattern_runtime::__private::FieldName<i32>,
        ///`attributes`
        pub attributes: ::pattern_runtime::__private::FieldName<Vec<Measurement>>,
    }
    #[automatically_derived]
    impl Record {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: RecordFields = RecordFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            attributes: ::pattern_runtime::__private::FieldName::new("attributes"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for Record {
        type Names = RecordFields;
        const FIELDS: RecordFields = Record::FIELDS;
        const KEYS: &'static [&'static str] = &["_id", "attributes"];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for Record {
        type Inner = Record;
    }
    static __SCHEMA: ::pattern_runtime::__private::ModelSchema = ::pattern_runtime::__private::ModelSchema::from_parts(::pattern_runtime::__private::SchemaParts {
        name: "Record",
        collection: "records",
        group: ::core::option::Option::Some("attribute"),
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
                rust_type: "Vec<Measurement>",
                annotations: &[],
            }),
        ],
        indexes: &[],
        shard_key: ::core::option::Option::None,
        patterns: &[&__ATTRIBUTE_0],
    });
    #[automatically_derived]
    impl ::pattern_runtime::__private::Model for Record {
        const SCHEMA: &'static ::pattern_runtime::__private::ModelSchema = &__SCHEMA;
        type Id = i32;
    }
    ::pattern_runtime::__private::inventory::submit! {
        ::pattern_runtime::__private::Registration { schema : & __SCHEMA }
    }
    const __ATTRIBUTE_0_KEY: &str = {
        const __PARTS: &[&str] = &[
            "attributes",
            ".",
            <Measurement as ::pattern_runtime::__private::AttributeItem>::KEY,
        ];
        const __LEN: usize = ::pattern_runtime::__private::concat_len(__PARTS);
        const __BYTES: [u8; __LEN] = ::pattern_runtime::__private::concat_bytes::<
            __LEN,
        >(__PARTS);
        ::pattern_runtime::__private::utf8(&__BYTES)
    };
    const __ATTRIBUTE_0_VALUE: &str = {
        const __PARTS: &[&str] = &[
            "attributes",
            ".",
            <Measurement as ::pattern_runtime::__private::AttributeItem>::VALUE,
        ];
        const __LEN: usize = ::pattern_runtime::__private::concat_len(__PARTS);
        const __BYTES: [u8; __LEN] = ::pattern_runtime::__private::concat_bytes::<
            __LEN,
        >(__PARTS);
        ::pattern_runtime::__private::utf8(&__BYTES)
    };
    const __ATTRIBUTE_0_NAME: &str = {
        const __PARTS: &[&str] = &[__ATTRIBUTE_0_KEY, "_1_", __ATTRIBUTE_0_VALUE, "_1"];
        const __LEN: usize = ::pattern_runtime::__private::concat_len(__PARTS);
        const __BYTES: [u8; __LEN] = ::pattern_runtime::__private::concat_bytes::<
            __LEN,
        >(__PARTS);
        ::pattern_runtime::__private::utf8(&__BYTES)
    };
    static __ATTRIBUTE_0: ::pattern_runtime::__private::AttributeSpec = ::pattern_runtime::__private::AttributeSpec::from_parts(::pattern_runtime::__private::AttributeParts {
        field: "attributes",
        index: ::pattern_runtime::__private::IndexSpec::from_parts(::pattern_runtime::__private::IndexParts {
            keys: &[
                ::pattern_runtime::__private::IndexKey {
                    path: __ATTRIBUTE_0_KEY,
                    kind: ::pattern_runtime::__private::IndexKind::Ascending,
                },
                ::pattern_runtime::__private::IndexKey {
                    path: __ATTRIBUTE_0_VALUE,
                    kind: ::pattern_runtime::__private::IndexKind::Ascending,
                },
            ],
            name: __ATTRIBUTE_0_NAME,
            unique: false,
            sparse: false,
            hidden: false,
            expire_after_seconds: ::core::option::Option::None,
            collation: ::core::option::Option::None,
            partial: &[],
        }),
    });
    #[automatically_derived]
    impl Record {
        ///The operations on the `attributes` attribute array (`attributes`): set, unset, get, typed `$elemMatch` conditions and sorting by one attribute.
        pub fn attributes_attribute(
            db: &::pattern_runtime::__private::Database,
        ) -> ::pattern_runtime::__private::Attributes<Record, Measurement> {
            ::pattern_runtime::__private::Attributes::new(db, &__ATTRIBUTE_0)
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Unversioned for Record {}
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
            (&&&::pattern_runtime::__private::RefProbe::<Vec<Measurement>>::new()).held()
        },
        "this field holds extended references (`Vec<Measurement>`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`Vec<Measurement>`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
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
            (&&&::pattern_runtime::__private::RefProbe::<Measurement>::new()).items()
        },
        true,
    ) {
        ::core::panic!("{}", __message)
    };
    #[automatically_derived]
    impl ::pattern_runtime::__private::Identified for Record {
        fn id(&self) -> &i32 {
            &self.id
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Relations for Record {
        const RELATIONS: &'static [::pattern_runtime::__private::RelationSide] = &[];
    }
};

// ----- #[derive(AttributeKey)] Channel -----

#[automatically_derived]
impl ::pattern_runtime::__private::AttributeKey for Channel {
    fn as_key(&self) -> &str {
        match self {
            Channel::Gewala => "gewala",
            Channel::Maoyan => "maoyan",
            Channel::Taopiao => "taopiao",
        }
    }
}

// ----- #[derive(Fields)] Price -----

const _: () = {
    ///The serialized field names of [`Price`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct PriceFields {
        ///`channel`
        pub channel: ::pattern_runtime::__private::FieldName<Channel>,
        ///`price`
        pub price: ::pattern_runtime::__private::FieldName<i32>,
    }
    #[automatically_derived]
    impl Price {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: PriceFields = PriceFields {
            channel: ::pattern_runtime::__private::FieldName::new("channel"),
            price: ::pattern_runtime::__private::FieldName::new("price"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for Price {
        type Names = PriceFields;
        const FIELDS: PriceFields = Price::FIELDS;
        const KEYS: &'static [&'static str] = &["channel", "price"];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for Price {
        type Inner = Price;
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::AttributeItem for Price {
        type Key = Channel;
        const KEY: &'static str = "channel";
        const VALUE: &'static str = "price";
        fn key(&self) -> &Channel {
            &self.channel
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::HeldRefs for Price {
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
                    (&&&::pattern_runtime::__private::RefProbe::<Channel>::new()).held()
                },
                ::pattern_runtime::__private::HeldRef {
                    field: "channel",
                    in_array: "this field's items (`Price`) hold extended references in `channel`, and the field has no mode: mark it `#[extended_ref(propagate, path = channel)]` to keep the copies in sync, or `#[extended_ref(snapshot, path = channel)]` to keep them as written",
                    nested: "this field holds a `Price`, whose `channel` holds extended references: references inside a nested struct are kept in sync only from a `Vec` of items (`#[extended_ref(propagate, path = channel)] items: Vec<Price>`); hold the reference on the model itself, or the struct in a `Vec`",
                    beside: "the items (`Price`) also hold extended references in `channel`, which no mode covers: one field tracks one reference of its items (`path`). Hold `channel`'s reference in an array of its own, or drop it from the items",
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
                    field: "price",
                    in_array: "this field's items (`Price`) hold extended references in `price`, and the field has no mode: mark it `#[extended_ref(propagate, path = price)]` to keep the copies in sync, or `#[extended_ref(snapshot, path = price)]` to keep them as written",
                    nested: "this field holds a `Price`, whose `price` holds extended references: references inside a nested struct are kept in sync only from a `Vec` of items (`#[extended_ref(propagate, path = price)] items: Vec<Price>`); hold the reference on the model itself, or the struct in a `Vec`",
                    beside: "the items (`Price`) also hold extended references in `price`, which no mode covers: one field tracks one reference of its items (`path`). Hold `price`'s reference in an array of its own, or drop it from the items",
                },
            ),
        ];
    }
};

// ----- #[derive(Model)] Schedule -----

const _: () = {
    ///The serialized field names of [`Schedule`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct ScheduleFields {
        ///`_id`
        pub id: ::pattern_runtime::__private::FieldName<i32>,
        ///`scheduleId`
        pub schedule_id: ::pattern_runtime::__private::FieldName<String>,
        ///`movie`
        pub movie: ::pattern_runtime::__private::FieldName<String>,
        ///`provider`
        pub provider: ::pattern_runtime::__private::FieldName<Vec<Price>>,
    }
    #[automatically_derived]
    impl Schedule {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: ScheduleFields = ScheduleFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            schedule_id: ::pattern_runtime::__private::FieldName::new("scheduleId"),
            movie: ::pattern_runtime::__private::FieldName::new("movie"),
            provider: ::pattern_runtime::__private::FieldName::new("provider"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for Schedule {
        type Names = ScheduleFields;
        const FIELDS: ScheduleFields = Schedule::FIELDS;
        const KEYS: &'static [&'static str] = &[
            "_id",
            "scheduleId",
            "movie",
            "provider",
        ];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for Schedule {
        type Inner = Schedule;
    }
    static __SCHEMA: ::pattern_runtime::__private::ModelSchema = ::pattern_runtime::__private::ModelSchema::from_parts(::pattern_runtime::__private::SchemaParts {
        name: "Schedule",
        collection: "schedules",
        group: ::core::option::Option::Some("attribute"),
        fields: &[
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "id",
                bson_name: "_id",
                rust_type: "i32",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "schedule_id",
                bson_name: "scheduleId",
                rust_type: "String",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "movie",
                bson_name: "movie",
                rust_type: "String",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "provider",
                bson_name: "provider",
                rust_type: "Vec<Price>",
                annotations: &[],
            }),
        ],
        indexes: &[],
        shard_key: ::core::option::Option::None,
        patterns: &[&__ATTRIBUTE_0],
    });
    #[automatically_derived]
    impl ::pattern_runtime::__private::Model for Schedule {
        const SCHEMA: &'static ::pattern_runtime::__private::ModelSchema = &__SCHEMA;
        type Id = i32;
    }
    ::pattern_runtime::__private::inventory::submit! {
        ::pattern_runtime::__private::Registration { schema : & __SCHEMA }
    }
    const __ATTRIBUTE_0_KEY: &str = {
        const __PARTS: &[&str] = &[
            "provider",
            ".",
            <Price as ::pattern_runtime::__private::AttributeItem>::KEY,
        ];
        const __LEN: usize = ::pattern_runtime::__private::concat_len(__PARTS);
        const __BYTES: [u8; __LEN] = ::pattern_runtime::__private::concat_bytes::<
            __LEN,
        >(__PARTS);
        ::pattern_runtime::__private::utf8(&__BYTES)
    };
    const __ATTRIBUTE_0_VALUE: &str = {
        const __PARTS: &[&str] = &[
            "provider",
            ".",
            <Price as ::pattern_runtime::__private::AttributeItem>::VALUE,
        ];
        const __LEN: usize = ::pattern_runtime::__private::concat_len(__PARTS);
        const __BYTES: [u8; __LEN] = ::pattern_runtime::__private::concat_bytes::<
            __LEN,
        >(__PARTS);
        ::pattern_runtime::__private::utf8(&__BYTES)
    };
    const __ATTRIBUTE_0_NAME: &str = {
        const __PARTS: &[&str] = &[__ATTRIBUTE_0_KEY, "_1_", __ATTRIBUTE_0_VALUE, "_1"];
        const __LEN: usize = ::pattern_runtime::__private::concat_len(__PARTS);
        const __BYTES: [u8; __LEN] = ::pattern_runtime::__private::concat_bytes::<
            __LEN,
        >(__PARTS);
        ::pattern_runtime::__private::utf8(&__BYTES)
    };
    static __ATTRIBUTE_0: ::pattern_runtime::__private::AttributeSpec = ::pattern_runtime::__private::AttributeSpec::from_parts(::pattern_runtime::__private::AttributeParts {
        field: "provider",
        index: ::pattern_runtime::__private::IndexSpec::from_parts(::pattern_runtime::__private::IndexParts {
            keys: &[
                ::pattern_runtime::__private::IndexKey {
                    path: __ATTRIBUTE_0_KEY,
                    kind: ::pattern_runtime::__private::IndexKind::Ascending,
                },
                ::pattern_runtime::__private::IndexKey {
                    path: __ATTRIBUTE_0_VALUE,
                    kind: ::pattern_runtime::__private::IndexKind::Ascending,
                },
            ],
            name: __ATTRIBUTE_0_NAME,
            unique: false,
            sparse: false,
            hidden: false,
            expire_after_seconds: ::core::option::Option::None,
            collation: ::core::option::Option::None,
            partial: &[],
        }),
    });
    #[automatically_derived]
    impl Schedule {
        ///The operations on the `provider` attribute array (`provider`): set, unset, get, typed `$elemMatch` conditions and sorting by one attribute.
        pub fn provider_attribute(
            db: &::pattern_runtime::__private::Database,
        ) -> ::pattern_runtime::__private::Attributes<Schedule, Price> {
            ::pattern_runtime::__private::Attributes::new(db, &__ATTRIBUTE_0)
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Unversioned for Schedule {}
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
            (&&&::pattern_runtime::__private::RefProbe::<Vec<Price>>::new()).held()
        },
        "this field holds extended references (`Vec<Price>`) without a mode: mark it `#[extended_ref(propagate)]` to keep its copies in sync with the source, or `#[extended_ref(snapshot)]` to keep them as written",
        "this field holds extended references (`Vec<Price>`) nested deeper than propagation can address: hold them as `CustomerRef`, `Option<CustomerRef>`, `Vec<CustomerRef>` or `Option<Vec<CustomerRef>>`, then give the field a mode: `#[extended_ref(propagate)]` or `#[extended_ref(snapshot)]`",
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
            (&&&::pattern_runtime::__private::RefProbe::<Price>::new()).items()
        },
        true,
    ) {
        ::core::panic!("{}", __message)
    };
    #[automatically_derived]
    impl ::pattern_runtime::__private::Identified for Schedule {
        fn id(&self) -> &i32 {
            &self.id
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Relations for Schedule {
        const RELATIONS: &'static [::pattern_runtime::__private::RelationSide] = &[];
    }
};

