//! The vendor AXI4 RAM under the harness: bound by its upper-case port names, monitors on,
//! random pauses on every channel, and fuzzed against a reference memory. The broken variant
//! (it reads ARADDR after the handshake) must be caught by the fuzzer once the master drives
//! garbage while ARVALID is low, and shrunk to a short sequence.

use axi_bfm::fuzz::{check_axi_slave, AxiFuzz, AxiSupport, AxiTarget};
use axi_bfm::{AxiMaster, BfmError, Env, PauseSpec, ResetPolarity, Result};
use own_rtl_example::{
    RAM_BYTES, SMALL_RAM_BYTES, VENDOR_AXI4_RAM, VENDOR_AXI4_RAM_64, VENDOR_AXI4_RAM_64_ID1,
    VENDOR_AXI4_RAM_BROKEN,
};
use sim_runtime::{Model, TopDef};

fn target(top: TopDef) -> Result<AxiTarget> {
    let mut env = Env::new(Model::new(top)?);
    let clock = env.add_clock("S_AXI_ACLK", 250_000_000)?;
    env.add_reset(clock, "S_AXI_ARESETN", ResetPolarity::ActiveLow)?;
    // `S_AXI` finds S_AXI_AWADDR and the rest whatever their case.
    let master = AxiMaster::attach(&mut env, "S_AXI", clock)?;
    env.reset(clock, 4)?;
    Ok(AxiTarget { env, master, clock })
}

#[test]
fn writes_and_reads_back_with_random_pauses() -> Result<()> {
    let mut b = target(VENDOR_AXI4_RAM)?;
    b.env.set_pauses(&PauseSpec::random(11, 30));
    let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 + 3) as u8).collect();
    b.master.write(&mut b.env, 0x123, &data)?;
    assert_eq!(b.master.read(&mut b.env, 0x123, data.len())?, data);
    b.env.finish()?;
    assert!(b.master.monitor().is_some(), "a monitor watches the bus");
    Ok(())
}

fn fuzz() -> AxiFuzz {
    AxiFuzz {
        cases: 24,
        ..AxiFuzz::new(4, 0, RAM_BYTES)
    }
}

#[test]
fn the_ram_survives_the_fuzzer() {
    if let Err(f) = check_axi_slave(&fuzz(), || target(VENDOR_AXI4_RAM)) {
        panic!("{f}");
    }
}

#[test]
fn the_broken_ram_passes_a_polite_master_but_not_the_fuzzer() {
    // A master that leaves ARADDR alone after the handshake hides the bug: no garbage while
    // idle, and one burst at a time (a second read's address right after the first's
    // handshake changes ARADDR as well)...
    let polite = AxiFuzz {
        idle_garbage: false,
        outstanding: 1,
        ..fuzz()
    };
    check_axi_slave(&polite, || target(VENDOR_AXI4_RAM_BROKEN)).expect("the bug is hidden");
    // ...garbage on ARADDR while ARVALID is low exposes it.
    let failure = check_axi_slave(&fuzz(), || target(VENDOR_AXI4_RAM_BROKEN))
        .expect_err("the fuzzer must catch the broken RAM");
    let text = failure.to_string();
    println!("{text}");
    assert!(text.contains("data mismatch"), "{text}");
    // Shrunk: a write that puts data somewhere and a read that misses it.
    assert!(
        failure.sequence.len() <= 3,
        "not shrunk to a minimal sequence: {text}"
    );
    assert!(
        failure
            .sequence
            .iter()
            .any(|s| s.starts_with("AxiOp::Read")),
        "{text}"
    );
}

/// Seeds each run of the small-RAM checks tries: a run of 200 seeds once failed every one of
/// them with false mismatches, because bursts of up to 256 beats ran past the 64 bytes the RAM
/// decodes and aliased inside it where the reference memory did not.
const SEEDS: u64 = 200;

/// Runs `cfg` under every seed on the clean 64-byte RAM and returns the failures.
fn failures_on_small_ram(cfg: &AxiFuzz) -> Vec<String> {
    (0..SEEDS)
        .filter_map(|seed| {
            let cfg = AxiFuzz {
                seed,
                ..cfg.clone()
            };
            check_axi_slave(&cfg, || target(VENDOR_AXI4_RAM_64))
                .err()
                .map(|f| format!("seed {seed}: {f}"))
        })
        .collect()
}

#[test]
fn no_burst_leaves_a_small_slave_under_full_support() {
    for dut in [
        AxiSupport {
            ids: 4,
            ..AxiSupport::FULL
        },
        AxiSupport::FULL,
    ] {
        let cfg = AxiFuzz {
            cases: 2,
            ..AxiFuzz::supporting(4, 0, SMALL_RAM_BYTES, &dut)
        };
        let failed = failures_on_small_ram(&cfg);
        assert!(
            failed.is_empty(),
            "{} of {SEEDS} seeds failed on a clean 64-byte RAM under {dut:?}; the first:\n{}",
            failed.len(),
            failed[0]
        );
    }
}

#[test]
fn ids_the_port_cannot_carry_are_refused_before_the_run() {
    // The RAM keeps two IDs apart on its 1-bit ID port; the default draws four.
    let cfg = AxiFuzz::new(4, 0, SMALL_RAM_BYTES);
    let t = target(VENDOR_AXI4_RAM_64_ID1).expect("target");
    assert_eq!(t.master.id_bits(), 1);
    match cfg.check_target(&t.master) {
        Err(BfmError::BadRequest { bus, problem }) => {
            assert_eq!(bus, "S_AXI");
            assert!(problem.contains("1 bit(s) wide"), "{problem}");
            assert!(problem.contains("ids: 2"), "says what to set: {problem}");
        }
        other => panic!("expected a BadRequest naming the ID width, got {other:?}"),
    }
    let failure = check_axi_slave(&cfg, || target(VENDOR_AXI4_RAM_64_ID1))
        .expect_err("four IDs on a 1-bit port");
    assert!(failure.before_first_case(), "{failure}");
    assert!(failure.to_string().contains("1 bit(s) wide"), "{failure}");
    // Declared as what the port carries, the same RAM passes.
    let two = AxiFuzz {
        ids: 2,
        cases: 8,
        ..cfg
    };
    if let Err(f) = check_axi_slave(&two, || target(VENDOR_AXI4_RAM_64_ID1)) {
        panic!("{f}");
    }
}

#[test]
fn an_incr_only_declaration_still_keeps_reads_in_flight() {
    // The broken RAM takes the first read address from ARADDR a cycle after the handshake.
    // Declared INCR-only, with no garbage while idle, only a second read whose address goes
    // up right after the first one's handshake shows it: several reads in flight, which
    // INCR_ONLY keeps (it once held the fuzzer to one burst at a time, which passed).
    let cfg = AxiFuzz {
        idle_garbage: false,
        ..AxiFuzz::supporting(4, 0, RAM_BYTES, &AxiSupport::INCR_ONLY)
    };
    assert!(cfg.outstanding > 1);
    let failure = check_axi_slave(&cfg, || target(VENDOR_AXI4_RAM_BROKEN))
        .expect_err("reads in flight expose the late ARADDR");
    assert!(failure.to_string().contains("data mismatch"), "{failure}");
    // One burst at a time, the same declaration finds nothing.
    let polite = AxiFuzz {
        outstanding: 1,
        ..cfg
    };
    if let Err(f) = check_axi_slave(&polite, || target(VENDOR_AXI4_RAM_BROKEN)) {
        panic!("one burst at a time should hide the bug: {f}");
    }
}
