//! Where a recording's manifest goes, and the room kept for it.
//!
//! A recording that ends because its disk is full still needs its manifest, which says how
//! it ended and what the file holds. So the recorder keeps room for it from the start: a file
//! beside the recording, `FILE.json.part`, allocated ahead (and grown as the per-second rates
//! and gaps a manifest lists grow), which no write of the recording can take. At the end the
//! manifest is written into that room and renamed to `FILE.json`, which frees what it did not
//! use for the plot. Where even that fails, the manifest goes to the fallback folder (the
//! system's temporary folder) and the recorder says where; where that fails too, the error
//! says so and what the recording holds. A manifest is always written under another name and
//! renamed once whole, so a failed write never leaves an empty or partial `FILE.json`.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::account::Manifest;
use crate::RecordError;

/// The room kept at least: a manifest of a few hours of per-second rates and the plot.
pub const ROOM_MIN: u64 = 512 << 10;

/// What a manifest grows by, as pretty JSON: a per-second rate, a gap.
const PER_SECOND: u64 = 32;
const PER_GAP: u64 = 256;
/// The manifest's fixed part and the plot, whose points are capped (`plot::MAX_POINTS`).
const FIXED: u64 = 16 << 10;
const PLOT: u64 = 256 << 10;

/// The name a manifest is written under before it is whole: `AT.part`.
pub fn part_path(at: &Path) -> PathBuf {
    let mut s = at.as_os_str().to_owned();
    s.push(".part");
    PathBuf::from(s)
}

/// The room kept beside a recording for its manifest and plot.
#[derive(Debug)]
pub struct Room {
    part: PathBuf,
    file: Option<File>,
    reserved: u64,
    /// Why the room could not be kept (or grown), if it could not.
    pub problem: Option<String>,
}

impl Room {
    /// Keeps room beside the recording at `recording` for its manifest, and removes the
    /// manifest and plot of an earlier recording at that path, which describe a file that is
    /// being replaced. Never fails: a room that cannot be kept is noted, and the manifest is
    /// then written as a new file at the end.
    pub fn reserve(recording: &Path) -> Room {
        let at = crate::manifest_path(recording);
        let _ = std::fs::remove_file(&at);
        let _ = std::fs::remove_file(crate::plot_path(recording));
        let part = part_path(&at);
        let mut room = Room {
            part,
            file: None,
            reserved: 0,
            problem: None,
        };
        match OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&room.part)
        {
            Ok(f) => {
                room.file = Some(f);
                room.grow_to(ROOM_MIN);
            }
            Err(e) => room.problem = Some(format!("{}: {e}", room.part.display())),
        }
        room
    }

    /// Grows the room to hold a manifest of `seconds` per-second rates and `gaps` gaps.
    pub fn fit(&mut self, seconds: usize, gaps: usize) {
        let need = FIXED + PLOT + seconds as u64 * PER_SECOND + gaps as u64 * PER_GAP;
        if need > self.reserved {
            self.grow_to(need.max(self.reserved * 2));
        }
    }

    fn grow_to(&mut self, bytes: u64) {
        let Some(f) = &self.file else {
            return;
        };
        if self.problem.is_some() || bytes <= self.reserved {
            return;
        }
        match crate::sink::fallocate(f, self.reserved, bytes - self.reserved) {
            Ok(()) => self.reserved = bytes,
            Err(e) => {
                self.problem = Some(format!(
                    "keeping {bytes} bytes for the manifest in {}: {e}",
                    self.part.display()
                ))
            }
        }
    }

    /// Writes `text` into the room and renames it to `at`.
    fn fill(mut self, text: &[u8], at: &Path) -> Result<(), String> {
        let Some(f) = self.file.take() else {
            return Err(self
                .problem
                .take()
                .unwrap_or_else(|| "no room was kept".into()));
        };
        let done = f
            .write_all_at(text, 0)
            .and_then(|()| f.set_len(text.len() as u64))
            .and_then(|()| f.sync_data())
            .and_then(|()| std::fs::rename(&self.part, at));
        if done.is_err() {
            // Nothing partial is left, and the room is given back.
            let _ = std::fs::remove_file(&self.part);
        }
        done.map_err(|e| format!("{}: {e}", at.display()))
    }
}

impl Drop for Room {
    fn drop(&mut self) {
        // A room that was not filled is given back (a recording that failed before its end).
        if self.file.is_some() {
            let _ = std::fs::remove_file(&self.part);
        }
    }
}

/// Writes `text` to `at` through `AT.part`, renamed once whole and synced; on failure nothing
/// is left behind.
pub fn replace(at: &Path, text: &[u8]) -> std::io::Result<()> {
    let part = part_path(at);
    let r = (|| {
        let mut f = File::create(&part)?;
        f.write_all(text)?;
        f.sync_data()?;
        std::fs::rename(&part, at)
    })();
    if r.is_err() {
        let _ = std::fs::remove_file(&part);
    }
    r
}

/// A free name for the manifest of `recording` in `dir`: `NAME.json`, else `NAME.K.json`.
fn fallback_name(recording: &Path, dir: &Path) -> PathBuf {
    let name = recording
        .file_name()
        .map_or_else(|| "recording".into(), |n| n.to_string_lossy().into_owned());
    let first = dir.join(format!("{name}.json"));
    if !first.exists() {
        return first;
    }
    (1..1000)
        .map(|k| dir.join(format!("{name}.{k}.json")))
        .find(|p| !p.exists())
        .unwrap_or(first)
}

/// What a recording holds, in words, for a message that has no manifest to point at.
fn holds(m: &Manifest) -> String {
    let streams: Vec<String> = m
        .streams
        .iter()
        .map(|s| match (s.first_sequence, s.last_sequence) {
            (Some(a), Some(b)) => format!(
                "C2H {}: {} frames, sequence {a} to {b}, {} missing",
                s.channel, s.frames, s.missing
            ),
            _ => format!("C2H {}: {} frames", s.channel, s.frames),
        })
        .collect();
    format!(
        "holds {} bytes, {} whole frames of {} bytes ({}); it ended {}: {}. `xdma-record verify` checks it without a manifest",
        m.bytes,
        m.frames,
        m.frame_bytes,
        streams.join("; "),
        serde_json::to_value(&m.end)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default(),
        m.end_detail
    )
}

/// Writes the manifest of the recording at `recording`: into `room` beside it (or a new file
/// there when no room was kept), else into `fallback`. Returns where it went; when it fits
/// nowhere, the error says where it was tried and what the recording holds. Never leaves an
/// empty or partial manifest.
pub fn write(
    recording: &Path,
    m: &Manifest,
    room: Option<Room>,
    fallback: &Path,
) -> Result<PathBuf, RecordError> {
    let at = crate::manifest_path(recording);
    let text = serde_json::to_string_pretty(m).map_err(|e| RecordError::Format {
        path: at.clone(),
        problem: e.to_string(),
    })?;
    let mut tried = Vec::new();
    let beside = match room {
        Some(r) if r.file.is_some() => r.fill(text.as_bytes(), &at),
        other => {
            if let Some(p) = other.and_then(|mut r| r.problem.take()) {
                tried.push(format!("no room kept: {p}"));
            }
            replace(&at, text.as_bytes()).map_err(|e| format!("{}: {e}", at.display()))
        }
    };
    match beside {
        Ok(()) => return Ok(at),
        Err(e) => tried.push(e),
    }
    let other = fallback_name(recording, fallback);
    match replace(&other, text.as_bytes()) {
        Ok(()) => return Ok(other),
        Err(e) => tried.push(format!("{}: {e}", other.display())),
    }
    Err(RecordError::NoRoomForManifest {
        path: recording.to_path_buf(),
        tried: tried.join("; "),
        holds: holds(m),
    })
}
