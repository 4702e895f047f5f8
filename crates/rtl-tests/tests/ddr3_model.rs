//! The DDR3 model on its own (`ddr3_model_tb`: one instance with the default DDR3-1600
//! timing, one with other timing), driven through 512-bit AXI4 master bus models with their
//! protocol monitors: read latency for row hits, closed banks and bank conflicts, refresh
//! stalls, the backdoor against bus contents, and storage isolation between instances and
//! between models on different threads.

use std::cell::RefCell;
use std::rc::Rc;

use axi_bfm::{AxiMaster, AxiMasterConfig, Env, ResetPolarity, Result};
use card_sim::{ClockId, Model, SimError, Top};
use rtl_tests::{apply_write, incr, record_axi, strobed_lanes, AxiLog, Rng, DDR_HZ};

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
    env: Env,
    clk: ClockId,
    /// Edges of the reset, which the edge numbers in the handshake records include.
    reset_edges: u64,
}

fn bench() -> Bench {
    let mut env = Env::new(Model::new(Top::Ddr3ModelTb).expect("model"));
    let clk = env.add_clock("clk", DDR_HZ).expect("clock");
    env.add_reset(clk, "rst", ResetPolarity::ActiveHigh)
        .expect("reset");
    env.reset(clk, 4).expect("reset");
    let reset_edges = env.cycles(clk);
    Bench {
        env,
        clk,
        reset_edges,
    }
}

/// A 512-bit master on one instance, with no limit below the test's own on reads in flight,
/// and the record of its handshakes.
fn master(b: &mut Bench, which: (&str, &str, &str)) -> (AxiMaster, Rc<RefCell<AxiLog>>) {
    let cfg = AxiMasterConfig {
        max_outstanding_reads: 4096,
        max_outstanding_writes: 64,
        ..AxiMasterConfig::default()
    };
    let a = AxiMaster::attach_with(&mut b.env, which.0, b.clk, cfg).expect("attach");
    let log = record_axi(&mut b.env, which.0, b.clk).expect("record");
    (a, log)
}

/// Reads one beat at `addr` and returns the cycles from the AR handshake to the R handshake.
fn read_latency(b: &mut Bench, a: &AxiMaster, log: &RefCell<AxiLog>, addr: u64) -> u64 {
    let bytes = a.bus_bytes();
    a.read(&mut b.env, addr, bytes).expect("read");
    let l = log.borrow();
    l.r.last().expect("beat").cycle - l.ar.last().expect("ar")
}

#[test]
fn read_latency_follows_timing_parameters() {
    for which in [STD, ALT] {
        let mut b = bench();
        let t = Timing::read(b.env.model(), which.2);
        let (a, log) = master(&mut b, which);
        assert_eq!(a.bus_bytes(), 64, "a 512-bit port");
        let row = 1u64 << ROW_SHIFT;
        let bank = 1u64 << BANK_SHIFT;
        // After reset every bank is closed: ACT, then the column command T_RCD later.
        let closed = read_latency(&mut b, &a, &log, 0);
        // Same row, next column: a row hit.
        let hit = read_latency(&mut b, &a, &log, 64);
        // Same bank, other row, long after the ACT: PRE, ACT, column.
        let conflict = read_latency(&mut b, &a, &log, row + 128);
        // Another bank is independent: closed, not a conflict.
        let other_bank = read_latency(&mut b, &a, &log, bank + 2 * row);
        assert!(
            log.borrow()
                .ar
                .last()
                .copied()
                .unwrap_or(0)
                .saturating_sub(b.reset_edges)
                < t.refi,
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
        let t = Timing::read(b.env.model(), which.2);
        let (a, log) = master(&mut b, which);
        // Two reads of different rows of bank 0 queued together: the second must wait until
        // the first row has been open T_RAS, then T_RP and T_RCD.
        let bytes = a.bus_bytes();
        a.start_read(0, 0, bytes).expect("queued");
        a.start_read(1, 1 << ROW_SHIFT, bytes).expect("queued");
        a.wait_idle(&mut b.env).expect("reads");
        let l = log.borrow();
        assert_eq!(l.r.len(), 2);
        let gap = l.r[1].cycle - l.r[0].cycle;
        assert_eq!(
            gap,
            t.ras + t.rp,
            "{}: ACT-to-ACT of one bank is T_RAS + T_RP",
            which.1
        );
        assert_eq!((l.r[0].id, l.r[1].id), (0, 1), "in order");
    }
}

#[test]
fn refresh_stalls_as_parameterised() {
    for which in [STD, ALT] {
        let mut b = bench();
        let t = Timing::read(b.env.model(), which.2);
        let (a, log) = master(&mut b, which);
        // Stream 8-beat row hits through one 8 KiB row; with reads always waiting, the
        // scheduler idles one cycle between bursts, so beats arrive in runs of 8 with a
        // one-cycle hole, except where a refresh gets in the way.
        let window = 3 * t.refi + t.refi / 2;
        let bursts = window / 8 + 64;
        let bytes = 8 * a.bus_bytes();
        for i in 0..bursts {
            a.start_read((i & 15) as u32, (i % 16) * 512, bytes)
                .expect("queued");
        }
        let start = b.env.cycles(b.clk);
        b.env
            .run_until(b.clk, 100_000, "the stream", |e| {
                e.cycles(b.clk) - start >= window
            })
            .expect("stream");
        let l = log.borrow();
        let gaps: Vec<(u64, u64)> =
            l.r.windows(2)
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
fn backdoor_matches_bus_contents() -> Result<()> {
    let mut b = bench();
    let (a, log) = master(&mut b, STD);
    let mut rng = Rng::new(44);
    let bytes = a.bus_bytes();
    // Bus writes with random strobes over a preloaded pattern; the backdoor sees exactly the
    // strobed bytes changed.
    let base = 0x0123_4000u64;
    let pre = rng.bytes(4 * bytes);
    b.env.model_mut().ddr_write_in(STD.1, base, &pre)?;
    let beats: Vec<(Vec<u8>, u128)> = (0..4)
        .map(|_| (rng.bytes(bytes), u128::from(rng.next_u64())))
        .collect();
    let mut expect = pre.clone();
    let size = bytes.trailing_zeros() as u8;
    apply_write(&mut expect, base, base, size, bytes, &beats);
    let burst = incr(3, base, size, 4);
    let (data, keep) = strobed_lanes(&burst, bytes, &beats);
    let t = a.start_write_burst_strobed(burst, &data, &keep)?;
    a.wait(&mut b.env, t)?;
    assert!(a.take_write(t)?.is_ok());
    assert_eq!((log.borrow().b[0].id, log.borrow().b[0].resp), (3, 0));
    let mut got = vec![0u8; expect.len()];
    b.env.model().ddr_read_in(STD.1, base, &mut got)?;
    assert_eq!(got, expect, "backdoor sees the bus write");

    // Backdoor preload at the very top of the 2 GiB space, read over the bus.
    let size = b.env.model().ddr_size_in(STD.1)?;
    assert_eq!(size, 1 << 31);
    let top = size - 2 * bytes as u64;
    let data = rng.bytes(2 * bytes);
    b.env.model_mut().ddr_write_in(STD.1, top, &data)?;
    let t = a.start_read(5, top, 2 * bytes)?;
    a.wait(&mut b.env, t)?;
    let (bus, resp) = a.take_read(t)?;
    assert!(resp.is_ok());
    assert_eq!(bus, data, "bus reads the backdoor preload");
    let l = log.borrow();
    assert_eq!(l.r.len(), 2);
    assert!(l.r[1].last && !l.r[0].last && l.r.iter().all(|r| r.id == 5 && r.resp == 0));

    // Memory never written reads as zero.
    let mut zero = vec![0xffu8; 64];
    b.env.model().ddr_read_in(STD.1, 0x4000_0000, &mut zero)?;
    assert!(zero.iter().all(|&x| x == 0));
    Ok(())
}

/// Seed of the random pauses on both 512-bit ports in the storage test.
const STORAGE_PAUSE_SEED: u64 = 0x5107;

/// Each instance keeps its own storage; both 512-bit ports run with seeded random pauses on
/// every channel.
#[test]
fn instances_keep_their_own_storage() -> Result<()> {
    let mut b = bench();
    let (s, _) = master(&mut b, STD);
    let (t, _) = master(&mut b, ALT);
    s.set_pauses(&axi_bfm::PauseSpec::random(STORAGE_PAUSE_SEED, 30));
    t.set_pauses(&axi_bfm::PauseSpec::random(STORAGE_PAUSE_SEED + 1, 30));
    let names = b.env.model().ddr_instances();
    assert_eq!(names.len(), 2, "{names:?}");
    let (x, y) = (vec![0x11u8; 64], vec![0x22u8; 64]);
    let ws = s.start_write(0, 0x1000, &x)?;
    let wt = t.start_write(0, 0x1000, &y)?;
    s.wait(&mut b.env, ws)?;
    t.wait(&mut b.env, wt)?;
    let mut got = vec![0u8; 64];
    b.env.model().ddr_read_in(STD.1, 0x1000, &mut got)?;
    assert_eq!(got, x);
    b.env.model().ddr_read_in(ALT.1, 0x1000, &mut got)?;
    assert_eq!(got, y);
    // And read back over the paused buses, unaligned.
    assert_eq!(s.read(&mut b.env, 0x1003, 50)?, x[3..53]);
    assert_eq!(t.read(&mut b.env, 0x1003, 50)?, y[3..53]);
    assert!(b.env.violations().is_empty(), "{:?}", b.env.violations());
    Ok(())
}

#[test]
fn parallel_models_never_share_memory() {
    let handles: Vec<_> = (0..4u8)
        .map(|k| {
            std::thread::spawn(move || {
                let mut b = bench();
                let (a, _) = master(&mut b, STD);
                let mine = vec![k.wrapping_mul(37).wrapping_add(1); 128];
                b.env
                    .model_mut()
                    .ddr_write_in(STD.1, 0x8000, &mine)
                    .expect("preload");
                (0..20).all(|_| {
                    let got = a.read(&mut b.env, 0x8000, 128).expect("read");
                    got.iter().all(|&x| x == mine[0])
                })
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
    let m = b.env.model_mut();
    let err = m.ddr_write(0, &[1]).expect_err("two instances");
    assert!(matches!(err, SimError::DdrAmbiguous { .. }), "{err}");
    let err = m.ddr_write_in("nonsense", 0, &[1]).expect_err("no such");
    assert!(matches!(err, SimError::NoSuchDdr { .. }), "{err}");
    let err = m
        .ddr_write_in("ddr_alt", (1 << 31) - 4, &[0; 8])
        .expect_err("range");
    assert!(matches!(err, SimError::DdrRange { .. }), "{err}");
    let mut buf = [0u8; 8];
    let err = m
        .ddr_read_in("ddr_alt", u64::MAX, &mut buf)
        .expect_err("range");
    assert!(matches!(err, SimError::DdrRange { .. }), "{err}");
    let core = Model::new(Top::CardCore).expect("core");
    let err = core.ddr_read(0, &mut buf).expect_err("no ddr");
    assert!(matches!(err, SimError::NoDdr { .. }), "{err}");
}
