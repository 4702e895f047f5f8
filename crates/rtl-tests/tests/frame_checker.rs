//! The frame checker (`hdl/rtl/frame_checker.v`) on its own, fed by an AXI-Stream source bus
//! model with the protocol monitor on: good frames counted, each error kind injected, detected
//! and counted, missing frames counted from sequence gaps, the clear input, the per-frame
//! results for ECHO mode, and frames with seeded random idle cycles between beats.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use axi_bfm::{AxisFrame, AxisSource, Env, PauseSpec, ResetPolarity, Result};
use card_sim::{ClockId, Model, Port, Top};
use frame::{Header, Pattern, CRC32};
use rstest::rstest;
use rtl_tests::{hook, AXI_HZ};

/// Seed of the random idle cycles between beats.
const IDLE_SEED: u64 = 0x9E37_79B9_7F4A_7C15;

/// The counters, as one value to compare.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Counts {
    good: u64,
    bad: u64,
    missing: u64,
    magic: u64,
    version: u64,
    length: u64,
    crc: u64,
}

struct Checker {
    env: Env,
    clk: ClockId,
    src: AxisSource,
    clear: Port,
    counters: [Port; 7],
    last_seq: Port,
    /// (sequence, ok) of every frame_done pulse.
    done: Rc<RefCell<Vec<(u32, bool)>>>,
    /// Cycles on which the checker was not ready; it must always be.
    not_ready: Rc<Cell<u64>>,
}

impl Checker {
    fn new() -> Result<Checker> {
        let mut env = Env::new(Model::new(Top::FrameChecker)?);
        let clk = env.add_clock("clk", AXI_HZ)?;
        env.add_reset(clk, "rst", ResetPolarity::ActiveHigh)?;
        let src = AxisSource::attach(&mut env, "s_axis", clk)?;
        let m = env.model();
        let counters = [
            m.port("frames_good")?,
            m.port("frames_bad")?,
            m.port("frames_missing")?,
            m.port("err_magic")?,
            m.port("err_version")?,
            m.port("err_length")?,
            m.port("err_crc")?,
        ];
        let (tready, frame_done, frame_seq, frame_ok) = (
            m.port("s_axis_tready")?,
            m.port("frame_done")?,
            m.port("frame_seq")?,
            m.port("frame_ok")?,
        );
        let clear = m.input("clear")?;
        let last_seq = m.port("last_seq")?;
        let done = Rc::new(RefCell::new(Vec::new()));
        let not_ready = Rc::new(Cell::new(0));
        let (d, nr) = (done.clone(), not_ready.clone());
        hook(
            &mut env,
            clk,
            move |m, cx| {
                if !cx.in_reset && !m.get_bool(tready) {
                    nr.set(nr.get() + 1);
                }
            },
            move |m, _| {
                if m.get_bool(frame_done) {
                    d.borrow_mut()
                        .push((m.get(frame_seq) as u32, m.get_bool(frame_ok)));
                }
            },
        );
        env.reset(clk, 4)?;
        Ok(Checker {
            env,
            clk,
            src,
            clear,
            counters,
            last_seq,
            done,
            not_ready,
        })
    }

    /// Sends a frame and waits until its last beat is taken.
    fn send_frame(&mut self, f: &[u8]) -> Result<()> {
        self.src.send(&mut self.env, AxisFrame::new(f.to_vec()))
    }

    /// Lets the result pipeline finish (counters four cycles after the last beat, the missing
    /// count two more), then reads the counters.
    fn counts(&mut self) -> Result<Counts> {
        self.env.run(self.clk, 7)?;
        assert_eq!(self.not_ready.get(), 0, "the checker is always ready");
        let m = self.env.model();
        let v: Vec<u64> = self.counters.iter().map(|&p| m.get(p)).collect();
        Ok(Counts {
            good: v[0],
            bad: v[1],
            missing: v[2],
            magic: v[3],
            version: v[4],
            length: v[5],
            crc: v[6],
        })
    }

    fn last_seq(&self) -> u64 {
        self.env.model().get(self.last_seq)
    }

    fn done(&self) -> Vec<(u32, bool)> {
        self.done.borrow().clone()
    }
}

fn good(sequence: u32, len: usize) -> Vec<u8> {
    let h = Header {
        channel: 0,
        pattern: if sequence & 1 == 0 {
            Pattern::Prbs
        } else {
            Pattern::Counter
        },
        sequence,
        timestamp: u64::from(sequence) * 1000,
        seed: 42,
    };
    frame::build(&h, len).expect("legal length")
}

/// Rewrites the CRC trailer so that only the fault injected before it remains.
fn fix_crc(f: &mut [u8]) {
    let n = f.len();
    let crc = CRC32.checksum(&f[..n - 4]);
    f[n - 4..].copy_from_slice(&crc.to_le_bytes());
}

#[test]
fn good_frames_are_counted() -> Result<()> {
    let mut c = Checker::new()?;
    let lens = [64, 65, 79, 80, 100, 1500, 4096, 65536];
    for (i, &len) in lens.iter().enumerate() {
        c.send_frame(&good(i as u32, len))?;
    }
    let n = lens.len() as u64;
    assert_eq!(
        c.counts()?,
        Counts {
            good: n,
            ..Counts::default()
        }
    );
    assert_eq!(c.last_seq(), n - 1);
    let expected: Vec<(u32, bool)> = (0..lens.len() as u32).map(|s| (s, true)).collect();
    assert_eq!(
        c.done(),
        expected,
        "one frame_done pulse per frame with its sequence number"
    );
    Ok(())
}

#[derive(Debug, Clone, Copy)]
enum Fault {
    Magic,
    Version,
    HeaderLength,
    TooShort,
    TooLong,
    PartialMiddleBeat,
    Truncated,
    Crc,
}

/// Each fault between two good frames: the faulty frame is counted bad once, under its
/// kind(s), and is not also counted missing.
#[rstest]
#[case(Fault::Magic, Counts { magic: 1, ..Counts::default() })]
#[case(Fault::Version, Counts { version: 1, ..Counts::default() })]
#[case(Fault::HeaderLength, Counts { length: 1, ..Counts::default() })]
#[case(Fault::TooShort, Counts { length: 1, ..Counts::default() })]
#[case(Fault::TooLong, Counts { length: 1, ..Counts::default() })]
// The source's null lane shifts every later byte by one lane; the checker reads middle beats
// whole (the XDMA engine packs them), so the CRC over the lanes fails as well.
#[case(Fault::PartialMiddleBeat, Counts { length: 1, crc: 1, ..Counts::default() })]
#[case(Fault::Truncated, Counts { length: 1, crc: 1, ..Counts::default() })]
#[case(Fault::Crc, Counts { crc: 1, ..Counts::default() })]
fn each_error_kind_is_detected(#[case] fault: Fault, #[case] kinds: Counts) -> Result<()> {
    let mut c = Checker::new()?;
    c.send_frame(&good(0, 100))?;
    let mut f = good(1, 100);
    match fault {
        Fault::Magic => {
            f[1] ^= 0x10;
            fix_crc(&mut f);
        }
        Fault::Version => {
            f[frame::offset::VERSION] = 2;
            fix_crc(&mut f);
        }
        Fault::HeaderLength => {
            f[frame::offset::PAYLOAD_LEN] ^= 1;
            fix_crc(&mut f);
        }
        Fault::TooShort => {
            // A self-consistent 48-byte frame: header and CRC agree, but it is under 64 bytes.
            f.truncate(48);
            f[frame::offset::PAYLOAD_LEN..][..4].copy_from_slice(&12u32.to_le_bytes());
            fix_crc(&mut f);
        }
        Fault::TooLong => {
            f = vec![0u8; 65552];
            f[..32].copy_from_slice(&good(1, 100)[..32]);
            f[frame::offset::PAYLOAD_LEN..][..4].copy_from_slice(&65516u32.to_le_bytes());
            fix_crc(&mut f);
        }
        Fault::PartialMiddleBeat => {
            // The source leaves the last lane of the third beat empty (TKEEP 0x7fff there)
            // and carries on with the next byte in the next beat.
            let mut gaps = "0".repeat(2 * frame::BEAT_BYTES + 15);
            gaps.push('1');
            gaps.push_str(&"0".repeat(256));
            c.src.set_gaps(&PauseSpec::pattern(&gaps))?;
        }
        Fault::Truncated => {
            f.truncate(96);
        }
        Fault::Crc => {
            f[50] ^= 0x04;
        }
    }
    c.send_frame(&f)?;
    c.src.set_gaps(&PauseSpec::Never)?;
    c.send_frame(&good(2, 100))?;
    let expected = Counts {
        good: 2,
        bad: 1,
        missing: 0,
        ..kinds
    };
    assert_eq!(c.counts()?, expected, "{fault:?}");
    assert_eq!(c.done(), vec![(0, true), (1, false), (2, true)]);
    assert_eq!(c.last_seq(), 2);
    Ok(())
}

#[test]
fn missing_frames_are_counted_from_sequence_gaps() -> Result<()> {
    let mut c = Checker::new()?;
    // Gaps of 2 and 3.
    for s in [0, 1, 2, 5, 6, 10] {
        c.send_frame(&good(s, 64))?;
    }
    assert_eq!(c.counts()?.missing, 5);
    // A step backward restarts tracking without counting.
    for s in [3, 4] {
        c.send_frame(&good(s, 64))?;
    }
    assert_eq!(c.counts()?.missing, 5);
    // Two bad frames then a gap of four: two missing, two bad.
    let mut bad = good(5, 64);
    bad[40] ^= 1;
    c.send_frame(&bad)?;
    c.send_frame(&bad)?;
    c.send_frame(&good(9, 64))?;
    // A jump of 2^31 or more counts as a step backward; gaps across the wrap are counted.
    c.send_frame(&good(u32::MAX - 1, 64))?;
    c.send_frame(&good(1, 64))?;
    let n = c.counts()?;
    assert_eq!(n.bad, 2);
    assert_eq!(n.missing, 5 + 2 + 2);
    assert_eq!(n.good, 11);
    assert_eq!(c.last_seq(), 1);

    // Clear zeroes the counters and forgets the expected number.
    let clear = c.clear;
    c.env.model_mut().set_bool(clear, true);
    c.env.model_mut().eval()?;
    c.env.tick(c.clk)?;
    c.env.model_mut().set_bool(clear, false);
    c.env.model_mut().eval()?;
    assert_eq!(c.counts()?, Counts::default());
    c.send_frame(&good(100, 64))?;
    c.send_frame(&good(101, 64))?;
    assert_eq!(
        c.counts()?,
        Counts {
            good: 2,
            ..Counts::default()
        }
    );
    Ok(())
}

/// Frames with seeded random idle cycles between beats, and back-to-back one-beat fragments:
/// the checker takes a beat every cycle and judges every frame.
#[test]
fn random_valid_gaps_and_one_beat_frames() -> Result<()> {
    let mut c = Checker::new()?;
    c.src.set_pauses(&PauseSpec::random(IDLE_SEED, 40));
    for s in 0..20u32 {
        c.src
            .start_send(AxisFrame::new(good(s, 64 + 37 * s as usize)))?;
    }
    c.src.wait_idle(&mut c.env)?;
    c.src.set_pauses(&PauseSpec::Never);
    assert_eq!(
        c.counts()?,
        Counts {
            good: 20,
            ..Counts::default()
        }
    );
    // One-beat fragments of a frame's header, back to back: magic and version are right,
    // length and CRC wrong.
    let head = good(20, 64)[..frame::BEAT_BYTES].to_vec();
    for _ in 0..5 {
        c.src.start_send(AxisFrame::new(head.clone()))?;
    }
    c.src.wait_idle(&mut c.env)?;
    let n = c.counts()?;
    assert_eq!(
        (n.bad, n.length, n.crc, n.magic, n.version),
        (5, 5, 5, 0, 0)
    );
    assert_eq!(c.done().len(), 25);
    Ok(())
}
