//! xdma-bench: the reference board's measurement method on either backend of the host crate
//! (the simulated card or a board on the XDMA driver): block-size sweeps in two timing modes,
//! the fit of the fixed and per-byte cost, a write and a read at once, stream frames, the ECHO
//! round trip, a comparison with a reference table, and the simulated card's predictions:
//! the held-back scenarios (`predict`), and what-ifs that change keys of the `[sim]` section
//! and set the reference scenarios side by side with the configuration as given
//! (`predict --set ip.c2h_request_ids=16`, `predict --sweep timing.link.generation=1,2`).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use xdma::cli::{count_in, positive_in, size_in};
use xdma::{BackendKind, Config, Error, Result, Xdma};
use xdma_bench::measure::Mode;
use xdma_bench::report::{self, files, text, Meta, PathRow, Predictions, Rows, Start, SweepDoc};
use xdma_bench::scenario::{self, StreamMode};
use xdma_bench::sweep::{self, Plan};
use xdma_bench::whatif::{self, Column, Setting};
use xdma_bench::{reference, rtt};

// Every numeric option reads through one of `xdma::cli`'s parsers, which refuse a negative,
// non-finite or out-of-range value with a typed error; each also takes values that start with
// a hyphen (`allow_hyphen_values`), so that `-1` or `-inf` reaches that parser and is refused
// as what it is rather than taken for an unknown flag.
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
    /// Block sizes in bytes, comma-separated; K, M and G suffixes count 1024, 1048576 and
    /// 2^30, and 0x... is hex. Default: 4K to 8M as the reference table.
    #[arg(long, value_delimiter = ',', value_parser = size_in(1, MAX_BLOCK), allow_hyphen_values = true)]
    sizes: Option<Vec<u64>>,
    /// The timing mode.
    #[arg(long, value_enum, default_value = "back-to-back")]
    mode: CliMode,
    /// Runs per size after the one warm-up; default 5, and 8 from 4 MiB. The simulated card
    /// is deterministic, so 1 is a faithful sweep there.
    #[arg(long, value_parser = count_in::<usize>(1, MAX_RUNS), allow_hyphen_values = true)]
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
        #[arg(long, default_value = "1M", value_parser = size_in(1, MAX_BLOCK), allow_hyphen_values = true)]
        block: u64,
        /// How long, in seconds of the backend's clock; default 10 on a board, 0.005 on the
        /// simulated card (at most a day).
        #[arg(long, value_parser = positive_in(MAX_SECONDS), allow_hyphen_values = true)]
        seconds: Option<f64>,
    },
    /// Generated (GEN mode) frames on one or two C2H streams.
    Stream {
        /// Frame length in bytes (64 to 65536).
        #[arg(long, default_value = "4096", value_parser = size_in(64, 65536), allow_hyphen_values = true)]
        frame: u64,
        /// C2H streams at once.
        #[arg(long, default_value_t = 1, value_parser = count_in::<u8>(1, 2), allow_hyphen_values = true)]
        channels: u8,
        /// Post one receive and wait for it, or keep receives queued.
        #[arg(long, value_enum, default_value = "one-at-a-time")]
        mode: CliStreamMode,
        /// Frames per channel; default 100000 on a board, 256 on the simulated card.
        #[arg(long, value_parser = count_in::<usize>(1, MAX_FRAMES), allow_hyphen_values = true)]
        frames: Option<usize>,
    },
    /// The ECHO stop-and-wait round trip, in segments, with tiers and a stability verdict.
    Rtt {
        /// The whole run, in minutes of the backend's clock; default 10 on a board, 0.0001
        /// (6 ms) on the simulated card (at most a day).
        #[arg(long, value_parser = positive_in(MAX_MINUTES), allow_hyphen_values = true)]
        minutes: Option<f64>,
        /// One segment, in minutes; default 1 on a board, 0.00002 (1.2 ms) on the simulated
        /// card.
        #[arg(long, value_parser = positive_in(MAX_MINUTES), allow_hyphen_values = true)]
        segment_min: Option<f64>,
        /// Pin the loop thread to this CPU (0 to 1023).
        #[arg(long, value_name = "CPU", value_parser = count_in::<usize>(0, 1023), allow_hyphen_values = true)]
        affinity: Option<usize>,
        /// Request and answer length in bytes (64 to 65536).
        #[arg(long, default_value = "4096", value_parser = size_in(64, 65536), allow_hyphen_values = true)]
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
        #[arg(long, value_parser = count_in::<usize>(1, MAX_RUNS), allow_hyphen_values = true)]
        runs: Option<usize>,
        /// Only these reference sizes (bytes, comma-separated; K, M and G suffixes, or hex).
        #[arg(long, value_delimiter = ',', value_parser = size_in(1, MAX_BLOCK), allow_hyphen_values = true)]
        sizes: Option<Vec<u64>>,
        /// Compare a sweep that `sweep --out` saved (its sweep.json) instead of running one.
        #[arg(long, value_name = "FILE")]
        from: Option<PathBuf>,
    },
    /// What the card's own memory path costs against the reference board's: the block sweep on
    /// the simulated card with `path = "reference"` (XDMA -> SmartConnect -> MIG) and with
    /// `path = "card"` (card_core's RTL), row by row.
    Paths {
        /// Block sizes in bytes, comma-separated (K, M and G suffixes, or hex); default: the
        /// reference table's sizes.
        #[arg(long, value_delimiter = ',', value_parser = size_in(1, MAX_BLOCK), allow_hyphen_values = true)]
        sizes: Option<Vec<u64>>,
        /// Runs per size after the warm-up; default 1 (the simulated card is deterministic).
        #[arg(long, default_value_t = 1, value_parser = count_in::<usize>(1, MAX_RUNS), allow_hyphen_values = true)]
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
    #[arg(long, value_parser = positive_in(MAX_SECONDS), allow_hyphen_values = true)]
    seconds: Option<f64>,
    /// Frames per stream; default 256 on the simulated card (64 for a what-if), 100000 on a
    /// board.
    #[arg(long, value_parser = count_in::<usize>(1, MAX_FRAMES), allow_hyphen_values = true)]
    frames: Option<usize>,
    /// LOOP frames measured on the card's RTL (not for a what-if).
    #[arg(long, default_value_t = 200, value_parser = count_in::<u32>(1, 1_000_000), allow_hyphen_values = true)]
    loop_frames: u32,
    /// A what-if: KEY (a dotted path inside the [sim] section, e.g. ip.c2h_request_ids,
    /// timing.link.generation, driver.poll_mode) set to VALUE (read as a TOML value, else as a
    /// string). Repeat it to change several keys in one configuration.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// A what-if sweep: KEY set to each value in turn, each value a configuration of its own.
    #[arg(long, value_name = "KEY=V1,V2,...", conflicts_with = "set")]
    sweep: Option<String>,
    /// The what-if's block sizes (bytes, comma-separated; K, M and G suffixes, or hex), both
    /// directions, back to back. Default 4K,64K,1M.
    #[arg(long, value_delimiter = ',', value_parser = size_in(1, MAX_BLOCK), allow_hyphen_values = true)]
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

/// The largest block a transfer takes: 4 GiB (the card's memory is smaller; the plan's check
/// says so against the card at hand).
const MAX_BLOCK: u64 = 1 << 32;
/// The most runs per size.
const MAX_RUNS: u64 = 1000;
/// The most frames per stream: each frame's times are kept.
const MAX_FRAMES: u64 = 10_000_000;
/// The longest run of a scenario: a day.
const MAX_SECONDS: f64 = 86_400.0;
const MAX_MINUTES: f64 = 1_440.0;

fn duration(v: f64, unit_s: f64, what: &str) -> Result<Duration> {
    Duration::try_from_secs_f64(v * unit_s).map_err(|e| Error::Invalid {
        op: "reading the arguments",
        problem: format!("{what} = {v}: {e}"),
    })
}

fn config(c: &Common) -> Result<Config> {
    // The file's errors name it once, after one "invalid xdma configuration".
    let mut cfg = match &c.config {
        Some(path) => Config::from_file(path)?,
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

fn run_sweep(card: &Xdma, cfg: &Config, plan: &Plan) -> Result<SweepDoc> {
    plan.check(card)?;
    let start = Start::now(card)?;
    let pb = bar(plan.work_bytes(), "sweep", true);
    let rows = sweep::sweep(card, plan, |b| pb.inc(b))?;
    pb.finish_and_clear();
    Ok(SweepDoc {
        meta: report::meta(card, cfg, start, 0),
        mode: plan.mode,
        runs: text::runs(plan.runs),
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
                wrote(&files::sweep(dir, &doc)?);
            }
            emit(
                c,
                &doc.meta,
                &Rows {
                    mode: doc.mode,
                    rows: &doc.rows,
                },
                &text::sweep(&doc),
            )
        }
        Cmd::Fit { sweep: a, from } => {
            let doc = match from {
                Some(p) => load_sweep(p)?,
                None => run_sweep(&open(&cfg)?, &cfg, &plan_of(a))?,
            };
            let f = sweep::fit(&doc.rows)?;
            if let Some(dir) = &c.out {
                wrote(&files::fit(dir, &f, &doc)?);
            }
            emit_from(c, &doc.meta, &f, &text::fit(&f, &doc), from.as_deref())
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
                wrote(&files::compare(dir, &cmp, &doc, &rows)?);
            }
            emit_from(
                c,
                &doc.meta,
                &cmp,
                &text::compare(&cmp, &doc, &name),
                from.as_deref(),
            )
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
                wrote(&files::concurrent(dir, &r)?);
            }
            emit(c, &meta, &r, &text::concurrent(&r, s))
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
                wrote(&files::stream(dir, &r, m)?);
            }
            emit(c, &meta, &r, &text::stream(&r, m))
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
                wrote(&files::rtt(dir, &r)?);
            }
            emit(c, &meta, &r, &text::rtt(&r))
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
    let ref_cfg = xdma_bench::setting::apply(cfg, "path", "reference")?;
    let card_cfg = xdma_bench::setting::apply(cfg, "path", "card")?;
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
    // The card path's meta: both sweeps ran on one build of the simulated card.
    emit(c, &on_card.meta, &rows, &text::paths(&rows))
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
    let lp = card
        .loop_rate(4132, loop_frames)
        .map_err(|e| Error::Backend(format!("the LOOP measurement on card_core: {e}")))?
        .map(report::LoopPrediction::from);
    pb.finish_and_clear();
    let span = (conc.span_us.max(one.span_us).max(two.span_us) * 1e6) as u64;
    let meta = report::meta(&card, cfg, start, span);
    let p = Predictions {
        concurrent: conc,
        one_stream: one,
        two_streams: two,
        loop_4132: lp,
    };
    let text = text::predict(&p, &meta.backend, s, n, loop_frames);
    emit(c, &meta, &p, &text)
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
        wrote(&files::what_if(dir, &t)?);
    }
    emit(c, &meta, &t, &text::what_if(&plan, &t))
}

#[cfg(test)]
mod tests {
    use super::*;

    use cli_checks::{check_numeric_options, NumericOption, Takes};

    /// Every numeric option: its command, its name, what it takes (see [`NumericOption`]).
    const OPTIONS: &[NumericOption] = &[
        (&["sweep"], "--sizes", Takes::Size(1, MAX_BLOCK)),
        (&["sweep"], "--runs", Takes::Count(1, MAX_RUNS)),
        (&["fit"], "--sizes", Takes::Size(1, MAX_BLOCK)),
        (&["fit"], "--runs", Takes::Count(1, MAX_RUNS)),
        (&["concurrent"], "--block", Takes::Size(1, MAX_BLOCK)),
        (&["concurrent"], "--seconds", Takes::Positive(MAX_SECONDS)),
        (&["stream"], "--frame", Takes::Size(64, 65536)),
        (&["stream"], "--channels", Takes::Count(1, 2)),
        (&["stream"], "--frames", Takes::Count(1, MAX_FRAMES)),
        (&["rtt"], "--minutes", Takes::Positive(MAX_MINUTES)),
        (&["rtt"], "--segment-min", Takes::Positive(MAX_MINUTES)),
        (&["rtt"], "--affinity", Takes::Count(0, 1023)),
        (&["rtt"], "--frame", Takes::Size(64, 65536)),
        (&["compare"], "--runs", Takes::Count(1, MAX_RUNS)),
        (&["compare"], "--sizes", Takes::Size(1, MAX_BLOCK)),
        (&["paths"], "--sizes", Takes::Size(1, MAX_BLOCK)),
        (&["paths"], "--runs", Takes::Count(1, MAX_RUNS)),
        (&["predict"], "--seconds", Takes::Positive(MAX_SECONDS)),
        (&["predict"], "--frames", Takes::Count(1, MAX_FRAMES)),
        (&["predict"], "--loop-frames", Takes::Count(1, 1_000_000)),
        (&["predict"], "--sizes", Takes::Size(1, MAX_BLOCK)),
    ];

    #[test]
    fn every_numeric_option_is_listed_and_takes_its_range() {
        let non_numeric = [
            "backend",
            "device",
            "config",
            "out",
            "mode",
            "from",
            "reference",
            "set",
            "sweep",
            "only",
        ];
        let cmd = <Cli as clap::CommandFactory>::command();
        check_numeric_options(&cmd, OPTIONS, &non_numeric);
    }

    #[test]
    fn sizes_take_suffixes_and_hex() {
        let cli = Cli::try_parse_from(["xdma-bench", "sweep", "--sizes", "4K,0x10000,1M,2MiB"])
            .expect("sizes with suffixes");
        let Cmd::Sweep(a) = cli.cmd else {
            panic!("not a sweep");
        };
        assert_eq!(a.sizes, Some(vec![4096, 65536, 1 << 20, 2 << 20]));
    }
}
