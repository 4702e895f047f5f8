//! Functional coverage of the default fuzz run of each protocol, on the RTL pass-throughs with
//! the bus models behind them: the protocol situations the monitors' rules are about that the
//! run reaches, and, named with the reason, those that this target cannot produce.
//!
//! A situation that a change of the fuzzer or the models makes reachable fails the test too:
//! then it leaves the list of the unreachable ones.

mod common;

use axi_bfm::fuzz::{
    check_axi_slave, check_axil_slave, check_axis_path, AxiFuzz, AxiTarget, AxilFuzz, AxisFuzz,
    FuzzReport,
};
use axi_bfm::monitor::{Event, Pace, Situation};
use axi_bfm::Channel;

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

#[test]
fn the_axi4_fuzz_run_reaches_what_its_rules_check() {
    let bus = common::axi().2.bus_bytes();
    // The window of addresses straddles a 4 KiB page, so INCR bursts meet its edge.
    let cfg = AxiFuzz::new(bus, 0xc00, 0x800);
    let report = check_axi_slave(&cfg, || {
        let (env, clock, master, _slave) = common::axi();
        Ok(AxiTarget { env, master, clock })
    })
    .unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(report.cases, cfg.cases);
    reaches_all_but(
        &report,
        &[
            (
                ev(Event::LongBurst),
                "the default draws at most 16 beats (AxiFuzz::max_beats)",
            ),
            (
                ev(Event::Exclusive),
                "the fuzzer draws no exclusive accesses",
            ),
            (
                ev(Event::OutOfOrderResponse),
                "the slave model answers every ID in the order it took the requests",
            ),
            (
                ev(Event::ErrorResponse),
                "the slave model answers OKAY to every access in its memory",
            ),
            (
                ev(Event::ReadDataInterleaved),
                "the slave model sends each read burst whole before the next",
            ),
        ],
    );
}

#[test]
fn the_axil_fuzz_run_reaches_what_its_rules_check() {
    let bus = common::axil().2.bus_bytes();
    let cfg = AxilFuzz::new(bus, 0, 0x100);
    let report = check_axil_slave(&cfg, || {
        let (env, _clk, master, _slave) = common::axil();
        Ok((env, master))
    })
    .unwrap_or_else(|f| panic!("{f}"));
    reaches_all_but(
        &report,
        &[(
            ev(Event::ErrorResponse),
            "the slave model answers OKAY to every access",
        )],
    );
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
