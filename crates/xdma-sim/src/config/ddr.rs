//! Which memory path the simulated card has, and the settings of its DDR controller model:
//! the `path` field and the `[sim.ddr]` section.

use serde::{Deserialize, Serialize};
use xdma_core::{Error, Result};

/// What lies between the XDMA IP's memory-mapped master and the DDR3 model (see
/// `hdl/sim/sim_top.v`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DataPath {
    /// The card's own RTL (`card_core`'s arbiter, width converters and clock crossings): what
    /// the card's bitstream has. The default.
    #[default]
    Card,
    /// The reference board's bare memory path, XDMA `M_AXI` -> AXI SmartConnect -> MIG
    /// `S_AXI`: what every comparison with the board's measurements uses. The capture ring is
    /// not available on it.
    Reference,
}

impl DataPath {
    /// The path's name in the configuration.
    pub fn name(self) -> &'static str {
        match self {
            DataPath::Card => "card",
            DataPath::Reference => "reference",
        }
    }

    /// The card top that has this path in place of the card's own, for a top built with the
    /// card's path; `None` when this build has no such top.
    pub fn top_for(self, card_top: &str) -> Option<&'static str> {
        match (self, card_top) {
            (DataPath::Card, _) => None,
            (DataPath::Reference, "sim_top" | "sim_top_ref") => Some("sim_top_ref"),
            (DataPath::Reference, _) => None,
        }
    }
}

/// The read/write arbitration scheme of MIG 7-series' AXI shim (`C_RD_WR_ARB_ALGORITHM`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arbitration {
    /// `RD_PRI_REG`, MIG's default: the direction in service keeps the command port while it
    /// has bursts, up to the starve limit or the wait limit.
    #[default]
    RdPriReg,
    /// `ROUND_ROBIN`: reads and writes alternate command by command when both are ready.
    RoundRobin,
    /// `TDM`: the port belongs to reads and writes on alternate cycles.
    Tdm,
}

impl Arbitration {
    /// The value of the DDR3 model's `arb_algorithm` port.
    pub fn port_value(self) -> u64 {
        match self {
            Arbitration::RdPriReg => 0,
            Arbitration::RoundRobin => 1,
            Arbitration::Tdm => 2,
        }
    }
}

/// Settings of the DDR controller model: the `[sim.ddr]` section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DdrConfig {
    /// MIG's read/write arbitration: `rd-pri-reg` (default), `round-robin` or `tdm`.
    pub arbitration: Arbitration,
    /// AxQOS of every read burst at the controller, 0 to 15. Under `rd-pri-reg` a pending
    /// read with a non-zero QoS ends the writes' hold at their next burst end. Default 0, as
    /// the XDMA IP drives no QoS.
    pub read_qos: u8,
    /// AxQOS of every write burst at the controller, 0 to 15 (as `read_qos`, for writes).
    pub write_qos: u8,
}

impl DdrConfig {
    /// The controller model's settings as the card's harness holds them on its inputs.
    pub(crate) fn controller(&self) -> card_harness::DdrController {
        card_harness::DdrController {
            arbitration: self.arbitration.port_value(),
            read_qos: u64::from(self.read_qos),
            write_qos: u64::from(self.write_qos),
        }
    }

    /// Checks the QoS ranges.
    pub fn validate(&self) -> Result<()> {
        for (name, v) in [("read_qos", self.read_qos), ("write_qos", self.write_qos)] {
            if v > 15 {
                return Err(Error::Config(format!(
                    "[sim.ddr] {name} = {v}: must be 0 to 15 (AxQOS is four bits)"
                )));
            }
        }
        Ok(())
    }
}
