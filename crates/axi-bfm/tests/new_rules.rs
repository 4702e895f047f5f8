//! Fault-injection tests for the rules and harness behaviour added for third-party RTL: every
//! request answered (checked at the end of a test, with addresses), in-order response IDs,
//! the AXI-Lite monitor's outstanding list, monitors switched off and on while attached,
//! binding by any case and by an explicit map, progress-bound timeouts named by their clock.

mod common;

use axi_bfm::{
    AxiMonitorConfig, AxiSlaveConfig, BfmError, Channel, LiteFaults, PauseSpec, Rule, SlaveFaults,
};
use common::{axi, axi_slave_faults, axil, expect_rule};

/// A slave that answers writes after 30 cycles, and two at once in the other order.
fn swapping_slave() -> (
    axi_bfm::Env,
    card_sim::ClockId,
    axi_bfm::AxiMaster,
    axi_bfm::AxiSlave,
) {
    let (env, clk, m, s) = axi_slave_faults(SlaveFaults {
        swap_b: true,
        ..Default::default()
    });
    s.set_config(AxiSlaveConfig {
        write_latency: 30,
        ..AxiSlaveConfig::default()
    });
    (env, clk, m, s)
}

#[test]
fn a_lost_response_is_listed_with_its_address_at_the_end() {
    let (mut env, clk, m, s) = axi_slave_faults(SlaveFaults {
        hang: true,
        ..Default::default()
    });
    env.reset(clk, 4).expect("reset");
    m.start_write(3, 0x1230, &[7; 16]).expect("queued");
    env.run(clk, 50).expect("no rule broken yet");
    let mon = s.monitor().expect("monitor");
    let left = mon.unanswered();
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!((left[0].0, left[0].1, left[0].2), (Channel::Aw, 3, 0x1230));
    let text = expect_rule(env.finish(), Rule::EveryRequestAnswered, "s_axi");
    assert!(
        text.contains("write of ID 3 at 0x1230 accepted at cycle"),
        "{text}"
    );
    assert!(env.violations().len() >= 2, "both monitors report it");
}

#[test]
fn a_clean_run_finishes_clean() {
    let (mut env, clk, m, _s) = axi();
    env.reset(clk, 4).expect("reset");
    m.write(&mut env, 0x40, &[1, 2, 3]).expect("write");
    env.finish().expect("nothing owed");
}

#[test]
fn an_in_order_slave_answering_another_id_first_is_caught() {
    let (mut env, clk, m, s) = swapping_slave();
    let mon = s.monitor().expect("monitor");
    mon.set_config(AxiMonitorConfig {
        in_order: true,
        ..mon.config()
    });
    env.reset(clk, 4).expect("reset");
    let a = m.start_write(1, 0x100, &[1; 16]).expect("queued");
    let b = m.start_write(2, 0x200, &[2; 16]).expect("queued");
    let r = m.wait(&mut env, a).and_then(|()| m.wait(&mut env, b));
    let text = expect_rule(r, Rule::ResponseIdOfOldest, "m_axi");
    assert!(
        text.contains("oldest outstanding request is ID 1 at 0x100"),
        "{text}"
    );
}

#[test]
fn the_same_swap_is_legal_for_a_slave_not_declared_in_order() {
    let (mut env, clk, m, _s) = swapping_slave();
    env.reset(clk, 4).expect("reset");
    let a = m.start_write(1, 0x100, &[1; 16]).expect("queued");
    let b = m.start_write(2, 0x200, &[2; 16]).expect("queued");
    m.wait(&mut env, a).expect("a");
    m.wait(&mut env, b).expect("b");
}

#[test]
fn the_lite_monitor_tracks_what_is_outstanding() {
    let (mut env, clk, m, s) = axil();
    s.set_faults(LiteFaults {
        hang: true,
        ..Default::default()
    });
    env.reset(clk, 4).expect("reset");
    m.start_read(0x24).expect("queued");
    env.run(clk, 30).expect("runs");
    let mon = m.monitor().expect("monitor");
    assert_eq!(mon.outstanding(), 1);
    assert_eq!(mon.unanswered()[0].1, 0x24);
    let text = expect_rule(env.finish(), Rule::EveryRequestAnswered, "s_axil");
    assert!(text.contains("read at 0x24"), "{text}");
}

#[test]
fn set_monitors_reaches_monitors_already_attached() {
    let (mut env, clk, m, _s) = axi_slave_faults(SlaveFaults {
        exokay_always: true,
        ..Default::default()
    });
    env.reset(clk, 4).expect("reset");
    env.set_monitors(false);
    // EXOKAY for a plain write breaks a rule, but the monitors are off.
    let t = m.start_write(0, 0x0, &[1; 4]).expect("queued");
    m.wait(&mut env, t).expect("no monitor complains");
    assert!(env.violations().is_empty());
    env.set_monitors(true);
    expect_rule(
        m.write(&mut env, 0x0, &[1; 4]),
        Rule::ExokayOnlyForExclusive,
        "m_axi",
    );
}

#[test]
fn ports_bind_in_any_case_and_through_a_map() {
    let (mut env, clk) = common::env_of(card_sim::Top::AxiPassthrough);
    // Upper-case prefix on lower-case ports.
    let m = axi_bfm::AxiMaster::attach(&mut env, "S_AXI", clk).expect("any case binds");
    let _s = axi_bfm::AxiSlave::attach(&mut env, "m_axi", clk).expect("slave");
    env.reset(clk, 4).expect("reset");
    m.write(&mut env, 0x10, &[9; 8]).expect("write");
    assert_eq!(m.read(&mut env, 0x10, 8).expect("read"), vec![9; 8]);

    // A name no rule finds: the error names what was tried and the near matches.
    let (mut env, clk) = common::env_of(card_sim::Top::AxiPassthrough);
    let err = axi_bfm::AxiMaster::attach(&mut env, "s_ax", clk).expect_err("no such bus");
    let text = err.to_string();
    assert!(matches!(err, BfmError::Bind { .. }), "{text}");
    assert!(text.contains("s_axi_wdata"), "near matches listed: {text}");
    assert!(text.contains("map_signal"), "the way out is named: {text}");

    // An explicit map for one signal of a bus; the rest binds by the prefix.
    let (mut env, clk) = common::env_of(card_sim::Top::AxiPassthrough);
    env.map_signal("bus", "wdata", "s_axi_wdata");
    let err = axi_bfm::AxiMaster::attach(&mut env, "bus", clk).expect_err("only wdata mapped");
    assert!(err.to_string().contains("`awaddr`"), "{err}");
}

#[test]
fn timeouts_bound_stalls_not_transfers_and_name_the_clock() {
    let (mut env, clk, m, _s) = axi();
    let mut cfg = m.config();
    // Far fewer cycles than the transfer takes, but more than any stall in it.
    cfg.timeout_cycles = 500;
    m.set_config(cfg);
    env.reset(clk, 4).expect("reset");
    let data = common::pattern(64 * 1024, 3);
    m.write(&mut env, 0, &data)
        .expect("a long write only needs progress");

    let (mut env, clk, m, s) = axi();
    s.set_pauses(&PauseSpec::Always);
    let mut cfg = m.config();
    cfg.timeout_cycles = 200;
    m.set_config(cfg);
    for mon in [m.monitor(), s.monitor()].into_iter().flatten() {
        mon.set_config(AxiMonitorConfig {
            stall_bound: 0,
            ..mon.config()
        });
    }
    env.reset(clk, 4).expect("reset");
    let err = m.write(&mut env, 0, &[1; 16]).expect_err("stalled forever");
    let text = err.to_string();
    assert!(matches!(err, BfmError::Timeout { .. }), "{text}");
    assert!(text.contains("clock `clk`"), "{text}");
    assert!(text.contains("200 cycles"), "{text}");
}
