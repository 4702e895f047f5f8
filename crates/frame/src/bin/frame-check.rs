//! `frame-check FILE [--frames N]`: checks a file of stream frames laid end to end, as a
//! program that appends each received frame to a file writes it (the vendor's
//! `dma_from_device -e -c N -f FILE`, one frame per read). Every frame is validated against the
//! format (length, magic, CRC, payload pattern) and its sequence number followed. It prints one
//! line with the counts and exits non-zero when a frame is bad, the file ends inside a frame,
//! or fewer than N frames are there. It has no dependencies beyond the format crate, so that it
//! runs in a minimal system.
//!
//! `frame-check --build FILE --frames N --len BYTES` writes N valid frames of BYTES bytes end
//! to end instead (channel 0, counter pattern, sequence numbers from 0), for a system with no
//! other way to make frames to send to the card.

use std::process::ExitCode;

const USAGE: &str =
    "usage: frame-check FILE [--frames N]\n       frame-check --build FILE --frames N --len BYTES";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut file = None;
    let mut want: Option<u64> = None;
    let mut len: Option<usize> = None;
    let mut build = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--frames" => match it.next().and_then(|n| n.parse().ok()) {
                Some(n) => want = Some(n),
                None => return usage("--frames needs a count"),
            },
            "--len" => match it.next().and_then(|n| n.parse().ok()) {
                Some(n) => len = Some(n),
                None => return usage("--len needs a byte count"),
            },
            "--build" => build = true,
            _ if file.is_none() => file = Some(a.clone()),
            _ => return usage(&format!("unexpected argument `{a}`")),
        }
    }
    let Some(file) = file else {
        return usage("no file given");
    };
    if build {
        let (Some(n), Some(len)) = (want, len) else {
            return usage("--build needs --frames and --len");
        };
        let written = build_frames(n, len).and_then(|bytes| {
            std::fs::write(&file, bytes).map_err(|e| format!("cannot write {file}: {e}"))
        });
        return match written {
            Ok(()) => {
                println!("frame-check: wrote {n} frames of {len} bytes to {file}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("frame-check: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if len.is_some() {
        return usage("--len goes with --build");
    }
    let bytes = match std::fs::read(&file) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("frame-check: cannot read {file}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let s = match check(&bytes) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("frame-check: {file}: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "frame-check: {} frames, all valid, sequence {} to {}, {} missing",
        s.frames,
        s.first.map_or("-".into(), |s| s.to_string()),
        s.last.map_or("-".into(), |s| s.to_string()),
        s.missing
    );
    match want {
        Some(n) if s.frames < n => {
            eprintln!("frame-check: {} frames where {n} were expected", s.frames);
            ExitCode::FAILURE
        }
        _ => ExitCode::SUCCESS,
    }
}

/// What a file of valid frames held.
#[derive(Debug, PartialEq, Eq)]
struct Summary {
    frames: u64,
    first: Option<u32>,
    last: Option<u32>,
    missing: u64,
}

/// Validates the frames laid end to end in `bytes`; the first bad one is the error.
fn check(bytes: &[u8]) -> Result<Summary, String> {
    let mut seq = frame::SeqTracker::new();
    let mut at = 0usize;
    let mut s = Summary {
        frames: 0,
        first: None,
        last: None,
        missing: 0,
    };
    while at < bytes.len() {
        let rest = &bytes[at..];
        // The header gives the frame's length; a bad header leaves nothing to resynchronize on.
        let len = match frame::parse_header(rest) {
            Ok((_, payload)) => payload as usize + frame::OVERHEAD,
            Err(e) => return Err(format!("frame {} at byte {at}: {e}", s.frames)),
        };
        let Some(one) = rest.get(..len) else {
            return Err(format!(
                "frame {} at byte {at} is cut short: {} of {len} bytes",
                s.frames,
                rest.len()
            ));
        };
        let (p, _) = seq
            .observe(one)
            .map_err(|e| format!("frame {} at byte {at}: {e}", s.frames))?;
        s.first.get_or_insert(p.header.sequence);
        s.last = Some(p.header.sequence);
        s.frames += 1;
        at += len;
    }
    s.missing = seq.missing();
    Ok(s)
}

/// `frames` valid frames of `len` bytes end to end: channel 0, counter pattern, sequence
/// numbers from 0.
fn build_frames(frames: u64, len: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    for sequence in 0..frames {
        let header = frame::Header::counter(
            u32::try_from(sequence).map_err(|_| "too many frames".to_string())?,
        );
        out.extend(frame::build(&header, len).map_err(|e| format!("--len {len}: {e}"))?);
    }
    Ok(out)
}

fn usage(why: &str) -> ExitCode {
    eprintln!("frame-check: {why}\n{USAGE}");
    ExitCode::from(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_frames_check_as_valid_and_in_sequence() {
        let bytes = build_frames(3, 1000).expect("valid length");
        assert_eq!(bytes.len(), 3000);
        assert_eq!(
            check(&bytes).expect("valid frames"),
            Summary {
                frames: 3,
                first: Some(0),
                last: Some(2),
                missing: 0
            }
        );
    }

    #[test]
    fn a_damaged_or_cut_frame_is_an_error() {
        let mut bytes = build_frames(2, 67).expect("valid length");
        bytes[67 + 40] ^= 1;
        assert!(check(&bytes)
            .expect_err("a damaged frame")
            .starts_with("frame 1 at byte 67"));
        let bytes = build_frames(2, 64).expect("valid length");
        assert!(check(&bytes[..100])
            .expect_err("a cut frame")
            .contains("cut short"));
    }

    #[test]
    fn lengths_outside_the_format_are_refused() {
        assert!(build_frames(1, 63).is_err());
        assert!(build_frames(1, 65537).is_err());
        assert_eq!(build_frames(1, 65536).expect("valid length").len(), 65536);
    }
}
