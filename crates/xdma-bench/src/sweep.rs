//! The block-size sweep of the reference method, its fit and its comparison with a reference
//! table: one warm-up transfer not counted, best of N (5, and 8 from 4 MiB), both directions,
//! in either timing mode, data checked on every run.

use serde::{Deserialize, Serialize};
use xdma::{AsyncCard, Card, CardAddr, Direction, Error, Result};

use crate::csv_rows::{fixed, to_csv};
use crate::measure::{self, Mode};
use crate::reference;
use crate::stats::{self, Fit};

/// The reference table's block sizes: 4 KiB to 8 MiB.
pub const DEFAULT_SIZES: [u64; 15] = [
    4 << 10,
    8 << 10,
    16 << 10,
    32 << 10,
    64 << 10,
    128 << 10,
    256 << 10,
    512 << 10,
    1 << 20,
    2 << 20,
    3 << 20,
    4 << 20,
    5 << 20,
    6 << 20,
    8 << 20,
];

/// Runs per size of the reference method: best of 5, and best of 8 from 4 MiB up.
pub fn default_runs(bytes: u64) -> usize {
    if bytes >= 4 << 20 {
        8
    } else {
        5
    }
}

/// How many transfers are kept queued on a channel in back-to-back mode: the next one waits
/// while the previous one runs.
pub const QUEUE_DEPTH: usize = 2;

/// One measured row: the best run of one direction and size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The direction.
    pub dir: Direction,
    /// Block size in bytes.
    pub bytes: u64,
    /// Throughput of the best run in MB/s (10^6 bytes per second).
    pub mb_s: f64,
    /// Duration of the best run in microseconds.
    pub us: f64,
}

/// What to sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Block sizes in bytes.
    pub sizes: Vec<u64>,
    /// The timing mode.
    pub mode: Mode,
    /// Runs per size after the warm-up; `None` takes the reference method's (5, 8 from 4 MiB).
    pub runs: Option<usize>,
}

impl Default for Plan {
    fn default() -> Self {
        Plan {
            sizes: DEFAULT_SIZES.to_vec(),
            mode: Mode::BackToBack,
            runs: None,
        }
    }
}

impl Plan {
    /// The runs counted at one size.
    pub fn runs_at(&self, bytes: u64) -> usize {
        self.runs.unwrap_or_else(|| default_runs(bytes))
    }

    /// Bytes the plan moves, warm-ups and data checks included, for a progress bar.
    pub fn work_bytes(&self) -> u64 {
        self.sizes
            .iter()
            .map(|&b| b * (2 * (self.runs_at(b) as u64 + 1) + 2))
            .sum()
    }

    /// Checks the plan against the card: every size fits its memory and the alignment.
    pub fn check(&self, card: &impl Card) -> Result<()> {
        let info = card.info();
        if self.sizes.is_empty() {
            return Err(Error::Invalid {
                op: "planning a sweep",
                problem: "no block sizes: give at least one with --sizes".into(),
            });
        }
        if self.runs == Some(0) {
            return Err(Error::Invalid {
                op: "planning a sweep",
                problem: "--runs 0 measures nothing: give 1 or more".into(),
            });
        }
        for &b in &self.sizes {
            if b == 0 || b > info.memory_size {
                return Err(Error::Invalid {
                    op: "planning a sweep",
                    problem: format!(
                        "a block of {b} bytes: sizes go from 1 byte to the card's {} bytes of memory",
                        info.memory_size
                    ),
                });
            }
            if !b.is_multiple_of(info.alignment.max(1)) {
                return Err(Error::Invalid {
                    op: "planning a sweep",
                    problem: format!(
                        "a block of {b} bytes is not a multiple of the engines' {}-byte alignment",
                        info.alignment
                    ),
                });
            }
        }
        for dir in [Direction::H2C, Direction::C2H] {
            card.info().mm_channel(dir)?;
        }
        Ok(())
    }
}

/// Measures one size in both directions: a warm-up transfer, then `runs` counted ones, and
/// the best of them per direction. In back-to-back mode the warm-up is the transfer that
/// fills the queue (its duration has no previous completion to count from); in serial mode it
/// is the first write-and-read round.
pub async fn measure_size<C: Card + AsyncCard>(
    card: &C,
    mode: Mode,
    bytes: u64,
    runs: usize,
) -> Result<[Row; 2]> {
    let n = usize::try_from(bytes).map_err(|_| Error::Invalid {
        op: "measuring a block size",
        problem: format!("{bytes} bytes do not fit this host's address space"),
    })?;
    let row = |s: Option<measure::Sample>, dir: Direction| {
        s.map(|s| Row {
            dir,
            bytes,
            mb_s: s.mb_s(),
            us: s.us,
        })
        .ok_or_else(|| Error::Backend(format!("no {dir} sample of {bytes} bytes came back")))
    };
    match mode {
        Mode::BackToBack => {
            let mut out = Vec::with_capacity(2);
            for dir in [Direction::H2C, Direction::C2H] {
                let ch = card.info().mm_channel(dir)?;
                let s =
                    measure::back_to_back(card, dir, ch, CardAddr(0), n, runs, QUEUE_DEPTH).await?;
                out.push(row(measure::best(&s), dir)?);
            }
            Ok([out[0], out[1]])
        }
        Mode::Serial => {
            let s = measure::serial(card, CardAddr(0), n, runs + 1)?;
            // The first round (a write and a read) is the warm-up.
            let counted = s.get(2..).unwrap_or_default();
            let best = |dir| {
                measure::best(
                    &counted
                        .iter()
                        .copied()
                        .filter(|x| x.dir == dir)
                        .collect::<Vec<_>>(),
                )
            };
            Ok([
                row(best(Direction::H2C), Direction::H2C)?,
                row(best(Direction::C2H), Direction::C2H)?,
            ])
        }
    }
}

/// Runs a whole sweep; `progress` hears the bytes of each size as it finishes.
pub fn sweep<C: Card + AsyncCard>(
    card: &C,
    plan: &Plan,
    mut progress: impl FnMut(u64),
) -> Result<Vec<Row>> {
    plan.check(card)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .map_err(|e| Error::Backend(format!("cannot start a tokio runtime: {e}")))?;
    let mut rows = Vec::with_capacity(2 * plan.sizes.len());
    for &bytes in &plan.sizes {
        let runs = plan.runs_at(bytes);
        rows.extend(rt.block_on(measure_size(card, plan.mode, bytes, runs))?);
        progress(bytes * (2 * (runs as u64 + 1) + 2));
    }
    Ok(rows)
}

/// The rows of one direction as `(bytes, us)` points, sorted by size.
pub fn points(rows: &[Row], dir: Direction) -> Vec<(u64, f64)> {
    let mut p: Vec<(u64, f64)> = rows
        .iter()
        .filter(|r| r.dir == dir)
        .map(|r| (r.bytes, r.us))
        .collect();
    p.sort_by_key(|x| x.0);
    p
}

/// The fit of one direction.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DirFit {
    /// Fixed cost per transfer in microseconds, from the two ends.
    pub t0_us: f64,
    /// Cost per byte in nanoseconds, from the two ends.
    pub ns_per_byte: f64,
    /// B = 1 / ns_per_byte, in MB/s.
    pub mb_s: f64,
    /// The median of delta t / delta N between neighbouring sizes, as a bandwidth in MB/s.
    pub median_marginal_mb_s: Option<f64>,
    /// The largest model error at the sizes between the two ends, in percent: the
    /// cross-check of the two-point fit in the middle.
    pub max_middle_error_pct: Option<f64>,
    /// The smallest and largest size the fit went through.
    pub ends: (u64, u64),
}

/// One size of the fit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FitRow {
    /// The direction.
    pub dir: Direction,
    /// Block size in bytes.
    pub bytes: u64,
    /// The measured duration in microseconds.
    pub measured_us: f64,
    /// The model's duration in microseconds.
    pub model_us: f64,
    /// The model's error in percent of the measurement.
    pub error_pct: f64,
    /// delta t / delta N from the next smaller size, in ns per byte.
    pub marginal_ns_per_byte: Option<f64>,
}

/// The fit of a sweep: t(N) = t0 + N / B per direction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FitReport {
    /// Writes.
    pub h2c: DirFit,
    /// Reads.
    pub c2h: DirFit,
    /// Every size of both directions.
    pub rows: Vec<FitRow>,
}

impl FitReport {
    /// The fit of one direction.
    pub fn dir(&self, dir: Direction) -> &DirFit {
        match dir {
            Direction::H2C => &self.h2c,
            Direction::C2H => &self.c2h,
        }
    }
}

/// Fits a sweep's rows: the line through the smallest and the largest size per direction,
/// checked at every size between them; the marginal bandwidth between neighbours.
pub fn fit(rows: &[Row]) -> Result<FitReport> {
    let mut fits = Vec::with_capacity(2);
    let mut out = Vec::new();
    for dir in [Direction::H2C, Direction::C2H] {
        let p = points(rows, dir);
        let (Some(&a), Some(&b)) = (p.first(), p.last()) else {
            return Err(Error::Invalid {
                op: "fitting a sweep",
                problem: format!("the sweep has no {dir} rows"),
            });
        };
        let f = Fit::two_point(a, b).ok_or_else(|| Error::Invalid {
            op: "fitting a sweep",
            problem: format!(
                "the {dir} rows have one size only ({} bytes): a fit needs two, give more --sizes",
                a.0
            ),
        })?;
        let marg = stats::marginal_ns_per_byte(&p);
        for (i, &(n, us)) in p.iter().enumerate() {
            out.push(FitRow {
                dir,
                bytes: n,
                measured_us: us,
                model_us: f.us(n),
                error_pct: f.error_pct(n, us),
                marginal_ns_per_byte: i.checked_sub(1).and_then(|j| marg.get(j).copied()),
            });
        }
        let middle = p
            .get(1..p.len() - 1)
            .unwrap_or_default()
            .iter()
            .map(|&(n, us)| f.error_pct(n, us))
            .max_by(|x, y| x.abs().total_cmp(&y.abs()));
        fits.push(DirFit {
            t0_us: f.t0_us,
            ns_per_byte: f.ns_per_byte,
            mb_s: f.mb_s,
            median_marginal_mb_s: stats::median_marginal_mb_s(&p),
            max_middle_error_pct: middle,
            ends: (a.0, b.0),
        });
    }
    Ok(FitReport {
        h2c: fits[0],
        c2h: fits[1],
        rows: out,
    })
}

/// One row of a comparison with a reference table.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CompareRow {
    /// The direction.
    pub dir: Direction,
    /// Block size in bytes.
    pub bytes: u64,
    /// What was measured, in MB/s.
    pub measured_mb_s: f64,
    /// The reference's figure, in MB/s.
    pub reference_mb_s: f64,
    /// (measured - reference) / reference, in percent.
    pub error_pct: f64,
}

/// A sweep against a reference table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// One row per reference row and direction, in the reference's order.
    pub rows: Vec<CompareRow>,
    /// The largest error, by magnitude, in percent.
    pub max_abs_error_pct: f64,
}

/// Pairs every reference row (both directions) with the measured row of the same size and
/// direction; a reference row the sweep did not measure is an error.
pub fn compare(measured: &[Row], reference: &[reference::Row]) -> Result<Comparison> {
    let mut rows = Vec::with_capacity(2 * reference.len());
    for r in reference {
        for dir in [Direction::H2C, Direction::C2H] {
            let m = measured
                .iter()
                .find(|m| m.dir == dir && m.bytes == r.bytes)
                .ok_or_else(|| Error::Invalid {
                    op: "comparing with the reference",
                    problem: format!(
                        "the reference has a {dir} row of {} bytes that the sweep did not measure",
                        r.bytes
                    ),
                })?;
            rows.push(CompareRow {
                dir,
                bytes: r.bytes,
                measured_mb_s: m.mb_s,
                reference_mb_s: r.mb_s(dir),
                error_pct: stats::error_pct(m.mb_s, r.mb_s(dir)),
            });
        }
    }
    let max_abs_error_pct = rows.iter().map(|r| r.error_pct.abs()).fold(0.0, f64::max);
    Ok(Comparison {
        rows,
        max_abs_error_pct,
    })
}

/// Reads the rows of a sweep CSV that [`write_csv`] wrote (`dir,bytes,mb_s,us`).
pub fn parse_csv(text: &str) -> Result<Vec<Row>> {
    let bad = |line: usize, what: &str| {
        Error::Invalid {
        op: "reading a sweep CSV",
        problem: format!("line {line}: {what}; the file should be one that `xdma-bench sweep --out` wrote (dir,bytes,mb_s,us)"),
    }
    };
    let mut rows = Vec::new();
    for (i, l) in text.lines().enumerate().skip(1) {
        if l.trim().is_empty() || l.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = l.split(',').map(str::trim).collect();
        let dir = match f.first().map(|s| s.to_ascii_lowercase()) {
            Some(d) if d == "h2c" => Direction::H2C,
            Some(d) if d == "c2h" => Direction::C2H,
            _ => return Err(bad(i + 1, "the direction is not h2c or c2h")),
        };
        let num = |k: usize| f.get(k).and_then(|v| v.parse::<f64>().ok());
        let (Some(bytes), Some(mb_s), Some(us)) =
            (f.get(1).and_then(|v| v.parse::<u64>().ok()), num(2), num(3))
        else {
            return Err(bad(i + 1, "a field is missing or not a number"));
        };
        rows.push(Row {
            dir,
            bytes,
            mb_s,
            us,
        });
    }
    if rows.is_empty() {
        return Err(bad(1, "no rows"));
    }
    Ok(rows)
}

/// One line of sweep.csv.
#[derive(Debug, Default, Serialize)]
struct CsvRow {
    dir: String,
    bytes: u64,
    mb_s: String,
    us: String,
}

/// The sweep's rows as CSV, read back by [`parse_csv`].
pub fn write_csv(rows: &[Row]) -> Result<String> {
    let lines: Vec<CsvRow> = rows
        .iter()
        .map(|r| CsvRow {
            dir: r.dir.to_string().to_ascii_lowercase(),
            bytes: r.bytes,
            mb_s: fixed(r.mb_s, 3),
            us: fixed(r.us, 4),
        })
        .collect();
    to_csv(&lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows_from_reference() -> Vec<Row> {
        let mut out = Vec::new();
        for r in reference::block_sweep().expect("reference") {
            for dir in [Direction::H2C, Direction::C2H] {
                out.push(Row {
                    dir,
                    bytes: r.bytes,
                    mb_s: r.mb_s(dir),
                    us: r.bytes as f64 / r.mb_s(dir),
                });
            }
        }
        out
    }

    #[test]
    fn the_reference_fits_as_its_readme_says() {
        let f = fit(&rows_from_reference()).expect("fit");
        assert!((f.h2c.t0_us - 18.8).abs() < 0.05, "{:?}", f.h2c);
        assert!((f.c2h.ns_per_byte - 0.398).abs() < 0.0005, "{:?}", f.c2h);
        assert_eq!(f.h2c.ends, (4096, 8 << 20));
        // The README: reads plateau around 2.5 GB/s from 256 KiB up, so the median marginal
        // read bandwidth is near that plateau, well above the 4 KiB throughput.
        let m = f.c2h.median_marginal_mb_s.expect("marginal");
        assert!((2300.0..3500.0).contains(&m), "{m}");
        assert_eq!(f.rows.len(), 30);
        assert!(f.rows[0].marginal_ns_per_byte.is_none());
        assert!(f.h2c.max_middle_error_pct.expect("middle").abs() > 1.0);
    }

    #[test]
    fn a_comparison_names_what_is_off() {
        let reference = reference::block_sweep().expect("reference");
        let mut measured = rows_from_reference();
        let c = compare(&measured, &reference).expect("compare");
        assert_eq!(c.rows.len(), 30);
        assert!(c.max_abs_error_pct < 1e-9);
        // A broken measurement: one row 20 % slow is the largest error.
        measured[7].mb_s *= 0.8;
        let c = compare(&measured, &reference).expect("compare");
        assert!((c.max_abs_error_pct - 20.0).abs() < 1e-9);
        assert!((c.rows[7].error_pct + 20.0).abs() < 1e-9);
        // A missing row is an error, not a silent skip.
        measured.remove(0);
        assert!(compare(&measured, &reference).is_err());
    }

    #[test]
    fn the_csv_reads_back() {
        let rows = rows_from_reference();
        let back = parse_csv(&write_csv(&rows).expect("written")).expect("csv");
        assert_eq!(back.len(), rows.len());
        for (a, b) in rows.iter().zip(&back) {
            assert_eq!((a.dir, a.bytes), (b.dir, b.bytes));
            assert!((a.mb_s - b.mb_s).abs() < 1e-3);
        }
        assert!(parse_csv("dir,bytes,mb_s,us\nx2y,1,2,3\n").is_err());
        assert!(parse_csv("dir,bytes,mb_s,us\n").is_err());
    }

    #[test]
    fn the_reference_method_runs_eight_from_four_mib() {
        assert_eq!(default_runs(4096), 5);
        assert_eq!(default_runs((4 << 20) - 1), 5);
        assert_eq!(default_runs(4 << 20), 8);
        let p = Plan {
            runs: Some(1),
            ..Plan::default()
        };
        assert_eq!(p.runs_at(8 << 20), 1);
    }
}
