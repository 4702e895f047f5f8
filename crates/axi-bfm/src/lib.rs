//! axi-bfm: bus models and protocol monitors that drive and check a `sim_runtime::Model`.
//!
//! An [`Env`] owns one model and any number of agents, each bound to one of the model's clocks:
//! bus models (AXI4 master and slave memory, AXI4-Lite master and slave, AXI-Stream source and
//! sink) and protocol monitors. At every clock edge instant the agents of the clocks that rise
//! sample the bus before the edge, the model steps, and then those agents drive their inputs
//! and the model is evaluated, so agents in several clock domains run side by side correctly.
//!
//! Bus models attach by port prefix (`AxiMaster::attach(&mut env, "s_axi", clk)`), resolving
//! every signal once; a protocol monitor for the same bus is attached with them unless turned
//! off. A monitor reports a broken rule as a [`Violation`] (rule name, bus, channel, simulated
//! time, cycle and the offending values), which the environment returns from the call that
//! was running, so the test fails. Every wait has a cycle limit and ends in
//! [`BfmError::Timeout`] rather than a hang.
//!
//! Backpressure and idle cycles come from [`PauseSpec`]s: fixed patterns or seeded random
//! generators, with `proptest` strategies in [`pause`].
//!
//! [`replay`] drives a failed formal proof's counterexample (a `formal-replay` file) into the
//! Verilator build of the same proof wrapper, with a monitor on every bus the proof watched.
//!
//! ```no_run
//! use axi_bfm::{AxiMaster, AxiSlave, Env, PauseSpec, ResetPolarity};
//! use card_sim::{Model, Top}; // the card's passthrough top; any crate's TopDef works the same
//! # fn main() -> Result<(), axi_bfm::BfmError> {
//! let mut env = Env::new(Model::new(Top::AxiPassthrough)?);
//! let clk = env.add_clock("clk", 250_000_000)?;
//! env.add_reset(clk, "rst", ResetPolarity::ActiveHigh)?;
//! let master = AxiMaster::attach(&mut env, "s_axi", clk)?;
//! let slave = AxiSlave::attach(&mut env, "m_axi", clk)?;
//! env.set_pauses(&PauseSpec::random(7, 30));
//! env.reset(clk, 4)?;
//! master.write(&mut env, 0x1003, &[1, 2, 3, 4, 5])?;
//! assert_eq!(master.read(&mut env, 0x1003, 5)?, vec![1, 2, 3, 4, 5]);
//! # let _ = slave; Ok(()) }
//! ```

// The ground: the protocol's words, errors, pause generators, binding and the environment.
// None of these imports from the layers above.
mod bind;
pub mod burst;
mod env;
mod error;
pub mod mem;
pub mod pause;
mod protocol;
mod rule_table;
mod signal_map;

// One VALID/READY channel and one handle shape, the parts every bus model is made of.
mod channel;
mod handle;

// The bus models, the monitors and the fuzzers.
mod axi;
mod axil;
mod axis;
mod axis_frame;
pub mod fuzz;
pub mod monitor;
pub mod random_slave;
// Formal counterexamples replayed with the monitors on.
pub mod replay;

pub use axi::{
    AxiMaster, AxiMasterConfig, AxiSlave, AxiSlaveConfig, MasterFaults, RandomAxiSlave,
    SlaveFaults, TxnId,
};
pub use axil::{
    AxilMaster, AxilMasterConfig, AxilSlave, AxilSlaveConfig, LiteFaults, RandomAxilSlave,
    DEFAULT_RESPONSE_TIMEOUT_CYCLES,
};
pub use axis::{AxisFrame, AxisSink, AxisSource, RecordedFrame, StreamFaults};
pub use burst::{Burst, Piece};
pub use env::{Agent, Cx, Env, Idle, ResetPolarity, DEFAULT_TIMEOUT_CYCLES};
pub use error::{BfmError, Resp, Result};
pub use mem::Memory;
pub use monitor::{
    AxiMonitor, AxiMonitorConfig, AxilMonitor, AxisMonitor, AxisMonitorConfig, Coverage, Situation,
};
pub use pause::{Pause, PauseSpec};
pub use protocol::{Channel, Rule, Violation};
