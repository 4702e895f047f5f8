//! What-if settings move the mechanism they name, on the simulated card: more C2H request IDs
//! lift a read that the ID window bounds and leave writes alone; a Gen1 link slows the
//! link-bound part of a write by half and leaves the fixed costs; poll mode reaches the driver
//! and transfers stay correct; the ordered inbound server leaves the rows of one direction and
//! the serial row where the model without it has them. Each expectation is computed from the mechanism
//! (`docs/timing-model.md`) and a row of the unchanged card, never from the changed card.

use xdma::sim::{Control, SimConfig};
use xdma::{Card, Config, Direction, Xdma};
use xdma_bench::measure;
use xdma_bench::scenario::{self, StreamMode};
use xdma_bench::sweep;
use xdma_bench::whatif::{self, Setting};

/// A simulated card of the default configuration with `settings` applied.
fn open(settings: &[(&str, &str)]) -> (Xdma, SimConfig) {
    let s: Vec<Setting> = settings.iter().map(|(k, v)| Setting::new(*k, *v)).collect();
    let cfg = whatif::apply_all(&Config::default(), &s).expect("the settings are valid");
    let sim = SimConfig::from_config(&cfg).expect("checked");
    (Xdma::open(&cfg).expect("open the simulated card"), sim)
}

/// The duration in microseconds of one back-to-back transfer of `bytes` (one warm-up that
/// fills the queue, one counted, as the sweep measures), data checked.
fn us(card: &Xdma, dir: Direction, bytes: u64) -> f64 {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let ch = card
        .info()
        .mm_channel(dir)
        .expect("a memory-mapped channel");
    let samples = rt
        .block_on(measure::back_to_back(
            card,
            dir,
            ch,
            xdma::CardAddr(0),
            bytes as usize,
            1,
            sweep::QUEUE_DEPTH,
        ))
        .expect("the transfers run and their data matches");
    measure::best(&samples).expect("one sample").us
}

/// A fixed cost and a per-byte time through two sizes of one direction: t(N) = t0 + N / B,
/// as `xdma-bench fit` draws it. Returns (t0 in us, B in bytes per us = MB/s).
fn fit(card: &Xdma, dir: Direction, small: u64, large: u64) -> (f64, f64) {
    let (ts, tl) = (us(card, dir, small), us(card, dir, large));
    let b = (large - small) as f64 / (tl - ts);
    (tl - large as f64 / b, b)
}

/// The bytes per microsecond (MB/s) that one direction of the link carries for TLPs of
/// `payload` bytes with a header of `header` bytes: the line rate after its code, less the SKP
/// ordered sets (4 symbols every `skp_interval_symbols`), times the share of each TLP's wire
/// bytes that is payload (2 framing, 2 sequence number, the header, the payload, 4 LCRC), as
/// `docs/timing-model.md` ("Shared resources: the link") counts them.
fn link_mb_s(sim: &SimConfig, payload: u32, header: u32) -> f64 {
    let l = &sim.timing.link;
    // Gen1 and Gen2 run 2.5 and 5 GT/s per lane with 8b/10b (PCIe Base Specification); the
    // tests below use only these two.
    let gt_s = match l.generation {
        1 => 2.5,
        2 => 5.0,
        g => panic!("this test knows Gen1 and Gen2, not Gen{g}"),
    };
    let raw = gt_s * 1e3 * 0.8 * f64::from(l.lanes) / 8.0;
    let skp = 1.0 - 4.0 / l.skp_interval_symbols;
    let wire = 2 + 2 + header + payload + 4;
    raw * skp * f64::from(payload) / f64::from(wire)
}

/// The memory write TLP's header with a 64-bit address: 4 dwords; a completion's: 3.
const HDR_MEM64: u32 = 16;
const HDR_CPL: u32 = 12;

#[test]
fn more_c2h_request_ids_raise_a_window_bound_read_and_leave_writes_alone() {
    const N: u64 = 256 << 10;
    // The acknowledge window is the independent inbound path's mechanism: with the ordered
    // server (the default) the read ceiling is the server's drain of posted writes, which
    // more IDs do not lift (docs/timing-model.md, "The read ceiling").
    const INDEPENDENT: (&str, &str) = ("timing.root.inbound", "independent");
    let (base, sim8) = open(&[("ip.c2h_request_ids", "8"), INDEPENDENT]);
    // With 8 IDs the read's per-byte time is the window's: 8 IDs of one max payload each over
    // an ID's life, held until the root port's acknowledge.
    let (t0, window8) = fit(&base, Direction::C2H, 128 << 10, N);
    let read8 = N as f64 / us(&base, Direction::C2H, N);
    let write8 = N as f64 / us(&base, Direction::H2C, N);
    drop(base);

    let (more, sim16) = open(&[("ip.c2h_request_ids", "16"), INDEPENDENT]);
    assert_eq!(sim16.ip.c2h_request_ids, 2 * sim8.ip.c2h_request_ids);
    let read16 = N as f64 / us(&more, Direction::C2H, N);
    let write16 = N as f64 / us(&more, Direction::H2C, N);

    // Twice the IDs over the same life is twice the window, until the link's rate of
    // max-payload memory writes rules; the fixed cost (driver, doorbell, descriptor fetch,
    // interrupt) stays.
    let link = link_mb_s(&sim16, sim16.timing.link.max_payload, HDR_MEM64);
    let ceiling = (2.0 * window8).min(link);
    let expect = N as f64 / (t0 + N as f64 / ceiling);
    eprintln!(
        "C2H {N} B: 8 IDs {read8:.1} MB/s (window {window8:.0} MB/s, fixed {t0:.2} us); \
         16 IDs {read16:.1} MB/s, expected {expect:.1} (ceiling {ceiling:.0} MB/s, link {link:.0}); \
         H2C {write8:.1} -> {write16:.1} MB/s"
    );
    assert!(
        read16 > 1.2 * read8,
        "16 IDs must lift the read clearly: {read8:.1} -> {read16:.1} MB/s"
    );
    // Within 5 % below and 2 % above: an ID lives longer once the link queues the writes, and
    // the acknowledges, write-back and interrupt share the upstream link, which only slow the
    // read; the fixed cost was fitted with 8 IDs, whose window fills and drains a little
    // differently from 16, which moves the expectation by a little either way.
    let r = read16 / expect;
    assert!(
        (0.95..=1.02).contains(&r),
        "16 IDs: {read16:.1} MB/s against {expect:.1} expected ({r:.3})"
    );
    // A write holds no C2H ID: its rate stays.
    assert!(
        (write16 / write8 - 1.0).abs() <= 0.01,
        "H2C moved with the C2H IDs: {write8:.1} -> {write16:.1} MB/s"
    );
}

/// The mean of a serial row: `rounds` writes of 4 KiB, each read back, one call at a time.
fn serial_us(card: &Xdma, rounds: usize) -> f64 {
    let samples =
        measure::serial(card, xdma::CardAddr(0), 4096, rounds).expect("the serial row runs");
    samples.iter().map(|s| s.us).sum::<f64>() / samples.len() as f64
}

#[test]
fn the_ordered_server_leaves_the_solo_rows_and_the_serial_row_where_they_were() {
    // The server's costs were fitted on the solo rows (docs/timing-model.md, "The inbound
    // server"): one direction alone saturates it at the board's own rate, which is the rate the
    // model without it reached by the link (writes) and the acknowledge window (reads), so a
    // row of one direction may move only by the difference of the two fits (the read ceiling's
    // 2510 MB/s against the window's 2524, 0.6 %) and by the queue that one transfer's own
    // requests make (16 writes of 256 bytes arrive at the link's 3646 MB/s and leave at the
    // server's 2512). Both stay under 2 %. A serial caller finds the server idle, so the serial
    // row moves only by that queue of its own requests, under 1 %.
    let (ordered, _) = open(&[("timing.root.inbound", "ordered")]);
    let (independent, _) = open(&[("timing.root.inbound", "independent")]);
    for dir in [Direction::H2C, Direction::C2H] {
        for bytes in [4u64 << 10, 1 << 20] {
            let (o, i) = (us(&ordered, dir, bytes), us(&independent, dir, bytes));
            eprintln!("{dir:?} {bytes} B: ordered {o:.2} us, independent {i:.2} us");
            assert!(
                (o / i - 1.0).abs() <= 0.02,
                "{dir:?} {bytes} B moved by {:+.2} %: {i:.2} -> {o:.2} us",
                100.0 * (o / i - 1.0)
            );
        }
    }
    let (o, i) = (serial_us(&ordered, 4), serial_us(&independent, 4));
    eprintln!("serial 4 KiB: ordered {o:.2} us, independent {i:.2} us");
    assert!(
        (o / i - 1.0).abs() <= 0.01,
        "the serial row moved by {:+.2} %: {i:.2} -> {o:.2} us",
        100.0 * (o / i - 1.0)
    );
}

#[test]
fn a_gen1_link_halves_the_link_bound_part_of_a_large_write() {
    const N: u64 = 256 << 10;
    let (gen2, _) = open(&[("timing.link.generation", "2")]);
    let (t0, _) = fit(&gen2, Direction::H2C, 128 << 10, N);
    let t2 = us(&gen2, Direction::H2C, N);
    drop(gen2);

    let (gen1, sim1) = open(&[("timing.link.generation", "1")]);
    assert_eq!(sim1.timing.link.generation, 1);
    let t1 = us(&gen1, Direction::H2C, N);

    // A write's data comes down the link as completions of `read_completion_boundary` bytes;
    // at Gen1 the link carries them at half the Gen2 rate, and H2C is then link-bound. The
    // fixed cost t0 (the driver's start and interrupt handling, latencies) does not halve, so
    // the expected time is t0 + N / (the Gen1 completion rate), and the throughput ratio is a
    // bit above 0.5.
    let rcb = sim1.timing.link.read_completion_boundary;
    let gen1_link = link_mb_s(&sim1, rcb, HDR_CPL);
    let expect = t2 / (t0 + N as f64 / gen1_link);
    let ratio = t2 / t1;
    eprintln!(
        "H2C {N} B: Gen2 {:.1} MB/s, Gen1 {:.1} MB/s: ratio {ratio:.3}, expected {expect:.3} \
         (fixed {t0:.2} us, Gen1 completions {gen1_link:.0} MB/s)",
        N as f64 / t2,
        N as f64 / t1
    );
    // The ratio lies between 0.5 (everything halves) and 0.6: with a fixed share f of the
    // Gen2 time that stays and the rest halving, the ratio is 1 / (2 - f), and 0.6 would take
    // a fixed cost of a third of the Gen2 time, far more than the fit's t0.
    assert!((0.5..=0.6).contains(&ratio), "Gen1/Gen2 = {ratio:.3}");
    // Within 3 % below and 1 % above the expectation: the acknowledge DLLPs, the descriptor
    // fetch and the doorbell also cross the slower link, which only lowers the ratio.
    let r = ratio / expect;
    assert!(
        (0.97..=1.01).contains(&r),
        "Gen1/Gen2 = {ratio:.3} against {expect:.3} expected"
    );
}

/// The engine's control register as PG195 lays it out: H2C channel 0's at 0x0004 of the DMA
/// BAR, bit 26 `pollmode_wb_enable`, bits 1 and 2 the interrupts on a stopped and on a
/// completed descriptor.
const H2C0_CONTROL: u64 = 0x0004;
const POLLMODE_WB_ENABLE: u32 = 1 << 26;
const IE_DESCRIPTOR_DONE: u32 = (1 << 1) | (1 << 2);

fn h2c0_control(card: &Xdma) -> u32 {
    match card {
        Xdma::Sim(s) => s
            .control(Control::Read(H2C0_CONTROL))
            .expect("DMA BAR read"),
        #[allow(unreachable_patterns)]
        _ => panic!("a simulated card"),
    }
}

/// `docs/timing-model.md` says only that in poll mode the engine's write-back, not the MSI-X
/// message, is the posted write that tells the host a transfer ended; it says nothing of
/// which is faster. So this checks that the setting reaches the driver (the engines run with
/// the write-back enabled and their completion interrupts off, as `xdma.ko` programs them in
/// poll mode), and that memory-mapped transfers and stream frames complete with their data
/// in both modes, not a direction of their timing.
#[test]
fn poll_mode_reaches_the_driver_and_transfers_complete_correctly() {
    for poll in [false, true] {
        let (card, sim) = open(&[("driver.poll_mode", if poll { "true" } else { "false" })]);
        assert_eq!(sim.driver.poll_mode, poll);
        let (w, r) = (
            us(&card, Direction::H2C, 64 << 10),
            us(&card, Direction::C2H, 64 << 10),
        );
        let s = scenario::streams(&card, 4096, 1, StreamMode::OneAtATime, 4, &|| {})
            .expect("GEN frames received and checked");
        assert_eq!(s.channels[0].frames, 4);
        let ctl = h2c0_control(&card);
        eprintln!(
            "poll_mode = {poll}: H2C 64 KiB {w:.2} us, C2H 64 KiB {r:.2} us, stream {:.2} us per frame, H2C 0 control {ctl:#010x}",
            s.channels[0].us_per_frame
        );
        assert_eq!(ctl & POLLMODE_WB_ENABLE != 0, poll, "control {ctl:#x}");
        assert_eq!(
            ctl & IE_DESCRIPTOR_DONE,
            if poll { 0 } else { IE_DESCRIPTOR_DONE },
            "control {ctl:#x}"
        );
    }
}

/// MIG's `TDM` arbitration gives reads and writes the DDR command port on alternate cycles:
/// 6.4 GB/s each, still above what the link brings one direction, so a write alone or a read
/// alone runs as under `RD_PRI_REG`. With both at once it changes how they share the port:
/// under `RD_PRI_REG` a direction whose data trickles in at the link's pace keeps the port for
/// up to 256 commands (16 KiB) while the other waits; under `TDM` neither waits more than a
/// cycle. On the reference board's memory path, where nothing buffers a burst ahead of MIG.
#[test]
fn tdm_changes_mixed_traffic_and_not_one_direction() {
    const N: u64 = 256 << 10;
    let mut seen = Vec::new();
    for scheme in ["rd-pri-reg", "tdm"] {
        let (card, sim) = open(&[("path", "reference"), ("ddr.arbitration", scheme)]);
        assert_eq!(sim.top, "sim_top_ref");
        let (w, r) = (us(&card, Direction::H2C, N), us(&card, Direction::C2H, N));
        let c = scenario::concurrent(
            &card,
            256 << 10,
            std::time::Duration::from_micros(800),
            &|_| {},
        )
        .expect("a write and a read at once");
        eprintln!(
            "{scheme}: H2C {N} B {w:.2} us, C2H {N} B {r:.2} us; at once H2C {:.1} + C2H {:.1} = {:.1} MB/s",
            c.h2c_mb_s, c.c2h_mb_s, c.total_mb_s
        );
        seen.push((w, r, c));
    }
    let ((w0, r0, c0), (w1, r1, c1)) = (seen[0], seen[1]);
    assert!(
        (w1 / w0 - 1.0).abs() < 0.01,
        "a write alone: {w0:.2} against {w1:.2} us"
    );
    assert!(
        (r1 / r0 - 1.0).abs() < 0.01,
        "a read alone: {r0:.2} against {r1:.2} us"
    );
    let moved = |a: f64, b: f64| (b / a - 1.0).abs();
    assert!(
        moved(c0.h2c_mb_s, c1.h2c_mb_s) > 0.02 || moved(c0.c2h_mb_s, c1.c2h_mb_s) > 0.02,
        "mixed traffic: H2C {:.1} -> {:.1}, C2H {:.1} -> {:.1} MB/s",
        c0.h2c_mb_s,
        c1.h2c_mb_s,
        c0.c2h_mb_s,
        c1.c2h_mb_s
    );
}

/// Columns of a what-if are only comparable if a configuration measures the same on every card
/// it opens: the concurrent scenario on three fresh cards in one process, with the heap's
/// state changed between them (the allocator then places a new `Vec` elsewhere within its
/// page), gives the same transfers to the picosecond.
#[test]
fn a_configuration_measures_the_same_on_every_fresh_card() {
    let mut seen = Vec::new();
    for run in 0..3usize {
        // A large block freed raises glibc's mmap threshold, and small live blocks shift where
        // the next heap allocation starts within its page.
        drop(vec![1u8; 3 << 20]);
        let _shift: Vec<Vec<u8>> = (0..run * 7 + 1).map(|i| vec![0u8; 48 + i * 16]).collect();
        let (card, _) = open(&[]);
        let c = scenario::concurrent(
            &card,
            256 << 10,
            std::time::Duration::from_micros(400),
            &|_| {},
        )
        .expect("a write and a read at once");
        eprintln!(
            "run {run}: H2C {} x {:.3} MB/s, C2H {} x {:.3} MB/s over {:.3} us",
            c.h2c_transfers, c.h2c_mb_s, c.c2h_transfers, c.c2h_mb_s, c.span_us
        );
        seen.push((
            c.h2c_transfers,
            c.c2h_transfers,
            c.h2c_mb_s,
            c.c2h_mb_s,
            c.span_us,
        ));
    }
    assert!(
        seen.windows(2).all(|w| w[0] == w[1]),
        "the same configuration measured differently on fresh cards: {seen:?}"
    );
}

// ------------------------------------------------------------------ the campaign's grid

/// The what-if grid of a campaign (`cargo xtask campaign --which what-if`): one test per point,
/// each on a card of its own, so that cargo-nextest spreads the points over shards. With
/// `CAMPAIGN_WHATIF=1` a point runs the reference scenarios (`whatif::Plan::reference`);
/// without it, one 4 KiB transfer each way, which keeps the per-push run short and still
/// checks that the point's settings open a card that moves data. With `CAMPAIGN_OUT` set, the
/// point's figures go to `<CAMPAIGN_OUT>/<test>.json`.
fn grid_point(test: &str, settings: &[(&str, &str)]) {
    let full = std::env::var("CAMPAIGN_WHATIF").ok().as_deref() == Some("1");
    let plan = if full {
        whatif::Plan::reference()
    } else {
        whatif::Plan {
            sizes: vec![4 << 10],
            concurrent: None,
            frames: None,
        }
    };
    let started = std::time::Instant::now();
    let (card, _) = open(settings);
    let measured = whatif::measure(&card, &plan, &mut |_| {}).expect("the point's scenarios run");
    let secs = started.elapsed().as_secs_f64();
    let shown: Vec<String> = measured
        .figures
        .iter()
        .map(|f| match f.mb_s {
            Some(v) => format!("{} {v:.1} MB/s", f.scenario),
            None => format!("{} -", f.scenario),
        })
        .collect();
    eprintln!(
        "{test} {settings:?}: {} ({:.6} s simulated, {secs:.1} s){}",
        shown.join(", "),
        measured.simulated_s,
        if full {
            ""
        } else {
            "; the reference scenarios run with CAMPAIGN_WHATIF=1"
        }
    );
    if let Some(out) = std::env::var_os(campaign::OUT_ENV).filter(|o| !o.is_empty()) {
        let record = campaign::Record::Whatif(campaign::WhatIfPoint {
            test: test.to_string(),
            settings: settings.iter().map(|(k, v)| format!("{k}={v}")).collect(),
            reference_plan: full,
            figures: measured
                .figures
                .iter()
                .map(|f| campaign::WhatIfFigure {
                    scenario: f.scenario.clone(),
                    mb_s: f.mb_s,
                })
                .collect(),
            skipped: measured.skipped.clone(),
            simulated_s: measured.simulated_s,
            secs,
        });
        campaign::write_record(std::path::Path::new(&out), &record)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    // Every scenario the plan names either measured a finite, positive rate or says why the
    // card could not run it.
    for f in &measured.figures {
        match f.mb_s {
            Some(v) => assert!(
                v.is_finite() && v > 0.0,
                "{test}: {} at {v} MB/s",
                f.scenario
            ),
            None => assert!(
                !measured.skipped.is_empty(),
                "{test}: {} has no figure and no reason",
                f.scenario
            ),
        }
    }
    assert!(measured.simulated_s > 0.0, "{test}: no simulated time");
}

/// One test per point of the grid, named so that `test(/^campaign_whatif_/)` takes them all.
macro_rules! grid {
    ($($name:ident: [$(($k:expr, $v:expr)),*];)*) => {
        $(
            #[test]
            fn $name() {
                grid_point(stringify!($name), &[$(($k, $v)),*]);
            }
        )*
    };
}

grid! {
    campaign_whatif_default: [];
    campaign_whatif_c2h_ids_16: [("ip.c2h_request_ids", "16")];
    campaign_whatif_c2h_ids_4: [("ip.c2h_request_ids", "4")];
    campaign_whatif_gen1: [("timing.link.generation", "1")];
    campaign_whatif_lanes_4: [("timing.link.lanes", "4")];
    campaign_whatif_poll_mode: [("driver.poll_mode", "true")];
    campaign_whatif_reference_path: [("path", "reference")];
    campaign_whatif_reference_tdm: [("path", "reference"), ("ddr.arbitration", "tdm")];
    campaign_whatif_inbound_independent: [("timing.root.inbound", "independent")];
    campaign_whatif_ordered_h2c_ids_4: [("timing.root.inbound", "ordered"), ("ip.h2c_request_ids", "4"), ("ip.c2h_request_ids", "8")];
    campaign_whatif_ordered_h2c_ids_8: [("timing.root.inbound", "ordered"), ("ip.h2c_request_ids", "8"), ("ip.c2h_request_ids", "8")];
    campaign_whatif_ordered_h2c_ids_16: [("timing.root.inbound", "ordered"), ("ip.h2c_request_ids", "16"), ("ip.c2h_request_ids", "8")];
}
