//! What `--out DIR` writes for each command: its CSV files and SVG plots (and, for `sweep`, the
//! sweep as JSON for `fit --from` and `compare --from`). Each function returns the paths it
//! wrote.

use std::path::{Path, PathBuf};

use serde::Serialize;
use xdma::{Direction, Error, Result};

use super::{bar_plot, line_plot, write, Series, SweepDoc, XAxis};
use crate::csv_rows::{fixed, fixed_or_empty, to_csv};
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

/// Draws `series` as throughput (MB/s) against block size into `name` in `dir`, under
/// `title`, and returns the plot's path: the plot of `sweep`, `fit` and `compare`.
fn throughput_plot(dir: &Path, name: &str, title: &str, series: &[Series]) -> Result<PathBuf> {
    let svg = dir.join(name);
    line_plot(&svg, title, XAxis::Bytes, "block size", "MB/s", series)?;
    Ok(svg)
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
        write(dir, "sweep.csv", &sweep::write_csv(&doc.rows)?)?,
        write(
            dir,
            "sweep.json",
            &serde_json::to_string_pretty(doc).map_err(|e| Error::Backend(format!("JSON: {e}")))?,
        )?,
    ];
    paths.push(throughput_plot(
        dir,
        "sweep.svg",
        &format!("Throughput against block size ({} card)", doc.meta.backend),
        &throughput_series(&doc.rows, &doc.meta.backend, false, 0),
    )?);
    Ok(paths)
}

/// One line of fit.csv.
#[derive(Default, Serialize)]
struct FitLine {
    dir: String,
    bytes: u64,
    measured_us: String,
    model_us: String,
    error_pct: String,
    marginal_ns_per_byte: String,
}

/// The fit's rows as CSV.
pub fn fit_csv(f: &FitReport) -> Result<String> {
    let lines: Vec<FitLine> = f
        .rows
        .iter()
        .map(|r| FitLine {
            dir: r.dir.to_string().to_ascii_lowercase(),
            bytes: r.bytes,
            measured_us: fixed(r.measured_us, 4),
            model_us: fixed(r.model_us, 4),
            error_pct: fixed(r.error_pct, 3),
            marginal_ns_per_byte: fixed_or_empty(r.marginal_ns_per_byte, 5),
        })
        .collect();
    to_csv(&lines)
}

/// `fit`: fit.csv and fit.svg, the measured throughput with the model's beside it.
pub fn fit(dir: &Path, f: &FitReport, doc: &SweepDoc) -> Result<Vec<PathBuf>> {
    let mut paths = vec![write(dir, "fit.csv", &fit_csv(f)?)?];
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
    paths.push(throughput_plot(
        dir,
        "fit.svg",
        "Measured throughput and the two-point model t(N) = t0 + N/B",
        &series,
    )?);
    Ok(paths)
}

/// One line of compare.csv.
#[derive(Default, Serialize)]
struct CompareLine {
    dir: String,
    bytes: u64,
    measured_mb_s: String,
    reference_mb_s: String,
    error_pct: String,
}

/// The comparison's rows as CSV.
pub fn compare_csv(c: &Comparison) -> Result<String> {
    let lines: Vec<CompareLine> = c
        .rows
        .iter()
        .map(|r| CompareLine {
            dir: r.dir.to_string().to_ascii_lowercase(),
            bytes: r.bytes,
            measured_mb_s: fixed(r.measured_mb_s, 3),
            reference_mb_s: fixed(r.reference_mb_s, 3),
            error_pct: fixed(r.error_pct, 3),
        })
        .collect();
    to_csv(&lines)
}

/// `compare`: compare.csv, compare.md and compare.svg, the sweep beside the reference's rows.
pub fn compare(
    dir: &Path,
    c: &Comparison,
    doc: &SweepDoc,
    reference: &[reference::Row],
) -> Result<Vec<PathBuf>> {
    let mut paths = vec![
        write(dir, "compare.csv", &compare_csv(c)?)?,
        write(dir, "compare.md", &super::text::compare_table(c))?,
    ];
    let mut series = throughput_series(&doc.rows, &format!("{} card", doc.meta.backend), false, 0);
    series.extend(throughput_series(
        &reference_rows(reference),
        "reference board",
        true,
        0,
    ));
    paths.push(throughput_plot(
        dir,
        "compare.svg",
        &format!(
            "Throughput against block size: {} card beside the reference board",
            doc.meta.backend
        ),
        &series,
    )?);
    Ok(paths)
}

/// The one line of concurrent.csv.
#[derive(Default, Serialize)]
struct ConcurrentLine {
    block: u64,
    h2c_transfers: usize,
    c2h_transfers: usize,
    h2c_mb_s: String,
    c2h_mb_s: String,
    total_mb_s: String,
}

/// One line of stream.csv.
#[derive(Default, Serialize)]
struct StreamLine {
    channel: usize,
    frames: usize,
    mb_s: String,
    us_per_frame: String,
}

/// One line of rtt.csv.
#[derive(Default, Serialize)]
struct RttLine {
    segment: usize,
    frames: u64,
    period_us: String,
    rtt_p50_us: String,
    rtt_p99_us: String,
    overhead_us: String,
    mb_s: String,
    cpu: Option<usize>,
    cpu_mhz: String,
}

/// `concurrent`: concurrent.csv and a bar per direction and the total.
pub fn concurrent(dir: &Path, r: &scenario::Concurrent) -> Result<Vec<PathBuf>> {
    let csv = to_csv(&[ConcurrentLine {
        block: r.block,
        h2c_transfers: r.h2c_transfers,
        c2h_transfers: r.c2h_transfers,
        h2c_mb_s: fixed(r.h2c_mb_s, 3),
        c2h_mb_s: fixed(r.c2h_mb_s, 3),
        total_mb_s: fixed(r.total_mb_s, 3),
    }])?;
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
    let lines: Vec<StreamLine> = r
        .channels
        .iter()
        .map(|ch| StreamLine {
            channel: ch.channel,
            frames: ch.frames,
            mb_s: fixed(ch.mb_s, 3),
            us_per_frame: fixed(ch.us_per_frame, 4),
        })
        .collect();
    let csv = to_csv(&lines)?;
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
    let lines: Vec<RttLine> = r
        .segments
        .iter()
        .map(|s| RttLine {
            segment: s.index,
            frames: s.frames,
            period_us: fixed(s.period_us, 4),
            rtt_p50_us: fixed(s.rtt_p50_us, 4),
            rtt_p99_us: fixed(s.rtt_p99_us, 4),
            overhead_us: fixed(s.overhead_us, 4),
            mb_s: fixed(s.mb_s, 3),
            cpu: s.cpu,
            cpu_mhz: fixed_or_empty(s.cpu_mhz, 0),
        })
        .collect();
    let csv = to_csv(&lines)?;
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
    let mut paths = vec![write(dir, "whatif.csv", &t.csv()?)?];
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::CompareRow;

    fn rows() -> Vec<Row> {
        [(4096u64, 204.8), (1 << 20, 2474.1234567)]
            .into_iter()
            .flat_map(|(bytes, mb_s)| {
                [Direction::H2C, Direction::C2H].map(|dir| Row {
                    dir,
                    bytes,
                    mb_s,
                    us: bytes as f64 / mb_s,
                })
            })
            .collect()
    }

    #[test]
    fn the_csv_files_keep_their_columns_and_figures_byte_for_byte() {
        // The text the hand-built writers gave, spelled out with their format strings.
        let rows = rows();
        let mut want = String::from("dir,bytes,mb_s,us\n");
        for r in &rows {
            want.push_str(&format!(
                "{},{},{:.3},{:.4}\n",
                r.dir.to_string().to_ascii_lowercase(),
                r.bytes,
                r.mb_s,
                r.us
            ));
        }
        assert_eq!(sweep::write_csv(&rows).expect("sweep.csv"), want);

        let f = sweep::fit(&rows).expect("a fit");
        let mut want =
            String::from("dir,bytes,measured_us,model_us,error_pct,marginal_ns_per_byte\n");
        for r in &f.rows {
            want.push_str(&format!(
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
        assert_eq!(fit_csv(&f).expect("fit.csv"), want);

        let c = Comparison {
            rows: vec![CompareRow {
                dir: Direction::C2H,
                bytes: 4096,
                measured_mb_s: 199.99951,
                reference_mb_s: 204.8,
                error_pct: -2.34399,
            }],
            max_abs_error_pct: 2.34399,
        };
        assert_eq!(
            compare_csv(&c).expect("compare.csv"),
            "dir,bytes,measured_mb_s,reference_mb_s,error_pct\nc2h,4096,200.000,204.800,-2.344\n"
        );
        let empty = Comparison {
            rows: Vec::new(),
            max_abs_error_pct: 0.0,
        };
        assert_eq!(
            compare_csv(&empty).expect("compare.csv"),
            "dir,bytes,measured_mb_s,reference_mb_s,error_pct\n",
            "a table without rows keeps its header"
        );
    }
}
