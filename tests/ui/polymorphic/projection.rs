use bson::doc;
use pattern_runtime::{Fields, Model, VariantCollection};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[serde(tag = "type", rename_all = "lowercase", rename_all_fields = "camelCase")]
enum Notification {
    Push {
        #[serde(rename = "_id")]
        id: u32,
        device_id: String,
        content: String,
        badge: i32,
    },
}

#[derive(Deserialize, Fields)]
#[projection(of = NotificationPush)]
struct Checked {
    // Not a field of the variant.
    title: String,
    // Another type than the variant's.
    badge: String,
    // The variant stores it as `deviceId`.
    device_id: String,
}

#[derive(Deserialize, Fields)]
#[projection(from = NotificationPush)]
struct Misspelt {
    content: String,
}

#[derive(Deserialize, Fields)]
struct Undeclared {
    content: String,
}

fn read(pushes: VariantCollection<NotificationPush>) {
    let _ = pushes.find_as::<Undeclared>(doc! {});
}

fn main() {}
