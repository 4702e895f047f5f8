//! Deliberately broken cards that the model-based property must catch: tests that pass only
//! when the property fails on the broken card and shrinks to a short sequence.
//!
//! A broken card is the simulated card `sim_top` with one of its deliberate faults turned on
//! at run time (card-harness's `Fault`, re-exported as `xdma::sim::Fault`): card_core is built
//! there with the fault's logic, and a sim-only input of sim_top, which the harness holds high
//! from before reset, enables it. Each fault is selected by its name in `[sim] top`:
//! - `sim_top_fault_rd_beat`: the read width converter (axi_rd_upsizer, FAULT_DROP_BEAT)
//!   repeats the first beat of a burst that starts in the last 16-byte slot of a 64-byte line
//!   in place of its second; the bursts stay legal, so only the data shows it;
//! - `sim_top_fault_seq`: the frame sources (frame_source, FAULT_SEQ_REPEAT=1000) repeat a
//!   sequence number once in a thousand frames.
//!
//! Each test runs the property with a fixed seed (so CI finds the same failure every time),
//! checks that it failed and that the shrunk sequence is short, prints it in its replayable
//! form, and replays it: it must fail with the fault on and pass on the good card, which is
//! the same `sim_top` build with the fault inputs low (so the failure is the fault's, and the
//! fault logic left off changes nothing). The committed files `tests/regressions/broken-*.txt`
//! are the sequences found; they are replayed the same way. A broken card exists only as a
//! simulated card: on any other backend these tests are skipped, saying so.

use std::path::PathBuf;

use card_tests::fixture::{self, record_skip, test_name};
use card_tests::ops::{self, Case};
use proptest::test_runner::{
    Config as ProptestConfig, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner,
};
use xdma::sim::Fault;
use xdma::{BackendKind, Config};

/// The most operations a shrunk failing sequence may have.
const SHORT: usize = 3;

/// Cases drawn before giving up: the fault must show well before.
const CASES: u32 = 64;

/// The suite's configuration with the simulated card `top` (`[sim] top`), or None (after a
/// printed skip) when the environment names a backend on which a card cannot be chosen.
fn config_with_top(top: &str) -> Option<Config> {
    let mut cfg = fixture::config();
    if cfg.backend != BackendKind::Sim {
        record_skip(
            &test_name(),
            &format!(
                "the broken card {top} is a simulated card (sim_top with a fault turned on); XDMA_BACKEND={} serves whatever card is behind it",
                cfg.backend.name()
            ),
        );
        return None;
    }
    ops::edit_sim(&mut cfg, |s| s.top = top.into());
    Some(cfg)
}

/// Runs the property on the broken card and returns the shrunk failing case with its failure.
fn shrunk_failure(fault: Fault, seed: u8) -> Option<(Case, String)> {
    let top = fault.name();
    let cfg = config_with_top(top)?;
    let config = ProptestConfig {
        cases: CASES,
        failure_persistence: None,
        max_shrink_iters: 400,
        ..ProptestConfig::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let started = std::time::Instant::now();
    let result = runner.run(&ops::case(12), |case| {
        ops::run_case(&case, &cfg).map_err(|f| TestCaseError::fail(f.to_string()))
    });
    match result {
        Ok(()) => panic!(
            "the property passed {CASES} cases on the broken card {top}: the suite does not catch its fault"
        ),
        Err(TestError::Abort(why)) => panic!("the property aborted on {top}: {why}"),
        Err(TestError::Fail(why, case)) => {
            eprintln!(
                "{top}: the property failed and shrank in {:.1} s to:{case:?}because: {why}",
                started.elapsed().as_secs_f64()
            );
            Some((case, why.to_string()))
        }
    }
}

/// The shrunk case must fail with the fault on and pass on the good card: the failure is the
/// fault's, not the sequence's. The good card is the very build the fault is an input of
/// (`sim_top`), with every fault input low.
fn fails_only_on(fault: Fault, case: &Case) {
    let top = fault.name();
    let Some(broken) = config_with_top(top) else {
        return;
    };
    let mut good = broken.clone();
    ops::edit_sim(&mut good, |s| s.top = fault.top().name().into());
    if let Err(f) = ops::run_case(case, &good) {
        panic!(
            "the sequence also fails on the good card ({}), so it does not isolate {top}'s fault: {f}{case:?}",
            fault.top().name()
        );
    }
    if ops::run_case(case, &broken).is_ok() {
        panic!("the sequence passes on {top}:{case:?}");
    }
}

fn check(fault: Fault, seed: u8, expect: &str) {
    let top = fault.name();
    let Some((case, why)) = shrunk_failure(fault, seed) else {
        return;
    };
    assert!(
        case.ops.len() <= SHORT,
        "{top}: the failure shrank to {} operations, more than {SHORT}:{case:?}",
        case.ops.len()
    );
    assert!(
        why.contains(expect),
        "{top}: failed for another reason: {why}"
    );
    fails_only_on(fault, &case);
}

#[test]
fn a_dropped_read_beat_is_caught() {
    check(Fault::RD_DROP_BEAT, 3, "the model holds");
}

#[test]
fn a_repeated_sequence_number_is_caught() {
    check(Fault::SEQ_REPEAT, 2, "sequence");
}

/// The committed sequences, replayed: each fails with its fault on and passes on the good card.
/// Every fault has one, named as the regression files say (a fault added without its sequence
/// fails here).
#[test]
fn the_committed_broken_card_sequences_still_fail() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/regressions");
    let files = [
        ("broken-rd-beat.txt", Fault::RD_DROP_BEAT),
        ("broken-seq.txt", Fault::SEQ_REPEAT),
    ];
    for fault in Fault::ALL {
        assert!(
            files.iter().any(|(_, f)| f == fault),
            "no committed sequence for the fault {fault}"
        );
    }
    for (file, fault) in files {
        let path = dir.join(file);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            text.contains(fault.name()),
            "{}: the header names another card than {fault}",
            path.display()
        );
        let case = Case::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        fails_only_on(fault, &case);
    }
}
