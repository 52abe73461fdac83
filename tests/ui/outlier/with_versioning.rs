// An outlier array's pushes would bypass the versioned model's revisions.
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[versioned(history = "user_revisions")]
struct User {
    #[serde(rename = "_id")]
    id: String,
    #[version]
    version: i64,
    #[outlier(limit = 50, overflow = "user_posts", flag = is_outlier, count = posts_count)]
    posts: Vec<String>,
    is_outlier: bool,
    posts_count: i64,
}

// Only the attribute is the mistake: the model's versioned writes still type-check.
#[allow(dead_code)]
async fn write(
    db: &mongodb::Database,
    mut user: User,
) -> pattern_runtime::Result<pattern_runtime::Written> {
    let users = User::collection(db);
    users.insert(&mut user).await?;
    users.replace(&mut user).await
}

fn main() {}
