//! card-sim: the card's RTL as verilated tops, on sim-runtime.
//!
//! `build.rs` verilates each top listed in `tops.txt` through the sim-build API, the same way
//! any crate builds its own RTL, with the DDR3 model's storage (`cpp/ddr3_mem.cpp`, behind
//! `hdl/sim/ddr3_model.v`'s DPI-C imports) beside them. [`Top`] names them; a top with a
//! randomized twin (`<name>_x`) carries it, so `SIM_X` swaps it in. [`DdrBackdoor`] reads
//! and writes a DDR3 model's memory without bus cycles, through sim-runtime's named memories
//! (see `docs/ddr3-model.md`).
//!
//! The runtime's items are re-exported, so the card's crates name one crate for both.
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

pub use sim_runtime::*;

/// The factories and `TopDef` constants of the card's tops, as sim-build wrote them.
#[allow(dead_code)]
mod own {
    sim_runtime::include_tops!();
}

include!(concat!(env!("OUT_DIR"), "/tops.rs"));

impl From<Top> for TopDef {
    fn from(t: Top) -> TopDef {
        t.def()
    }
}

/// The names of the card's tops, one per line of `tops.txt`.
pub fn built_tops() -> Vec<String> {
    Top::ALL.iter().map(|t| t.name().to_string()).collect()
}

/// The kind under which the DDR3 model (`hdl/sim/ddr3_model.v`) registers each instance's
/// memory with the runtime (`cpp/ddr3_mem.h`).
pub const DDR3_MEMORY: &str = "ddr3";

/// Backdoor access to the DDR3 model instances of a model, without bus cycles: the runtime's
/// named memories of kind [`DDR3_MEMORY`]. The plain calls mean the model's only instance;
/// the `_in` calls name one of several by its hierarchical name or its last components.
pub trait DdrBackdoor {
    /// Hierarchical names of the DDR3 model instances, in the order they were opened.
    fn ddr_instances(&self) -> Vec<String>;
    /// Size in bytes of the only DDR3 instance.
    fn ddr_size(&self) -> Result<u64>;
    /// Size in bytes of the DDR3 instance `instance`.
    fn ddr_size_in(&self, instance: &str) -> Result<u64>;
    /// Writes `data` at byte address `addr` of the only DDR3 instance: a preload that the RTL
    /// sees from its next access on.
    fn ddr_write(&mut self, addr: u64, data: &[u8]) -> Result<()>;
    /// As [`DdrBackdoor::ddr_write`], into the instance `instance`.
    fn ddr_write_in(&mut self, instance: &str, addr: u64, data: &[u8]) -> Result<()>;
    /// Reads `out.len()` bytes at byte address `addr` of the only DDR3 instance; bytes never
    /// written read as zero.
    fn ddr_read(&self, addr: u64, out: &mut [u8]) -> Result<()>;
    /// As [`DdrBackdoor::ddr_read`], from the instance `instance`.
    fn ddr_read_in(&self, instance: &str, addr: u64, out: &mut [u8]) -> Result<()>;
}

impl DdrBackdoor for Model {
    fn ddr_instances(&self) -> Vec<String> {
        self.memories()
            .into_iter()
            .filter(|m| m.kind == DDR3_MEMORY)
            .map(|m| m.name)
            .collect()
    }

    fn ddr_size(&self) -> Result<u64> {
        Ok(self.memory(DDR3_MEMORY, None)?.1.size)
    }

    fn ddr_size_in(&self, instance: &str) -> Result<u64> {
        Ok(self.memory(DDR3_MEMORY, Some(instance))?.1.size)
    }

    fn ddr_write(&mut self, addr: u64, data: &[u8]) -> Result<()> {
        self.memory_write(DDR3_MEMORY, None, addr, data)
    }

    fn ddr_write_in(&mut self, instance: &str, addr: u64, data: &[u8]) -> Result<()> {
        self.memory_write(DDR3_MEMORY, Some(instance), addr, data)
    }

    fn ddr_read(&self, addr: u64, out: &mut [u8]) -> Result<()> {
        self.memory_read(DDR3_MEMORY, None, addr, out)
    }

    fn ddr_read_in(&self, instance: &str, addr: u64, out: &mut [u8]) -> Result<()> {
        self.memory_read(DDR3_MEMORY, Some(instance), addr, out)
    }
}
