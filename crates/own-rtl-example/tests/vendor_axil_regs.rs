//! The vendor AXI4-Lite register bank under the AXI-Lite fuzzer, and its two seeded bugs, each
//! of a kind published for tool-generated register slaves: a polite master (one access at a
//! time, payload left alone after each handshake) passes both broken builds; the fuzzer's
//! defaults (several accesses in flight, garbage while VALID is low) catch each one and
//! shrink it to a few operations. Each bug is also shown to need its own mechanism: the lost
//! read needs accesses in flight, the late write data needs the data bus to change.

use axi_bfm::fuzz::{check_axil_slave, AxilFuzz, FuzzFailure};
use axi_bfm::{AxilMaster, Env, ResetPolarity, Result};
use own_rtl_example::{
    REGS_BYTES, VENDOR_AXIL_REGS, VENDOR_AXIL_REGS_BROKEN_READ, VENDOR_AXIL_REGS_BROKEN_WDATA,
};
use sim_runtime::{Model, TopDef};

fn target(top: TopDef) -> Result<(Env, AxilMaster)> {
    let mut env = Env::new(Model::new(top)?);
    let clock = env.add_clock("S_AXI_ACLK", 100_000_000)?;
    env.add_reset(clock, "S_AXI_ARESETN", ResetPolarity::ActiveLow)?;
    let master = AxilMaster::attach(&mut env, "S_AXI", clock)?;
    env.reset(clock, 4)?;
    Ok((env, master))
}

/// The fuzzer as the bank's data sheet declares it: 32-bit words, 64 bytes.
fn fuzz() -> AxilFuzz {
    AxilFuzz {
        cases: 48,
        ..AxilFuzz::new(4, 0, REGS_BYTES)
    }
}

/// The master that issues one access at a time and leaves its payload alone.
fn polite() -> AxilFuzz {
    AxilFuzz {
        outstanding: 1,
        idle_garbage: false,
        ..fuzz()
    }
}

fn run(cfg: &AxilFuzz, top: TopDef) -> std::result::Result<(), FuzzFailure> {
    check_axil_slave(cfg, || target(top)).map(|_| ())
}

/// Checks that a failure was shrunk to at most `ops` operations, and prints it.
#[track_caller]
fn shrunk(failure: &FuzzFailure, ops: usize) -> String {
    let text = failure.to_string();
    println!("{text}");
    assert!(
        !failure.sequence.is_empty() && failure.sequence.len() <= ops,
        "not shrunk to {ops} operations or fewer: {text}"
    );
    assert!(text.contains("replay: fuzz::replay_axil("), "{text}");
    text
}

#[test]
fn the_bank_survives_the_fuzzer() {
    let report =
        check_axil_slave(&fuzz(), || target(VENDOR_AXIL_REGS)).unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(report.cases, fuzz().cases);
}

#[test]
fn a_lost_read_needs_reads_in_flight() {
    run(&polite(), VENDOR_AXIL_REGS_BROKEN_READ).expect("a polite master hides the bug");
    // Garbage alone does not help: the bug is in the order of two reads.
    let garbage_only = AxilFuzz {
        idle_garbage: true,
        ..polite()
    };
    run(&garbage_only, VENDOR_AXIL_REGS_BROKEN_READ).expect("garbage alone hides the bug");
    let failure = run(&fuzz(), VENDOR_AXIL_REGS_BROKEN_READ)
        .expect_err("reads in flight under back-pressure on R must expose the lost read");
    let text = shrunk(&failure, 3);
    // Two reads are the least that can lose one.
    let reads = failure
        .sequence
        .iter()
        .filter(|s| s.starts_with("AxilOp::Read"))
        .count();
    assert!(reads >= 2, "{text}");
}

#[test]
fn late_write_data_needs_a_changing_data_bus() {
    run(&polite(), VENDOR_AXIL_REGS_BROKEN_WDATA).expect("a polite master hides the bug");
    let garbage_only = AxilFuzz {
        idle_garbage: true,
        ..polite()
    };
    let failure = run(&garbage_only, VENDOR_AXIL_REGS_BROKEN_WDATA)
        .expect_err("garbage on WDATA after the handshake must expose the late write");
    let text = shrunk(&failure, 2);
    assert!(text.contains("data mismatch"), "{text}");
    // The defaults find it too.
    let failure = run(&fuzz(), VENDOR_AXIL_REGS_BROKEN_WDATA).expect_err("the defaults find it");
    shrunk(&failure, 3);
}
