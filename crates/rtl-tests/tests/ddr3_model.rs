//! The DDR3 model on its own (`ddr3_model_tb`: one instance with the default DDR3-1600
//! timing, one with other timing), driven through 512-bit AXI4 master bus models with their
//! protocol monitors: read latency for row hits, closed banks and bank conflicts, refresh
//! stalls, the turnarounds between reads and writes (tWTR, tRTW), ACT spacing (tRRD, tFAW),
//! precharge after reads and writes (tRTP, tWR), the read/write arbitration alone and under two
//! saturating streams, the backdoor against bus contents, and storage isolation between
//! instances and between models on different threads.
//!
//! Every expected cycle count is arithmetic on the timing parameters that the instance reports
//! on its ports and on the model's documented pipeline (ddr3_model.v): the column command of a
//! read beat at edge C gives its R handshake at C + CL + CTRL_LAT + 1, the last column command
//! of a write burst at edge C its B handshake at C + 1, and a burst following one of the same
//! direction starts two edges after that one's last column command.

use std::cell::RefCell;
use std::rc::Rc;

use axi_bfm::{AxiMaster, AxiMasterConfig, Channel, Env, PauseSpec, ResetPolarity, Result};
use card_sim::{ClockId, DdrBackdoor, Model, SimError, Top};
use rand::{Rng as _, SeedableRng};
use rand_xorshift::XorShiftRng;
use rtl_tests::{
    apply_write, fires, incr, on_sample, random_bytes, record_axi, strobed_lanes, AxiLog, DDR_HZ,
};

/// The two instances of the test top: port prefix, backdoor instance name, timing prefix.
const STD: (&str, &str, &str) = ("s0_axi", "ddr_std", "std");
const ALT: (&str, &str, &str) = ("s1_axi", "ddr_alt", "alt");

/// Row-bank-column mapping of the model's defaults: 8-byte columns, 1 K columns, 8 banks.
const BANK_SHIFT: u32 = 3 + 10;
const ROW_SHIFT: u32 = BANK_SHIFT + 3;
/// Cycles the model adds to CL + CTRL_LAT for a row hit on an idle scheduler, from the AR
/// handshake to the R handshake (ddr3_model.v documents the pipeline).
const MODEL_OVERHEAD: u64 = 2;
/// Edges from a read column command to its R handshake beyond CL + CTRL_LAT.
const R_AFTER_COL: u64 = 1;
/// Edges from a burst's last column command to the first column command of the next burst of
/// the same direction when nothing else is in the way (the context loads it in between).
const NEXT_BURST: u64 = 2;

/// The timing one instance reports on its ports.
#[derive(Debug, Clone, Copy)]
struct Timing {
    cl: u64,
    rcd: u64,
    rp: u64,
    ras: u64,
    wr: u64,
    rfc: u64,
    refi: u64,
    ctrl: u64,
    rtp: u64,
    wtr: u64,
    rtw: u64,
    rrd: u64,
    faw: u64,
    hold_beats: u64,
    hold_idle: u64,
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
            wr: get("t_wr"),
            rfc: get("t_rfc"),
            refi: get("t_refi"),
            ctrl: get("ctrl_lat"),
            rtp: get("t_rtp"),
            wtr: get("t_wtr"),
            rtw: get("t_rtw"),
            rrd: get("t_rrd"),
            faw: get("t_faw"),
            hold_beats: get("hold_beats"),
            hold_idle: get("hold_idle"),
        }
    }

    /// Edges from a read column command to its R handshake.
    fn read_lat(&self) -> u64 {
        self.cl + self.ctrl + R_AFTER_COL
    }
}

struct Tb {
    env: Env,
    clk: ClockId,
    /// Edges of the reset, which the edge numbers in the handshake records include.
    reset_edges: u64,
}

fn tb() -> Tb {
    let mut env = Env::new(Model::new(Top::Ddr3ModelTb).expect("model"));
    let clk = env.add_clock("clk", DDR_HZ).expect("clock");
    env.add_reset(clk, "rst", ResetPolarity::ActiveHigh)
        .expect("reset");
    env.reset(clk, 4).expect("reset");
    let reset_edges = env.cycles(clk);
    Tb {
        env,
        clk,
        reset_edges,
    }
}

/// A 512-bit master on one instance, with no limit below the test's own on reads in flight,
/// and the record of its handshakes.
fn master(b: &mut Tb, which: (&str, &str, &str)) -> (AxiMaster, Rc<RefCell<AxiLog>>) {
    let cfg = AxiMasterConfig {
        max_outstanding_reads: 4096,
        max_outstanding_writes: 64,
        ..AxiMasterConfig::default()
    };
    let a = AxiMaster::attach_with(&mut b.env, which.0, b.clk, cfg).expect("attach");
    let log = record_axi(&mut b.env, which.0, b.clk).expect("record");
    (a, log)
}

/// A fresh testbench with a [`master`] on instance `which` and that instance's timing.
fn timed_master(which: (&str, &str, &str)) -> (Tb, Timing, AxiMaster, Rc<RefCell<AxiLog>>) {
    let mut b = tb();
    let t = Timing::read(b.env.model(), which.2);
    let (a, log) = master(&mut b, which);
    (b, t, a, log)
}

/// Reads one beat at `addr` and returns the cycles from the AR handshake to the R handshake.
fn read_latency(b: &mut Tb, a: &AxiMaster, log: &RefCell<AxiLog>, addr: u64) -> u64 {
    let bytes = a.bus_bytes();
    a.read(&mut b.env, addr, bytes).expect("read");
    let l = log.borrow();
    l.r.last().expect("beat").cycle - l.ar.last().expect("ar")
}

#[test]
fn read_latency_follows_timing_parameters() {
    for which in [STD, ALT] {
        let (mut b, t, a, log) = timed_master(which);
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
        let (mut b, t, a, log) = timed_master(which);
        // Two reads of different rows of bank 0 queued together: the second's PRE must wait
        // until the first row has been open T_RAS and T_RTP has passed since its read (which
        // came T_RCD after the ACT), then T_RP and T_RCD.
        let bytes = a.bus_bytes();
        a.start_read(0, 0, bytes).expect("queued");
        a.start_read(1, 1 << ROW_SHIFT, bytes).expect("queued");
        a.wait_idle(&mut b.env).expect("reads");
        let l = log.borrow();
        assert_eq!(l.r.len(), 2);
        let gap = l.r[1].cycle - l.r[0].cycle;
        assert_eq!(
            gap,
            t.ras.max(t.rcd + t.rtp) + t.rp,
            "{}: ACT-to-ACT of one bank is max(T_RAS, T_RCD + T_RTP) + T_RP",
            which.1
        );
        assert_eq!((l.r[0].id, l.r[1].id), (0, 1), "in order");
    }
}

#[test]
fn refresh_stalls_as_parameterised() {
    for which in [STD, ALT] {
        let (mut b, t, a, log) = timed_master(which);
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
        // The refresh goes in the edge after the burst's last read, precharges the open row
        // once T_RTP has passed since that read (T_RP), refreshes (T_RFC) and opens the row
        // again (T_RCD) as the refresh ends.
        for &(at, gap) in &stalls {
            assert_eq!(
                gap,
                t.rtp.max(1) + t.rp + t.rfc + t.rcd,
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

/// Records the edges of the W handshakes of `<prefix>_*`.
fn record_w(b: &mut Tb, prefix: &str) -> Rc<RefCell<Vec<u64>>> {
    let m = b.env.model();
    let valid = m.port(&format!("{prefix}_wvalid")).expect("wvalid");
    let ready = m.port(&format!("{prefix}_wready")).expect("wready");
    let log = Rc::new(RefCell::new(Vec::new()));
    let l = log.clone();
    on_sample(&mut b.env, b.clk, move |m, cx| {
        if !cx.in_reset && fires(m, valid, ready) {
            l.borrow_mut().push(cx.cycle);
        }
    });
    log
}

/// Runs until `done` holds (at most 10 000 edges).
fn run_until(b: &mut Tb, what: &str, mut done: impl FnMut() -> bool) {
    b.env
        .run_until(b.clk, 10_000, what, |_| done())
        .expect("condition within the limit");
}

/// Checks that a measurement ended before the instance's first refresh could get in the way.
fn before_refresh(b: &Tb, t: &Timing, last_edge: u64, which: &str) {
    assert!(
        last_edge - b.reset_edges < t.refi,
        "{which}: the measurement must end before the first refresh"
    );
}

/// A row is opened by reading its first beat, so that what follows are row hits.
fn open_row(b: &mut Tb, a: &AxiMaster, addr: u64) {
    let bytes = a.bus_bytes();
    a.read(&mut b.env, addr, bytes).expect("warm-up read");
}

#[test]
fn write_then_read_pays_t_wtr() {
    for which in [STD, ALT] {
        let (mut b, t, a, log) = timed_master(which);
        let w = record_w(&mut b, which.0);
        let bytes = a.bus_bytes();
        let beat = bytes as u64;
        open_row(&mut b, &a, 0);
        // An 8-beat write to the open row; once its first beat is in, it holds the command
        // slot, and a read of the same row queued then waits for its last beat.
        a.start_write(1, 8 * beat, &vec![0x5a; 8 * bytes])
            .expect("write");
        run_until(&mut b, "the first W beat", || !w.borrow().is_empty());
        a.start_read(2, 32 * beat, bytes).expect("read");
        a.wait_idle(&mut b.env).expect("idle");
        let l = log.borrow();
        let last_write_col = l.b[0].cycle - 1;
        let read = l.r.last().expect("read beat").cycle;
        assert!(
            l.ar[1] < last_write_col,
            "{}: the read waited behind the write",
            which.1
        );
        assert_eq!(
            read,
            last_write_col + t.wtr.max(1) + t.read_lat(),
            "{}: the read's column command is T_WTR ({}) after the write's",
            which.1,
            t.wtr
        );
        before_refresh(&b, &t, read, which.1);
        println!(
            "{}: write to read costs T_WTR = {} cycles, not 1",
            which.1, t.wtr
        );
    }
}

#[test]
fn read_then_write_pays_t_rtw() {
    for which in [STD, ALT] {
        let (mut b, t, a, log) = timed_master(which);
        let bytes = a.bus_bytes();
        let beat = bytes as u64;
        open_row(&mut b, &a, 0);
        // An 8-beat read of the open row holds the slot; a write queued once its address is
        // in waits for its last beat and then T_RTW from it.
        a.start_read(1, 0, 8 * bytes).expect("read");
        run_until(&mut b, "the read's AR", || log.borrow().ar.len() == 2);
        a.start_write(2, 32 * beat, &vec![0xa5; bytes])
            .expect("write");
        a.wait_idle(&mut b.env).expect("idle");
        let l = log.borrow();
        let last_read_col = l.r.last().expect("read beats").cycle - t.read_lat();
        let b_edge = l.b[0].cycle;
        assert!(
            l.aw[0] < last_read_col,
            "{}: the write waited behind the read",
            which.1
        );
        assert_eq!(
            b_edge,
            last_read_col + t.rtw.max(1) + 1,
            "{}: the write's column command is T_RTW ({}) after the read's",
            which.1,
            t.rtw
        );
        before_refresh(&b, &t, b_edge, which.1);
    }
}

/// The column commands of eight single-beat reads (`.0`) and eight single-beat writes (`.1`)
/// that wait while a long read burst whose last column command is at `m` runs: grouped when
/// the read direction keeps the slot through them, alternating when it yields at every burst
/// boundary.
fn small_bursts_after(t: &Timing, m: u64, grouped: bool) -> (Vec<u64>, Vec<u64>) {
    let mut reads = Vec::new();
    let mut writes = Vec::new();
    if grouped {
        // Reads follow the long burst back to back, then the writes, after T_RTW.
        let mut c = m;
        for _ in 0..8 {
            c += NEXT_BURST;
            reads.push(c);
        }
        c = (c + 1).max(c + t.rtw);
        for _ in 0..8 {
            writes.push(c);
            c += NEXT_BURST;
        }
    } else {
        // Every boundary hands the slot over: W R W R ..., each change a turnaround.
        let mut last_read = m;
        for _ in 0..8 {
            let w = (last_read + 1).max(last_read + t.rtw);
            let r = (w + 1).max(w + t.wtr);
            writes.push(w);
            reads.push(r);
            last_read = r;
        }
    }
    (reads, writes)
}

/// A 64-beat read that holds the slot while eight single-beat reads and eight single-beat
/// writes to the same row queue up behind it, run until the bus is idle.
fn queue_behind_a_long_read(b: &mut Tb, a: &AxiMaster) {
    let bytes = a.bus_bytes();
    let beat = bytes as u64;
    a.start_read(0, 0, 64 * bytes).expect("long read");
    for i in 0..8u64 {
        a.start_read(1 + i as u32, (64 + i) * beat, bytes)
            .expect("read");
        a.start_write(1 + i as u32, (80 + i) * beat, &vec![i as u8; bytes])
            .expect("write");
    }
    a.wait_idle(&mut b.env).expect("idle");
}

#[test]
fn arbitration_groups_or_alternates_as_hold_beats_says() {
    for which in [STD, ALT] {
        let (mut b, t, a, log) = timed_master(which);
        queue_behind_a_long_read(&mut b, &a);
        let l = log.borrow();
        assert_eq!((l.r.len(), l.b.len()), (72, 8));
        assert!(
            l.ar[8] < l.r[0].cycle && l.aw[7] < l.r[0].cycle,
            "{}: everything queued before the long read's data came",
            which.1
        );
        let m = l.r[63].cycle - t.read_lat();
        // The read direction holds through the eight reads if HOLD_BEATS exceeds the 71 beats
        // it has issued by the last of their boundaries; it yields at the first boundary if
        // HOLD_BEATS is at most the long burst's 64. The two instances cover both.
        let grouped = match t.hold_beats {
            h if h > 71 => true,
            h if h <= 64 => false,
            h => panic!("{}: HOLD_BEATS {h} is between the cases", which.1),
        };
        let (reads, writes) = small_bursts_after(&t, m, grouped);
        let got_r: Vec<u64> = l.r[64..].iter().map(|r| r.cycle - t.read_lat()).collect();
        let got_w: Vec<u64> = l.b.iter().map(|r| r.cycle - 1).collect();
        assert_eq!(got_r, reads, "{}: read column commands", which.1);
        assert_eq!(got_w, writes, "{}: write column commands", which.1);
        // R in AR order and B in AW order.
        let rid: Vec<u64> = l.r[63..].iter().map(|r| r.id).collect();
        let bid: Vec<u64> = l.b.iter().map(|r| r.id).collect();
        assert_eq!(rid, (0..9).collect::<Vec<u64>>());
        assert_eq!(bid, (1..9).collect::<Vec<u64>>());
        let end = got_r.last().max(got_w.last()).copied().unwrap_or(m) - m;
        before_refresh(&b, &t, l.r.last().map_or(0, |r| r.cycle), which.1);
        println!(
            "{}: {} the 16 small bursts took {end} cycles after the long read (T_WTR {}, T_RTW {}, HOLD_BEATS {})",
            which.1,
            if grouped { "grouped," } else { "alternating," },
            t.wtr,
            t.rtw,
            t.hold_beats
        );
    }
}

/// Sets the read/write arbitration scheme of both instances (ddr3_model's `arb_algorithm`:
/// 0 RD_PRI_REG, 1 ROUND_ROBIN, 2 TDM).
fn set_arbitration(b: &mut Tb, scheme: u64) {
    let m = b.env.model_mut();
    let port = m.input("arb_algorithm").expect("arb_algorithm");
    m.set(port, scheme);
}

#[test]
fn a_write_qos_ends_the_reads_hold_at_their_burst_end() {
    // As the grouping case above on the instance whose reads would hold through the small
    // reads, but the writes carry AWQOS 1: MIG v4.x's RD_PRI_REG drops the reads' hold at the
    // end of the long burst, the writes take the port and keep it (the reads carry no QoS),
    // and the reads follow once the writes are done.
    let mut b = tb();
    let t = Timing::read(b.env.model(), STD.2);
    assert!(
        t.hold_beats > 71,
        "the instance without QoS would group the reads"
    );
    let cfg = AxiMasterConfig {
        max_outstanding_reads: 4096,
        max_outstanding_writes: 64,
        aw_qos: 1,
        ..AxiMasterConfig::default()
    };
    let a = AxiMaster::attach_with(&mut b.env, STD.0, b.clk, cfg).expect("attach");
    let log = record_axi(&mut b.env, STD.0, b.clk).expect("record");
    queue_behind_a_long_read(&mut b, &a);
    let l = log.borrow();
    assert!(
        l.aw[7] < l.r[0].cycle,
        "the writes queued during the long read"
    );
    let m = l.r[63].cycle - t.read_lat();
    let first_write = (m + 1).max(m + t.rtw);
    let writes: Vec<u64> = (0..8).map(|k| first_write + k * NEXT_BURST).collect();
    let first_read = (writes[7] + 1).max(writes[7] + t.wtr);
    let reads: Vec<u64> = (0..8).map(|k| first_read + k * NEXT_BURST).collect();
    let got_w: Vec<u64> = l.b.iter().map(|r| r.cycle - 1).collect();
    let got_r: Vec<u64> = l.r[64..].iter().map(|r| r.cycle - t.read_lat()).collect();
    assert_eq!(
        got_w, writes,
        "write column commands right after the long read"
    );
    assert_eq!(got_r, reads, "read column commands after the writes");
    before_refresh(&b, &t, l.r.last().map_or(0, |r| r.cycle), STD.1);
}

#[test]
fn round_robin_alternates_beat_by_beat_and_tdm_halves_one_direction() {
    for which in [STD, ALT] {
        // ROUND_ROBIN: a 16-beat read and a 16-beat write of one open row at once. While both
        // have beats ready they alternate beat by beat, so consecutive read column commands
        // are a write and two turnarounds apart (T_RTW, then T_WTR), where RD_PRI_REG would
        // issue the reads back to back.
        let mut b = tb();
        set_arbitration(&mut b, 1);
        let t = Timing::read(b.env.model(), which.2);
        let (a, log) = master(&mut b, which);
        let bytes = a.bus_bytes();
        let beat = bytes as u64;
        open_row(&mut b, &a, 0);
        a.start_read(1, 0, 16 * bytes).expect("read");
        a.start_write(2, 16 * beat, &vec![0x66; 16 * bytes])
            .expect("write");
        a.wait_idle(&mut b.env).expect("idle");
        let l = log.borrow();
        let cols: Vec<u64> = l.r[1..].iter().map(|r| r.cycle - t.read_lat()).collect();
        let period = t.rtw.max(1) + t.wtr.max(1);
        // Both streams are under way from the third read beat to the last but two.
        for pair in cols[3..14].windows(2) {
            assert_eq!(
                pair[1] - pair[0],
                period,
                "{}: read column commands {pair:?} under ROUND_ROBIN, T_RTW {} + T_WTR {}",
                which.1,
                t.rtw,
                t.wtr
            );
        }
        before_refresh(
            &b,
            &t,
            l.b[0].cycle.max(l.r.last().map_or(0, |r| r.cycle)),
            which.1,
        );
        drop(l);

        // TDM: a read alone gets only every other cycle.
        let mut b = tb();
        set_arbitration(&mut b, 2);
        let (a, log) = master(&mut b, which);
        open_row(&mut b, &a, 0);
        a.start_read(1, 0, 16 * bytes).expect("read");
        a.wait_idle(&mut b.env).expect("idle");
        let l = log.borrow();
        let beats: Vec<u64> = l.r[1..].iter().map(|r| r.cycle).collect();
        for pair in beats.windows(2) {
            assert_eq!(pair[1] - pair[0], 2, "{}: TDM read beats {pair:?}", which.1);
        }
        assert!(b.env.violations().is_empty(), "{:?}", b.env.violations());
    }
}

/// The column commands of single-beat reads to closed banks, queued at the AR edges `ar`:
/// each ACT goes the cycle after its handshake, at least T_RRD after the previous ACT and
/// T_FAW after the fourth before it, each column command T_RCD after its ACT and no earlier
/// than the previous burst allows.
fn act_limited_cols(t: &Timing, ar: &[u64], rrd: u64, faw: u64) -> Vec<u64> {
    let mut acts: Vec<u64> = Vec::new();
    let mut cols: Vec<u64> = Vec::new();
    for (i, &edge) in ar.iter().enumerate() {
        let mut act = edge + 1;
        if i >= 1 {
            act = act.max(acts[i - 1] + rrd);
        }
        if i >= 4 {
            act = act.max(acts[i - 4] + faw);
        }
        let mut col = act + t.rcd;
        if i >= 1 {
            col = col.max(cols[i - 1] + NEXT_BURST);
        }
        acts.push(act);
        cols.push(col);
    }
    cols
}

#[test]
fn acts_to_five_banks_keep_t_rrd_and_t_faw() {
    for which in [STD, ALT] {
        let (mut b, t, a, log) = timed_master(which);
        let bytes = a.bus_bytes();
        // Five single-beat reads to five banks, all closed after reset, queued together.
        for bank in 0..5u64 {
            a.start_read(bank as u32, bank << BANK_SHIFT, bytes)
                .expect("read");
        }
        a.wait_idle(&mut b.env).expect("idle");
        let l = log.borrow();
        let got: Vec<u64> = l.r.iter().map(|r| r.cycle - t.read_lat()).collect();
        let want = act_limited_cols(&t, &l.ar, t.rrd, t.faw);
        assert_eq!(got, want, "{}: column commands", which.1);
        // Where the arithmetic says a timing binds, the measurement must differ from what the
        // same arithmetic gives without it (the check can tell).
        let no_rrd = act_limited_cols(&t, &l.ar, 1, t.faw);
        let no_faw = act_limited_cols(&t, &l.ar, t.rrd, 0);
        if t.rrd > NEXT_BURST {
            assert_ne!(got, no_rrd, "{}: T_RRD binds", which.1);
        }
        if t.faw > 4 * t.rrd.max(NEXT_BURST) {
            assert_ne!(
                got[4], no_faw[4],
                "{}: the fifth ACT waits for T_FAW",
                which.1
            );
        }
        before_refresh(&b, &t, l.r[4].cycle, which.1);
        println!(
            "{}: column commands {:?} apart (T_RRD {}, T_FAW {}, T_RCD {}); tRRD {}, tFAW {}",
            which.1,
            got.windows(2).map(|w| w[1] - w[0]).collect::<Vec<_>>(),
            t.rrd,
            t.faw,
            t.rcd,
            if got == no_rrd { "hidden" } else { "binds" },
            if got == no_faw { "hidden" } else { "binds" },
        );
    }
}

#[test]
fn hold_idle_lets_the_waiting_direction_in() {
    let mut released = Vec::new();
    for which in [STD, ALT] {
        let (mut b, t, a, log) = timed_master(which);
        let w = record_w(&mut b, which.0);
        let bytes = a.bus_bytes();
        let beat = bytes as u64;
        open_row(&mut b, &a, 0);
        // A 4-beat write whose data comes one beat every 13 cycles: between beats the write
        // direction holds the slot with nothing to issue. A read queued after its first beat
        // gets in once HOLD_IDLE such cycles have passed, or else after the write's last beat.
        a.set_channel_pauses(
            Channel::W,
            &PauseSpec::pattern(&format!("{}0", "1".repeat(12))),
        );
        a.start_write(1, 8 * beat, &vec![0x3c; 4 * bytes])
            .expect("write");
        run_until(&mut b, "the first W beat", || !w.borrow().is_empty());
        a.start_read(2, 32 * beat, bytes).expect("read");
        a.wait_idle(&mut b.env).expect("idle");
        let l = log.borrow();
        let wl = w.borrow();
        assert_eq!(wl.len(), 4);
        let gap = wl[1] - wl[0] - 1;
        let read_col = l.r.last().expect("read").cycle - t.read_lat();
        let release = gap >= t.hold_idle;
        let want = if release {
            (wl[0] + t.hold_idle + 1).max(wl[0] + t.wtr)
        } else {
            wl[3] + t.wtr.max(1)
        };
        assert_eq!(
            read_col, want,
            "{}: {gap} idle cycles between write beats, HOLD_IDLE {}",
            which.1, t.hold_idle
        );
        before_refresh(&b, &t, l.b[0].cycle.max(read_col), which.1);
        released.push(release);
    }
    assert_eq!(
        released,
        [false, true],
        "one instance keeps the hold through the gaps, the other yields"
    );
}

#[test]
fn conflict_after_reads_waits_for_t_rtp() {
    for which in [STD, ALT] {
        let (mut b, t, a, log) = timed_master(which);
        let bytes = a.bus_bytes();
        // A 16-beat read of row 0 of bank 0, then a read of row 1 of the same bank: its PRE
        // waits T_RTP after the last read, long after the row has been open T_RAS.
        a.start_read(0, 0, 16 * bytes).expect("read");
        a.start_read(1, 1 << ROW_SHIFT, bytes).expect("read");
        a.wait_idle(&mut b.env).expect("idle");
        let l = log.borrow();
        let lat = t.read_lat();
        let act = l.r[0].cycle - lat - t.rcd;
        let last = l.r[15].cycle - lat;
        assert!(
            last + t.rtp > act + t.ras,
            "{}: T_RTP is what binds",
            which.1
        );
        let want = (last + NEXT_BURST).max((act + t.ras).max(last + t.rtp) + t.rp + t.rcd);
        assert_eq!(
            l.r[16].cycle - lat,
            want,
            "{}: PRE T_RTP after the read",
            which.1
        );
        before_refresh(&b, &t, l.r[16].cycle, which.1);
    }
}

#[test]
fn conflict_after_writes_waits_for_t_wr() {
    for which in [STD, ALT] {
        let (mut b, t, a, log) = timed_master(which);
        let w = record_w(&mut b, which.0);
        let bytes = a.bus_bytes();
        // A 16-beat write to row 0 of bank 0 (closed: its ACT goes the cycle after AW), then a
        // read of row 1 of the same bank: its PRE waits T_WR after the last write.
        a.start_write(0, 0, &vec![0x77; 16 * bytes]).expect("write");
        run_until(&mut b, "the first W beat", || !w.borrow().is_empty());
        a.start_read(1, 1 << ROW_SHIFT, bytes).expect("read");
        a.wait_idle(&mut b.env).expect("idle");
        let l = log.borrow();
        let act = l.aw[0] + 1;
        let last = l.b[0].cycle - 1;
        assert!(last + t.wr > act + t.ras, "{}: T_WR is what binds", which.1);
        let want = (last + t.wtr).max((act + t.ras).max(last + t.wr) + t.rp + t.rcd);
        let read = l.r.last().expect("read").cycle;
        assert_eq!(
            read - t.read_lat(),
            want,
            "{}: PRE T_WR after the write",
            which.1
        );
        before_refresh(&b, &t, read, which.1);
    }
}

/// Beats per cycle of each direction when both always have bursts of `burst` beats waiting
/// and the device never refreshes: each direction holds the slot for the bursts it needs to
/// reach HOLD_BEATS, bursts of one direction follow each other NEXT_BURST apart, and each
/// change of direction costs its turnaround.
fn saturated_share(t: &Timing, burst: u64) -> f64 {
    let k = t.hold_beats.div_ceil(burst).max(1);
    let batch = k * burst + (k - 1) * (NEXT_BURST - 1);
    // From the first read column command to the next: both batches, less the two cycles the
    // batches' own spans leave out, plus both turnarounds.
    let period = 2 * batch - 2 + t.wtr.max(1) + t.rtw.max(1);
    (k * burst) as f64 / period as f64
}

#[test]
fn two_saturating_streams_share_the_slot_as_the_policy_predicts() {
    for which in [STD, ALT] {
        let (mut b, t, a, log) = timed_master(which);
        let w = record_w(&mut b, which.0);
        // 1 MiB each way, in 4 KiB (64-beat) bursts, to regions 16 MiB + 32 KiB apart: the
        // streams advance at one pace, so the write stays four banks (4 x 8 KiB rows) away
        // from the read and every switch of direction finds its row open, as the policy's
        // arithmetic assumes. (Regions a multiple of 64 KiB apart would meet in the same bank
        // with different rows, and every switch would pay a conflict.)
        let burst = 64;
        let len = 1 << 20;
        let r = a.start_read(1, 0, len).expect("read stream");
        let wr = a
            .start_write(2, (16 << 20) + (32 << 10), &vec![0xc3; len])
            .expect("write stream");
        a.wait(&mut b.env, r).expect("reads");
        a.wait(&mut b.env, wr).expect("writes");
        let l = log.borrow();
        let wl = w.borrow();
        // The window in which both streams run: from the first R beat until the first stream
        // ends, less a margin at both ends for filling and draining the queues. R and W
        // handshakes count column commands there: R leaves at one beat per cycle, and W
        // comes in as fast as the full write buffer drains.
        let start = l.r[0].cycle.max(wl[0]) + 500;
        let end = l.r.last().expect("R").cycle.min(*wl.last().expect("W")) - 500;
        let span = (end - start) as f64;
        let rd =
            l.r.iter()
                .filter(|x| (start..end).contains(&x.cycle))
                .count() as f64
                / span;
        let wd = wl.iter().filter(|&&x| (start..end).contains(&x)).count() as f64 / span;
        // Without refresh the policy gives each direction `share`. A refresh takes the slot
        // from the edge after the last column command before it until T_RCD after it ends:
        // the precharge wait after that command (T_RTP or T_WR) - 1 + T_RP + T_RFC + T_RCD;
        // and by cutting a batch short it may add one change of direction each way. The
        // window holds a fraction of a refresh interval more or less than its average.
        let share = saturated_share(&t, burst);
        let base = t.rp + t.rfc + t.rcd - 1;
        // A refresh that falls where the direction changes hides that change's turnaround
        // (the bus is idle for the refresh anyway), so it may cost one turnaround less.
        let lost_min = (base + t.rtp.min(t.wr).max(1)).saturating_sub(t.wtr.max(t.rtw)) as f64;
        let lost_max = (base + t.rtp.max(t.wr) + t.wtr + t.rtw) as f64;
        let refi = t.refi as f64;
        let low = 2.0 * share * (1.0 - lost_max / refi - lost_max / span);
        let high = 2.0 * share * (1.0 - lost_min / refi + lost_max / span);
        // The direction in service when a refresh becomes due hands one burst to the other
        // before it, and reads go first after it, so a refresh moves at most one burst from
        // one direction to the other; the window's ends may cut one batch of one direction.
        let k = t.hold_beats.div_ceil(burst).max(1);
        let imbalance = burst as f64 / refi + (k * burst) as f64 / span;
        println!(
            "{}: reads {rd:.4} + writes {wd:.4} = {:.4} beats/cycle ({:.0} + {:.0} MB/s); policy: {share:.4} each without refresh, {low:.4}..{high:.4} in total with it",
            which.1,
            rd + wd,
            rd * 64.0 * 200.0,
            wd * 64.0 * 200.0,
        );
        assert!(
            (low..=high).contains(&(rd + wd)),
            "{}: total {:.4} beats/cycle outside {low:.4}..{high:.4}",
            which.1,
            rd + wd
        );
        assert!(
            (rd - wd).abs() <= imbalance,
            "{}: reads {rd:.4} and writes {wd:.4} differ by more than {imbalance:.4}",
            which.1
        );
        // The check can tell the policies apart: handing the slot over at every burst
        // boundary would give a total outside the range of the instance that groups.
        let alternating = 2.0 * saturated_share(&Timing { hold_beats: 1, ..t }, burst);
        if k > 1 {
            assert!(
                alternating * (1.0 - lost_min / refi + lost_max / span) < low,
                "{}: the range does not tell grouping from alternating",
                which.1
            );
        }
        assert!(b.env.violations().is_empty(), "{:?}", b.env.violations());
    }
}

#[test]
fn backdoor_matches_bus_contents() -> Result<()> {
    let mut b = tb();
    let (a, log) = master(&mut b, STD);
    let mut rng = XorShiftRng::seed_from_u64(44);
    let bytes = a.bus_bytes();
    // Bus writes with random strobes over a preloaded pattern; the backdoor sees exactly the
    // strobed bytes changed.
    let base = 0x0123_4000u64;
    let pre = random_bytes(&mut rng, 4 * bytes);
    b.env.model_mut().ddr_write_in(STD.1, base, &pre)?;
    let beats: Vec<(Vec<u8>, u128)> = (0..4)
        .map(|_| (random_bytes(&mut rng, bytes), u128::from(rng.next_u64())))
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
    let data = random_bytes(&mut rng, 2 * bytes);
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
    let mut b = tb();
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
                let mut b = tb();
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
    let mut b = tb();
    let m = b.env.model_mut();
    let err = m.ddr_write(0, &[1]).expect_err("two instances");
    assert!(matches!(err, SimError::MemoryAmbiguous { .. }), "{err}");
    let err = m.ddr_write_in("nonsense", 0, &[1]).expect_err("no such");
    assert!(matches!(err, SimError::NoSuchMemory { .. }), "{err}");
    let err = m
        .ddr_write_in("ddr_alt", (1 << 31) - 4, &[0; 8])
        .expect_err("range");
    assert!(matches!(err, SimError::MemoryRange { .. }), "{err}");
    let mut buf = [0u8; 8];
    let err = m
        .ddr_read_in("ddr_alt", u64::MAX, &mut buf)
        .expect_err("range");
    assert!(matches!(err, SimError::MemoryRange { .. }), "{err}");
    let core = Model::new(Top::CardCore).expect("core");
    let err = core.ddr_read(0, &mut buf).expect_err("no ddr");
    assert!(matches!(err, SimError::NoMemory { .. }), "{err}");
}
