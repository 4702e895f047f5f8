//! The vendor frame generator under the stream-source fuzzer: each case draws the frame size
//! and count the generator is started with, and random back-pressure; the frames must match
//! the data sheet's pattern. The seeded bug (the last beat of a frame is given up on when
//! TREADY is low) passes a sink that is always ready and is caught and shrunk by the fuzzer.

use axi_bfm::fuzz::{check_axis_source, AxisSourceFuzz, SourceTarget};
use axi_bfm::monitor::{Event, Situation};
use axi_bfm::{AxisSink, BfmError, Env, ResetPolarity, Result};
use own_rtl_example::{
    frame_byte, VENDOR_FRAME_GEN, VENDOR_FRAME_GEN_BROKEN, VENDOR_FRAME_GEN_TSTRB,
};
use proptest::prelude::*;
use sim_runtime::{Model, TopDef};

/// What a case asks of the generator.
#[derive(Debug, Clone, Copy)]
struct Start {
    bytes: u64,
    count: u64,
}

fn starts() -> impl Strategy<Value = Start> {
    (1u64..=40, 1u64..=6).prop_map(|(bytes, count)| Start { bytes, count })
}

fn target(top: TopDef, s: &Start) -> Result<SourceTarget> {
    let mut model = Model::new(top)?;
    for (port, v) in [
        ("START", 1),
        ("FRAME_BYTES", s.bytes),
        ("FRAME_COUNT", s.count),
    ] {
        let p = model.port(port)?;
        model.set(p, v);
    }
    let mut env = Env::new(model);
    let clock = env.add_clock("ACLK", 250_000_000)?;
    env.add_reset(clock, "ARESETN", ResetPolarity::ActiveLow)?;
    let sink = AxisSink::attach(&mut env, "M_AXIS", clock)?;
    env.reset(clock, 4)?;
    // The generator's data sheet, as the reference.
    let expected = (0..s.count as usize)
        .map(|f| (0..s.bytes as usize).map(|k| frame_byte(f, k)).collect())
        .collect();
    Ok(SourceTarget {
        env,
        sink,
        clock,
        expected,
    })
}

fn fuzz() -> AxisSourceFuzz {
    AxisSourceFuzz {
        cases: 24,
        ..AxisSourceFuzz::default()
    }
}

#[test]
fn the_generator_survives_the_fuzzer() {
    let report = check_axis_source(&fuzz(), starts(), |s| target(VENDOR_FRAME_GEN, s))
        .unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(report.cases, fuzz().cases);
    // The sink's monitor saw back-pressure at TLAST: the situation the seeded bug needs.
    assert!(
        report.coverage.count(Situation::Event(Event::StallAtLast)) > 0,
        "{report}"
    );
}

#[test]
fn a_sink_that_is_always_ready_hides_the_bug() {
    let always_ready = AxisSourceFuzz {
        max_pause_percent: 0,
        ..fuzz()
    };
    let report = check_axis_source(&always_ready, starts(), |s| {
        target(VENDOR_FRAME_GEN_BROKEN, s)
    })
    .unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(
        report.coverage.count(Situation::Event(Event::StallAtLast)),
        0,
        "{report}"
    );
}

#[test]
fn back_pressure_at_tlast_exposes_the_bug() {
    let failure = check_axis_source(&fuzz(), starts(), |s| target(VENDOR_FRAME_GEN_BROKEN, s))
        .expect_err("the fuzzer must catch the generator that drops a stalled last beat");
    let text = failure.to_string();
    println!("{text}");
    assert_eq!(failure.sequence.len(), 1, "{text}");
    // Shrunk toward the smallest frame: one byte, so that every beat is a TLAST beat. (The
    // count stays where a stall at a TLAST beat is still likely under the shrunk pauses.)
    assert!(failure.sequence[0].contains("bytes: 1,"), "{text}");
    assert!(text.contains("replay: fuzz::replay_axis_source("), "{text}");
}

/// The generator behind a TSTRB-only port (Vivado's template names), started for one frame of
/// `bytes` bytes, with `map` applied before the sink attaches.
fn tstrb_target(bytes: u64, map: bool) -> Result<(Env, AxisSink)> {
    let mut model = Model::new(VENDOR_FRAME_GEN_TSTRB)?;
    for (port, v) in [("START", 1), ("FRAME_BYTES", bytes), ("FRAME_COUNT", 1)] {
        let p = model.port(port)?;
        model.set(p, v);
    }
    let mut env = Env::new(model);
    let clock = env.add_clock("ACLK", 250_000_000)?;
    env.add_reset(clock, "ARESETN", ResetPolarity::ActiveLow)?;
    if map {
        env.map_signal("M_AXIS", "tkeep", "M_AXIS_TSTRB");
    }
    let sink = AxisSink::attach(&mut env, "M_AXIS", clock)?;
    env.reset(clock, 4)?;
    Ok((env, sink))
}

#[test]
fn a_sink_on_a_tstrb_only_master_does_not_take_position_bytes_as_data() -> Result<()> {
    // Five bytes: the second beat keeps one, and its three strobes low are position bytes.
    let (mut env, sink) = tstrb_target(5, false)?;
    match sink.recv(&mut env) {
        Err(BfmError::Unsupported { bus, problem }) => {
            assert_eq!(bus, "M_AXIS");
            assert!(problem.contains("position bytes"), "{problem}");
            assert!(
                problem.contains("map_signal(\"M_AXIS\", \"tkeep\""),
                "{problem}"
            );
        }
        other => panic!("expected the position bytes refused, got {other:?}"),
    }
    // Bound as TKEEP, as the message says, the frame is the data sheet's.
    let (mut env, sink) = tstrb_target(5, true)?;
    let frame = sink.recv(&mut env)?;
    let want: Vec<u8> = (0..5).map(|k| frame_byte(0, k)).collect();
    assert_eq!(frame.data, want);
    Ok(())
}
