//! Reads and writes at once through the simulated card (`sim_top`: the DMA port `s_axi`,
//! 128-bit at 250 MHz, through axi_mm_path to the 512-bit DDR3 model at 200 MHz), driven by the
//! bus models with their monitors on: the first-beat read latency on an idle card and while a
//! full-rate write stream runs, and the throughput of a read and a write stream alone and
//! together.

use std::cell::RefCell;
use std::rc::Rc;

use axi_bfm::{AxiMasterConfig, AxiMonitorConfig, Result};
use card_sim::Top;
use rtl_tests::{fires, on_sample, record_axi, AxiLog, CardHarness, AXI_HZ, DDR_HZ};

/// Bytes per s_axi beat.
const BEAT: usize = 16;
/// Nanoseconds per axi_aclk cycle.
const NS_PER_CYCLE: f64 = 1e9 / AXI_HZ as f64;
/// Nanoseconds per ddr_clk cycle.
const DDR_NS: f64 = 1e9 / DDR_HZ as f64;
/// The DMA port's ceiling: one 16-byte beat per axi_aclk cycle, in MB/s.
const PORT_MBS: f64 = BEAT as f64 * AXI_HZ as f64 / 1e6;

struct Tb {
    card: CardHarness,
    log: Rc<RefCell<AxiLog>>,
    /// Edges of the W handshakes on s_axi.
    w: Rc<RefCell<Vec<u64>>>,
}

fn tb() -> Result<Tb> {
    let mut card = CardHarness::new(Top::SimTop, true)?;
    // Streams of megabytes take longer than the bus model's default wait limit.
    card.dma().set_config(AxiMasterConfig {
        timeout_cycles: 4_000_000,
        ..AxiMasterConfig::default()
    });
    // While the DDR3 controller serves a batch of one direction (up to HOLD_BEATS = 256
    // 512-bit beats, at the port's pace of four axi_aclk cycles per beat when the other side
    // of the card is the limit), the other direction's address may wait for READY over 2000
    // cycles: more than the monitor's default bound, and legal.
    if let Some(mon) = card.dma().monitor() {
        mon.set_config(AxiMonitorConfig {
            stall_bound: 10_000,
            ..mon.config()
        });
    }
    let log = {
        let clk = card.clk();
        record_axi(card.env_mut(), "s_axi", clk)
    }?;
    let m = card.env().model();
    let valid = m.port("s_axi_wvalid")?;
    let ready = m.port("s_axi_wready")?;
    let w = Rc::new(RefCell::new(Vec::new()));
    let wl = w.clone();
    let clk = card.clk();
    on_sample(card.env_mut(), clk, move |m, cx| {
        if !cx.in_reset && fires(m, valid, ready) {
            wl.borrow_mut().push(cx.cycle);
        }
    });
    Ok(Tb { card, log, w })
}

/// Minimum, mean and maximum.
fn stats(v: &[u64]) -> (u64, f64, u64) {
    let min = v.iter().copied().min().unwrap_or(0);
    let max = v.iter().copied().max().unwrap_or(0);
    let mean = v.iter().sum::<u64>() as f64 / v.len().max(1) as f64;
    (min, mean, max)
}

/// Reads `len` bytes at `addr` alone (one burst of 4 KiB at most) and returns the axi_aclk
/// cycles from its AR handshake to its first R handshake.
fn first_beat_latency(b: &mut Tb, addr: u64, len: usize) -> Result<u64> {
    let (ars, rs) = {
        let l = b.log.borrow();
        (l.ar.len(), l.r.len())
    };
    b.card.dma().clone().read(b.card.env_mut(), addr, len)?;
    let l = b.log.borrow();
    assert_eq!(l.ar.len(), ars + 1, "one read burst");
    Ok(l.r[rs].cycle - l.ar[ars])
}

const READS: usize = 24;
const READ_LEN: usize = 4096;

#[test]
fn read_latency_on_an_idle_card_and_under_a_write_stream() -> Result<()> {
    let mut b = tb()?;
    // Idle card: 4 KiB reads one at a time, each to a row of its own.
    let mut idle = Vec::new();
    for i in 0..READS as u64 {
        idle.push(first_beat_latency(
            &mut b,
            0x0010_0000 + i * 0x2_0000,
            READ_LEN,
        )?);
        b.card.ticks(200)?;
    }
    // The same reads while the DMA port writes 8 MiB at full rate elsewhere.
    let stream = vec![0x5au8; 8 << 20];
    let t = b.card.dma().start_write(1, 0x4000_0000, &stream)?;
    let w = b.w.clone();
    b.card
        .run_until(10_000, "the write stream", |_| Ok(w.borrow().len() > 4096))?;
    let mut loaded = Vec::new();
    for i in 0..READS as u64 {
        loaded.push(first_beat_latency(
            &mut b,
            0x0010_0000 + i * 0x2_0000,
            READ_LEN,
        )?);
        b.card.ticks(200)?;
    }
    let still_writing = !b.card.dma().is_done(t);
    b.card.dma().clone().wait(b.card.env_mut(), t)?;
    assert!(still_writing, "the write stream ran through every read");
    let (imin, imean, imax) = stats(&idle);
    let (lmin, lmean, lmax) = stats(&loaded);
    println!(
        "first-beat read latency, idle: {:.0} / {:.0} / {:.0} ns (min / mean / max); under a full-rate write stream: {:.0} / {:.0} / {:.0} ns",
        imin as f64 * NS_PER_CYCLE,
        imean * NS_PER_CYCLE,
        imax as f64 * NS_PER_CYCLE,
        lmin as f64 * NS_PER_CYCLE,
        lmean * NS_PER_CYCLE,
        lmax as f64 * NS_PER_CYCLE,
    );
    // The DDR3 model alone takes 2 + CL + CTRL_LAT ddr_clk cycles for an idle row hit
    // (ddr3_model.v, defaults 3 and 20); the path's two clock crossings come on top.
    let ddr_min_ns = (2 + 3 + 20) as f64 * DDR_NS;
    assert!(
        imin as f64 * NS_PER_CYCLE >= ddr_min_ns,
        "an idle read cannot beat the DDR3 model's own {ddr_min_ns} ns"
    );
    // Idle reads differ only by what their bank needs (a conflict's T_RP + T_RCD = 6 cycles)
    // and by a refresh in the way (T_RP + T_RFC + T_RCD = 38), plus a cycle of each clock
    // where the crossings sample.
    let spread_ns = (6 + 38) as f64 * DDR_NS + NS_PER_CYCLE + DDR_NS;
    assert!(
        (imax - imin) as f64 * NS_PER_CYCLE <= spread_ns,
        "idle latencies spread over more than {spread_ns} ns"
    );
    // Writes cost the reads: behind a write that holds the DDR command slot a read waits, and
    // after it pays T_WTR.
    assert!(lmean > imean, "the write stream must slow the reads down");
    // A write holds the slot at most HOLD_BEATS (256) beats plus the burst it is in (64),
    // paced at worst by the port (four axi_aclk cycles per 512-bit beat), then the read pays
    // T_WTR, and a refresh may come on top.
    let hold_ns = (256.0 + 64.0) * 4.0 * NS_PER_CYCLE + (5 + 38) as f64 * DDR_NS;
    assert!(
        (lmax - imax) as f64 * NS_PER_CYCLE <= hold_ns,
        "a read waited longer than the write hold allows ({hold_ns} ns)"
    );
    assert!(
        b.card.env().violations().is_empty(),
        "{:?}",
        b.card.env().violations()
    );
    Ok(())
}

/// Bytes per second of the handshakes at `edges` that fall in `start..end`.
fn rate(edges: impl Iterator<Item = u64>, start: u64, end: u64) -> f64 {
    let n = edges.filter(|e| (start..end).contains(e)).count();
    (n * BEAT) as f64 / ((end - start) as f64 * NS_PER_CYCLE) * 1e3
}

const STREAM: usize = 2 << 20;

#[test]
fn read_and_write_streams_alone_and_together() -> Result<()> {
    // Alone.
    let mut b = tb()?;
    let t = b.card.dma().start_read(1, 0, STREAM)?;
    b.card.dma().clone().wait(b.card.env_mut(), t)?;
    let read_alone = {
        let l = b.log.borrow();
        rate(
            l.r.iter().map(|r| r.cycle),
            l.ar[0],
            l.r.last().map_or(0, |r| r.cycle),
        )
    };
    let mut b = tb()?;
    let t = b
        .card
        .dma()
        .start_write(1, 0x4000_0000, &vec![0xa5; STREAM])?;
    b.card.dma().clone().wait(b.card.env_mut(), t)?;
    let write_alone = {
        let l = b.log.borrow();
        let w = b.w.borrow();
        rate(
            w.iter().copied(),
            l.aw[0],
            l.b.last().map_or(0, |r| r.cycle),
        )
    };
    // Together.
    let mut b = tb()?;
    let r = b.card.dma().start_read(1, 0, STREAM)?;
    let w = b
        .card
        .dma()
        .start_write(2, 0x4000_0000, &vec![0xa5; STREAM])?;
    b.card.dma().clone().wait(b.card.env_mut(), r)?;
    b.card.dma().clone().wait(b.card.env_mut(), w)?;
    let (read_both, write_both) = {
        let l = b.log.borrow();
        let wl = b.w.borrow();
        let start = l.r[0].cycle.max(wl[0]) + 1000;
        let end =
            l.r.last()
                .map_or(0, |r| r.cycle)
                .min(*wl.last().unwrap_or(&0))
                - 1000;
        (
            rate(l.r.iter().map(|r| r.cycle), start, end),
            rate(wl.iter().copied(), start, end),
        )
    };
    println!(
        "read alone {read_alone:.0} MB/s, write alone {write_alone:.0} MB/s; together: read {read_both:.0} + write {write_both:.0} = {:.0} MB/s (port ceiling {PORT_MBS:.0} MB/s each way)",
        read_both + write_both
    );
    // Each stream alone runs at the port's ceiling, within a few percent for the bursts'
    // set-up.
    for (what, v) in [("read", read_alone), ("write", write_alone)] {
        assert!(
            (0.95 * PORT_MBS..=PORT_MBS).contains(&v),
            "{what} alone: {v:.0} MB/s against the port's {PORT_MBS:.0}"
        );
    }
    // Together they share the DDR3 device, which has 12.8 GB/s for the port's 2 x 4 GB/s:
    // each gets less than alone, both together more than either alone, and reads, which go
    // first and keep the slot while more read bursts wait, get at least as much as writes.
    assert!(read_both <= read_alone && write_both <= write_alone);
    assert!(
        read_both + write_both > read_alone.max(write_alone),
        "two streams must get more out of the DDR than one"
    );
    assert!(
        read_both >= write_both,
        "reads have priority: {read_both:.0} against {write_both:.0} MB/s"
    );
    assert!(
        b.card.env().violations().is_empty(),
        "{:?}",
        b.card.env().violations()
    );
    Ok(())
}
