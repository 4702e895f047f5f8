//! The randomizing slaves: each choice happens, stays legal (the monitors on both sides of the
//! pass-through stay silent), and does to memory what the protocol says; and master fuzzing
//! passes a correct master and catches, shrinks and replays a wrong one.

mod common;

use axi_bfm::burst::{Burst, INCR};
use axi_bfm::fuzz::{check_axi_master, check_axil_master, replay_master, AxiOp, MasterFuzz};
use axi_bfm::monitor::{Event, Pace, Situation};
use axi_bfm::random_slave::{ErrorWindow, ReqChoice, SlaveChoices, SlaveProfile};
use axi_bfm::{Channel, Resp};
use common::master::{axi_work, axil_work, reference_axi, reference_axil, run_axi, run_axil};

fn ev(e: Event) -> Situation {
    Situation::Event(e)
}

fn read(id: u32, addr: u64, beats: u32) -> AxiOp {
    AxiOp::Read {
        burst: Burst::incr(id, addr, 4, beats),
    }
}

fn write(id: u32, addr: u64, data: &[u8]) -> AxiOp {
    AxiOp::Write {
        burst: Burst::incr(id, addr, 4, (data.len() / 16) as u32),
        data: data.to_vec(),
        strobes: vec![true; data.len()],
    }
}

/// Runs `ops` against `choices` and checks the outcome against the reference; returns how
/// often the slave's monitor saw `s`.
#[track_caller]
fn count(ops: Vec<AxiOp>, choices: SlaveChoices, s: Situation) -> u64 {
    let mut run = run_axi(&ops, &choices).unwrap_or_else(|e| panic!("{e}"));
    run.env.finish().unwrap_or_else(|e| panic!("{e}"));
    let expected = reference_axi(&ops, &run.slave.log());
    assert_eq!(run.reported, expected.reported);
    let mem = run.slave.mem();
    let (addr, want) = &expected.memory[0];
    assert_eq!(&mem.borrow().read_vec(*addr, want.len()), want);
    run.slave
        .monitor()
        .expect("monitors are on")
        .coverage()
        .count(s)
}

fn with(writes: Vec<ReqChoice>, reads: Vec<ReqChoice>) -> SlaveChoices {
    SlaveChoices {
        writes,
        reads,
        ..SlaveChoices::polite()
    }
}

#[test]
fn stalls_hold_ready_low_while_valid_waits() {
    let stall = ReqChoice {
        stall: 6,
        ..ReqChoice::default()
    };
    let ops = vec![write(0, 0x1000, &[7; 32]), read(0, 0x1000, 2)];
    let polite = count(
        ops.clone(),
        SlaveChoices::polite(),
        Situation::Handshake(Channel::Ar, Pace::AfterStall),
    );
    assert_eq!(polite, 0);
    let stalled = with(vec![stall], vec![stall]);
    for ch in [Channel::Aw, Channel::Ar] {
        let n = count(
            ops.clone(),
            stalled.clone(),
            Situation::Handshake(ch, Pace::AfterStall),
        );
        assert_eq!(n, 1, "{ch}");
    }
}

#[test]
fn responses_of_other_ids_pass_a_slow_one_and_stay_in_order_within_an_id() {
    let slow = ReqChoice {
        latency: 20,
        rank: 3,
        ..ReqChoice::default()
    };
    // The first read (ID 0) is slow; the second (ID 1) overtakes it; the third (ID 0 again)
    // must still wait for the first.
    let ops = vec![read(0, 0x1000, 2), read(1, 0x1100, 2), read(0, 0x1200, 1)];
    let n = count(ops, with(vec![], vec![slow]), ev(Event::OutOfOrderResponse));
    assert!(n >= 1, "{n}");
    let wops = vec![
        write(0, 0x1000, &[1; 16]),
        write(1, 0x1100, &[2; 16]),
        write(0, 0x1200, &[3; 16]),
    ];
    let n = count(
        wops,
        with(vec![slow], vec![]),
        ev(Event::OutOfOrderResponse),
    );
    assert!(n >= 1, "{n}");
}

#[test]
fn read_data_of_two_ids_interleaves_beat_by_beat() {
    let mix = ReqChoice {
        interleave: true,
        gap: 1,
        ..ReqChoice::default()
    };
    let ops = vec![
        write(0, 0x1000, &common::pattern(128, 1)),
        write(1, 0x1100, &common::pattern(128, 2)),
        read(0, 0x1000, 8),
        read(1, 0x1100, 8),
    ];
    let n = count(
        ops.clone(),
        with(vec![], vec![mix, mix]),
        ev(Event::ReadDataInterleaved),
    );
    assert!(n >= 1, "{n}");
    assert_eq!(
        count(ops, SlaveChoices::polite(), ev(Event::ReadDataInterleaved)),
        0
    );
}

#[test]
fn write_data_may_come_in_before_its_address() {
    let first = ReqChoice {
        data_first: true,
        stall: 8,
        ..ReqChoice::default()
    };
    let ops = vec![write(0, 0x1000, &[9; 32]), read(0, 0x1000, 2)];
    assert!(count(ops, with(vec![first], vec![]), ev(Event::WriteDataFirst)) >= 1);
}

#[test]
fn errors_by_choice_and_by_window_change_nothing() {
    let slverr = ReqChoice {
        error: Some(Resp::SlvErr),
        ..ReqChoice::default()
    };
    let ops = vec![
        write(0, 0x1000, &[5; 16]),
        write(0, 0x1000, &[6; 16]),
        read(0, 0x1000, 1),
        read(0, 0x1300, 1),
    ];
    let choices = SlaveChoices {
        error_window: Some(ErrorWindow {
            lo: 0x1300,
            hi: 0x1310,
            resp: Resp::DecErr,
        }),
        ..with(vec![ReqChoice::default(), slverr], vec![])
    };
    let mut run = run_axi(&ops, &choices).unwrap_or_else(|e| panic!("{e}"));
    run.env.finish().unwrap_or_else(|e| panic!("{e}"));
    let r = &run.reported;
    assert_eq!(r[1].0, Resp::SlvErr);
    assert_eq!(
        r[2],
        (Resp::Okay, vec![5; 16]),
        "the errored write changed nothing"
    );
    assert_eq!(r[3].0, Resp::DecErr);
    let cov = run.slave.monitor().expect("monitor").coverage();
    assert_eq!(cov.count(ev(Event::ErrorResponse)), 2);
}

#[test]
fn an_exclusive_pair_gets_exokay_and_a_write_between_makes_it_fail() {
    let mut b = Burst::incr(2, 0x1000, 4, 2);
    b.lock = true;
    let pair = |data: u8| {
        vec![
            AxiOp::Read { burst: b },
            AxiOp::Write {
                burst: b,
                data: vec![data; 32],
                strobes: vec![true; 32],
            },
        ]
    };
    let mut ops = pair(1);
    let mut run = run_axi(&ops, &SlaveChoices::polite()).unwrap_or_else(|e| panic!("{e}"));
    run.env.finish().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(run.reported[0].0, Resp::ExOkay);
    assert_eq!(run.reported[1].0, Resp::ExOkay);
    assert_eq!(run.slave.mem().borrow().read_vec(0x1000, 32), [1; 32]);
    // Another ID writes one byte of the location between the exclusive read and write.
    ops.insert(1, write(3, 0x1010, &[4; 16]));
    let mut run = run_axi(&ops, &SlaveChoices::polite()).unwrap_or_else(|e| panic!("{e}"));
    run.env.finish().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(run.reported[2].0, Resp::Okay, "the exclusive write fails");
    let mem = run.slave.mem().borrow().read_vec(0x1000, 32);
    assert_eq!(&mem[..16], &[0; 16], "and changes nothing");
    assert_eq!(&mem[16..], &[4; 16]);
    // A slave without exclusive monitoring answers OKAY and writes.
    let plain = SlaveChoices {
        exclusive: false,
        ..SlaveChoices::polite()
    };
    let mut run = run_axi(&pair(3), &plain).unwrap_or_else(|e| panic!("{e}"));
    run.env.finish().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(run.reported[0].0, Resp::Okay);
    assert_eq!(run.reported[1].0, Resp::Okay);
    assert_eq!(run.slave.mem().borrow().read_vec(0x1000, 32), [3; 32]);
}

#[test]
fn master_fuzzing_passes_a_correct_master_against_every_choice() {
    let cfg = MasterFuzz {
        cases: 16,
        ..MasterFuzz::default()
    };
    let report = check_axi_master(&cfg, axi_work(), run_axi, reference_axi)
        .unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(report.cases, 16);
    for e in [
        Event::OutOfOrderResponse,
        Event::ErrorResponse,
        Event::Exclusive,
        Event::LongBurst,
    ] {
        assert!(report.coverage.count(ev(e)) > 0, "{e:?}\n{report}");
    }
    let bus = common::axil().2.bus_bytes();
    let report = check_axil_master(&cfg, axil_work(bus), run_axil, move |w, l| {
        reference_axil(bus, w, l)
    })
    .unwrap_or_else(|f| panic!("{f}"));
    assert!(
        report.coverage.count(ev(Event::ErrorResponse)) > 0,
        "{report}"
    );
}

/// A master that drops error responses (it reports OKAY for every access): the defaults
/// catch it, shrink the slave's choices to one error, and the printed case replays.
#[test]
fn a_master_that_ignores_errors_is_caught_shrunk_and_replayed() {
    let ignoring = |w: &Vec<AxiOp>, c: &SlaveChoices| {
        let mut r = run_axi(w, c)?;
        for o in &mut r.reported {
            if !o.0.is_ok() {
                o.0 = Resp::Okay;
            }
        }
        Ok(r)
    };
    let failure = check_axi_master(&MasterFuzz::default(), axi_work(), ignoring, reference_axi)
        .expect_err("a master that ignores SLVERR and DECERR is caught");
    let text = failure.to_string();
    assert!(text.contains("replay: fuzz::replay_master"), "{text}");
    assert!(
        text.contains("Err"),
        "the shrunk case keeps one error: {text}"
    );
    assert_eq!(failure.sequence.len(), 1);
    // The polite slave never shows it the bug.
    let polite = MasterFuzz {
        slave: SlaveProfile::polite(),
        ..MasterFuzz::default()
    };
    check_axi_master(&polite, axi_work(), ignoring, reference_axi)
        .unwrap_or_else(|f| panic!("{f}"));
    // Replaying a case with one error reproduces the failure.
    let ops = vec![write(0, 0x1000, &[1; 16])];
    let choices = SlaveChoices {
        writes: vec![ReqChoice {
            error: Some(Resp::SlvErr),
            ..ReqChoice::default()
        }],
        ..SlaveChoices::polite()
    };
    assert!(replay_master(&ops, &choices, ignoring, reference_axi).is_err());
    assert!(replay_master(&ops, &choices, run_axi, reference_axi).is_ok());
}

#[test]
fn the_lite_slave_stalls_and_errs_in_order() {
    let bus = common::axil().2.bus_bytes();
    let ops = vec![
        axi_bfm::fuzz::AxilOp::Write {
            addr: 0x10,
            data: 0x1234,
            strb: 0xf,
        },
        axi_bfm::fuzz::AxilOp::Write {
            addr: 0x10,
            data: 0x9999,
            strb: 0xf,
        },
        axi_bfm::fuzz::AxilOp::Read { addr: 0x10 },
    ];
    let stall_err = ReqChoice {
        stall: 4,
        latency: 5,
        error: Some(Resp::SlvErr),
        ..ReqChoice::default()
    };
    let choices = with(vec![ReqChoice::default(), stall_err], vec![stall_err]);
    let mut run = run_axil(&ops, &choices).unwrap_or_else(|e| panic!("{e}"));
    run.env.finish().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(run.reported[1], (Resp::SlvErr, 0));
    assert_eq!(run.reported[2], (Resp::SlvErr, 0));
    assert_eq!(
        run.slave.mem().borrow().read_vec(0x10, 2),
        [0x34, 0x12],
        "unchanged"
    );
    assert_eq!(
        reference_axil(bus, &ops, &run.slave.log()).reported,
        run.reported
    );
    let cov = run.slave.monitor().expect("monitor").coverage();
    assert!(cov.count(Situation::Handshake(Channel::Aw, Pace::AfterStall)) >= 1);
    assert_eq!(cov.count(ev(Event::ErrorResponse)), 2);
}

#[test]
fn a_drawn_profile_stays_within_its_ranges() {
    use proptest::strategy::{Strategy, ValueTree};
    let p = SlaveProfile {
        stall: 2..=3,
        latency: 5..=5,
        error_rate: 0.0,
        ..SlaveProfile::default()
    };
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    for _ in 0..50 {
        let c = axi_bfm::random_slave::slave_choices(&p)
            .new_tree(&mut runner)
            .expect("draws")
            .current();
        for r in c.writes.iter().chain(&c.reads) {
            assert!((2..=3).contains(&r.stall) && r.latency == 5 && r.error.is_none());
        }
    }
    let _ = INCR;
}

#[test]
fn beat_gaps_leave_idle_cycles_between_read_beats() {
    let ops = vec![write(0, 0x1000, &[1; 128]), read(0, 0x1000, 8)];
    let idle = Situation::Handshake(Channel::R, Pace::AfterIdle);
    let polite = count(ops.clone(), SlaveChoices::polite(), idle);
    let gap = ReqChoice {
        gap: 2,
        ..ReqChoice::default()
    };
    let gapped = count(ops, with(vec![gap], vec![gap]), idle);
    // Every beat after the first now follows an idle edge.
    assert_eq!(gapped, polite + 7, "polite {polite}, gapped {gapped}");
}
