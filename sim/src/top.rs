//! Verilated tops as values: card-sim's own (`Top`) and those other crates build with
//! card-sim-build, both turned into a [`TopDef`] that [`crate::Model`] builds from.

use std::ffi::c_void;

/// How Rust asks a top's factory for a model; the C++ `card_sim::ModelOptions` has the same
/// layout (`cpp/sim_model.h`).
#[doc(hidden)]
#[repr(C)]
#[derive(Debug)]
pub struct ModelOptions {
    pub(crate) name: *const u8,
    pub(crate) name_len: usize,
    pub(crate) waves: *const u8,
    pub(crate) waves_len: usize,
    pub(crate) seed: u64,
    pub(crate) rand_reset: u32,
    pub(crate) echo: u32,
    pub(crate) err: *mut u8,
    pub(crate) err_cap: usize,
}

/// The generated factory of one top: a new model, or null with the reason in `err`.
#[doc(hidden)]
pub type RawFactory = unsafe extern "C" fn(opts: *const ModelOptions) -> *mut c_void;

/// A verilated top a model can be built from: one of card-sim's own ([`crate::Top`] converts
/// into it) or one a crate built from its build script with card-sim-build
/// (`card_sim::include_tops!()` defines one constant per top).
#[derive(Clone, Copy)]
pub struct TopDef {
    name: &'static str,
    module: &'static str,
    factory: RawFactory,
}

impl TopDef {
    /// Used by generated code only: the factory must be one that card-sim-build generated.
    #[doc(hidden)]
    pub const fn from_raw(name: &'static str, module: &'static str, factory: RawFactory) -> Self {
        TopDef {
            name,
            module,
            factory,
        }
    }

    /// The top's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The RTL module it was built from.
    pub fn module(&self) -> &'static str {
        self.module
    }

    pub(crate) fn factory(&self) -> RawFactory {
        self.factory
    }
}

impl PartialEq for TopDef {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.module == other.module
    }
}

impl Eq for TopDef {}

impl std::fmt::Debug for TopDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TopDef")
            .field("name", &self.name)
            .field("module", &self.module)
            .finish()
    }
}

/// Defines the `TopDef` constants of the tops this crate's build script built with
/// card-sim-build (one per top, named in upper case, and `ALL_TOPS`).
#[macro_export]
macro_rules! include_tops {
    () => {
        include!(concat!(env!("OUT_DIR"), "/card_sim_tops.rs"));
    };
}
