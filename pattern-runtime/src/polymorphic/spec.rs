//! The polymorphic pattern's static data: the index on the tag.

use super::*;

/// The polymorphic pattern's static data on an enum model: the index on the tag, created with
/// the model's unless one of the model's own indexes begins with the tag.
#[derive(Debug)]
pub struct PolymorphicSpec {
    tag_index: &'static IndexSpec,
}

impl PolymorphicSpec {
    #[doc(hidden)]
    pub const fn from_parts(tag_index: &'static IndexSpec) -> Self {
        PolymorphicSpec { tag_index }
    }

    /// The index on the tag (`type_1`).
    pub fn tag_index(&self) -> &'static IndexSpec {
        self.tag_index
    }
}

impl PatternSpec for PolymorphicSpec {
    fn indexes(&'static self, model: &'static ModelSchema) -> IndexesNeeded {
        vec![(model.collection(), self.tag_index)]
    }
}
