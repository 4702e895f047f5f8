//! Reads a recording back: every frame parsed and checked (magic, length, CRC, payload), the
//! sequence of each channel followed, gaps listed, a cut at the end named, and the counts
//! reconciled with the manifest when it is there.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use frame::{Continuity, SeqTracker};
use serde::Serialize;

use crate::account::Manifest;
use crate::record::read_manifest;
use crate::RecordError;

/// One channel as the file shows it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ChannelCheck {
    /// The channel byte of the frames' headers.
    pub channel: u8,
    /// Frames that passed every check.
    pub good: u64,
    /// Frames missing from the sequence.
    pub missing: u64,
    /// First and last sequence numbers.
    pub first_sequence: Option<u32>,
    /// See `first_sequence`.
    pub last_sequence: Option<u32>,
}

/// A place where the file is not a frame.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fault {
    /// Byte offset in the file.
    pub offset: u64,
    /// What is wrong there.
    pub problem: String,
}

/// A gap in one channel's sequence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeqGap {
    /// The channel byte.
    pub channel: u8,
    /// The sequence expected.
    pub expected: u32,
    /// The one found.
    pub got: u32,
    /// Frames missing (0 for a step backward).
    pub missing: u64,
    /// Where the frame found starts.
    pub offset: u64,
}

/// What `verify` found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Bytes in the file.
    pub bytes: u64,
    /// Frames that passed every check.
    pub good_frames: u64,
    /// Frames (or pieces) that did not.
    pub bad_frames: u64,
    /// Each channel.
    pub channels: Vec<ChannelCheck>,
    /// Sequence gaps.
    pub gaps: Vec<SeqGap>,
    /// Places that are not frames.
    pub faults: Vec<Fault>,
    /// The file ends inside a frame: the offset where that frame starts (a recording that was
    /// killed, or cut by a full disk).
    pub cut_at: Option<u64>,
    /// The file is zeros from this offset to its end: space allocated ahead that no write
    /// reached (a recording killed, or its machine's power lost). Everything before it is
    /// whole frames; 0 for a file of zeros only.
    pub zeros_from: Option<u64>,
    /// Where the manifest and the file disagree (empty when they agree or there is none).
    pub manifest_mismatches: Vec<String>,
    /// Whether a manifest was found and read.
    pub manifest: bool,
    /// A manifest is beside the file but cannot be read as one: why.
    pub manifest_problem: Option<String>,
}

impl Report {
    /// The file holds frames, is whole and agrees with its manifest: at least one good frame,
    /// no bad frame, no cut, no unwritten space, a manifest that reads if there is one and no
    /// mismatch with it. Gaps are the recording's history (the card dropped frames), not the
    /// file's fault, and are listed.
    pub fn ok(&self) -> bool {
        self.good_frames > 0
            && self.bad_frames == 0
            && self.cut_at.is_none()
            && self.zeros_from.is_none()
            && self.manifest_mismatches.is_empty()
            && self.manifest_problem.is_none()
    }
}

/// Checks the recording at `path` (and its manifest beside it, if there is one). Only a
/// regular file is read: a FIFO or a device would block or never end.
pub fn verify(path: &Path) -> Result<Report, RecordError> {
    crate::regular_file(path, "the recording")?;
    let mut f = std::fs::File::open(path).map_err(|e| RecordError::Disk {
        what: "open".into(),
        path: path.to_path_buf(),
        source: e,
    })?;
    let mut data = Vec::new();
    f.read_to_end(&mut data).map_err(|e| RecordError::Disk {
        what: "read".into(),
        path: path.to_path_buf(),
        source: e,
    })?;
    let mut r = check_bytes(&data);
    // No manifest is a recording's state that verify reports (a killed recording has none);
    // a manifest that is there but does not read is a fault of the recording.
    let at = crate::manifest_path(path);
    let absent = matches!(std::fs::symlink_metadata(&at), Err(e) if e.kind() == std::io::ErrorKind::NotFound);
    if !absent {
        match read_manifest(path) {
            Ok(m) => {
                r.manifest = true;
                r.manifest_mismatches = reconcile(&r, &m);
            }
            Err(e) => r.manifest_problem = Some(e.to_string()),
        }
    }
    Ok(r)
}

/// Checks a recording's bytes.
pub fn check_bytes(data: &[u8]) -> Report {
    let mut trackers: BTreeMap<u8, (SeqTracker, ChannelCheck)> = BTreeMap::new();
    let mut gaps = Vec::new();
    let mut faults = Vec::new();
    let (mut good, mut bad) = (0u64, 0u64);
    let mut cut_at = None;
    let mut zeros_from = None;
    // Reserved space that was never written reads as zeros: a recording that did not finish
    // (killed, or its machine lost power) ends where they start, possibly inside a frame whose
    // block had not landed.
    let written = data.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    let mut at = 0usize;
    while at < data.len() {
        let rest = &data[at..];
        if at >= written {
            zeros_from = Some(at as u64);
            break;
        }
        let head = frame::parse_header(rest);
        let len = match &head {
            Ok((_, payload)) => *payload as usize + frame::OVERHEAD,
            Err(_) => 0,
        };
        if head.is_err() || !(frame::MIN_FRAME_LEN..=frame::MAX_FRAME_LEN).contains(&len) {
            if rest.len() < frame::HEADER_LEN && head.is_err() {
                cut_at = Some(at as u64);
                break;
            }
            // Not a frame here: find the next magic number and go on from it.
            bad += 1;
            let skip = next_magic(&data[at + 1..]).map_or(data.len() - at, |k| k + 1);
            faults.push(Fault {
                offset: at as u64,
                problem: match head {
                    Err(e) => format!("not a frame header ({e}); {skip} bytes skipped"),
                    Ok(_) => format!("a frame length of {len} bytes; {skip} bytes skipped"),
                },
            });
            at += skip;
            continue;
        }
        if rest.len() < len || at + len > written {
            cut_at = Some(at as u64);
            if rest.len() >= len {
                // The frame's first bytes landed and the rest of its length is zeros: the
                // write of its end never happened.
                zeros_from = Some(written as u64);
            }
            break;
        }
        match frame::parse(&rest[..len]) {
            Ok(p) => {
                good += 1;
                let ch = p.header.channel;
                let (t, c) = trackers.entry(ch).or_insert_with(|| {
                    (
                        SeqTracker::new(),
                        ChannelCheck {
                            channel: ch,
                            ..ChannelCheck::default()
                        },
                    )
                });
                let seq = p.header.sequence;
                let expected = t.expected();
                match t.good(seq) {
                    Continuity::Gap { missing } => gaps.push(SeqGap {
                        channel: ch,
                        expected: expected.unwrap_or(0),
                        got: seq,
                        missing,
                        offset: at as u64,
                    }),
                    Continuity::Backward => gaps.push(SeqGap {
                        channel: ch,
                        expected: expected.unwrap_or(0),
                        got: seq,
                        missing: 0,
                        offset: at as u64,
                    }),
                    Continuity::First | Continuity::InOrder => {}
                }
                c.good += 1;
                c.missing = t.missing();
                c.first_sequence.get_or_insert(seq);
                c.last_sequence = Some(seq);
            }
            Err(e) => {
                bad += 1;
                if let Ok((h, _)) = head {
                    if let Some((t, _)) = trackers.get_mut(&h.channel) {
                        t.bad();
                    }
                }
                faults.push(Fault {
                    offset: at as u64,
                    problem: e.to_string(),
                });
            }
        }
        at += len;
    }
    Report {
        bytes: data.len() as u64,
        good_frames: good,
        bad_frames: bad,
        channels: trackers.into_values().map(|(_, c)| c).collect(),
        gaps,
        faults,
        cut_at,
        zeros_from,
        manifest_mismatches: Vec::new(),
        manifest: false,
        manifest_problem: None,
    }
}

fn next_magic(b: &[u8]) -> Option<usize> {
    let m = frame::MAGIC.to_le_bytes();
    b.windows(4).position(|w| w == m)
}

/// Where the file and its manifest disagree.
fn reconcile(r: &Report, m: &Manifest) -> Vec<String> {
    let mut out = Vec::new();
    if r.bytes != m.bytes {
        out.push(format!(
            "the manifest says {} bytes, the file has {}",
            m.bytes, r.bytes
        ));
    }
    let frames = r.good_frames + r.bad_frames;
    if r.cut_at.is_none() && r.zeros_from.is_none() && frames != m.frames {
        out.push(format!(
            "the manifest says {} frames, the file has {frames}",
            m.frames
        ));
    }
    let missing: u64 = r.channels.iter().map(|c| c.missing).sum();
    let m_missing: u64 = m.streams.iter().map(|s| s.missing).sum();
    if missing != m_missing {
        out.push(format!(
            "the manifest counts {m_missing} missing frames, the file shows {missing}"
        ));
    }
    out
}
