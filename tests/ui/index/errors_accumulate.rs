use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[model(colection = "users")]
#[index(keys(emial = 1))]
struct User {
    id: u32,
    #[index(uniqe)]
    email: String,
    #[index(expire_after = "soon")]
    created_at: bson::DateTime,
}

fn main_uses_the_stub() {
    // The stubs keep later code compiling: only the mistakes above are reported.
    let _ = User::FIELDS.email;
    let _ = <User as Model>::SCHEMA;
}

fn main() {
    main_uses_the_stub();
}
