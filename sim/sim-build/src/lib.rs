//! sim-build: verilates RTL tops from a build script and links them so that
//! `sim_runtime::Model` can drive them, in the spirit of the `cc` crate.
//!
//! Any crate builds its own modules from its own `build.rs` (card-sim builds the card's tops
//! this way, from its `tops.txt`):
//!
//! ```no_run
//! // build.rs of a user crate that depends on sim-runtime (and on sim-build for building).
//! use sim_build::{Build, Top};
//!
//! fn main() {
//!     let result = Build::new()
//!         .include("rtl/include")
//!         .define("VENDOR_SIM", None)
//!         .top(
//!             Top::new("vendor_axi_slave")
//!                 .file("rtl/VendorAxiSlave.v")
//!                 .param("C_S_AXI_DATA_WIDTH", "64"),
//!         )
//!         .top(Top::new("stream_fifo").file_list("rtl/fifo.f").assert(false))
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
//! keep their own file names. Verilator runs with that folder as its working folder, so the
//! generated code holds no absolute path, and the compiled C++ is cached under
//! `<target>/sim-cache/`, keyed on the generated code's content, the compiler and the flags: a
//! copied checkout, a second crate or a switch between debug and release reuse it.
//!
//! Code map: `builder.rs` the API ([`Build`]), `top.rs` one top's options ([`Top`]),
//! `verilate.rs` Verilator's invocation, `ports.rs` the port table from the generated header,
//! `codegen.rs` the generated C++ glue and Rust constants, `compile.rs` the C++ compilation,
//! `cache.rs` the compile cache, `runtime.rs` the Verilator runtime (sim-runtime's build only),
//! `tops_file.rs` the one-line-per-top list syntax, `error.rs` [`BuildError`].

mod builder;
mod cache;
mod codegen;
mod compile;
mod error;
mod ports;
mod runtime;
mod top;
mod tops_file;
mod verilate;

pub use builder::{Build, Built, BuiltTop};
pub use codegen::write_if_changed;
pub use error::{cargo_error_lines, BuildError};
pub use ports::{parse_ports, Port};
#[doc(hidden)]
pub use runtime::{compile_runtime, Runtime, RUNTIME_FILES};
pub use top::Top;
pub use tops_file::{parse as parse_tops, parse_line as parse_top_line};
pub use verilate::verilator_watch_paths;
pub use verilator_find::Verilator;

/// Environment variable that builds every top of every crate with coverage (any value but
/// empty or `0`), as [`Build::coverage`] does for one build.
pub const COVERAGE_ENV: &str = "SIM_COVERAGE";
