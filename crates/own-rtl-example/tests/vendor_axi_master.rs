//! The vendor AXI4 test master (Vivado-template style, `vendor_axi4_master.v`) and its four
//! seeded bugs against the bus models' polite slave: a memory that answers OKAY, in order, one
//! burst at a time. Each build must pass it: write its bursts, read them back, raise TXN_DONE
//! without an error, leave the pattern in memory and break no protocol rule. The bugs need a
//! slave that does more (reorders IDs, interleaves read data, answers SLVERR, holds AWREADY
//! low); the one the bus models can already show, the early write data, is shown below.

use axi_bfm::{AxiSlave, Channel, Env, PauseSpec, ResetPolarity, Result, Rule};
use own_rtl_example::{
    VENDOR_AXI4_MASTER, VENDOR_AXI4_MASTER_BROKEN_INTERLEAVE, VENDOR_AXI4_MASTER_BROKEN_ORDER,
    VENDOR_AXI4_MASTER_BROKEN_SLVERR, VENDOR_AXI4_MASTER_BROKEN_WDATA,
};
use sim_runtime::{ClockId, Model, TopDef};

/// The master's defaults: 4 bursts (IDs 0 to 3) of 16 beats of 4 bytes from address 0.
const BURSTS: u64 = 4;
const BEATS: u64 = 16;
const BYTES: u64 = 4;

/// Beat `beat` of burst `k`, as the master's `pattern` function writes it.
fn pattern(k: u64, beat: u64) -> [u8; 4] {
    let (k, beat) = (k as u8, beat as u8);
    // {k, beat, 8'ha5 ^ beat, 8'h3c ^ k}, little-endian on the bus.
    [0x3c ^ k, 0xa5 ^ beat, beat, k]
}

fn bench(top: TopDef) -> Result<(Env, ClockId, AxiSlave)> {
    let mut env = Env::new(Model::new(top)?);
    let clock = env.add_clock("M_AXI_ACLK", 250_000_000)?;
    env.add_reset(clock, "M_AXI_ARESETN", ResetPolarity::ActiveLow)?;
    let slave = AxiSlave::attach(&mut env, "M_AXI", clock)?;
    env.reset(clock, 4)?;
    Ok((env, clock, slave))
}

/// Starts the test and runs until TXN_DONE; returns the flags (ERROR, WRITE_RESP_ERROR,
/// READ_RESP_ERROR, READ_MISMATCH).
fn run_test(env: &mut Env, clock: ClockId) -> Result<[u64; 4]> {
    let init = env.model().port("INIT_AXI_TXN")?;
    env.model_mut().set(init, 1);
    let done = env.model().port("TXN_DONE")?;
    env.run_until(clock, 20_000, "TXN_DONE", |e| e.model().get(done) == 1)?;
    let mut flags = [0; 4];
    for (f, name) in flags.iter_mut().zip([
        "ERROR",
        "WRITE_RESP_ERROR",
        "READ_RESP_ERROR",
        "READ_MISMATCH",
    ]) {
        *f = env.model().get(env.model().port(name)?);
    }
    Ok(flags)
}

fn passes_the_polite_slave(top: TopDef) -> Result<()> {
    let (mut env, clock, slave) = bench(top)?;
    let flags = run_test(&mut env, clock)?;
    assert_eq!(
        flags, [0; 4],
        "no error flag against a slave that does nothing wrong"
    );
    for k in 0..BURSTS {
        for beat in 0..BEATS {
            let addr = (k * BEATS + beat) * BYTES;
            assert_eq!(
                slave.mem_read(addr, 4),
                pattern(k, beat),
                "burst {k} beat {beat} at {addr:#x}"
            );
        }
    }
    env.finish()?;
    assert!(env.violations().is_empty(), "{:?}", env.violations());
    Ok(())
}

#[test]
fn the_master_passes_the_polite_slave() -> Result<()> {
    passes_the_polite_slave(VENDOR_AXI4_MASTER)
}

#[test]
fn the_master_that_assumes_in_order_ids_passes_the_polite_slave() -> Result<()> {
    passes_the_polite_slave(VENDOR_AXI4_MASTER_BROKEN_ORDER)
}

#[test]
fn the_master_that_ignores_slverr_passes_the_polite_slave() -> Result<()> {
    passes_the_polite_slave(VENDOR_AXI4_MASTER_BROKEN_SLVERR)
}

#[test]
fn the_master_that_mishandles_interleaving_passes_the_polite_slave() -> Result<()> {
    passes_the_polite_slave(VENDOR_AXI4_MASTER_BROKEN_INTERLEAVE)
}

#[test]
fn the_master_with_early_write_data_passes_the_polite_slave() -> Result<()> {
    passes_the_polite_slave(VENDOR_AXI4_MASTER_BROKEN_WDATA)
}

#[test]
fn the_master_reports_data_that_does_not_read_back() -> Result<()> {
    // Its check is what the ID and interleaving bugs trip: a byte changed in the slave's
    // memory between the writes and the reads must come out as READ_MISMATCH.
    let (mut env, clock, slave) = bench(VENDOR_AXI4_MASTER)?;
    let init = env.model().port("INIT_AXI_TXN")?;
    env.model_mut().set(init, 1);
    let arvalid = env.model().port("M_AXI_ARVALID")?;
    env.run_until(clock, 20_000, "the first read address", |e| {
        e.model().get(arvalid) == 1
    })?;
    let addr = (2 * BEATS + 5) * BYTES + 1;
    slave.mem_write(addr, &[!pattern(2, 5)[1]]);
    assert_eq!(run_test(&mut env, clock)?, [1, 0, 0, 1]);
    Ok(())
}

#[test]
fn the_early_write_data_changes_under_a_stalled_wvalid_once_awready_waits() -> Result<()> {
    // The same slave with AWREADY held back at random: the correct master's data waits
    // unchanged beside the stalled address...
    let stall_aw = |slave: &AxiSlave| {
        slave.set_channel_pauses(Channel::Aw, &PauseSpec::random(7, 60));
    };
    let (mut env, clock, slave) = bench(VENDOR_AXI4_MASTER)?;
    stall_aw(&slave);
    assert_eq!(run_test(&mut env, clock)?, [0; 4]);
    env.finish()?;
    // ...the seeded master's changes when the address is taken, while W is stalled.
    let (mut env, clock, slave) = bench(VENDOR_AXI4_MASTER_BROKEN_WDATA)?;
    stall_aw(&slave);
    match run_test(&mut env, clock) {
        Err(axi_bfm::BfmError::Violation(v)) => {
            assert_eq!(v.rule, Rule::PayloadStableWhileStalled, "{v}");
            assert_eq!(v.channel, Channel::W, "{v}");
        }
        other => panic!("expected WDATA changed under a stalled WVALID, got {other:?}"),
    }
    Ok(())
}
