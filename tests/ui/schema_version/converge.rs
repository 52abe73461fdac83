use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

// A model without older versions has nothing to converge.
#[derive(Serialize, Deserialize, Model)]
struct Plain {
    #[serde(rename = "_id")]
    id: u32,
}

async fn run(db: mongodb::Database) {
    let _ = Plain::collection(&db).converge().await;
}

fn main() {
    let _ = run;
}
