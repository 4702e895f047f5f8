//! The `xdma-record` command: record the card's streams to a file, verify a recording, or
//! measure the disk beside fio.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clap::{Parser, Subcommand};
use xdma::{Config, Xdma};
use xdma_record::record::{record_ring, record_streams, EndReason, RingPlan, StreamPlan};
use xdma_record::sink::SinkOptions;
use xdma_record::{bench, verify, RecordError};

#[derive(Parser, Debug)]
#[command(
    version,
    about = "Record the card's acquisition to disk, verify a recording, or measure the disk beside fio"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Record generated frames from the card's C2H streams, or from its CAPTURE ring in DDR,
    /// into FILE (manifest: FILE.json, plot: FILE.svg)
    Record {
        /// The file to write
        file: PathBuf,
        /// Where the frames come from: `stream` (C2H streams) or `ring` (the CAPTURE ring in
        /// card DDR, read over a memory-mapped C2H channel)
        #[arg(long, default_value = "stream")]
        source: String,
        /// The ring's base address in card memory (a multiple of 4096)
        #[arg(long, default_value_t = 0)]
        ring_base: u64,
        /// The ring's size in bytes (a multiple of 4096)
        #[arg(long, default_value_t = 16 << 20)]
        ring_size: u64,
        /// The most bytes one read of the ring takes
        #[arg(long, default_value_t = 1 << 20)]
        ring_read: usize,
        /// Streams: 1 or 2
        #[arg(long, default_value_t = 1)]
        channels: usize,
        /// Bytes per frame (64 to 65536)
        #[arg(long, default_value_t = 4096)]
        frame: usize,
        /// Frames per stream; 0 records until Ctrl-C or SIGTERM
        #[arg(long, default_value_t = 0)]
        frames: u64,
        /// Receives kept posted on each stream
        #[arg(long, default_value_t = 4)]
        queued: usize,
        /// The sources drop (and count) frames the host does not take in time, instead of
        /// waiting
        #[arg(long)]
        drop: bool,
        /// How long a receive waits for its frame (the card's clock) before the card is taken to
        /// have stopped sending, in milliseconds
        #[arg(long, default_value_t = 100.0)]
        frame_wait_ms: f64,
        #[command(flatten)]
        sink: SinkArgs,
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
    /// (libaio and io_uring), in one folder, and compare
    BenchDisk {
        /// The folder to write in
        #[arg(long, default_value = ".")]
        dir: PathBuf,
        /// Bytes per run
        #[arg(long, default_value_t = 1 << 30)]
        size: u64,
        /// Rounds of the three writers in turn; each writer's best counts
        #[arg(long, default_value_t = 3)]
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
    /// Bytes per write (a multiple of 4096)
    #[arg(long, default_value_t = 1 << 20)]
    block: usize,
    /// Writes in flight
    #[arg(long, default_value_t = 32)]
    depth: usize,
    /// fdatasync every this many seconds while recording (besides the one at the end)
    #[arg(long)]
    sync_every: Option<f64>,
    /// Where the file system refuses O_DIRECT, write through the page cache instead
    #[arg(long)]
    buffered: bool,
}

impl SinkArgs {
    fn options(&self, preallocate: u64) -> Result<SinkOptions, RecordError> {
        let sync_every = match self.sync_every {
            None => None,
            Some(s) if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64(s)),
            Some(s) => {
                return Err(RecordError::Options(format!(
                    "--sync-every {s}: give a positive number of seconds"
                )))
            }
        };
        Ok(SinkOptions {
            block: self.block,
            depth: self.depth,
            preallocate,
            sync_every,
            buffered_fallback: self.buffered,
        })
    }
}

/// Set by SIGINT and SIGTERM: the recording stops at the next frame, syncs and writes its
/// manifest.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

fn catch_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe; the
        // function pointer has the C ABI that signal(2) expects.
        unsafe {
            libc::signal(
                sig,
                on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
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
            config,
            json,
        } => {
            if !(frame_wait_ms.is_finite() && frame_wait_ms > 0.0) {
                return Err(RecordError::Options(format!(
                    "--frame-wait-ms {frame_wait_ms}: give a positive number of milliseconds"
                )));
            }
            let plan = StreamPlan {
                channels,
                frame,
                frames,
                queued,
                drop,
                frame_wait: Duration::from_secs_f64(frame_wait_ms / 1e3),
            };
            let cfg = match config {
                Some(p) => {
                    let text = std::fs::read_to_string(&p).map_err(|e| RecordError::Disk {
                        what: "read the configuration".into(),
                        path: p.clone(),
                        source: e,
                    })?;
                    Config::from_toml(&text)?
                }
                None => Config::from_env()?,
            };
            let card = Xdma::open(&cfg)?;
            let total = frames * channels as u64 * frame as u64;
            let opts = sink.options(total)?;
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
            let m = match source.as_str() {
                "stream" => record_streams(&card, &plan, &file, opts, &STOP, &mut show)?,
                "ring" => {
                    let ring = RingPlan {
                        base: ring_base,
                        size: ring_size,
                        frame,
                        frames,
                        read: ring_read,
                        ..RingPlan::default()
                    };
                    record_ring(&card, &ring, &file, opts, &STOP, &mut show)?
                }
                other => {
                    return Err(RecordError::Options(format!(
                        "--source {other}: give `stream` or `ring`"
                    )))
                }
            };
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
                if let Some(c) = r.cut_at {
                    println!("  the file ends inside the frame that starts at byte {c}: everything before it is whole");
                }
                for m in &r.manifest_mismatches {
                    println!("  manifest: {m}");
                }
                if !r.manifest {
                    println!("  no manifest beside the file");
                }
                println!("  {}", if r.ok() { "OK" } else { "NOT OK" });
            }
            Ok(r.ok())
        }
        Cmd::Plot { file } => {
            let m = xdma_record::record::read_manifest(&file)?;
            let out = xdma_record::plot::plot_path(&file);
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
            let b = bench::bench_disk(&dir, size, sink.options(0)?, rounds)?;
            if json {
                print_json(&b)?;
            } else {
                println!(
                    "{} bytes in {}, blocks of {} bytes, {} in flight, O_DIRECT, end fsync; best of {} rounds:",
                    b.size,
                    b.dir.display(),
                    b.block,
                    b.depth,
                    b.rounds
                );
                for r in &b.runs {
                    println!("  {:<14} {:>9.1} MB/s", r.writer, r.mb_s);
                }
                println!("  ratio (xdma-record / fio's best): {:.3}", b.ratio);
            }
            Ok(true)
        }
    }
}

fn main() -> ExitCode {
    // Before anything slow (opening a simulated card takes seconds): a signal that comes
    // early must still stop the recording cleanly.
    catch_signals();
    match run(Cli::parse()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("xdma-record: {e}");
            ExitCode::from(2)
        }
    }
}
