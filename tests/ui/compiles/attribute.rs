//! An attribute item under serde renames, an enum key, and the index the model declares: its
//! paths are the serialized names.

use pattern_runtime::{attribute::AttributeItem, AttributeKey, Fields, Model};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, AttributeKey)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Spec {
    ScreenSize,
    #[serde(rename = "ram")]
    Memory,
}

#[derive(Clone, Debug, Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
#[attribute(key = spec_name, value = spec_value, qualifiers(unit_of_measure))]
pub struct SpecItem {
    pub spec_name: Spec,
    pub spec_value: f64,
    pub unit_of_measure: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
pub struct Product {
    #[serde(rename = "_id")]
    pub id: u32,
    #[attribute]
    pub tech_specs: Vec<SpecItem>,
}

pub fn main() {
    assert_eq!(Spec::ScreenSize.as_key(), "SCREEN_SIZE");
    assert_eq!(Spec::Memory.as_key(), "ram");
    assert_eq!(<SpecItem as AttributeItem>::KEY, "specName");
    let spec = Product::SCHEMA
        .spec::<pattern_runtime::attribute::AttributeSpec>()
        .unwrap();
    assert_eq!(spec.field(), "techSpecs");
    let keys: Vec<&str> = spec.index().keys().iter().map(|k| k.path).collect();
    assert_eq!(keys, ["techSpecs.specName", "techSpecs.specValue"]);
    assert_eq!(
        spec.index().name(),
        "techSpecs.specName_1_techSpecs.specValue_1"
    );
}
