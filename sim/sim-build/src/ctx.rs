//! What every step of one top's build shares (its recipe, the Verilator and the compiler):
//! a leaf that the library's build, the compile and the runtime's build all take.

use verilator_find::Verilator;

use crate::recipe::Recipe;

/// What every step of one top's build shares.
pub(crate) struct Ctx<'a> {
    pub(crate) recipe: &'a Recipe,
    pub(crate) verilator: Verilator,
    pub(crate) compiler: String,
}
