//! xdma-bench: the reference board's measurement method on either backend of the host crate
//! (the simulated card or a board on the XDMA driver): block-size sweeps in two timing modes,
//! the fit of the fixed and per-byte cost, a write and a read at once, stream frames, the ECHO
//! round trip, a comparison with a reference table, and the simulated card's predictions:
//! the held-back scenarios (`predict`), and what-ifs that change keys of the `[sim]` section
//! and set the reference scenarios side by side with the configuration as given
//! (`predict --set engine.c2h_request_ids=16`, `predict --sweep timing.link.generation=1,2`).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};
use xdma::{BackendKind, Config, Direction, Error, Result, Xdma};
use xdma_bench::measure::Mode;
use xdma_bench::report::{self, Meta, Series, Start, XAxis};
use xdma_bench::scenario::{self, StreamMode};
use xdma_bench::sweep::{self, Comparison, FitReport, Plan, Row};
use xdma_bench::whatif::{self, Column, Setting};
use xdma_bench::{reference, rtt};

#[derive(Debug, Parser)]
#[command(
    name = "xdma-bench",
    version,
    about = "The reference board's measurement method, on the simulated card or a board",
    long_about = "The reference board's measurement method, on the simulated card or a board.\n\n\
        Durations count in the backend's clock: simulated time on the simulated card (deterministic, \
        and far slower than real time: about 1 MiB of transfers per second of wall time), host time \
        around each call on a board. Duration flags accept decimals so that a short run is possible \
        on the simulated card."
)]
struct Cli {
    #[command(flatten)]
    common: Common,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Debug, Args)]
struct Common {
    /// The backend; default: XDMA_BACKEND, else the configuration file's, else `sim`.
    #[arg(long, global = true, value_enum)]
    backend: Option<Backend>,
    /// The driver's node prefix (nodes are PREFIX_h2c_0, PREFIX_user, ...), e.g. /dev/xdma0
    /// or a folder of the xdma-fuse mount; default: XDMA_DEVICE, else /dev/xdma0.
    #[arg(long, global = true, value_name = "PREFIX")]
    device: Option<PathBuf>,
    /// A TOML configuration file (xdma::Config, with [sim] and [hw] sections); default:
    /// XDMA_CONFIG.
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Print one JSON document on stdout and nothing else there.
    #[arg(long, global = true)]
    json: bool,
    /// Write CSV files and an SVG plot into this folder.
    #[arg(long, global = true, value_name = "DIR")]
    out: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Backend {
    Sim,
    Hw,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
enum CliMode {
    BackToBack,
    Serial,
}

impl From<CliMode> for Mode {
    fn from(m: CliMode) -> Mode {
        match m {
            CliMode::BackToBack => Mode::BackToBack,
            CliMode::Serial => Mode::Serial,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum CliStreamMode {
    OneAtATime,
    Queued,
}

#[derive(Debug, Args, Clone)]
struct SweepArgs {
    /// Block sizes in bytes, comma-separated; K and M suffixes count 1024 and 1048576.
    /// Default: 4K to 8M as the reference table.
    #[arg(long, value_delimiter = ',', value_parser = parse_bytes)]
    sizes: Option<Vec<u64>>,
    /// The timing mode.
    #[arg(long, value_enum, default_value = "back-to-back")]
    mode: CliMode,
    /// Runs per size after the one warm-up; default 5, and 8 from 4 MiB. The simulated card
    /// is deterministic, so 1 is a faithful sweep there.
    #[arg(long)]
    runs: Option<usize>,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Throughput against block size, both directions, best of N after a warm-up.
    Sweep(SweepArgs),
    /// t(N) = t0 + N/B per direction from the sweep's two ends, checked in the middle.
    Fit {
        #[command(flatten)]
        sweep: SweepArgs,
        /// Fit a sweep that `sweep --out` saved (its sweep.json) instead of running one.
        #[arg(long, value_name = "FILE")]
        from: Option<PathBuf>,
    },
    /// One write thread and one read thread at once, on separate card regions.
    Concurrent {
        /// Bytes per transfer.
        #[arg(long, default_value = "1M", value_parser = parse_bytes)]
        block: u64,
        /// How long, in seconds of the backend's clock; default 10 on a board, 0.005 on the
        /// simulated card.
        #[arg(long, value_parser = parse_positive)]
        seconds: Option<f64>,
    },
    /// Generated (GEN mode) frames on one or two C2H streams.
    Stream {
        /// Frame length in bytes (64 to 65536).
        #[arg(long, default_value = "4096", value_parser = parse_bytes)]
        frame: u64,
        /// C2H streams at once.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
        channels: u8,
        /// Post one receive and wait for it, or keep receives queued.
        #[arg(long, value_enum, default_value = "one-at-a-time")]
        mode: CliStreamMode,
        /// Frames per channel; default 100000 on a board, 256 on the simulated card.
        #[arg(long)]
        frames: Option<usize>,
    },
    /// The ECHO stop-and-wait round trip, in segments, with tiers and a stability verdict.
    Rtt {
        /// The whole run, in minutes of the backend's clock; default 10 on a board, 0.0001
        /// (6 ms) on the simulated card.
        #[arg(long, value_parser = parse_positive)]
        minutes: Option<f64>,
        /// One segment, in minutes; default 1 on a board, 0.00002 (1.2 ms) on the simulated
        /// card.
        #[arg(long, value_parser = parse_positive)]
        segment_min: Option<f64>,
        /// Pin the loop thread to this CPU.
        #[arg(long, value_name = "CPU")]
        affinity: Option<usize>,
        /// Request and answer length in bytes (64 to 65536).
        #[arg(long, default_value = "4096", value_parser = parse_bytes)]
        frame: u64,
    },
    /// Runs the sweep and prints it against a reference table, row by row.
    Compare {
        /// The reference CSV (block_bytes,write_mb_s,read_mb_s,...); default: the board's
        /// block sweep kept in the crate.
        #[arg(long, value_name = "FILE")]
        reference: Option<PathBuf>,
        /// The timing mode.
        #[arg(long, value_enum, default_value = "back-to-back")]
        mode: CliMode,
        /// Runs per size after the warm-up; default 5, and 8 from 4 MiB.
        #[arg(long)]
        runs: Option<usize>,
        /// Only these reference sizes (bytes, comma-separated; K and M suffixes).
        #[arg(long, value_delimiter = ',', value_parser = parse_bytes)]
        sizes: Option<Vec<u64>>,
        /// Compare a sweep that `sweep --out` saved (its sweep.json) instead of running one.
        #[arg(long, value_name = "FILE")]
        from: Option<PathBuf>,
    },
    /// What the card's own memory path costs against the reference board's: the block sweep on
    /// the simulated card with `path = "reference"` (XDMA -> SmartConnect -> MIG) and with
    /// `path = "card"` (card_core's RTL), row by row.
    Paths {
        /// Block sizes in bytes, comma-separated (K and M suffixes); default: the reference
        /// table's sizes.
        #[arg(long, value_delimiter = ',', value_parser = parse_bytes)]
        sizes: Option<Vec<u64>>,
        /// Runs per size after the warm-up; default 1 (the simulated card is deterministic).
        #[arg(long, default_value_t = 1)]
        runs: usize,
    },
    /// The simulated card's predictions of the scenarios the board measured but the model was
    /// not calibrated on, as one markdown table; with --set or --sweep, what-if predictions:
    /// the reference scenarios on the configuration as given and with settings of its [sim]
    /// section changed, side by side.
    Predict(PredictArgs),
}

#[derive(Debug, Args)]
struct PredictArgs {
    /// How long the concurrent scenario runs, in seconds of the backend's clock; default 0.005
    /// on the simulated card (0.002 for a what-if), 10 on a board.
    #[arg(long, value_parser = parse_positive)]
    seconds: Option<f64>,
    /// Frames per stream; default 256 on the simulated card (64 for a what-if), 100000 on a
    /// board.
    #[arg(long)]
    frames: Option<usize>,
    /// LOOP frames measured on the card's RTL (not for a what-if).
    #[arg(long, default_value_t = 200)]
    loop_frames: u32,
    /// A what-if: KEY (a dotted path inside the [sim] section, e.g. engine.c2h_request_ids,
    /// timing.link.generation, driver.poll_mode) set to VALUE (read as a TOML value, else as a
    /// string). Repeat it to change several keys in one configuration.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// A what-if sweep: KEY set to each value in turn, each value a configuration of its own.
    #[arg(long, value_name = "KEY=V1,V2,...", conflicts_with = "set")]
    sweep: Option<String>,
    /// The what-if's block sizes (bytes, comma-separated; K and M suffixes), both directions,
    /// back to back. Default 4K,64K,1M.
    #[arg(long, value_delimiter = ',', value_parser = parse_bytes)]
    sizes: Option<Vec<u64>>,
    /// The what-if's scenarios, comma-separated. Default all three.
    #[arg(long, value_enum, value_delimiter = ',')]
    only: Option<Vec<Only>>,
}

/// The reference scenarios of a what-if.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Only {
    /// The block sweep.
    Sweep,
    /// A 1 MiB write thread and a 1 MiB read thread at once.
    Concurrent,
    /// 4096 B GEN frames on one C2H stream, then on two.
    Streams,
}

fn parse_bytes(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim();
    let (num, mul) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1u64 << 10),
        Some((i, 'm' | 'M')) => (&t[..i], 1 << 20),
        Some((i, 'g' | 'G')) => (&t[..i], 1 << 30),
        _ => (t, 1),
    };
    num.trim()
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mul))
        .filter(|&n| n > 0)
        .ok_or_else(|| {
            format!("`{s}` is not a byte count: give a positive whole number, optionally with K, M or G (x1024)")
        })
}

fn parse_positive(s: &str) -> std::result::Result<f64, String> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0 && *v < 1e9)
        .ok_or_else(|| format!("`{s}` is not a positive number (decimals are fine, e.g. 0.002)"))
}

fn duration(v: f64, unit_s: f64, what: &str) -> Result<Duration> {
    Duration::try_from_secs_f64(v * unit_s).map_err(|e| Error::Invalid {
        op: "reading the arguments",
        problem: format!("{what} = {v}: {e}"),
    })
}

fn config(c: &Common) -> Result<Config> {
    let mut cfg = match &c.config {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                Error::Config(format!("--config {}: cannot read it: {e}", path.display()))
            })?;
            Config::from_toml(&text)
                .map_err(|e| Error::Config(format!("--config {}: {e}", path.display())))?
        }
        None => Config::from_env()?,
    };
    if c.config.is_some() {
        // The environment still overrides a file, as it does for XDMA_CONFIG; flags win last.
        if let Ok(b) = std::env::var(xdma::BACKEND_ENV) {
            if !b.is_empty() {
                cfg.backend = b.parse()?;
            }
        }
        if let Ok(d) = std::env::var(xdma::DEVICE_ENV) {
            if !d.is_empty() {
                cfg.device = PathBuf::from(d);
            }
        }
    }
    if let Some(b) = c.backend {
        cfg.backend = match b {
            Backend::Sim => BackendKind::Sim,
            Backend::Hw => BackendKind::Hw,
        };
    }
    if let Some(d) = &c.device {
        cfg.device = d.clone();
    }
    Ok(cfg)
}

/// A progress bar on stderr (drawn only when stderr is a terminal).
fn bar(len: u64, what: &str, bytes: bool) -> ProgressBar {
    let pb = if std::io::stderr().is_terminal() {
        ProgressBar::new(len)
    } else {
        ProgressBar::hidden()
    };
    let template = if bytes {
        "{msg:>12} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} (eta {eta})"
    } else {
        "{msg:>12} [{elapsed_precise}] {wide_bar} {pos}/{len} (eta {eta})"
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        pb.set_style(style);
    }
    pb.set_message(what.to_string());
    pb
}

/// What every command prints: the text on stdout unless --json, the document with --json.
fn emit<T: Serialize>(common: &Common, meta: &Meta, result: &T, text: &str) -> Result<()> {
    emit_from(common, meta, result, text, None)
}

/// As [`emit`], for a result computed from a saved sweep: the times are that sweep's.
fn emit_from<T: Serialize>(
    common: &Common,
    meta: &Meta,
    result: &T,
    text: &str,
    from: Option<&Path>,
) -> Result<()> {
    if common.json {
        println!("{}", report::json(meta, result)?);
    } else {
        print!("{text}");
        println!(
            "\nbackend {}; {}\n{}{}",
            meta.backend,
            meta.timing,
            from.map_or(String::new(), |p| format!(
                "from the sweep saved in {}, which ",
                p.display()
            )),
            match meta.simulated_s {
                Some(s) => format!(
                    "took {:.3} ms of simulated time in {:.1} s of wall time",
                    s * 1e3,
                    meta.wall_s
                ),
                None => format!("took {:.1} s", meta.wall_s),
            }
        );
    }
    Ok(())
}

/// Where output files went, said on stderr so that stdout stays one document under --json.
fn wrote(paths: &[PathBuf]) {
    for p in paths {
        eprintln!("wrote {}", p.display());
    }
}

/// A sweep and what it was measured on, as `sweep --out` saves it.
#[derive(Debug, Serialize, Deserialize)]
struct SweepDoc {
    #[serde(flatten)]
    meta: Meta,
    mode: Mode,
    runs: String,
    rows: Vec<Row>,
}

fn runs_text(runs: Option<usize>) -> String {
    match runs {
        Some(n) => format!("best of {n} after one warm-up"),
        None => "best of 5 (8 from 4 MiB) after one warm-up".into(),
    }
}

fn mode_text(m: Mode) -> &'static str {
    match m {
        Mode::BackToBack => {
            "back-to-back (the next transfer of a direction queued while the previous one runs)"
        }
        Mode::Serial => "serial (a write, then a read, each after the previous one returned)",
    }
}

fn run_sweep(card: &Xdma, cfg: &Config, plan: &Plan) -> Result<SweepDoc> {
    plan.check(card)?;
    let start = Start::now(card)?;
    let pb = bar(plan.work_bytes(), "sweep", true);
    let rows = sweep::sweep(card, plan, |b| pb.inc(b))?;
    pb.finish_and_clear();
    Ok(SweepDoc {
        meta: report::meta(card, cfg, start, 0),
        mode: plan.mode,
        runs: runs_text(plan.runs),
        rows,
    })
}

fn load_sweep(path: &Path) -> Result<SweepDoc> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::Invalid {
        op: "reading a saved sweep",
        problem: format!("{}: {e}", path.display()),
    })?;
    serde_json::from_str(&text).map_err(|e| Error::Invalid {
        op: "reading a saved sweep",
        problem: format!(
            "{}: {e}; give the sweep.json that `xdma-bench sweep --out DIR` wrote",
            path.display()
        ),
    })
}

fn sweep_table(rows: &[Row]) -> String {
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

fn plan_of(a: &SweepArgs) -> Plan {
    Plan {
        sizes: a
            .sizes
            .clone()
            .unwrap_or_else(|| sweep::DEFAULT_SIZES.to_vec()),
        mode: a.mode.into(),
        runs: a.runs,
    }
}

fn open(cfg: &Config) -> Result<Xdma> {
    Xdma::open(cfg)
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = run(&cli) {
        eprintln!("xdma-bench: {e}");
        std::process::exit(1);
    }
}

fn run(cli: &Cli) -> Result<()> {
    let c = &cli.common;
    let cfg = config(c)?;
    match &cli.cmd {
        Cmd::Sweep(a) => {
            let card = open(&cfg)?;
            let doc = run_sweep(&card, &cfg, &plan_of(a))?;
            if let Some(dir) = &c.out {
                let mut paths = vec![
                    report::write(dir, "sweep.csv", &sweep::write_csv(&doc.rows))?,
                    report::write(
                        dir,
                        "sweep.json",
                        &serde_json::to_string_pretty(&doc)
                            .map_err(|e| Error::Backend(format!("JSON: {e}")))?,
                    )?,
                ];
                let svg = dir.join("sweep.svg");
                report::line_plot(
                    &svg,
                    &format!("Throughput against block size ({} card)", doc.meta.backend),
                    XAxis::Bytes,
                    "block size",
                    "MB/s",
                    &throughput_series(&doc.rows, &doc.meta.backend, false, 0),
                )?;
                paths.push(svg);
                wrote(&paths);
            }
            let text = format!(
                "sweep: {}, {}, data checked every run\n\n{}",
                mode_text(doc.mode),
                doc.runs,
                sweep_table(&doc.rows)
            );
            emit(
                c,
                &doc.meta,
                &Rows {
                    mode: doc.mode,
                    rows: &doc.rows,
                },
                &text,
            )
        }
        Cmd::Fit { sweep: a, from } => {
            let doc = match from {
                Some(p) => load_sweep(p)?,
                None => run_sweep(&open(&cfg)?, &cfg, &plan_of(a))?,
            };
            let f = sweep::fit(&doc.rows)?;
            if let Some(dir) = &c.out {
                let mut csv =
                    String::from("dir,bytes,measured_us,model_us,error_pct,marginal_ns_per_byte\n");
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
                let mut paths = vec![report::write(dir, "fit.csv", &csv)?];
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
                report::line_plot(
                    &svg,
                    "Measured throughput and the two-point model t(N) = t0 + N/B",
                    XAxis::Bytes,
                    "block size",
                    "MB/s",
                    &series,
                )?;
                paths.push(svg);
                wrote(&paths);
            }
            let text = fit_text(&f, &doc);
            emit_from(c, &doc.meta, &f, &text, from.as_deref())
        }
        Cmd::Compare {
            reference: file,
            mode,
            runs,
            sizes,
            from,
        } => {
            let (name, text) = match file {
                Some(p) => (
                    p.display().to_string(),
                    std::fs::read_to_string(p).map_err(|e| Error::Invalid {
                        op: "reading the reference",
                        problem: format!("{}: {e}", p.display()),
                    })?,
                ),
                None => (
                    "the board's block sweep (k7-xdma-ddr3-block-sweep.csv)".to_string(),
                    reference::BLOCK_SWEEP_CSV.to_string(),
                ),
            };
            let mut rows = reference::parse_sweep(&text)?;
            if let Some(s) = sizes {
                rows.retain(|r| s.contains(&r.bytes));
                if rows.is_empty() {
                    return Err(Error::Invalid {
                        op: "comparing with the reference",
                        problem: format!(
                            "none of --sizes {s:?} is a row of the reference; its sizes are {:?}",
                            reference::parse_sweep(&text)?
                                .iter()
                                .map(|r| r.bytes)
                                .collect::<Vec<_>>()
                        ),
                    });
                }
            }
            // The reference board's memory path, which the table was measured on.
            let cfg = reference::on_reference_path(&cfg)?;
            let doc = match from {
                Some(p) => load_sweep(p)?,
                None => run_sweep(
                    &open(&cfg)?,
                    &cfg,
                    &Plan {
                        sizes: rows.iter().map(|r| r.bytes).collect(),
                        mode: (*mode).into(),
                        runs: *runs,
                    },
                )?,
            };
            let cmp = sweep::compare(&doc.rows, &rows)?;
            if let Some(dir) = &c.out {
                let mut csv = String::from("dir,bytes,measured_mb_s,reference_mb_s,error_pct\n");
                for r in &cmp.rows {
                    csv.push_str(&format!(
                        "{},{},{:.3},{:.3},{:.3}\n",
                        r.dir.to_string().to_ascii_lowercase(),
                        r.bytes,
                        r.measured_mb_s,
                        r.reference_mb_s,
                        r.error_pct
                    ));
                }
                let mut paths = vec![
                    report::write(dir, "compare.csv", &csv)?,
                    report::write(dir, "compare.md", &compare_table(&cmp))?,
                ];
                let mut series =
                    throughput_series(&doc.rows, &format!("{} card", doc.meta.backend), false, 0);
                series.extend(throughput_series(
                    &reference_rows(&rows),
                    "reference board",
                    true,
                    0,
                ));
                let svg = dir.join("compare.svg");
                report::line_plot(
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
                wrote(&paths);
            }
            let text = format!(
                "compare: {} against {name}; {}\n\n{}",
                mode_text(doc.mode),
                doc.runs,
                compare_table(&cmp)
            );
            emit_from(c, &doc.meta, &cmp, &text, from.as_deref())
        }
        Cmd::Concurrent { block, seconds } => {
            let card = open(&cfg)?;
            let sim = report::simulated(&card);
            let s = seconds.unwrap_or(if sim { 0.005 } else { 10.0 });
            let span = duration(s, 1.0, "--seconds")?;
            let start = Start::now(&card)?;
            let pb = bar(1000, "concurrent", false);
            let r = scenario::concurrent(&card, to_usize(*block)?, span, &|f| {
                pb.set_position((f.min(1.0) * 1000.0) as u64)
            })?;
            pb.finish_and_clear();
            let meta = report::meta(&card, &cfg, start, (r.span_us * 1e6) as u64);
            if let Some(dir) = &c.out {
                let csv = format!(
                    "block,h2c_transfers,c2h_transfers,h2c_mb_s,c2h_mb_s,total_mb_s\n{},{},{},{:.3},{:.3},{:.3}\n",
                    r.block, r.h2c_transfers, r.c2h_transfers, r.h2c_mb_s, r.c2h_mb_s, r.total_mb_s
                );
                let mut paths = vec![report::write(dir, "concurrent.csv", &csv)?];
                let svg = dir.join("concurrent.svg");
                report::bar_plot(
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
                wrote(&paths);
            }
            let text = format!(
                "concurrent: one write thread and one read thread of {} B at once, each call after its previous one returned, for {s} s of the backend's clock\n\n| | MB/s | transfers |\n| --- | ---: | ---: |\n| H2C | {:.1} | {} |\n| C2H | {:.1} | {} |\n| total | {:.1} | |\n",
                r.block, r.h2c_mb_s, r.h2c_transfers, r.c2h_mb_s, r.c2h_transfers, r.total_mb_s
            );
            emit(c, &meta, &r, &text)
        }
        Cmd::Stream {
            frame,
            channels,
            mode,
            frames,
        } => {
            let card = open(&cfg)?;
            let n = frames.unwrap_or(if report::simulated(&card) {
                256
            } else {
                100_000
            });
            let start = Start::now(&card)?;
            let m = match mode {
                CliStreamMode::OneAtATime => StreamMode::OneAtATime,
                CliStreamMode::Queued => StreamMode::Queued,
            };
            let r = run_streams(&card, to_usize(*frame)?, usize::from(*channels), m, n)?;
            let meta = report::meta(&card, &cfg, start, (r.span_us * 1e6) as u64);
            if let Some(dir) = &c.out {
                let mut csv = String::from("channel,frames,mb_s,us_per_frame\n");
                for ch in &r.channels {
                    csv.push_str(&format!(
                        "{},{},{:.3},{:.4}\n",
                        ch.channel, ch.frames, ch.mb_s, ch.us_per_frame
                    ));
                }
                let mut paths = vec![report::write(dir, "stream.csv", &csv)?];
                let svg = dir.join("stream.svg");
                let mut bars: Vec<(String, f64)> = r
                    .channels
                    .iter()
                    .map(|ch| (format!("C2H {}", ch.channel), ch.mb_s))
                    .collect();
                bars.push(("total".into(), r.total_mb_s));
                report::bar_plot(
                    &svg,
                    &format!("GEN frames of {} B, {:?}", r.frame, m),
                    "MB/s",
                    &bars,
                )?;
                paths.push(svg);
                wrote(&paths);
            }
            let text = stream_text(&r, m);
            emit(c, &meta, &r, &text)
        }
        Cmd::Rtt {
            minutes,
            segment_min,
            affinity,
            frame,
        } => {
            let card = open(&cfg)?;
            let sim = report::simulated(&card);
            let total = minutes.unwrap_or(if sim { 0.0001 } else { 10.0 });
            let seg = segment_min.unwrap_or(if sim { 0.00002 } else { 1.0 });
            let plan = rtt::Plan {
                total: duration(total, 60.0, "--minutes")?,
                segment: duration(seg, 60.0, "--segment-min")?,
                frame: to_usize(*frame)?,
            };
            plan.check()?;
            let start = Start::now(&card)?;
            let pb = bar(plan.segments() as u64, "segments", false);
            let r = rtt::run(&card, &plan, *affinity, sim, |s| {
                pb.inc(1);
                if !c.json {
                    pb.println(format!(
                        "segment {}: period {:.3} us, RTT P50 {:.3} us",
                        s.index, s.period_us, s.rtt_p50_us
                    ));
                }
            })?;
            pb.finish_and_clear();
            let meta = report::meta(&card, &cfg, start, 0);
            if let Some(dir) = &c.out {
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
                let mut paths = vec![report::write(dir, "rtt.csv", &csv)?];
                let line = |name: &str, f: fn(&rtt::Segment) -> f64, colour| Series {
                    name: name.into(),
                    points: r.segments.iter().map(|s| (s.index as f64, f(s))).collect(),
                    reference: false,
                    colour,
                };
                let svg = dir.join("rtt.svg");
                report::line_plot(
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
                wrote(&paths);
            }
            let text = rtt_text(&r);
            emit(c, &meta, &r, &text)
        }
        Cmd::Predict(a) if a.set.is_empty() && a.sweep.is_none() => {
            if a.sizes.is_some() || a.only.is_some() {
                return Err(Error::Invalid {
                    op: "reading the arguments",
                    problem: "--sizes and --only choose what a what-if runs: give --set KEY=VALUE or --sweep KEY=V1,V2,... as well".into(),
                });
            }
            predict(
                c,
                &reference::on_reference_path(&cfg)?,
                a.seconds,
                a.frames,
                a.loop_frames,
            )
        }
        Cmd::Predict(a) => {
            // A what-if that chooses the card itself (its path, variant or top) starts from
            // the configuration as given; any other starts from the reference path.
            let chooses = a
                .set
                .iter()
                .map(String::as_str)
                .chain(a.sweep.as_deref())
                .filter_map(|kv| kv.split_once('=').map(|(k, _)| k.trim()))
                .any(|k| reference::CARD_CHOICE_KEYS.contains(&k));
            let base = if chooses {
                cfg.clone()
            } else {
                reference::on_reference_path(&cfg)?
            };
            what_if(c, &base, a)
        }
        Cmd::Paths { sizes, runs } => paths(c, &cfg, sizes.as_deref(), *runs),
    }
}

fn to_usize(v: u64) -> Result<usize> {
    usize::try_from(v).map_err(|_| Error::Invalid {
        op: "reading the arguments",
        problem: format!("{v} bytes do not fit this host's address space"),
    })
}

fn run_streams(
    card: &Xdma,
    frame: usize,
    channels: usize,
    mode: StreamMode,
    frames: usize,
) -> Result<scenario::Streams> {
    let pb = bar((frames * channels) as u64, "frames", false);
    let r = scenario::streams(card, frame, channels, mode, frames, &|| pb.inc(1));
    pb.finish_and_clear();
    r
}

/// The sweep's rows as the JSON result of `sweep`.
#[derive(Debug, Serialize)]
struct Rows<'a> {
    mode: Mode,
    rows: &'a [Row],
}

fn fit_text(f: &FitReport, doc: &SweepDoc) -> String {
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

fn compare_table(c: &Comparison) -> String {
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

fn stream_text(r: &scenario::Streams, m: StreamMode) -> String {
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

fn rtt_text(r: &rtt::Report) -> String {
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

/// One row of `paths`: a direction and size on both memory paths.
#[derive(Debug, Serialize)]
struct PathRow {
    dir: Direction,
    bytes: u64,
    reference_path_mb_s: f64,
    card_path_mb_s: f64,
    /// The card path's change against the reference path, in percent.
    cost_pct: f64,
}

fn paths(c: &Common, cfg: &Config, sizes: Option<&[u64]>, runs: usize) -> Result<()> {
    if cfg.backend != BackendKind::Sim {
        return Err(Error::Invalid {
            op: "comparing the memory paths",
            problem: "both paths exist on the simulated card only: use --backend sim".into(),
        });
    }
    let sizes = match sizes {
        Some(s) => s.to_vec(),
        None => reference::block_sweep()?.iter().map(|r| r.bytes).collect(),
    };
    let plan = Plan {
        sizes,
        mode: Mode::BackToBack,
        runs: Some(runs.max(1)),
    };
    let ref_cfg = xdma_bench::whatif::apply(cfg, "path", "reference")?;
    let card_cfg = xdma_bench::whatif::apply(cfg, "path", "card")?;
    let on_ref = run_sweep(&open(&ref_cfg)?, &ref_cfg, &plan)?;
    let on_card = run_sweep(&open(&card_cfg)?, &card_cfg, &plan)?;
    let mut rows = Vec::new();
    for r in &on_ref.rows {
        let Some(k) = on_card
            .rows
            .iter()
            .find(|k| k.dir == r.dir && k.bytes == r.bytes)
        else {
            continue;
        };
        rows.push(PathRow {
            dir: r.dir,
            bytes: r.bytes,
            reference_path_mb_s: r.mb_s,
            card_path_mb_s: k.mb_s,
            cost_pct: xdma_bench::stats::error_pct(k.mb_s, r.mb_s),
        });
    }
    let mut text = String::from(
        "paths: the block sweep on the reference board's memory path (XDMA -> SmartConnect -> MIG) and on the card's own (card_core), back to back\n\n\
         | direction | bytes | reference path (MB/s) | card path (MB/s) | card's cost |\n| --- | ---: | ---: | ---: | ---: |\n",
    );
    for r in &rows {
        text.push_str(&format!(
            "| {} | {} | {:.1} | {:.1} | {:+.1} % |\n",
            r.dir, r.bytes, r.reference_path_mb_s, r.card_path_mb_s, r.cost_pct
        ));
    }
    // The card path's meta: both sweeps ran on one build of the simulated card.
    emit(c, &on_card.meta, &rows, &text)
}

/// The predictions of scenarios the timing model was not calibrated on, to be judged against
/// a board (`docs/timing-model.md` lists them).
#[derive(Debug, Serialize)]
struct Predictions {
    concurrent: scenario::Concurrent,
    one_stream: scenario::Streams,
    two_streams: scenario::Streams,
    loop_4132: LoopPrediction,
}

#[derive(Debug, Serialize)]
struct LoopPrediction {
    frame_len: usize,
    frames: u32,
    cycles: u64,
    fraction_of_16_bytes_per_cycle: f64,
    mb_s_at_250_mhz: f64,
}

fn predict(
    c: &Common,
    cfg: &Config,
    seconds: Option<f64>,
    frames: Option<usize>,
    loop_frames: u32,
) -> Result<()> {
    let card = open(cfg)?;
    let sim = report::simulated(&card);
    let start = Start::now(&card)?;
    let s = seconds.unwrap_or(if sim { 0.005 } else { 10.0 });
    let n = frames.unwrap_or(if sim { 256 } else { 100_000 });
    let pb = bar(1000, "concurrent", false);
    let conc = scenario::concurrent(&card, 1 << 20, duration(s, 1.0, "--seconds")?, &|f| {
        pb.set_position((f.min(1.0) * 1000.0) as u64)
    })?;
    pb.finish_and_clear();
    let one = run_streams(&card, 4096, 1, StreamMode::OneAtATime, n)?;
    let two = run_streams(&card, 4096, 2, StreamMode::OneAtATime, n)?;
    let pb = bar(1, "LOOP on RTL", false);
    let l = rtl_tests::loop_rate(4132, loop_frames)
        .map_err(|e| Error::Backend(format!("the LOOP measurement on card_core: {e}")))?;
    pb.finish_and_clear();
    let lp = LoopPrediction {
        frame_len: l.frame_len,
        frames: l.frames,
        cycles: l.cycles,
        fraction_of_16_bytes_per_cycle: l.fraction,
        mb_s_at_250_mhz: l.fraction * 16.0 * 250.0,
    };
    let span = (conc.span_us.max(one.span_us).max(two.span_us) * 1e6) as u64;
    let meta = report::meta(&card, cfg, start, span);
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
    let text = format!(
        "| scenario | {} card | command |\n| --- | --- | --- |\n\
         | one 1 MiB write thread and one 1 MiB read thread at once | H2C {:.1} MB/s, C2H {:.1} MB/s, total {:.1} MB/s | `xdma-bench concurrent --block 1048576 --seconds {s}` |\n\
         | 4096 B GEN frames on one C2H stream, received one at a time | {}; total {:.1} MB/s | `xdma-bench stream --frame 4096 --channels 1 --mode one-at-a-time --frames {n}` |\n\
         | 4096 B GEN frames on both C2H streams at once, each received one at a time | {}; total {:.1} MB/s | `xdma-bench stream --frame 4096 --channels 2 --mode one-at-a-time --frames {n}` |\n\
         | LOOP with 4132 B frames, the card's own rate (RTL, C2H always ready) | {:.4} of 16 B per cycle ({:.1} MB/s at 250 MHz; {} frames in {} cycles) | `cargo run -p rtl-tests --example loop_rate -- 4132 {loop_frames}` |\n",
        meta.backend,
        conc.h2c_mb_s,
        conc.c2h_mb_s,
        conc.total_mb_s,
        per_ch(&one),
        one.total_mb_s,
        per_ch(&two),
        two.total_mb_s,
        lp.fraction_of_16_bytes_per_cycle,
        lp.mb_s_at_250_mhz,
        lp.frames,
        lp.cycles,
    );
    emit(
        c,
        &meta,
        &Predictions {
            concurrent: conc,
            one_stream: one,
            two_streams: two,
            loop_4132: lp,
        },
        &text,
    )
}

/// The what-if predictions: the reference scenarios on the configuration as given and on each
/// configuration that --set or --sweep makes of it, each on a card of its own, as one table.
fn what_if(c: &Common, cfg: &Config, a: &PredictArgs) -> Result<()> {
    if cfg.backend != BackendKind::Sim {
        return Err(Error::Config(format!(
            "predict --set and --sweep change the simulated card's [sim] section, but the backend is {}: use --backend sim",
            cfg.backend.name()
        )));
    }
    let (swept, settings): (Option<String>, Vec<Vec<Setting>>) = match &a.sweep {
        Some(text) => {
            let w: whatif::Sweep = text.parse()?;
            let each = w.settings().into_iter().map(|s| vec![s]).collect();
            (Some(w.key), each)
        }
        None => (
            None,
            vec![a
                .set
                .iter()
                .map(|s| s.parse())
                .collect::<Result<Vec<Setting>>>()?],
        ),
    };
    // Every configuration is checked before any card runs, so that a bad key or value fails
    // at once rather than after minutes of simulation.
    let configs = settings
        .iter()
        .map(|s| whatif::apply_all(cfg, s))
        .collect::<Result<Vec<_>>>()?;
    let only = a
        .only
        .clone()
        .unwrap_or_else(|| vec![Only::Sweep, Only::Concurrent, Only::Streams]);
    let dflt = whatif::Plan::reference();
    if a.sizes.is_some() && !only.contains(&Only::Sweep) {
        return Err(Error::Invalid {
            op: "reading the arguments",
            problem: "--sizes sets the what-if's block sweep, which --only leaves out: add sweep to --only, or drop --sizes".into(),
        });
    }
    let plan = whatif::Plan {
        sizes: if only.contains(&Only::Sweep) {
            a.sizes.clone().unwrap_or(dflt.sizes)
        } else {
            Vec::new()
        },
        concurrent: match (only.contains(&Only::Concurrent), a.seconds) {
            (false, _) => None,
            (true, Some(s)) => Some(duration(s, 1.0, "--seconds")?),
            (true, None) => dflt.concurrent,
        },
        frames: if only.contains(&Only::Streams) {
            a.frames.or(dflt.frames)
        } else {
            None
        },
    };
    plan.check()?;
    let stages = plan.stages();
    let pb = bar(((1 + configs.len()) * stages) as u64, "what-if", false);
    let mut done = 0u64;
    let mut run = |card: &Xdma, name: &str| {
        whatif::measure(card, &plan, &mut |stage| {
            pb.set_position(done);
            pb.set_message(format!("{name}: {stage}"));
            done += 1;
        })
    };
    // The default card stays open to the end: the metadata is read from it.
    let base = open(cfg)?;
    let start = Start::now(&base)?;
    let mut columns = vec![Column::new(Vec::new(), run(&base, "default")?)];
    for (s, sc) in settings.into_iter().zip(&configs) {
        let card = open(sc)?;
        let name = s
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        let m = run(&card, &name)?;
        columns.push(Column::new(s, m));
    }
    pb.finish_and_clear();
    let t = whatif::table(swept, columns);
    let meta = report::meta(&base, cfg, start, (t.simulated_s() * 1e12) as u64);
    if let Some(dir) = &c.out {
        let mut paths = vec![report::write(dir, "whatif.csv", &t.csv())?];
        let svg = dir.join("whatif.svg");
        whatif_plot(&svg, &t)?;
        paths.push(svg);
        wrote(&paths);
    }
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
    let text = format!(
        "what-if: {}; each configuration on a card of its own, every transfer's data checked; changes against the first column\n\n{}",
        scenarios.join("; "),
        t.markdown()
    );
    emit(c, &meta, &t, &text)
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
        return report::bar_plot(
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
    report::line_plot(
        path,
        &format!("The reference scenarios against {key}"),
        XAxis::Linear,
        &x_label,
        "MB/s",
        &series,
    )
}
