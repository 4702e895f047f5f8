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
use xdma::{
    AsyncCard, Card, CardAddr, CardInfo, ChannelKind, Direction, DmaBuffer, InOrder, Transfer,
};

pub use crate::account::{
    EndReason, Gap, Manifest, StreamPlan, StreamRecord, FRAME_WAIT, MAX_RATE_MB_S,
};
use crate::sink::{Sink, SinkOptions};
use crate::RecordError;

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

/// How many whole frames an earlier run may have left on a stream before this run's first.
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

/// The writing half of a recording, whatever the source: frames in, the file, the counts,
/// the gaps, the bandwidth second by second, and the manifest at the end.
struct Writer {
    sink: Sink,
    records: Vec<StreamRecord>,
    trackers: Vec<SeqTracker>,
    /// Whether each source's first frame of this run (sequence 0) has come; a source whose
    /// earlier frames cannot be on the card starts as true.
    started: Vec<bool>,
    gaps: Vec<Gap>,
    per_second: Vec<u64>,
    span: (u64, u64),
    first_at: Option<Instant>,
    /// The frames the sink may still hold unwritten (its blocks in flight and the one being
    /// filled): start, end, source and sequence, so that a failed write can cut the file at a
    /// frame's end and the counts can say what the file holds.
    recent: std::collections::VecDeque<(u64, u64, usize, Option<u32>)>,
    window: u64,
    end: Option<(EndReason, String)>,
    started_unix_s: f64,
    /// The room kept beside the recording for its manifest.
    room: crate::manifest::Room,
}

impl Writer {
    fn new(sink: Sink, path: &Path, channels: &[usize], skip_stale: bool) -> Writer {
        let o = *sink.options();
        Writer {
            room: crate::manifest::Room::reserve(path),
            sink,
            records: channels
                .iter()
                .map(|&channel| StreamRecord {
                    channel,
                    ..StreamRecord::default()
                })
                .collect(),
            trackers: vec![SeqTracker::new(); channels.len()],
            started: vec![!skip_stale; channels.len()],
            gaps: Vec::new(),
            per_second: Vec::new(),
            span: (u64::MAX, 0),
            first_at: None,
            recent: Default::default(),
            window: (o.depth as u64 + 2) * o.block as u64,
            end: None,
            started_unix_s: unix_now(),
        }
    }

    /// Ends the recording with `why` unless it has ended already.
    fn end(&mut self, reason: EndReason, detail: String) {
        self.end.get_or_insert((reason, detail));
    }

    fn ended(&self) -> bool {
        self.end.is_some() || self.sink.failure().is_some()
    }

    /// Takes one frame of source `k`, which the card moved between `start_ps` and `end_ps` of
    /// its clock.
    fn frame(&mut self, k: usize, bytes: &[u8], start_ps: u64, end_ps: u64) {
        if self.ended() {
            return;
        }
        let parsed = frame::parse_header(bytes).ok();
        let head = parsed.map(|(h, _)| h.sequence);
        // Only the header and length are checked here, which costs nothing at the disk's
        // rate; `verify` checks every CRC and payload afterwards.
        let whole =
            parsed.filter(|(_, payload)| *payload as usize + frame::OVERHEAD == bytes.len());
        let rec = &mut self.records[k];
        if !self.started[k] {
            // Until this run's first frame (sequence 0 after the counters were cleared), what
            // comes was left on the card by an earlier run: whole frames only, since the
            // card's clear ends a source at a frame boundary.
            if whole.is_none() {
                let detail = format!(
                    "C2H channel {}: before this run's first frame, a receive of {} bytes that is not a whole frame: the card's CLEAR should have ended the earlier run at a frame boundary",
                    rec.channel,
                    bytes.len()
                );
                self.end(EndReason::CardError, detail);
                return;
            }
            if head != Some(0) {
                rec.stale_skipped += 1;
                if rec.stale_skipped > STALE_MAX {
                    let detail = format!(
                        "C2H channel {}: {STALE_MAX} frames came without this run's first (sequence 0 after the counters were cleared)",
                        rec.channel
                    );
                    self.end(EndReason::CardError, detail);
                }
                return;
            }
            self.started[k] = true;
        }
        let offset = self.sink.bytes_in();
        match whole {
            Some((h, _)) => {
                let seq = h.sequence;
                let expected = self.trackers[k].expected().unwrap_or(0);
                let missing = match self.trackers[k].good(seq) {
                    Continuity::Gap { missing } => Some(missing),
                    Continuity::Backward => Some(0),
                    Continuity::First | Continuity::InOrder => None,
                };
                if let Some(missing) = missing {
                    self.gaps.push(Gap {
                        channel: rec.channel,
                        expected,
                        got: seq,
                        missing,
                        file_offset: offset,
                    });
                    self.room.fit(self.per_second.len(), self.gaps.len());
                }
                rec.first_sequence.get_or_insert(seq);
                rec.last_sequence = Some(seq);
            }
            None => {
                self.trackers[k].bad();
                rec.bad_frames += 1;
            }
        }
        rec.missing = self.trackers[k].missing();
        rec.frames += 1;
        self.span = (self.span.0.min(start_ps), self.span.1.max(end_ps));
        let first = *self.first_at.get_or_insert_with(Instant::now);
        let second = first.elapsed().as_secs() as usize;
        if self.per_second.len() <= second {
            self.per_second.resize(second + 1, 0);
            self.room.fit(self.per_second.len(), self.gaps.len());
        }
        self.per_second[second] += bytes.len() as u64;
        let end = offset + bytes.len() as u64;
        self.recent.push_back((offset, end, k, head));
        while self.recent.front().is_some_and(|f| f.1 + self.window < end) {
            self.recent.pop_front();
        }
        if let Err(e) = self.sink.push(bytes) {
            self.end(EndReason::DiskError, e.to_string());
        }
    }

    fn frames(&self) -> u64 {
        self.records.iter().map(|r| r.frames).sum()
    }

    fn progress(&self) -> Progress {
        Progress {
            bytes: self.sink.bytes_in(),
            frames: self.frames(),
            missing: self.records.iter().map(|r| r.missing).sum(),
            wall_s: self.first_at.map_or(0.0, |f| f.elapsed().as_secs_f64()),
        }
    }

    /// Closes the file (cut at the last whole frame if a write failed), writes the manifest
    /// and returns it.
    fn finish(
        mut self,
        path: &Path,
        card: &CardInfo,
        source: &str,
        plan: StreamPlan,
        stop: &AtomicBool,
    ) -> Result<Manifest, RecordError> {
        let sink_opts = *self.sink.options();
        let mut report = self.sink.finish()?;
        let mut end = self.end.take().unwrap_or_else(|| {
            if stop.load(Ordering::SeqCst) {
                (EndReason::Stopped, "stopped from outside (a signal)".into())
            } else {
                (
                    EndReason::Done,
                    "every source gave the frames asked for".into(),
                )
            }
        });
        if let Some(f) = &report.failed {
            // The file keeps whole frames only: it ends at the last frame that ends before
            // the first byte that did not land, and the counts drop the frames after it.
            let keep = self
                .recent
                .iter()
                .rev()
                .find(|r| r.1 <= f.offset)
                .map(|r| r.1)
                .or_else(|| self.recent.front().map(|r| r.0))
                .unwrap_or(report.bytes)
                .min(report.bytes);
            while let Some(&(_, end, k, seq)) = self.recent.back() {
                if end <= keep {
                    break;
                }
                self.recent.pop_back();
                let rec = &mut self.records[k];
                rec.frames = rec.frames.saturating_sub(1);
                if seq.is_some() && seq == rec.last_sequence {
                    rec.last_sequence = self
                        .recent
                        .iter()
                        .rev()
                        .find(|r| r.2 == k)
                        .and_then(|r| r.3);
                }
            }
            self.gaps.retain(|g| g.file_offset < keep);
            for rec in &mut self.records {
                rec.missing = self
                    .gaps
                    .iter()
                    .filter(|g| g.channel == rec.channel)
                    .map(|g| g.missing)
                    .sum();
            }
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
        let manifest = Manifest {
            file: path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            backend: card.backend.clone(),
            card_id: card.card_id,
            card_version: card.card_version,
            source: source.into(),
            frame_bytes: plan.frame as u64,
            plan,
            frames: self.records.iter().map(|r| r.frames).sum(),
            streams: self.records,
            bytes: report.bytes,
            started_unix_s: self.started_unix_s,
            ended_unix_s: unix_now(),
            wall_s: self.first_at.map_or(0.0, |f| f.elapsed().as_secs_f64()),
            card_span_us: if self.span.1 > self.span.0 {
                (self.span.1 - self.span.0) as f64 / 1e6
            } else {
                0.0
            },
            per_second_mb_s: self.per_second.iter().map(|&b| b as f64 / 1e6).collect(),
            gaps: self.gaps,
            end: end.0,
            end_detail: end.1,
            sink: sink_opts,
            sink_report: report,
            plot_error: None,
            written_at: None,
        };
        // The manifest first, into the room kept for it: a full disk must not lose it.
        let mut manifest = manifest;
        let at = crate::manifest::write(path, &manifest, Some(self.room), &std::env::temp_dir())?;
        // Then the plot, a picture of the manifest, in what the room did not use. Failing to
        // draw it must not lose the manifest, which then says why (where that still fits).
        let plot = crate::plot_path(path);
        if let Err(e) = crate::plot::plot(&manifest, &plot) {
            manifest.plot_error = Some(e.to_string());
            if let Ok(text) = serde_json::to_string_pretty(&manifest) {
                let _ = crate::manifest::replace(&at, text.as_bytes());
            }
        }
        manifest.written_at = Some(at);
        Ok(manifest)
    }
}

/// Checks a frame length for the card's sources.
fn check_frame_len(frame: usize) -> Result<(), RecordError> {
    if (frame::MIN_FRAME_LEN..=frame::MAX_FRAME_LEN).contains(&frame) {
        return Ok(());
    }
    Err(RecordError::Options(format!(
        "frames of {frame} bytes: the sources make {} to {} bytes",
        frame::MIN_FRAME_LEN,
        frame::MAX_FRAME_LEN
    )))
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
    let streams: Vec<usize> = card.info().all_of(Direction::C2H, ChannelKind::Stream);
    if !(1..=2).contains(&plan.channels) || streams.len() < plan.channels {
        return Err(RecordError::Options(format!(
            "{} stream(s): the card's frame sources feed up to two C2H streams and this card has {} stream channel(s)",
            plan.channels,
            streams.len()
        )));
    }
    check_frame_len(plan.frame)?;
    if !(1..=64).contains(&plan.queued) {
        return Err(RecordError::Options(format!(
            "{} receives posted per stream: give 1 to 64",
            plan.queued
        )));
    }
    let streams = &streams[..plan.channels];
    let mut w = Writer::new(Sink::create(path, sink)?, path, streams, true);
    let control = u64::from(card_regs::CONTROL);
    card_regs::host::stop_sources(card)?;
    let mut enable = card_regs::control::MODE_GEN as u32;
    for k in 0..plan.channels {
        let r = source_regs(k);
        card.write_reg(r.frame_len, plan.frame as u32)?;
        card.write_reg(r.policy, u32::from(plan.drop))?;
        enable |= r.enable;
    }
    card.write_reg(control, enable)?;
    let halt = AtomicBool::new(false);
    let halted = || halt.load(Ordering::SeqCst) || stop.load(Ordering::SeqCst);
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::sync_channel::<FromStream>(plan.queued * plan.channels);
        for (k, &ch) in streams.iter().enumerate() {
            let (c, tx, halted) = (card.clone(), tx.clone(), &halted);
            s.spawn(move || receive(&c, k, ch, plan, halted, &tx));
        }
        drop(tx);
        for msg in rx.iter() {
            match msg {
                FromStream::Frame(k, t, buf) => {
                    w.frame(k, &buf[..t.bytes], t.start_ps, t.end_ps);
                    progress(&w.progress());
                }
                FromStream::Failed(k, e) => {
                    if !halted() {
                        w.end(
                            EndReason::CardError,
                            format!("C2H channel {}: {e}", streams[k]),
                        );
                    }
                }
            }
            if w.ended() {
                halt.store(true, Ordering::SeqCst);
            }
        }
    });
    // Stop the sources, then read what they sent and dropped.
    if let Err(e) = card.write_reg(control, 0) {
        w.end(EndReason::CardError, format!("stopping the sources: {e}"));
    }
    for (k, rec) in w.records.iter_mut().enumerate() {
        let r = source_regs(k);
        if let (Ok(sent), Ok(dropped)) = (counter(card, r.sent), counter(card, r.dropped)) {
            rec.card_sent = sent;
            rec.card_dropped = dropped;
        }
    }
    w.finish(path, card.info(), "stream", *plan, stop)
}

/// What to record from the CAPTURE ring in card DDR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RingPlan {
    /// The ring's place in card memory (a multiple of 4 KiB).
    pub base: u64,
    /// The ring's size (a multiple of 4 KiB).
    pub size: u64,
    /// Bytes per frame, 64 to 65536.
    pub frame: usize,
    /// Frames to record; 0 records until stopped.
    pub frames: u64,
    /// The most bytes one memory-mapped read takes from the ring.
    pub read: usize,
    /// Register reads of the write pointer that find nothing new before the card is taken to
    /// have stopped writing.
    pub idle_polls: u64,
}

impl Default for RingPlan {
    fn default() -> RingPlan {
        RingPlan {
            base: 0,
            size: 16 << 20,
            frame: 4096,
            frames: 0,
            read: 1 << 20,
            idle_polls: 10_000,
        }
    }
}

/// Records frame source 0 through the CAPTURE ring: the card writes frames into the ring in
/// its DDR, and the recorder follows the card's write pointer, reads what it finds in large
/// memory-mapped blocks while the card goes on writing, gives the space back through the read
/// pointer, and writes the frames back to back (without the ring's padding to whole beats) into
/// `path`. A ring that fills up drops new frames (drop-new, counted by the card as overflow);
/// the manifest lists them as the source's dropped frames and the gaps they leave.
pub fn record_ring<C: Card>(
    card: &C,
    plan: &RingPlan,
    path: &Path,
    sink: SinkOptions,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Manifest, RecordError> {
    use card_regs as r;
    let info = card.info();
    let ch = info.mm_channel(Direction::C2H).map_err(|e| {
        RecordError::Options(format!(
            "the CAPTURE ring is read through a memory-mapped C2H channel (the mm or combined card has one): {e}"
        ))
    })?;
    check_frame_len(plan.frame)?;
    let ring_ok = plan.size >= 4096
        && plan.size.is_multiple_of(4096)
        && plan.base.is_multiple_of(4096)
        && plan.size <= u64::from(u32::MAX) + 1 - 4096
        && plan
            .base
            .checked_add(plan.size)
            .is_some_and(|e| e <= info.memory_size)
        && plan.base <= u64::from(u32::MAX);
    if !ring_ok {
        return Err(RecordError::Options(format!(
            "a ring of {} bytes at {:#x}: give a base and size that are multiples of 4096, the ring inside the card's {} bytes of memory",
            plan.size, plan.base, info.memory_size
        )));
    }
    if plan.read == 0 || !plan.read.is_multiple_of(16) {
        return Err(RecordError::Options(format!(
            "reads of {} bytes from the ring: give a positive multiple of 16",
            plan.read
        )));
    }
    let mut w = Writer::new(Sink::create(path, sink)?, path, &[ch], false);
    let reg = |a: u32| u64::from(a);
    card_regs::host::stop_sources(card)?;
    // Writing the base and size empties the ring: both pointers to zero.
    card.write_reg(reg(r::CAP_BASE), plan.base as u32)?;
    card.write_reg(reg(r::CAP_SIZE), plan.size as u32)?;
    card.write_reg(reg(r::SRC0_FRAME_LEN), plan.frame as u32)?;
    card.write_reg(reg(r::SRC0_POLICY), 0)?;
    card.write_reg(
        reg(r::CONTROL),
        (r::control::MODE_CAPTURE | r::control::CH0_EN_MASK) as u32,
    )?;
    let mut buf = DmaBuffer::new(plan.read)?;
    // Bytes read from the ring that do not yet make a whole frame (a frame may wrap round
    // the ring's end or straddle two reads).
    let mut carry: Vec<u8> = Vec::new();
    let (mut rptr, mut idle) = (0u64, 0u64);
    let mut failed: Option<String> = None;
    while !w.ended()
        && !stop.load(Ordering::SeqCst)
        && (plan.frames == 0 || w.frames() < plan.frames)
    {
        let wptr = match card.read_reg(reg(r::CAP_WPTR)) {
            Ok(v) => u64::from(v),
            Err(e) => {
                failed = Some(format!("reading the ring's write pointer: {e}"));
                break;
            }
        };
        let avail = (wptr + plan.size - rptr) % plan.size;
        if avail == 0 {
            idle += 1;
            if idle > plan.idle_polls {
                failed = Some(format!(
                    "the card wrote nothing into the ring in {} reads of its write pointer",
                    plan.idle_polls
                ));
                break;
            }
            continue;
        }
        idle = 0;
        let n = avail.min(plan.read as u64).min(plan.size - rptr) as usize;
        let t = match card.read_mm(ch, CardAddr(plan.base + rptr), &mut buf[..n]) {
            Ok(t) => t,
            Err(e) => {
                failed = Some(format!("reading the ring at byte {rptr}: {e}"));
                break;
            }
        };
        carry.extend_from_slice(&buf[..n]);
        rptr = (rptr + n as u64) % plan.size;
        // Whole frames out of what was read; each starts on a 16-byte beat and is padded to
        // the next one in the ring.
        let mut at = 0;
        while carry.len() - at >= frame::HEADER_LEN {
            let len = match frame::parse_header(&carry[at..]) {
                Ok((_, payload)) => payload as usize + frame::OVERHEAD,
                Err(e) => {
                    failed = Some(format!(
                        "the ring holds no frame header at the read pointer ({e})"
                    ));
                    break;
                }
            };
            let padded = len.div_ceil(16) * 16;
            if carry.len() - at < padded {
                break;
            }
            w.frame(0, &carry[at..at + len], t.start_ps, t.end_ps);
            progress(&w.progress());
            at += padded;
            if plan.frames != 0 && w.frames() >= plan.frames {
                break;
            }
        }
        carry.drain(..at);
        if failed.is_some() {
            break;
        }
        if let Err(e) = card.write_reg(reg(r::CAP_RPTR), rptr as u32) {
            failed = Some(format!("giving the ring back (the read pointer): {e}"));
            break;
        }
    }
    if let Some(f) = failed {
        w.end(EndReason::CardError, f);
    }
    if let Err(e) = card.write_reg(reg(r::CONTROL), 0) {
        w.end(EndReason::CardError, format!("stopping capture: {e}"));
    }
    if let (Ok(sent), Ok(dropped)) = (
        counter(card, reg(r::SRC0_SENT)),
        counter(card, reg(r::CAP_OVERFLOW)),
    ) {
        w.records[0].card_sent = sent;
        w.records[0].card_dropped = dropped;
    }
    let plan = StreamPlan {
        channels: 1,
        frame: plan.frame,
        frames: plan.frames,
        queued: 1,
        drop: true,
        frame_wait: Duration::ZERO,
    };
    w.finish(path, info, "ring", plan, stop)
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

/// Writes the manifest beside the recording (through a file renamed once whole, so that a
/// failed write leaves none).
pub fn write_manifest(path: &Path, m: &Manifest) -> Result<(), RecordError> {
    let at = crate::manifest_path(path);
    let text = serde_json::to_string_pretty(m).map_err(|e| RecordError::Format {
        path: at.clone(),
        problem: e.to_string(),
    })?;
    crate::manifest::replace(&at, text.as_bytes()).map_err(|e| RecordError::Disk {
        what: "write the manifest".into(),
        path: at,
        source: e,
    })
}

/// Reads the manifest beside a recording (a regular file only: a FIFO would block) and checks
/// its figures ([`Manifest::check`]).
pub fn read_manifest(path: &Path) -> Result<Manifest, RecordError> {
    let at = crate::manifest_path(path);
    crate::regular_file(&at, "the manifest")?;
    let text = std::fs::read_to_string(&at).map_err(|e| RecordError::Disk {
        what: "read the manifest".into(),
        path: at.clone(),
        source: e,
    })?;
    let m: Manifest = serde_json::from_str(&text).map_err(|e| RecordError::Format {
        path: at.clone(),
        problem: format!("not a recording's manifest: {e}"),
    })?;
    m.check().map_err(|problem| RecordError::Format {
        path: at,
        problem: format!("not a recording's manifest: {problem}"),
    })?;
    Ok(m)
}
