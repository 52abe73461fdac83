// ----- #[derive(Model)] RoomDay -----

const _: () = {
    ///The serialized field names of [`RoomDay`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct RoomDayFields {
        ///`_id`
        pub id: ::pattern_runtime::__private::FieldName<bson::oid::ObjectId>,
        ///`resourceId`
        pub resource_id: ::pattern_runtime::__private::FieldName<String>,
        ///`date`
        pub date: ::pattern_runtime::__private::FieldName<DateTime>,
        ///`bookedBy`
        pub booked_by: ::pattern_runtime::__private::FieldName<Option<String>>,
    }
    #[automatically_derived]
    impl RoomDay {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: RoomDayFields = RoomDayFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            resource_id: ::pattern_runtime::__private::FieldName::new("resourceId"),
            date: ::pattern_runtime::__private::FieldName::new("date"),
            booked_by: ::pattern_runtime::__private::FieldName::new("bookedBy"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for RoomDay {
        type Names = RoomDayFields;
        const FIELDS: RoomDayFields = RoomDay::FIELDS;
        const KEYS: &'static [&'static str] = &["_id", "resourceId", "date", "bookedBy"];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for RoomDay {
        type Inner = RoomDay;
    }
    static __SCHEMA: ::pattern_runtime::__private::ModelSchema = ::pattern_runtime::__private::ModelSchema::from_parts(::pattern_runtime::__private::SchemaParts {
        name: "RoomDay",
        collection: "room_days",
        group: ::core::option::Option::Some("preallocation"),
        fields: &[
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "id",
                bson_name: "_id",
                rust_type: "bson::oid::ObjectId",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "resource_id",
                bson_name: "resourceId",
                rust_type: "String",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "date",
                bson_name: "date",
                rust_type: "DateTime",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "booked_by",
                bson_name: "bookedBy",
                rust_type: "Option<String>",
                annotations: &[],
            }),
        ],
        indexes: &[],
        shard_key: ::core::option::Option::None,
        patterns: &[&__SLOTS],
    });
    #[automatically_derived]
    impl ::pattern_runtime::__private::Model for RoomDay {
        const SCHEMA: &'static ::pattern_runtime::__private::ModelSchema = &__SCHEMA;
        type Id = bson::oid::ObjectId;
    }
    ::pattern_runtime::__private::inventory::submit! {
        ::pattern_runtime::__private::Registration { schema : & __SCHEMA }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Unversioned for RoomDay {}
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
    #[automatically_derived]
    impl ::pattern_runtime::__private::Identified for RoomDay {
        fn id(&self) -> &bson::oid::ObjectId {
            &self.id
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Relations for RoomDay {
        const RELATIONS: &'static [::pattern_runtime::__private::RelationSide] = &[];
    }
    static __SLOTS: ::pattern_runtime::__private::SlotSpec = ::pattern_runtime::__private::SlotSpec::from_parts(::pattern_runtime::__private::SlotParts {
        model: "RoomDay",
        collection: "room_days",
        resource: "resourceId",
        slot: "date",
        holder: ::core::option::Option::Some("bookedBy"),
        bitmap: ::core::option::Option::None,
        sub_slots: 0,
        wide: false,
        index: ::pattern_runtime::__private::IndexSpec::from_parts(::pattern_runtime::__private::IndexParts {
            keys: &[
                ::pattern_runtime::__private::IndexKey {
                    path: "resourceId",
                    kind: ::pattern_runtime::__private::IndexKind::Ascending,
                },
                ::pattern_runtime::__private::IndexKey {
                    path: "date",
                    kind: ::pattern_runtime::__private::IndexKind::Ascending,
                },
            ],
            name: "resourceId_1_date_1",
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
            use ::pattern_runtime::__private::{ProbeOtherSlot as _, ProbeSlotKey as _};
            (&&::pattern_runtime::__private::SlotProbe::of(RoomDay::FIELDS.resource_id))
                .key()
        },
        "`resource_id` names the resource: make it a `String`, an `i32`, an `i64`, a `bson::oid::ObjectId` or a `bson::DateTime`",
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::unless(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{ProbeOtherSlot as _, ProbeSlotKey as _};
            (&&::pattern_runtime::__private::SlotProbe::of(RoomDay::FIELDS.date)).key()
        },
        "`date` names the slot: make it a `String`, an `i32`, an `i64`, a `bson::oid::ObjectId` or a `bson::DateTime`",
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
            (&&::pattern_runtime::__private::CheckProbe::of(RoomDay::FIELDS.booked_by))
                .optional()
        },
        "`booked_by` holds who booked the slot: make it an `Option` (`None` while free)",
    ) {
        ::core::panic!("{}", __message)
    };
    #[automatically_derived]
    impl ::pattern_runtime::__private::Preallocated for RoomDay {
        const SLOTS: &'static ::pattern_runtime::__private::SlotSpec = &__SLOTS;
        type Resource = String;
        type Slot = DateTime;
    }
    #[automatically_derived]
    impl RoomDay {
        ///The grid of `RoomDay` slots: allocation, bookings and availability.
        pub fn slots(
            db: &::pattern_runtime::__private::Database,
        ) -> ::pattern_runtime::__private::Slots<RoomDay> {
            ::pattern_runtime::__private::Slots::new(db)
        }
    }
};

// ----- #[derive(Model)] MeetingDay -----

const _: () = {
    ///The serialized field names of [`MeetingDay`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct MeetingDayFields {
        ///`_id`
        pub id: ::pattern_runtime::__private::FieldName<bson::oid::ObjectId>,
        ///`room`
        pub room: ::pattern_runtime::__private::FieldName<String>,
        ///`day`
        pub day: ::pattern_runtime::__private::FieldName<String>,
        ///`halfHours`
        pub half_hours: ::pattern_runtime::__private::FieldName<i64>,
    }
    #[automatically_derived]
    impl MeetingDay {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: MeetingDayFields = MeetingDayFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            room: ::pattern_runtime::__private::FieldName::new("room"),
            day: ::pattern_runtime::__private::FieldName::new("day"),
            half_hours: ::pattern_runtime::__private::FieldName::new("halfHours"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for MeetingDay {
        type Names = MeetingDayFields;
        const FIELDS: MeetingDayFields = MeetingDay::FIELDS;
        const KEYS: &'static [&'static str] = &["_id", "room", "day", "halfHours"];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for MeetingDay {
        type Inner = MeetingDay;
    }
    static __SCHEMA: ::pattern_runtime::__private::ModelSchema = ::pattern_runtime::__private::ModelSchema::from_parts(::pattern_runtime::__private::SchemaParts {
        name: "MeetingDay",
        collection: "meeting_days",
        group: ::core::option::Option::Some("preallocation"),
        fields: &[
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "id",
                bson_name: "_id",
                rust_type: "bson::oid::ObjectId",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "room",
                bson_name: "room",
                rust_type: "String",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "day",
                bson_name: "day",
                rust_type: "String",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "half_hours",
                bson_name: "halfHours",
                rust_type: "i64",
                annotations: &[],
            }),
        ],
        indexes: &[],
        shard_key: ::core::option::Option::None,
        patterns: &[&__SLOTS],
    });
    #[automatically_derived]
    impl ::pattern_runtime::__private::Model for MeetingDay {
        const SCHEMA: &'static ::pattern_runtime::__private::ModelSchema = &__SCHEMA;
        type Id = bson::oid::ObjectId;
    }
    ::pattern_runtime::__private::inventory::submit! {
        ::pattern_runtime::__private::Registration { schema : & __SCHEMA }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Unversioned for MeetingDay {}
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
    impl ::pattern_runtime::__private::Identified for MeetingDay {
        fn id(&self) -> &bson::oid::ObjectId {
            &self.id
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Relations for MeetingDay {
        const RELATIONS: &'static [::pattern_runtime::__private::RelationSide] = &[];
    }
    static __SLOTS: ::pattern_runtime::__private::SlotSpec = ::pattern_runtime::__private::SlotSpec::from_parts(::pattern_runtime::__private::SlotParts {
        model: "MeetingDay",
        collection: "meeting_days",
        resource: "room",
        slot: "day",
        holder: ::core::option::Option::None,
        bitmap: ::core::option::Option::Some("halfHours"),
        sub_slots: 48u32,
        wide: ::pattern_runtime::__private::bits_of(|| {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeBits32 as _, ProbeBits64 as _, ProbeOtherSlot as _,
            };
            (&&&::pattern_runtime::__private::SlotProbe::of(
                MeetingDay::FIELDS.half_hours,
            ))
                .bits()
        }) == 63,
        index: ::pattern_runtime::__private::IndexSpec::from_parts(::pattern_runtime::__private::IndexParts {
            keys: &[
                ::pattern_runtime::__private::IndexKey {
                    path: "room",
                    kind: ::pattern_runtime::__private::IndexKind::Ascending,
                },
                ::pattern_runtime::__private::IndexKey {
                    path: "day",
                    kind: ::pattern_runtime::__private::IndexKind::Ascending,
                },
            ],
            name: "room_1_day_1",
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
            use ::pattern_runtime::__private::{ProbeOtherSlot as _, ProbeSlotKey as _};
            (&&::pattern_runtime::__private::SlotProbe::of(MeetingDay::FIELDS.room))
                .key()
        },
        "`room` names the resource: make it a `String`, an `i32`, an `i64`, a `bson::oid::ObjectId` or a `bson::DateTime`",
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::unless(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{ProbeOtherSlot as _, ProbeSlotKey as _};
            (&&::pattern_runtime::__private::SlotProbe::of(MeetingDay::FIELDS.day)).key()
        },
        "`day` names the slot: make it a `String`, an `i32`, an `i64`, a `bson::oid::ObjectId` or a `bson::DateTime`",
    ) {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = if ::pattern_runtime::__private::bits_of(||
    {
        #[allow(unused_imports)]
        use ::pattern_runtime::__private::{
            ProbeBits32 as _, ProbeBits64 as _, ProbeOtherSlot as _,
        };
        (&&&::pattern_runtime::__private::SlotProbe::of(MeetingDay::FIELDS.half_hours))
            .bits()
    }) == 0
    {
        ::core::option::Option::Some(
            "`half_hours` is the bitmap of the slot's sub-slots: make it an `i32` (up to 31 sub-slots) or an `i64` (up to 63)",
        )
    } else {
        ::core::option::Option::None
    } {
        ::core::panic!("{}", __message)
    };
    const _: () = if let ::core::option::Option::Some(__message) = if ::pattern_runtime::__private::bits_of(||
    {
        #[allow(unused_imports)]
        use ::pattern_runtime::__private::{
            ProbeBits32 as _, ProbeBits64 as _, ProbeOtherSlot as _,
        };
        (&&&::pattern_runtime::__private::SlotProbe::of(MeetingDay::FIELDS.half_hours))
            .bits()
    }) != 0
        && 48u32
            > ::pattern_runtime::__private::bits_of(|| {
                #[allow(unused_imports)]
                use ::pattern_runtime::__private::{
                    ProbeBits32 as _, ProbeBits64 as _, ProbeOtherSlot as _,
                };
                (&&&::pattern_runtime::__private::SlotProbe::of(
                    MeetingDay::FIELDS.half_hours,
                ))
                    .bits()
            })
    {
        ::core::option::Option::Some(
            "48 sub-slots do not fit in `half_hours`: an `i32` holds 31, an `i64` 63",
        )
    } else {
        ::core::option::Option::None
    } {
        ::core::panic!("{}", __message)
    };
    #[automatically_derived]
    impl ::pattern_runtime::__private::Preallocated for MeetingDay {
        const SLOTS: &'static ::pattern_runtime::__private::SlotSpec = &__SLOTS;
        type Resource = String;
        type Slot = String;
    }
    #[automatically_derived]
    impl MeetingDay {
        ///The grid of `MeetingDay` slots: allocation, bookings and availability.
        pub fn slots(
            db: &::pattern_runtime::__private::Database,
        ) -> ::pattern_runtime::__private::Slots<MeetingDay> {
            ::pattern_runtime::__private::Slots::new(db)
        }
    }
};

