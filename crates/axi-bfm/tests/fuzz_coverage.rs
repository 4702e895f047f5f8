//! Functional coverage of the default fuzz runs of each protocol, on the RTL pass-throughs in
//! both directions: slave-side fuzzing (the fuzzer's master in front, the bus models' slave
//! behind) and master-side fuzzing (the master model's drawn work in front, a randomizing
//! slave behind). Together they reach every protocol situation the monitors' rules are about;
//! a situation that no legal pair of models can produce would be named here with its reason.
//!
//! A situation that a change of the fuzzer or the models makes reachable fails the test too:
//! then it leaves the list of the unreachable ones.

mod common;

use axi_bfm::fuzz::{
    check_axi_master, check_axi_slave, check_axil_master, check_axil_slave, check_axis_path,
    AxiFuzz, AxiTarget, AxilFuzz, AxisFuzz, FuzzReport, MasterFuzz,
};
use axi_bfm::monitor::{Event, Pace, Situation};
use axi_bfm::Channel;
use common::master::{axi_work, axil_work, reference_axi, reference_axil, run_axi, run_axil};

/// Asserts that the run reached every situation but `unreachable`, each given with why.
#[track_caller]
fn reaches_all_but(report: &FuzzReport, unreachable: &[(Situation, &str)]) {
    let missing = report.missing();
    let named: Vec<Situation> = unreachable.iter().map(|(s, _)| *s).collect();
    assert!(
        !report.situations.is_empty(),
        "the monitors listed no situations"
    );
    assert_eq!(
        missing, named,
        "reached and unreached situations differ from the named ones:\n{report}"
    );
    for (s, why) in unreachable {
        assert!(!why.is_empty(), "{s} needs its reason");
    }
}

fn ev(e: Event) -> Situation {
    Situation::Event(e)
}

fn hs(c: Channel, p: Pace) -> Situation {
    Situation::Handshake(c, p)
}

/// The slave-side run alone (the bus models' polite slave behind the pass-through) leaves out
/// what only a slave decides; the master-side run (a randomizing slave behind it) reaches it.
#[test]
fn the_axi4_fuzz_runs_reach_what_their_rules_check() {
    let bus = common::axi().2.bus_bytes();
    // The window of addresses straddles a 4 KiB page, so INCR bursts meet its edge.
    let cfg = AxiFuzz::new(bus, 0xc00, 0x800);
    let mut report = check_axi_slave(&cfg, || {
        let (env, clock, master, _slave) = common::axi();
        Ok(AxiTarget { env, master, clock })
    })
    .unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(report.cases, cfg.cases);
    let slave_side = report.missing();
    for s in [
        ev(Event::Exclusive),
        ev(Event::OutOfOrderResponse),
        ev(Event::ErrorResponse),
        ev(Event::ReadDataInterleaved),
    ] {
        assert!(
            slave_side.contains(&s),
            "the polite slave model reaches {s}"
        );
    }
    let master_side = check_axi_master(&MasterFuzz::default(), axi_work(), run_axi, reference_axi)
        .unwrap_or_else(|f| panic!("{f}"));
    report.merge(&master_side);
    reaches_all_but(&report, &[]);
}

#[test]
fn the_axil_fuzz_runs_reach_what_their_rules_check() {
    let bus = common::axil().2.bus_bytes();
    let cfg = AxilFuzz::new(bus, 0, 0x100);
    let mut report = check_axil_slave(&cfg, || {
        let (env, _clk, master, _slave) = common::axil();
        Ok((env, master))
    })
    .unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(report.missing(), [ev(Event::ErrorResponse)]);
    let master_side =
        check_axil_master(&MasterFuzz::default(), axil_work(bus), run_axil, |w, l| {
            reference_axil(bus, w, l)
        })
        .unwrap_or_else(|f| panic!("{f}"));
    report.merge(&master_side);
    reaches_all_but(&report, &[]);
}

#[test]
fn the_axis_fuzz_run_reaches_what_its_rules_check() {
    let cfg = AxisFuzz {
        tkeep_gaps: true,
        ..AxisFuzz::default()
    };
    let report = check_axis_path(&cfg, || {
        let (env, _clk, source, sink) = common::axis();
        Ok((env, source, sink))
    })
    .unwrap_or_else(|f| panic!("{f}"));
    reaches_all_but(&report, &[]);
}

/// The counts themselves, on traffic whose situations follow from arithmetic: 32 bytes at
/// 0xff0 are two INCR bursts split at the 4 KiB boundary, the first ending on the page's last
/// byte; written, then read back.
#[test]
fn the_monitor_counts_the_situations_it_saw() {
    let (mut env, _clk, m, _s) = common::axi();
    let bus = m.bus_bytes() as u64;
    assert!(bus <= 16, "0xff0 is aligned to the beat");
    m.write(&mut env, 0xff0, &[0x5a; 32]).expect("write");
    assert_eq!(m.read(&mut env, 0xff0, 32).expect("read"), [0x5a; 32]);
    let mon = m.monitor().expect("monitors are on by default");
    let cov = mon.coverage();
    assert_eq!(cov.count(ev(Event::IncrBurst)), 4, "{cov}");
    assert_eq!(cov.count(ev(Event::EndsAt4k)), 2, "{cov}");
    assert_eq!(cov.count(ev(Event::WrapBurst)), 0);
    assert_eq!(cov.count(ev(Event::Unaligned)), 0);
    // The master issues the two pieces of a transfer without waiting: the second request is
    // accepted while the first is unanswered, once for the write and once for the read.
    assert_eq!(cov.count(ev(Event::Outstanding)), 2, "{cov}");
    // Each burst has one address handshake; beats of 16 bytes at most: 32 bytes each way.
    let aw: u64 = [Pace::AfterStall, Pace::BackToBack, Pace::AfterIdle]
        .iter()
        .map(|p| cov.count(hs(Channel::Aw, *p)))
        .sum();
    assert_eq!(aw, 2);
    let w: u64 = [Pace::AfterStall, Pace::BackToBack, Pace::AfterIdle]
        .iter()
        .map(|p| cov.count(hs(Channel::W, *p)))
        .sum();
    assert_eq!(w, 32 / bus);
    assert!(mon.situations().contains(&ev(Event::ReadDataInterleaved)));
}

/// The difference the AXI-Lite fuzzer's defaults make over a polite master (one access at a
/// time, payload left alone while idle): the situations only accesses in flight reach.
#[test]
fn accesses_in_flight_reach_what_one_at_a_time_cannot() {
    let bus = common::axil().2.bus_bytes();
    let run = |cfg: &AxilFuzz| {
        check_axil_slave(cfg, || {
            let (env, _clk, master, _slave) = common::axil();
            Ok((env, master))
        })
        .unwrap_or_else(|f| panic!("{f}"))
    };
    let default = AxilFuzz::new(bus, 0, 0x100);
    let polite = run(&AxilFuzz {
        outstanding: 1,
        idle_garbage: false,
        ..default.clone()
    });
    let full = run(&default);
    let gained: Vec<Situation> = polite
        .missing()
        .into_iter()
        .filter(|s| !full.missing().contains(s))
        .collect();
    // With one access at a time, a request meets an empty pass-through register and no two
    // requests or responses come on consecutive edges; several in flight change both.
    for s in [
        ev(Event::Outstanding),
        hs(Channel::Aw, Pace::AfterStall),
        hs(Channel::Aw, Pace::BackToBack),
        hs(Channel::Ar, Pace::BackToBack),
        hs(Channel::R, Pace::BackToBack),
    ] {
        assert!(
            gained.contains(&s),
            "{s} not gained: {gained:?}\n{polite}\n{full}"
        );
    }
    assert!(
        full.missing().iter().all(|s| polite.missing().contains(s)),
        "the defaults lose nothing the polite master reaches"
    );
}
