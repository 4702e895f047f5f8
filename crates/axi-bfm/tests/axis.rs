//! The AXI-Stream source and sink through the 512-bit AXI-Stream pass-through, the frame
//! recorder, and one fault-injection test per rule that applies to AXI-Stream.

mod common;

use axi_bfm::{AxisFrame, AxisMonitor, AxisMonitorConfig, PauseSpec, Rule, StreamFaults};
use common::{axis, expect_rule, pattern};

#[test]
fn frames_with_gaps_side_band_and_backpressure_arrive_intact_and_are_recorded() {
    let (mut env, clk, src, sink) = axis();
    let rec = AxisMonitor::attach_with(
        &mut env,
        "m_axis",
        clk,
        AxisMonitorConfig {
            record: true,
            ..AxisMonitorConfig::default()
        },
    )
    .expect("recorder");
    env.set_pauses(&PauseSpec::random(0x57, 40));
    src.set_gaps(&PauseSpec::random(0x9a, 20))
        .expect("tkeep present");
    env.reset(clk, 4).expect("reset");
    let frames: Vec<AxisFrame> = (0..6u64)
        .map(|i| AxisFrame {
            data: pattern(1 + 37 * i as usize * i as usize, i as u8),
            tid: i * 17 % 256,
            tdest: i % 16,
            tuser: i % 4,
        })
        .collect();
    for f in &frames {
        src.start_send(f.clone()).expect("queued");
    }
    src.wait_idle(&mut env).expect("sent");
    let mut got = Vec::new();
    for _ in 0..frames.len() {
        got.push(sink.recv(&mut env).expect("frame"));
    }
    assert_eq!(got, frames);
    let seen = rec.frames();
    assert_eq!(
        seen.iter().map(|r| r.frame.clone()).collect::<Vec<_>>(),
        frames
    );
    for w in seen.windows(2) {
        assert!(
            w[0].start_ps <= w[0].end_ps && w[0].end_ps < w[1].start_ps,
            "{:?}",
            (w[0].start_ps, w[0].end_ps, w[1].start_ps)
        );
        assert_eq!(
            w[0].end_ps - w[0].start_ps,
            (w[0].end_cycle - w[0].start_cycle) * 4_000
        );
    }
    assert!(env.violations().is_empty());
}

fn faulty(
    f: StreamFaults,
) -> (
    axi_bfm::Env,
    card_sim::ClockId,
    axi_bfm::AxisSource,
    axi_bfm::AxisSink,
) {
    let (env, clk, src, sink) = axis();
    src.set_faults(f);
    (env, clk, src, sink)
}

#[test]
fn valid_low_in_reset() {
    let (mut env, clk, _src, _sink) = faulty(StreamFaults {
        valid_in_reset: true,
        ..Default::default()
    });
    expect_rule(env.reset(clk, 4), Rule::ValidLowInReset, "s_axis");
}

#[test]
fn valid_low_after_reset() {
    let (mut env, clk, src, _sink) = faulty(StreamFaults {
        valid_right_after_reset: true,
        ..Default::default()
    });
    src.start_send(AxisFrame::new(vec![1; 10])).expect("queued");
    env.reset(clk, 4).expect("reset");
    expect_rule(env.run(clk, 3), Rule::ValidLowAfterReset, "s_axis");
}

fn stalled(f: StreamFaults) -> (axi_bfm::Env, card_sim::ClockId) {
    let (mut env, clk, src, sink) = faulty(f);
    sink.set_pauses(&PauseSpec::Always);
    env.reset(clk, 4).expect("reset");
    // Single-beat frames of 10 bytes leave null lanes in every beat, which the null-byte
    // fault needs whichever beat ends up stalled.
    for _ in 0..8 {
        src.start_send(AxisFrame::new(pattern(10, 1)))
            .expect("queued");
    }
    (env, clk)
}

#[test]
fn valid_held_until_handshake() {
    let (mut env, clk) = stalled(StreamFaults {
        drop_valid_on_stall: true,
        ..Default::default()
    });
    expect_rule(env.run(clk, 50), Rule::ValidHeldUntilHandshake, "s_axis");
}

#[test]
fn payload_stable_while_stalled() {
    let (mut env, clk) = stalled(StreamFaults {
        change_payload_on_stall: true,
        ..Default::default()
    });
    let text = expect_rule(env.run(clk, 50), Rule::PayloadStableWhileStalled, "s_axis");
    assert!(text.contains("s_axis_tdata@stall"), "{text}");
}

#[test]
fn null_bytes_may_change_under_a_stall() {
    let (mut env, clk) = stalled(StreamFaults {
        change_null_byte_on_stall: true,
        ..Default::default()
    });
    env.run(clk, 50)
        .expect("bytes that TKEEP leaves out carry nothing");
}

fn packed(src: &axi_bfm::AxisSource) {
    let mon = src.monitor().expect("default monitor");
    mon.set_config(AxisMonitorConfig {
        tkeep_packed: true,
        ..mon.config()
    });
}

#[test]
fn tkeep_full_except_last() {
    let (mut env, clk, src, _sink) = axis();
    packed(&src);
    src.set_gaps(&PauseSpec::pattern("0000000000001"))
        .expect("gaps");
    env.reset(clk, 4).expect("reset");
    expect_rule(
        src.send(&mut env, AxisFrame::new(pattern(200, 2))),
        Rule::TkeepFullExceptLast,
        "s_axis",
    );
}

#[test]
fn tkeep_last_packed() {
    let (mut env, clk, src, _sink) = faulty(StreamFaults {
        misalign_last: true,
        ..Default::default()
    });
    packed(&src);
    env.reset(clk, 4).expect("reset");
    // Full beats are fine; the 8-byte tail starting at lane 1 is not.
    expect_rule(
        src.send(&mut env, AxisFrame::new(pattern(136, 2))),
        Rule::TkeepLastPacked,
        "s_axis",
    );
}

#[test]
fn xdma_rule_accepts_packed_frames() {
    let (mut env, clk, src, sink) = axis();
    packed(&src);
    env.reset(clk, 4).expect("reset");
    src.send(&mut env, AxisFrame::new(pattern(136, 2)))
        .expect("legal under the XDMA rule");
    assert_eq!(sink.recv(&mut env).expect("frame").data, pattern(136, 2));
}

#[test]
fn frame_length_limits() {
    let (mut env, clk, src, _sink) = axis();
    let mon = src.monitor().expect("default monitor");
    mon.set_config(AxisMonitorConfig {
        min_frame: 16,
        max_frame: 100,
        ..mon.config()
    });
    env.reset(clk, 4).expect("reset");
    src.send(&mut env, AxisFrame::new(pattern(100, 1)))
        .expect("at the limit");
    let text = expect_rule(
        src.send(&mut env, AxisFrame::new(pattern(101, 1))),
        Rule::FrameLengthLimits,
        "s_axis",
    );
    assert!(text.contains("101 bytes"), "{text}");
    let text = expect_rule(
        src.send(&mut env, AxisFrame::new(pattern(15, 1))),
        Rule::FrameLengthLimits,
        "s_axis",
    );
    assert!(text.contains("at least 16"), "{text}");
}

#[test]
fn stall_bound() {
    let (mut env, clk, src, sink) = axis();
    for mon in [src.monitor(), sink.monitor()].into_iter().flatten() {
        mon.set_config(AxisMonitorConfig {
            stall_bound: 30,
            ..mon.config()
        });
    }
    sink.set_pauses(&PauseSpec::Always);
    env.reset(clk, 4).expect("reset");
    src.start_send(AxisFrame::new(vec![1; 64])).expect("queued");
    expect_rule(env.run(clk, 60), Rule::StallBound, "m_axis");
}

#[test]
fn credit_releases_beats_as_it_grows_and_a_disabled_sink_holds_tready_low() {
    let (mut env, clk, src, sink) = axis();
    env.reset(clk, 4).expect("reset");
    let bus = 64; // bytes per beat of the 512-bit pass-through
    let data = pattern(5 * bus + 3, 9);
    sink.set_enabled(false);
    src.set_credit(Some(bus + 10));
    src.start_send(AxisFrame::new(data.clone()))
        .expect("queued");
    env.run(clk, 20).expect("run");
    // Nothing may complete: the sink is off, and only one whole beat is within the credit.
    assert_eq!(sink.pending(), 0);
    assert!(!src.idle());
    sink.set_enabled(true);
    env.run(clk, 20).expect("run");
    assert_eq!(
        sink.pending(),
        0,
        "the frame's second beat is beyond the credit"
    );
    src.set_credit(Some(data.len() - 1));
    env.run(clk, 20).expect("run");
    assert_eq!(sink.pending(), 0, "the last beat needs the last byte");
    src.set_credit(Some(data.len()));
    let got = sink.recv(&mut env).expect("frame");
    assert_eq!(got.data, data);
    assert!(env.violations().is_empty());
}
