//! What each command prints on stdout without `--json`: its Markdown tables and the lines
//! around them.

use xdma::Direction;

use super::{PathRow, Predictions, SweepDoc};
use crate::measure::Mode;
use crate::rtt;
use crate::scenario::{self, StreamMode};
use crate::sweep::{Comparison, FitReport, Row};
use crate::whatif;

/// How the runs of a size were counted.
pub fn runs(runs: Option<usize>) -> String {
    match runs {
        Some(n) => format!("best of {n} after one warm-up"),
        None => "best of 5 (8 from 4 MiB) after one warm-up".into(),
    }
}

/// The timing mode, as a sentence.
pub fn mode(m: Mode) -> &'static str {
    match m {
        Mode::BackToBack => {
            "back-to-back (the next transfer of a direction queued while the previous one runs)"
        }
        Mode::Serial => "serial (a write, then a read, each after the previous one returned)",
    }
}

/// The sweep's rows, one per size with both directions.
pub fn sweep_table(rows: &[Row]) -> String {
    let mut sizes: Vec<u64> = rows.iter().map(|r| r.bytes).collect();
    sizes.dedup();
    let get = |b: u64, d: Direction| rows.iter().find(|r| r.bytes == b && r.dir == d);
    let mut s = String::from(
        "| block_bytes | write_mb_s | read_mb_s | write_us | read_us |\n| ---: | ---: | ---: | ---: | ---: |\n",
    );
    for b in sizes {
        let (w, r) = (get(b, Direction::H2C), get(b, Direction::C2H));
        let f = |x: Option<&Row>, g: fn(&Row) -> f64, p: usize| {
            x.map_or("-".to_string(), |r| format!("{:.p$}", g(r)))
        };
        s.push_str(&format!(
            "| {b} | {} | {} | {} | {} |\n",
            f(w, |r| r.mb_s, 1),
            f(r, |r| r.mb_s, 1),
            f(w, |r| r.us, 2),
            f(r, |r| r.us, 2)
        ));
    }
    s
}

/// `sweep`: the mode, the runs and the table.
pub fn sweep(doc: &SweepDoc) -> String {
    format!(
        "sweep: {}, {}, data checked every run\n\n{}",
        mode(doc.mode),
        doc.runs,
        sweep_table(&doc.rows)
    )
}

/// `fit`: the model per direction, then every size against it.
pub fn fit(f: &FitReport, doc: &SweepDoc) -> String {
    let mut s = format!(
        "fit: t(N) = t0 + N / B through the two ends of a {} sweep ({}), checked at every size between\n\n\
         | direction | t0 (us) | ns/B | B (MB/s) | median marginal (MB/s) | largest error in the middle |\n\
         | --- | ---: | ---: | ---: | ---: | ---: |\n",
        match doc.mode {
            Mode::BackToBack => "back-to-back",
            Mode::Serial => "serial",
        },
        doc.runs
    );
    for d in [Direction::H2C, Direction::C2H] {
        let x = f.dir(d);
        s.push_str(&format!(
            "| {d} ({} to {} B) | {:.2} | {:.4} | {:.0} | {} | {} |\n",
            x.ends.0,
            x.ends.1,
            x.t0_us,
            x.ns_per_byte,
            x.mb_s,
            x.median_marginal_mb_s
                .map_or("-".into(), |m| format!("{m:.0}")),
            x.max_middle_error_pct
                .map_or("-".into(), |e| format!("{e:+.1} %"))
        ));
    }
    s.push_str("\n| direction | bytes | measured (us) | model (us) | error | marginal (ns/B) |\n| --- | ---: | ---: | ---: | ---: | ---: |\n");
    for r in &f.rows {
        s.push_str(&format!(
            "| {} | {} | {:.2} | {:.2} | {:+.1} % | {} |\n",
            r.dir,
            r.bytes,
            r.measured_us,
            r.model_us,
            r.error_pct,
            r.marginal_ns_per_byte
                .map_or("-".into(), |m| format!("{m:.4}"))
        ));
    }
    s
}

/// The comparison's rows and its largest error.
pub fn compare_table(c: &Comparison) -> String {
    let mut s = String::from(
        "| direction | bytes | measured (MB/s) | reference (MB/s) | error |\n| --- | ---: | ---: | ---: | ---: |\n",
    );
    for r in &c.rows {
        s.push_str(&format!(
            "| {} | {} | {:.1} | {:.1} | {:+.1} % |\n",
            r.dir, r.bytes, r.measured_mb_s, r.reference_mb_s, r.error_pct
        ));
    }
    if let Some(worst) = c
        .rows
        .iter()
        .max_by(|a, b| a.error_pct.abs().total_cmp(&b.error_pct.abs()))
    {
        s.push_str(&format!(
            "\nlargest error: {:+.1} % ({} {} B)\n",
            worst.error_pct, worst.dir, worst.bytes
        ));
    }
    s
}

/// `compare`: the sweep against the reference named `name`.
pub fn compare(c: &Comparison, doc: &SweepDoc, name: &str) -> String {
    format!(
        "compare: {} against {name}; {}\n\n{}",
        mode(doc.mode),
        doc.runs,
        compare_table(c)
    )
}

/// `concurrent`: both directions and the total, for a run of `seconds`.
pub fn concurrent(r: &scenario::Concurrent, seconds: f64) -> String {
    format!(
        "concurrent: one write thread and one read thread of {} B at once, each call after its previous one returned, for {seconds} s of the backend's clock\n\n| | MB/s | transfers |\n| --- | ---: | ---: |\n| H2C | {:.1} | {} |\n| C2H | {:.1} | {} |\n| total | {:.1} | |\n",
        r.block, r.h2c_mb_s, r.h2c_transfers, r.c2h_mb_s, r.c2h_transfers, r.total_mb_s
    )
}

/// `stream`: every channel and the total.
pub fn stream(r: &scenario::Streams, m: StreamMode) -> String {
    let mut s = format!(
        "stream: GEN frames of {} B on {} C2H stream(s) at once, {}, every frame checked\n\n| C2H channel | frames | MB/s | us per frame |\n| --- | ---: | ---: | ---: |\n",
        r.frame,
        r.channels.len(),
        match m {
            StreamMode::OneAtATime => "one receive posted at a time",
            StreamMode::Queued => "receives kept queued",
        }
    );
    for ch in &r.channels {
        s.push_str(&format!(
            "| {} | {} | {:.1} | {:.3} |\n",
            ch.channel, ch.frames, ch.mb_s, ch.us_per_frame
        ));
    }
    s.push_str(&format!("| total | | {:.1} | |\n", r.total_mb_s));
    s
}

/// `rtt`: every segment, the tiers and the stability verdict.
pub fn rtt(r: &rtt::Report) -> String {
    let mut s = format!(
        "rtt: ECHO stop-and-wait with {} B frames{}\n\n| segment | frames | period (us) | RTT P50 (us) | RTT P99 (us) | overhead (us) | MB/s | CPU | MHz |\n| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
        r.frame,
        r.affinity
            .map_or(String::new(), |c| format!(", loop pinned to CPU {c}"))
    );
    for g in &r.segments {
        s.push_str(&format!(
            "| {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.1} | {} | {} |\n",
            g.index,
            g.frames,
            g.period_us,
            g.rtt_p50_us,
            g.rtt_p99_us,
            g.overhead_us,
            g.mb_s,
            g.cpu.map_or("-".into(), |c| c.to_string()),
            g.cpu_mhz.map_or("-".into(), |m| format!("{m:.0}"))
        ));
    }
    s.push_str("\ntiers (segments within 3 % of their fastest):\n");
    for (i, t) in r.tiers.iter().enumerate() {
        s.push_str(&format!(
            "- tier {i}: segments {:?}, mean period {:.3} us ({:.3}x the fast tier){}\n",
            t.tier.segments,
            t.tier.mean,
            t.period_ratio,
            match (t.freq_ratio, t.explained_by_cpu_clock) {
                (Some(f), Some(ok)) => format!(
                    ", clock ratio {f:.3}: {}",
                    if ok {
                        "the CPU clock explains it"
                    } else {
                        "not the CPU clock"
                    }
                ),
                _ => String::new(),
            }
        ));
    }
    s.push_str(&format!(
        "CPU tiers: {}\nstability: the last segment runs at {:.1} % of the fast tier: {}\n",
        r.cpu_tiers,
        r.last_vs_fastest_pct,
        if r.stable {
            "stable (>= 98 %)"
        } else {
            "NOT stable (< 98 %)"
        }
    ));
    s
}

/// `paths`: each direction and size on both memory paths.
pub fn paths(rows: &[PathRow]) -> String {
    let mut text = String::from(
        "paths: the block sweep on the reference board's memory path (XDMA -> SmartConnect -> MIG) and on the card's own (card_core), back to back\n\n\
         | direction | bytes | reference path (MB/s) | card path (MB/s) | card's cost |\n| --- | ---: | ---: | ---: | ---: |\n",
    );
    for r in rows {
        text.push_str(&format!(
            "| {} | {} | {:.1} | {:.1} | {:+.1} % |\n",
            r.dir, r.bytes, r.reference_path_mb_s, r.card_path_mb_s, r.cost_pct
        ));
    }
    text
}

/// `predict`: one row per held-back scenario with the command that runs it alone, the
/// scenarios run for `seconds` and `frames` as given and the LOOP rate over `loop_frames`.
pub fn predict(
    p: &Predictions,
    backend: &str,
    seconds: f64,
    frames: usize,
    loop_frames: u32,
) -> String {
    let per_ch = |r: &scenario::Streams| {
        r.channels
            .iter()
            .map(|ch| {
                format!(
                    "C2H {}: {:.1} MB/s ({:.2} us per frame)",
                    ch.channel, ch.mb_s, ch.us_per_frame
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    let lp = match &p.loop_4132 {
        Some(lp) => format!(
            "{:.4} of 16 B per cycle ({:.1} MB/s at 250 MHz; {} frames in {} cycles)",
            lp.fraction_of_16_bytes_per_cycle, lp.mb_s_at_250_mhz, lp.frames, lp.cycles
        ),
        None => format!("- (the {backend} backend has no RTL to measure it on)"),
    };
    let (conc, one, two) = (&p.concurrent, &p.one_stream, &p.two_streams);
    format!(
        "| scenario | {backend} card | command |\n| --- | --- | --- |\n\
         | one 1 MiB write thread and one 1 MiB read thread at once | H2C {:.1} MB/s, C2H {:.1} MB/s, total {:.1} MB/s | `xdma-bench concurrent --block 1048576 --seconds {seconds}` |\n\
         | 4096 B GEN frames on one C2H stream, received one at a time | {}; total {:.1} MB/s | `xdma-bench stream --frame 4096 --channels 1 --mode one-at-a-time --frames {frames}` |\n\
         | 4096 B GEN frames on both C2H streams at once, each received one at a time | {}; total {:.1} MB/s | `xdma-bench stream --frame 4096 --channels 2 --mode one-at-a-time --frames {frames}` |\n\
         | LOOP with 4132 B frames, the card's own rate (RTL, C2H always ready) | {lp} | `cargo run -p rtl-tests --example loop_rate -- 4132 {loop_frames}` |\n",
        conc.h2c_mb_s,
        conc.c2h_mb_s,
        conc.total_mb_s,
        per_ch(one),
        one.total_mb_s,
        per_ch(two),
        two.total_mb_s,
    )
}

/// `predict --set` or `--sweep`: what ran, then the what-if table.
pub fn what_if(plan: &whatif::Plan, t: &whatif::Table) -> String {
    let mut scenarios = Vec::new();
    if !plan.sizes.is_empty() {
        scenarios.push(format!(
            "a block sweep of {} B, both directions, back to back, one warm-up and one counted run",
            plan.sizes
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some(d) = plan.concurrent {
        scenarios.push(format!(
            "a {} B write thread and a {} B read thread at once for {} s",
            whatif::CONCURRENT_BLOCK,
            whatif::CONCURRENT_BLOCK,
            d.as_secs_f64()
        ));
    }
    if let Some(n) = plan.frames {
        scenarios.push(format!(
            "{n} GEN frames of {} B per stream, received one at a time, on one C2H stream and then on two",
            whatif::STREAM_FRAME
        ));
    }
    format!(
        "what-if: {}; each configuration on a card of its own, every transfer's data checked; changes against the first column\n\n{}",
        scenarios.join("; "),
        t.markdown()
    )
}
