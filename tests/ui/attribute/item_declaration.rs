use pattern_runtime::Fields;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Fields)]
#[attribute(key = nmae, value = value, qualifiers(unit, sorce))]
struct Misspelt {
    name: String,
    value: f64,
    unit: String,
}

#[derive(Serialize, Deserialize, Fields)]
#[attribute(key = name, value = value)]
struct Undeclared {
    name: String,
    value: f64,
    // Neither key, value nor qualifier.
    unit: String,
}

#[derive(Serialize, Deserialize, Fields)]
#[attribute(key = name)]
struct NoValue {
    name: String,
    value: f64,
}

#[derive(Serialize, Deserialize, Fields)]
#[attribute(key = code, value = value)]
struct NumericKey {
    code: u32,
    value: f64,
}

fn main() {}
