//! A recording of the card's C2H streams: the frame sources in GEN mode, a few receives kept
//! posted on every stream so that a stream never waits for the host, the frames written back
//! to back into one file in the order they arrived, and a manifest that counts what the card
//! sent and dropped against what the host took.
//!
//! Memory is bounded: each stream has `queued` receives in flight and at most as many frames
//! waiting for the writer, and the sink holds `depth + 1` blocks. When the disk is slower than
//! the card, the receives wait for the writer, the stream backs up into the card, and the card
//! either holds its source (the stall policy, lossless: the source's rate drops) or drops
//! frames and counts them (the drop policy): the manifest and the progress line show both.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use frame::{Continuity, SeqTracker};
use serde::{Deserialize, Serialize};
use xdma::{AsyncCard, Card, ChannelKind, DmaBuffer, InOrder, Transfer};

use crate::sink::{Sink, SinkOptions, SinkReport};
use crate::RecordError;

/// What to record from the streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamPlan {
    /// Streams to record: 1 (C2H stream 0, frame source 0) or 2 (both sources).
    pub channels: usize,
    /// Bytes per frame, 64 to 65536.
    pub frame: usize,
    /// Frames to take from each stream; 0 records until stopped.
    pub frames: u64,
    /// Receives kept posted on each stream.
    pub queued: usize,
    /// The sources' policy when the stream backs up: drop and count frames (true) or wait
    /// (false, lossless).
    pub drop: bool,
    /// How long one receive waits for its frame, in the backend's clock, before the card is
    /// taken to have stopped sending (at least what the backend can honour).
    pub frame_wait: Duration,
}

impl Default for StreamPlan {
    fn default() -> StreamPlan {
        StreamPlan {
            channels: 1,
            frame: 4096,
            frames: 0,
            queued: 4,
            drop: false,
            frame_wait: FRAME_WAIT,
        }
    }
}

/// One stream's account.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamRecord {
    /// The C2H channel.
    pub channel: usize,
    /// Frames written to the file.
    pub frames: u64,
    /// Of them, frames that did not pass the format's checks.
    pub bad_frames: u64,
    /// Frames an earlier run had left on the card, skipped before this run's first.
    pub stale_skipped: u64,
    /// Sequence numbers of the first and last good frame written.
    pub first_sequence: Option<u32>,
    /// See `first_sequence`.
    pub last_sequence: Option<u32>,
    /// Frames missing from the sequence.
    pub missing: u64,
    /// Frames the card's source sent (its counter, read at the end).
    pub card_sent: u64,
    /// Frames the card's source dropped under the drop policy (its counter).
    pub card_dropped: u64,
}

/// A place where frames are missing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gap {
    /// The C2H channel.
    pub channel: usize,
    /// The sequence number expected.
    pub expected: u32,
    /// The one that came.
    pub got: u32,
    /// Frames missing there (0 for a step backward).
    pub missing: u64,
    /// Where in the file the frame that came starts.
    pub file_offset: u64,
}

/// Why a recording ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EndReason {
    /// Every stream gave the frames asked for.
    Done,
    /// Stopped from outside (Ctrl-C, SIGTERM).
    Stopped,
    /// The disk is full: the file ends where the first write failed.
    DiskFull,
    /// A write failed for another reason.
    DiskError,
    /// The card failed or stopped sending.
    CardError,
}

/// The manifest written beside a recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The recording file's name.
    pub file: String,
    /// The backend: "sim" or "hw".
    pub backend: String,
    /// The card's identifier and version registers.
    pub card_id: u32,
    /// See `card_id`.
    pub card_version: u32,
    /// The source: "stream".
    pub source: String,
    /// Bytes per frame.
    pub frame_bytes: u64,
    /// The plan recorded.
    pub plan: StreamPlan,
    /// Each stream.
    pub streams: Vec<StreamRecord>,
    /// Frames in the file.
    pub frames: u64,
    /// Bytes in the file.
    pub bytes: u64,
    /// Start and end, in seconds since the Unix epoch.
    pub started_unix_s: f64,
    /// See `started_unix_s`.
    pub ended_unix_s: f64,
    /// Wall-clock seconds from the first frame to the end.
    pub wall_s: f64,
    /// The card's clock from the first frame's start to the last one's end, in microseconds
    /// (simulated time on the simulated card).
    pub card_span_us: f64,
    /// Bytes written per wall-clock second, in MB/s, second by second.
    pub per_second_mb_s: Vec<f64>,
    /// Every place where frames are missing.
    pub gaps: Vec<Gap>,
    /// How the recording ended.
    pub end: EndReason,
    /// What ended it, in words.
    pub end_detail: String,
    /// How the file was written.
    pub sink: SinkOptions,
    /// What the sink reported at the end.
    pub sink_report: SinkReport,
}

/// What the progress line shows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Progress {
    /// Bytes written so far.
    pub bytes: u64,
    /// Frames written so far.
    pub frames: u64,
    /// Frames missing so far (sequence gaps).
    pub missing: u64,
    /// Wall-clock seconds since the first frame.
    pub wall_s: f64,
}

/// The default of [`StreamPlan::frame_wait`]: a source makes a 64 KiB frame in 16 us.
pub const FRAME_WAIT: Duration = Duration::from_millis(100);

/// How many frames an earlier run may have left on a stream before this run's first.
const STALE_MAX: u64 = 256;

struct Regs {
    frame_len: u64,
    policy: u64,
    sent: u64,
    dropped: u64,
    enable: u32,
}

fn source_regs(k: usize) -> Regs {
    use card_regs as r;
    if k == 0 {
        Regs {
            frame_len: u64::from(r::SRC0_FRAME_LEN),
            policy: u64::from(r::SRC0_POLICY),
            sent: u64::from(r::SRC0_SENT),
            dropped: u64::from(r::SRC0_DROPPED),
            enable: r::control::CH0_EN_MASK as u32,
        }
    } else {
        Regs {
            frame_len: u64::from(r::SRC1_FRAME_LEN),
            policy: u64::from(r::SRC1_POLICY),
            sent: u64::from(r::SRC1_SENT),
            dropped: u64::from(r::SRC1_DROPPED),
            enable: r::control::CH1_EN_MASK as u32,
        }
    }
}

/// A 64-bit counter of two registers (the low word's read latches the high word).
fn counter(card: &impl Card, at: u64) -> xdma::Result<u64> {
    let lo = card.read_reg(at)?;
    let hi = card.read_reg(at + 4)?;
    Ok(u64::from(lo) | u64::from(hi) << 32)
}

/// A frame from a stream, or why the stream ended.
enum FromStream {
    Frame(usize, Transfer, DmaBuffer),
    Failed(usize, xdma::Error),
}

/// Receives on stream `ch` until `want` frames (0: until `stop`), `queued` at a time, handing
/// each frame to `out`.
fn receive<C: Card + AsyncCard>(
    card: &C,
    k: usize,
    ch: usize,
    plan: &StreamPlan,
    stop: &(dyn Fn() -> bool + Sync),
    out: &mpsc::SyncSender<FromStream>,
) {
    let rt = match tokio::runtime::Builder::new_current_thread().build() {
        Ok(rt) => rt,
        Err(e) => {
            let _ = out.send(FromStream::Failed(
                k,
                xdma::Error::Backend(format!("cannot start a tokio runtime: {e}")),
            ));
            return;
        }
    };
    let wait = plan.frame_wait.max(card.info().min_stream_timeout);
    rt.block_on(async {
        let mut q = InOrder::new();
        let mut posted = 0u64;
        loop {
            while q.len() < plan.queued && (plan.frames == 0 || posted < plan.frames) && !stop() {
                let buf = match DmaBuffer::new(plan.frame) {
                    Ok(b) => b,
                    Err(e) => {
                        let _ = out.send(FromStream::Failed(k, e));
                        return;
                    }
                };
                q.push(Box::pin(card.recv_stream_async(ch, buf, wait)));
                posted += 1;
            }
            // Dropping the queue cancels what is posted: the backend aborts those receives.
            let Some((r, buf)) = q.next().await else {
                return;
            };
            let msg = match r {
                Ok(t) => FromStream::Frame(k, t, buf),
                Err(e) => FromStream::Failed(k, e),
            };
            let failed = matches!(msg, FromStream::Failed(..));
            if out.send(msg).is_err() || failed {
                return;
            }
        }
    });
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Records the streams of `plan` into `path`, until the plan's frames are in, `stop` is set,
/// a write fails or the card fails; writes the manifest beside the file and returns it.
/// `progress` hears every frame.
pub fn record_streams<C: Card + AsyncCard + Clone + Send + Sync>(
    card: &C,
    plan: &StreamPlan,
    path: &Path,
    sink: SinkOptions,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Manifest, RecordError> {
    let streams: Vec<usize> = card
        .info()
        .c2h
        .iter()
        .filter(|c| c.kind == ChannelKind::Stream)
        .map(|c| c.index)
        .collect();
    if !(1..=2).contains(&plan.channels) || streams.len() < plan.channels {
        return Err(RecordError::Options(format!(
            "{} stream(s): the card's frame sources feed up to two C2H streams and this card has {} stream channel(s)",
            plan.channels,
            streams.len()
        )));
    }
    if !(frame::MIN_FRAME_LEN..=frame::MAX_FRAME_LEN).contains(&plan.frame) {
        return Err(RecordError::Options(format!(
            "frames of {} bytes: the sources make {} to {} bytes",
            plan.frame,
            frame::MIN_FRAME_LEN,
            frame::MAX_FRAME_LEN
        )));
    }
    if !(1..=64).contains(&plan.queued) {
        return Err(RecordError::Options(format!(
            "{} receives posted per stream: give 1 to 64",
            plan.queued
        )));
    }
    let mut sink = Sink::create(path, sink)?;
    let sink_opts = *sink.options();
    let control = u64::from(card_regs::CONTROL);
    // Stop the sources and restart their counters, so that this run's frames number from 0.
    card.write_reg(control, 0)?;
    card.write_reg(
        u64::from(card_regs::CLEAR),
        card_regs::clear::COUNTERS_MASK as u32,
    )?;
    let mut enable = card_regs::control::MODE_GEN as u32;
    for k in 0..plan.channels {
        let r = source_regs(k);
        card.write_reg(r.frame_len, plan.frame as u32)?;
        card.write_reg(r.policy, u32::from(plan.drop))?;
        enable |= r.enable;
    }
    let started_unix_s = unix_now();
    card.write_reg(control, enable)?;
    let mut records: Vec<StreamRecord> = streams[..plan.channels]
        .iter()
        .map(|&channel| StreamRecord {
            channel,
            ..StreamRecord::default()
        })
        .collect();
    let mut gaps = Vec::new();
    let mut per_second: Vec<u64> = Vec::new();
    let (mut span_from, mut span_to) = (u64::MAX, 0u64);
    let mut end = (
        EndReason::Done,
        String::from("every stream gave the frames asked for"),
    );
    let mut first_at: Option<Instant> = None;
    // The frames the sink may still hold unwritten (its blocks in flight and the one being
    // filled): where each ends, whose it is and its sequence, so that a failed write can cut
    // the file at a frame's end and the counts can say what the file holds.
    let mut recent: std::collections::VecDeque<(u64, u64, usize, Option<u32>)> = Default::default();
    let window = (sink_opts.depth as u64 + 2) * sink_opts.block as u64;
    let halt = AtomicBool::new(false);
    let halted = || halt.load(Ordering::SeqCst) || stop.load(Ordering::SeqCst);
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::sync_channel::<FromStream>(plan.queued * plan.channels);
        for (k, &ch) in streams[..plan.channels].iter().enumerate() {
            let (c, tx, halted) = (card.clone(), tx.clone(), &halted);
            s.spawn(move || receive(&c, k, ch, plan, halted, &tx));
        }
        drop(tx);
        let mut trackers: Vec<SeqTracker> = vec![SeqTracker::new(); plan.channels];
        let mut started: Vec<bool> = vec![false; plan.channels];
        for msg in rx.iter() {
            let (k, t, buf) = match msg {
                FromStream::Frame(k, t, buf) => (k, t, buf),
                FromStream::Failed(k, e) => {
                    if !halted() {
                        end = (
                            EndReason::CardError,
                            format!("C2H channel {}: {e}", records[k].channel),
                        );
                    }
                    halt.store(true, Ordering::SeqCst);
                    continue;
                }
            };
            if halt.load(Ordering::SeqCst) {
                continue;
            }
            let bytes = &buf[..t.bytes];
            let head = frame::parse_header(bytes).ok().map(|(h, _)| h.sequence);
            let rec = &mut records[k];
            if !started[k] {
                // Until this run's first frame (sequence 0 after the counters were cleared),
                // what comes was left on the card by an earlier run.
                if head != Some(0) {
                    rec.stale_skipped += 1;
                    if rec.stale_skipped > STALE_MAX {
                        end = (
                            EndReason::CardError,
                            format!(
                                "C2H channel {}: {STALE_MAX} frames came without this run's first (sequence 0 after the counters were cleared)",
                                rec.channel
                            ),
                        );
                        halt.store(true, Ordering::SeqCst);
                    }
                    continue;
                }
                started[k] = true;
            }
            let offset = sink.bytes_in();
            // Only the header and length are checked here, which costs nothing at the
            // disk's rate; `verify` checks every CRC and payload afterwards.
            let whole = frame::parse_header(bytes)
                .ok()
                .filter(|(_, payload)| *payload as usize + frame::OVERHEAD == bytes.len());
            match whole {
                Some((h, _)) => {
                    let seq = h.sequence;
                    let expected = trackers[k].expected();
                    match trackers[k].good(seq) {
                        Continuity::Gap { missing } => gaps.push(Gap {
                            channel: rec.channel,
                            expected: expected.unwrap_or(0),
                            got: seq,
                            missing,
                            file_offset: offset,
                        }),
                        Continuity::Backward => gaps.push(Gap {
                            channel: rec.channel,
                            expected: expected.unwrap_or(0),
                            got: seq,
                            missing: 0,
                            file_offset: offset,
                        }),
                        Continuity::First | Continuity::InOrder => {}
                    }
                    rec.first_sequence.get_or_insert(seq);
                    rec.last_sequence = Some(seq);
                }
                None => {
                    trackers[k].bad();
                    rec.bad_frames += 1;
                }
            }
            rec.missing = trackers[k].missing();
            rec.frames += 1;
            span_from = span_from.min(t.start_ps);
            span_to = span_to.max(t.end_ps);
            let first = *first_at.get_or_insert_with(Instant::now);
            let second = first.elapsed().as_secs() as usize;
            if per_second.len() <= second {
                per_second.resize(second + 1, 0);
            }
            per_second[second] += bytes.len() as u64;
            recent.push_back((offset, offset + bytes.len() as u64, k, head));
            while recent
                .front()
                .is_some_and(|f| f.1 + window < offset + bytes.len() as u64)
            {
                recent.pop_front();
            }
            match sink.push(bytes) {
                Ok(true) => {}
                Ok(false) => {
                    halt.store(true, Ordering::SeqCst);
                    continue;
                }
                Err(e) => {
                    end = (EndReason::DiskError, e.to_string());
                    halt.store(true, Ordering::SeqCst);
                    continue;
                }
            }
            let frames = records.iter().map(|r| r.frames).sum();
            let missing = records.iter().map(|r| r.missing).sum();
            progress(&Progress {
                bytes: sink.bytes_in(),
                frames,
                missing,
                wall_s: first.elapsed().as_secs_f64(),
            });
        }
    });
    if stop.load(Ordering::SeqCst) && end.0 == EndReason::Done {
        end = (EndReason::Stopped, "stopped from outside (a signal)".into());
    }
    // Stop the sources, then read what they sent and dropped.
    let stopped = card.write_reg(control, 0);
    for (k, rec) in records.iter_mut().enumerate() {
        let r = source_regs(k);
        if let (Ok(sent), Ok(dropped)) = (counter(card, r.sent), counter(card, r.dropped)) {
            rec.card_sent = sent;
            rec.card_dropped = dropped;
        }
    }
    let mut report = sink.finish()?;
    if let Some(f) = &report.failed {
        // The file keeps whole frames only: it ends at the last frame that ends before the
        // first byte that did not land, and the counts drop the frames after it.
        let keep = recent
            .iter()
            .rev()
            .find(|r| r.1 <= f.offset)
            .map(|r| r.1)
            .or_else(|| recent.front().map(|r| r.0))
            .unwrap_or(report.bytes)
            .min(report.bytes);
        while let Some(&(_, end, k, seq)) = recent.back() {
            if end <= keep {
                break;
            }
            recent.pop_back();
            let rec = &mut records[k];
            rec.frames = rec.frames.saturating_sub(1);
            if seq.is_some() && seq == rec.last_sequence {
                rec.last_sequence = recent.iter().rev().find(|r| r.2 == k).and_then(|r| r.3);
            }
        }
        gaps.retain(|g| g.file_offset < keep);
        cut_file(path, keep)?;
        report.bytes = keep;
        end = if f.disk_full {
            (
                EndReason::DiskFull,
                format!(
                    "the disk is full: the write at byte {} failed ({})",
                    f.offset, f.error
                ),
            )
        } else {
            (
                EndReason::DiskError,
                format!("the write at byte {} failed: {}", f.offset, f.error),
            )
        };
    }
    if let Err(e) = stopped {
        if end.0 == EndReason::Done {
            end = (EndReason::CardError, format!("stopping the sources: {e}"));
        }
    }
    let info = card.info();
    let manifest = Manifest {
        file: path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        backend: info.backend.clone(),
        card_id: info.card_id,
        card_version: info.card_version,
        source: "stream".into(),
        frame_bytes: plan.frame as u64,
        plan: *plan,
        frames: records.iter().map(|r| r.frames).sum(),
        streams: records,
        bytes: report.bytes,
        started_unix_s,
        ended_unix_s: unix_now(),
        wall_s: first_at.map_or(0.0, |f| f.elapsed().as_secs_f64()),
        card_span_us: if span_to > span_from {
            (span_to - span_from) as f64 / 1e6
        } else {
            0.0
        },
        per_second_mb_s: per_second.iter().map(|&b| b as f64 / 1e6).collect(),
        gaps,
        end: end.0,
        end_detail: end.1,
        sink: sink_opts,
        sink_report: report,
    };
    write_manifest(path, &manifest)?;
    crate::plot::plot(&manifest, &crate::plot::plot_path(path))?;
    Ok(manifest)
}

/// Cuts the recording to `len` bytes and syncs it.
fn cut_file(path: &Path, len: u64) -> Result<(), RecordError> {
    let err = |e| RecordError::Disk {
        what: "cut to its last whole frame".into(),
        path: path.to_path_buf(),
        source: e,
    };
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(err)?;
    f.set_len(len).map_err(err)?;
    f.sync_data().map_err(err)
}

/// Writes the manifest beside the recording.
pub fn write_manifest(path: &Path, m: &Manifest) -> Result<(), RecordError> {
    let at = crate::manifest_path(path);
    let text = serde_json::to_string_pretty(m).map_err(|e| RecordError::Format {
        path: at.clone(),
        problem: e.to_string(),
    })?;
    std::fs::write(&at, text).map_err(|e| RecordError::Disk {
        what: "write the manifest".into(),
        path: at,
        source: e,
    })
}

/// Reads the manifest beside a recording.
pub fn read_manifest(path: &Path) -> Result<Manifest, RecordError> {
    let at = crate::manifest_path(path);
    let text = std::fs::read_to_string(&at).map_err(|e| RecordError::Disk {
        what: "read the manifest".into(),
        path: at.clone(),
        source: e,
    })?;
    serde_json::from_str(&text).map_err(|e| RecordError::Format {
        path: at,
        problem: format!("not a recording's manifest: {e}"),
    })
}
