//! What a build script's description gives back per top: its names, its factory's symbol and
//! the recipe its model is built from.

use std::path::PathBuf;

use crate::recipe::Recipe;

/// A top that was built.
#[derive(Debug, Clone)]
pub struct BuiltTop {
    /// The top's name.
    pub name: String,
    /// The module.
    pub module: String,
    /// The C symbol of its model factory.
    pub symbol: String,
    /// The Rust constant generated for it (`UPPER_SNAKE` of the name).
    pub constant: String,
    /// How to build it.
    pub recipe: Recipe,
}

/// What [`crate::Build::compile`] made.
#[derive(Debug, Clone)]
pub struct Built {
    /// The tops, in the order they were added.
    pub tops: Vec<BuiltTop>,
    /// The Rust file with one `TopDef` constant per top, for `sim_runtime::include_tops!()`.
    pub rust_file: PathBuf,
}
