//! `frame-check FILE [--frames N]`: checks a file of stream frames laid end to end, as a
//! program that appends each received frame to a file writes it (the vendor's
//! `dma_from_device -e -c N -f FILE`, one frame per read). Every frame is validated against the
//! format (length, magic, CRC, payload pattern) and its sequence number followed. It prints one
//! line with the counts and exits non-zero when a frame is bad, the file ends inside a frame,
//! or fewer than N frames are there. It has no dependencies beyond the format crate, so that it
//! runs in a minimal system.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut file = None;
    let mut want: Option<u64> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--frames" => match it.next().and_then(|n| n.parse().ok()) {
                Some(n) => want = Some(n),
                None => return usage("--frames needs a count"),
            },
            _ if file.is_none() => file = Some(a.clone()),
            _ => return usage(&format!("unexpected argument `{a}`")),
        }
    }
    let Some(file) = file else {
        return usage("no file given");
    };
    let bytes = match std::fs::read(&file) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("frame-check: cannot read {file}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut seq = frame::SeqTracker::new();
    let mut at = 0usize;
    let mut frames = 0u64;
    let mut first = None;
    let mut last = None;
    while at < bytes.len() {
        let rest = &bytes[at..];
        // The header gives the frame's length; a bad header leaves nothing to resynchronize on.
        let len = match frame::parse_header(rest) {
            Ok((_, payload)) => payload as usize + frame::OVERHEAD,
            Err(e) => {
                eprintln!("frame-check: {file}: frame {frames} at byte {at}: {e}");
                return ExitCode::FAILURE;
            }
        };
        let Some(one) = rest.get(..len) else {
            eprintln!(
                "frame-check: {file}: frame {frames} at byte {at} is cut short: {} of {len} bytes",
                rest.len()
            );
            return ExitCode::FAILURE;
        };
        match seq.observe(one) {
            Ok((p, _)) => {
                first.get_or_insert(p.header.sequence);
                last = Some(p.header.sequence);
            }
            Err(e) => {
                eprintln!("frame-check: {file}: frame {frames} at byte {at}: {e}");
                return ExitCode::FAILURE;
            }
        }
        frames += 1;
        at += len;
    }
    println!(
        "frame-check: {frames} frames, all valid, sequence {} to {}, {} missing",
        first.map_or("-".into(), |s| s.to_string()),
        last.map_or("-".into(), |s| s.to_string()),
        seq.missing()
    );
    match want {
        Some(n) if frames < n => {
            eprintln!("frame-check: {frames} frames where {n} were expected");
            ExitCode::FAILURE
        }
        _ => ExitCode::SUCCESS,
    }
}

fn usage(why: &str) -> ExitCode {
    eprintln!("frame-check: {why}\nusage: frame-check FILE [--frames N]");
    ExitCode::from(2)
}
