// A versioned model holding a propagated copy: a change of the source would rewrite the copy
// without a new version, and the next `save` would undo it. A snapshot copy is fine.
use pattern_runtime::Model;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Model)]
#[extended_ref(VenueRef(name))]
struct Venue {
    #[serde(rename = "_id")]
    id: u32,
    name: String,
}

#[derive(Serialize, Deserialize, Model)]
#[versioned(history = "gig_revisions")]
struct Gig {
    #[serde(rename = "_id")]
    id: u32,
    #[version]
    version: i64,
    #[extended_ref(propagate)]
    venue: VenueRef,
    #[extended_ref(snapshot)]
    first_venue: VenueRef,
}

fn main() {}
