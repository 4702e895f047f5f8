//! A plain Rust model of what the card should hold and emit, written from the register map
//! (`docs/register-map.md`, through the register table) and the frame format
//! (`docs/frame-format.md`, through the `frame` crate), never from the RTL.
//!
//! It holds two windows of card memory (the lowest and the highest addresses, so that both
//! ends are used) with which bytes are known, the settable registers, the stream mode, each
//! frame source's next sequence number and counters, and the frame checker's counters with
//! the format's sequence rule ([`frame::SeqTracker`]). Each `check_*` method compares what the
//! card returned with the model and says what differs.

use std::collections::BTreeMap;

use card_regs::{Access, Register, REGISTERS};
use frame::{Pattern, SeqTracker};

use crate::caps::Mode;

/// Bytes of each memory window.
pub const WINDOW: u64 = 256 << 10;

/// Which memory window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Win {
    /// Card addresses from 0.
    Low,
    /// The last [`WINDOW`] bytes of card memory.
    High,
}

impl Win {
    /// The window's name in a replayable operation.
    pub fn name(self) -> &'static str {
        match self {
            Win::Low => "low",
            Win::High => "high",
        }
    }
}

/// One window of card memory: its bytes and which of them the model knows.
#[derive(Debug, Clone)]
struct Window {
    bytes: Vec<u8>,
    known: Vec<bool>,
}

/// Card memory as far as the tests have written it; the rest is unknown (a board keeps what
/// earlier programs left).
#[derive(Debug, Clone)]
pub struct Memory {
    size: u64,
    windows: [Window; 2],
}

impl Memory {
    /// Nothing known of a card memory of `size` bytes (at least two windows).
    pub fn new(size: u64) -> Memory {
        let w = || Window {
            bytes: vec![0; WINDOW as usize],
            known: vec![false; WINDOW as usize],
        };
        Memory {
            size,
            windows: [w(), w()],
        }
    }

    /// The card address of offset `off` in window `win`.
    pub fn addr(&self, win: Win, off: u64) -> u64 {
        match win {
            Win::Low => off,
            Win::High => self.size - WINDOW + off,
        }
    }

    fn window(&mut self, win: Win) -> &mut Window {
        &mut self.windows[win as usize]
    }

    /// Records a write.
    pub fn write(&mut self, win: Win, off: u64, data: &[u8]) {
        let w = self.window(win);
        let o = off as usize;
        w.bytes[o..o + data.len()].copy_from_slice(data);
        w.known[o..o + data.len()]
            .iter_mut()
            .for_each(|k| *k = true);
    }

    /// Checks a read: every known byte must be what the model holds; a byte that a concurrent
    /// write (`racing`, in the same window) covers may be the old or the new value.
    pub fn check_read(
        &self,
        win: Win,
        off: u64,
        got: &[u8],
        racing: Option<(Win, u64, &[u8])>,
    ) -> Result<(), String> {
        let w = &self.windows[win as usize];
        let o = off as usize;
        for (i, &b) in got.iter().enumerate() {
            let at = o + i;
            let new = racing.and_then(|(rw, ro, rd)| {
                let ro = ro as usize;
                (rw == win && at >= ro && at < ro + rd.len()).then(|| rd[at - ro])
            });
            let old = w.known[at].then(|| w.bytes[at]);
            let fine = match (old, new) {
                (None, None) => true,
                (Some(o), None) => b == o,
                (None, Some(_)) => true,
                (Some(o), Some(n)) => b == o || b == n,
            };
            if !fine {
                let addr = self.addr(win, at as u64);
                let mut msg = format!(
                    "card address {addr:#x} (byte {i} of the read) is {b:#04x}, the model holds {:#04x}",
                    w.bytes[at]
                );
                if let Some(n) = new {
                    msg.push_str(&format!(" (or {n:#04x} from the write running at once)"));
                }
                let wrong = got
                    .iter()
                    .enumerate()
                    .filter(|&(j, &x)| w.known[o + j] && x != w.bytes[o + j])
                    .count();
                msg.push_str(&format!("; {wrong} known bytes differ"));
                return Err(msg);
            }
        }
        Ok(())
    }
}

/// One frame source as the host sees it.
#[derive(Debug, Clone, Default)]
pub struct SourceModel {
    /// The sequence number the next periodic frame carries: exact under the stall policy, the
    /// lowest it can be under the drop policy.
    pub seq: u32,
    /// Frames that left the source (SRC<n>_SENT).
    pub sent: u64,
    /// Frames dropped (SRC<n>_DROPPED): exact under the stall policy (no change), a lower
    /// bound while a drop-policy stream runs.
    pub dropped: u64,
}

/// The frame checker's counters.
#[derive(Debug, Clone, Default)]
pub struct CheckerModel {
    tracker: SeqTracker,
    /// Frames with a wrong magic number.
    pub err_magic: u32,
    /// Frames with a length fault.
    pub err_length: u32,
    /// Frames with a wrong CRC.
    pub err_crc: u32,
    /// Frames with an unknown version.
    pub err_version: u32,
    /// The sequence number of the last frame, when it was a good one (the map does not say
    /// what a bad frame leaves there).
    pub last_seq: Option<u32>,
}

/// What the format says is wrong with a frame, checker counter by checker counter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults {
    /// Magic number.
    pub magic: bool,
    /// Version.
    pub version: bool,
    /// Length limits or header length against bytes received.
    pub length: bool,
    /// The CRC over every byte received is not the residue.
    pub crc: bool,
}

impl Faults {
    /// The faults of `bytes` as a frame, from the format's rules.
    pub fn of(bytes: &[u8]) -> Faults {
        let le32 = |at: usize| {
            bytes
                .get(at..at + 4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        };
        let len = bytes.len();
        Faults {
            magic: le32(frame::offset::MAGIC) != Some(frame::MAGIC),
            version: bytes.get(frame::offset::VERSION) != Some(&frame::VERSION),
            length: !(frame::MIN_FRAME_LEN..=frame::MAX_FRAME_LEN).contains(&len)
                || le32(frame::offset::PAYLOAD_LEN)
                    .is_none_or(|p| u64::from(p) + frame::OVERHEAD as u64 != len as u64),
            crc: frame::CRC32.checksum(bytes) != frame::CRC_RESIDUE,
        }
    }

    /// True when any check fails.
    pub fn any(&self) -> bool {
        self.magic || self.version || self.length || self.crc
    }
}

impl CheckerModel {
    /// Records a frame the checker received.
    pub fn observe(&mut self, bytes: &[u8]) {
        let f = Faults::of(bytes);
        if f.any() {
            self.tracker.bad();
            self.err_magic = self.err_magic.wrapping_add(u32::from(f.magic));
            self.err_length = self.err_length.wrapping_add(u32::from(f.length));
            self.err_crc = self.err_crc.wrapping_add(u32::from(f.crc));
            self.err_version = self.err_version.wrapping_add(u32::from(f.version));
            self.last_seq = None;
        } else {
            let seq = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
            self.tracker.good(seq);
            self.last_seq = Some(seq);
        }
    }

    /// Good frames.
    pub fn good(&self) -> u64 {
        self.tracker.good_frames()
    }

    /// Bad frames.
    pub fn bad(&self) -> u64 {
        self.tracker.bad_frames()
    }

    /// Missing frames.
    pub fn missing(&self) -> u64 {
        self.tracker.missing()
    }
}

/// The card as the host should see it.
#[derive(Debug, Clone)]
pub struct CardModel {
    /// Card memory.
    pub mem: Memory,
    /// The settable registers' values, by offset.
    regs: BTreeMap<u32, u32>,
    /// The stream mode.
    pub mode: Mode,
    /// Frame sources 0 and 1.
    pub src: [SourceModel; 2],
    /// The frame checker.
    pub chk: CheckerModel,
    /// The last value read from TIMESTAMP.
    pub timestamp: u64,
    /// Frames written into the capture ring (CAP_FRAMES).
    pub cap_frames: u64,
    /// Frames the ring had no room for (CAP_OVERFLOW).
    pub cap_overflow: u64,
}

/// A frame length register's value as the source uses it: clamped into 64..65536.
pub fn clamp_len(v: u32) -> usize {
    (v as usize).clamp(frame::MIN_FRAME_LEN, frame::MAX_FRAME_LEN)
}

impl CardModel {
    /// The card after reset (or after the suite's rest state), with a memory of `size` bytes
    /// of which nothing is known.
    pub fn new(size: u64) -> CardModel {
        CardModel {
            mem: Memory::new(size),
            regs: crate::regs::settable()
                .map(|r| (r.offset, r.reset as u32))
                .collect(),
            mode: Mode::Off,
            src: Default::default(),
            chk: CheckerModel::default(),
            timestamp: 0,
            cap_frames: 0,
            cap_overflow: 0,
        }
    }

    /// Records a register write (the bits no field covers are dropped, as the map says).
    pub fn write_reg(&mut self, reg: &Register, value: u32) {
        if let Some(v) = self.regs.get_mut(&reg.offset) {
            *v = value & reg.mask as u32;
        }
    }

    /// A settable register's value.
    pub fn reg(&self, offset: u32) -> u32 {
        self.regs.get(&offset).copied().unwrap_or(0)
    }

    /// CLEAR.COUNTERS: both sources restart at sequence 0 with zero counters, the checker
    /// forgets what it saw, and the capture counters are zeroed.
    pub fn clear(&mut self) {
        self.src = Default::default();
        self.chk = CheckerModel::default();
        self.cap_frames = 0;
        self.cap_overflow = 0;
    }

    /// Frame source `n`'s settings: frame length, gap, pattern, seed, drop policy.
    pub fn source_settings(&self, n: usize) -> SourceSettings {
        let (len, gap, pat, seed, pol) = if n == 0 {
            (
                card_regs::SRC0_FRAME_LEN,
                card_regs::SRC0_GAP,
                card_regs::SRC0_PATTERN,
                card_regs::SRC0_SEED,
                card_regs::SRC0_POLICY,
            )
        } else {
            (
                card_regs::SRC1_FRAME_LEN,
                card_regs::SRC1_GAP,
                card_regs::SRC1_PATTERN,
                card_regs::SRC1_SEED,
                card_regs::SRC1_POLICY,
            )
        };
        SourceSettings {
            len: clamp_len(self.reg(len)),
            gap: self.reg(gap),
            pattern: if self.reg(pat) & card_regs::src0_pattern::KIND_MASK as u32 != 0 {
                Pattern::Prbs
            } else {
                Pattern::Counter
            },
            seed: self.reg(seed),
            drop: self.reg(pol) & card_regs::src0_policy::DROP_MASK as u32 != 0,
        }
    }

    /// Checks a periodic frame of source `n` that the capture writer put in the ring and
    /// records it, as [`CardModel::check_periodic`] does, but for the frames the writer
    /// dropped before it: when the ring has no room for a new frame the writer discards it
    /// whole and counts it in CAP_OVERFLOW (drop-new, `hdl/rtl/capture_writer.v`), so a gap in
    /// the sequence is frames that left the source and never reached the ring. How many there
    /// are depends on how fast the host reads, which on a board or in a guest is the host's
    /// own pace; returns them, for the caller to hold against CAP_OVERFLOW.
    pub fn check_captured(
        &mut self,
        n: usize,
        bytes: &[u8],
        prev: &mut Option<(u64, u32)>,
    ) -> Result<u64, String> {
        let f = frame::parse(bytes).map_err(|e| format!("source {n}: not a valid frame: {e}"))?;
        let gap = f.header.sequence.wrapping_sub(self.src[n].seq);
        if gap >= 1 << 31 {
            return Err(format!(
                "source {n} frame (seq {}): sequence went back; expected {} or later",
                f.header.sequence, self.src[n].seq
            ));
        }
        let src = &mut self.src[n];
        src.seq = f.header.sequence;
        src.sent += u64::from(gap);
        self.check_periodic(n, bytes, prev)?;
        Ok(u64::from(gap))
    }

    /// Checks a periodic frame of source `n` (GEN) and records it: a valid frame of the
    /// source's settings with the next sequence number (under the drop policy, a later one,
    /// the frames between counted as dropped), its timestamp at least one frame slot after
    /// the previous frame's of this stream (`prev`, which it updates).
    pub fn check_periodic(
        &mut self,
        n: usize,
        bytes: &[u8],
        prev: &mut Option<(u64, u32)>,
    ) -> Result<(), String> {
        let s = self.source_settings(n);
        let f = frame::parse(bytes).map_err(|e| format!("source {n}: not a valid frame: {e}"))?;
        let h = f.header;
        let expect = self.src[n].seq;
        let what = format!(
            "source {n} frame (seq {}, {} bytes)",
            h.sequence,
            bytes.len()
        );
        if usize::from(h.channel) != n {
            return Err(format!("{what}: channel field {}, expected {n}", h.channel));
        }
        if f.frame_len != s.len {
            return Err(format!(
                "{what}: {} bytes, SRC{n}_FRAME_LEN gives {}",
                f.frame_len, s.len
            ));
        }
        if h.pattern != s.pattern || h.seed != s.seed {
            return Err(format!(
                "{what}: pattern {:?} seed {:#x}, the registers say {:?} {:#x}",
                h.pattern, h.seed, s.pattern, s.seed
            ));
        }
        let gap = h.sequence.wrapping_sub(expect);
        if s.drop {
            if gap >= 1 << 31 {
                return Err(format!(
                    "{what}: sequence went back; expected {expect} or later"
                ));
            }
            self.src[n].dropped += u64::from(gap);
        } else if gap != 0 {
            return Err(format!(
                "{what}: sequence {} under the stall policy, expected {expect}",
                h.sequence
            ));
        }
        if let Some((ts, seq)) = *prev {
            let slot = (s.len as u64).div_ceil(frame::BEAT_BYTES as u64) + u64::from(s.gap);
            let slots = u64::from(h.sequence.wrapping_sub(seq));
            if h.timestamp < ts + slot * slots {
                return Err(format!(
                    "{what}: timestamp {} is less than {slots} frame slot(s) of {slot} cycles after the previous frame's {ts}",
                    h.timestamp
                ));
            }
        }
        *prev = Some((h.timestamp, h.sequence));
        self.src[n].seq = h.sequence.wrapping_add(1);
        self.src[n].sent += 1;
        Ok(())
    }

    /// Checks the ECHO answer to a request with sequence number `seq` and records it: a valid
    /// frame of source 0's settings on channel 0 carrying `seq`.
    pub fn check_echo(&mut self, seq: u32, bytes: &[u8]) -> Result<(), String> {
        let s = self.source_settings(0);
        let f = frame::parse(bytes).map_err(|e| format!("echo answer: not a valid frame: {e}"))?;
        let h = f.header;
        if h.channel != 0 || h.sequence != seq || f.frame_len != s.len {
            return Err(format!(
                "echo answer: channel {} sequence {} length {}, expected channel 0 sequence {seq} length {}",
                h.channel, h.sequence, f.frame_len, s.len
            ));
        }
        if h.pattern != s.pattern || h.seed != s.seed {
            return Err(format!(
                "echo answer: pattern {:?} seed {:#x}, SRC0 says {:?} {:#x}",
                h.pattern, h.seed, s.pattern, s.seed
            ));
        }
        self.src[0].sent += 1;
        Ok(())
    }

    /// The value the model expects in a register, or None when it cannot know it (a running
    /// clock, a drop counter while frames may be dropped), with `at_least` for the clock.
    pub fn expected(&self, reg: &Register) -> Expect {
        if let Some(&v) = self.regs.get(&reg.offset) {
            return Expect::Exactly(u64::from(v));
        }
        let src = |n: usize| &self.src[n];
        match reg.name {
            "TIMESTAMP" => Expect::AtLeast(self.timestamp),
            "SRC0_SENT" => Expect::Exactly(src(0).sent),
            "SRC1_SENT" => Expect::Exactly(src(1).sent),
            "SRC0_DROPPED" => Expect::Exactly(src(0).dropped),
            "SRC1_DROPPED" => Expect::Exactly(src(1).dropped),
            "CHK_GOOD" => Expect::Exactly(self.chk.good()),
            "CHK_BAD" => Expect::Exactly(self.chk.bad()),
            "CHK_MISSING" => Expect::Exactly(self.chk.missing()),
            "CHK_ERR_MAGIC" => Expect::Exactly(u64::from(self.chk.err_magic)),
            "CHK_ERR_LENGTH" => Expect::Exactly(u64::from(self.chk.err_length)),
            "CHK_ERR_CRC" => Expect::Exactly(u64::from(self.chk.err_crc)),
            "CHK_ERR_VERSION" => Expect::Exactly(u64::from(self.chk.err_version)),
            "CAP_FRAMES" => Expect::Exactly(self.cap_frames),
            "CAP_OVERFLOW" => Expect::Exactly(self.cap_overflow),
            // What the build has depends on the variant it was built as; xdma-sim's variant
            // tests check it against the channels the host sees.
            "CAPS" => Expect::Unknown,
            "CHK_LAST_SEQ" => match self.chk.last_seq {
                Some(s) => Expect::Exactly(u64::from(s)),
                None => Expect::Unknown,
            },
            // Write-only actions read as zero; read-only constants read their reset value;
            // what the model does not drive (the capture ring, interrupts) stays at reset.
            _ if reg.access == Access::WriteOnly => Expect::Exactly(0),
            _ => Expect::Exactly(reg.reset),
        }
    }

    /// The counters the model keeps, as registers of the table.
    pub fn counters() -> impl Iterator<Item = &'static Register> {
        REGISTERS
            .iter()
            .filter(|r| r.volatile && (r.name.starts_with("SRC") || r.name.starts_with("CHK_")))
    }
}

/// A frame source's settings as its registers hold them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceSettings {
    /// Frame length in bytes (clamped).
    pub len: usize,
    /// Idle cycles between frames.
    pub gap: u32,
    /// Payload pattern.
    pub pattern: Pattern,
    /// Seed.
    pub seed: u32,
    /// Drop policy (else stall).
    pub drop: bool,
}

/// What a register should read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// This value.
    Exactly(u64),
    /// This or more.
    AtLeast(u64),
    /// Anything.
    Unknown,
}

impl Expect {
    /// Checks a value read from `name`.
    pub fn check(self, name: &str, got: u64) -> Result<(), String> {
        match self {
            Expect::Exactly(v) if got != v => {
                Err(format!("{name} reads {got:#x}, the model expects {v:#x}"))
            }
            Expect::AtLeast(v) if got < v => Err(format!(
                "{name} reads {got:#x}, less than {v:#x} read before"
            )),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_follow_the_format() {
        let h = frame::Header::counter(9);
        let good = frame::build(&h, 100).expect("frame");
        assert_eq!(Faults::of(&good), Faults::default());
        let mut bad = good.clone();
        bad[50] ^= 1;
        assert_eq!(
            Faults::of(&bad),
            Faults {
                crc: true,
                ..Faults::default()
            }
        );
        assert!(Faults::of(&good[..40]).length);
        let mut c = CheckerModel::default();
        c.observe(&good);
        c.observe(&bad);
        let h2 = frame::Header { sequence: 12, ..h };
        c.observe(&frame::build(&h2, 64).expect("frame"));
        // 10 and 11 are gone; one bad frame came in between: one missing, one bad.
        assert_eq!((c.good(), c.bad(), c.missing()), (2, 1, 1));
        assert_eq!(c.last_seq, Some(12));
    }

    #[test]
    fn a_read_races_a_write_byte_by_byte() {
        let mut m = Memory::new(1 << 30);
        m.write(Win::Low, 0, &[1, 2, 3, 4]);
        assert!(m.check_read(Win::Low, 0, &[1, 2, 3, 4], None).is_ok());
        assert!(m.check_read(Win::Low, 0, &[1, 2, 9, 4], None).is_err());
        let new = [7u8, 7];
        let racing = Some((Win::Low, 1, &new[..]));
        assert!(m.check_read(Win::Low, 0, &[1, 7, 3, 4], racing).is_ok());
        assert!(m.check_read(Win::Low, 0, &[1, 8, 3, 4], racing).is_err());
        // Unknown bytes may be anything.
        assert!(m.check_read(Win::High, 0, &[5; 8], None).is_ok());
        assert_eq!(m.addr(Win::High, 0), (1 << 30) - WINDOW);
    }
}
