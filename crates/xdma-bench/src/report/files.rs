//! What `--out DIR` writes for each command: its CSV files and SVG plots (and, for `sweep`, the
//! sweep as JSON for `fit --from` and `compare --from`). Each function returns the paths it
//! wrote.

use std::path::{Path, PathBuf};

use xdma::{Direction, Error, Result};

use super::{bar_plot, line_plot, write, Series, SweepDoc, XAxis};
use crate::scenario::{self, StreamMode};
use crate::sweep::{self, Comparison, FitReport, Row};
use crate::{reference, rtt, whatif};

/// Throughput against block size, one line per direction.
fn throughput_series(rows: &[Row], label: &str, reference: bool, colour0: usize) -> Vec<Series> {
    [Direction::H2C, Direction::C2H]
        .iter()
        .enumerate()
        .map(|(i, &d)| Series {
            name: format!("{label} {d}"),
            points: sweep::points(rows, d)
                .into_iter()
                .map(|(n, us)| (n as f64, n as f64 / us))
                .collect(),
            reference,
            colour: colour0 + i,
        })
        .collect()
}

/// A reference table's rows as sweep rows, both directions.
fn reference_rows(reference: &[reference::Row]) -> Vec<Row> {
    reference
        .iter()
        .flat_map(|r| {
            [Direction::H2C, Direction::C2H].map(|dir| Row {
                dir,
                bytes: r.bytes,
                mb_s: r.mb_s(dir),
                us: r.bytes as f64 / r.mb_s(dir),
            })
        })
        .collect()
}

/// `sweep`: sweep.csv, sweep.json (the document `--from` reads) and sweep.svg.
pub fn sweep(dir: &Path, doc: &SweepDoc) -> Result<Vec<PathBuf>> {
    let mut paths = vec![
        write(dir, "sweep.csv", &sweep::write_csv(&doc.rows))?,
        write(
            dir,
            "sweep.json",
            &serde_json::to_string_pretty(doc).map_err(|e| Error::Backend(format!("JSON: {e}")))?,
        )?,
    ];
    let svg = dir.join("sweep.svg");
    line_plot(
        &svg,
        &format!("Throughput against block size ({} card)", doc.meta.backend),
        XAxis::Bytes,
        "block size",
        "MB/s",
        &throughput_series(&doc.rows, &doc.meta.backend, false, 0),
    )?;
    paths.push(svg);
    Ok(paths)
}

/// The fit's rows as CSV.
pub fn fit_csv(f: &FitReport) -> String {
    let mut csv = String::from("dir,bytes,measured_us,model_us,error_pct,marginal_ns_per_byte\n");
    for r in &f.rows {
        csv.push_str(&format!(
            "{},{},{:.4},{:.4},{:.3},{}\n",
            r.dir.to_string().to_ascii_lowercase(),
            r.bytes,
            r.measured_us,
            r.model_us,
            r.error_pct,
            r.marginal_ns_per_byte
                .map_or(String::new(), |m| format!("{m:.5}"))
        ));
    }
    csv
}

/// `fit`: fit.csv and fit.svg, the measured throughput with the model's beside it.
pub fn fit(dir: &Path, f: &FitReport, doc: &SweepDoc) -> Result<Vec<PathBuf>> {
    let mut paths = vec![write(dir, "fit.csv", &fit_csv(f))?];
    let mut series = throughput_series(&doc.rows, "measured", false, 0);
    for (i, d) in [Direction::H2C, Direction::C2H].into_iter().enumerate() {
        let model = f.dir(d);
        series.push(Series {
            name: format!(
                "model {d}: {:.1} us + N / {:.0} MB/s",
                model.t0_us, model.mb_s
            ),
            points: f
                .rows
                .iter()
                .filter(|r| r.dir == d)
                .map(|r| (r.bytes as f64, r.bytes as f64 / r.model_us))
                .collect(),
            reference: true,
            colour: i,
        });
    }
    let svg = dir.join("fit.svg");
    line_plot(
        &svg,
        "Measured throughput and the two-point model t(N) = t0 + N/B",
        XAxis::Bytes,
        "block size",
        "MB/s",
        &series,
    )?;
    paths.push(svg);
    Ok(paths)
}

/// The comparison's rows as CSV.
pub fn compare_csv(c: &Comparison) -> String {
    let mut csv = String::from("dir,bytes,measured_mb_s,reference_mb_s,error_pct\n");
    for r in &c.rows {
        csv.push_str(&format!(
            "{},{},{:.3},{:.3},{:.3}\n",
            r.dir.to_string().to_ascii_lowercase(),
            r.bytes,
            r.measured_mb_s,
            r.reference_mb_s,
            r.error_pct
        ));
    }
    csv
}

/// `compare`: compare.csv, compare.md and compare.svg, the sweep beside the reference's rows.
pub fn compare(
    dir: &Path,
    c: &Comparison,
    doc: &SweepDoc,
    reference: &[reference::Row],
) -> Result<Vec<PathBuf>> {
    let mut paths = vec![
        write(dir, "compare.csv", &compare_csv(c))?,
        write(dir, "compare.md", &super::text::compare_table(c))?,
    ];
    let mut series = throughput_series(&doc.rows, &format!("{} card", doc.meta.backend), false, 0);
    series.extend(throughput_series(
        &reference_rows(reference),
        "reference board",
        true,
        0,
    ));
    let svg = dir.join("compare.svg");
    line_plot(
        &svg,
        &format!(
            "Throughput against block size: {} card beside the reference board",
            doc.meta.backend
        ),
        XAxis::Bytes,
        "block size",
        "MB/s",
        &series,
    )?;
    paths.push(svg);
    Ok(paths)
}

/// `concurrent`: concurrent.csv and a bar per direction and the total.
pub fn concurrent(dir: &Path, r: &scenario::Concurrent) -> Result<Vec<PathBuf>> {
    let csv = format!(
        "block,h2c_transfers,c2h_transfers,h2c_mb_s,c2h_mb_s,total_mb_s\n{},{},{},{:.3},{:.3},{:.3}\n",
        r.block, r.h2c_transfers, r.c2h_transfers, r.h2c_mb_s, r.c2h_mb_s, r.total_mb_s
    );
    let mut paths = vec![write(dir, "concurrent.csv", &csv)?];
    let svg = dir.join("concurrent.svg");
    bar_plot(
        &svg,
        &format!("A write and a read of {} B at once", r.block),
        "MB/s",
        &[
            ("H2C".into(), r.h2c_mb_s),
            ("C2H".into(), r.c2h_mb_s),
            ("total".into(), r.total_mb_s),
        ],
    )?;
    paths.push(svg);
    Ok(paths)
}

/// `stream`: stream.csv and a bar per channel and the total.
pub fn stream(dir: &Path, r: &scenario::Streams, m: StreamMode) -> Result<Vec<PathBuf>> {
    let mut csv = String::from("channel,frames,mb_s,us_per_frame\n");
    for ch in &r.channels {
        csv.push_str(&format!(
            "{},{},{:.3},{:.4}\n",
            ch.channel, ch.frames, ch.mb_s, ch.us_per_frame
        ));
    }
    let mut paths = vec![write(dir, "stream.csv", &csv)?];
    let svg = dir.join("stream.svg");
    let mut bars: Vec<(String, f64)> = r
        .channels
        .iter()
        .map(|ch| (format!("C2H {}", ch.channel), ch.mb_s))
        .collect();
    bars.push(("total".into(), r.total_mb_s));
    bar_plot(
        &svg,
        &format!("GEN frames of {} B, {:?}", r.frame, m),
        "MB/s",
        &bars,
    )?;
    paths.push(svg);
    Ok(paths)
}

/// `rtt`: rtt.csv and the period and round trip per segment.
pub fn rtt(dir: &Path, r: &rtt::Report) -> Result<Vec<PathBuf>> {
    let mut csv = String::from(
        "segment,frames,period_us,rtt_p50_us,rtt_p99_us,overhead_us,mb_s,cpu,cpu_mhz\n",
    );
    for s in &r.segments {
        csv.push_str(&format!(
            "{},{},{:.4},{:.4},{:.4},{:.4},{:.3},{},{}\n",
            s.index,
            s.frames,
            s.period_us,
            s.rtt_p50_us,
            s.rtt_p99_us,
            s.overhead_us,
            s.mb_s,
            s.cpu.map_or(String::new(), |c| c.to_string()),
            s.cpu_mhz.map_or(String::new(), |m| format!("{m:.0}"))
        ));
    }
    let mut paths = vec![write(dir, "rtt.csv", &csv)?];
    let line = |name: &str, f: fn(&rtt::Segment) -> f64, colour| Series {
        name: name.into(),
        points: r.segments.iter().map(|s| (s.index as f64, f(s))).collect(),
        reference: false,
        colour,
    };
    let svg = dir.join("rtt.svg");
    line_plot(
        &svg,
        &format!("ECHO round trip of {} B frames, per segment", r.frame),
        XAxis::Linear,
        "segment",
        "us",
        &[
            line("period", |s| s.period_us, 0),
            line("RTT P50", |s| s.rtt_p50_us, 1),
            line("RTT P99", |s| s.rtt_p99_us, 2),
        ],
    )?;
    paths.push(svg);
    Ok(paths)
}

/// `predict --set` or `--sweep`: whatif.csv and whatif.svg.
pub fn what_if(dir: &Path, t: &whatif::Table) -> Result<Vec<PathBuf>> {
    let mut paths = vec![write(dir, "whatif.csv", &t.csv())?];
    let svg = dir.join("whatif.svg");
    whatif_plot(&svg, t)?;
    paths.push(svg);
    Ok(paths)
}

/// The what-if's plot: for a sweep, each scenario's MB/s against the swept value (against the
/// value's place in the list when the values are not numbers); for one configuration, each
/// scenario's throughput as a ratio to the default's, one bar each.
fn whatif_plot(path: &Path, t: &whatif::Table) -> Result<()> {
    let Some(key) = &t.swept else {
        let bars: Vec<(String, f64)> = t
            .rows
            .iter()
            .filter_map(|r| match (r.cells.first(), r.cells.get(1)) {
                (
                    Some(whatif::Cell { mb_s: Some(d), .. }),
                    Some(whatif::Cell { mb_s: Some(v), .. }),
                ) if *d > 0.0 => Some((r.scenario.clone(), v / d)),
                _ => None,
            })
            .collect();
        let name = t.columns.get(1).map_or("", |c| c.name.as_str());
        return bar_plot(
            path,
            &format!("{name}: throughput as a ratio to the default"),
            "ratio to the default",
            &bars,
        );
    };
    // The sweep's columns are the ones after the default, one value each.
    let values: Vec<&str> = t
        .columns
        .iter()
        .skip(1)
        .filter_map(|c| c.settings.first().map(|s| s.value.as_str()))
        .collect();
    let numeric: Option<Vec<f64>> = values.iter().map(|v| v.parse::<f64>().ok()).collect();
    let (xs, x_label) = match numeric {
        Some(xs) => (xs, key.clone()),
        None => (
            (0..values.len()).map(|i| i as f64).collect(),
            format!(
                "{key}: {}",
                values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| format!("{i} = {v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
    };
    let series: Vec<Series> = t
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| Series {
            name: r.scenario.clone(),
            points: xs
                .iter()
                .zip(r.cells.iter().skip(1))
                .filter_map(|(&x, cell)| cell.mb_s.map(|v| (x, v)))
                .collect(),
            reference: false,
            colour: i,
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    line_plot(
        path,
        &format!("The reference scenarios against {key}"),
        XAxis::Linear,
        &x_label,
        "MB/s",
        &series,
    )
}
