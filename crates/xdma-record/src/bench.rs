//! The disk side beside fio: the same bytes written through [`crate::sink::Sink`] and by fio
//! with the same parameters (`--rw=write --bs=B --direct=1 --iodepth=D --size=N --end_fsync=1`),
//! each engine in turn, on files in the same folder.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde::Serialize;

use crate::sink::{Sink, SinkOptions};
use crate::RecordError;

/// One run's figure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Run {
    /// "xdma-record", "fio libaio", "fio io_uring".
    pub writer: String,
    /// MB/s (10^6 bytes per second), the final sync included.
    pub mb_s: f64,
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
    /// Rounds run; each writer's best counts.
    pub rounds: usize,
    /// Each writer's best round, the recorder's first.
    pub runs: Vec<Run>,
    /// The recorder's MB/s over fio's best.
    pub ratio: f64,
}

/// Writes `size` bytes from memory through the sink, then runs fio with libaio and with
/// io_uring, all in `dir`, `rounds` times in turn (a shared disk's speed wanders, so each
/// round gives every writer the same conditions); each writer's best round counts. Each file
/// is removed after its run.
pub fn bench_disk(
    dir: &Path,
    size: u64,
    opts: SinkOptions,
    rounds: usize,
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
    let mut runs: Vec<Run> = ["xdma-record", "fio libaio", "fio io_uring"]
        .iter()
        .map(|w| Run {
            writer: (*w).into(),
            mb_s: 0.0,
        })
        .collect();
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
        );
        let _ = std::fs::remove_file(&file);
        runs[0].mb_s = runs[0].mb_s.max(r?);
        for (k, engine) in ["libaio", "io_uring"].iter().enumerate() {
            let f = dir.join(format!(".xdma-record-bench-fio-{engine}"));
            let r = fio_run(&f, size, opts, engine);
            let _ = std::fs::remove_file(&f);
            runs[k + 1].mb_s = runs[k + 1].mb_s.max(r?);
        }
    }
    let best = runs[1..].iter().map(|r| r.mb_s).fold(0.0, f64::max);
    Ok(BenchDisk {
        dir: dir.to_path_buf(),
        size,
        block: opts.block,
        depth: opts.depth,
        rounds,
        ratio: if best > 0.0 { runs[0].mb_s / best } else { 0.0 },
        runs,
    })
}

fn sink_run(file: &Path, size: u64, opts: SinkOptions) -> Result<f64, RecordError> {
    // The same data pattern every block, as fio writes its buffers.
    let block: Vec<u8> = (0..opts.block).map(|i| (i * 131 % 251) as u8).collect();
    let started = Instant::now();
    let mut sink = Sink::create(file, opts)?;
    let mut left = size;
    while left > 0 {
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

fn fio_run(file: &Path, size: u64, opts: SinkOptions, engine: &str) -> Result<f64, RecordError> {
    let out = Command::new("fio")
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
        .output()
        .map_err(|e| {
            RecordError::Fio(format!(
                "cannot run fio ({e}); install it (Debian: apt-get install fio)"
            ))
        })?;
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
