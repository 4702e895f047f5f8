//! The disk side beside fio: the same bytes written through [`crate::sink::Sink`] and by fio
//! with the same parameters (`--rw=write --bs=B --direct=1 --iodepth=D --size=N --end_fsync=1`),
//! each engine in turn, on files in the same folder.
//! Each writer is timed from its first write to the end of its final sync: the set-up (the
//! file made and reserved, the buffers made) is outside the clock for both, as fio's job runtime
//! leaves out its file's layout.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::sink::{Sink, SinkOptions};
use crate::RecordError;

/// One writer's figures over the rounds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Run {
    /// "xdma-record", "fio libaio", "fio io_uring".
    pub writer: String,
    /// The best round's MB/s (10^6 bytes per second), the final sync included.
    pub mb_s: f64,
    /// The median of the rounds' MB/s (of the middle two for an even count), so that one lucky
    /// round does not decide.
    pub median_mb_s: f64,
    /// Every round's MB/s, in the order they ran.
    pub rounds_mb_s: Vec<f64>,
}

/// The comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BenchDisk {
    /// The folder written in.
    pub dir: PathBuf,
    /// Bytes per run.
    pub size: u64,
    /// Bytes per write.
    pub block: usize,
    /// Writes in flight.
    pub depth: usize,
    /// Rounds run.
    pub rounds: usize,
    /// Each writer's figures, the recorder's first.
    pub runs: Vec<Run>,
    /// The recorder's best MB/s over the better fio engine's best.
    pub ratio: f64,
    /// The recorder's median MB/s over the better fio engine's median.
    pub median_ratio: f64,
}

/// The median of `v` (the mean of the middle two for an even count; 0 for none).
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => 0.0,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

/// Writes `size` bytes from memory through the sink, then runs fio with libaio and with
/// io_uring, all in `dir`, `rounds` times in turn (a shared disk's speed wanders, so each
/// round gives every writer the same conditions); each writer's best and median rounds are
/// given. Each file is removed after its run. `stop` (a signal) ends the benchmark at once:
/// the writer in progress stops (fio is killed), its file is removed, and the result is
/// [`RecordError::Interrupted`].
pub fn bench_disk(
    dir: &Path,
    size: u64,
    opts: SinkOptions,
    rounds: usize,
    stop: &AtomicBool,
) -> Result<BenchDisk, RecordError> {
    if size == 0 || !size.is_multiple_of(opts.block as u64) {
        return Err(RecordError::Options(format!(
            "--size {size}: give a positive multiple of the block ({} bytes)",
            opts.block
        )));
    }
    if rounds == 0 {
        return Err(RecordError::Options("--rounds 0: give at least one".into()));
    }
    if opts.buffered_fallback {
        return Err(RecordError::Options(
            "the benchmark compares O_DIRECT writers (fio's --direct=1): it has no buffered fallback".into(),
        ));
    }
    let writers = ["xdma-record", "fio libaio", "fio io_uring"];
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); writers.len()];
    for _ in 0..rounds {
        let file = dir.join(".xdma-record-bench");
        // fio lays its file out before the job starts; the sink reserves the whole size too.
        let r = sink_run(
            &file,
            size,
            SinkOptions {
                preallocate: size,
                ..opts
            },
            stop,
        );
        let _ = std::fs::remove_file(&file);
        rates[0].push(r.map_err(|e| match e {
            RecordError::NoDirectIo { .. } => RecordError::Options(format!(
                "{}: the file system refuses O_DIRECT (ramfs, tmpfs before Linux 6.6, some network and FUSE file systems), and the benchmark measures O_DIRECT writes, as fio's --direct=1 does: run it in a folder on a disk's file system",
                dir.display()
            )),
            other => other,
        })?);
        for (k, engine) in ["libaio", "io_uring"].iter().enumerate() {
            let f = dir.join(format!(".xdma-record-bench-fio-{engine}"));
            let r = fio_run(&f, size, opts, engine, stop);
            let _ = std::fs::remove_file(&f);
            rates[k + 1].push(r?);
        }
    }
    let runs: Vec<Run> = writers
        .iter()
        .zip(rates)
        .map(|(w, r)| Run {
            writer: (*w).into(),
            mb_s: r.iter().copied().fold(0.0, f64::max),
            median_mb_s: median(&r),
            rounds_mb_s: r,
        })
        .collect();
    let best = runs[1..].iter().map(|r| r.mb_s).fold(0.0, f64::max);
    let best_median = runs[1..].iter().map(|r| r.median_mb_s).fold(0.0, f64::max);
    Ok(BenchDisk {
        dir: dir.to_path_buf(),
        size,
        block: opts.block,
        depth: opts.depth,
        rounds,
        ratio: if best > 0.0 { runs[0].mb_s / best } else { 0.0 },
        median_ratio: if best_median > 0.0 {
            runs[0].median_mb_s / best_median
        } else {
            0.0
        },
        runs,
    })
}

fn interrupted(what: &str) -> RecordError {
    RecordError::Interrupted(format!(
        "during the benchmark's {what} run: its file was removed and no figure is given"
    ))
}

fn sink_run(
    file: &Path,
    size: u64,
    opts: SinkOptions,
    stop: &AtomicBool,
) -> Result<f64, RecordError> {
    // The same data pattern every block, as fio writes its buffers.
    let block: Vec<u8> = (0..opts.block).map(|i| (i * 131 % 251) as u8).collect();
    // The clock starts once the file is made, reserved and the buffers are ready, as fio's
    // job runtime starts after it has laid its file out and made its buffers.
    let mut sink = Sink::create(file, opts)?;
    let started = Instant::now();
    let mut left = size;
    while left > 0 {
        if stop.load(Ordering::SeqCst) {
            return Err(interrupted("xdma-record"));
        }
        if !sink.push(&block)? {
            break;
        }
        left -= opts.block as u64;
    }
    let report = sink.finish()?;
    if let Some(f) = report.failed {
        return Err(RecordError::Disk {
            what: format!("write at byte {} of", f.offset),
            path: file.to_path_buf(),
            source: std::io::Error::other(f.error),
        });
    }
    Ok(size as f64 / started.elapsed().as_secs_f64() / 1e6)
}

fn fio_run(
    file: &Path,
    size: u64,
    opts: SinkOptions,
    engine: &str,
    stop: &AtomicBool,
) -> Result<f64, RecordError> {
    if stop.load(Ordering::SeqCst) {
        return Err(interrupted(&format!("fio {engine}")));
    }
    let mut child = Command::new("fio")
        .args([
            "--name=xdma-record-bench",
            "--rw=write",
            "--direct=1",
            "--end_fsync=1",
            "--output-format=json",
        ])
        .arg(format!("--filename={}", file.display()))
        .arg(format!("--bs={}", opts.block))
        .arg(format!("--iodepth={}", opts.depth))
        .arg(format!("--size={size}"))
        .arg(format!("--ioengine={engine}"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            RecordError::Fio(format!(
                "cannot run fio ({e}); install it (Debian: apt-get install fio)"
            ))
        })?;
    // fio runs while this process watches for a signal: one sent to this process alone (a
    // SIGTERM) must stop fio too. Its output is read on threads of their own, so that a full
    // pipe never holds it.
    let read = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut text);
            }
            text
        })
    };
    let stdout = read(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = read(child.stderr.take().map(|p| Box::new(p) as _));
    let status = loop {
        if stop.load(Ordering::SeqCst) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(interrupted(&format!("fio {engine}")));
        }
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(RecordError::Fio(format!("{engine}: waiting for fio: {e}"))),
        }
    };
    let out = std::process::Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    };
    // A Ctrl-C at a terminal reaches fio too, which then ends early with a partial figure.
    if stop.load(Ordering::SeqCst) {
        return Err(interrupted(&format!("fio {engine}")));
    }
    if !out.status.success() {
        return Err(RecordError::Fio(format!(
            "{engine}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    // fio may print notes before its JSON document.
    let json = text.find('{').map_or("", |i| &text[i..]);
    let v: serde_json::Value = serde_json::from_str(json)
        .map_err(|e| RecordError::Fio(format!("{engine}: its JSON output does not parse: {e}")))?;
    let job = &v["jobs"][0];
    // fio's runtime includes the end_fsync (it grows by the flush's time when the writes
    // were buffered), as the sink's figure includes its final sync.
    let bytes = job["write"]["io_bytes"].as_u64().unwrap_or(0);
    let runtime_ms = job["job_runtime"]
        .as_f64()
        .or_else(|| job["write"]["runtime"].as_f64());
    match runtime_ms {
        Some(ms) if ms > 0.0 && bytes > 0 => Ok(bytes as f64 / (ms / 1e3) / 1e6),
        _ => Err(RecordError::Fio(format!(
            "{engine}: no write figure in its output"
        ))),
    }
}
