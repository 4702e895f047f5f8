//! The campaign's protocol fuzz slices: 16 tests, `campaign_fuzz_protocol_00` to `_15`, each
//! fuzzing the RTL pass-throughs (AXI4 and AXI4-Lite with a slave memory behind them,
//! AXI-Stream from a source to a sink) with its share of `CAMPAIGN_PROTOCOL_CASES` cases per protocol, seeded
//! from the campaign's seed and the slice, and recording the functional coverage the monitors
//! counted (`axi_bfm::fuzz::FuzzReport`). They live here, beside the pass-throughs' other tests
//! (`tests/axi.rs`, `tests/env.rs`), because only the harness and the crates beneath it look
//! ports up by name; the model-based slices are card-tests' (`tests/campaign.rs`), and both
//! take their plan, seeds and records from the `campaign` crate. `cargo xtask campaign` merges the slices' coverage into
//! one table per protocol.
//!
//! A failing case fails the slice with proptest's shrunk sequence (as Rust, for
//! `axi_bfm::fuzz::replay_axi`, `replay_axil` or `replay_axis`) and the command that runs the slice again.
//! Without any `CAMPAIGN_*` variable the first slices run one case per protocol each.

use std::time::Instant;

use axi_bfm::fuzz::{
    check_axi_slave, check_axil_slave, check_axis_path, AxiFuzz, AxiTarget, AxilFuzz, AxisFuzz,
    FuzzReport,
};
use axi_bfm::{
    AxiMaster, AxiSlave, AxilMaster, AxilSlave, AxisSink, AxisSource, Env, ResetPolarity,
};
use campaign::{
    Failure, Plan, ProtocolCoverage, ProtocolFailure, ProtocolSlice, Record, SituationCount,
    AXIL_STREAM, AXIS_STREAM, AXI_STREAM,
};
use card_sim::{ClockId, Model, Top};

/// The pass-throughs' clock: the reference board's AXI clock.
const AXI_HZ: u64 = 250_000_000;

fn env_of(top: Top) -> axi_bfm::Result<(Env, ClockId)> {
    let model = Model::new(top).unwrap_or_else(|e| panic!("the {top:?} model: {e}"));
    let mut env = Env::new(model);
    let clk = env.add_clock("clk", AXI_HZ)?;
    env.add_reset(clk, "rst", ResetPolarity::ActiveHigh)?;
    Ok((env, clk))
}

/// A protocol fuzz run's record: cases, every situation with its count, the missing ones.
fn coverage_record(protocol: &str, seed: u64, report: &FuzzReport) -> ProtocolCoverage {
    ProtocolCoverage {
        protocol: protocol.to_string(),
        seed: format!("{seed:#x}"),
        cases: u64::from(report.cases),
        situations: report
            .situations
            .iter()
            .map(|s| SituationCount {
                situation: s.to_string(),
                count: report.coverage.count(*s),
            })
            .collect(),
        missing: report.missing().iter().map(ToString::to_string).collect(),
    }
}

/// The AXI4 pass-through fuzzed with `cases` cases from `seed`.
fn axi(cases: u32, seed: u64) -> Result<ProtocolCoverage, String> {
    let bus = env_of(Top::AxiPassthrough)
        .and_then(|(mut env, clk)| AxiMaster::attach(&mut env, "s_axi", clk))
        .map_err(|e| format!("the AXI4 pass-through: {e}"))?
        .bus_bytes();
    // The window straddles a 4 KiB page, so INCR bursts meet its edge, as axi-bfm's coverage
    // test sets it.
    let mut cfg = AxiFuzz::new(bus, 0xc00, 0x800);
    cfg.cases = cases;
    cfg.seed = seed;
    check_axi_slave(&cfg, || {
        let (mut env, clock) = env_of(Top::AxiPassthrough)?;
        let master = AxiMaster::attach(&mut env, "s_axi", clock)?;
        AxiSlave::attach(&mut env, "m_axi", clock)?;
        Ok(AxiTarget { env, master, clock })
    })
    .map(|r| coverage_record("axi4", seed, &r))
    .map_err(|f| format!("AXI4 pass-through, fuzz seed {seed:#x}: {f}"))
}

/// The AXI4-Lite pass-through fuzzed with `cases` cases from `seed`.
fn axil(cases: u32, seed: u64) -> Result<ProtocolCoverage, String> {
    let bus = env_of(Top::AxilPassthrough)
        .and_then(|(mut env, clk)| AxilMaster::attach(&mut env, "s_axil", clk))
        .map_err(|e| format!("the AXI4-Lite pass-through: {e}"))?
        .bus_bytes();
    let mut cfg = AxilFuzz::new(bus, 0, 0x100);
    cfg.cases = cases;
    cfg.seed = seed;
    check_axil_slave(&cfg, || {
        let (mut env, clk) = env_of(Top::AxilPassthrough)?;
        let master = AxilMaster::attach(&mut env, "s_axil", clk)?;
        AxilSlave::attach(&mut env, "m_axil", clk)?;
        Ok((env, master))
    })
    .map(|r| coverage_record("axi4-lite", seed, &r))
    .map_err(|f| format!("AXI4-Lite pass-through, fuzz seed {seed:#x}: {f}"))
}

/// The AXI-Stream pass-through fuzzed with `cases` cases from `seed`, null bytes included.
fn axis(cases: u32, seed: u64) -> Result<ProtocolCoverage, String> {
    let cfg = AxisFuzz {
        tkeep_gaps: true,
        cases,
        seed,
        ..AxisFuzz::default()
    };
    check_axis_path(&cfg, || {
        let (mut env, clk) = env_of(Top::AxisPassthrough)?;
        let source = AxisSource::attach(&mut env, "s_axis", clk)?;
        let sink = AxisSink::attach(&mut env, "m_axis", clk)?;
        Ok((env, source, sink))
    })
    .map(|r| coverage_record("axi-stream", seed, &r))
    .map_err(|f| format!("AXI-Stream pass-through, fuzz seed {seed:#x}: {f}"))
}

/// Runs protocol slice `slice` of the campaign the environment describes.
fn protocol_slice(slice: u64) {
    let test = format!("campaign_fuzz_protocol_{slice:02}");
    let plan = Plan::from_env().unwrap_or_else(|e| panic!("{e}"));
    let started = Instant::now();
    let share = plan.protocol_share(slice);
    if share == 0 {
        // Printed past the harness's capture, as the suite's skips are.
        eprintln!(
            "card-harness: SKIPPED {test}: no protocol case of the campaign falls in this slice ({}={}{})",
            campaign::PROTOCOL_ENV,
            plan.protocol_cases,
            if plan.only.is_some() {
                ", and a replay of one model-based case runs none"
            } else {
                ""
            }
        );
        return;
    }
    let cases = u32::try_from(share).unwrap_or(u32::MAX);
    let (mut records, mut failures, mut messages) = (Vec::new(), Vec::new(), Vec::new());
    let replay = format!(
        "{}={:#x} {}={} cargo nextest run --workspace -E 'test(={test})'",
        campaign::SEED_ENV,
        plan.seed,
        campaign::PROTOCOL_ENV,
        plan.protocol_cases
    );
    for run in [
        axi(cases, campaign::mix(plan.seed, AXI_STREAM, slice)),
        axil(cases, campaign::mix(plan.seed, AXIL_STREAM, slice)),
        axis(cases, campaign::mix(plan.seed, AXIS_STREAM, slice)),
    ] {
        match run {
            Ok(r) => records.push(r),
            Err(e) => {
                messages.push(format!("{e}\nreplay it from its seed: {replay}\n"));
                failures.push(Failure::Protocol(ProtocolFailure {
                    error: e,
                    replay_seed: replay.clone(),
                }));
            }
        }
    }
    let secs = started.elapsed().as_secs_f64();
    let ran: u64 = records.iter().map(|r| r.cases).sum();
    eprintln!(
        "{test}: {ran} protocol fuzz cases over {} protocols, {} failures, {secs:.1} s",
        records.len(),
        failures.len()
    );
    let record = Record::Protocol(ProtocolSlice {
        test,
        slice,
        seed: format!("{:#x}", plan.seed),
        protocol: records,
        failures,
        secs,
    });
    campaign::finish_slice(plan.out.as_deref(), &record, &messages);
}

campaign::campaign_slices! {
    protocol_slice;
    campaign_fuzz_protocol_00 = 0;
    campaign_fuzz_protocol_01 = 1;
    campaign_fuzz_protocol_02 = 2;
    campaign_fuzz_protocol_03 = 3;
    campaign_fuzz_protocol_04 = 4;
    campaign_fuzz_protocol_05 = 5;
    campaign_fuzz_protocol_06 = 6;
    campaign_fuzz_protocol_07 = 7;
    campaign_fuzz_protocol_08 = 8;
    campaign_fuzz_protocol_09 = 9;
    campaign_fuzz_protocol_10 = 10;
    campaign_fuzz_protocol_11 = 11;
    campaign_fuzz_protocol_12 = 12;
    campaign_fuzz_protocol_13 = 13;
    campaign_fuzz_protocol_14 = 14;
    campaign_fuzz_protocol_15 = 15;
}
