//! card-sim: builds the card's RTL with Verilator and drives it from Rust, cycle by cycle.
//!
//! `build.rs` verilates each top listed in `sim/tops.txt` through the card-sim-build API and
//! links it in; other crates build tops of their own RTL the same way from their own build
//! scripts and get a [`TopDef`] per top (`include_tops!`, see `docs/own-rtl.md`). [`Model`] is one
//! instance of such a top with its own `VerilatedContext`, its ports resolved to direct
//! accessors, a picosecond-exact clock scheduler for any number of clock domains, RTL errors
//! (`$fatal`, `$stop`, `$error`, failed assertions) returned as [`SimError::Rtl`] with the text
//! the RTL printed (captured per model, [`Model::take_output`], not printed), and FST
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
mod top;

pub use clock::{edge_time_ps, ClockId, Edges, MAX_FREQ_HZ};
pub use error::{Result, SimError};
pub use model::{
    waves_dir, Model, ModelBuilder, Port, ECHO_ENV, SEED_ENV, WAVES_DIR_ENV, WAVES_ENV, X_ENV,
};
pub use top::TopDef;
#[doc(hidden)]
pub use top::{ModelOptions, RawFactory};

/// The factories and `TopDef` constants of card-sim's own tops, as card-sim-build wrote them.
#[allow(dead_code)]
mod own {
    include!(concat!(env!("OUT_DIR"), "/card_sim_tops.rs"));
}

include!(concat!(env!("OUT_DIR"), "/tops.rs"));

impl From<Top> for TopDef {
    fn from(t: Top) -> TopDef {
        t.def()
    }
}

/// The names of the tops compiled into card-sim, one per line of `sim/tops.txt`.
pub fn built_tops() -> Vec<String> {
    Top::ALL.iter().map(|t| t.name().to_string()).collect()
}
