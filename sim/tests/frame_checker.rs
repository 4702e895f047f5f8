//! The frame checker (`hdl/rtl/frame_checker.v`) on its own: good frames counted, each error
//! kind injected, detected and counted, missing frames counted from sequence gaps, the clear
//! input, and the per-frame results for ECHO mode.

use card_sim::{ClockId, Model, Port, Result, Top};
use frame::{Beat, Header, Pattern, CRC32};
use rstest::rstest;

struct Rng(u64);

impl Rng {
    fn chance(&mut self, percent: u64) -> bool {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % 100 < percent
    }
}

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
    m: Model,
    clk: ClockId,
    clear: Port,
    tdata: Port,
    tkeep: Port,
    tlast: Port,
    tvalid: Port,
    tready: Port,
    counters: [Port; 7],
    last_seq: Port,
    frame_done: Port,
    frame_seq: Port,
    frame_ok: Port,
    rng: Rng,
    /// (sequence, ok) of every frame_done pulse.
    done: Vec<(u32, bool)>,
}

impl Checker {
    fn new() -> Result<Checker> {
        let mut m = Model::new(Top::FrameChecker)?;
        let clk = m.add_clock("clk", 250_000_000)?;
        let rst = m.input("rst")?;
        m.set_bool(rst, true);
        m.ticks(clk, 4)?;
        m.set_bool(rst, false);
        m.eval()?;
        let counters = [
            m.port("frames_good")?,
            m.port("frames_bad")?,
            m.port("frames_missing")?,
            m.port("err_magic")?,
            m.port("err_version")?,
            m.port("err_length")?,
            m.port("err_crc")?,
        ];
        Ok(Checker {
            clk,
            clear: m.input("clear")?,
            tdata: m.input("s_axis_tdata")?,
            tkeep: m.input("s_axis_tkeep")?,
            tlast: m.input("s_axis_tlast")?,
            tvalid: m.input("s_axis_tvalid")?,
            tready: m.port("s_axis_tready")?,
            counters,
            last_seq: m.port("last_seq")?,
            frame_done: m.port("frame_done")?,
            frame_seq: m.port("frame_seq")?,
            frame_ok: m.port("frame_ok")?,
            m,
            rng: Rng(0x9E37_79B9_7F4A_7C15),
            done: Vec::new(),
        })
    }

    fn tick(&mut self) -> Result<()> {
        assert!(self.m.get_bool(self.tready), "the checker is always ready");
        self.m.tick(self.clk)?;
        if self.m.get_bool(self.frame_done) {
            self.done.push((
                self.m.get(self.frame_seq) as u32,
                self.m.get_bool(self.frame_ok),
            ));
        }
        Ok(())
    }

    /// Sends beats, with TVALID low for a random cycle between beats `idle_percent` of the time.
    fn send(&mut self, beats: &[Beat], idle_percent: u64) -> Result<()> {
        for b in beats {
            while self.rng.chance(idle_percent) {
                self.m.set_bool(self.tvalid, false);
                self.m.eval()?;
                self.tick()?;
            }
            self.m.set_bytes(self.tdata, &b.data);
            self.m.set(self.tkeep, u64::from(b.keep));
            self.m.set_bool(self.tlast, b.last);
            self.m.set_bool(self.tvalid, true);
            self.m.eval()?;
            self.tick()?;
        }
        self.m.set_bool(self.tvalid, false);
        self.m.eval()
    }

    fn send_frame(&mut self, f: &[u8]) -> Result<()> {
        let beats: Vec<Beat> = frame::beats(f).collect();
        self.send(&beats, 0)
    }

    /// Lets the two-cycle result pipeline finish, then reads the counters.
    fn counts(&mut self) -> Result<Counts> {
        for _ in 0..3 {
            self.tick()?;
        }
        let v: Vec<u64> = self.counters.iter().map(|&p| self.m.get(p)).collect();
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
}

fn good(sequence: u32, len: usize) -> Vec<u8> {
    let h = Header {
        channel: 0,
        pattern: if sequence % 2 == 0 {
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
    assert_eq!(c.m.get(c.last_seq), n - 1);
    let expected: Vec<(u32, bool)> = (0..lens.len() as u32).map(|s| (s, true)).collect();
    assert_eq!(
        c.done, expected,
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
#[case(Fault::PartialMiddleBeat, Counts { length: 1, ..Counts::default() })]
#[case(Fault::Truncated, Counts { length: 1, crc: 1, ..Counts::default() })]
#[case(Fault::Crc, Counts { crc: 1, ..Counts::default() })]
fn each_error_kind_is_detected(#[case] fault: Fault, #[case] kinds: Counts) -> Result<()> {
    let mut c = Checker::new()?;
    c.send_frame(&good(0, 100))?;
    let mut f = good(1, 100);
    let mut beats: Option<Vec<Beat>> = None;
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
            let mut b: Vec<Beat> = frame::beats(&f).collect();
            b[2].keep = 0x7FFF;
            beats = Some(b);
        }
        Fault::Truncated => {
            f.truncate(96);
        }
        Fault::Crc => {
            f[50] ^= 0x04;
        }
    }
    let beats = beats.unwrap_or_else(|| frame::beats(&f).collect());
    c.send(&beats, 0)?;
    c.send_frame(&good(2, 100))?;
    let expected = Counts {
        good: 2,
        bad: 1,
        missing: 0,
        ..kinds
    };
    assert_eq!(c.counts()?, expected, "{fault:?}");
    assert_eq!(c.done, vec![(0, true), (1, false), (2, true)]);
    assert_eq!(c.m.get(c.last_seq), 2);
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
    assert_eq!(c.m.get(c.last_seq), 1);

    // Clear zeroes the counters and forgets the expected number.
    c.m.set_bool(c.clear, true);
    c.m.eval()?;
    c.tick()?;
    c.m.set_bool(c.clear, false);
    c.m.eval()?;
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

/// Frames with random idle cycles between beats, and back-to-back one-beat fragments: the
/// checker takes a beat every cycle and judges every frame.
#[test]
fn random_valid_gaps_and_one_beat_frames() -> Result<()> {
    let mut c = Checker::new()?;
    let mut beats = Vec::new();
    for s in 0..20u32 {
        beats.extend(frame::beats(&good(s, 64 + 37 * s as usize)));
    }
    c.send(&beats, 40)?;
    assert_eq!(
        c.counts()?,
        Counts {
            good: 20,
            ..Counts::default()
        }
    );
    // One-beat fragments of a frame's header, back to back: magic and version are right,
    // length and CRC wrong.
    let head = frame::beats(&good(20, 64)).next().expect("a first beat");
    let frag = Beat { last: true, ..head };
    c.send(&[frag; 5], 0)?;
    let n = c.counts()?;
    assert_eq!(
        (n.bad, n.length, n.crc, n.magic, n.version),
        (5, 5, 5, 0, 0)
    );
    assert_eq!(c.done.len(), 25);
    Ok(())
}
