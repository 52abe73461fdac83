//! Shared pieces of the examples (none yet).
