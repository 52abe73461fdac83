use pattern_runtime::AttributeKey;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, AttributeKey)]
enum Channel {
    Gewala,
    Custom(String),
}

#[derive(Serialize, Deserialize, AttributeKey)]
struct NotAnEnum {
    name: String,
}

fn main() {}
