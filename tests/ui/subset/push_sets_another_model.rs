use pattern_runtime::query::Update;
use pattern_runtime::{Fields, Model};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    name: String,
    #[subset(limit = 10, sort(created_at = -1), full = Review, parent = product_id)]
    recent_reviews: Vec<ReviewExcerpt>,
}

#[derive(Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
struct Review {
    #[serde(rename = "_id")]
    id: String,
    product_id: String,
    content: String,
    created_at: bson::DateTime,
}

#[derive(Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
struct ReviewExcerpt {
    review_id: String,
    created_at: bson::DateTime,
}

impl From<&Review> for ReviewExcerpt {
    fn from(r: &Review) -> Self {
        ReviewExcerpt {
            review_id: r.id.clone(),
            created_at: r.created_at,
        }
    }
}

async fn run(db: mongodb::Database, review: Review) -> pattern_runtime::Result<()> {
    let reviews = Product::collection(&db).subset(Product::FIELDS.recent_reviews);
    // The parent fields a push also sets are the parent's (`Product`), not the item's.
    reviews
        .push("p1", review)
        .set(Update::new().set(Review::FIELDS.content, "edited"))
        .await?;
    Ok(())
}

fn main() {
    let _ = run;
}
