use pattern_runtime::query::{Filter, Sort, Update};
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Product {
    #[serde(rename = "_id")]
    id: String,
    name: String,
    price: f64,
}

#[derive(Serialize, Deserialize, Model)]
struct Order {
    #[serde(rename = "_id")]
    id: String,
    total: f64,
}

async fn run(db: mongodb::Database) -> pattern_runtime::Result<()> {
    let products = Product::collection(&db);
    // A sort made from `Order`'s field names, on a find of `Product`s.
    let _ = products
        .find(Filter::gt(Product::FIELDS.price, 10.0))
        .sort(Sort::desc(Order::FIELDS.total))
        .await?;
    let _ = Update::<Product>::new();
    Ok(())
}

fn main() {
    let _ = run;
}
