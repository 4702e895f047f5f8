//! The AXI4-Lite master and slave memory through the registered AXI4-Lite pass-through, and
//! one fault-injection test per rule that applies to AXI4-Lite.

mod common;

use axi_bfm::{
    AxiMonitorConfig, AxilMasterConfig, BfmError, Channel, LiteFaults, PauseSpec, Resp, Rule,
    DEFAULT_RESPONSE_TIMEOUT_CYCLES,
};
use common::{axil, expect_rule};

#[test]
fn words_and_strobes_with_random_backpressure() {
    let (mut env, clk, m, s) = axil();
    env.set_pauses(&PauseSpec::random(0xa11, 50));
    env.reset(clk, 4).expect("reset");
    for i in 0..16u64 {
        m.write(&mut env, 0x100 + 4 * i, 0x1000_0000 * (i % 8) + i)
            .expect("write");
    }
    for i in 0..16u64 {
        assert_eq!(
            m.read(&mut env, 0x100 + 4 * i).expect("read"),
            0x1000_0000 * (i % 8) + i
        );
    }
    m.write_strb(&mut env, 0x200, 0xaabb_ccdd, 0b1010)
        .expect("write");
    assert_eq!(s.mem().borrow().read_vec(0x200, 4), [0, 0xcc, 0, 0xaa]);
    assert!(env.violations().is_empty());
}

#[test]
fn several_accesses_in_flight_complete_in_order() {
    let (mut env, clk, m, _s) = axil();
    env.reset(clk, 4).expect("reset");
    let writes: Vec<_> = (0..8u64)
        .map(|i| m.start_write(8 * i, i * 3, 0xf).expect("queued"))
        .collect();
    let reads: Vec<_> = (0..8u64)
        .map(|i| m.start_read(8 * i).expect("queued"))
        .collect();
    let last = *reads.last().expect("eight reads");
    m.wait(&mut env, last).expect("done");
    for t in writes {
        assert_eq!(m.take(t).expect("done").1, Resp::Okay);
    }
    // Reads were issued after the writes were queued, but AXI orders nothing between the
    // write and read channels; each read returns either the old or the new value.
    for (i, t) in reads.into_iter().enumerate() {
        let (d, r) = m.take(t).expect("done");
        assert_eq!(r, Resp::Okay);
        assert!(d == 0 || d == i as u64 * 3, "read {i} returned {d}");
    }
}

#[test]
fn work_given_between_rise_and_drive_goes_out_at_that_edge() {
    // A read started after an edge's drive phase waits for the next edge's; one started
    // between `rise` and `drive` is driven at the edge it was decided on, as a registered
    // output of logic on that clock is: the same read completes exactly one cycle sooner.
    let latency = |early: bool| {
        let (mut env, clk, m, _s) = axil();
        env.reset(clk, 4).expect("reset");
        env.run(clk, 3).expect("idle cycles");
        let t = if early {
            env.rise(clk).expect("rises");
            let t = m.start_read(0x40).expect("queued");
            env.drive().expect("drives");
            t
        } else {
            env.tick(clk).expect("ticks");
            m.start_read(0x40).expect("queued")
        };
        let start = env.cycles(clk);
        while !m.is_done(t) {
            env.tick(clk).expect("ticks");
            assert!(env.cycles(clk) - start < 100, "the read never completed");
        }
        assert!(env.violations().is_empty());
        env.cycles(clk) - start
    };
    let (late, early) = (latency(false), latency(true));
    assert_eq!(early + 1, late, "early {early} cycles, late {late}");
}

fn with(
    f: LiteFaults,
) -> (
    axi_bfm::Env,
    card_sim::ClockId,
    axi_bfm::AxilMaster,
    axi_bfm::AxilSlave,
) {
    let (env, clk, m, s) = axil();
    m.set_faults(f);
    s.set_faults(f);
    (env, clk, m, s)
}

#[test]
fn valid_low_in_reset() {
    let (mut env, clk, _m, _s) = with(LiteFaults {
        valid_in_reset: true,
        ..Default::default()
    });
    expect_rule(env.reset(clk, 4), Rule::ValidLowInReset, "s_axil");
}

#[test]
fn valid_low_after_reset() {
    let (mut env, clk, m, _s) = with(LiteFaults {
        valid_right_after_reset: true,
        ..Default::default()
    });
    m.start_write(0, 1, 0xf).expect("queued");
    env.reset(clk, 4).expect("reset");
    expect_rule(env.run(clk, 3), Rule::ValidLowAfterReset, "s_axil");
}

fn stalled(f: LiteFaults) -> (axi_bfm::Env, card_sim::ClockId) {
    let (mut env, clk, m, s) = with(f);
    s.set_pauses(&PauseSpec::Always);
    env.reset(clk, 4).expect("reset");
    for i in 0..4 {
        m.start_write(4 * i, i, 0xf).expect("queued");
    }
    (env, clk)
}

#[test]
fn valid_held_until_handshake() {
    let (mut env, clk) = stalled(LiteFaults {
        drop_valid_on_stall: true,
        ..Default::default()
    });
    let r = env.run(clk, 50);
    assert_eq!(
        r.as_ref()
            .err()
            .and_then(|e| e.violation())
            .map(|v| v.channel),
        Some(Channel::Aw)
    );
    expect_rule(r, Rule::ValidHeldUntilHandshake, "s_axil");
}

#[test]
fn payload_stable_while_stalled() {
    let (mut env, clk) = stalled(LiteFaults {
        change_payload_on_stall: true,
        ..Default::default()
    });
    let text = expect_rule(env.run(clk, 50), Rule::PayloadStableWhileStalled, "s_axil");
    assert!(text.contains("s_axil_wdata@stall"), "{text}");
}

#[test]
fn no_b_without_request() {
    let (mut env, clk, _m, _s) = with(LiteFaults {
        spurious_b: true,
        ..Default::default()
    });
    env.reset(clk, 4).expect("reset");
    expect_rule(env.run(clk, 10), Rule::NoBWithoutRequest, "m_axil");
}

#[test]
fn no_r_without_request() {
    let (mut env, clk, _m, _s) = with(LiteFaults {
        spurious_r: true,
        ..Default::default()
    });
    env.reset(clk, 4).expect("reset");
    expect_rule(env.run(clk, 10), Rule::NoRWithoutRequest, "m_axil");
}

#[test]
fn read_data_at_the_edge_of_its_own_request_says_so() {
    let (mut env, clk, m, _s) = with(LiteFaults {
        r_with_request: true,
        ..Default::default()
    });
    env.reset(clk, 4).expect("reset");
    let text = expect_rule(m.read(&mut env, 0x8), Rule::NoRWithoutRequest, "m_axil");
    assert!(
        text.contains("same edge as the AR handshake"),
        "the message names the AR handshake beside it: {text}"
    );
}

#[test]
fn a_lost_response_is_reported_as_missing_and_names_the_access() {
    let (mut env, clk, m, _s) = with(LiteFaults {
        hang: true,
        ..Default::default()
    });
    env.reset(clk, 4).expect("reset");
    match m.write(&mut env, 0x24, 5) {
        Err(BfmError::MissingResponse {
            bus,
            what,
            addr,
            waited,
            ..
        }) => {
            assert_eq!((bus.as_str(), what, addr), ("s_axil", "write", 0x24));
            assert_eq!(waited, DEFAULT_RESPONSE_TIMEOUT_CYCLES + 1);
        }
        other => panic!("expected the missing write response, got {other:?}"),
    }
    // A read's too, with its own bound.
    let (mut env, clk, m, _s) = with(LiteFaults {
        hang: true,
        ..Default::default()
    });
    m.set_config(AxilMasterConfig {
        response_timeout_cycles: 50,
        ..m.config()
    });
    env.reset(clk, 4).expect("reset");
    let e = m.read(&mut env, 0x30).expect_err("no answer");
    let text = e.to_string();
    assert!(
        matches!(
            e,
            BfmError::MissingResponse {
                what: "read",
                addr: 0x30,
                waited: 51,
                ..
            }
        ),
        "{text}"
    );
    assert!(text.contains("expected and missing"), "{text}");
}

#[test]
fn exokay_only_for_exclusive() {
    let (mut env, clk, m, _s) = with(LiteFaults {
        exokay_always: true,
        ..Default::default()
    });
    env.reset(clk, 4).expect("reset");
    expect_rule(m.read(&mut env, 0), Rule::ExokayOnlyForExclusive, "m_axil");
}

#[test]
fn stall_bound() {
    let (mut env, clk, m, s) = axil();
    for mon in [m.monitor(), s.monitor()].into_iter().flatten() {
        mon.set_config(AxiMonitorConfig {
            stall_bound: 25,
            ..mon.config()
        });
    }
    s.set_pauses(&PauseSpec::Always);
    env.reset(clk, 4).expect("reset");
    expect_rule(m.read(&mut env, 0), Rule::StallBound, "m_axil");
}

#[test]
fn response_latency_bound() {
    let (mut env, clk, m, s) = with(LiteFaults {
        hang: true,
        ..Default::default()
    });
    for mon in [m.monitor(), s.monitor()].into_iter().flatten() {
        mon.set_config(AxiMonitorConfig {
            latency_bound: 60,
            ..mon.config()
        });
    }
    env.reset(clk, 4).expect("reset");
    expect_rule(m.read(&mut env, 0), Rule::ResponseLatencyBound, "s_axil");
}
