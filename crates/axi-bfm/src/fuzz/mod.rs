//! Protocol fuzzing: proptest strategies for random AXI4, AXI4-Lite and AXI-Stream traffic,
//! and runners that drive it into a user's DUT against a reference model, shrink a failure to
//! a minimal sequence and print it as a list that can be pasted back and replayed.
//!
//! One call per DUT: [`check_axi_slave`], [`check_axil_slave`] or [`check_axis_path`], given a
//! closure that builds a fresh environment (model, clocks, reset, bus models) for each case.
//! Every case draws its own operations and its own random pauses on every channel; monitors
//! stay on, and [`crate::Env::finish`] checks that every request was answered. A run that
//! finds nothing returns a [`FuzzReport`]: its cases and the protocol situations the monitors
//! counted (functional coverage), with those their rules are about that it never reached.
//!
//! ```no_run
//! use axi_bfm::fuzz::{check_axi_slave, AxiFuzz};
//! # fn setup() -> axi_bfm::Result<axi_bfm::fuzz::AxiTarget> { unimplemented!() }
//! let cfg = AxiFuzz { cases: 64, ..AxiFuzz::new(16, 0x0, 0x1_0000) };
//! if let Err(failure) = check_axi_slave(&cfg, setup) {
//!     panic!("{failure}"); // the minimal sequence, replayable with `replay_axi`
//! }
//! ```
//!
//! By concern: `axi`, `axil` and `axis` each hold one protocol's operations, strategies,
//! replay and check; `inflight` the window of accesses a replay keeps in flight; `runner`
//! proptest's runner, the failure and the coverage report that all three share; `master`
//! master fuzzing against a randomizing slave, and `forward` its work and reference for a DUT
//! that forwards AXI4 accesses from its slave port to its master port.

mod axi;
mod axil;
mod axis;
mod forward;
mod inflight;
mod master;
mod runner;

pub use axi::{axi_ops, check_axi_slave, replay_axi, AxiFuzz, AxiOp, AxiSupport, AxiTarget};
pub use axil::{axil_ops, check_axil_slave, replay_axil, AxilFuzz, AxilOp};
pub use axis::{
    axis_cases, check_axis_path, check_axis_source, replay_axis, replay_axis_source, AxisCase,
    AxisFuzz, AxisSourceFuzz, SourceTarget,
};
pub use forward::{drive_axi_ops, forwarded_axi_ops, Outcome};
pub use master::{
    check_axi_master, check_axil_master, replay_master, Expected, FuzzedSlave, MasterFuzz,
    MasterRun,
};
pub use runner::{FuzzFailure, FuzzReport};
