//! Recordings of the simulated card's streams on this machine's disk, read back by `verify`;
//! a full disk on a real ext4 image; a recording stopped by SIGINT and one killed; and the
//! verifier against files built with the frame format's reference implementation.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use xdma::{Config, Xdma};
use xdma_record::record::{
    read_manifest, record_streams, EndReason, Manifest, Progress, RingPlan, StreamPlan,
};
use xdma_record::sink::{Sink, SinkOptions, ALIGN};
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
) -> Result<Manifest, xdma_record::RecordError> {
    record_streams(card, plan, file, opts, &AtomicBool::new(false), &mut |_| {})
}

/// Records the streams of `plan` into `file` with [`small_blocks`], never stopped from
/// outside, each progress report given to `progress`.
fn record_watched(
    card: &Xdma,
    plan: &StreamPlan,
    file: &Path,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Manifest, xdma_record::RecordError> {
    record_streams(
        card,
        plan,
        file,
        small_blocks(),
        &AtomicBool::new(false),
        progress,
    )
}

/// Records the CAPTURE ring of a fresh simulated card as `plan` says into `file` with
/// [`small_blocks`], never stopped from outside, no progress shown.
fn record_ring(plan: &RingPlan, file: &Path) -> Result<Manifest, xdma_record::RecordError> {
    xdma_record::record::record_ring(
        &sim_card(),
        plan,
        file,
        small_blocks(),
        &AtomicBool::new(false),
        &mut |_| {},
    )
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
    let svg = std::fs::read_to_string(xdma_record::plot_path(&file)).expect("the plot");
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
    assert_eq!(
        (r.good_frames, r.bad_frames, r.cut_at, r.zeros_from),
        (6, 0, None, Some(6000))
    );
    assert!(!r.ok());
    // Frame 6's first block landed, its second never did: the frame is cut, zeros follow.
    let mut torn = whole[..6500].to_vec();
    torn.resize(20_000, 0);
    let r = check_bytes(&torn);
    assert_eq!((r.good_frames, r.cut_at), (6, Some(6000)), "{r:?}");
    // Where the zeros start is where the last byte that is not zero ends.
    assert!(
        r.zeros_from.is_some_and(|z| (6001..=6500).contains(&z)),
        "{r:?}"
    );
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
    let plan = RingPlan {
        frame: 4132,
        frames: 2000,
        size: 1 << 20,
        read: 256 << 10,
        ..Default::default()
    };
    let m = record_ring(&plan, &file).expect("the recording ends with a manifest, not an error");
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

/// SIGINT and SIGTERM stop a recording cleanly (synced, cut to its length, its manifest
/// written) with 128 + the signal as the exit status, so that a script tells a stopped
/// recording from one that got its frames; SIGKILL leaves a file that verifies to its cut.
#[test]
fn sigint_stops_a_recording_cleanly_and_sigkill_leaves_a_file_that_verifies_to_its_cut() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a folder on the disk");
    for (sig, name) in [
        (libc::SIGINT, "int.bin"),
        (libc::SIGTERM, "term.bin"),
        (libc::SIGKILL, "kill.bin"),
    ] {
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
        if sig != libc::SIGKILL {
            assert_eq!(
                out.status.code(),
                Some(128 + sig),
                "{}",
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
            if let Some(cut) = r.cut_at.or(r.zeros_from) {
                assert_eq!(cut % 4132, 0, "the cut is at a frame's start: {cut}");
            }
            assert!(!r.ok(), "a killed recording is not whole: {r:?}");
        }
    }
}

/// The disk benchmark runs the sink and both fio engines with the same parameters and
/// reports each writer's best and median rounds and the ratios. Its figures are a
/// measurement, not a test: this only checks that every writer ran every round and the
/// figures are the rounds' best and median, the ratios the recorder's over fio's better.
#[test]
fn bench_disk_runs_the_sink_beside_both_fio_engines() {
    if !fio_installed() {
        return;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a folder on the disk");
    let b = xdma_record::bench::bench_disk(
        dir.path(),
        32 << 20,
        SinkOptions::default(),
        3,
        &AtomicBool::new(false),
    )
    .expect("the benchmark runs");
    let writers: Vec<&str> = b.runs.iter().map(|r| r.writer.as_str()).collect();
    assert_eq!(writers, ["xdma-record", "fio libaio", "fio io_uring"]);
    for r in &b.runs {
        assert_eq!(r.rounds_mb_s.len(), 3, "{r:?}");
        assert!(r.rounds_mb_s.iter().all(|&v| v > 0.0), "{r:?}");
        let mut sorted = r.rounds_mb_s.clone();
        sorted.sort_by(f64::total_cmp);
        assert_eq!((r.mb_s, r.median_mb_s), (sorted[2], sorted[1]), "{r:?}");
    }
    let best = b.runs[1].mb_s.max(b.runs[2].mb_s);
    assert!((b.ratio - b.runs[0].mb_s / best).abs() < 1e-9, "{b:?}");
    let median = b.runs[1].median_mb_s.max(b.runs[2].median_mb_s);
    assert!(
        (b.median_ratio - b.runs[0].median_mb_s / median).abs() < 1e-9,
        "{b:?}"
    );
    assert_eq!(xdma_record::bench::median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
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
    let m = record_watched(&card, &plan, &file, &mut |p| {
        if p.frames == 40 && !switched_off {
            switched_off = true;
            xdma::Card::write_reg(&other, u64::from(card_regs::CONTROL), 0).expect("sources off");
        }
    })
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
    let plan = RingPlan {
        base: 1 << 20,
        size: 256 << 10,
        frame: 4132,
        frames: 400,
        read: 64 << 10,
        ..Default::default()
    };
    let m = record_ring(&plan, &file).expect("a recording");
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
    let m = record_watched(&card, &plan, &file, &mut |_| {
        // The card's clock runs for the wait's length: no interrupt is enabled, so it times out.
        let _ = xdma::Card::wait_event(&slow, 0, Duration::from_micros(40));
    })
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

/// The recorder's binary with `args`, its output captured, never reading a configuration from
/// the environment.
fn xdma_record(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_xdma-record"));
    c.args(args)
        .env_remove("XDMA_CONFIG")
        .env_remove("XDMA_BACKEND")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    c
}

/// Waits for `child` at most `limit`; a child still running then is killed and the test fails
/// (the old failure of a command that hung).
fn wait_at_most(
    mut child: std::process::Child,
    limit: Duration,
    what: &str,
) -> std::process::Output {
    let started = Instant::now();
    loop {
        match child.try_wait().expect("wait") {
            Some(_) => return child.wait_with_output().expect("output"),
            None if started.elapsed() > limit => {
                let _ = child.kill();
                let out = child.wait_with_output().expect("output");
                panic!(
                    "{what}: still running after {limit:?} (stdout: {}, stderr: {})",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

fn run_at_most(c: &mut Command, limit: Duration, what: &str) -> std::process::Output {
    wait_at_most(c.spawn().expect("xdma-record"), limit, what)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Sends `sig` to the child.
fn signal(child: &std::process::Child, sig: libc::c_int) {
    // SAFETY: kill(2) on a child this test started and has not reaped.
    unsafe { libc::kill(child.id() as libc::pid_t, sig) };
}

/// Values that once panicked (a `Duration` out of range, a product that overflowed) are
/// refused with a message before anything runs.
#[test]
fn numbers_that_once_panicked_are_refused_with_a_message() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a folder on the disk");
    let f = dir.path().join("r.bin");
    let f = f.to_string_lossy();
    for (args, says) in [
        (
            vec!["record", &f, "--frame-wait-ms", "1e300"],
            "out of range",
        ),
        (vec!["record", &f, "--sync-every", "1e300"], "out of range"),
        (
            vec!["record", &f, "--frame-wait-ms", "-inf"],
            "not a finite number",
        ),
        (
            vec!["record", &f, "--frames", "18446744073709551615"],
            "more than a file can hold",
        ),
        (
            vec![
                "record",
                &f,
                "--frames",
                "4000000000000000",
                "--channels",
                "2",
            ],
            "more than a file can hold",
        ),
        (vec!["record", &f, "--frames", "-1"], "negative"),
        (vec!["bench-disk", "--rounds", "nan"], "not a finite number"),
    ] {
        let out = run_at_most(
            &mut xdma_record(&args),
            Duration::from_secs(60),
            &args.join(" "),
        );
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(says) && !err.contains("panicked"),
            "{args:?}: {err}"
        );
        assert!(
            !dir.path().join("r.bin").exists(),
            "{args:?}: nothing is written"
        );
    }
}

/// A manifest for tests of `plot` and `verify`: one stream of `frames` frames of `len` bytes.
fn manifest(frames: u64, len: u64, rates: Vec<f64>) -> Manifest {
    use xdma_record::record::StreamRecord;
    Manifest {
        file: "r.bin".into(),
        backend: "sim".into(),
        card_id: 0,
        card_version: 0,
        source: "stream".into(),
        frame_bytes: len,
        plan: StreamPlan::default(),
        streams: vec![StreamRecord {
            channel: 0,
            frames,
            first_sequence: Some(0),
            last_sequence: frames.checked_sub(1).map(|s| s as u32),
            ..StreamRecord::default()
        }],
        frames,
        bytes: frames * len,
        started_unix_s: 1.0,
        ended_unix_s: 2.0,
        wall_s: 1.0,
        card_span_us: 10.0,
        per_second_mb_s: rates,
        gaps: Vec::new(),
        end: EndReason::Done,
        end_detail: "every source gave the frames asked for".into(),
        sink: SinkOptions::default(),
        sink_report: xdma_record::sink::SinkReport {
            bytes: frames * len,
            direct: true,
            syncs: 1,
            pushed: frames * len,
            preallocation: None,
            failed: None,
        },
        plot_error: None,
        written_at: None,
    }
}

/// A manifest whose rate is 1.7e308 once sent `plot` spinning for ever, deaf to Ctrl-C: now
/// it is refused at once with the figure named, and a signal ends `plot` in any case.
#[test]
fn plot_refuses_a_manifest_it_cannot_draw_and_stops_on_a_signal() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a folder on the disk");
    let file = dir.path().join("r.bin");
    std::fs::write(&file, frames(0, 3, 1000)).expect("frames");
    xdma_record::record::write_manifest(&file, &manifest(3, 1000, vec![1.0, 1.7e308]))
        .expect("manifest");
    let f = file.to_string_lossy();
    let child = xdma_record(&["plot", &f]).spawn().expect("plot");
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, libc::SIGINT);
    let out = wait_at_most(child, Duration::from_secs(10), "plot of a rate of 1.7e308");
    assert!(!out.status.success(), "{:?}", out.status);
    assert!(
        !xdma_record::plot_path(&file).exists(),
        "no plot, whole or partial"
    );
    // Without a signal, the message names the figure.
    let out = run_at_most(
        &mut xdma_record(&["plot", &f]),
        Duration::from_secs(10),
        "plot",
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("per_second_mb_s[1]") && err.contains("r.bin.json"),
        "{err}"
    );
    // A long recording's plot is bounded: its seconds are drawn in spans.
    let long = manifest(3, 1000, (0..100_000).map(|s| (s % 7) as f64).collect());
    let svg = xdma_record::plot::render(&long).expect("a plot");
    assert!(svg.contains("mean of each 125 s"), "the caption says so");
    assert!(svg.len() < 256 << 10, "{} bytes", svg.len());
}

/// `verify` once said OK for an empty file, took a manifest that does not parse for none, and
/// called a file of zeros a file that "ends inside the frame at byte 0".
#[test]
fn verify_fails_an_empty_file_and_a_broken_manifest_and_names_zeros() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a folder on the disk");
    let run = |file: &Path| {
        let out = run_at_most(
            &mut xdma_record(&["verify", &file.to_string_lossy()]),
            Duration::from_secs(30),
            "verify",
        );
        (out.status.code(), text(&out.stdout))
    };
    let empty = dir.path().join("empty.bin");
    std::fs::write(&empty, b"").expect("write");
    let (code, out) = run(&empty);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("NOT OK") && out.contains("empty"), "{out}");
    assert!(!verify(&empty).expect("verify").ok());

    let broken = dir.path().join("broken.bin");
    std::fs::write(&broken, frames(0, 5, 1000)).expect("write");
    std::fs::write(xdma_record::manifest_path(&broken), "{\"file\": ").expect("write");
    let (code, out) = run(&broken);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("the manifest does not read") && !out.contains("no manifest"),
        "{out}"
    );
    let r = verify(&broken).expect("verify");
    assert!(
        !r.ok() && !r.manifest && r.manifest_problem.is_some(),
        "{r:?}"
    );
    // With a manifest that reads and agrees, the same frames are OK.
    xdma_record::record::write_manifest(&broken, &manifest(5, 1000, vec![0.005]))
        .expect("manifest");
    assert!(verify(&broken).expect("verify").ok());

    let zeros = dir.path().join("zeros.bin");
    std::fs::write(&zeros, vec![0u8; 1 << 16]).expect("write");
    let (code, out) = run(&zeros);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("zeros only") && !out.contains("ends inside the frame"),
        "{out}"
    );
    let r = verify(&zeros).expect("verify");
    assert_eq!((r.zeros_from, r.cut_at), (Some(0), None), "{r:?}");
}

/// `verify` on a FIFO once blocked in open(2) for ever: it is refused at once.
#[test]
fn verify_refuses_a_fifo() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a folder on the disk");
    let fifo = dir.path().join("fifo.bin");
    let c = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).expect("path");
    // SAFETY: mkfifo with a NUL-terminated path that lives across the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let out = run_at_most(
        &mut xdma_record(&["verify", &fifo.to_string_lossy()]),
        Duration::from_secs(10),
        "verify of a FIFO",
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("a FIFO"), "{err}");
}

/// Ctrl-C during a long `verify` ends it at once with 128 + SIGINT; it once went on to the end
/// and said OK.
#[test]
fn a_signal_stops_verify_at_once() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a folder on the disk");
    let file = dir.path().join("big.bin");
    // 128 MiB of whole frames: seconds of checking in a test build.
    let one = frames(0, 64, 65536);
    {
        use std::io::Write;
        let mut f = std::io::BufWriter::new(std::fs::File::create(&file).expect("create"));
        for _ in 0..32 {
            f.write_all(&one).expect("write");
        }
    }
    let child = xdma_record(&["verify", &file.to_string_lossy()])
        .spawn()
        .expect("verify");
    // Once it has read a part of the file, it is checking.
    let io = format!("/proc/{}/io", child.id());
    let started = Instant::now();
    while std::fs::read_to_string(&io)
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("rchar: ")?.parse::<u64>().ok())
        })
        .is_none_or(|n| n < 16 << 20)
    {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "verify read nothing"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    signal(&child, libc::SIGINT);
    let out = wait_at_most(child, Duration::from_secs(2), "verify after SIGINT");
    assert_eq!(
        out.status.code(),
        Some(128 + libc::SIGINT),
        "{}",
        text(&out.stdout)
    );
}

/// Options of the other source once went unheard: `--source ring --channels 2` recorded one
/// channel without a word.
#[test]
fn options_of_the_other_source_are_refused() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a folder on the disk");
    let f = dir.path().join("r.bin");
    let f = f.to_string_lossy();
    for (args, says) in [
        (vec!["--source", "ring", "--channels", "2"], "--channels 2"),
        (
            vec!["--source", "ring", "--queued", "8", "--drop"],
            "--queued, --drop",
        ),
        (vec!["--ring-size", "1M"], "--ring-size"),
    ] {
        let mut all = vec!["record", &f, "--frames", "10"];
        all.extend(args.iter().copied());
        let out = run_at_most(
            &mut xdma_record(&all),
            Duration::from_secs(120),
            &all.join(" "),
        );
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{all:?}: {err}");
        assert!(err.contains(says), "{all:?}: {err}");
        assert!(
            !dir.path().join("r.bin").exists(),
            "{all:?}: nothing recorded"
        );
    }
}

/// A configuration file that does not read is named in the message, which once blamed "the
/// card" without saying which file.
#[test]
fn a_bad_configuration_file_is_named() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a folder on the disk");
    let cfg = dir.path().join("bad.toml");
    std::fs::write(&cfg, "backend = [").expect("write");
    let f = dir.path().join("r.bin");
    let out = run_at_most(
        &mut xdma_record(&[
            "record",
            &f.to_string_lossy(),
            "--config",
            &cfg.to_string_lossy(),
        ]),
        Duration::from_secs(60),
        "record with a bad configuration",
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("bad.toml") && err.contains("TOML"), "{err}");
    assert!(!err.contains("the card"), "{err}");
    assert_eq!(
        err.matches("invalid xdma configuration").count(),
        1,
        "{err}"
    );
}

/// The recorder's sizes take K, M and G and hex, as xdma-bench's do.
#[test]
fn the_recorders_sizes_take_suffixes_and_hex() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a folder on the disk");
    let file = dir.path().join("r.bin");
    let out = run_at_most(
        &mut xdma_record(&[
            "record",
            &file.to_string_lossy(),
            "--frame",
            "4K",
            "--frames",
            "20",
            "--block",
            "0x10000",
            "--depth",
            "8",
            "--json",
        ]),
        Duration::from_secs(300),
        "a recording with sizes in K and hex",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let m = read_manifest(&file).expect("the manifest");
    assert_eq!((m.frame_bytes, m.sink.block, m.frames), (4096, 65536, 20));
    assert!(verify(&file).expect("verify").ok());
}

fn fio_installed() -> bool {
    let ok = Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped: fio is not installed (cargo xtask test installs Debian's package)");
    }
    ok
}

/// The processes whose command line names `needle` (fio's file in a test's folder).
fn processes_naming(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(needle) {
                found.push(cmd);
            }
        }
    }
    found
}

/// Ctrl-C or SIGTERM during `bench-disk` stops it at once with 128 + the signal, fio with it
/// (a SIGTERM reaches this process alone), and removes its files; it once printed a whole
/// result and exited 0.
#[test]
fn a_signal_stops_bench_disk_and_fio_and_removes_their_files() {
    if !fio_installed() {
        return;
    }
    for sig in [libc::SIGINT, libc::SIGTERM] {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a folder on the disk");
        let d = dir.path().to_string_lossy().into_owned();
        let child = xdma_record(&[
            "bench-disk",
            "--dir",
            &d,
            "--size",
            "256M",
            "--rounds",
            "20",
        ])
        .spawn()
        .expect("bench-disk");
        // Into the first fio run (the sink's comes first), so that fio must be stopped too.
        let started = Instant::now();
        while processes_naming(&d).iter().all(|c| !c.contains("fio")) {
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "fio never started"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(100));
        signal(&child, sig);
        let out = wait_at_most(child, Duration::from_secs(10), "bench-disk after a signal");
        assert_eq!(out.status.code(), Some(128 + sig), "{}", text(&out.stderr));
        assert!(
            out.stdout.is_empty(),
            "no result is printed: {}",
            text(&out.stdout)
        );
        assert!(
            text(&out.stderr).contains("stopped by a signal"),
            "{}",
            text(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(processes_naming(&d), Vec::<String>::new(), "fio still runs");
        assert_eq!(
            std::fs::read_dir(dir.path()).expect("folder").count(),
            0,
            "every file removed"
        );
    }
}

/// On a file system without O_DIRECT, `bench-disk` says the benchmark needs it; it once
/// offered `--buffered`, after which fio failed.
#[test]
fn bench_disk_on_a_file_system_without_o_direct_says_it_needs_one() {
    let Some(fs) = Ramfs::mount() else {
        return;
    };
    let out = run_at_most(
        &mut xdma_record(&[
            "bench-disk",
            "--dir",
            &fs.dir.path().to_string_lossy(),
            "--size",
            "1M",
            "--rounds",
            "1",
        ]),
        Duration::from_secs(60),
        "bench-disk on a ramfs",
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("refuses O_DIRECT") && err.contains("disk's file system"),
        "{err}"
    );
    assert!(!err.contains("--buffered"), "{err}");
}

/// A full disk during a stream recording once went unnoticed until the sink's whole queue was
/// used (32 MiB of 1 MiB blocks, minutes of the simulated card's frames), and the manifest
/// then found no room and was left empty. Now the first failed write ends the recording, the
/// manifest is written into the room kept for it beside the file, whole, with the plot.
#[test]
fn a_full_disk_ends_a_stream_recording_at_the_first_failed_write_with_its_manifest_beside() {
    let Some(disk) = Ext4::mount(4) else {
        return;
    };
    let file = disk.path().join("full.bin");
    let plan = StreamPlan {
        frame: 4132,
        // Until the disk is full.
        frames: 0,
        ..StreamPlan::default()
    };
    // fio's defaults: 1 MiB blocks, 32 in flight.
    let opts = SinkOptions::default();
    let m = record(&sim_card(), &plan, &file, opts).expect("a manifest, not an error");
    assert_eq!(m.end, EndReason::DiskFull, "{}", m.end_detail);
    let failed = m.sink_report.failed.clone().expect("the failed write");
    let after = m.sink_report.pushed - failed.offset;
    assert!(
        after <= 2 * opts.block as u64,
        "{after} bytes were taken after the first byte that did not land"
    );
    assert_eq!(m.bytes % 4132, 0, "the file ends at a frame's end");
    let beside = xdma_record::manifest_path(&file);
    assert_eq!(m.written_at.as_deref(), Some(beside.as_path()));
    let read = read_manifest(&file).expect("the manifest reads");
    assert_eq!(read.written_at, None);
    assert_eq!(
        (read.bytes, read.frames, read.end),
        (m.bytes, m.frames, m.end.clone())
    );
    assert!(
        !xdma_record::manifest::part_path(&beside).exists(),
        "the room was used and renamed"
    );
    assert!(
        xdma_record::plot_path(&file).exists(),
        "the plot fits in what the room left: {:?}",
        m.plot_error
    );
    let r = verify(&file).expect("verify");
    assert!(r.ok(), "{r:?}");
    assert_eq!(r.good_frames, m.frames);
}

/// Fills the file system at `dir` up to its last block.
fn fill(dir: &Path) {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::create(dir.join("filler")).expect("filler");
    let (mut at, mut step) = (0i64, 1i64 << 20);
    while step >= 1024 {
        // SAFETY: fallocate on a file this test owns; no memory is passed.
        if unsafe { libc::fallocate(f.as_raw_fd(), 0, at, step) } == 0 {
            at += step;
        } else {
            step /= 2;
        }
    }
}

/// A disk full before the recording starts has no room for the manifest beside the file: it
/// goes to the fallback folder (TMPDIR) and the recorder says where; with no fallback either,
/// the message says so and what the file holds. Nothing empty or partial is left, where a
/// failed write once left an empty manifest.
#[test]
fn a_manifest_with_no_room_beside_goes_elsewhere_or_the_message_says_what_the_file_holds() {
    let Some(disk) = Ext4::mount(4) else {
        return;
    };
    fill(disk.path());
    let file = disk.path().join("full.bin");
    let f = file.to_string_lossy().into_owned();
    let elsewhere = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a folder");
    let args = [
        "record", &f, "--frame", "4132", "--frames", "50", "--block", "64K", "--depth", "8",
    ];
    let beside = xdma_record::manifest_path(&file);
    let nothing_beside = || {
        assert!(!beside.exists(), "no manifest beside");
        assert!(
            !xdma_record::manifest::part_path(&beside).exists(),
            "no room left behind"
        );
    };
    let out = run_at_most(
        xdma_record(&args).env("TMPDIR", elsewhere.path()),
        Duration::from_secs(300),
        "a recording on a full disk",
    );
    let err = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "disk-full is not a success: {err}"
    );
    let moved = elsewhere.path().join("full.bin.json");
    assert!(
        err.contains("no room for the manifest beside the recording")
            && err.contains(&*moved.to_string_lossy()),
        "{err}"
    );
    let m: Manifest = serde_json::from_str(&std::fs::read_to_string(&moved).expect("the manifest"))
        .expect("a manifest");
    assert_eq!(m.end, EndReason::DiskFull, "{}", m.end_detail);
    nothing_beside();

    // A fallback that cannot be a folder (the simulated card creates a missing TMPDIR).
    let not_a_folder = elsewhere.path().join("a-file");
    std::fs::write(&not_a_folder, b"").expect("write");
    let out = run_at_most(
        xdma_record(&args).env("TMPDIR", &not_a_folder),
        Duration::from_secs(300),
        "a recording on a full disk with no fallback",
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no room for the manifest")
            && err.contains("holds 0 bytes")
            && err.contains("disk-full"),
        "{err}"
    );
    nothing_beside();
}

#[test]
fn writes_go_through_registered_buffers_and_land_whole_and_in_order() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a folder on the disk");
    let path = dir.path().join("fixed.bin");
    // Small blocks: five buffers of 4 KiB stay far below any locked-memory limit, so the
    // kernel accepts the registration for any user.
    let opts = SinkOptions {
        block: ALIGN,
        depth: 4,
        ..SinkOptions::default()
    };
    let mut sink = match Sink::create(&path, opts) {
        Ok(s) => s,
        // A folder whose file system refuses O_DIRECT says nothing about the ring.
        Err(xdma_record::RecordError::NoDirectIo { .. }) => return,
        Err(e) => panic!("a sink: {e}"),
    };
    assert!(
        sink.registered_buffers(),
        "the sink's block buffers are registered with its ring"
    );
    // 13.5 blocks in uneven pieces: every buffer is used several times over.
    let data: Vec<u8> = (0..ALIGN * 27 / 2).map(|i| (i * 7 % 253) as u8).collect();
    for piece in data.chunks(1000) {
        assert!(sink.push(piece).expect("a push"));
    }
    let report = sink.finish().expect("the sink closes");
    assert_eq!(report.failed, None);
    assert_eq!(report.bytes, data.len() as u64);
    assert_eq!(std::fs::read(&path).expect("the file"), data);
}
