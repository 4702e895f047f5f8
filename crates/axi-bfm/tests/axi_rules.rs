//! One fault-injection test per AXI4 rule: a bus model breaks the protocol on purpose and the
//! monitor must report exactly that rule, on the bus where it happened.

mod common;

use axi_bfm::{
    AxiMonitorConfig, AxiSlaveConfig, Burst, Channel, MasterFaults, PauseSpec, Rule, SlaveFaults,
};
use common::{
    axi, axi_master_faults as master_fault, axi_slave_faults as slave_fault, expect_rule,
};

/// Changes the bounds of both monitors, the master's and the slave's.
fn bound_monitors(
    m: &axi_bfm::AxiMaster,
    s: &axi_bfm::AxiSlave,
    bound: impl Fn(&mut AxiMonitorConfig),
) {
    for mon in [m.monitor(), s.monitor()].into_iter().flatten() {
        let mut cfg = mon.config();
        bound(&mut cfg);
        mon.set_config(cfg);
    }
}

/// A single-beat INCR burst of full 16-byte beats at 0x100, ID 0: each raw-burst test
/// below changes the fields its rule is about.
const BURST: Burst = Burst {
    id: 0,
    addr: 0x100,
    len: 0,
    size: 4,
    burst: 1,
    lock: false,
};

#[test]
fn valid_low_in_reset() {
    let (mut env, clk, _m, _s) = master_fault(MasterFaults {
        valid_in_reset: true,
        ..Default::default()
    });
    let text = expect_rule(env.reset(clk, 4), Rule::ValidLowInReset, "s_axi");
    assert!(text.contains("channel AW"), "{text}");
}

#[test]
fn valid_low_after_reset() {
    let (mut env, clk, m, _s) = master_fault(MasterFaults {
        valid_right_after_reset: true,
        ..Default::default()
    });
    m.start_write(0, 0x100, &[1; 16]).expect("queued");
    env.reset(clk, 4).expect("reset itself is clean");
    expect_rule(env.run(clk, 3), Rule::ValidLowAfterReset, "s_axi");
}

/// Backpressure that never lets AW through, so the master's AW stalls at `s_axi` once the
/// pass-through's register slice is full.
fn stalled(f: MasterFaults) -> (axi_bfm::Env, card_sim::ClockId, axi_bfm::AxiMaster) {
    let (mut env, clk, m, s) = master_fault(f);
    s.set_pauses(&PauseSpec::Always);
    env.reset(clk, 4).expect("reset");
    for i in 0..4 {
        m.start_write(0, 0x1000 * i, &[7; 16]).expect("queued");
    }
    (env, clk, m)
}

#[test]
fn valid_held_until_handshake() {
    let (mut env, clk, _m) = stalled(MasterFaults {
        drop_valid_on_stall: true,
        ..Default::default()
    });
    let r = env.run(clk, 50);
    let v = r.as_ref().err().and_then(|e| e.violation()).cloned();
    expect_rule(r, Rule::ValidHeldUntilHandshake, "s_axi");
    assert_eq!(v.map(|v| v.channel), Some(Channel::Aw));
}

#[test]
fn payload_stable_while_stalled() {
    let (mut env, clk, _m) = stalled(MasterFaults {
        change_payload_on_stall: true,
        ..Default::default()
    });
    let text = expect_rule(env.run(clk, 50), Rule::PayloadStableWhileStalled, "s_axi");
    assert!(
        text.contains("s_axi_awaddr@stall"),
        "names the signal that moved: {text}"
    );
}

#[test]
fn wlast_on_last_beat() {
    let (mut env, clk, m, _s) = master_fault(MasterFaults {
        wlast_early: true,
        ..Default::default()
    });
    env.reset(clk, 4).expect("reset");
    let text = expect_rule(
        m.write(&mut env, 0x0, &[1; 64]),
        Rule::WlastOnLastBeat,
        "s_axi",
    );
    assert!(text.contains("beat 3 of a 4-beat burst"), "{text}");
}

#[test]
fn rlast_on_last_beat() {
    let (mut env, clk, m, _s) = slave_fault(SlaveFaults {
        rlast_early: true,
        ..Default::default()
    });
    env.reset(clk, 4).expect("reset");
    expect_rule(m.read(&mut env, 0x0, 64), Rule::RlastOnLastBeat, "m_axi");
}

fn raw(b: Burst, write: bool, rule: Rule) {
    let (mut env, clk, m, _s) = axi();
    env.reset(clk, 4).expect("reset");
    let t = if write {
        m.start_write_burst(b, &[1; 64]).expect("queued")
    } else {
        m.start_read_burst(b).expect("queued")
    };
    let text = expect_rule(m.wait(&mut env, t), rule, "s_axi");
    assert!(
        text.contains(if write { "channel AW" } else { "channel AR" }),
        "{text}"
    );
}

#[test]
fn no_4k_crossing() {
    raw(
        Burst {
            addr: 0xff0,
            len: 1,
            ..BURST
        },
        true,
        Rule::No4kCrossing,
    );
}

#[test]
fn len_legal_for_burst() {
    raw(
        Burst {
            len: 2,
            burst: 2,
            ..BURST
        },
        false,
        Rule::LenLegalForBurst,
    );
}

#[test]
fn burst_type_not_reserved() {
    raw(
        Burst { burst: 3, ..BURST },
        false,
        Rule::BurstTypeNotReserved,
    );
}

#[test]
fn size_within_bus_width() {
    raw(Burst { size: 5, ..BURST }, true, Rule::SizeWithinBusWidth);
}

#[test]
fn no_b_without_request() {
    let (mut env, clk, _m, _s) = slave_fault(SlaveFaults {
        spurious_b: true,
        ..Default::default()
    });
    env.reset(clk, 4).expect("reset");
    expect_rule(env.run(clk, 10), Rule::NoBWithoutRequest, "m_axi");
}

#[test]
fn no_r_without_request() {
    let (mut env, clk, _m, _s) = slave_fault(SlaveFaults {
        spurious_r: true,
        ..Default::default()
    });
    env.reset(clk, 4).expect("reset");
    expect_rule(env.run(clk, 10), Rule::NoRWithoutRequest, "m_axi");
}

#[test]
fn responses_in_order_per_id() {
    let (mut env, clk, m, s) = slave_fault(SlaveFaults {
        reorder_reads: true,
        ..Default::default()
    });
    s.set_config(AxiSlaveConfig {
        read_latency: 10,
        ..AxiSlaveConfig::default()
    });
    env.reset(clk, 4).expect("reset");
    m.start_read(1, 0x0, 16).expect("one beat");
    let t = m.start_read(1, 0x100, 64).expect("four beats");
    expect_rule(m.wait(&mut env, t), Rule::ResponsesInOrderPerId, "m_axi");
}

#[test]
fn exokay_only_for_exclusive() {
    let (mut env, clk, m, _s) = slave_fault(SlaveFaults {
        exokay_always: true,
        ..Default::default()
    });
    env.reset(clk, 4).expect("reset");
    let text = expect_rule(
        m.write(&mut env, 0x0, &[1; 4]),
        Rule::ExokayOnlyForExclusive,
        "m_axi",
    );
    assert!(text.contains("bresp=0x1"), "{text}");
}

#[test]
fn stall_bound() {
    let (mut env, clk, m, s) = axi();
    bound_monitors(&m, &s, |c| c.stall_bound = 40);
    s.set_pauses(&PauseSpec::Always);
    env.reset(clk, 4).expect("reset");
    let text = expect_rule(m.write(&mut env, 0x0, &[1; 4]), Rule::StallBound, "m_axi");
    assert!(text.contains("41 cycles"), "{text}");
}

#[test]
fn response_latency_bound() {
    let (mut env, clk, m, s) = slave_fault(SlaveFaults {
        hang: true,
        ..Default::default()
    });
    bound_monitors(&m, &s, |c| c.latency_bound = 100);
    env.reset(clk, 4).expect("reset");
    // The request reaches s_axi first, so its monitor's clock runs out first.
    expect_rule(
        m.write(&mut env, 0x0, &[1; 4]),
        Rule::ResponseLatencyBound,
        "s_axi",
    );
}

#[test]
fn every_rule_has_a_name_and_every_axi_rule_a_test_above() {
    // The stream-only rules are proven in axis.rs; the rest here. This list must follow the
    // rule table, so a new rule without a test shows up as a failure.
    let here = [
        "valid_low_in_reset",
        "valid_low_after_reset",
        "valid_held_until_handshake",
        "payload_stable_while_stalled",
        "wlast_on_last_beat",
        "rlast_on_last_beat",
        "no_4k_crossing",
        "len_legal_for_burst",
        "burst_type_not_reserved",
        "size_within_bus_width",
        "no_b_without_request",
        "no_r_without_request",
        "responses_in_order_per_id",
        "exokay_only_for_exclusive",
        "stall_bound",
        "response_latency_bound",
    ];
    let stream = [
        "tkeep_full_except_last",
        "tkeep_last_packed",
        "frame_length_limits",
    ];
    // The rules added for third-party RTL have their fault-injection tests in new_rules.rs.
    let newer = [
        ("every_request_answered", "Rule::EveryRequestAnswered"),
        ("response_id_of_oldest", "Rule::ResponseIdOfOldest"),
    ];
    let all: Vec<&str> = Rule::ALL.iter().map(|r| r.name()).collect();
    let covered: Vec<&str> = here
        .iter()
        .chain(stream.iter())
        .copied()
        .chain(newer.iter().map(|(n, _)| *n))
        .collect();
    assert_eq!(all, covered);
    let newer_src = include_str!("new_rules.rs");
    for (name, variant) in newer {
        assert!(
            newer_src.contains("expect_rule(") && newer_src.contains(variant),
            "no fault-injection test for {name}"
        );
    }
    let src = include_str!("axi_rules.rs");
    for name in here {
        assert!(
            src.contains(&format!("fn {name}()")),
            "no test named {name}"
        );
    }
}
