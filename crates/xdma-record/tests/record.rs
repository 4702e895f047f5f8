//! Recordings of the simulated card's streams on this machine's disk, read back by `verify`;
//! a full disk on a real ext4 image; a recording stopped by SIGINT and one killed; and the
//! verifier against files built with the frame format's reference implementation.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use xdma::{Config, Xdma};
use xdma_record::record::{read_manifest, record_streams, EndReason, StreamPlan};
use xdma_record::sink::SinkOptions;
use xdma_record::verify::{check_bytes, verify};

fn sim_card() -> Xdma {
    Xdma::open(&Config::from_toml("").expect("the default configuration"))
        .expect("open the simulated card")
}

/// Records the streams of `plan` into `file`, never stopped from outside, no progress shown.
fn record(
    card: &Xdma,
    plan: &StreamPlan,
    file: &Path,
    opts: SinkOptions,
) -> Result<xdma_record::record::Manifest, xdma_record::RecordError> {
    record_streams(card, plan, file, opts, &AtomicBool::new(false), &mut |_| {})
}

/// Small blocks, so that a few hundred frames make several writes in flight.
fn small_blocks() -> SinkOptions {
    SinkOptions {
        block: 64 << 10,
        depth: 8,
        ..SinkOptions::default()
    }
}

#[test]
fn both_streams_record_and_every_frame_verifies() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a folder on the disk");
    let file = dir.path().join("two.bin");
    let plan = StreamPlan {
        channels: 2,
        frame: 4132,
        frames: 150,
        ..StreamPlan::default()
    };
    let m = record(&sim_card(), &plan, &file, small_blocks()).expect("a recording");
    assert_eq!(m.end, EndReason::Done, "{}", m.end_detail);
    assert!(m.sink_report.direct, "written with O_DIRECT");
    assert_eq!(m.frames, 300);
    assert_eq!(
        m.bytes,
        300 * 4132,
        "whole frames, back to back, no padding left"
    );
    for s in &m.streams {
        assert_eq!((s.frames, s.missing, s.bad_frames), (150, 0, 0), "{s:?}");
        assert_eq!((s.first_sequence, s.last_sequence), (Some(0), Some(149)));
        assert!(s.card_sent >= 150, "the card's counter: {s:?}");
    }
    let r = verify(&file).expect("verify");
    assert!(r.ok(), "{r:?}");
    assert!(r.manifest);
    assert_eq!(r.good_frames, 300);
    assert_eq!(r.channels.len(), 2);
    assert_eq!(std::fs::metadata(&file).expect("file").len(), 300 * 4132);
    let svg = std::fs::read_to_string(xdma_record::plot::plot_path(&file)).expect("the plot");
    assert!(
        svg.starts_with("<svg") && svg.contains("300 frames"),
        "the plot names its recording"
    );
}

/// Frames as the card makes them, with the format's reference implementation.
fn frames(channel: u8, n: u32, len: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for sequence in 0..n {
        let h = frame::Header {
            channel,
            pattern: frame::Pattern::Prbs,
            sequence,
            timestamp: u64::from(sequence) * 1000,
            seed: 7,
        };
        out.extend(frame::build(&h, len).expect("a frame"));
    }
    out
}

#[test]
fn verify_names_a_gap_a_corrupt_frame_a_cut_and_unwritten_space() {
    let whole = frames(0, 10, 1000);
    let r = check_bytes(&whole);
    assert!(r.ok() && r.good_frames == 10, "{r:?}");
    // Frame 4 taken out: a gap of one.
    let mut gap = whole[..4000].to_vec();
    gap.extend_from_slice(&whole[5000..]);
    let r = check_bytes(&gap);
    assert_eq!(r.gaps.len(), 1);
    assert_eq!(
        (r.gaps[0].expected, r.gaps[0].got, r.gaps[0].missing),
        (4, 5, 1)
    );
    assert_eq!(r.gaps[0].offset, 4000);
    // A payload byte of frame 2 changed: one bad frame, at its offset, the rest good.
    let mut bad = whole.clone();
    bad[2500] ^= 0x40;
    let r = check_bytes(&bad);
    assert_eq!((r.good_frames, r.bad_frames), (9, 1));
    assert_eq!(r.faults[0].offset, 2000);
    assert!(!r.ok());
    // Cut inside frame 7: everything before it is whole, the cut named.
    let r = check_bytes(&whole[..7300]);
    assert_eq!((r.good_frames, r.cut_at), (7, Some(7000)));
    // Reserved space never written (a killed recording): zeros after frame 6.
    let mut zeros = whole[..6000].to_vec();
    zeros.resize(20_000, 0);
    let r = check_bytes(&zeros);
    assert_eq!((r.good_frames, r.bad_frames, r.cut_at), (6, 0, Some(6000)));
}

/// A small ext4 image mounted by loop, for as long as it lives.
struct Ext4 {
    dir: tempfile::TempDir,
    image: PathBuf,
}

impl Ext4 {
    /// `None` (and why, on stderr) where this machine cannot mount one: not root, no loop
    /// device, no mkfs.ext4.
    fn mount(mib: u64) -> Option<Ext4> {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).ok()?;
        let image = dir.path().with_extension("img");
        let ok = |c: &mut Command| c.status().is_ok_and(|s| s.success());
        let made = std::fs::File::create(&image)
            .and_then(|f| f.set_len(mib << 20))
            .is_ok()
            && ok(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&image))
            && ok(Command::new("mount")
                .args(["-o", "loop"])
                .arg(&image)
                .arg(dir.path()));
        if !made {
            eprintln!("skipped: cannot make and mount an ext4 image here (needs root, a loop device and mkfs.ext4)");
            let _ = std::fs::remove_file(&image);
            return None;
        }
        Some(Ext4 { dir, image })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Ext4 {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
        let _ = std::fs::remove_file(&self.image);
    }
}

/// A ramfs mounted in a fresh folder: a file system that refuses `O_DIRECT` (tmpfs accepts it
/// since Linux 6.6, so it no longer stands for one).
struct Ramfs {
    dir: tempfile::TempDir,
}

impl Ramfs {
    /// `None` (and why, on stderr) where this machine cannot mount one (needs root).
    fn mount() -> Option<Ramfs> {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).ok()?;
        let mounted = Command::new("mount")
            .args(["-t", "ramfs", "ramfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            eprintln!("skipped: cannot mount a ramfs here (needs root)");
            return None;
        }
        Some(Ramfs { dir })
    }
}

impl Drop for Ramfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// A file system that refuses `O_DIRECT`: a clear error that names the file and the way out,
/// and with the fallback asked for, a recording through the page cache that says it is one
/// and verifies.
#[test]
fn a_file_system_without_o_direct_is_named_or_written_buffered_when_asked() {
    let Some(fs) = Ramfs::mount() else {
        return;
    };
    let file = fs.dir.path().join("rec.bin");
    let plan = StreamPlan {
        frame: 4132,
        frames: 60,
        ..StreamPlan::default()
    };
    let card = sim_card();
    let err = record(&card, &plan, &file, small_blocks()).expect_err("O_DIRECT is refused");
    assert!(
        matches!(err, xdma_record::RecordError::NoDirectIo { .. }),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("refuses O_DIRECT")
            && text.contains("--buffered")
            && text.contains("rec.bin"),
        "{text}"
    );
    let buffered = SinkOptions {
        buffered_fallback: true,
        ..small_blocks()
    };
    let m = record(&card, &plan, &file, buffered).expect("a buffered recording");
    assert_eq!(m.end, EndReason::Done, "{}", m.end_detail);
    assert!(
        !m.sink_report.direct,
        "the manifest says the file was not written with O_DIRECT"
    );
    let r = verify(&file).expect("verify");
    assert!(r.ok(), "{r:?}");
    assert_eq!(r.good_frames, 60);
}

#[test]
fn a_full_disk_ends_the_recording_at_a_whole_frame_and_what_was_written_verifies() {
    let Some(disk) = Ext4::mount(4) else {
        return;
    };
    let file = disk.path().join("full.bin");
    // The CAPTURE ring, the faster source on the simulated card; 8.3 MB asked for, twice what
    // the file system holds.
    let plan = xdma_record::record::RingPlan {
        frame: 4132,
        frames: 2000,
        size: 1 << 20,
        read: 256 << 10,
        ..Default::default()
    };
    let m = xdma_record::record::record_ring(
        &sim_card(),
        &plan,
        &file,
        small_blocks(),
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .expect("the recording ends with a manifest, not an error");
    assert_eq!(m.end, EndReason::DiskFull, "{}", m.end_detail);
    assert!(m.end_detail.contains("full"), "{}", m.end_detail);
    assert!(m.bytes > 1 << 20 && m.bytes < 4 << 20, "{} bytes", m.bytes);
    assert_eq!(m.bytes % 4132, 0, "the file ends at a frame's end");
    assert_eq!(m.frames * 4132, m.bytes);
    let r = verify(&file).expect("verify");
    assert!(r.ok(), "{r:?}");
    assert_eq!(r.good_frames, m.frames);
}

/// The recorder as a user runs it, on the simulated card.
fn recorder(file: &Path, frames: u64) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_xdma-record"));
    c.arg("record")
        .arg(file)
        .args(["--frame", "4132", "--frames", &frames.to_string(), "--json"])
        .env_remove("XDMA_CONFIG")
        .env_remove("XDMA_BACKEND")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    c
}

/// Waits until the recording's first frame is on the disk, so that a signal lands
/// mid-recording (the file's length says nothing: the recorder reserves it up front).
fn wait_for_data(file: &Path) {
    let started = Instant::now();
    loop {
        let head = std::fs::read(file)
            .ok()
            .and_then(|b| b.get(..4).map(<[u8]>::to_vec));
        if head.as_deref() == Some(&frame::MAGIC.to_le_bytes()[..]) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the recording wrote nothing"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
}

#[test]
fn sigint_stops_a_recording_cleanly_and_sigkill_leaves_a_file_that_verifies_to_its_cut() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a folder on the disk");
    for (sig, name) in [(libc::SIGINT, "int.bin"), (libc::SIGKILL, "kill.bin")] {
        let file = dir.path().join(name);
        // More frames than the simulated card makes before the signal.
        let child = recorder(&file, 100_000).spawn().expect("xdma-record");
        wait_for_data(&file);
        // SAFETY: kill(2) on the child this test started and has not reaped.
        unsafe { libc::kill(child.id() as libc::pid_t, sig) };
        let out = child.wait_with_output().expect("exit");
        eprintln!(
            "{name}: {:?}, stderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let r = verify(&file).expect("verify");
        assert_eq!(r.bad_frames, 0, "{r:?}");
        assert!(r.good_frames > 0, "{r:?}");
        if sig == libc::SIGINT {
            assert!(
                out.status.success(),
                "{:?}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
            let m = read_manifest(&file).expect("the manifest");
            assert_eq!(m.end, EndReason::Stopped);
            assert!(r.ok(), "synced, cut to its length, manifest agrees: {r:?}");
            assert_eq!(r.good_frames, m.frames);
        } else {
            assert!(
                read_manifest(&file).is_err(),
                "a killed recording writes no manifest"
            );
            // The reserved space past the last write reads as zeros, or the file ends in a
            // frame: either way verify names where the whole frames end.
            if let Some(cut) = r.cut_at {
                assert_eq!(cut % 4132, 0, "the cut is at a frame's start: {cut}");
            }
        }
    }
}

/// The disk benchmark runs the sink and both fio engines with the same parameters and
/// reports each and the ratio. Its figures are a measurement, not a test: this only checks
/// that every writer ran and the ratio is the recorder's figure over fio's best.
#[test]
fn bench_disk_runs_the_sink_beside_both_fio_engines() {
    let fio = Command::new("fio").arg("--version").output();
    if !fio.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: fio is not installed (cargo xtask test installs Debian's package)");
        return;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a folder on the disk");
    let b = xdma_record::bench::bench_disk(dir.path(), 64 << 20, SinkOptions::default(), 1)
        .expect("the benchmark runs");
    let writers: Vec<&str> = b.runs.iter().map(|r| r.writer.as_str()).collect();
    assert_eq!(writers, ["xdma-record", "fio libaio", "fio io_uring"]);
    assert!(b.runs.iter().all(|r| r.mb_s > 0.0), "{b:?}");
    let best = b.runs[1].mb_s.max(b.runs[2].mb_s);
    assert!((b.ratio - b.runs[0].mb_s / best).abs() < 1e-9, "{b:?}");
    assert_eq!(
        std::fs::read_dir(dir.path()).expect("folder").count(),
        0,
        "every run's file removed"
    );
}

/// A card that stops sending (here its sources are switched off from another handle, as a
/// wedged source would look to the host) ends the recording with the channel and the
/// receive's timeout named; what was recorded is closed cleanly and verifies.
#[test]
fn a_card_that_stops_sending_ends_the_recording_with_the_file_closed_cleanly() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a folder on the disk");
    let file = dir.path().join("stopped.bin");
    let card = sim_card();
    let plan = StreamPlan {
        frame: 4132,
        // A source makes a frame every few microseconds: 1 ms without one is a stop.
        frame_wait: Duration::from_millis(1),
        ..StreamPlan::default()
    };
    let other = card.clone();
    let mut switched_off = false;
    let m = record_streams(
        &card,
        &plan,
        &file,
        small_blocks(),
        &AtomicBool::new(false),
        &mut |p| {
            if p.frames == 40 && !switched_off {
                switched_off = true;
                xdma::Card::write_reg(&other, u64::from(card_regs::CONTROL), 0)
                    .expect("sources off");
            }
        },
    )
    .expect("the recording ends with a manifest, not an error");
    assert_eq!(m.end, EndReason::CardError, "{}", m.end_detail);
    assert!(m.end_detail.contains("C2H channel"), "{}", m.end_detail);
    assert!(
        m.end_detail.to_lowercase().contains("timed out"),
        "{}",
        m.end_detail
    );
    assert!(m.frames >= 40, "{}", m.frames);
    let r = verify(&file).expect("verify");
    assert!(r.ok(), "{r:?}");
    assert_eq!(r.good_frames, m.frames);
}

/// The CAPTURE ring: the card writes frames into a 256 KiB ring in its DDR at its own rate,
/// the recorder follows the write pointer and reads 64 KiB at a time. The ring overflows (the
/// source makes frames faster than these reads take them), so the card drops new frames and
/// counts them; every gap in the file is such a frame, and the recorded frames verify, the
/// ring's padding to whole beats gone.
#[test]
fn the_capture_ring_records_and_its_overflow_is_counted_against_the_gaps() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a folder on the disk");
    let file = dir.path().join("ring.bin");
    let plan = xdma_record::record::RingPlan {
        base: 1 << 20,
        size: 256 << 10,
        frame: 4132,
        frames: 400,
        read: 64 << 10,
        ..Default::default()
    };
    let m = xdma_record::record::record_ring(
        &sim_card(),
        &plan,
        &file,
        small_blocks(),
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .expect("a recording");
    assert_eq!(m.end, EndReason::Done, "{}", m.end_detail);
    assert_eq!(m.source, "ring");
    assert_eq!(
        (m.frames, m.bytes),
        (400, 400 * 4132),
        "unpadded frames, back to back"
    );
    let s = &m.streams[0];
    assert!(
        s.missing > 0,
        "a 256 KiB ring read 64 KiB at a time overflows: {s:?}"
    );
    assert!(
        s.missing <= s.card_dropped,
        "every gap is a frame the card dropped: {s:?}"
    );
    assert_eq!(m.gaps.iter().map(|g| g.missing).sum::<u64>(), s.missing);
    assert!(s.card_sent >= s.frames + s.missing, "{s:?}");
    let r = verify(&file).expect("verify");
    assert!(r.ok(), "{r:?}");
    assert_eq!((r.good_frames, r.gaps.len()), (400, m.gaps.len()));
}

/// Recordings stopped and started again on one card, with frame sizes that grow and shrink
/// from one to the next, stopped by count or from outside at moments that leave the sources
/// in the middle of a frame: the card's clear never cuts a frame, the frame in flight is taken
/// whole before the next run, and every run starts at its frame 0 with nothing stale before it.
#[test]
fn recordings_stopped_anywhere_restart_with_no_cut_frame() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a folder on the disk");
    let card = sim_card();
    // (frame bytes, frames asked for, frames after which the recording is stopped from outside)
    let rounds: [(usize, u64, Option<u64>); 7] = [
        (8192, 30, Some(7)),
        (4132, 20, None),
        (256, 50, Some(13)),
        (65536, 6, Some(2)),
        (1000, 25, None),
        (64, 40, Some(31)),
        (12000, 9, None),
    ];
    let mut tails = 0;
    for (i, &(frame, frames, stop_at)) in rounds.iter().enumerate() {
        let file = dir.path().join(format!("run{i}.bin"));
        let plan = StreamPlan {
            channels: 2,
            frame,
            frames,
            ..StreamPlan::default()
        };
        let stop = AtomicBool::new(false);
        let m = record_streams(&card, &plan, &file, small_blocks(), &stop, &mut |p| {
            if stop_at.is_some_and(|n| p.frames >= n) {
                stop.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        })
        .expect("a recording");
        let want = if stop_at.is_some() {
            EndReason::Stopped
        } else {
            EndReason::Done
        };
        assert_eq!(m.end, want, "round {i}: {}", m.end_detail);
        for s in &m.streams {
            assert_eq!(s.first_sequence, Some(0), "round {i}: {s:?}");
            assert_eq!(
                (s.stale_skipped, s.bad_frames, s.missing),
                (0, 0, 0),
                "round {i}: nothing of the run before, nothing broken: {s:?}"
            );
        }
        let r = verify(&file).expect("verify");
        assert!(r.ok(), "round {i}: {r:?}");
        assert_eq!(r.good_frames, m.frames, "round {i}");
        // The sources stopped with the recording; a clear now says whether one had begun a
        // frame that no receive took (the next run's start takes it whole).
        xdma::Card::write_reg(
            &card,
            u64::from(card_regs::CLEAR),
            card_regs::clear::COUNTERS_MASK as u32,
        )
        .expect("clear");
        let status = u64::from(
            xdma::Card::read_reg(&card, u64::from(card_regs::SRC_STATUS)).expect("status"),
        );
        use card_regs::src_status::{SRC0_TAIL_MASK, SRC1_TAIL_MASK};
        tails +=
            usize::from(status & SRC0_TAIL_MASK != 0) + usize::from(status & SRC1_TAIL_MASK != 0);
    }
    // The rounds must leave frames in flight, or they test nothing of the clear.
    assert!(tails > 0, "no round left a source in the middle of a frame");
}

/// A disk slower than the source: after every frame the host spends 40 us of the card's clock
/// elsewhere (a wait on the card, which runs its clock as a slow write would), about 100 MB/s
/// for 4132-byte frames against a source that makes several GB/s. Under the drop policy the
/// card drops the frames no receive is posted for and counts them; every gap in the file is
/// such a frame, shown in the manifest, and the recorded frames verify. Under the stall policy
/// the stream backs up instead and nothing is lost.
#[rstest::rstest]
#[case::drop(true)]
#[case::stall(false)]
fn a_sink_slower_than_the_source_is_an_overrun_the_card_counts(#[case] drop: bool) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a folder on the disk");
    let file = dir.path().join("slow.bin");
    let card = sim_card();
    let plan = StreamPlan {
        frame: 4132,
        frames: 200,
        drop,
        ..StreamPlan::default()
    };
    let slow = card.clone();
    let m = record_streams(
        &card,
        &plan,
        &file,
        small_blocks(),
        &AtomicBool::new(false),
        &mut |_| {
            // The card's clock runs for the wait's length: no interrupt is enabled, so it times out.
            let _ = xdma::Card::wait_event(&slow, 0, Duration::from_micros(40));
        },
    )
    .expect("a recording");
    assert_eq!(m.end, EndReason::Done, "{}", m.end_detail);
    let s = &m.streams[0];
    assert_eq!(s.frames, 200, "{s:?}");
    if drop {
        assert!(s.missing > 0 && s.card_dropped > 0, "an overrun: {s:?}");
        assert!(
            s.missing <= s.card_dropped,
            "every gap is a frame the card dropped: {s:?}"
        );
        assert_eq!(m.gaps.iter().map(|g| g.missing).sum::<u64>(), s.missing);
    } else {
        assert_eq!(
            (s.missing, s.card_dropped),
            (0, 0),
            "the stream backs up: {s:?}"
        );
        assert!(m.gaps.is_empty());
    }
    let r = verify(&file).expect("verify");
    assert!(r.ok(), "{r:?}");
    assert_eq!((r.good_frames, r.gaps.len()), (200, m.gaps.len()));
}
