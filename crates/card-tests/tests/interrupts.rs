//! Interrupts: the CAPTURE fill level raises the user interrupt and ends a wait; a wait with
//! nothing to end it times out; once an interrupt has been taken and its status cleared, no
//! stale one ends the next wait.

use std::time::{Duration, Instant};

use card_regs::{control, irq_enable, irq_status};
use card_tests::capture::Ring;
use card_tests::fixture::ok;
use card_tests::{regs, Fixture, Mode};
use xdma::{Card, ErrorKind};

/// Opens the card, skipping when it has no event or no CAPTURE mode.
fn fixture() -> Option<Fixture> {
    let b = Fixture::open();
    if b.card.info().events == 0 {
        b.skip("the card has no user interrupt event");
        return None;
    }
    if let Some(why) = b.caps.lacks_mode(Mode::Capture) {
        b.skip(&why);
        return None;
    }
    Some(b)
}

/// Sets up `ring` with fill level `level`, frames of `len` bytes from source 0, and the fill
/// level's interrupt enabled; capture itself is left off.
fn arm_fill_event(b: &Fixture, ring: &Ring, level: u32, len: u32) {
    ok("ring", ring.set_up(&b.card, level));
    ok(
        "length",
        regs::write(&b.card, card_regs::SRC0_FRAME_LEN, len),
    );
    ok(
        "IRQ_ENABLE",
        regs::write(
            &b.card,
            card_regs::IRQ_ENABLE,
            irq_enable::CAP_FILL_MASK as u32,
        ),
    );
}

fn status(b: &Fixture) -> u64 {
    ok("IRQ_STATUS", regs::read_named(&b.card, "IRQ_STATUS"))
}

fn expect_timeout(b: &Fixture, wait: Duration, why: &str) {
    match b.card.wait_event(0, wait) {
        Err(e) if e.kind() == ErrorKind::Timeout => {}
        other => panic!("{why}: the wait gave {other:?}"),
    }
}

#[test]
fn the_capture_fill_level_raises_an_event() {
    let Some(b) = fixture() else { return };
    let ring = Ring {
        base: 0x60_0000,
        size: 64 << 10,
    };
    let level = 8192u32;
    ok("gap", regs::write(&b.card, card_regs::SRC0_GAP, 100));
    arm_fill_event(&b, &ring, level, 1024);
    // Nothing has been captured: no interrupt yet.
    expect_timeout(&b, Duration::from_micros(50), "before capture");
    assert_eq!(status(&b), 0);
    ok("CONTROL", regs::start(&b.card, Mode::Capture));
    let v = ok(
        "the fill interrupt",
        b.card
            .wait_event(0, b.waits.data().max(Duration::from_secs(2))),
    );
    assert!(v >= 1, "the event value counts interrupts: {v}");
    ok(
        "CONTROL",
        regs::write(&b.card, card_regs::CONTROL, Mode::Capture.value()),
    );
    let fill = ok("CAP_FILL", regs::read_named(&b.card, "CAP_FILL"));
    assert!(
        fill >= u64::from(level),
        "the interrupt came with CAP_FILL {fill}, below the level {level}"
    );
    assert_ne!(
        status(&b) & irq_status::CAP_FILL_MASK,
        0,
        "IRQ_STATUS.CAP_FILL"
    );
    // Taken and cleared: the next wait finds nothing (the fill is still above the level, but
    // the status bit is an edge, set again only after the fill drops below and rises).
    ok(
        "clear",
        regs::write(
            &b.card,
            card_regs::IRQ_STATUS,
            irq_status::CAP_FILL_MASK as u32,
        ),
    );
    assert_eq!(status(&b) & irq_status::CAP_FILL_MASK, 0);
    expect_timeout(
        &b,
        Duration::from_millis(5),
        "after the interrupt was taken",
    );
}

#[test]
fn an_event_wait_times_out_within_its_timeout() {
    let b = Fixture::open();
    if b.card.info().events == 0 {
        return b.skip("the card has no user interrupt event");
    }
    for us in [10u64, 100, 1000] {
        let wait = Duration::from_micros(us);
        let started = Instant::now();
        expect_timeout(&b, wait, "no interrupt is enabled");
        // The wait returns: wall time is bounded loosely (a simulated wait is simulated time,
        // which a loaded host may take longer to run).
        assert!(
            started.elapsed() < wait + Duration::from_secs(60),
            "a {us} us wait took {:?}",
            started.elapsed()
        );
    }
}

#[test]
fn no_stale_event_after_an_interrupt_is_taken() {
    let Some(b) = fixture() else { return };
    let ring = Ring {
        base: 0x70_0000,
        size: 16 << 10,
    };
    arm_fill_event(&b, &ring, 2048, 512);
    let run = |on: bool| {
        let v = Mode::Capture.value() | if on { control::CH0_EN_MASK as u32 } else { 0 };
        ok("CONTROL", regs::write(&b.card, card_regs::CONTROL, v));
    };
    let (_, c2h) = b.caps.mm().unwrap_or_else(|e| panic!("{e}"));
    for round in 0..3 {
        run(true);
        let v = ok("interrupt", b.card.wait_event(0, b.waits.data()));
        assert!(v >= 1, "round {round}: event value {v}");
        run(false);
        // Empty the ring (the fill drops below the level, re-arming the edge) and clear.
        std::thread::sleep(Duration::from_millis(1));
        ok("ring", ring.take(&b.card, c2h));
        ok("ring", ring.take(&b.card, c2h));
        ok(
            "clear",
            regs::write(&b.card, card_regs::IRQ_STATUS, irq_status::MASK as u32),
        );
        expect_timeout(
            &b,
            Duration::from_millis(2),
            &format!("round {round}: after the interrupt was taken and cleared"),
        );
    }
}
