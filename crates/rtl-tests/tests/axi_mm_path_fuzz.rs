//! The memory-mapped path's DDR port as an AXI4 master under master fuzzing: drawn bursts on
//! s_axi (INCR, narrow beats, any strobes, 16 IDs, 4 in flight), a randomizing 512-bit slave
//! in the DDR clock domain that stalls, delays, spaces beats, takes data before addresses and
//! answers errors. The path forwards each burst as one DDR burst over the same bytes, in order
//! per direction, and its response back: every write that was not refused must be in memory
//! with only its strobed bytes, every read must return memory or the refusal.

// Master fuzzing hands `run` and `reference` the work as `&W`, here a vector.
#![allow(clippy::ptr_arg)]

use axi_bfm::fuzz::{
    axi_ops, check_axi_master, drive_axi_ops, forwarded_axi_ops, AxiFuzz, AxiOp, AxiSupport,
    MasterFuzz, MasterRun, Outcome,
};
use axi_bfm::monitor::Event;
use axi_bfm::random_slave::{SlaveChoices, SlaveLog};
use axi_bfm::{AxiMaster, Env, RandomAxiSlave, ResetPolarity, Result, Situation};
use card_sim::{Model, Top};
use rtl_tests::{AXI_HZ, DDR_HZ};

/// Bytes per s_axi beat.
const BUS: usize = 16;
/// The drawn bursts' window: it straddles a 4 KiB page and stays inside the DDR.
const BASE: u64 = 0x3_0c00;
const SIZE: u64 = 0x800;

/// What s_axi may draw: the path serves INCR bursts of any size and length and refuses FIXED
/// and WRAP itself (SLVERR, nothing reaches the DDR: `errors.rs` tests that), so those would
/// not be requests of the slave under test.
fn work() -> impl proptest::strategy::Strategy<Value = Vec<AxiOp>> {
    let support = AxiSupport {
        fixed: false,
        wrap: false,
        ..AxiSupport::FULL
    };
    axi_ops(&AxiFuzz {
        window: SIZE,
        ..AxiFuzz::supporting(BUS, BASE, SIZE, &support)
    })
}

fn run(
    ops: &Vec<AxiOp>,
    choices: &SlaveChoices,
) -> Result<MasterRun<RandomAxiSlave, Vec<Outcome>>> {
    let mut env = Env::new(Model::new(Top::AxiMmPath)?);
    let clk = env.add_clock("clk", AXI_HZ)?;
    let ddr_clk = env.add_clock("ddr_clk", DDR_HZ)?;
    env.add_reset(clk, "rst", ResetPolarity::ActiveHigh)?;
    env.add_reset(clk, "ddr_rst", ResetPolarity::ActiveHigh)?;
    let master = AxiMaster::attach(&mut env, "s_axi", clk)?;
    let slave = RandomAxiSlave::attach(&mut env, "m_axi_ddr", ddr_clk, choices.clone())?;
    env.reset(clk, 10)?;
    let reported = drive_axi_ops(&mut env, &master, ops, 4)?;
    Ok(MasterRun {
        env,
        slave,
        reported,
    })
}

fn reference(ops: &Vec<AxiOp>, log: &SlaveLog) -> axi_bfm::fuzz::Expected<Vec<Outcome>> {
    forwarded_axi_ops(ops, BUS, log, BASE, (SIZE + 256 * BUS as u64) as usize)
}

#[test]
fn the_memory_path_survives_any_legal_ddr_slave() {
    let cfg = MasterFuzz {
        cases: 24,
        ..MasterFuzz::default()
    };
    let report = check_axi_master(&cfg, work(), run, reference).unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(report.cases, 24);
    // The cases reached what the path must pass on: refusals from the DDR side.
    let refused = Situation::Event(Event::ErrorResponse);
    assert!(report.coverage.count(refused) > 0, "{report:?}");
}
