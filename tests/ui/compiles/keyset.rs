//! Typed keyset pages compile over every order an index serves: the model's own `#[index]`es
//! (in their directions or all reversed, any prefix), and the indexes its patterns declare on
//! its collection (a relation's parent with its sort, a tree's key, a grid's resource and
//! slot, an enum's index on its common fields). Whether they compile is the point; nothing runs.

use pattern_runtime::query::{Filter, Sort};
use pattern_runtime::{Model, Ref};
use serde::{Deserialize, Serialize};

#[derive(Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "keyset_posts")]
#[index(keys(author = 1, created_at = -1, score = 1))]
struct Post {
    #[serde(rename = "_id")]
    id: i64,
    author: String,
    created_at: bson::DateTime,
    score: i64,
}

#[derive(Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "keyset_comments")]
struct Comment {
    #[serde(rename = "_id")]
    id: i64,
    #[relation(parent, sort(at = -1))]
    post: Ref<Post>,
    at: bson::DateTime,
}

#[derive(Clone, Serialize, Deserialize, Model)]
#[model(collection = "keyset_categories")]
#[tree(parent = parent, ancestors = ancestors, key = name)]
struct Category {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
    parent: Option<String>,
    ancestors: Vec<String>,
}

#[derive(Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "keyset_slots")]
#[preallocated(resource = room_id, slot = day, holder = booked_by)]
struct RoomDay {
    #[serde(rename = "_id")]
    id: String,
    room_id: String,
    day: String,
    booked_by: Option<String>,
}

#[derive(Clone, Serialize, Deserialize, Model)]
#[serde(
    tag = "kind",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
#[model(collection = "keyset_events")]
#[index(keys(at = -1))]
enum Event {
    Click {
        #[serde(rename = "_id")]
        id: i64,
        at: bson::DateTime,
    },
    View {
        #[serde(rename = "_id")]
        id: i64,
        at: bson::DateTime,
    },
}

#[allow(clippy::too_many_arguments)]
async fn pages(
    db: mongodb::Database,
    post: Post,
    comment: Comment,
    category: Category,
    day: RoomDay,
    event: Event,
) -> pattern_runtime::Result<()> {
    let f = Post::FIELDS;
    let posts = Post::collection(&db);
    // Every prefix, in its directions and reversed, then `_id` either way; `_id` alone.
    let _ = posts
        .find(Filter::default())
        .sort(Sort::asc(f.author).then_asc(f.id))
        .after(&post)
        .await?;
    let _ = posts
        .find(Filter::default())
        .sort(Sort::asc(f.author).then_desc(f.created_at).then_desc(f.id))
        .after(&post)
        .await?;
    let _ = posts
        .find(Filter::default())
        .sort(
            Sort::desc(f.author)
                .then_asc(f.created_at)
                .then_desc(f.score)
                .then_asc(f.id),
        )
        .after(&post)
        .await?;
    let _ = posts
        .find(Filter::default())
        .sort(Sort::desc(f.id))
        .after(&post)
        .await?;
    // The patterns' indexes.
    let c = Comment::FIELDS;
    let _ = Comment::collection(&db)
        .find(Filter::default())
        .sort(Sort::asc(c.post).then_desc(c.at).then_asc(c.id))
        .after(&comment)
        .await?;
    let k = Category::FIELDS;
    let _ = Category::collection(&db)
        .find(Filter::default())
        .sort(Sort::asc(k.name).then_asc(k.id))
        .after(&category)
        .await?;
    let r = RoomDay::FIELDS;
    let _ = RoomDay::collection(&db)
        .find(Filter::default())
        .sort(Sort::desc(r.room_id).then_desc(r.day).then_desc(r.id))
        .after(&day)
        .await?;
    let e = Event::FIELDS;
    let _ = Event::collection(&db)
        .find(Filter::default())
        .sort(Sort::desc(e.at).then_desc(e.id))
        .after(&event)
        .await?;
    let _ = Event::collection(&db)
        .find(Filter::default())
        .sort(Sort::asc(e.kind).then_asc(e.id))
        .after(&event)
        .await?;
    Ok(())
}

pub fn main() {
    let _ = pages;
}
