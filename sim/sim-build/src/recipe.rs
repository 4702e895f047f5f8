//! A top's recipe: everything needed to verilate and compile it later, written by the build
//! script and carried by the crate's `TopDef` into the test binary, which builds the top the
//! first time a model of it is made.
//!
//! Building at first use rather than in the build script is what keeps the edit-to-result
//! loop short: the build script's output does not depend on the RTL, so editing a Verilog file
//! rebuilds no Rust crate, and a test builds only the tops it opens (docs/own-rtl.md,
//! "When tops are built").

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::BuildError;

/// Bumped when a recipe's fields change meaning; a recipe of another format is refused with a
/// message that says to rebuild, never misread.
pub(crate) const RECIPE_FORMAT: u32 = 1;

/// What sim-runtime's build publishes for the tops of every crate: its C++ folder, the include
/// folders and static libraries of the FST writer's compressors, and the Verilator it found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuntimeInfo {
    /// sim-runtime's C++ folder: the model interface, the hooks, the named memories.
    pub cpp_dir: PathBuf,
    /// Include folders of zlib and lz4.
    pub includes: Vec<PathBuf>,
    /// The static libraries of zlib and lz4, linked into every top's library.
    pub libs: Vec<PathBuf>,
    /// The Verilator root sim-runtime's build found; empty to look it up again.
    pub verilator_root: PathBuf,
}

impl RuntimeInfo {
    /// What sim-runtime's build script published (`DEP_SIM_RUNTIME_*`), read in a dependent's
    /// build script.
    pub(crate) fn from_env() -> Result<RuntimeInfo, BuildError> {
        let var = |k: &str| std::env::var(format!("DEP_SIM_RUNTIME_{k}")).unwrap_or_default();
        let list = |k: &str| -> Vec<PathBuf> {
            var(k)
                .split(',')
                .filter(|s| !s.is_empty())
                .map(PathBuf::from)
                .collect()
        };
        let cpp_dir = var("CPP");
        if cpp_dir.is_empty() {
            return Err(BuildError::Environment(
                "sim-runtime's C++ folder is unknown: add sim-runtime to [dependencies] (its build publishes DEP_SIM_RUNTIME_CPP to this build script)".into(),
            ));
        }
        Ok(RuntimeInfo {
            cpp_dir: PathBuf::from(cpp_dir),
            includes: list("INCLUDES"),
            libs: list("LIBS"),
            verilator_root: PathBuf::from(var("VERILATOR_ROOT")),
        })
    }
}

/// One top as its build script described it, with every path made absolute.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recipe {
    /// [`RECIPE_FORMAT`] of the sim-build that wrote it.
    pub(crate) format: u32,
    /// The crate that built it, as a C identifier (part of the class and symbol names).
    pub(crate) package: String,
    /// The top's name.
    pub(crate) name: String,
    /// Its module.
    pub(crate) module: String,
    /// The folder Verilator runs in; the arguments' relative paths start there.
    pub(crate) base: PathBuf,
    /// Verilator's arguments but the model's class and output folder.
    pub(crate) args: Vec<String>,
    /// The folder, relative to `base`, whose files are read without `reg` initialisers.
    pub(crate) strip: Option<PathBuf>,
    /// Coverage asked for by the build ([`crate::Build::coverage`] or `SIM_COVERAGE`).
    pub(crate) coverage: bool,
    /// Whether to report Verilator's warnings.
    pub(crate) warnings: bool,
    /// The crate's own C and C++ sources, linked with the top.
    pub(crate) cpp: Vec<PathBuf>,
    /// What sim-runtime provides.
    pub(crate) runtime: RuntimeInfo,
    /// The compile cache, shared by every crate and profile of the target folder.
    pub(crate) cache: PathBuf,
    /// The target and host triples the crate was built for (cc needs them outside a build
    /// script).
    pub(crate) target: String,
    /// See `target`.
    pub(crate) host: String,
}

impl Recipe {
    /// The recipe as the JSON text a `TopDef` carries.
    pub fn to_json(&self) -> Result<String, BuildError> {
        serde_json::to_string(self).map_err(|e| {
            BuildError::Environment(format!("cannot write the recipe of `{}`: {e}", self.name))
        })
    }

    /// Reads a recipe that [`Recipe::to_json`] wrote.
    pub fn from_json(text: &str) -> Result<Recipe, BuildError> {
        let r: Recipe = serde_json::from_str(text).map_err(|e| {
            BuildError::Environment(format!(
                "a top's recipe cannot be read ({e}): rebuild the crate that built it (`cargo clean -p <crate>`)"
            ))
        })?;
        if r.format != RECIPE_FORMAT {
            return Err(BuildError::Environment(format!(
                "the recipe of top `{}` has format {} and this sim-build reads {RECIPE_FORMAT}: rebuild the crate that built it",
                r.name, r.format
            )));
        }
        Ok(r)
    }

    /// The top's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The same top cached in `dir`: for comparing builds of one top side by side (other
    /// compiler settings, say) without touching the cache the tests use.
    pub fn with_cache(mut self, dir: impl Into<PathBuf>) -> Recipe {
        self.cache = dir.into();
        self
    }

    /// What sim-runtime provides to the top's library.
    pub fn runtime(&self) -> &RuntimeInfo {
        &self.runtime
    }

    /// The C++ class Verilator generates for the top.
    pub(crate) fn class(&self) -> String {
        format!("V{}__{}", self.package, self.name)
    }

    /// The symbol of the top's model factory in its library.
    pub fn factory_symbol(&self) -> String {
        format!("sim_new_{}__{}", self.package, self.name)
    }
}

/// Whether [`crate::COVERAGE_ENV`] asks for coverage builds (any value but empty or `0`).
pub(crate) fn coverage_requested() -> bool {
    std::env::var(crate::COVERAGE_ENV).is_ok_and(|v| !v.is_empty() && v != "0")
}
