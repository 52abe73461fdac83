use pattern_runtime::query::Update;
use pattern_runtime::{Model, Ref};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Person {
    #[serde(rename = "_id")]
    id: String,
    #[relation(inverse = owner)]
    tasks: Vec<Ref<Task>>,
}

#[derive(Serialize, Deserialize, Model)]
struct Task {
    #[serde(rename = "_id")]
    id: String,
    #[relation(inverse = tasks)]
    owner: Ref<Person>,
}

fn main() {
    let _ = Update::new().set(Task::FIELDS.owner, Ref::new("p".to_owned()));
}
