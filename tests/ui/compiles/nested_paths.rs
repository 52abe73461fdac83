use pattern_runtime::{Fields, Model};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
pub struct Dimensions {
    weight_grams: u32,
    #[serde(rename = "h")]
    height_mm: u32,
    packaging: Option<Packaging>,
}

#[derive(Serialize, Deserialize, Fields)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub struct Packaging {
    box_kind: String,
}

#[derive(Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
pub struct Attribute {
    attr_name: String,
    attr_value: String,
}

#[derive(Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "nested_products")]
#[index(keys(dimensions.weight_grams = 1))]
#[index(keys(dimensions.packaging.box_kind = 1, product_kind = -1))]
#[index(keys(attributes.attr_name = 1, attributes.attr_value = 1))]
#[index(keys(metadata.someKey = 1), name = "meta")]
#[index(keys(dimensions.height_mm = 1), partial(dimensions.weight_grams(gt = 0)))]
pub struct NestedProduct {
    #[serde(rename = "_id")]
    id: String,
    product_kind: String,
    dimensions: Dimensions,
    attributes: Vec<Attribute>,
    metadata: bson::Document,
}

pub fn main() {
    let keys: Vec<Vec<&str>> = NestedProduct::SCHEMA
        .indexes()
        .iter()
        .map(|i| i.keys().iter().map(|k| k.path).collect())
        .collect();
    assert_eq!(
        keys,
        [
            vec!["dimensions.weightGrams"],
            vec!["dimensions.packaging.BOX_KIND", "productKind"],
            vec!["attributes.attrName", "attributes.attrValue"],
            vec!["metadata.someKey"],
            vec!["dimensions.h"],
        ]
    );
    let names: Vec<&str> = NestedProduct::SCHEMA
        .indexes()
        .iter()
        .map(|i| i.name())
        .collect();
    assert_eq!(
        names,
        [
            "dimensions.weightGrams_1",
            "dimensions.packaging.BOX_KIND_1_productKind_-1",
            "attributes.attrName_1_attributes.attrValue_1",
            "meta",
            "dimensions.h_1",
        ]
    );
    let partial = NestedProduct::SCHEMA.indexes()[4].partial();
    assert_eq!(partial[0].path, "dimensions.weightGrams");
}
