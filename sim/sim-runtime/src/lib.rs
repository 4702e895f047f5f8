//! sim-runtime: drives verilated RTL from Rust, cycle by cycle; it knows no particular design.
//!
//! A crate describes tops of its RTL from its build script with sim-build and gets a
//! [`TopDef`] per top (`include_tops!`, see `docs/own-rtl.md`); card-sim is such a crate for
//! the card. The first model of a top in a process builds the top's library, or finds it in
//! the cache, and loads it ([`Library`]): a test waits only for the tops it opens.
//! [`Model`] is one instance of such a top with its own `VerilatedContext`, its ports resolved
//! to direct accessors, a picosecond-exact clock scheduler for any number of clock domains, RTL
//! errors (`$fatal`, `$stop`, `$error`, failed assertions) returned as [`SimError::Rtl`] with
//! the text the RTL printed (captured per model, [`Model::take_output`], not printed), FST
//! waveforms on demand (`SIM_WAVES=1`), and backdoor access to the named memories that
//! simulation-only models register (`cpp/sim_memory.h`; [`Model::memory_read`],
//! [`Model::memory_write`]).
//!
//! Each top's library carries its own copy of the Verilator runtime with this crate's hooks
//! and named memories (`cpp/`), so libraries of any crates load side by side; this crate is
//! the only one that calls into a verilated model.
//!
//! ```text
//! // In a crate whose build.rs built a top `counter` with sim-build:
//! sim_runtime::include_tops!();
//! let mut m = sim_runtime::Model::new(COUNTER)?;
//! let clk = m.add_clock("clk", 100_000_000)?;
//! m.ticks(clk, 10)?;
//! ```

mod clock;
mod env;
mod error;
mod ffi;
mod library;
mod memory;
mod model;
mod port;
mod top;
pub mod trace;

pub use clock::{edge_time_ps, ClockId, Edges, MAX_FREQ_HZ};
pub use env::{
    coverage_dir, netlist_build_requested, randomized_build_requested, waves_dir, COVERAGE_DIR_ENV,
    DEPRECATED_ENV, ECHO_ENV, NETLIST_ENV, SEED_ENV, TRACE_DIR_ENV, WAVES_DIR_ENV, WAVES_ENV,
    X_ENV,
};
pub use error::{Result, SimError};
pub use library::{build_tops, Library};
pub use memory::MemoryInfo;
pub use model::{Model, ModelBuilder};
pub use port::{Port, PortSet};
#[doc(hidden)]
pub use top::ModelOptions;
pub use top::TopDef;
