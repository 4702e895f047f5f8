//! The campaign's model-based fuzz slices: [`SLICES`] tests, `campaign_fuzz_slice_00` to
//! `_15`, each running its share of the model-based property's cases (case `i` in slice
//! `i % 16`, seeded from the campaign's seed and `i`, see the `campaign` crate). The protocol
//! fuzzers' slices are axi-bfm's (`tests/campaign_protocol.rs`), beside the pass-throughs' other
//! tests.
//! cargo-nextest partitions the slices over shards (`cargo xtask campaign`); the union of the
//! shards is one campaign whatever their count.
//!
//! A slice stops at its first failing model-based case, shrinks it, saves the shrunk sequence
//! beside its record and fails with both replay commands: the seed's (the slice alone, that
//! case alone) and the sequence's (the `replay` example). With `CAMPAIGN_OUT` set it writes
//! `<CAMPAIGN_OUT>/<test>.json`: the cases it ran, their seeds and its failures. Without any `CAMPAIGN_*` variable the first slices run one case each
//! ([`campaign::DEFAULT_CASES`]) and the others print why they have nothing to do.

use std::time::Instant;

use campaign::{Failure, ModelFailure, ModelSlice, Plan, Record, SLICES};
use card_tests::fixture::{self, record_skip};
use card_tests::ops::{self, Case};
use proptest::test_runner::{
    Config as ProptestConfig, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner,
};
use xdma::{BackendKind, Config};

/// The longest case drawn: as the model-based test draws them.
const MAX_OPS: usize = 24;

/// The suite's configuration with the campaign's top, or None (after a printed skip) when a
/// top is asked for on a backend where none can be chosen.
fn model_config(plan: &Plan, test: &str) -> Option<Config> {
    let mut cfg = fixture::config();
    if let Some(top) = &plan.top {
        if cfg.backend != BackendKind::Sim {
            record_skip(
                test,
                &format!(
                    "{}={top} names a simulated card; XDMA_BACKEND={} serves whatever card is behind it",
                    campaign::TOP_ENV,
                    cfg.backend.name()
                ),
            );
            return None;
        }
        ops::edit_sim(&mut cfg, |s| s.top = top.clone());
    }
    Some(cfg)
}

/// One model-based case of the campaign: run, and shrunk if it fails. Returns the shrunk case
/// and its failure, or None when it passed.
fn model_case(plan: &Plan, cfg: &Config, index: u64) -> Option<(Case, String)> {
    let config = ProptestConfig {
        cases: 1,
        failure_persistence: None,
        max_shrink_iters: plan.shrink_iters,
        ..ProptestConfig::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &campaign::case_seed(plan.seed, index));
    let mut runner = TestRunner::new_with_rng(config, rng);
    let result = runner.run(&ops::case(MAX_OPS), |case| {
        ops::run_case(&case, cfg).map_err(|f| TestCaseError::fail(f.to_string()))
    });
    match result {
        Ok(()) => None,
        Err(TestError::Abort(why)) => Some((
            Case {
                pauses: None,
                reference_host: false,
                ops: Vec::new(),
            },
            format!("proptest aborted the case: {why}"),
        )),
        Err(TestError::Fail(why, case)) => Some((case, why.to_string())),
    }
}

/// Runs slice `slice` of the campaign the environment describes.
fn fuzz_slice(slice: u64) {
    let test = format!("campaign_fuzz_slice_{slice:02}");
    let plan = Plan::from_env().unwrap_or_else(|e| panic!("{e}"));
    let started = Instant::now();
    let indices = plan.slice_cases(slice);
    let mut ran = Vec::new();
    let mut failures = Vec::new();
    let mut messages = Vec::new();
    if !indices.is_empty() {
        let Some(cfg) = model_config(&plan, &test) else {
            return;
        };
        for index in indices {
            ran.push(index);
            let case_started = Instant::now();
            let Some((case, why)) = model_case(&plan, &cfg, index) else {
                continue;
            };
            let sequence = format!("{case:?}");
            let top = plan.top.as_deref();
            let seed_replay = campaign::seed_replay_command(plan.seed, index, top);
            let file = plan.out.as_ref().map(|out| {
                campaign::write_text(out, &format!("{test}-case-{index}.txt"), &sequence)
                    .unwrap_or_else(|e| panic!("{e}"))
            });
            let sequence_replay = file
                .as_deref()
                .map(|f| campaign::sequence_replay_command(f, top));
            messages.push(format!(
                "model-based case {index} failed (shrunk in {:.1} s to {} operations) because: {why}\nthe shrunk sequence:{sequence}replay it from its seed: {seed_replay}\n{}",
                case_started.elapsed().as_secs_f64(),
                case.ops.len(),
                sequence_replay
                    .as_deref()
                    .map(|c| format!("replay the sequence: {c}\n"))
                    .unwrap_or_default()
            ));
            failures.push(Failure::Model(ModelFailure {
                case: index,
                case_seed: campaign::case_seed(plan.seed, index)
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<String>(),
                operations: case.ops.len() as u64,
                error: why,
                sequence,
                sequence_file: file.map(|f| f.display().to_string()),
                replay_seed: seed_replay,
                replay_sequence: sequence_replay,
            }));
            // A slice stops at its first failure, as a property test does: one shrunk
            // failure per slice is the report, and the rest of its cases would mostly find
            // the same fault again.
            break;
        }
    }
    if ran.is_empty() {
        record_skip(
            &test,
            &format!(
                "no model-based case of the campaign falls in this slice ({}={}; case i runs in slice i % {SLICES})",
                campaign::CASES_ENV,
                plan.cases,
            ),
        );
    }
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "{test}: {} model-based cases {:?}, {} failures, {secs:.1} s",
        ran.len(),
        ran,
        failures.len()
    );
    let record = Record::Fuzz(ModelSlice {
        test,
        slice,
        seed: format!("{:#x}", plan.seed),
        campaign_cases: plan.cases,
        top: plan.top.clone(),
        cases: ran.len() as u64,
        case_indices: ran,
        failures,
        secs,
    });
    campaign::finish_slice(plan.out.as_deref(), &record, &messages);
}

campaign::campaign_slices! {
    fuzz_slice;
    campaign_fuzz_slice_00 = 0;
    campaign_fuzz_slice_01 = 1;
    campaign_fuzz_slice_02 = 2;
    campaign_fuzz_slice_03 = 3;
    campaign_fuzz_slice_04 = 4;
    campaign_fuzz_slice_05 = 5;
    campaign_fuzz_slice_06 = 6;
    campaign_fuzz_slice_07 = 7;
    campaign_fuzz_slice_08 = 8;
    campaign_fuzz_slice_09 = 9;
    campaign_fuzz_slice_10 = 10;
    campaign_fuzz_slice_11 = 11;
    campaign_fuzz_slice_12 = 12;
    campaign_fuzz_slice_13 = 13;
    campaign_fuzz_slice_14 = 14;
    campaign_fuzz_slice_15 = 15;
}
