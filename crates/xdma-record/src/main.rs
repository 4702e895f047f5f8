//! The `xdma-record` command: record the card's streams to a file, verify a recording, or
//! measure the disk beside fio.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use xdma::cli::{count_in, positive_in, size_in};
use xdma::{Config, Xdma};
use xdma_record::record::{record_ring, record_streams, EndReason, RingPlan, StreamPlan};
use xdma_record::sink::SinkOptions;
use xdma_record::{bench, verify, RecordError};

// Every numeric option reads through one of `xdma::cli`'s parsers, which refuse a negative,
// non-finite or out-of-range value with a typed error; each also takes values that start with
// a hyphen (`allow_hyphen_values`), so that `-1` or `-inf` reaches that parser and is refused
// as what it is rather than taken for an unknown flag.
#[derive(Parser, Debug)]
#[command(
    version,
    about = "Record the card's acquisition to disk, verify a recording, or measure the disk beside fio",
    long_about = "Record the card's acquisition to disk, verify a recording, or measure the disk beside fio.\n\n\
        Byte sizes take K, M and G (x1024) and hex (0x...), as xdma-bench's do. Ctrl-C or SIGTERM \
        stops a recording cleanly (the file synced, the manifest written) and a benchmark with its \
        files removed; the exit status is then 128 + the signal's number (130, 143), so that a \
        script tells a stopped run from a finished one. A second signal ends the process at once."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

/// Where a recording's frames come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Source {
    /// The C2H streams.
    Stream,
    /// The CAPTURE ring in card DDR, read over a memory-mapped C2H channel.
    Ring,
}

/// The largest frame wait: an hour of the card's clock (a receive that waits longer has lost
/// its card).
const FRAME_WAIT_MAX_MS: f64 = 3_600_000.0;
/// The longest sync interval: a day.
const SYNC_EVERY_MAX_S: f64 = 86_400.0;

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Record generated frames from the card's C2H streams, or from its CAPTURE ring in DDR,
    /// into FILE (manifest: FILE.json, plot: FILE.svg)
    Record {
        /// The file to write
        file: PathBuf,
        /// Where the frames come from: `stream` (C2H streams) or `ring` (the CAPTURE ring in
        /// card DDR, read over a memory-mapped C2H channel)
        #[arg(long, value_enum, default_value = "stream")]
        source: Source,
        /// The ring's base address in card memory (a multiple of 4096; default 0; ring only)
        #[arg(long, value_parser = size_in(0, u64::from(u32::MAX)), allow_hyphen_values = true)]
        ring_base: Option<u64>,
        /// The ring's size in bytes (a multiple of 4096; default 16M; ring only)
        #[arg(long, value_parser = size_in(4096, u64::from(u32::MAX) + 1 - 4096), allow_hyphen_values = true)]
        ring_size: Option<u64>,
        /// The most bytes one read of the ring takes (a multiple of 16; default 1M; ring only)
        #[arg(long, value_parser = size_in(16, 1 << 30), allow_hyphen_values = true)]
        ring_read: Option<u64>,
        /// Streams: 1 or 2 (stream only: the ring holds frame source 0 alone)
        #[arg(long, value_parser = count_in::<usize>(1, 2), allow_hyphen_values = true)]
        channels: Option<usize>,
        /// Bytes per frame (64 to 64K)
        #[arg(long, default_value = "4096", value_parser = size_in(64, 65536), allow_hyphen_values = true)]
        frame: u64,
        /// Frames per stream; 0 records until Ctrl-C or SIGTERM
        #[arg(long, default_value_t = 0, value_parser = count_in::<u64>(0, u64::MAX), allow_hyphen_values = true)]
        frames: u64,
        /// Receives kept posted on each stream (default 4; stream only)
        #[arg(long, value_parser = count_in::<usize>(1, 64), allow_hyphen_values = true)]
        queued: Option<usize>,
        /// The sources drop (and count) frames the host does not take in time, instead of
        /// waiting (stream only: a full ring always drops new frames)
        #[arg(long)]
        drop: bool,
        /// How long a receive waits for its frame (the card's clock) before the card is taken to
        /// have stopped sending, in milliseconds (default 100, at most an hour; stream only)
        #[arg(long, value_parser = positive_in(FRAME_WAIT_MAX_MS), allow_hyphen_values = true)]
        frame_wait_ms: Option<f64>,
        #[command(flatten)]
        sink: SinkArgs,
        /// Where the file system refuses O_DIRECT, write through the page cache instead
        #[arg(long)]
        buffered: bool,
        /// A TOML configuration file (xdma::Config); default: XDMA_CONFIG, else the simulated card
        #[arg(long)]
        config: Option<PathBuf>,
        /// Print the manifest as JSON on stdout and nothing else there
        #[arg(long)]
        json: bool,
    },
    /// Check every frame of a recording and reconcile it with its manifest
    Verify {
        /// The recording
        file: PathBuf,
        /// Print the report as JSON
        #[arg(long)]
        json: bool,
    },
    /// Draw a recording's bandwidth against time (FILE.svg) from its manifest
    Plot {
        /// The recording
        file: PathBuf,
    },
    /// Write from memory through the recorder's sink, then run fio with the same parameters
    /// (libaio and io_uring), in one folder, and compare; both write with O_DIRECT
    BenchDisk {
        /// The folder to write in
        #[arg(long, default_value = ".")]
        dir: PathBuf,
        /// Bytes per run (a multiple of the block; default 1G)
        #[arg(long, default_value = "1G", value_parser = size_in(4096, 1 << 40), allow_hyphen_values = true)]
        size: u64,
        /// Rounds of the three writers in turn; each writer's best and median are given
        #[arg(long, default_value = "3", value_parser = count_in::<usize>(1, 1000), allow_hyphen_values = true)]
        rounds: usize,
        #[command(flatten)]
        sink: SinkArgs,
        /// Print the result as JSON
        #[arg(long)]
        json: bool,
    },
}

#[derive(clap::Args, Debug)]
struct SinkArgs {
    /// Bytes per write (a multiple of 4096, up to 1G)
    #[arg(long, default_value = "1M", value_parser = size_in(4096, 1 << 30), allow_hyphen_values = true)]
    block: u64,
    /// Writes in flight
    #[arg(long, default_value = "32", value_parser = count_in::<usize>(1, 4096), allow_hyphen_values = true)]
    depth: usize,
    /// fdatasync every this many seconds while recording (besides the one at the end; at most
    /// a day)
    #[arg(long, value_parser = positive_in(SYNC_EVERY_MAX_S), allow_hyphen_values = true)]
    sync_every: Option<f64>,
}

impl SinkArgs {
    fn options(&self, preallocate: u64, buffered: bool) -> Result<SinkOptions, RecordError> {
        let sync_every = match self.sync_every {
            None => None,
            Some(s) => Some(
                Duration::try_from_secs_f64(s)
                    .map_err(|e| RecordError::Options(format!("--sync-every {s}: {e}")))?,
            ),
        };
        Ok(SinkOptions {
            block: usize::try_from(self.block).map_err(|_| {
                RecordError::Options(format!(
                    "--block {}: more than this host's address space",
                    self.block
                ))
            })?,
            depth: self.depth,
            preallocate,
            sync_every,
            buffered_fallback: buffered,
        })
    }
}

/// The first SIGINT or SIGTERM, or 0: a recording stops at the next frame, syncs and writes
/// its manifest; a benchmark stops its writer and removes its files.
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// Set with [`SIGNAL`], for the library's loops.
static STOP: AtomicBool = AtomicBool::new(false);
/// Commands with nothing to finish (verify, plot) end at the first signal.
static AT_ONCE: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(sig: libc::c_int) {
    if AT_ONCE.load(Ordering::SeqCst) || SIGNAL.swap(sig, Ordering::SeqCst) != 0 {
        // SAFETY: _exit is async-signal-safe; nothing of the process is used after it.
        unsafe { libc::_exit(128 + sig) };
    }
    STOP.store(true, Ordering::SeqCst);
}

fn catch_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only touches atomics and calls _exit, which are
        // async-signal-safe; the function pointer has the C ABI that signal(2) expects.
        unsafe {
            libc::signal(
                sig,
                on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
    }
}

/// The exit status of a run a signal stopped: 128 + its number, as a shell reports it.
fn stopped_status() -> Option<ExitCode> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        sig => Some(ExitCode::from(u8::try_from(128 + sig).unwrap_or(u8::MAX))),
    }
}

/// Prints one JSON document on stdout.
fn print_json(v: &impl serde::Serialize) -> Result<(), RecordError> {
    let text = serde_json::to_string_pretty(v).map_err(|e| RecordError::Options(e.to_string()))?;
    println!("{text}");
    Ok(())
}

fn run(cli: Cli) -> Result<bool, RecordError> {
    match cli.cmd {
        Cmd::Record {
            file,
            source,
            ring_base,
            ring_size,
            ring_read,
            channels,
            frame,
            frames,
            queued,
            drop,
            frame_wait_ms,
            sink,
            buffered,
            config,
            json,
        } => {
            // An option of the other source would be ignored, and the recording would not be
            // the one asked for: refused before the card is opened.
            let misplaced: Vec<&str> = match source {
                Source::Ring => [
                    (channels == Some(2), "--channels 2"),
                    (queued.is_some(), "--queued"),
                    (drop, "--drop"),
                    (frame_wait_ms.is_some(), "--frame-wait-ms"),
                ]
                .into_iter()
                .filter_map(|(given, name)| given.then_some(name))
                .collect(),
                Source::Stream => [
                    (ring_base.is_some(), "--ring-base"),
                    (ring_size.is_some(), "--ring-size"),
                    (ring_read.is_some(), "--ring-read"),
                ]
                .into_iter()
                .filter_map(|(given, name)| given.then_some(name))
                .collect(),
            };
            if !misplaced.is_empty() {
                return Err(RecordError::Options(match source {
                    Source::Ring => format!(
                        "{} applies to --source stream only: the CAPTURE ring holds frame source 0 alone (one channel) and drops new frames when it is full; leave it out, or record the streams",
                        misplaced.join(", ")
                    ),
                    Source::Stream => format!(
                        "{} applies to --source ring only; add --source ring, or leave it out",
                        misplaced.join(", ")
                    ),
                }));
            }
            let channels = channels.unwrap_or(1);
            // Within 64..=65536 by its parser.
            let frame = frame as usize;
            // The whole recording is allocated ahead when its size is known: it must be a size
            // a file can have.
            let total = frames
                .checked_mul(channels as u64)
                .and_then(|n| n.checked_mul(frame as u64))
                .filter(|&n| i64::try_from(n).is_ok())
                .ok_or_else(|| {
                    RecordError::Options(format!(
                        "--frames {frames}: {frames} frames of {frame} bytes on {channels} stream(s) are more than a file can hold (2^63 - 1 bytes); give fewer, or 0 to record until Ctrl-C"
                    ))
                })?;
            let frame_wait = match frame_wait_ms {
                None => xdma_record::record::FRAME_WAIT,
                Some(ms) => Duration::try_from_secs_f64(ms / 1e3)
                    .map_err(|e| RecordError::Options(format!("--frame-wait-ms {ms}: {e}")))?,
            };
            let opts = sink.options(total, buffered)?;
            let plan = StreamPlan {
                channels,
                frame,
                frames,
                queued: queued.unwrap_or(StreamPlan::default().queued),
                drop,
                frame_wait,
            };
            let cfg = match config {
                Some(p) => Config::from_file(&p),
                None => Config::from_env(),
            }
            .map_err(RecordError::Config)?;
            let card = Xdma::open(&cfg)?;
            if STOP.load(Ordering::SeqCst) {
                return Err(RecordError::Interrupted(
                    "before the recording began: nothing was written".into(),
                ));
            }
            let bar = if json {
                indicatif::ProgressBar::hidden()
            } else {
                indicatif::ProgressBar::new_spinner()
            };
            // The rate now is over the time since the line was last drawn (at least 0.2 s).
            let (mut last_s, mut last_bytes) = (0.0f64, 0u64);
            let mut show = |p: &xdma_record::record::Progress| {
                let span = p.wall_s - last_s;
                if span >= 0.2 || last_s == 0.0 {
                    let now = (p.bytes - last_bytes) as f64 / span.max(1e-9) / 1e6;
                    (last_s, last_bytes) = (p.wall_s.max(1e-9), p.bytes);
                    bar.set_message(format!(
                        "{:.1} MiB, {:.1} MB/s now, {:.1} MB/s mean, {} frames, {} missing",
                        p.bytes as f64 / 1048576.0,
                        now,
                        p.bytes as f64 / p.wall_s.max(1e-9) / 1e6,
                        p.frames,
                        p.missing
                    ));
                    bar.tick();
                }
            };
            let m = match source {
                Source::Stream => record_streams(&card, &plan, &file, opts, &STOP, &mut show)?,
                Source::Ring => {
                    let dflt = RingPlan::default();
                    let ring = RingPlan {
                        base: ring_base.unwrap_or(dflt.base),
                        size: ring_size.unwrap_or(dflt.size),
                        frame,
                        frames,
                        // Within 16 bytes..1 GiB by its parser.
                        read: ring_read.map_or(dflt.read, |r| r as usize),
                        ..dflt
                    };
                    record_ring(&card, &ring, &file, opts, &STOP, &mut show)?
                }
            };
            let beside = xdma_record::manifest_path(&file);
            let elsewhere = m.written_at.as_ref().filter(|&at| *at != beside);
            if let Some(at) = elsewhere {
                // Said on stderr, so that stdout stays one document under --json.
                eprintln!(
                    "xdma-record: no room for the manifest beside the recording: it is at {}; move it to {} once there is room",
                    at.display(),
                    beside.display()
                );
            }
            bar.finish_and_clear();
            if json {
                print_json(&m)?;
            } else {
                println!(
                    "{}: {} frames, {} bytes in {:.2} s ({:.1} MB/s at the disk; {:.1} us of the card's clock)",
                    file.display(),
                    m.frames,
                    m.bytes,
                    m.wall_s,
                    m.bytes as f64 / m.wall_s.max(1e-9) / 1e6,
                    m.card_span_us
                );
                for s in &m.streams {
                    println!(
                        "  C2H {}: {} frames written, {} missing, {} bad; the card sent {} and dropped {}",
                        s.channel, s.frames, s.missing, s.bad_frames, s.card_sent, s.card_dropped
                    );
                }
                if !m.sink_report.direct {
                    println!("  written through the page cache (--buffered): the file system refuses O_DIRECT");
                }
                println!("  ended: {}", m.end_detail);
            }
            Ok(matches!(m.end, EndReason::Done | EndReason::Stopped))
        }
        Cmd::Verify { file, json } => {
            let r = verify::verify(&file)?;
            if json {
                print_json(&r)?;
            } else {
                println!(
                    "{}: {} bytes, {} good frames, {} bad",
                    file.display(),
                    r.bytes,
                    r.good_frames,
                    r.bad_frames
                );
                for c in &r.channels {
                    println!(
                        "  channel {}: {} frames, sequence {:?}..{:?}, {} missing",
                        c.channel, c.good, c.first_sequence, c.last_sequence, c.missing
                    );
                }
                for g in &r.gaps {
                    println!(
                        "  gap on channel {} at byte {}: {} after {} expected ({} missing)",
                        g.channel, g.offset, g.got, g.expected, g.missing
                    );
                }
                for f in &r.faults {
                    println!("  fault at byte {}: {}", f.offset, f.problem);
                }
                match (r.cut_at, r.zeros_from) {
                    (Some(c), Some(z)) => println!(
                        "  the frame that starts at byte {c} is cut short: from byte {z} to the end the file is zeros, space allocated ahead that no write reached (a recording killed or cut short); everything before byte {c} is whole"
                    ),
                    (Some(c), None) => println!(
                        "  the file ends inside the frame that starts at byte {c}: everything before it is whole"
                    ),
                    (None, Some(0)) => println!(
                        "  the file is zeros only: space allocated for a recording that no write reached"
                    ),
                    (None, Some(z)) => println!(
                        "  from byte {z} to the end the file is zeros: space allocated ahead that no write reached (a recording killed or cut short); everything before it is whole"
                    ),
                    (None, None) => {}
                }
                if r.bytes == 0 {
                    println!("  the file is empty: it holds no frame");
                } else if r.good_frames == 0 && r.zeros_from != Some(0) {
                    println!("  no good frame in the file");
                }
                for m in &r.manifest_mismatches {
                    println!("  manifest: {m}");
                }
                if let Some(p) = &r.manifest_problem {
                    println!("  the manifest does not read: {p}");
                } else if !r.manifest {
                    println!("  no manifest beside the file");
                }
                println!("  {}", if r.ok() { "OK" } else { "NOT OK" });
            }
            Ok(r.ok())
        }
        Cmd::Plot { file } => {
            let m = xdma_record::record::read_manifest(&file)?;
            let out = xdma_record::plot_path(&file);
            xdma_record::plot::plot(&m, &out)?;
            println!("{}", out.display());
            Ok(true)
        }
        Cmd::BenchDisk {
            dir,
            size,
            rounds,
            sink,
            json,
        } => {
            let b = bench::bench_disk(&dir, size, sink.options(0, false)?, rounds, &STOP)?;
            if json {
                print_json(&b)?;
            } else {
                println!(
                    "{} bytes in {}, blocks of {} bytes, {} in flight, O_DIRECT, end fsync; {} rounds:",
                    b.size,
                    b.dir.display(),
                    b.block,
                    b.depth,
                    b.rounds
                );
                println!("  {:<14} {:>9} {:>9}  (MB/s)", "", "best", "median");
                for r in &b.runs {
                    println!("  {:<14} {:>9.1} {:>9.1}", r.writer, r.mb_s, r.median_mb_s);
                }
                println!(
                    "  ratio (xdma-record / fio's better engine): {:.3} best, {:.3} median",
                    b.ratio, b.median_ratio
                );
            }
            Ok(true)
        }
    }
}

fn main() -> ExitCode {
    // Before anything slow (opening a simulated card takes seconds): a signal that comes
    // early must still stop the recording cleanly.
    catch_signals();
    let cli = Cli::parse();
    if matches!(cli.cmd, Cmd::Verify { .. } | Cmd::Plot { .. }) {
        // They only read and draw: a signal ends them at once.
        AT_ONCE.store(true, Ordering::SeqCst);
        if let Some(code) = stopped_status() {
            return code;
        }
    }
    let r = run(cli);
    if let Some(code) = stopped_status() {
        if let Err(e) = r {
            eprintln!("xdma-record: {e}");
        }
        return code;
    }
    match r {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("xdma-record: {e}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::error::ErrorKind;

    use cli_checks::{check_numeric_options, NumericOption, Takes};

    /// Every numeric option: the arguments before it, its name, what it takes.
    const OPTIONS: &[NumericOption] = &[
        (
            &["record", "f", "--source", "ring"],
            "--ring-base",
            Takes::Size(0, u32::MAX as u64),
        ),
        (
            &["record", "f", "--source", "ring"],
            "--ring-size",
            Takes::Size(4096, (1 << 32) - 4096),
        ),
        (
            &["record", "f", "--source", "ring"],
            "--ring-read",
            Takes::Size(16, 1 << 30),
        ),
        (&["record", "f"], "--channels", Takes::Count(1, 2)),
        (&["record", "f"], "--frame", Takes::Size(64, 65536)),
        (&["record", "f"], "--frames", Takes::Count(0, u64::MAX)),
        (&["record", "f"], "--queued", Takes::Count(1, 64)),
        (
            &["record", "f"],
            "--frame-wait-ms",
            Takes::Positive(FRAME_WAIT_MAX_MS),
        ),
        (&["record", "f"], "--block", Takes::Size(4096, 1 << 30)),
        (&["record", "f"], "--depth", Takes::Count(1, 4096)),
        (
            &["record", "f"],
            "--sync-every",
            Takes::Positive(SYNC_EVERY_MAX_S),
        ),
        (&["bench-disk"], "--size", Takes::Size(4096, 1 << 40)),
        (&["bench-disk"], "--rounds", Takes::Count(1, 1000)),
        (&["bench-disk"], "--block", Takes::Size(4096, 1 << 30)),
        (&["bench-disk"], "--depth", Takes::Count(1, 4096)),
        (
            &["bench-disk"],
            "--sync-every",
            Takes::Positive(SYNC_EVERY_MAX_S),
        ),
    ];

    #[test]
    fn every_numeric_option_is_listed_and_takes_its_range() {
        let cmd = <Cli as clap::CommandFactory>::command();
        check_numeric_options(&cmd, OPTIONS, &["file", "dir", "config", "source"]);
    }

    #[test]
    fn sizes_take_suffixes_and_hex() {
        let cli = Cli::try_parse_from([
            "xdma-record",
            "record",
            "f",
            "--source",
            "ring",
            "--frame",
            "4K",
            "--block",
            "2M",
            "--ring-size",
            "0x100000",
            "--ring-read",
            "64KiB",
        ])
        .expect("sizes with suffixes");
        let Cmd::Record {
            frame,
            sink,
            ring_size,
            ring_read,
            ..
        } = cli.cmd
        else {
            panic!("not a recording");
        };
        assert_eq!(
            (frame, sink.block, ring_size, ring_read),
            (4096, 2 << 20, Some(1 << 20), Some(64 << 10))
        );
    }

    #[test]
    fn bench_disk_has_no_buffered_fallback() {
        let e = Cli::try_parse_from(["xdma-record", "bench-disk", "--buffered"])
            .expect_err("bench-disk measures O_DIRECT writes only");
        assert_eq!(e.kind(), ErrorKind::UnknownArgument, "{e}");
    }
}
