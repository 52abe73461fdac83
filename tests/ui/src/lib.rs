//! Compile-fail cases live under the category folders.
