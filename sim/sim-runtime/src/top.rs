//! Verilated tops as values: the [`TopDef`] that [`crate::Model`] builds from, one per top a
//! crate built with sim-build (`sim_runtime::include_tops!()`).

use std::ffi::c_void;

/// How Rust asks a top's factory for a model; the C++ `sim_runtime::ModelOptions` has the same
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
pub(crate) type RawFactory = unsafe extern "C" fn(opts: *const ModelOptions) -> *mut c_void;

/// A verilated top a model can be built from: one a crate described from its build script with
/// sim-build (`sim_runtime::include_tops!()` defines one constant per top; a crate may wrap
/// them in its own enum, as card-sim's `Top` does). It carries the top's recipe; the first
/// model of it in a process builds the top (or finds it in the cache) and loads it.
#[derive(Clone, Copy)]
pub struct TopDef {
    name: &'static str,
    module: &'static str,
    recipe: &'static str,
    companion: Option<&'static str>,
    randomized: Option<&'static TopDef>,
    netlist: Option<&'static TopDef>,
}

impl TopDef {
    /// Used by generated code only: the recipe must be one that sim-build wrote.
    #[doc(hidden)]
    pub const fn from_recipe(
        name: &'static str,
        module: &'static str,
        recipe: &'static str,
    ) -> Self {
        TopDef {
            name,
            module,
            recipe,
            companion: None,
            randomized: None,
            netlist: None,
        }
    }

    /// The same top with `twin` as its randomized build: the same module verilated with
    /// `--x-initial unique` (and, if its crate chooses, from RTL without declaration
    /// initialisers), which a model builds in its place when `SIM_X` asks for the
    /// randomized build ([`crate::X_ENV`]).
    pub const fn with_randomized(mut self, twin: &'static TopDef) -> TopDef {
        self.randomized = Some(twin);
        self
    }

    /// The same top with `twin` as its netlist build: the design as synthesis built it, with
    /// the primitives' simulation models, which a model builds in its place when
    /// `SIM_NETLIST` asks for it ([`crate::NETLIST_ENV`]).
    pub const fn with_netlist(mut self, twin: &'static TopDef) -> TopDef {
        self.netlist = Some(twin);
        self
    }

    /// The netlist twin, if the top has one ([`TopDef::with_netlist`]).
    pub fn netlist(&self) -> Option<TopDef> {
        self.netlist.copied()
    }

    /// The same top with a companion C++ source compiled into its library: code that drives
    /// the verilated class directly (a plain C++ bench, say) and exports `extern "C"`
    /// functions named `sim_export_*`, which [`crate::Library::symbol`] finds. The path is
    /// absolute (`concat!(env!("CARGO_MANIFEST_DIR"), "/cpp/bench.cpp")`).
    pub const fn with_companion(mut self, path: &'static str) -> TopDef {
        self.companion = Some(path);
        self
    }

    /// The randomized twin, if the top has one ([`TopDef::with_randomized`]).
    pub fn randomized(&self) -> Option<TopDef> {
        self.randomized.copied()
    }

    /// The top's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The RTL module it was built from.
    pub fn module(&self) -> &'static str {
        self.module
    }

    /// The recipe sim-build wrote for the top (JSON, `sim_build::Recipe::from_json`).
    pub fn recipe(&self) -> &'static str {
        self.recipe
    }

    pub(crate) fn companion(&self) -> Option<&'static str> {
        self.companion
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
            .field("companion", &self.companion)
            .finish()
    }
}

/// Defines the `TopDef` constants of the tops this crate's build script described with
/// sim-build (one per top, named in upper case, and `ALL_TOPS`).
#[macro_export]
macro_rules! include_tops {
    () => {
        include!(concat!(env!("OUT_DIR"), "/top_defs.rs"));
    };
}
