//! The options of `#[relation]`: an unknown one, `sort` without `parent`, a sort key that is not
//! a field, a sort direction other than 1 or -1, `parent` beside `inverse`, a value instead of a
//! list, and two attributes on one field. `LogMessage.host` is still listed for `Host.messages`,
//! which names it: no error there.

use bson::oid::ObjectId;
use pattern_runtime::{Model, Ref};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
struct Host {
    #[serde(rename = "_id")]
    id: ObjectId,
    #[relation(inverse = host)]
    messages: Vec<Ref<LogMessage>>,
}

#[derive(Serialize, Deserialize, Model)]
struct LogMessage {
    #[serde(rename = "_id")]
    id: ObjectId,
    time: i64,
    #[relation(parent, inverse = messages)]
    host: Ref<Host>,
    #[relation(parnet)]
    a: Ref<Host>,
    #[relation(sort(time = -1))]
    b: Ref<Host>,
    #[relation(parent, sort(tiem = -1))]
    c: Ref<Host>,
    #[relation(parent, sort(time = 2))]
    d: Ref<Host>,
    #[relation = "parent"]
    e: Ref<Host>,
    #[relation]
    #[relation(parent)]
    f: Ref<Host>,
}

fn main() {}
