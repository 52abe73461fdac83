//! An enum model using what the derive accepts: renamed tag values and fields, a catch-all, an
//! index on the enum starting with the tag (so no `type_1` is added), indexes on a variant (on
//! the variant and on a field, one with a partial filter of its own and a nested path), and extra
//! derives on the generated types.

use bson::doc;
use pattern_runtime::{Fields, Model, Polymorphic, Variant};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
pub struct Geo {
    pub country_code: String,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(
    tag = "kind",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
#[model(collection = "items", derive(Clone, PartialEq))]
#[index(keys(kind = 1, created_at = -1))]
pub enum Item {
    #[index(keys(geo.country_code = 1), partial(score(gt = 0)))]
    BlogPost {
        #[serde(rename = "_id")]
        id: u32,
        created_at: bson::DateTime,
        score: i32,
        geo: Geo,
    },
    #[serde(rename = "vid")]
    Video {
        #[serde(rename = "_id")]
        id: u32,
        created_at: bson::DateTime,
        #[index(unique, name = "video_url")]
        url: String,
        #[serde(skip)]
        cached: Option<Vec<u8>>,
    },
    #[serde(other)]
    Other,
}

pub fn main() {
    // The common fields and the tag.
    assert_eq!(Item::FIELDS.kind.as_str(), "kind");
    assert_eq!(Item::FIELDS.created_at.as_str(), "createdAt");
    assert_eq!(<Item as Polymorphic>::TAGS, ["blog_post", "vid"]);
    const { assert!(<Item as Polymorphic>::CATCH_ALL) };
    assert_eq!(ItemVideo::TAG_VALUE, "vid");
    assert_eq!(ItemBlogPost::FIELDS.geo.as_str(), "geo");
    assert_eq!(<ItemCommon as Fields>::KEYS, ["kind", "_id", "createdAt"]);

    let names: Vec<&str> = Item::SCHEMA.indexes().iter().map(|i| i.name()).collect();
    assert_eq!(
        names,
        [
            "kind_1_createdAt_-1",
            "geo.countryCode_1_blog_post",
            "video_url"
        ]
    );
    let blog = &Item::SCHEMA.indexes()[1];
    assert_eq!(
        blog.partial_filter(),
        Some(doc! { "score": { "$gt": 0 }, "kind": "blog_post" })
    );
    let video = &Item::SCHEMA.indexes()[2];
    assert_eq!(video.partial_filter(), Some(doc! { "kind": "vid" }));

    // Conversions both ways, and `kind()`.
    let v = ItemVideo {
        id: 1,
        created_at: bson::DateTime::from_millis(0),
        url: "u".into(),
        cached: None,
    };
    let item = Item::from(v.clone());
    assert_eq!(item.kind(), ItemKind::Video);
    assert_eq!(ItemVideo::try_from(item).ok(), Some(v));
    assert!(ItemBlogPost::try_from(Item::Other).is_err());
    assert_eq!(ItemKind::Other.tag(), None);
}
