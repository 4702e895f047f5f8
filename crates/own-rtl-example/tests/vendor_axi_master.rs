//! The vendor AXI4 test master (Vivado-template style, `vendor_axi4_master.v`) and its four
//! seeded bugs, first against the bus models' polite slave: a memory that answers OKAY, in
//! order, one burst at a time. Each build must pass it: write its bursts, read them back, raise
//! TXN_DONE without an error, leave the pattern in memory and break no protocol rule. The bugs
//! need a slave that does more (reorders IDs, interleaves read data, answers SLVERR, holds
//! AWREADY low): master fuzzing against the randomizing slave, at its default profile, must
//! catch each of them in at least 190 of 200 seeds, and pass the correct master in all.

use axi_bfm::fuzz::{check_axi_master, Expected, FuzzFailure, MasterFuzz, MasterRun};
use axi_bfm::random_slave::{ReqChoice, SlaveChoices, SlaveLog, SlaveProfile};
use axi_bfm::{AxiSlave, Channel, Env, PauseSpec, RandomAxiSlave, ResetPolarity, Result, Rule};
use own_rtl_example::{
    VENDOR_AXI4_MASTER, VENDOR_AXI4_MASTER_BROKEN_INTERLEAVE, VENDOR_AXI4_MASTER_BROKEN_ORDER,
    VENDOR_AXI4_MASTER_BROKEN_SLVERR, VENDOR_AXI4_MASTER_BROKEN_WDATA,
};
use proptest::strategy::Just;
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

/// The master in an environment with `attach`'s slave on its M_AXI port, out of reset.
fn bench_with<S>(
    top: TopDef,
    attach: impl FnOnce(&mut Env, ClockId) -> Result<S>,
) -> Result<(Env, ClockId, S)> {
    let mut env = Env::new(Model::new(top)?);
    let clock = env.add_clock("M_AXI_ACLK", 250_000_000)?;
    env.add_reset(clock, "M_AXI_ARESETN", ResetPolarity::ActiveLow)?;
    let slave = attach(&mut env, clock)?;
    env.reset(clock, 4)?;
    Ok((env, clock, slave))
}

fn bench(top: TopDef) -> Result<(Env, ClockId, AxiSlave)> {
    bench_with(top, |env, clock| AxiSlave::attach(env, "M_AXI", clock))
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

/// The flags the master raises: ERROR, WRITE_RESP_ERROR, READ_RESP_ERROR, READ_MISMATCH.
type Flags = [u64; 4];

/// One case: the master's whole test against a randomizing slave with `choices`. The master
/// has no work to draw (its bursts are fixed by its parameters), so the case is the slave's.
fn fuzz_run(
    top: TopDef,
) -> impl Fn(&(), &SlaveChoices) -> Result<MasterRun<RandomAxiSlave, Flags>> {
    move |_, choices| {
        let (mut env, clock, slave) = bench_with(top, |env, clock| {
            RandomAxiSlave::attach(env, "M_AXI", clock, choices.clone())
        })?;
        let reported = run_test(&mut env, clock)?;
        Ok(MasterRun {
            env,
            slave,
            reported,
        })
    }
}

/// What a correct master ends with, from the module's own description and what the slave
/// answered: memory holds each burst whose write was not refused (a refused write changes
/// nothing, so its bytes stay zero); WRITE_RESP_ERROR if any B was SLVERR or DECERR,
/// READ_RESP_ERROR if any read was; READ_MISMATCH if a read answered OKAY finds a refused
/// write's zeros instead of its pattern.
fn fuzz_reference(_: &(), log: &SlaveLog) -> Expected<Flags> {
    let burst_bytes = BEATS * BYTES;
    let written = |k: u64| {
        log.writes
            .iter()
            .any(|(b, r)| b.addr == k * burst_bytes && log.wrote(b, *r))
    };
    let mut memory = Vec::new();
    for k in 0..BURSTS {
        for beat in 0..BEATS {
            memory.extend(if written(k) { pattern(k, beat) } else { [0; 4] });
        }
    }
    let write_error = log.writes.iter().any(|(_, r)| !r.is_ok());
    let read_error = log.reads.iter().any(|(_, r)| !r.is_ok());
    let mismatch = log
        .reads
        .iter()
        .any(|(b, r)| r.is_ok() && !written(b.addr / burst_bytes));
    let flags = [
        u64::from(write_error || read_error || mismatch),
        u64::from(write_error),
        u64::from(read_error),
        u64::from(mismatch),
    ];
    Expected {
        memory: vec![(0, memory)],
        reported: flags,
    }
}

/// Requests the shrunk case answers other than politely: the size of what a user has to read
/// to see the bug. A polite choice left in the list (proptest shrinks a list's elements after
/// its length, so some stay) does what no choice at all does.
fn shrunk_requests(f: &FuzzFailure) -> usize {
    let polite = format!("{:?}", ReqChoice::default());
    f.sequence
        .iter()
        .map(|s| s.matches("ReqChoice {").count() - s.matches(&polite).count())
        .sum()
}

/// Master fuzzing of `top` at the default profile under seeds `0..seeds`: the seeds that
/// caught a failure, and the first failure.
fn caught(top: TopDef, slave: &SlaveProfile, seeds: u64) -> (u64, Option<FuzzFailure>) {
    let mut n = 0;
    let mut first = None;
    for seed in 0..seeds {
        let cfg = MasterFuzz {
            seed,
            slave: slave.clone(),
            ..MasterFuzz::default()
        };
        if let Err(f) = check_axi_master(&cfg, Just(()), fuzz_run(top), fuzz_reference) {
            n += 1;
            first.get_or_insert(f);
        }
    }
    (n, first)
}

/// Seeds each rate is measured over, as the master-fuzzing defaults promise them.
const SEEDS: u64 = 200;

#[test]
fn the_correct_master_passes_every_seed_of_the_defaults() {
    let (n, first) = caught(VENDOR_AXI4_MASTER, &SlaveProfile::default(), SEEDS);
    assert_eq!(n, 0, "{}", first.map(|f| f.to_string()).unwrap_or_default());
}

#[test]
fn every_seeded_master_passes_every_seed_of_the_polite_slave() {
    for top in [
        VENDOR_AXI4_MASTER_BROKEN_ORDER,
        VENDOR_AXI4_MASTER_BROKEN_SLVERR,
        VENDOR_AXI4_MASTER_BROKEN_INTERLEAVE,
        VENDOR_AXI4_MASTER_BROKEN_WDATA,
    ] {
        let (n, first) = caught(top, &SlaveProfile::polite(), SEEDS);
        let why = first.map(|f| f.to_string()).unwrap_or_default();
        assert_eq!(n, 0, "{}: {why}", top.name());
    }
}

/// Catches `top` in at least 190 of 200 seeds of the defaults, with the shrunk case naming
/// `what` and drawing at most `most` requests; prints the rate and size for the record.
fn caught_by_the_defaults(top: TopDef, what: &str, most: usize) {
    let (n, first) = caught(top, &SlaveProfile::default(), SEEDS);
    let f = first.unwrap_or_else(|| panic!("{}: no seed caught it", top.name()));
    let size = shrunk_requests(&f);
    println!(
        "{}: caught in {n} of {SEEDS} seeds; shrunk to {size} drawn request(s): {}",
        top.name(),
        f.error
    );
    assert!(
        n >= 190,
        "{}: caught in only {n} of {SEEDS} seeds",
        top.name()
    );
    assert!(f.error.contains(what), "{}: {}", top.name(), f.error);
    assert!(
        size <= most,
        "{}: shrunk to {size} requests: {f}",
        top.name()
    );
}

#[test]
fn the_defaults_catch_the_master_that_assumes_in_order_ids() {
    caught_by_the_defaults(VENDOR_AXI4_MASTER_BROKEN_ORDER, "master's report", 2);
}

#[test]
fn the_defaults_catch_the_master_that_ignores_slverr() {
    caught_by_the_defaults(VENDOR_AXI4_MASTER_BROKEN_SLVERR, "master's report", 1);
}

#[test]
fn the_defaults_catch_the_master_that_mishandles_interleaving() {
    caught_by_the_defaults(VENDOR_AXI4_MASTER_BROKEN_INTERLEAVE, "master's report", 2);
}

#[test]
fn the_defaults_catch_the_master_with_early_write_data() {
    caught_by_the_defaults(VENDOR_AXI4_MASTER_BROKEN_WDATA, "W", 1);
}
