//! Each stream mode of the register map: LOOP, GEN on one and on two channels, ECHO, CHECK with
//! each error kind, CAPTURE with a wrapping and an overflowing ring; frame lengths from 64 B
//! to 64 KiB; both backpressure policies with the counters reconciled against what the host
//! received. Expected frames come from the plain model (`card_tests::model`) and the frame
//! format's reference (`frame`), never from the card.

use std::time::Duration;

use card_regs::control;
use card_tests::capture::{padded, Ring};
use card_tests::fixture::ok;
use card_tests::model::CardModel;
use card_tests::ops::Fault;
use card_tests::{regs, stream, Fixture, Mode};
use rstest::rstest;
use xdma::{Card, ErrorKind};

/// Opens the card, skipping (with the reason printed) when it lacks `mode`.
fn bench_for(mode: Mode) -> Option<Fixture> {
    let b = Fixture::open();
    match b.caps.lacks_mode(mode) {
        Some(why) => {
            b.skip(&why);
            None
        }
        None => Some(b),
    }
}

/// Writes a register of the table and the model's copy of it.
fn set(b: &Fixture, model: &mut CardModel, name: &str, value: u32) {
    let r = regs::by_name(name);
    ok(name, regs::write(&b.card, r.offset, value));
    model.write_reg(r, value);
}

fn control(b: &Fixture, value: u32) {
    ok("CONTROL", regs::write(&b.card, card_regs::CONTROL, value));
}

fn counter(b: &Fixture, name: &str) -> u64 {
    ok(name, regs::read_named(&b.card, name))
}

/// Lets card time pass without touching the streams: a wait for an interrupt that no source
/// raises (every interrupt is disabled at rest), or register reads on a card without events.
fn idle(b: &Fixture, us: u64) {
    if b.card.info().events > 0 {
        let r = b.card.wait_event(0, Duration::from_micros(us));
        assert!(
            matches!(&r, Err(e) if e.kind() == ErrorKind::Timeout),
            "no interrupt is enabled, yet the wait gave {r:?}"
        );
    } else {
        for _ in 0..us / 2 + 1 {
            ok("ID", b.card.read_reg(0));
        }
    }
}

#[rstest]
#[case::one_byte(1)]
#[case::odd(63)]
#[case::min_frame(64)]
#[case::page_and_one(4097)]
#[case::max_frame(65536)]
fn loop_returns_what_it_was_sent(#[case] len: usize) {
    let Some(b) = bench_for(Mode::Loop) else {
        return;
    };
    let (h2c, c2h) = (b.caps.h2c_stream[0], b.caps.c2h_stream[0]);
    control(&b, Mode::Loop.value());
    for seed in 0..3 {
        let mut data = vec![0u8; len];
        card_tests::pattern(seed, &mut data);
        let back = ok(
            "LOOP",
            b.block_on(stream::send_and_receive(
                &b.card, h2c, &data, c2h, len, &b.waits,
            )),
        );
        if let Some(d) = card_tests::mm::first_difference(&back, &data) {
            panic!("LOOP of {len} bytes: {d}");
        }
    }
}

/// Receives `n` frames from each source, stops them, drains the streams, checks every frame
/// against the model, and reconciles the counters: frames received equal SRC<n>_SENT, and the
/// sequence gaps equal SRC<n>_DROPPED (zero under the stall policy).
fn run_sources(b: &Fixture, model: &mut CardModel, sources: &[usize], n: u32, pause_us: u64) {
    let chans: Vec<usize> = sources
        .iter()
        .map(|&s| match b.caps.source_channel(s) {
            Ok(c) => c,
            Err(why) => panic!("{why}"),
        })
        .collect();
    let enables = sources.iter().fold(0, |a, &s| {
        a | if s == 0 {
            control::CH0_EN_MASK
        } else {
            control::CH1_EN_MASK
        }
    }) as u32;
    control(b, Mode::Gen.value() | enables);
    let mut prev = [None, None];
    let mut received = [0u64; 2];
    for _ in 0..n {
        for (&s, &ch) in sources.iter().zip(&chans) {
            let len = model.source_settings(s).len;
            let f = ok("a frame", stream::recv_frame(&b.card, ch, len, &b.waits));
            if let Err(e) = model.check_periodic(s, &f, &mut prev[s]) {
                panic!("{e}");
            }
            received[s] += 1;
        }
        if pause_us > 0 {
            idle(b, pause_us);
        }
    }
    control(b, Mode::Gen.value());
    for (&s, &ch) in sources.iter().zip(&chans) {
        let len = model.source_settings(s).len;
        let p = &mut prev[s];
        let m = &mut *model;
        let more = stream::drain(&b.card, ch, len, &b.waits, |f| m.check_periodic(s, &f, p))
            .unwrap_or_else(|e| panic!("{e}"));
        received[s] += more;
        let sent = counter(b, &format!("SRC{s}_SENT"));
        let dropped = counter(b, &format!("SRC{s}_DROPPED"));
        assert_eq!(
            sent, received[s],
            "source {s}: SRC{s}_SENT against the frames the host received"
        );
        // Frames dropped after the last one received show in the counter only; the gaps the
        // host saw are a lower bound.
        assert!(
            dropped >= model.src[s].dropped,
            "source {s}: SRC{s}_DROPPED {dropped}, the sequence numbers show {} missing",
            model.src[s].dropped
        );
        let last_seq = model.src[s].seq;
        assert!(
            u64::from(last_seq) <= sent + dropped,
            "source {s}: next sequence {last_seq}, but only {sent} sent and {dropped} dropped"
        );
        if !model.source_settings(s).drop {
            assert_eq!(dropped, 0, "source {s}: drops under the stall policy");
            assert_eq!(u64::from(last_seq), sent, "source {s}: lossless sequence");
        }
    }
}

#[rstest]
#[case::shortest(64)]
#[case::odd(100)]
#[case::page(4096)]
#[case::longest(65536)]
fn gen_one_channel_every_length(#[case] len: u32) {
    let Some(b) = bench_for(Mode::Gen) else {
        return;
    };
    let mut model = CardModel::new(b.caps.memory_size);
    set(&b, &mut model, "SRC0_FRAME_LEN", len);
    set(
        &b,
        &mut model,
        "SRC0_PATTERN",
        u32::from(len.is_multiple_of(2)),
    );
    set(&b, &mut model, "SRC0_SEED", 0x1234_5678 ^ len);
    let n = if len > 8192 { 3 } else { 12 };
    run_sources(&b, &mut model, &[0], n, 0);
}

#[test]
fn gen_on_two_channels_at_once() {
    let Some(b) = bench_for(Mode::Gen) else {
        return;
    };
    if let Err(why) = b.caps.source_channel(1) {
        return b.skip(&why);
    }
    let mut model = CardModel::new(b.caps.memory_size);
    set(&b, &mut model, "SRC0_FRAME_LEN", 256);
    set(&b, &mut model, "SRC1_FRAME_LEN", 1000);
    set(&b, &mut model, "SRC1_PATTERN", 1);
    set(&b, &mut model, "SRC1_GAP", 50);
    run_sources(&b, &mut model, &[0, 1], 10, 0);
}

#[rstest]
#[case::stall(false)]
#[case::drop(true)]
fn backpressure_policy_counters_reconcile(#[case] drop: bool) {
    let Some(b) = bench_for(Mode::Gen) else {
        return;
    };
    let mut model = CardModel::new(b.caps.memory_size);
    set(&b, &mut model, "SRC0_FRAME_LEN", 64);
    set(&b, &mut model, "SRC0_POLICY", u32::from(drop));
    // The host takes a frame, then looks away for a while: the source, which could send a
    // frame every few cycles, meets backpressure and stalls or drops.
    run_sources(&b, &mut model, &[0], 20, 200);
    let dropped = counter(&b, "SRC0_DROPPED");
    if drop {
        assert!(
            dropped > 0,
            "the host stopped taking frames for 200 us at a time, yet nothing was dropped"
        );
        assert!(model.src[0].dropped > 0, "no gap in the sequence numbers");
    } else {
        assert_eq!(dropped, 0);
    }
}

#[test]
fn echo_answers_each_request_with_its_sequence() {
    let Some(b) = bench_for(Mode::Echo) else {
        return;
    };
    let (h2c, c2h) = (b.caps.h2c_stream[0], b.caps.c2h_stream[0]);
    let mut model = CardModel::new(b.caps.memory_size);
    set(&b, &mut model, "SRC0_FRAME_LEN", 200);
    set(&b, &mut model, "SRC0_PATTERN", 1);
    control(&b, Mode::Echo.value());
    for (i, seq) in [0u32, 1, 7, 0xffff_fffe, 0xffff_ffff, 3]
        .into_iter()
        .enumerate()
    {
        let req = Fault::None.frame(seq, 64 + 100 * i);
        ok("ECHO request", stream::send(&b.card, h2c, &req));
        model.chk.observe(&req);
        let back = ok(
            "ECHO answer",
            stream::recv_frame(&b.card, c2h, 200, &b.waits),
        );
        if let Err(e) = model.check_echo(seq, &back) {
            panic!("{e}");
        }
    }
    assert_eq!(counter(&b, "SRC0_SENT"), model.src[0].sent);
    assert_eq!(counter(&b, "CHK_GOOD"), model.chk.good());
}

#[rstest]
#[case::magic(Fault::Magic)]
#[case::version(Fault::Version)]
#[case::length(Fault::Length)]
#[case::short(Fault::Short)]
#[case::crc(Fault::Crc)]
fn check_counts_each_error_kind(#[case] fault: Fault) {
    let Some(b) = bench_for(Mode::Check) else {
        return;
    };
    let h2c = b.caps.h2c_stream[0];
    let mut model = CardModel::new(b.caps.memory_size);
    control(&b, Mode::Check.value());
    // Good frames around two bad ones, and a gap in the sequence after them.
    let frames = [
        Fault::None.frame(0, 64),
        Fault::None.frame(1, 300),
        fault.frame(2, 300),
        fault.frame(3, 1000),
        Fault::None.frame(4, 128),
        Fault::None.frame(9, 4096),
    ];
    for f in &frames {
        ok("CHECK frame", stream::send(&b.card, h2c, f));
        model.chk.observe(f);
    }
    for r in CardModel::counters().filter(|r| r.name.starts_with("CHK_")) {
        let v = ok(r.name, regs::read(&b.card, r));
        if let Err(e) = model.expected(r).check(r.name, v) {
            panic!("after {fault:?} frames: {e}");
        }
    }
    assert_eq!(model.chk.bad(), 2, "the model sees both bad frames");
    assert_eq!(counter(&b, "CHK_LAST_SEQ"), 9);
}

/// CAPTURE into a ring whose size is no multiple of the padded frame, so frames wrap around
/// its end; the host reads as frames come, and every frame is whole and in order.
#[test]
fn capture_ring_wraps_and_keeps_every_frame() {
    let Some(b) = bench_for(Mode::Capture) else {
        return;
    };
    let (_, c2h) = b.caps.mm().unwrap_or_else(|e| panic!("{e}"));
    let mut model = CardModel::new(b.caps.memory_size);
    let ring = Ring {
        base: 0x40_0000,
        size: 16 << 10,
    };
    ok("ring", ring.set_up(&b.card, 0));
    let len = 1000u32;
    set(&b, &mut model, "SRC0_FRAME_LEN", len);
    set(&b, &mut model, "SRC0_GAP", 2000);
    control(&b, Mode::Capture.value() | control::CH0_EN_MASK as u32);
    let mut got = Vec::new();
    let mut wrapped = false;
    let mut last_rptr = 0;
    let mut rounds = 0;
    while got.len() < 60 {
        rounds += 1;
        assert!(
            rounds < 10_000,
            "only {} frames after {rounds} reads",
            got.len()
        );
        got.extend(ok("ring", ring.take(&b.card, c2h)));
        let rptr = ok("CAP_RPTR", regs::read_named(&b.card, "CAP_RPTR"));
        wrapped |= rptr < last_rptr;
        last_rptr = rptr;
    }
    control(&b, Mode::Capture.value());
    idle(&b, 100);
    got.extend(ok("ring", ring.take(&b.card, c2h)));
    assert!(wrapped, "the read pointer never went round the ring");
    // The source stalls and drops nothing; the ring drops a new frame it has no room for,
    // which happens only when the host reads slower than the card fills the ring (a guest on
    // a busy machine can), and then the sequence shows the gap CAP_OVERFLOW counts.
    let mut prev = None;
    let mut lost = 0;
    for f in &got {
        match model.check_captured(0, f, &mut prev) {
            Ok(n) => lost += n,
            Err(e) => panic!("{e}"),
        }
    }
    let frames = counter(&b, "CAP_FRAMES");
    let overflow = counter(&b, "CAP_OVERFLOW");
    assert_eq!(frames, got.len() as u64, "CAP_FRAMES against frames read");
    assert_eq!(model.src[0].dropped, 0, "the stall policy drops nothing");
    // Frames dropped after the last one read leave no gap behind them, so the gaps are a
    // lower bound; SENT accounts for every frame.
    assert!(
        lost <= overflow,
        "the sequence gaps ({lost} frames) against CAP_OVERFLOW ({overflow})"
    );
    assert_eq!(counter(&b, "SRC0_SENT"), frames + overflow);
    assert_eq!(counter(&b, "CAP_FILL"), 0, "the ring is empty");
}

/// CAPTURE with nobody reading: the ring fills with whole frames, then drops new ones and
/// counts them; the frames kept are the first ones.
#[test]
fn capture_overflow_drops_new_frames_and_counts_them() {
    let Some(b) = bench_for(Mode::Capture) else {
        return;
    };
    let (_, c2h) = b.caps.mm().unwrap_or_else(|e| panic!("{e}"));
    let ring = Ring {
        base: 0x80_0000,
        size: 4096,
    };
    ok("ring", ring.set_up(&b.card, 0));
    let len = 1000usize;
    ok(
        "length",
        regs::write(&b.card, card_regs::SRC0_FRAME_LEN, len as u32),
    );
    // The ring is never completely full: floor((size - 1) / padded frame) frames fit.
    let fit = (ring.size as usize - 1) / padded(len);
    control(&b, Mode::Capture.value() | control::CH0_EN_MASK as u32);
    let mut rounds = 0;
    while counter(&b, "CAP_OVERFLOW") < 5 {
        rounds += 1;
        assert!(rounds < 10_000, "the ring never overflowed");
        idle(&b, 20);
    }
    control(&b, Mode::Capture.value());
    idle(&b, 100);
    assert_eq!(counter(&b, "CAP_FRAMES"), fit as u64);
    assert_eq!(counter(&b, "CAP_FILL"), (fit * padded(len)) as u64);
    let status = ok("IRQ_STATUS", regs::read_named(&b.card, "IRQ_STATUS"));
    assert_ne!(
        status & card_regs::irq_status::CAP_OVERFLOW_MASK,
        0,
        "IRQ_STATUS.CAP_OVERFLOW"
    );
    let frames = ok("ring", ring.take(&b.card, c2h));
    let seqs: Vec<u32> = frames
        .iter()
        .map(|f| {
            ok(
                "frame",
                frame::parse(f).map_err(|e| xdma::Error::Backend(e.to_string())),
            )
            .header
            .sequence
        })
        .collect();
    assert_eq!(
        seqs,
        (0..fit as u32).collect::<Vec<_>>(),
        "drop-new keeps the oldest"
    );
    let overflow = counter(&b, "CAP_OVERFLOW");
    assert_eq!(counter(&b, "SRC0_SENT"), fit as u64 + overflow);
}
