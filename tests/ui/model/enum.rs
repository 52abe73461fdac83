use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[serde(tag = "type")]
enum Notification {
    Email { to: String },
    Sms { phone_number: String },
}

fn main() {}
