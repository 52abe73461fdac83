// ----- #[derive(Measurement)] Reading -----

const _: () = {
    ///The serialized field names of [`Reading`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct ReadingFields {
        ///`deviceId`
        pub device_id: ::pattern_runtime::__private::FieldName<String>,
        ///`timestamp`
        pub timestamp: ::pattern_runtime::__private::FieldName<DateTime>,
        ///`value`
        pub value: ::pattern_runtime::__private::FieldName<f64>,
        ///`unit`
        pub unit: ::pattern_runtime::__private::FieldName<String>,
    }
    #[automatically_derived]
    impl Reading {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: ReadingFields = ReadingFields {
            device_id: ::pattern_runtime::__private::FieldName::new("deviceId"),
            timestamp: ::pattern_runtime::__private::FieldName::new("timestamp"),
            value: ::pattern_runtime::__private::FieldName::new("value"),
            unit: ::pattern_runtime::__private::FieldName::new("unit"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for Reading {
        type Names = ReadingFields;
        const FIELDS: ReadingFields = Reading::FIELDS;
        const KEYS: &'static [&'static str] = &[
            "deviceId",
            "timestamp",
            "value",
            "unit",
        ];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for Reading {
        type Inner = Reading;
    }
    static __SERIES: ::pattern_runtime::__private::SeriesSpec = ::pattern_runtime::__private::SeriesSpec::from_parts(::pattern_runtime::__private::SeriesParts {
        collection: "sensor_data",
        keys: &["deviceId"],
        time: "timestamp",
        summaries: &[
            ::pattern_runtime::__private::SummarySpec {
                field: Reading::FIELDS.value.as_str(),
                min: true,
                max: true,
                sum: true,
            },
        ],
        values: &["value", "unit"],
        expire_after_seconds: ::core::option::Option::Some(2592000u64),
        storage: ::pattern_runtime::__private::Storage::Buckets {
            max_count: 200u32,
            span_seconds: 3600u64,
        },
    });
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::unless(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeBool as _, ProbeFloat as _, ProbeInteger as _, ProbeNumeric as _,
                ProbeOptional as _, ProbeOtherCheck as _,
            };
            (&&::pattern_runtime::__private::CheckProbe::of(Reading::FIELDS.value))
                .numeric()
        },
        "`value` cannot be summarised: `summary(value(min, max, sum))` needs a numeric field; use i32, i64, u32, f32 or f64 (or an Option of one)",
    ) {
        ::core::panic!("{}", __message)
    };
    static __SCHEMA: ::pattern_runtime::__private::ModelSchema = ::pattern_runtime::__private::ModelSchema::from_parts(::pattern_runtime::__private::SchemaParts {
        name: "Reading",
        collection: "sensor_data",
        group: ::core::option::Option::Some("bucket"),
        fields: &[
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "device_id",
                bson_name: "deviceId",
                rust_type: "String",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "timestamp",
                bson_name: "timestamp",
                rust_type: "DateTime",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "value",
                bson_name: "value",
                rust_type: "f64",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "unit",
                bson_name: "unit",
                rust_type: "String",
                annotations: &[],
            }),
        ],
        indexes: &[
            ::pattern_runtime::__private::IndexSpec::from_parts(::pattern_runtime::__private::IndexParts {
                keys: &[
                    ::pattern_runtime::__private::IndexKey {
                        path: "deviceId",
                        kind: ::pattern_runtime::__private::IndexKind::Ascending,
                    },
                    ::pattern_runtime::__private::IndexKey {
                        path: "start",
                        kind: ::pattern_runtime::__private::IndexKind::Ascending,
                    },
                ],
                name: "deviceId_1_start_1",
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
                        path: "end",
                        kind: ::pattern_runtime::__private::IndexKind::Ascending,
                    },
                ],
                name: "end_1",
                unique: false,
                sparse: false,
                hidden: false,
                expire_after_seconds: ::core::option::Option::Some(2592000u64),
                collation: ::core::option::Option::None,
                partial: &[],
            }),
        ],
        shard_key: ::core::option::Option::None,
        patterns: &[&__SERIES],
    });
    #[automatically_derived]
    impl ::pattern_runtime::__private::Measurement for Reading {
        type Key = String;
        const SCHEMA: &'static ::pattern_runtime::__private::ModelSchema = &__SCHEMA;
        const SERIES: &'static ::pattern_runtime::__private::SeriesSpec = &__SERIES;
        fn time(&self) -> ::pattern_runtime::__private::bson::DateTime {
            self.timestamp
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::KeepsMeasurements for Reading {}
    ::pattern_runtime::__private::inventory::submit! {
        ::pattern_runtime::__private::Registration { schema : & __SCHEMA }
    }
};

// ----- #[derive(Measurement)] NativeReading -----

const _: () = {
    ///The serialized field names of [`NativeReading`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct NativeReadingFields {
        ///`deviceId`
        pub device_id: ::pattern_runtime::__private::FieldName<String>,
        ///`timestamp`
        pub timestamp: ::pattern_runtime::__private::FieldName<DateTime>,
        ///`value`
        pub value: ::pattern_runtime::__private::FieldName<f64>,
        ///`unit`
        pub unit: ::pattern_runtime::__private::FieldName<String>,
    }
    #[automatically_derived]
    impl NativeReading {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: NativeReadingFields = NativeReadingFields {
            device_id: ::pattern_runtime::__private::FieldName::new("deviceId"),
            timestamp: ::pattern_runtime::__private::FieldName::new("timestamp"),
            value: ::pattern_runtime::__private::FieldName::new("value"),
            unit: ::pattern_runtime::__private::FieldName::new("unit"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for NativeReading {
        type Names = NativeReadingFields;
        const FIELDS: NativeReadingFields = NativeReading::FIELDS;
        const KEYS: &'static [&'static str] = &[
            "deviceId",
            "timestamp",
            "value",
            "unit",
        ];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for NativeReading {
        type Inner = NativeReading;
    }
    static __SERIES: ::pattern_runtime::__private::SeriesSpec = ::pattern_runtime::__private::SeriesSpec::from_parts(::pattern_runtime::__private::SeriesParts {
        collection: "sensor_ts",
        keys: &["deviceId"],
        time: "timestamp",
        summaries: &[
            ::pattern_runtime::__private::SummarySpec {
                field: NativeReading::FIELDS.value.as_str(),
                min: true,
                max: true,
                sum: true,
            },
        ],
        values: &["value", "unit"],
        expire_after_seconds: ::core::option::Option::Some(2592000u64),
        storage: ::pattern_runtime::__private::Storage::Native {
            granularity: ::core::option::Option::Some(
                ::pattern_runtime::__private::Granularity::Seconds,
            ),
            span_seconds: ::core::option::Option::None,
        },
    });
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::unless(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeBool as _, ProbeFloat as _, ProbeInteger as _, ProbeNumeric as _,
                ProbeOptional as _, ProbeOtherCheck as _,
            };
            (&&::pattern_runtime::__private::CheckProbe::of(NativeReading::FIELDS.value))
                .numeric()
        },
        "`value` cannot be summarised: `summary(value(min, max, sum))` needs a numeric field; use i32, i64, u32, f32 or f64 (or an Option of one)",
    ) {
        ::core::panic!("{}", __message)
    };
    static __SCHEMA: ::pattern_runtime::__private::ModelSchema = ::pattern_runtime::__private::ModelSchema::from_parts(::pattern_runtime::__private::SchemaParts {
        name: "NativeReading",
        collection: "sensor_ts",
        group: ::core::option::Option::Some("bucket"),
        fields: &[
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "device_id",
                bson_name: "deviceId",
                rust_type: "String",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "timestamp",
                bson_name: "timestamp",
                rust_type: "DateTime",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "value",
                bson_name: "value",
                rust_type: "f64",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "unit",
                bson_name: "unit",
                rust_type: "String",
                annotations: &[],
            }),
        ],
        indexes: &[
            ::pattern_runtime::__private::IndexSpec::from_parts(::pattern_runtime::__private::IndexParts {
                keys: &[
                    ::pattern_runtime::__private::IndexKey {
                        path: "deviceId",
                        kind: ::pattern_runtime::__private::IndexKind::Ascending,
                    },
                    ::pattern_runtime::__private::IndexKey {
                        path: "timestamp",
                        kind: ::pattern_runtime::__private::IndexKind::Ascending,
                    },
                ],
                name: "deviceId_1_timestamp_1",
                unique: false,
                sparse: false,
                hidden: false,
                expire_after_seconds: ::core::option::Option::None,
                collation: ::core::option::Option::None,
                partial: &[],
            }),
        ],
        shard_key: ::core::option::Option::None,
        patterns: &[&__SERIES],
    });
    #[automatically_derived]
    impl ::pattern_runtime::__private::Measurement for NativeReading {
        type Key = String;
        const SCHEMA: &'static ::pattern_runtime::__private::ModelSchema = &__SCHEMA;
        const SERIES: &'static ::pattern_runtime::__private::SeriesSpec = &__SERIES;
        fn time(&self) -> ::pattern_runtime::__private::bson::DateTime {
            self.timestamp
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::KeepsMeasurements for NativeReading {}
    ::pattern_runtime::__private::inventory::submit! {
        ::pattern_runtime::__private::Registration { schema : & __SCHEMA }
    }
};

