//! What a recording writes down about itself: the plan it followed, each stream's account,
//! the gaps, how it ended, and the manifest that holds them. These are plain records that
//! the recorder, the manifest's writer, the plot and the verifier all read, so they sit in a
//! module of their own that imports none of those.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::sink::{SinkOptions, SinkReport};

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
    /// Why the plot beside the recording could not be drawn, if it could not (a full disk).
    #[serde(default)]
    pub plot_error: Option<String>,
    /// Where this manifest was written: beside the recording, or where there was room when
    /// the recording's disk had none (not part of the file).
    #[serde(skip)]
    pub written_at: Option<std::path::PathBuf>,
}

/// The fastest rate a manifest may give for a second, in MB/s: far above any disk, far below
/// where a plot's scale stops being a number.
pub const MAX_RATE_MB_S: f64 = 1e7;

impl Manifest {
    /// Checks the figures a manifest read from a file gives, which the recorder never writes
    /// out of range: rates, times and spans finite and not negative, each second's rate at
    /// most [`MAX_RATE_MB_S`].
    pub fn check(&self) -> Result<(), String> {
        for (name, v) in [
            ("wall_s", self.wall_s),
            ("card_span_us", self.card_span_us),
            ("started_unix_s", self.started_unix_s),
            ("ended_unix_s", self.ended_unix_s),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!(
                    "{name} is {v}: a recording's figure is a finite number, not negative"
                ));
            }
        }
        if let Some((k, v)) = self
            .per_second_mb_s
            .iter()
            .enumerate()
            .find(|(_, v)| !(v.is_finite() && (0.0..=MAX_RATE_MB_S).contains(*v)))
        {
            return Err(format!(
                "per_second_mb_s[{k}] is {v} MB/s: a second's rate is a finite number from 0 to {MAX_RATE_MB_S}"
            ));
        }
        Ok(())
    }
}

/// The default of [`StreamPlan::frame_wait`]: a source makes a 64 KiB frame in 16 us.
pub const FRAME_WAIT: Duration = Duration::from_millis(100);
