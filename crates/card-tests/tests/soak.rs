//! The soak test, run only with `CARD_SOAK=1`: a million frames through each stream mode
//! (LOOP, GEN, ECHO, CHECK, CAPTURE) at the shortest frame length, 64 bytes, and 1 GiB through
//! memory-mapped writes read back; zero loss, and the card's counters equal to the host's
//! counts. A progress bar per phase, and a summary line at the end.
//!
//! A call costs the driver's phases (about 20 us each on a board, and on the simulated card
//! unless `[sim] timing.host` is zero, as in the suite's configuration), so the frames travel
//! in queued calls: up to [`QUEUE`] async calls are submitted at once on one channel and taken
//! in order, and the CAPTURE ring is read in large blocks. `CARD_SOAK_FRAMES` and
//! `CARD_SOAK_MM_BYTES` scale it down (for a trial run) or up, and `CARD_SOAK_MODES` (a comma
//! list of LOOP, GEN, ECHO, CHECK, CAPTURE, MM) runs some phases only.
//!
//! The `campaign_soak_*` tests run one phase each on a card of their own, so that
//! cargo-nextest can spread the phases over shards (`cargo xtask campaign --which soak`); they
//! too run only with `CARD_SOAK=1`, sized by the same variables.

use std::time::{Duration, Instant};

use card_tests::capture::Ring;
use card_tests::fixture::{ok, record_skip, test_name};
use card_tests::model::CardModel;
use card_tests::ops::Fault;
use card_tests::{mm, pattern, regs, Fixture, Mode};
use indicatif::{ProgressBar, ProgressStyle};
use xdma::{AsyncCard, Card, DmaBuffer, Xdma};

/// Async calls in flight on one channel.
const QUEUE: usize = 64;
/// The frame length of every stream phase: the format's shortest.
const LEN: usize = frame::MIN_FRAME_LEN;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().replace('_', "").parse().ok())
        .unwrap_or(default)
}

fn bar(what: &str, len: u64) -> ProgressBar {
    let b = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template(
        "{prefix:>8} [{elapsed_precise}] {wide_bar} {pos}/{len} ({per_sec}, {eta} left)",
    ) {
        b.set_style(style);
    }
    b.set_prefix(what.to_string());
    b
}

fn counter(card: &Xdma, name: &str) -> u64 {
    ok(name, regs::read_named(card, name))
}

/// One phase's figures for the summary.
struct Phase {
    name: &'static str,
    frames: u64,
    secs: f64,
}

/// Receives `n` frames of `LEN` bytes on `ch` in queued calls, handing each to `each`.
fn receive_queued(b: &Fixture, ch: usize, n: u64, pb: &ProgressBar, mut each: impl FnMut(&[u8])) {
    let card = &b.card;
    let wait = b.waits.data();
    let mut left = n;
    b.block_on(async {
        while left > 0 {
            let k = left.min(QUEUE as u64) as usize;
            let calls: Vec<_> = (0..k)
                .map(|_| {
                    let buf = DmaBuffer::new(LEN).expect("buffer");
                    card.recv_stream_async(ch, buf, wait)
                })
                .collect();
            for c in calls {
                let (r, buf) = c.await;
                let t = ok("a frame", r);
                assert_eq!(t.bytes, LEN, "a short frame");
                each(&buf);
            }
            left -= k as u64;
            pb.inc(k as u64);
        }
    });
}

/// Sends `frames` in queued calls on `ch`.
async fn send_queued(card: &Xdma, ch: usize, frames: Vec<DmaBuffer>) {
    let calls: Vec<_> = frames
        .into_iter()
        .map(|f| card.send_stream_async(ch, f))
        .collect();
    for c in calls {
        ok("a send", c.await.0);
    }
}

fn gen(b: &Fixture, n: u64) -> Phase {
    let started = Instant::now();
    let ch = b.caps.source_channel(0).unwrap_or_else(|e| panic!("{e}"));
    let mut model = CardModel::new(b.caps.memory_size);
    let len_reg = regs::by_name("SRC0_FRAME_LEN");
    ok("len", regs::write(&b.card, len_reg.offset, LEN as u32));
    model.write_reg(len_reg, LEN as u32);
    ok("CONTROL", regs::start(&b.card, Mode::Gen));
    let pb = bar("GEN", n);
    let mut prev = None;
    receive_queued(b, ch, n, &pb, |f| {
        if let Err(e) = model.check_periodic(0, f, &mut prev) {
            panic!("{e}");
        }
    });
    ok(
        "CONTROL",
        regs::write(&b.card, card_regs::CONTROL, Mode::Gen.value()),
    );
    let more = card_tests::stream::drain(&b.card, ch, LEN, &b.waits, |f| {
        model.check_periodic(0, &f, &mut prev)
    })
    .unwrap_or_else(|e| panic!("{e}"));
    pb.finish();
    assert_eq!(
        counter(&b.card, "SRC0_SENT"),
        n + more,
        "SRC0_SENT against frames received"
    );
    assert_eq!(counter(&b.card, "SRC0_DROPPED"), 0, "nothing dropped");
    assert_eq!(
        u64::from(model.src[0].seq),
        n + more,
        "every sequence number, in order"
    );
    Phase {
        name: "GEN",
        frames: n + more,
        secs: started.elapsed().as_secs_f64(),
    }
}

fn check(b: &Fixture, n: u64) -> Phase {
    let started = Instant::now();
    let ch = b.caps.h2c_stream[0];
    ok(
        "CONTROL",
        regs::write(&b.card, card_regs::CONTROL, Mode::Check.value()),
    );
    let pb = bar("CHECK", n);
    let mut seq = 0u64;
    while seq < n {
        let k = (n - seq).min(QUEUE as u64);
        let frames: Vec<DmaBuffer> = (seq..seq + k)
            .map(|s| {
                ok(
                    "frame",
                    DmaBuffer::from_slice(&Fault::None.frame(s as u32, LEN)),
                )
            })
            .collect();
        b.block_on(send_queued(&b.card, ch, frames));
        seq += k;
        pb.inc(k);
    }
    pb.finish();
    assert_eq!(
        counter(&b.card, "CHK_GOOD"),
        n,
        "CHK_GOOD against frames sent"
    );
    assert_eq!(counter(&b.card, "CHK_BAD"), 0);
    assert_eq!(counter(&b.card, "CHK_MISSING"), 0);
    Phase {
        name: "CHECK",
        frames: n,
        secs: started.elapsed().as_secs_f64(),
    }
}

/// LOOP and ECHO: frames sent on H2C0 while their results are received on C2H0, in queued
/// calls; `answer` checks the i-th result against the i-th frame sent.
fn round_trip(b: &Fixture, mode: Mode, n: u64, mut answer: impl FnMut(u64, &[u8], &[u8])) -> Phase {
    let started = Instant::now();
    let (tx, rx) = (b.caps.h2c_stream[0], b.caps.c2h_stream[0]);
    ok(
        "len",
        regs::write(&b.card, card_regs::SRC0_FRAME_LEN, LEN as u32),
    );
    ok(
        "CONTROL",
        regs::write(&b.card, card_regs::CONTROL, mode.value()),
    );
    let pb = bar(mode.name(), n);
    let wait = b.waits.data();
    let mut done = 0u64;
    while done < n {
        let k = (n - done).min(QUEUE as u64) as usize;
        let sent: Vec<Vec<u8>> = (0..k as u64)
            .map(|i| {
                let s = done + i;
                if mode == Mode::Loop {
                    let mut d = vec![0u8; LEN];
                    pattern(s as u32, &mut d);
                    d
                } else {
                    Fault::None.frame(s as u32, LEN)
                }
            })
            .collect();
        let card = &b.card;
        let got: Vec<Vec<u8>> = b.block_on(async {
            let recvs: Vec<_> = (0..k)
                .map(|_| card.recv_stream_async(rx, DmaBuffer::new(LEN).expect("buffer"), wait))
                .collect();
            let bufs = sent
                .iter()
                .map(|s| ok("frame", DmaBuffer::from_slice(s)))
                .collect();
            let tx_all = send_queued(card, tx, bufs);
            let rx_all = async {
                let mut out = Vec::with_capacity(k);
                for r in recvs {
                    let (t, buf) = r.await;
                    assert_eq!(ok("a result", t).bytes, LEN);
                    out.push(buf.to_vec());
                }
                out
            };
            tokio::join!(tx_all, rx_all).1
        });
        for (i, (s, g)) in sent.iter().zip(&got).enumerate() {
            answer(done + i as u64, s, g);
        }
        done += k as u64;
        pb.inc(k as u64);
    }
    pb.finish();
    Phase {
        name: mode.name(),
        frames: n,
        secs: started.elapsed().as_secs_f64(),
    }
}

fn capture(b: &Fixture, n: u64) -> Phase {
    let started = Instant::now();
    let (_, c2h) = b.caps.mm().unwrap_or_else(|e| panic!("{e}"));
    let mut model = CardModel::new(b.caps.memory_size);
    let len_reg = regs::by_name("SRC0_FRAME_LEN");
    ok("len", regs::write(&b.card, len_reg.offset, LEN as u32));
    model.write_reg(len_reg, LEN as u32);
    // A ring of 64 MiB holds a million 64-byte frames; the host reads it as it fills, in
    // blocks of whatever has arrived.
    let ring = Ring {
        base: 256 << 20,
        size: 64 << 20,
    };
    ok("ring", ring.set_up(&b.card, 0));
    ok("CONTROL", regs::start(&b.card, Mode::Capture));
    let pb = bar("CAPTURE", n);
    let mut prev = None;
    let mut taken = 0u64;
    let mut stopped = false;
    let deadline = Instant::now() + Duration::from_secs(3 * 3600);
    loop {
        let frames = ok("ring", ring.take(&b.card, c2h));
        for f in &frames {
            if let Err(e) = model.check_periodic(0, f, &mut prev) {
                panic!("{e}");
            }
        }
        taken += frames.len() as u64;
        pb.set_position(taken.min(n));
        if !stopped && counter(&b.card, "CAP_FRAMES") >= n {
            ok(
                "CONTROL",
                regs::write(&b.card, card_regs::CONTROL, Mode::Capture.value()),
            );
            stopped = true;
        } else if stopped && frames.is_empty() && counter(&b.card, "CAP_FRAMES") == taken {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "capture: {taken} frames after 3 hours"
        );
    }
    pb.finish();
    assert_eq!(
        counter(&b.card, "CAP_FRAMES"),
        taken,
        "CAP_FRAMES against frames read"
    );
    assert_eq!(
        counter(&b.card, "CAP_OVERFLOW"),
        0,
        "nothing lost to a full ring"
    );
    assert_eq!(counter(&b.card, "SRC0_SENT"), taken);
    assert_eq!(
        u64::from(model.src[0].seq),
        taken,
        "every sequence number, in order"
    );
    Phase {
        name: "CAPTURE",
        frames: taken,
        secs: started.elapsed().as_secs_f64(),
    }
}

/// 1 GiB (or `bytes`) written in 8 MiB blocks over 512 MiB of card memory and each block read
/// back and compared.
fn memory(b: &Fixture, bytes: u64) -> (u64, f64) {
    let started = Instant::now();
    let (h2c, c2h) = b.caps.mm().unwrap_or_else(|e| panic!("{e}"));
    let block = 8usize << 20;
    let span = (512u64 << 20).min(b.caps.memory_size / 2);
    let blocks = bytes.div_ceil(block as u64);
    let pb = bar("MM", blocks * block as u64);
    let mut data = vec![0u8; block];
    for i in 0..blocks {
        pattern(i as u32 ^ 0x50a6, &mut data);
        let addr = (i * block as u64) % span;
        ok("write", mm::write(&b.card, h2c, addr, &data));
        let back = ok("read", mm::read(&b.card, c2h, addr, block));
        if let Some(d) = mm::first_difference(&back, &data) {
            panic!("block {i} at {addr:#x}: {d}");
        }
        pb.inc(block as u64);
    }
    pb.finish();
    (blocks * block as u64, started.elapsed().as_secs_f64())
}

/// What a soak run did: its phases, the memory-mapped bytes moved and the phases the card
/// lacks.
struct Soaked {
    phases: Vec<Phase>,
    mm_bytes: u64,
    mm_secs: f64,
    skipped: Vec<Mode>,
    backend: String,
    secs: f64,
}

/// The soak's phases whose names `wanted` accepts (LOOP, GEN, ECHO, CHECK, CAPTURE, MM), in
/// that order on one card, or None (after a printed skip) without `CARD_SOAK=1` or on a card
/// without the register map.
fn run_soak(wanted: &dyn Fn(&str) -> bool) -> Option<Soaked> {
    if std::env::var("CARD_SOAK").ok().as_deref() != Some("1") {
        record_skip(
            &test_name(),
            "the soak test runs only with CARD_SOAK=1 (a million frames per stream mode and 1 GiB memory-mapped; see the crate's README section)",
        );
        return None;
    }
    let n = env_u64("CARD_SOAK_FRAMES", 1_000_000);
    let mm_bytes = env_u64("CARD_SOAK_MM_BYTES", 1 << 30);
    let started = Instant::now();
    let b = Fixture::open();
    if let Some(why) = b.caps.lacks_registers() {
        b.skip(&why);
        return None;
    }
    let mut phases = Vec::new();
    let mut skipped = Vec::new();
    for mode in [
        Mode::Loop,
        Mode::Gen,
        Mode::Echo,
        Mode::Check,
        Mode::Capture,
    ] {
        if !wanted(mode.name()) {
            eprintln!("soak: no {mode} phase: not asked for");
            continue;
        }
        if let Some(why) = b.caps.lacks_mode(mode) {
            eprintln!("soak: no {mode} phase: {why}");
            skipped.push(mode);
            continue;
        }
        ok("rest", regs::restore(&b.card));
        let p = match mode {
            Mode::Loop => round_trip(&b, mode, n, |i, s, g| {
                if let Some(d) = mm::first_difference(g, s) {
                    panic!("LOOP frame {i}: {d}");
                }
            }),
            Mode::Echo => {
                let mut model = CardModel::new(b.caps.memory_size);
                model.write_reg(regs::by_name("SRC0_FRAME_LEN"), LEN as u32);
                let p = round_trip(&b, mode, n, |i, _, g| {
                    if let Err(e) = model.check_echo(i as u32, g) {
                        panic!("ECHO answer {i}: {e}");
                    }
                });
                assert_eq!(counter(&b.card, "SRC0_SENT"), n, "answers sent");
                assert_eq!(counter(&b.card, "CHK_GOOD"), n, "requests checked");
                p
            }
            Mode::Gen => gen(&b, n),
            Mode::Check => check(&b, n),
            _ => capture(&b, n),
        };
        phases.push(p);
    }
    ok("rest", regs::restore(&b.card));
    let (moved, mm_s) = match b.caps.mm() {
        Ok(_) if wanted("MM") => memory(&b, mm_bytes),
        Ok(_) => {
            eprintln!("soak: no memory-mapped phase: not asked for");
            (0, 0.0)
        }
        Err(why) => {
            eprintln!("soak: no memory-mapped phase: {why}");
            (0, 0.0)
        }
    };
    let soaked = Soaked {
        phases,
        mm_bytes: moved,
        mm_secs: mm_s,
        skipped,
        backend: b.card.info().backend.to_string(),
        secs: started.elapsed().as_secs_f64(),
    };
    let per: Vec<String> = soaked
        .phases
        .iter()
        .map(|p| format!("{} {} frames in {:.0} s", p.name, p.frames, p.secs))
        .collect();
    eprintln!(
        "soak summary ({} backend): {}; MM {} MiB written and read back in {:.0} s; zero loss, card counters equal to host counts; {:.0} s in all{}",
        soaked.backend,
        per.join(", "),
        soaked.mm_bytes >> 20,
        soaked.mm_secs,
        soaked.secs,
        if soaked.skipped.is_empty() {
            String::new()
        } else {
            format!("; no {:?} on this card", soaked.skipped)
        }
    );
    Some(soaked)
}

/// The whole soak, its phases in sequence on one card. `CARD_SOAK_MODES=GEN,CAPTURE` (say)
/// runs only those phases; MM stands for the memory-mapped one. Default: all.
#[test]
fn soak() {
    let only = std::env::var("CARD_SOAK_MODES")
        .ok()
        .filter(|v| !v.trim().is_empty());
    run_soak(&|name| {
        only.as_deref()
            .is_none_or(|v| v.split(',').any(|m| m.trim().eq_ignore_ascii_case(name)))
    });
}

/// One phase of the soak on a card of its own, for a campaign that spreads the phases over
/// shards (`cargo xtask campaign --which soak`); with `CAMPAIGN_OUT` set, its summary goes to
/// `<CAMPAIGN_OUT>/<test>.json` as well.
fn soak_phase(phase: &str) {
    let test = test_name();
    let Some(s) = run_soak(&|name| name.eq_ignore_ascii_case(phase)) else {
        return;
    };
    let Some(out) = std::env::var_os(campaign::OUT_ENV).filter(|o| !o.is_empty()) else {
        return;
    };
    let frames: u64 = s.phases.iter().map(|p| p.frames).sum();
    let secs: f64 = s.phases.iter().map(|p| p.secs).sum::<f64>() + s.mm_secs;
    let record = campaign::Record::Soak(campaign::SoakPhase {
        test,
        phase: phase.to_string(),
        backend: s.backend,
        frames,
        mm_bytes: s.mm_bytes,
        lacking: s.skipped.iter().map(|m| m.name().to_string()).collect(),
        secs,
    });
    campaign::write_record(std::path::Path::new(&out), &record).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn campaign_soak_loop() {
    soak_phase("LOOP");
}

#[test]
fn campaign_soak_gen() {
    soak_phase("GEN");
}

#[test]
fn campaign_soak_echo() {
    soak_phase("ECHO");
}

#[test]
fn campaign_soak_check() {
    soak_phase("CHECK");
}

#[test]
fn campaign_soak_capture() {
    soak_phase("CAPTURE");
}

#[test]
fn campaign_soak_mm() {
    soak_phase("MM");
}
