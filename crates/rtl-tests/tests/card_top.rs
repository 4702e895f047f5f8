//! The card's top (`card_core`) through the bus models: the register map against the table
//! and the stream modes LOOP, GEN, ECHO and CHECK, with the protocol monitors on every
//! interface. CAPTURE, the DMA port and the interrupt are in card_capture.rs.

use axi_bfm::{PauseSpec, Result};
use card_regs::{self as regs, control, Access, REGISTERS};
use card_sim::Top;
use rtl_tests::CardHarness;

/// Beat width of every stream in bytes.
const BEAT: usize = frame::BEAT_BYTES;

/// Seed of the random pauses on the register bus in the register-map test.
const REGS_PAUSE_SEED: u64 = 0x5a_c0de;
/// Seed of the random backpressure on C2H0 and idle cycles on H2C0 in the LOOP test.
const LOOP_PAUSE_SEED: u64 = 0x1234_5678;
/// Seed of the random backpressure on C2H1 in the two-channel GEN test.
const GEN_PAUSE_SEED: u64 = 0xc2_4001;

fn mode(m: u64, ch0: bool, ch1: bool) -> u32 {
    let mut v = m << control::MODE_LSB;
    if ch0 {
        v |= control::CH0_EN_MASK;
    }
    if ch1 {
        v |= control::CH1_EN_MASK;
    }
    v as u32
}

/// Every register reads its reset value from the table after reset, and behaves as its access
/// says: read/write registers keep exactly the field bits, read-only ones ignore writes,
/// write-only ones read as zero, write-one-to-clear ones do not set from a write. The register
/// bus runs with seeded random idle cycles and backpressure on all five channels.
#[test]
fn register_map_matches_the_table() -> Result<()> {
    let mut card = CardHarness::new(Top::CardCore, false)?;
    card.regs()
        .set_pauses(&PauseSpec::random(REGS_PAUSE_SEED, 40));
    for r in REGISTERS {
        // The timestamp runs from reset; it has a test of its own.
        if r.name == "TIMESTAMP" {
            continue;
        }
        let mut value = 0u64;
        for (i, w) in r.words().enumerate() {
            value |= u64::from(card.read(w)?) << (32 * i);
        }
        assert_eq!(value, r.reset, "{} reads its reset value", r.name);
    }
    for r in REGISTERS {
        let words: Vec<u32> = r.words().collect();
        match r.access {
            Access::ReadWrite => {
                let w = words[0];
                // CONTROL refuses a mode the card lacks (all ones is mode 7): it gets every
                // other bit with the highest mode there is.
                let (all, kept) = if w == regs::CONTROL {
                    let v = (r.mask & !control::MODE_MASK)
                        | (control::MODE_CAPTURE << control::MODE_LSB);
                    (v as u32, v)
                } else {
                    (u32::MAX, r.mask)
                };
                card.write(w, all)?;
                assert_eq!(
                    u64::from(card.read(w)?),
                    kept,
                    "{} keeps its field bits",
                    r.name
                );
                card.write(w, 0)?;
                assert_eq!(card.read(w)?, 0, "{} clears", r.name);
                // Byte strobes: only the selected lanes change.
                card.write_strb(w, u32::MAX, 0b0010)?;
                assert_eq!(
                    u64::from(card.read(w)?),
                    r.mask & 0xff00,
                    "{} writes only strobed bytes",
                    r.name
                );
                card.write(w, r.reset as u32)?;
                assert_eq!(u64::from(card.read(w)?), r.reset, "{} restores", r.name);
            }
            Access::ReadOnly => {
                for &w in &words {
                    let before = card.read(w)?;
                    card.write(w, !before)?;
                    let after = card.read(w)?;
                    if r.volatile {
                        assert_ne!(after, !before, "{} ignores writes", r.name);
                    } else {
                        assert_eq!(after, before, "{} ignores writes", r.name);
                    }
                }
            }
            Access::WriteOnly => {
                // The only write-only register's action (clear counters) is harmless here.
                card.write(words[0], u32::MAX)?;
                assert_eq!(card.read(words[0])?, 0, "{} reads as zero", r.name);
            }
            Access::WriteOneToClear => {
                card.write(words[0], u32::MAX)?;
                assert_eq!(
                    u64::from(card.read(words[0])?),
                    r.reset,
                    "{} is not set by a write",
                    r.name
                );
            }
        }
    }
    // The window repeats across the BAR, and unmapped words read as zero.
    assert_eq!(card.read(regs::ID + 0x1000)?, regs::id::RESET as u32);
    assert_eq!(card.read(0x0ffc)?, 0);
    Ok(())
}

/// The timestamp counts axi_aclk cycles; the low word latches the high word.
#[test]
fn timestamp_counts_cycles() -> Result<()> {
    let mut card = CardHarness::new(Top::CardCore, false)?;
    let t0 = card.read64(regs::TIMESTAMP_LO)?;
    let c0 = card.cycle_count();
    card.ticks(1000)?;
    let t1 = card.read64(regs::TIMESTAMP_LO)?;
    let c1 = card.cycle_count();
    assert_eq!(
        t1 - t0,
        c1 - c0,
        "one count per cycle between equal read sequences"
    );
    Ok(())
}

/// A frame of `len` bytes whose bytes depend on `n` and the position.
fn test_bytes(n: u32, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| {
            (i as u32)
                .wrapping_mul(31)
                .wrapping_add(n.wrapping_mul(0x9e37)) as u8
        })
        .collect()
}

/// LOOP: 1,000 back-to-back 4 KiB frames leave C2H0 unchanged, one beat every cycle from the
/// first to the last, and H2C0 never stalls.
#[test]
fn loop_sustains_one_beat_per_cycle() -> Result<()> {
    const FRAMES: u32 = 1000;
    const LEN: usize = 4096;
    let mut card = CardHarness::new(Top::CardCore, false)?;
    card.write(regs::CONTROL, mode(control::MODE_LOOP, false, false))?;
    card.set_c2h_ready(0, true);
    let beats_per_frame = (LEN / BEAT) as u64;
    let total_beats = beats_per_frame * u64::from(FRAMES);
    // Keep a few frames queued ahead so that H2C0 always has a beat to offer.
    let mut queued = 0u32;
    let mut checked = 0u32;
    let mut first_cycle = None;
    let mut last_cycle = 0;
    let stalls_before = card.h2c_stalls();
    let limit = total_beats + 1000;
    for _ in 0..limit {
        while queued < FRAMES && card.h2c(0).expect("an H2C stream").sent() + 2 > u64::from(queued)
        {
            card.send_h2c(&test_bytes(queued, LEN))?;
            queued += 1;
        }
        card.cycle()?;
        for f in card.take_c2h(0) {
            assert_eq!(
                f.bytes,
                test_bytes(checked, LEN),
                "frame {checked} comes back unchanged"
            );
            assert_eq!(
                f.last_cycle - f.first_cycle + 1,
                beats_per_frame,
                "frame {checked} has no bubble"
            );
            first_cycle.get_or_insert(f.first_cycle);
            last_cycle = f.last_cycle;
            checked += 1;
        }
        if checked == FRAMES {
            break;
        }
    }
    assert_eq!(checked, FRAMES, "every frame looped back in time");
    let first = first_cycle.expect("frames arrived");
    assert_eq!(
        last_cycle - first + 1,
        total_beats,
        "{total_beats} beats in as many cycles: one beat per cycle, no bubble between frames"
    );
    assert_eq!(
        card.h2c_stalls() - stalls_before,
        0,
        "H2C0 was ready on every cycle"
    );
    assert_eq!(card.c2h_beats(0), total_beats);
    Ok(())
}

/// LOOP keeps every beat and its order under random backpressure on C2H0 and random idle
/// cycles on H2C0.
#[test]
fn loop_survives_backpressure() -> Result<()> {
    let mut card = CardHarness::new(Top::CardCore, false)?;
    card.write(regs::CONTROL, mode(control::MODE_LOOP, false, false))?;
    card.c2h(0)
        .expect("a C2H stream")
        .set_pauses(&PauseSpec::random(LOOP_PAUSE_SEED, 25));
    card.h2c(0)
        .expect("an H2C stream")
        .set_pauses(&PauseSpec::random(LOOP_PAUSE_SEED + 1, 30));
    let lens = [64usize, 100, 17, 4096, 1, 333];
    for (n, &len) in lens.iter().enumerate() {
        card.send_h2c(&test_bytes(n as u32, len))?;
    }
    let mut got = Vec::new();
    for _ in 0..20_000 {
        card.cycle()?;
        got.extend(card.take_c2h(0));
        if got.len() == lens.len() {
            break;
        }
    }
    assert_eq!(got.len(), lens.len(), "every frame came back");
    for (n, f) in got.iter().enumerate() {
        assert_eq!(f.bytes, test_bytes(n as u32, lens[n]), "frame {n}");
    }
    Ok(())
}

/// Configures frame source `src` (0 or 1).
fn setup_source(
    card: &mut CardHarness,
    src: u32,
    len: u32,
    gap: u32,
    prbs: bool,
    seed: u32,
) -> Result<()> {
    let base = if src == 0 {
        regs::SRC0_FRAME_LEN
    } else {
        regs::SRC1_FRAME_LEN
    };
    let off = base - regs::SRC0_FRAME_LEN;
    card.write(regs::SRC0_FRAME_LEN + off, len)?;
    card.write(regs::SRC0_GAP + off, gap)?;
    card.write(regs::SRC0_PATTERN + off, u32::from(prbs))?;
    card.write(regs::SRC0_SEED + off, seed)?;
    Ok(())
}

/// Validates frames of one channel with the `frame` crate: each is whole, of its channel and
/// length, and the sequence numbers count up from `first_seq` without a gap.
fn validate(frames: &[rtl_tests::Frame], channel: u8, len: usize, first_seq: u32, seed: u32) {
    let mut last_ts = 0;
    for (i, f) in frames.iter().enumerate() {
        let p = frame::parse(&f.bytes)
            .unwrap_or_else(|e| panic!("channel {channel} frame {i} is not valid: {e}"));
        assert_eq!(p.header.channel, channel, "frame {i} channel");
        assert_eq!(p.frame_len, len, "frame {i} length");
        assert_eq!(
            p.header.sequence,
            first_seq + i as u32,
            "frame {i} sequence"
        );
        assert_eq!(p.header.seed, seed, "frame {i} seed");
        assert!(p.header.timestamp >= last_ts, "timestamps never go back");
        last_ts = p.header.timestamp;
    }
}

/// GEN on one channel: source 0 on C2H0, valid frames counted by SRC0_SENT; C2H1 stays idle.
#[test]
fn gen_one_channel() -> Result<()> {
    let mut card = CardHarness::new(Top::CardCore, false)?;
    setup_source(&mut card, 0, 256, 10, true, 0xdead_beef)?;
    card.set_c2h_ready(0, true);
    card.set_c2h_ready(1, true);
    card.write(regs::CONTROL, mode(control::MODE_GEN, true, false))?;
    card.run_until(20_000, "8 frames on C2H0", |c| Ok(c.c2h_frames(0) >= 8))?;
    card.write(regs::CONTROL, mode(control::MODE_GEN, false, false))?;
    card.ticks(200)?;
    let frames = card.take_c2h(0);
    validate(&frames, 0, 256, 0, 0xdead_beef);
    assert_eq!(card.read64(regs::SRC0_SENT_LO)?, frames.len() as u64);
    assert_eq!(card.c2h_frames(1), 0, "source 1 is off");
    assert_eq!(card.read64(regs::SRC1_SENT_LO)?, 0);
    Ok(())
}

/// GEN on two channels: each source feeds its own channel with its own settings; C2H1 runs
/// with random backpressure, which its source's stall policy absorbs without a loss.
#[test]
fn gen_two_channels() -> Result<()> {
    let mut card = CardHarness::new(Top::CardCore, false)?;
    setup_source(&mut card, 0, 1000, 0, true, 7)?;
    setup_source(&mut card, 1, 100, 5, false, 9)?;
    card.set_c2h_ready(0, true);
    card.c2h(1)
        .expect("a C2H stream")
        .set_pauses(&PauseSpec::random(GEN_PAUSE_SEED, 30));
    card.write(regs::CONTROL, mode(control::MODE_GEN, true, true))?;
    card.run_until(50_000, "frames on both channels", |c| {
        Ok(c.c2h_frames(0) >= 6 && c.c2h_frames(1) >= 20)
    })?;
    card.c2h(1)
        .expect("a C2H stream")
        .set_pauses(&PauseSpec::Never);
    card.write(regs::CONTROL, mode(control::MODE_GEN, false, false))?;
    card.ticks(200)?;
    let f0 = card.take_c2h(0);
    let f1 = card.take_c2h(1);
    validate(&f0, 0, 1000, 0, 7);
    validate(&f1, 1, 100, 0, 9);
    assert_eq!(card.read64(regs::SRC0_SENT_LO)?, f0.len() as u64);
    assert_eq!(card.read64(regs::SRC1_SENT_LO)?, f1.len() as u64);
    Ok(())
}

/// A valid request frame for the checker or ECHO.
fn request(seq: u32, len: usize) -> Vec<u8> {
    frame::build(&frame::Header::counter(seq), len).expect("a valid frame")
}

/// ECHO: stop and wait; each request is answered by one valid frame on C2H0 that carries the
/// request's sequence number.
#[test]
fn echo_answers_each_request_with_its_sequence() -> Result<()> {
    let mut card = CardHarness::new(Top::CardCore, false)?;
    setup_source(&mut card, 0, 128, 0, false, 0)?;
    card.set_c2h_ready(0, true);
    card.write(regs::CONTROL, mode(control::MODE_ECHO, false, false))?;
    for seq in [5u32, 6, 7, 1000, 0xffff_fffe] {
        card.send_h2c(&request(seq, 256))?;
        card.run_until(5_000, "the echo", |c| Ok(c.c2h_frames(0) >= 1))?;
        let f = card.take_c2h(0);
        assert_eq!(f.len(), 1, "one answer per request");
        let p = frame::parse(&f[0].bytes).expect("the answer is a valid frame");
        assert_eq!(
            p.header.sequence, seq,
            "the answer carries the request's sequence"
        );
        assert_eq!(p.frame_len, 128);
        card.ticks(50)?;
        assert_eq!(card.c2h_frames(0), 0, "no second answer");
    }
    assert_eq!(card.read64(regs::SRC0_SENT_LO)?, 5);
    Ok(())
}

/// CHECK: good frames, a gap in the sequence and corrupted frames are counted by kind.
#[test]
fn check_counts_good_bad_and_missing() -> Result<()> {
    let mut card = CardHarness::new(Top::CardCore, false)?;
    card.write(regs::CONTROL, mode(control::MODE_CHECK, false, false))?;
    for seq in 0..4 {
        card.send_h2c(&request(seq, 200))?;
    }
    // Sequence 4 and 5 are missing.
    card.send_h2c(&request(6, 200))?;
    let mut bad_crc = request(7, 200);
    bad_crc[100] ^= 0x01;
    card.send_h2c(&bad_crc)?;
    // A wrong magic with a CRC that matches it: only the magic check fails.
    let mut bad_magic = request(8, 200);
    bad_magic[0] ^= 0xff;
    let crc_at = bad_magic.len() - frame::TRAILER_LEN;
    let crc = frame::CRC32.checksum(&bad_magic[..crc_at]);
    bad_magic[crc_at..].copy_from_slice(&crc.to_le_bytes());
    card.send_h2c(&bad_magic)?;
    card.send_h2c(&request(9, 200))?;
    card.run_until(10_000, "H2C0 drained", |c| Ok(!c.h2c_busy()))?;
    card.ticks(50)?;
    assert_eq!(card.read64(regs::CHK_GOOD_LO)?, 6, "0..3, 6 and 9");
    assert_eq!(card.read64(regs::CHK_BAD_LO)?, 2);
    assert_eq!(card.read64(regs::CHK_MISSING_LO)?, 2, "4 and 5");
    assert_eq!(card.read(regs::CHK_ERR_CRC)?, 1);
    assert_eq!(card.read(regs::CHK_ERR_MAGIC)?, 1);
    assert_eq!(card.read(regs::CHK_ERR_LENGTH)?, 0);
    assert_eq!(card.read(regs::CHK_ERR_VERSION)?, 0);
    assert_eq!(card.read(regs::CHK_LAST_SEQ)?, 9);
    // CLEAR zeroes the counters.
    card.write(regs::CLEAR, regs::clear::COUNTERS_MASK as u32)?;
    assert_eq!(card.read64(regs::CHK_GOOD_LO)?, 0);
    assert_eq!(card.read64(regs::CHK_BAD_LO)?, 0);
    assert_eq!(card.read(regs::CHK_ERR_CRC)?, 0);
    Ok(())
}
