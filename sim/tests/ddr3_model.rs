//! The DDR3 model on its own (`ddr3_model_tb`: one instance with the default DDR3-1600
//! timing, one with other timing): read latency for row hits, closed banks and bank
//! conflicts, refresh stalls, the backdoor against bus contents, and storage isolation
//! between instances and between models on different threads.

mod common;

use card_sim::{ClockId, Model, SimError, Top};
use common::{run, AxiMaster, Rng};

/// The two instances of the test top: port prefix, backdoor instance name, timing prefix.
const STD: (&str, &str, &str) = ("s0_axi", "ddr_std", "std");
const ALT: (&str, &str, &str) = ("s1_axi", "ddr_alt", "alt");

/// Row-bank-column mapping of the model's defaults: 8-byte columns, 1 K columns, 8 banks.
const BANK_SHIFT: u32 = 3 + 10;
const ROW_SHIFT: u32 = BANK_SHIFT + 3;
/// Cycles the model adds to CL + CTRL_LAT for a row hit on an idle scheduler, from the AR
/// handshake to the R handshake (ddr3_model.v documents the pipeline).
const MODEL_OVERHEAD: u64 = 2;

/// The timing one instance reports on its ports.
#[derive(Debug, Clone, Copy)]
struct Timing {
    cl: u64,
    rcd: u64,
    rp: u64,
    ras: u64,
    rfc: u64,
    refi: u64,
    ctrl: u64,
}

impl Timing {
    fn read(m: &Model, prefix: &str) -> Timing {
        let get = |name: &str| {
            let port = m.port(&format!("{prefix}_{name}")).expect("timing port");
            m.get(port)
        };
        Timing {
            cl: get("cl"),
            rcd: get("t_rcd"),
            rp: get("t_rp"),
            ras: get("t_ras"),
            rfc: get("t_rfc"),
            refi: get("t_refi"),
            ctrl: get("ctrl_lat"),
        }
    }
}

struct Bench {
    m: Model,
    clk: ClockId,
}

fn bench() -> Bench {
    let mut m = Model::new(Top::Ddr3ModelTb).expect("model");
    let clk = m.add_clock("clk", 200_000_000).expect("clock");
    common::reset(&mut m, "rst", clk, 4).expect("reset");
    Bench { m, clk }
}

fn master(b: &mut Bench, which: (&str, &str, &str), seed: u64) -> AxiMaster {
    AxiMaster::attach(&mut b.m, b.clk, which.0, true, true, seed).expect("attach")
}

/// Reads one beat at `addr` and returns the cycles from the AR handshake to the R handshake.
fn read_latency(b: &mut Bench, a: &mut AxiMaster, addr: u64) -> u64 {
    let before = a.r.len();
    a.read(0, addr, a.full_size(), 1);
    run(&mut b.m, &mut [&mut *a], 10_000, "a read beat", |_, ms| {
        ms[0].r.len() > before
    })
    .expect("read");
    let r = a.r.last().expect("beat").cycle;
    r - a.ar_cycles.last().expect("ar")
}

#[test]
fn read_latency_follows_timing_parameters() {
    for which in [STD, ALT] {
        let mut b = bench();
        let t = Timing::read(&b.m, which.2);
        let mut a = master(&mut b, which, 1);
        let row = 1u64 << ROW_SHIFT;
        let bank = 1u64 << BANK_SHIFT;
        // After reset every bank is closed: ACT, then the column command T_RCD later.
        let closed = read_latency(&mut b, &mut a, 0);
        // Same row, next column: a row hit.
        let hit = read_latency(&mut b, &mut a, 64);
        // Same bank, other row, long after the ACT: PRE, ACT, column.
        let conflict = read_latency(&mut b, &mut a, row + 128);
        // Another bank is independent: closed, not a conflict.
        let other_bank = read_latency(&mut b, &mut a, bank + 2 * row);
        assert!(
            a.ar_cycles.last().copied().unwrap_or(0) < t.refi,
            "{}: the measurements must end before the first refresh",
            which.1
        );
        assert_eq!(
            hit,
            MODEL_OVERHEAD + t.cl + t.ctrl,
            "{}: row hit latency",
            which.1
        );
        assert_eq!(closed - hit, t.rcd, "{}: closed bank costs T_RCD", which.1);
        assert_eq!(
            conflict - hit,
            t.rp + t.rcd,
            "{}: conflict costs T_RP + T_RCD",
            which.1
        );
        assert_eq!(
            other_bank - hit,
            t.rcd,
            "{}: other bank is only closed",
            which.1
        );
        println!(
            "{}: hit {hit}, closed {closed}, conflict {conflict} cycles (CL {}, T_RCD {}, T_RP {}, CTRL_LAT {})",
            which.1, t.cl, t.rcd, t.rp, t.ctrl
        );
    }
}

#[test]
fn back_to_back_conflict_waits_for_t_ras() {
    for which in [STD, ALT] {
        let mut b = bench();
        let t = Timing::read(&b.m, which.2);
        let mut a = master(&mut b, which, 2);
        // Two reads of different rows of bank 0 queued together: the second must wait until
        // the first row has been open T_RAS, then T_RP and T_RCD.
        a.read(0, 0, a.full_size(), 1);
        a.read(1, 1 << ROW_SHIFT, a.full_size(), 1);
        run(&mut b.m, &mut [&mut a], 1_000, "two beats", |_, ms| {
            ms[0].r.len() == 2
        })
        .expect("reads");
        let gap = a.r[1].cycle - a.r[0].cycle;
        assert_eq!(
            gap,
            t.ras + t.rp,
            "{}: ACT-to-ACT of one bank is T_RAS + T_RP",
            which.1
        );
        assert_eq!((a.r[0].id, a.r[1].id), (0, 1), "in order");
    }
}

#[test]
fn refresh_stalls_as_parameterised() {
    for which in [STD, ALT] {
        let mut b = bench();
        let t = Timing::read(&b.m, which.2);
        let mut a = master(&mut b, which, 3);
        // Stream 8-beat row hits through one 8 KiB row; with reads always waiting, the
        // scheduler idles one cycle between bursts, so beats arrive in runs of 8 with a
        // one-cycle hole, except where a refresh gets in the way.
        let window = 3 * t.refi + t.refi / 2;
        let bursts = window / 8 + 64;
        for i in 0..bursts {
            a.read(i & 15, (i % 16) * 512, a.full_size(), 8);
        }
        run(&mut b.m, &mut [&mut a], 100_000, "the stream", |_, ms| {
            ms[0].cycle >= window
        })
        .expect("stream");
        let gaps: Vec<(u64, u64)> =
            a.r.windows(2)
                .map(|w| (w[1].cycle, w[1].cycle - w[0].cycle))
                .collect();
        let normal = gaps.iter().map(|g| g.1).filter(|&g| g <= 2).count();
        let stalls: Vec<(u64, u64)> = gaps.iter().copied().filter(|g| g.1 > 2).collect();
        assert!(
            normal > stalls.len() * 100,
            "{}: the stream mostly flows",
            which.1
        );
        // The open row is precharged (T_RP), refreshed (T_RFC) and opened again (T_RCD).
        for &(at, gap) in &stalls {
            assert_eq!(
                gap,
                2 + t.rp + t.rfc + t.rcd,
                "{}: refresh stall at cycle {at}",
                which.1
            );
        }
        let expected = window / t.refi;
        assert_eq!(
            stalls.len() as u64,
            expected,
            "{}: one refresh per T_REFI",
            which.1
        );
        // A refresh waits for the burst in service (8 cycles at most) and the scheduler's
        // idle cycle.
        for w in stalls.windows(2) {
            let spacing = w[1].0 - w[0].0;
            assert!(
                spacing.abs_diff(t.refi) <= 9,
                "{}: refreshes {spacing} cycles apart, T_REFI is {}",
                which.1,
                t.refi
            );
        }
        println!(
            "{}: {} refresh stalls of {} cycles in {window} cycles (T_REFI {}, T_RFC {})",
            which.1,
            stalls.len(),
            stalls.first().map_or(0, |s| s.1),
            t.refi,
            t.rfc
        );
    }
}

#[test]
fn backdoor_matches_bus_contents() {
    let mut b = bench();
    let mut a = master(&mut b, STD, 4);
    let mut rng = Rng::new(44);
    let bytes = a.bytes;
    // Bus writes with random strobes over a preloaded pattern; the backdoor sees exactly the
    // strobed bytes changed.
    let base = 0x0123_4000u64;
    let pre = rng.bytes(4 * bytes);
    b.m.ddr_write_in(STD.1, base, &pre).expect("preload");
    let beats: Vec<(Vec<u8>, u64)> = (0..4).map(|_| (rng.bytes(bytes), rng.next_u64())).collect();
    let mut expect = pre.clone();
    common::apply_write(&mut expect, base, base, a.full_size(), bytes, &beats);
    a.write(3, base, a.full_size(), beats);
    run(&mut b.m, &mut [&mut a], 1_000, "write response", |_, ms| {
        ms[0].b.len() == 1
    })
    .expect("write");
    assert_eq!((a.b[0].id, a.b[0].resp), (3, 0));
    let mut got = vec![0u8; expect.len()];
    b.m.ddr_read_in(STD.1, base, &mut got)
        .expect("backdoor read");
    assert_eq!(got, expect, "backdoor sees the bus write");

    // Backdoor preload at the very top of the 2 GiB space, read over the bus.
    let size = b.m.ddr_size_in(STD.1).expect("size");
    assert_eq!(size, 1 << 31);
    let top = size - 2 * bytes as u64;
    let data = rng.bytes(2 * bytes);
    b.m.ddr_write_in(STD.1, top, &data).expect("preload top");
    a.read(5, top, a.full_size(), 2);
    run(&mut b.m, &mut [&mut a], 1_000, "read", |_, ms| {
        ms[0].r.len() == 2
    })
    .expect("read");
    let bus: Vec<u8> = a.r.iter().flat_map(|r| r.data.clone()).collect();
    assert_eq!(bus, data, "bus reads the backdoor preload");
    assert!(a.r[1].last && !a.r[0].last && a.r.iter().all(|r| r.id == 5 && r.resp == 0));

    // Memory never written reads as zero.
    let mut zero = vec![0xffu8; 64];
    b.m.ddr_read_in(STD.1, 0x4000_0000, &mut zero)
        .expect("read");
    assert!(zero.iter().all(|&x| x == 0));
}

#[test]
fn instances_keep_their_own_storage() {
    let mut b = bench();
    let mut s = master(&mut b, STD, 5);
    let mut t = master(&mut b, ALT, 6);
    let names = b.m.ddr_instances();
    assert_eq!(names.len(), 2, "{names:?}");
    let (x, y) = (vec![0x11u8; 64], vec![0x22u8; 64]);
    s.write(0, 0x1000, s.full_size(), vec![(x.clone(), u64::MAX)]);
    t.write(0, 0x1000, t.full_size(), vec![(y.clone(), u64::MAX)]);
    run(
        &mut b.m,
        &mut [&mut s, &mut t],
        1_000,
        "both writes",
        |_, ms| ms[0].b.len() == 1 && ms[1].b.len() == 1,
    )
    .expect("writes");
    let mut got = vec![0u8; 64];
    b.m.ddr_read_in(STD.1, 0x1000, &mut got).expect("std");
    assert_eq!(got, x);
    b.m.ddr_read_in(ALT.1, 0x1000, &mut got).expect("alt");
    assert_eq!(got, y);
}

#[test]
fn parallel_models_never_share_memory() {
    let handles: Vec<_> = (0..4u8)
        .map(|k| {
            std::thread::spawn(move || {
                let mut b = bench();
                let mut a = master(&mut b, STD, u64::from(k));
                let mine = vec![k.wrapping_mul(37).wrapping_add(1); 128];
                b.m.ddr_write_in(STD.1, 0x8000, &mine).expect("preload");
                for round in 0..20 {
                    a.read(0, 0x8000, a.full_size(), 2);
                    run(&mut b.m, &mut [&mut a], 1_000, "read", |_, ms| {
                        ms[0].r.len() == 2 * (round + 1)
                    })
                    .expect("read");
                }
                a.r.iter().all(|r| r.data.iter().all(|&x| x == mine[0]))
            })
        })
        .collect();
    for h in handles {
        assert!(
            h.join().expect("thread"),
            "each model reads only its own preload"
        );
    }
}

#[test]
fn backdoor_errors_are_typed() {
    let mut b = bench();
    let err = b.m.ddr_write(0, &[1]).expect_err("two instances");
    assert!(matches!(err, SimError::DdrAmbiguous { .. }), "{err}");
    let err = b.m.ddr_write_in("nonsense", 0, &[1]).expect_err("no such");
    assert!(matches!(err, SimError::NoSuchDdr { .. }), "{err}");
    let err =
        b.m.ddr_write_in("ddr_alt", (1 << 31) - 4, &[0; 8])
            .expect_err("range");
    assert!(matches!(err, SimError::DdrRange { .. }), "{err}");
    let mut buf = [0u8; 8];
    let err =
        b.m.ddr_read_in("ddr_alt", u64::MAX, &mut buf)
            .expect_err("range");
    assert!(matches!(err, SimError::DdrRange { .. }), "{err}");
    let core = Model::new(Top::CardCore).expect("core");
    let err = core.ddr_read(0, &mut buf).expect_err("no ddr");
    assert!(matches!(err, SimError::NoDdr { .. }), "{err}");
}
