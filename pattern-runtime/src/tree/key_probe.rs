//! Compile-time checks of the fields a tree declares (generated code): the probe of a field's
//! type `T` against the tree's key type `K`, a family of checks as in `checks`.

use crate::checks::{probe_family, Probe};

/// The probe of a field of type `T` meant to hold keys of type `K`.
pub type KeyProbe<T, K> = Probe<T, K>;

probe_family! {
    /// Every check, when nothing more specific holds.
    fallback ProbeOtherKey;
    /// `T` is `K`.
    ProbeKey::key for impl<K> &Probe<K, K>;
    /// `T` is `Option<K>`.
    ProbeOptionalKey::optional_key for impl<K> &Probe<Option<K>, K>;
    /// `T` is `Vec<K>`.
    ProbeKeys::keys for impl<K> &Probe<Vec<K>, K>;
}
