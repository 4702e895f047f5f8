//! sim-build: describes RTL tops from a build script, in the spirit of the `cc` crate, and
//! verilates and compiles each one into a shared library the first time `sim_runtime::Model`
//! makes a model of it.
//!
//! Any crate builds its own modules from its own `build.rs` (card-sim builds the card's tops
//! this way, from its `tops.txt`):
//!
//! ```no_run
//! // build.rs of a user crate that depends on sim-runtime (and on sim-build for building).
//! use sim_build::{Build, TopSpec};
//!
//! fn main() {
//!     let result = Build::new()
//!         .include("rtl/include")
//!         .define("VENDOR_SIM", None)
//!         .top(
//!             TopSpec::new("vendor_axi_slave")
//!                 .file("rtl/VendorAxiSlave.v")
//!                 .param("C_S_AXI_DATA_WIDTH", "64"),
//!         )
//!         .top(TopSpec::new("stream_fifo").file_list("rtl/fifo.f").assert(false))
//!         .compile();
//!     if let Err(e) = result {
//!         e.emit();
//!     }
//! }
//! ```
//!
//! and in the crate, `sim_runtime::include_tops!();` defines one `sim_runtime::TopDef` constant
//! per top (`VENDOR_AXI_SLAVE`, `STREAM_FIFO`), to build models from with `Model::new(TOP)`.
//!
//! Relative paths are relative to the crate's manifest folder; sources may live anywhere and
//! keep their own file names. The build script only writes each top's [`Recipe`]; a test
//! that makes a model of a top builds that top and no other ([`build_library`]): Verilator runs
//! with the manifest folder as its working folder, so the generated code holds no absolute
//! path, and the libraries are cached under `<target>/sim-cache/`, found again without running
//! Verilator while the sources it read are unchanged, and keyed on the generated code's
//! content, the compiler and the flags: a copied checkout, a second crate, a switch between
//! debug and release, and several test processes at once share them.
//!
//! Code map: `builder.rs` the API ([`Build`]) and each top's Verilator arguments, `built.rs`
//! what it gives back per top ([`BuiltTop`]), `top_spec.rs` one top's options ([`TopSpec`]),
//! `recipe.rs` what a build script records per top, `library.rs` a top's library built or
//! found on first use, `ctx.rs` what every step of that build shares, `verilate.rs`
//! Verilator's invocation, `strip.rs` the randomized build's sources, `ports.rs` the port table
//! from the generated header, `codegen.rs` the generated C++ glue and Rust constants,
//! `compile.rs` the C++ compilation and the link, `cache.rs` the cache's hashes, locks and
//! file writes, `runtime.rs` the Verilator runtime every library links, `tops_file.rs` the
//! one-line-per-top list syntax, `error.rs` [`BuildError`]. No two of these import each other
//! in a circle: what several steps share (`ctx.rs`, `built.rs`) is a leaf of its own.

mod builder;
mod built;
mod cache;
mod codegen;
mod compile;
mod ctx;
mod error;
mod library;
mod ports;
mod recipe;
mod runtime;
mod strip;
mod top_spec;
mod tops_file;
mod verilate;

pub use builder::Build;
pub use built::{Built, BuiltTop};
pub use cache::write_if_changed;
pub use error::{cargo_error_lines, BuildError};
pub use library::{build_library, LibraryBuild};
pub use ports::{parse_ports, Port};
pub use recipe::{Recipe, RuntimeInfo};
pub use runtime::RUNTIME_FILES;
pub use top_spec::TopSpec;
pub use tops_file::{parse as parse_tops, parse_line as parse_top_line};
pub use verilate::verilator_watch_paths;
pub use verilator_find::Verilator;

/// Environment variable that builds every top of every crate with coverage (any value but
/// empty or `0`), as [`Build::coverage`] does for one build.
pub const COVERAGE_ENV: &str = "SIM_COVERAGE";

/// Environment variable with the C++ optimisation of the tops' per-cycle code (`0` to `3` or
/// `s`; default 3, chosen by measurement in docs/own-rtl.md). Another level is another cache
/// entry, so levels can be compared side by side.
pub const OPT_LEVEL_ENV: &str = "SIM_OPT_LEVEL";
