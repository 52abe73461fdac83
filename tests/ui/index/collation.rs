use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct User {
    #[serde(rename = "_id")]
    id: u32,
    #[index(collation(strength = 2))]
    email: String,
    #[index(collation(locale = "en", strength = 7))]
    name: String,
    #[index(collation(locale = "en", strenght = 2))]
    city: String,
}

fn main() {}
