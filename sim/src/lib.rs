//! card-sim: builds the card's RTL with Verilator and drives it from Rust, cycle by cycle.
//!
//! `build.rs` verilates each top listed in `sim/tops.txt` and links it in; [`Model`] is one
//! instance of such a top with its own `VerilatedContext`, its ports resolved to direct
//! accessors, a picosecond-exact clock scheduler for any number of clock domains, RTL errors
//! (`$fatal`, `$stop`, `$error`, failed assertions) returned as [`SimError::Rtl`], and FST
//! waveforms on demand (`CARD_WAVES=1`). A top that instantiates the DDR3 model
//! (`hdl/sim/ddr3_model.v`) also gets a backdoor into that model's memory
//! ([`Model::ddr_write`], [`Model::ddr_read`]; see `docs/ddr3-model.md`).
//!
//! This is the only crate that talks to Verilator.
//!
//! ```no_run
//! use card_sim::{Model, Top};
//! # fn main() -> Result<(), card_sim::SimError> {
//! let mut m = Model::new(Top::CardCore)?;
//! let clk = m.add_clock("axi_aclk", 250_000_000)?;
//! let rstn = m.input("axi_aresetn")?;
//! m.set_bool(rstn, false);
//! m.ticks(clk, 4)?;
//! m.set_bool(rstn, true);
//! m.eval()?;
//! m.ticks(clk, 10)?;
//! assert_eq!(m.time_ps(), 14 * 4_000 - 2_000);
//! # Ok(()) }
//! ```

// Linked for the FST writer's compression; nothing in Rust calls them.
use libz_sys as _;
use lz4_sys as _;

mod clock;
mod error;
mod ffi;
mod model;

pub use clock::{edge_time_ps, ClockId, Edges, MAX_FREQ_HZ};
pub use error::{Result, SimError};
pub use model::{waves_dir, Model, ModelBuilder, Port, SEED_ENV, WAVES_DIR_ENV, WAVES_ENV, X_ENV};

include!(concat!(env!("OUT_DIR"), "/tops.rs"));

/// The tops compiled into this build, as the C++ side reports them.
pub fn built_tops() -> Vec<String> {
    ffi::top_names()
}
