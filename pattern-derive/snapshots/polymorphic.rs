// ----- #[derive(Model)] Notification -----

///The variants of [`Notification`], stored as its `type` field.
#[derive(
    ::core::clone::Clone,
    ::core::marker::Copy,
    ::core::fmt::Debug,
    ::core::cmp::PartialEq,
    ::core::cmp::Eq,
    ::core::hash::Hash,
    ::pattern_runtime::__private::serde::Serialize,
    ::pattern_runtime::__private::serde::Deserialize,
)]
#[serde(crate = "::pattern_runtime::__private::serde")]
pub enum NotificationKind {
    ///`type: "email"`
    #[serde(rename = "email")]
    Email,
    ///`type: "sms"`
    #[serde(rename = "sms")]
    Sms,
    ///`type: "push"`
    #[serde(rename = "push")]
    Push,
}
#[automatically_derived]
impl NotificationKind {
    /// The tag value (`None` for the `#[serde(other)]` variant).
    pub const fn tag(self) -> ::core::option::Option<&'static str> {
        match self {
            NotificationKind::Email => ::core::option::Option::Some("email"),
            NotificationKind::Sms => ::core::option::Option::Some("sms"),
            NotificationKind::Push => ::core::option::Option::Some("push"),
        }
    }
}
///The tag and the fields every variant of [`Notification`] has: what a query over all of them projects to.
#[derive(
    ::core::fmt::Debug,
    ::pattern_runtime::__private::serde::Serialize,
    ::pattern_runtime::__private::serde::Deserialize,
)]
#[serde(crate = "::pattern_runtime::__private::serde")]
pub struct NotificationCommon {
    ///`type`: the variant.
    #[serde(rename = "type")]
    pub kind: NotificationKind,
    ///`_id`, as in [`Notification`].
    #[serde(rename = "_id")]
    pub id: ObjectId,
    ///`createdAt`, as in [`Notification`].
    #[serde(rename = "createdAt")]
    pub created_at: DateTime,
}
///The `Email` variant of [`Notification`] (`type: "email"`): what its handle reads and writes.
#[derive(
    ::core::fmt::Debug,
    ::pattern_runtime::__private::serde::Serialize,
    ::pattern_runtime::__private::serde::Deserialize,
)]
#[serde(crate = "::pattern_runtime::__private::serde")]
pub struct NotificationEmail {
    ///`_id`, as in [`Notification`].
    #[serde(rename = "_id")]
    pub id: ObjectId,
    ///`to`, as in [`Notification`].
    #[serde(rename = "to")]
    pub to: String,
    ///`subject`, as in [`Notification`].
    #[serde(rename = "subject")]
    pub subject: String,
    ///`body`, as in [`Notification`].
    #[serde(rename = "body")]
    pub body: String,
    ///`createdAt`, as in [`Notification`].
    #[serde(rename = "createdAt")]
    pub created_at: DateTime,
}
///The `Sms` variant of [`Notification`] (`type: "sms"`): what its handle reads and writes.
#[derive(
    ::core::fmt::Debug,
    ::pattern_runtime::__private::serde::Serialize,
    ::pattern_runtime::__private::serde::Deserialize,
)]
#[serde(crate = "::pattern_runtime::__private::serde")]
pub struct NotificationSms {
    ///`_id`, as in [`Notification`].
    #[serde(rename = "_id")]
    pub id: ObjectId,
    ///`phoneNumber`, as in [`Notification`].
    #[serde(rename = "phoneNumber")]
    pub phone_number: String,
    ///`message`, as in [`Notification`].
    #[serde(rename = "message")]
    pub message: String,
    ///`createdAt`, as in [`Notification`].
    #[serde(rename = "createdAt")]
    pub created_at: DateTime,
}
///The `Push` variant of [`Notification`] (`type: "push"`): what its handle reads and writes.
#[derive(
    ::core::fmt::Debug,
    ::pattern_runtime::__private::serde::Serialize,
    ::pattern_runtime::__private::serde::Deserialize,
)]
#[serde(crate = "::pattern_runtime::__private::serde")]
pub struct NotificationPush {
    ///`_id`, as in [`Notification`].
    #[serde(rename = "_id")]
    pub id: ObjectId,
    ///`deviceId`, as in [`Notification`].
    #[serde(rename = "deviceId")]
    pub device_id: String,
    ///`title`, as in [`Notification`].
    #[serde(rename = "title")]
    pub title: String,
    ///`content`, as in [`Notification`].
    #[serde(rename = "content")]
    pub content: String,
    ///`createdAt`, as in [`Notification`].
    #[serde(rename = "createdAt")]
    pub created_at: DateTime,
}
const _: () = {
    const _: () = if let ::core::option::Option::Some(__message) = ::pattern_runtime::__private::no_mode_error(
        || {
            #[allow(unused_imports)]
            use ::pattern_runtime::__private::{
                ProbeHeld as _, ProbeItems as _, ProbeNested as _, ProbeOther as _,
                ProbeSnapshotOnly as _, ProbeSyncable as _,
            };
            (&&&::pattern_runtime::__private::RefProbe::<ObjectId>::new()).held()
        },
        "this field holds extended references (`ObjectId`), which an enum model does not keep in sync yet: hold them in a struct model, or store plain values here",
        "this field holds extended references (`ObjectId`), which an enum model does not keep in sync yet: hold them in a struct model, or store plain values here",
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
        "this field holds extended references (`String`), which an enum model does not keep in sync yet: hold them in a struct model, or store plain values here",
        "this field holds extended references (`String`), which an enum model does not keep in sync yet: hold them in a struct model, or store plain values here",
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
        "this field holds extended references (`String`), which an enum model does not keep in sync yet: hold them in a struct model, or store plain values here",
        "this field holds extended references (`String`), which an enum model does not keep in sync yet: hold them in a struct model, or store plain values here",
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
        "this field holds extended references (`String`), which an enum model does not keep in sync yet: hold them in a struct model, or store plain values here",
        "this field holds extended references (`String`), which an enum model does not keep in sync yet: hold them in a struct model, or store plain values here",
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
        "this field holds extended references (`DateTime`), which an enum model does not keep in sync yet: hold them in a struct model, or store plain values here",
        "this field holds extended references (`DateTime`), which an enum model does not keep in sync yet: hold them in a struct model, or store plain values here",
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
        "this field holds extended references (`ObjectId`), which an enum model does not keep in sync yet: hold them in a struct model, or store plain values here",
        "this field holds extended references (`ObjectId`), which an enum model does not keep in sync yet: hold them in a struct model, or store plain values here",
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
        "this field holds extended references (`String`), which an enum model does not keep in sync yet: hold them in a struct model, or store plain values here",
        "this field holds extended references (`String`), which an enum model does not keep in sync yet: hold them in a struct model, or store plain values here",
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
        "this field holds extended references (`String`), which an enum model does not keep in sync yet: hold them in a struct model, or store plain values here",
        "this field holds extended references (`String`), which an enum model does not keep in sync yet: hold them in a struct model, or store plain values here",
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
        "this field holds extended references (`DateTime`), which an enum model does not keep in sync yet: hold them in a struct model, or store plain values here",
        "this field holds extended references (`DateTime`), which an enum model does not keep in sync yet: hold them in a struct model, or store plain values here",
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
        "this field holds extended references (`ObjectId`), which an enum model does not keep in sync yet: hold them in a struct model, or store plain values here",
        "this field holds extended references (`ObjectId`), which an enum model does not keep in sync yet: hold them in a struct model, or store plain values here",
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
        "this field holds extended references (`String`), which an enum model does not keep in sync yet: hold them in a struct model, or store plain values here",
        "this field holds extended references (`String`), which an enum model does not keep in sync yet: hold them in a struct model, or store plain values here",
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
        "this field holds extended references (`String`), which an enum model does not keep in sync yet: hold them in a struct model, or store plain values here",
        "this field holds extended references (`String`), which an enum model does not keep in sync yet: hold them in a struct model, or store plain values here",
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
        "this field holds extended references (`String`), which an enum model does not keep in sync yet: hold them in a struct model, or store plain values here",
        "this field holds extended references (`String`), which an enum model does not keep in sync yet: hold them in a struct model, or store plain values here",
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
        "this field holds extended references (`DateTime`), which an enum model does not keep in sync yet: hold them in a struct model, or store plain values here",
        "this field holds extended references (`DateTime`), which an enum model does not keep in sync yet: hold them in a struct model, or store plain values here",
    ) {
        ::core::panic!("{}", __message)
    };
    ///The serialized field names of [`NotificationCommon`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct NotificationCommonFields {
        ///`type`
        pub kind: ::pattern_runtime::__private::FieldName<NotificationKind>,
        ///`_id`
        pub id: ::pattern_runtime::__private::FieldName<ObjectId>,
        ///`createdAt`
        pub created_at: ::pattern_runtime::__private::FieldName<DateTime>,
    }
    #[automatically_derived]
    impl NotificationCommon {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: NotificationCommonFields = NotificationCommonFields {
            kind: ::pattern_runtime::__private::FieldName::new("type"),
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            created_at: ::pattern_runtime::__private::FieldName::new("createdAt"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for NotificationCommon {
        type Names = NotificationCommonFields;
        const FIELDS: NotificationCommonFields = NotificationCommon::FIELDS;
        const KEYS: &'static [&'static str] = &["type", "_id", "createdAt"];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for NotificationCommon {
        type Inner = NotificationCommon;
    }
    ///The serialized field names of [`NotificationEmail`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct NotificationEmailFields {
        ///`_id`
        pub id: ::pattern_runtime::__private::FieldName<ObjectId>,
        ///`to`
        pub to: ::pattern_runtime::__private::FieldName<String>,
        ///`subject`
        pub subject: ::pattern_runtime::__private::FieldName<String>,
        ///`body`
        pub body: ::pattern_runtime::__private::FieldName<String>,
        ///`createdAt`
        pub created_at: ::pattern_runtime::__private::FieldName<DateTime>,
    }
    #[automatically_derived]
    impl NotificationEmail {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: NotificationEmailFields = NotificationEmailFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            to: ::pattern_runtime::__private::FieldName::new("to"),
            subject: ::pattern_runtime::__private::FieldName::new("subject"),
            body: ::pattern_runtime::__private::FieldName::new("body"),
            created_at: ::pattern_runtime::__private::FieldName::new("createdAt"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for NotificationEmail {
        type Names = NotificationEmailFields;
        const FIELDS: NotificationEmailFields = NotificationEmail::FIELDS;
        const KEYS: &'static [&'static str] = &[
            "_id",
            "to",
            "subject",
            "body",
            "createdAt",
        ];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for NotificationEmail {
        type Inner = NotificationEmail;
    }
    ///The serialized field names of [`NotificationSms`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct NotificationSmsFields {
        ///`_id`
        pub id: ::pattern_runtime::__private::FieldName<ObjectId>,
        ///`phoneNumber`
        pub phone_number: ::pattern_runtime::__private::FieldName<String>,
        ///`message`
        pub message: ::pattern_runtime::__private::FieldName<String>,
        ///`createdAt`
        pub created_at: ::pattern_runtime::__private::FieldName<DateTime>,
    }
    #[automatically_derived]
    impl NotificationSms {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: NotificationSmsFields = NotificationSmsFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            phone_number: ::pattern_runtime::__private::FieldName::new("phoneNumber"),
            message: ::pattern_runtime::__private::FieldName::new("message"),
            created_at: ::pattern_runtime::__private::FieldName::new("createdAt"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for NotificationSms {
        type Names = NotificationSmsFields;
        const FIELDS: NotificationSmsFields = NotificationSms::FIELDS;
        const KEYS: &'static [&'static str] = &[
            "_id",
            "phoneNumber",
            "message",
            "createdAt",
        ];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for NotificationSms {
        type Inner = NotificationSms;
    }
    ///The serialized field names of [`NotificationPush`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct NotificationPushFields {
        ///`_id`
        pub id: ::pattern_runtime::__private::FieldName<ObjectId>,
        ///`deviceId`
        pub device_id: ::pattern_runtime::__private::FieldName<String>,
        ///`title`
        pub title: ::pattern_runtime::__private::FieldName<String>,
        ///`content`
        pub content: ::pattern_runtime::__private::FieldName<String>,
        ///`createdAt`
        pub created_at: ::pattern_runtime::__private::FieldName<DateTime>,
    }
    #[automatically_derived]
    impl NotificationPush {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: NotificationPushFields = NotificationPushFields {
            id: ::pattern_runtime::__private::FieldName::new("_id"),
            device_id: ::pattern_runtime::__private::FieldName::new("deviceId"),
            title: ::pattern_runtime::__private::FieldName::new("title"),
            content: ::pattern_runtime::__private::FieldName::new("content"),
            created_at: ::pattern_runtime::__private::FieldName::new("createdAt"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for NotificationPush {
        type Names = NotificationPushFields;
        const FIELDS: NotificationPushFields = NotificationPush::FIELDS;
        const KEYS: &'static [&'static str] = &[
            "_id",
            "deviceId",
            "title",
            "content",
            "createdAt",
        ];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for NotificationPush {
        type Inner = NotificationPush;
    }
    static __TAG_INDEX: ::pattern_runtime::__private::IndexSpec = ::pattern_runtime::__private::IndexSpec::from_parts(::pattern_runtime::__private::IndexParts {
        keys: &[
            ::pattern_runtime::__private::IndexKey {
                path: "type",
                kind: ::pattern_runtime::__private::IndexKind::Ascending,
            },
        ],
        name: "type_1",
        unique: false,
        sparse: false,
        hidden: false,
        expire_after_seconds: ::core::option::Option::None,
        collation: ::core::option::Option::None,
        partial: &[],
    });
    static __POLYMORPHIC: ::pattern_runtime::__private::PolymorphicSpec = ::pattern_runtime::__private::PolymorphicSpec::from_parts(
        &__TAG_INDEX,
    );
    static __SCHEMA: ::pattern_runtime::__private::ModelSchema = ::pattern_runtime::__private::ModelSchema::from_parts(::pattern_runtime::__private::SchemaParts {
        name: "Notification",
        collection: "notifications",
        group: ::core::option::Option::Some("polymorphic"),
        fields: &[
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "kind",
                bson_name: "type",
                rust_type: "NotificationKind",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "id",
                bson_name: "_id",
                rust_type: "ObjectId",
                annotations: &[],
            }),
            ::pattern_runtime::__private::FieldSchema::from_parts(::pattern_runtime::__private::FieldParts {
                rust_name: "created_at",
                bson_name: "createdAt",
                rust_type: "DateTime",
                annotations: &[
                    ::pattern_runtime::__private::Annotation::Index {
                        name: "createdAt_-1",
                    },
                ],
            }),
        ],
        indexes: &[
            ::pattern_runtime::__private::IndexSpec::from_parts(::pattern_runtime::__private::IndexParts {
                keys: &[
                    ::pattern_runtime::__private::IndexKey {
                        path: "createdAt",
                        kind: ::pattern_runtime::__private::IndexKind::Descending,
                    },
                ],
                name: "createdAt_-1",
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
                        path: "deviceId",
                        kind: ::pattern_runtime::__private::IndexKind::Ascending,
                    },
                ],
                name: "deviceId_1_push",
                unique: false,
                sparse: false,
                hidden: false,
                expire_after_seconds: ::core::option::Option::None,
                collation: ::core::option::Option::None,
                partial: &[
                    ::pattern_runtime::__private::PartialClause {
                        path: "type",
                        op: ::pattern_runtime::__private::PartialOp::Eq,
                        value: ::pattern_runtime::__private::Literal::Str("push"),
                    },
                ],
            }),
        ],
        shard_key: ::core::option::Option::None,
        patterns: &[&__POLYMORPHIC],
    });
    #[automatically_derived]
    impl Notification {
        /// The serialized (BSON) names of the tag (`kind`) and of the fields every
        /// variant has, for filters across variants.
        pub const FIELDS: <NotificationCommon as ::pattern_runtime::__private::Fields>::Names = NotificationCommon::FIELDS;
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for Notification {
        type Names = <NotificationCommon as ::pattern_runtime::__private::Fields>::Names;
        const FIELDS: Self::Names = <NotificationCommon as ::pattern_runtime::__private::Fields>::FIELDS;
        const KEYS: &'static [&'static str] = <NotificationCommon as ::pattern_runtime::__private::Fields>::KEYS;
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Model for Notification {
        const SCHEMA: &'static ::pattern_runtime::__private::ModelSchema = &__SCHEMA;
        type Id = ObjectId;
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Unversioned for Notification {}
    #[automatically_derived]
    impl ::pattern_runtime::__private::Polymorphic for Notification {
        const TAG: &'static str = "type";
        const TAGS: &'static [&'static str] = &["email", "sms", "push"];
        const CATCH_ALL: bool = false;
        type Kind = NotificationKind;
        type Common = NotificationCommon;
        fn kind(&self) -> NotificationKind {
            match self {
                Notification::Email { .. } => NotificationKind::Email,
                Notification::Sms { .. } => NotificationKind::Sms,
                Notification::Push { .. } => NotificationKind::Push,
            }
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Variant for NotificationEmail {
        type Model = Notification;
        const TAG_VALUE: &'static str = "email";
    }
    #[automatically_derived]
    impl ::core::convert::From<NotificationEmail> for Notification {
        fn from(v: NotificationEmail) -> Self {
            Notification::Email {
                id: v.id,
                to: v.to,
                subject: v.subject,
                body: v.body,
                created_at: v.created_at,
            }
        }
    }
    #[automatically_derived]
    impl ::core::convert::TryFrom<Notification> for NotificationEmail {
        /// The value, when it is another variant.
        type Error = Notification;
        fn try_from(m: Notification) -> ::core::result::Result<Self, Notification> {
            match m {
                Notification::Email { id, to, subject, body, created_at } => {
                    ::core::result::Result::Ok(NotificationEmail {
                        id,
                        to,
                        subject,
                        body,
                        created_at,
                    })
                }
                #[allow(unreachable_patterns)]
                other => ::core::result::Result::Err(other),
            }
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Variant for NotificationSms {
        type Model = Notification;
        const TAG_VALUE: &'static str = "sms";
    }
    #[automatically_derived]
    impl ::core::convert::From<NotificationSms> for Notification {
        fn from(v: NotificationSms) -> Self {
            Notification::Sms {
                id: v.id,
                phone_number: v.phone_number,
                message: v.message,
                created_at: v.created_at,
            }
        }
    }
    #[automatically_derived]
    impl ::core::convert::TryFrom<Notification> for NotificationSms {
        /// The value, when it is another variant.
        type Error = Notification;
        fn try_from(m: Notification) -> ::core::result::Result<Self, Notification> {
            match m {
                Notification::Sms { id, phone_number, message, created_at } => {
                    ::core::result::Result::Ok(NotificationSms {
                        id,
                        phone_number,
                        message,
                        created_at,
                    })
                }
                #[allow(unreachable_patterns)]
                other => ::core::result::Result::Err(other),
            }
        }
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Variant for NotificationPush {
        type Model = Notification;
        const TAG_VALUE: &'static str = "push";
    }
    #[automatically_derived]
    impl ::core::convert::From<NotificationPush> for Notification {
        fn from(v: NotificationPush) -> Self {
            Notification::Push {
                id: v.id,
                device_id: v.device_id,
                title: v.title,
                content: v.content,
                created_at: v.created_at,
            }
        }
    }
    #[automatically_derived]
    impl ::core::convert::TryFrom<Notification> for NotificationPush {
        /// The value, when it is another variant.
        type Error = Notification;
        fn try_from(m: Notification) -> ::core::result::Result<Self, Notification> {
            match m {
                Notification::Push { id, device_id, title, content, created_at } => {
                    ::core::result::Result::Ok(NotificationPush {
                        id,
                        device_id,
                        title,
                        content,
                        created_at,
                    })
                }
                #[allow(unreachable_patterns)]
                other => ::core::result::Result::Err(other),
            }
        }
    }
    ::pattern_runtime::__private::inventory::submit! {
        ::pattern_runtime::__private::Registration { schema : & __SCHEMA }
    }
};

// ----- #[derive(Fields)] PushContent -----

const _: () = {
    ///The serialized field names of [`PushContent`].
    #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug)]
    #[allow(dead_code)]
    pub struct PushContentFields {
        ///`content`
        pub content: ::pattern_runtime::__private::FieldName<String>,
        ///`deviceId`
        pub device_id: ::pattern_runtime::__private::FieldName<String>,
    }
    #[automatically_derived]
    impl PushContent {
        /// The serialized (BSON) name of every stored field, for filters and updates.
        pub const FIELDS: PushContentFields = PushContentFields {
            content: ::pattern_runtime::__private::FieldName::new("content"),
            device_id: ::pattern_runtime::__private::FieldName::new("deviceId"),
        };
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::Fields for PushContent {
        type Names = PushContentFields;
        const FIELDS: PushContentFields = PushContent::FIELDS;
        const KEYS: &'static [&'static str] = &["content", "deviceId"];
        const APPROXIMATE: &'static [&'static str] = &[];
    }
    #[automatically_derived]
    #[diagnostic::do_not_recommend]
    impl ::pattern_runtime::__private::Nests for PushContent {
        type Inner = PushContent;
    }
    #[automatically_derived]
    impl ::pattern_runtime::__private::HeldRefs for PushContent {
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
                    field: "content",
                    in_array: "this field's items (`PushContent`) hold extended references in `content`, and the field has no mode: mark it `#[extended_ref(propagate, path = content)]` to keep the copies in sync, or `#[extended_ref(snapshot, path = content)]` to keep them as written",
                    nested: "this field holds a `PushContent`, whose `content` holds extended references: references inside a nested struct are kept in sync only from a `Vec` of items (`#[extended_ref(propagate, path = content)] items: Vec<PushContent>`); hold the reference on the model itself, or the struct in a `Vec`",
                    beside: "the items (`PushContent`) also hold extended references in `content`, which no mode covers: one field tracks one reference of its items (`path`). Hold `content`'s reference in an array of its own, or drop it from the items",
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
                    field: "device_id",
                    in_array: "this field's items (`PushContent`) hold extended references in `device_id`, and the field has no mode: mark it `#[extended_ref(propagate, path = device_id)]` to keep the copies in sync, or `#[extended_ref(snapshot, path = device_id)]` to keep them as written",
                    nested: "this field holds a `PushContent`, whose `device_id` holds extended references: references inside a nested struct are kept in sync only from a `Vec` of items (`#[extended_ref(propagate, path = device_id)] items: Vec<PushContent>`); hold the reference on the model itself, or the struct in a `Vec`",
                    beside: "the items (`PushContent`) also hold extended references in `device_id`, which no mode covers: one field tracks one reference of its items (`path`). Hold `device_id`'s reference in an array of its own, or drop it from the items",
                },
            ),
        ];
    }
    const _: () = {
        let __field = <NotificationPush as ::pattern_runtime::__private::Fields>::FIELDS
            .content;
        let _: ::pattern_runtime::__private::FieldName<String> = __field;
    };
    const _: () = if let ::core::option::Option::Some(__message) = if ::pattern_runtime::__private::str_eq(
        <NotificationPush as ::pattern_runtime::__private::Fields>::FIELDS
            .content
            .as_str(),
        "content",
    ) {
        ::core::option::Option::None
    } else {
        ::core::option::Option::Some(
            "`content` is serialized as `content` here but under another name in `NotificationPush`: a projection asks the server for the projected type's names, so they must match (check the two structs' `rename` / `rename_all`)",
        )
    } {
        ::core::panic!("{}", __message)
    };
    const _: () = {
        let __field = <NotificationPush as ::pattern_runtime::__private::Fields>::FIELDS
            .device_id;
        let _: ::pattern_runtime::__private::FieldName<String> = __field;
    };
    const _: () = if let ::core::option::Option::Some(__message) = if ::pattern_runtime::__private::str_eq(
        <NotificationPush as ::pattern_runtime::__private::Fields>::FIELDS
            .device_id
            .as_str(),
        "deviceId",
    ) {
        ::core::option::Option::None
    } else {
        ::core::option::Option::Some(
            "`device_id` is serialized as `deviceId` here but under another name in `NotificationPush`: a projection asks the server for the projected type's names, so they must match (check the two structs' `rename` / `rename_all`)",
        )
    } {
        ::core::panic!("{}", __message)
    };
    #[automatically_derived]
    impl ::pattern_runtime::__private::Projection<NotificationPush> for PushContent {}
};

