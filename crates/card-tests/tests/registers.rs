//! The register map on the card: identifier, scratch, and every register of the table
//! (`hdl/regs.toml` through `card-regs`, not retyped here) with its reset value and its
//! access type.

use card_regs::{Access, Register, REGISTERS};
use card_tests::fixture::ok;
use card_tests::{regs, Fixture};
use xdma::Card;

/// Opens the card and skips when its registers are not the table's.
fn fixture() -> Option<Fixture> {
    let b = Fixture::open();
    match b.caps.lacks_registers() {
        Some(why) => {
            b.skip(&why);
            None
        }
        None => Some(b),
    }
}

#[test]
fn identifier_and_version_are_the_tables() {
    let Some(b) = fixture() else { return };
    let id = ok("ID", regs::read_named(&b.card, "ID"));
    assert_eq!(id, card_regs::id::RESET);
    assert_eq!(
        &(id as u32).to_be_bytes(),
        b"DAQ1",
        "the map's ASCII identifier"
    );
    let v = ok("VERSION", regs::read_named(&b.card, "VERSION"));
    assert_eq!(v, card_regs::version::RESET);
    // Discovery read the same words.
    assert_eq!(u64::from(b.card.info().card_id), id);
    assert_eq!(u64::from(b.card.info().card_version), v);
}

#[test]
fn scratch_keeps_every_bit() {
    let Some(b) = fixture() else { return };
    for v in [0u32, 0xffff_ffff, 0xdead_beef, 0x0123_4567, 1, 1 << 31] {
        ok("write", regs::write(&b.card, card_regs::SCRATCH, v));
        assert_eq!(
            ok("SCRATCH", b.card.read_reg(u64::from(card_regs::SCRATCH))),
            v
        );
    }
    // Walking ones: no bit is tied to another.
    for bit in 0..32 {
        ok("write", regs::write(&b.card, card_regs::SCRATCH, 1 << bit));
        assert_eq!(
            ok("SCRATCH", b.card.read_reg(u64::from(card_regs::SCRATCH))),
            1 << bit
        );
    }
}

/// What a register reads at rest (after reset, or after the suite's rest state: the counters
/// cleared). TIMESTAMP runs, so only that it moves is checked; CHK_LAST_SEQ is whatever the
/// last checked frame left.
fn check_rest_value(card: &impl Card, r: &Register) {
    let v = ok(r.name, regs::read(card, r));
    if r.name == "CAPS" {
        // What the build has: its value is the variant's, which `Capabilities::discover`
        // reads; the table's reset value is one layout of several.
        return;
    }
    if r.name == "CHK_LAST_SEQ" {
        // No action resets it (CLEAR.COUNTERS zeroes the counters, and this is the last
        // frame's number): on a card that has checked frames since reset it keeps the last one.
        return;
    }
    if r.name == "TIMESTAMP" {
        let again = ok(r.name, regs::read(card, r));
        assert!(again > v, "TIMESTAMP runs: {v} then {again}");
        return;
    }
    assert_eq!(
        v, r.reset,
        "{} at {:#x} reads {v:#x}, the table's reset value is {:#x}",
        r.name, r.offset, r.reset
    );
}

#[test]
fn every_register_reads_its_reset_value() {
    let Some(b) = fixture() else { return };
    // A board keeps what earlier programs set: the rest state first (what reset leaves, as far
    // as the host can set it). On a fresh simulated card it changes nothing.
    ok("rest state", regs::restore(&b.card));
    for r in REGISTERS {
        check_rest_value(&b.card, r);
    }
    // Offsets between registers read as zero.
    for off in (0..0x1000u32).step_by(4) {
        if card_regs::register_at(off).is_none() {
            assert_eq!(ok("a hole", b.card.read_reg(u64::from(off))), 0, "{off:#x}");
        }
    }
}

/// The value written to test a read/write register: every bit flipped from reset. CONTROL
/// gets a mode the card has instead (a card may refuse the others) with the bits no field
/// covers set, and its channel enables stay off (they would start the frame sources; the
/// stream tests cover them).
fn probe(r: &Register, caps: &card_tests::Capabilities) -> u32 {
    if r.offset == card_regs::CONTROL {
        let mode = card_tests::Mode::ALL
            .into_iter()
            .rev()
            .find(|&m| caps.has_mode(m))
            .unwrap_or(card_tests::Mode::Off);
        return mode.value() | !(r.mask as u32);
    }
    !(r.reset as u32)
}

#[test]
fn every_register_has_its_access_type() {
    let Some(b) = fixture() else { return };
    ok("rest state", regs::restore(&b.card));
    let c = &b.card;
    for r in REGISTERS {
        match r.access {
            Access::ReadWrite => {
                let v = probe(r, &b.caps);
                ok("write", regs::write(c, r.offset, v));
                let got = ok(r.name, c.read_reg(u64::from(r.offset)));
                assert_eq!(
                    u64::from(got),
                    u64::from(v) & r.mask,
                    "{}: wrote {v:#x}; the bits its fields cover ({:#x}) must read back, the rest as zero",
                    r.name,
                    r.mask
                );
                ok("write", regs::write(c, r.offset, r.reset as u32));
                assert_eq!(
                    u64::from(ok(r.name, c.read_reg(u64::from(r.offset)))),
                    r.reset
                );
            }
            Access::ReadOnly if !r.volatile => {
                // A constant of the build: its reset value, except for CAPS, which says what
                // the variant the card was built as has.
                let before = ok(r.name, regs::read(c, r));
                if r.name != "CAPS" {
                    assert_eq!(before, r.reset, "{} reads its reset value", r.name);
                }
                for w in r.words() {
                    ok("write", regs::write(c, w, !(before as u32)));
                }
                assert_eq!(
                    ok(r.name, regs::read(c, r)),
                    before,
                    "{} is read-only",
                    r.name
                );
            }
            Access::ReadOnly => {
                // Counters and pointers that hardware moves: a write must not set them. At rest
                // nothing moves them, so they read as before.
                if r.name == "TIMESTAMP" {
                    continue;
                }
                let before = ok(r.name, regs::read(c, r));
                for w in r.words() {
                    ok("write", regs::write(c, w, 0x5555_5555));
                }
                assert_eq!(
                    ok(r.name, regs::read(c, r)),
                    before,
                    "{} is read-only",
                    r.name
                );
            }
            Access::WriteOnly => {
                // An action register: a write of zero takes no action, and it reads as zero.
                ok("write", regs::write(c, r.offset, 0));
                assert_eq!(ok(r.name, c.read_reg(u64::from(r.offset))), 0, "{}", r.name);
            }
            Access::WriteOneToClear => {
                // Writing ones clears; it never sets a bit that hardware did not set.
                ok("write", regs::write(c, r.offset, r.mask as u32));
                assert_eq!(ok(r.name, c.read_reg(u64::from(r.offset))), 0, "{}", r.name);
            }
        }
    }
    // Nothing was left changed.
    for r in REGISTERS {
        check_rest_value(c, r);
    }
}

#[test]
fn a_64_bit_counter_reads_as_one_sample() {
    let Some(b) = fixture() else { return };
    // TIMESTAMP runs at axi_aclk: low then high is one sample, so consecutive samples increase
    // even across a low-word carry.
    let ts = regs::by_name("TIMESTAMP");
    let mut last = ok("TIMESTAMP", regs::read(&b.card, ts));
    for _ in 0..50 {
        let now = ok("TIMESTAMP", regs::read(&b.card, ts));
        assert!(now > last, "{now} after {last}");
        last = now;
    }
}
