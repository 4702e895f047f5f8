//! frame: the reference implementation of the card's stream frame format
//! (`docs/frame-format.md`).
//!
//! It builds frames with either payload pattern, parses and validates them with a typed error
//! for each kind of fault, splits frames into 128-bit stream beats and reassembles them under
//! the XDMA TKEEP rule, and tracks sequence numbers to count lost frames. The RTL frame source
//! and frame checker are tested against this crate, and the host side uses it to check what
//! the card sends.

use crc::{Crc, CRC_32_ISO_HDLC};
use thiserror::Error;

/// The magic number, read as a little-endian `u32` from offset 0 (ASCII "DAQF" on the wire).
pub const MAGIC: u32 = 0x4651_4144;
/// The format version this crate builds and accepts.
pub const VERSION: u8 = 1;
/// Bytes of the header, before the payload.
pub const HEADER_LEN: usize = 32;
/// Bytes of the CRC-32 trailer, after the payload.
pub const TRAILER_LEN: usize = 4;
/// Bytes of a frame that are not payload.
pub const OVERHEAD: usize = HEADER_LEN + TRAILER_LEN;
/// The shortest legal frame, in bytes, header and trailer included.
pub const MIN_FRAME_LEN: usize = 64;
/// The longest legal frame, in bytes, header and trailer included.
pub const MAX_FRAME_LEN: usize = 65536;
/// Bytes per beat of the 128-bit AXI-Stream bus.
pub const BEAT_BYTES: usize = 16;
/// The CRC of the trailer: CRC-32 with the IEEE polynomial as Ethernet and zlib use it.
pub const CRC32: Crc<u32> = Crc::<u32>::new(&CRC_32_ISO_HDLC);
/// The CRC-32 of any frame taken over all its bytes, trailer included. A receiver that does
/// not know where the frame ends can run the CRC over everything and compare with this.
pub const CRC_RESIDUE: u32 = 0x2144_DF1C;
/// The multiplier that spreads sequence numbers over the PRBS state space (the 32-bit golden
/// ratio constant), so that consecutive frames start far apart in the PRBS sequence.
pub const PRBS_SEQ_MULT: u32 = 0x9E37_79B9;

/// Byte offsets of the header fields.
pub mod offset {
    /// `u32` magic number, [`crate::MAGIC`].
    pub const MAGIC: usize = 0;
    /// `u8` format version, [`crate::VERSION`].
    pub const VERSION: usize = 4;
    /// `u8` channel that produced the frame.
    pub const CHANNEL: usize = 5;
    /// `u8` payload pattern, see [`crate::Pattern`].
    pub const PATTERN: usize = 6;
    /// `u8` flags, sent as zero and ignored on receive.
    pub const FLAGS: usize = 7;
    /// `u32` sequence number.
    pub const SEQUENCE: usize = 8;
    /// `u32` payload length in bytes (frame length minus 36).
    pub const PAYLOAD_LEN: usize = 12;
    /// `u64` timestamp in `axi_aclk` cycles at the start of the frame.
    pub const TIMESTAMP: usize = 16;
    /// `u32` pattern seed.
    pub const SEED: usize = 24;
    /// `u32` reserved, sent as zero and ignored on receive.
    pub const RESERVED: usize = 28;
}

/// The payload pattern of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Pattern {
    /// Little-endian 32-bit words: word `k` is `(sequence << 16) + k`, modulo 2^32.
    Counter = 0,
    /// PRBS-31 (x^31 + x^28 + 1) seeded from the seed and the sequence number.
    Prbs = 1,
}

impl TryFrom<u8> for Pattern {
    type Error = FrameError;

    fn try_from(value: u8) -> Result<Self, FrameError> {
        match value {
            0 => Ok(Pattern::Counter),
            1 => Ok(Pattern::Prbs),
            found => Err(FrameError::UnknownPattern { found }),
        }
    }
}

/// The kind of a frame fault, one per error counter of the RTL frame checker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The magic number is wrong.
    Magic,
    /// The format version is not [`VERSION`].
    Version,
    /// The frame is too short or too long, or its length disagrees with its header.
    Length,
    /// The CRC trailer does not match the frame's contents.
    Crc,
    /// The payload does not follow the pattern its header names.
    Pattern,
}

/// What is wrong with a frame, or with a request to build one.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FrameError {
    /// Fewer bytes than the shortest legal frame.
    #[error("frame of {len} bytes is shorter than the minimum of {MIN_FRAME_LEN}: it was truncated or is not a frame")]
    TooShort {
        /// Bytes received.
        len: usize,
    },
    /// More bytes than the longest legal frame.
    #[error("frame of {len} bytes is longer than the maximum of {MAX_FRAME_LEN}: frames were merged or the length is wrong")]
    TooLong {
        /// Bytes received.
        len: usize,
    },
    /// The header's payload length disagrees with the number of bytes received.
    #[error("header says {payload_len} payload bytes (frame of {} bytes) but {actual_len} bytes arrived: the frame was cut short or merged", *payload_len as u64 + OVERHEAD as u64)]
    LengthMismatch {
        /// Payload length field of the header.
        payload_len: u32,
        /// Bytes received.
        actual_len: usize,
    },
    /// A frame length outside 64..=65536 was asked for.
    #[error("cannot build a frame of {len} bytes: the length must be {MIN_FRAME_LEN} to {MAX_FRAME_LEN}")]
    InvalidLength {
        /// The length asked for.
        len: usize,
    },
    /// The magic number is wrong.
    #[error(
        "magic is {found:#010x}, expected {MAGIC:#010x}: this is not a frame or it is misaligned"
    )]
    BadMagic {
        /// Magic field as received.
        found: u32,
    },
    /// The format version is not supported.
    #[error("format version {found} is not supported (this build knows version {VERSION}): update the receiver or the card")]
    BadVersion {
        /// Version field as received.
        found: u8,
    },
    /// The pattern field names no known pattern.
    #[error("pattern {found} is unknown (0 counter, 1 PRBS)")]
    UnknownPattern {
        /// Pattern field as received.
        found: u8,
    },
    /// The CRC trailer does not match.
    #[error("CRC trailer is {stored:#010x} but the frame's bytes give {computed:#010x}: the frame was corrupted")]
    BadCrc {
        /// CRC computed over the received bytes.
        computed: u32,
        /// CRC trailer as received.
        stored: u32,
    },
    /// The payload departs from its pattern.
    #[error("payload byte {offset} is {found:#04x}, the pattern gives {expected:#04x}: the payload was corrupted at the source")]
    PayloadMismatch {
        /// Offset of the first wrong byte from the start of the payload.
        offset: usize,
        /// Byte the pattern gives.
        expected: u8,
        /// Byte received.
        found: u8,
    },
}

impl FrameError {
    /// The checker counter this fault belongs to.
    pub fn kind(&self) -> ErrorKind {
        match self {
            FrameError::TooShort { .. }
            | FrameError::TooLong { .. }
            | FrameError::LengthMismatch { .. }
            | FrameError::InvalidLength { .. } => ErrorKind::Length,
            FrameError::BadMagic { .. } => ErrorKind::Magic,
            FrameError::BadVersion { .. } => ErrorKind::Version,
            FrameError::BadCrc { .. } => ErrorKind::Crc,
            FrameError::UnknownPattern { .. } | FrameError::PayloadMismatch { .. } => {
                ErrorKind::Pattern
            }
        }
    }
}

/// The header fields that a frame's producer chooses; the payload length follows from the
/// frame length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Header {
    /// Channel that produced the frame.
    pub channel: u8,
    /// Payload pattern.
    pub pattern: Pattern,
    /// Sequence number.
    pub sequence: u32,
    /// `axi_aclk` cycle at which the source started the frame.
    pub timestamp: u64,
    /// Pattern seed (the PRBS uses it; the counter pattern ignores it).
    pub seed: u32,
}

impl Header {
    /// The header of a frame a host makes up to send (a loop or ECHO request, a test frame):
    /// channel 0, the counter pattern, sequence number `sequence`, no timestamp and no seed.
    pub fn counter(sequence: u32) -> Header {
        Header {
            channel: 0,
            pattern: Pattern::Counter,
            sequence,
            timestamp: 0,
            seed: 0,
        }
    }
}

/// A frame that passed every check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Parsed {
    /// Its header.
    pub header: Header,
    /// Its total length in bytes, header and trailer included.
    pub frame_len: usize,
    /// Its CRC trailer.
    pub crc: u32,
}

impl Parsed {
    /// Payload bytes of the frame.
    pub fn payload_len(&self) -> usize {
        self.frame_len - OVERHEAD
    }
}

/// The initial PRBS-31 state of a frame: bits 30..0 of `seed ^ (sequence * PRBS_SEQ_MULT)`,
/// or all ones if those bits are zero (the all-zero state would lock the generator).
pub fn prbs_state(seed: u32, sequence: u32) -> u32 {
    let s = (seed ^ sequence.wrapping_mul(PRBS_SEQ_MULT)) & 0x7FFF_FFFF;
    if s == 0 {
        0x7FFF_FFFF
    } else {
        s
    }
}

/// The PRBS-31 generator of the payload: a Fibonacci LFSR, polynomial x^31 + x^28 + 1.
///
/// Each step computes `b = s[30] ^ s[27]`, shifts `b` into the state from below
/// (`s = (s << 1 | b) & 0x7fff_ffff`) and outputs `b`. Payload bytes take the output bits
/// least significant bit first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prbs31 {
    state: u32,
}

impl Prbs31 {
    /// A generator starting from `state` (bits above 30 are ignored; zero becomes all ones).
    pub fn new(state: u32) -> Prbs31 {
        let s = state & 0x7FFF_FFFF;
        Prbs31 {
            state: if s == 0 { 0x7FFF_FFFF } else { s },
        }
    }

    /// The generator of one frame's payload.
    pub fn for_frame(seed: u32, sequence: u32) -> Prbs31 {
        Prbs31::new(prbs_state(seed, sequence))
    }

    /// The current 31-bit state.
    pub fn state(&self) -> u32 {
        self.state
    }

    /// The next output bit.
    pub fn next_bit(&mut self) -> u8 {
        let b = ((self.state >> 30) ^ (self.state >> 27)) & 1;
        self.state = ((self.state << 1) | b) & 0x7FFF_FFFF;
        b as u8
    }

    /// The next eight output bits as a byte, the first bit in the least significant place.
    pub fn next_byte(&mut self) -> u8 {
        (0..8).fold(0u8, |acc, i| acc | (self.next_bit() << i))
    }
}

/// Writes the payload of the frame with this pattern, seed and sequence number into `out`
/// (whose length is the payload length).
pub fn fill_payload(pattern: Pattern, seed: u32, sequence: u32, out: &mut [u8]) {
    match pattern {
        Pattern::Counter => {
            let base = sequence << 16;
            for (k, chunk) in out.chunks_mut(4).enumerate() {
                let word = base.wrapping_add(k as u32).to_le_bytes();
                chunk.copy_from_slice(&word[..chunk.len()]);
            }
        }
        Pattern::Prbs => {
            let mut prbs = Prbs31::for_frame(seed, sequence);
            for b in out {
                *b = prbs.next_byte();
            }
        }
    }
}

/// Builds the frame of `frame_len` bytes (64..=65536) with this header.
pub fn build(header: &Header, frame_len: usize) -> Result<Vec<u8>, FrameError> {
    if !(MIN_FRAME_LEN..=MAX_FRAME_LEN).contains(&frame_len) {
        return Err(FrameError::InvalidLength { len: frame_len });
    }
    let mut f = vec![0u8; frame_len];
    let payload_len = (frame_len - OVERHEAD) as u32;
    f[offset::MAGIC..][..4].copy_from_slice(&MAGIC.to_le_bytes());
    f[offset::VERSION] = VERSION;
    f[offset::CHANNEL] = header.channel;
    f[offset::PATTERN] = header.pattern as u8;
    f[offset::SEQUENCE..][..4].copy_from_slice(&header.sequence.to_le_bytes());
    f[offset::PAYLOAD_LEN..][..4].copy_from_slice(&payload_len.to_le_bytes());
    f[offset::TIMESTAMP..][..8].copy_from_slice(&header.timestamp.to_le_bytes());
    f[offset::SEED..][..4].copy_from_slice(&header.seed.to_le_bytes());
    let crc_at = frame_len - TRAILER_LEN;
    fill_payload(
        header.pattern,
        header.seed,
        header.sequence,
        &mut f[HEADER_LEN..crc_at],
    );
    let crc = CRC32.checksum(&f[..crc_at]);
    f[crc_at..].copy_from_slice(&crc.to_le_bytes());
    Ok(f)
}

fn le32(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w)
}

fn le64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Reads the header fields of a frame without checking its length, CRC or payload. The
/// magic and version must be right, since without them the fields mean nothing.
pub fn parse_header(bytes: &[u8]) -> Result<(Header, u32), FrameError> {
    if bytes.len() < HEADER_LEN {
        return Err(FrameError::TooShort { len: bytes.len() });
    }
    let magic = le32(bytes, offset::MAGIC);
    if magic != MAGIC {
        return Err(FrameError::BadMagic { found: magic });
    }
    if bytes[offset::VERSION] != VERSION {
        return Err(FrameError::BadVersion {
            found: bytes[offset::VERSION],
        });
    }
    let header = Header {
        channel: bytes[offset::CHANNEL],
        pattern: Pattern::try_from(bytes[offset::PATTERN])?,
        sequence: le32(bytes, offset::SEQUENCE),
        timestamp: le64(bytes, offset::TIMESTAMP),
        seed: le32(bytes, offset::SEED),
    };
    Ok((header, le32(bytes, offset::PAYLOAD_LEN)))
}

/// Validates a whole frame, in this order: length limits, magic, version, pattern field,
/// header length against received length, CRC, payload pattern. The first fault found is
/// returned.
pub fn parse(bytes: &[u8]) -> Result<Parsed, FrameError> {
    let len = bytes.len();
    if len < MIN_FRAME_LEN {
        return Err(FrameError::TooShort { len });
    }
    if len > MAX_FRAME_LEN {
        return Err(FrameError::TooLong { len });
    }
    let (header, payload_len) = parse_header(bytes)?;
    if payload_len as u64 + OVERHEAD as u64 != len as u64 {
        return Err(FrameError::LengthMismatch {
            payload_len,
            actual_len: len,
        });
    }
    let crc_at = len - TRAILER_LEN;
    let computed = CRC32.checksum(&bytes[..crc_at]);
    let stored = le32(bytes, crc_at);
    if computed != stored {
        return Err(FrameError::BadCrc { computed, stored });
    }
    let payload = &bytes[HEADER_LEN..crc_at];
    let mut expected = vec![0u8; payload.len()];
    fill_payload(header.pattern, header.seed, header.sequence, &mut expected);
    if let Some(offset) = payload.iter().zip(&expected).position(|(a, b)| a != b) {
        return Err(FrameError::PayloadMismatch {
            offset,
            expected: expected[offset],
            found: payload[offset],
        });
    }
    Ok(Parsed {
        header,
        frame_len: len,
        crc: stored,
    })
}

/// One beat of the 128-bit AXI-Stream bus: byte `i` of the stream is `data[i]`, valid when
/// bit `i` of `keep` is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Beat {
    /// TDATA as bytes, lane 0 first.
    pub data: [u8; BEAT_BYTES],
    /// TKEEP, one bit per byte lane.
    pub keep: u16,
    /// TLAST.
    pub last: bool,
}

/// The TKEEP of a beat that carries `bytes` bytes (1..=16) from lane 0 up.
pub fn keep_for(bytes: usize) -> u16 {
    if bytes >= BEAT_BYTES {
        0xFFFF
    } else {
        ((1u32 << bytes) - 1) as u16
    }
}

/// Number of beats of a frame of `frame_len` bytes.
pub fn beat_count(frame_len: usize) -> usize {
    frame_len.div_ceil(BEAT_BYTES)
}

/// Splits a frame into stream beats: TKEEP all ones except on the TLAST beat, which keeps its
/// bytes from lane 0 up (the XDMA rule). Unused lanes of the last beat are zero.
pub fn beats(frame: &[u8]) -> impl Iterator<Item = Beat> + '_ {
    let n = beat_count(frame.len());
    frame.chunks(BEAT_BYTES).enumerate().map(move |(i, c)| {
        let mut data = [0u8; BEAT_BYTES];
        data[..c.len()].copy_from_slice(c);
        Beat {
            data,
            keep: keep_for(c.len()),
            last: i + 1 == n,
        }
    })
}

/// A stream beat that breaks the XDMA TKEEP rule or a stream that never ends a frame.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum StreamError {
    /// A beat other than the last one did not keep all 16 bytes.
    #[error("beat {beat} of a frame has TKEEP {keep:#06x} without TLAST: only the last beat may be partial")]
    PartialBeat {
        /// Beat index within the frame.
        beat: usize,
        /// Its TKEEP.
        keep: u16,
    },
    /// The last beat's TKEEP is zero or has holes.
    #[error("last beat has TKEEP {keep:#06x}: it must keep 1 to 16 bytes from lane 0 up")]
    BadLastKeep {
        /// Its TKEEP.
        keep: u16,
    },
    /// A frame grew past the longest legal frame without TLAST.
    #[error("no TLAST within {MAX_FRAME_LEN} bytes: the stream lost a frame boundary")]
    Runaway,
}

/// Reassembles frames from stream beats, enforcing the TKEEP rule.
#[derive(Debug, Default, Clone)]
pub struct Assembler {
    buf: Vec<u8>,
    beats: usize,
}

impl Assembler {
    /// An assembler at a frame boundary.
    pub fn new() -> Assembler {
        Assembler::default()
    }

    /// Whether a frame is partly received.
    pub fn in_frame(&self) -> bool {
        self.beats != 0
    }

    /// Takes one beat; returns the frame's bytes when the beat ends it. After an error the
    /// partial frame is discarded.
    pub fn push(&mut self, beat: &Beat) -> Result<Option<Vec<u8>>, StreamError> {
        let n = if beat.last {
            let n = beat.keep.trailing_ones() as usize;
            if n == 0 || u32::from(beat.keep) >> n != 0 {
                self.reset();
                return Err(StreamError::BadLastKeep { keep: beat.keep });
            }
            n
        } else {
            if beat.keep != 0xFFFF {
                let at = self.beats;
                self.reset();
                return Err(StreamError::PartialBeat {
                    beat: at,
                    keep: beat.keep,
                });
            }
            BEAT_BYTES
        };
        if self.buf.len() + n > MAX_FRAME_LEN + BEAT_BYTES {
            self.reset();
            return Err(StreamError::Runaway);
        }
        self.buf.extend_from_slice(&beat.data[..n]);
        self.beats += 1;
        if beat.last {
            self.beats = 0;
            Ok(Some(std::mem::take(&mut self.buf)))
        } else {
            Ok(None)
        }
    }

    fn reset(&mut self) {
        self.buf.clear();
        self.beats = 0;
    }
}

/// How a sequence number relates to the one expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Continuity {
    /// The first frame seen: nothing to compare with.
    First,
    /// The expected number.
    InOrder,
    /// Ahead of the expected number; `missing` frames never arrived (the gap minus the bad
    /// frames received in it).
    Gap {
        /// Frames counted as missing.
        missing: u64,
    },
    /// Behind the expected number (a repeat or a restarted source); tracking restarts here.
    Backward,
}

/// Follows the sequence numbers of good frames and counts the frames that never arrived.
///
/// A bad frame's sequence number cannot be trusted, so bad frames only say "one frame arrived
/// here" ([`SeqTracker::bad`]); the next good frame's gap is reduced by them, so that a frame
/// is counted either bad or missing, never both. The RTL frame checker counts the same way.
/// A jump of 2^31 or more is taken as a step backward.
#[derive(Debug, Default, Clone)]
pub struct SeqTracker {
    expected: Option<u32>,
    bad_since_good: u64,
    missing: u64,
    good: u64,
    bad: u64,
    backward: u64,
}

impl SeqTracker {
    /// A tracker that has seen nothing.
    pub fn new() -> SeqTracker {
        SeqTracker::default()
    }

    /// Records a good frame with this sequence number.
    pub fn good(&mut self, sequence: u32) -> Continuity {
        self.good += 1;
        let bad = std::mem::take(&mut self.bad_since_good);
        let c = match self.expected {
            None => Continuity::First,
            Some(e) if e == sequence => Continuity::InOrder,
            Some(e) => {
                let d = sequence.wrapping_sub(e);
                if d < 0x8000_0000 {
                    let missing = u64::from(d).saturating_sub(bad);
                    self.missing += missing;
                    Continuity::Gap { missing }
                } else {
                    self.backward += 1;
                    Continuity::Backward
                }
            }
        };
        self.expected = Some(sequence.wrapping_add(1));
        c
    }

    /// Records a frame that failed validation.
    pub fn bad(&mut self) {
        self.bad += 1;
        self.bad_since_good += 1;
    }

    /// Validates `bytes` as a frame and records it; returns the parse result.
    pub fn observe(&mut self, bytes: &[u8]) -> Result<(Parsed, Continuity), FrameError> {
        match parse(bytes) {
            Ok(p) => Ok((p, self.good(p.header.sequence))),
            Err(e) => {
                self.bad();
                Err(e)
            }
        }
    }

    /// Frames counted as missing so far.
    pub fn missing(&self) -> u64 {
        self.missing
    }

    /// Good frames seen.
    pub fn good_frames(&self) -> u64 {
        self.good
    }

    /// Bad frames seen.
    pub fn bad_frames(&self) -> u64 {
        self.bad
    }

    /// Steps backward seen.
    pub fn backward(&self) -> u64 {
        self.backward
    }

    /// The sequence number the next good frame should carry, once one frame was seen.
    pub fn expected(&self) -> Option<u32> {
        self.expected
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn header(pattern: Pattern, sequence: u32) -> Header {
        Header {
            channel: 3,
            pattern,
            sequence,
            timestamp: 0x0123_4567_89ab_cdef,
            seed: 0xC0FF_EE00,
        }
    }

    #[test]
    fn fields_sit_at_their_documented_offsets() {
        let f = build(&header(Pattern::Counter, 0x0102_0304), 100).expect("valid length");
        assert_eq!(&f[0..4], b"DAQF");
        assert_eq!(f[4], 1);
        assert_eq!(f[5], 3);
        assert_eq!(f[6], 0);
        assert_eq!(f[7], 0);
        assert_eq!(&f[8..12], &[4, 3, 2, 1]);
        assert_eq!(&f[12..16], &64u32.to_le_bytes());
        assert_eq!(&f[16..24], &0x0123_4567_89ab_cdefu64.to_le_bytes());
        assert_eq!(&f[24..28], &0xC0FF_EE00u32.to_le_bytes());
        assert_eq!(&f[28..32], &[0, 0, 0, 0]);
        // Counter words carry the low half of the sequence number in their upper half.
        assert_eq!(&f[32..36], &[0, 0, 4, 3]);
        assert_eq!(&f[36..40], &[1, 0, 4, 3]);
        let crc = CRC32.checksum(&f[..96]);
        assert_eq!(&f[96..], &crc.to_le_bytes());
    }

    #[test]
    fn crc_is_zlib_crc32() {
        // The standard check value of CRC-32/ISO-HDLC.
        assert_eq!(CRC32.checksum(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn prbs31_has_the_documented_recurrence() {
        // Output bit n equals bit n-31 xor bit n-28 once 31 bits are out.
        let mut p = Prbs31::new(0x1234_5678);
        let bits: Vec<u8> = (0..400).map(|_| p.next_bit()).collect();
        for n in 31..bits.len() {
            assert_eq!(bits[n], bits[n - 31] ^ bits[n - 28], "bit {n}");
        }
        assert_eq!(prbs_state(0, 0), 0x7FFF_FFFF, "all-zero state is replaced");
        assert_ne!(prbs_state(7, 1), prbs_state(7, 2));
    }

    #[test]
    fn each_fault_has_its_kind() {
        let good = build(&header(Pattern::Prbs, 9), 64).expect("valid length");
        assert!(parse(&good).is_ok());
        let mut f = good.clone();
        f[0] ^= 1;
        assert_eq!(parse(&f).map_err(|e| e.kind()), Err(ErrorKind::Magic));
        let mut f = good.clone();
        f[4] = 2;
        assert_eq!(parse(&f).map_err(|e| e.kind()), Err(ErrorKind::Version));
        let mut f = good.clone();
        f[12] = 29;
        assert_eq!(parse(&f).map_err(|e| e.kind()), Err(ErrorKind::Length));
        assert_eq!(
            parse(&good[..63]).map_err(|e| e.kind()),
            Err(ErrorKind::Length)
        );
        let mut f = good.clone();
        f[40] ^= 0x80;
        assert_eq!(parse(&f).map_err(|e| e.kind()), Err(ErrorKind::Crc));
        // A payload that is consistent with its CRC but not with its pattern.
        let mut f = good.clone();
        f[40] ^= 0x80;
        let crc = CRC32.checksum(&f[..60]);
        f[60..].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(
            parse(&f),
            Err(FrameError::PayloadMismatch {
                offset: 8,
                expected: good[40],
                found: good[40] ^ 0x80
            })
        );
        assert_eq!(
            build(&header(Pattern::Counter, 0), 63),
            Err(FrameError::InvalidLength { len: 63 })
        );
        assert!(build(&header(Pattern::Counter, 0), 65537).is_err());
    }

    #[test]
    fn tracker_counts_gaps_once() {
        let mut t = SeqTracker::new();
        assert_eq!(t.good(10), Continuity::First);
        assert_eq!(t.good(11), Continuity::InOrder);
        assert_eq!(t.good(15), Continuity::Gap { missing: 3 });
        t.bad();
        t.bad();
        assert_eq!(t.good(18), Continuity::Gap { missing: 0 });
        t.bad();
        assert_eq!(t.good(21), Continuity::Gap { missing: 1 });
        assert_eq!(t.good(3), Continuity::Backward);
        assert_eq!(t.good(4), Continuity::InOrder);
        // A jump of 2^31 or more is a step backward; gaps across the wrap are counted.
        assert_eq!(t.good(u32::MAX), Continuity::Backward);
        assert_eq!(t.good(1), Continuity::Gap { missing: 1 });
        assert_eq!(t.good_frames(), 9);
        assert_eq!(t.bad_frames(), 3);
        assert_eq!(t.backward(), 2);
        assert_eq!(t.missing(), 3 + 1 + 1);
    }

    #[test]
    fn assembler_enforces_the_keep_rule() {
        let mut a = Assembler::new();
        let full = Beat {
            data: [0; 16],
            keep: 0xFFFF,
            last: false,
        };
        assert_eq!(a.push(&full), Ok(None));
        let holey = Beat {
            keep: 0x0F0F,
            last: true,
            ..full
        };
        assert_eq!(
            a.push(&holey),
            Err(StreamError::BadLastKeep { keep: 0x0F0F })
        );
        let partial = Beat {
            keep: 0x00FF,
            ..full
        };
        assert_eq!(
            a.push(&partial),
            Err(StreamError::PartialBeat {
                beat: 0,
                keep: 0x00FF
            })
        );
        let empty = Beat {
            keep: 0,
            last: true,
            ..full
        };
        assert!(a.push(&empty).is_err());
    }

    /// The hex bytes of the fenced block after `marker` in docs/frame-format.md.
    fn doc_example(marker: &str) -> Vec<u8> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/frame-format.md");
        let doc = std::fs::read_to_string(path).expect("docs/frame-format.md is readable");
        let start = doc
            .find(marker)
            .expect("the example marker is in the document");
        doc[start..]
            .lines()
            .skip_while(|l| !l.starts_with("```"))
            .skip(1)
            .take_while(|l| !l.starts_with("```"))
            .flat_map(|l| {
                l.split_once(": ")
                    .map_or("", |(_, hex)| hex)
                    .split_whitespace()
            })
            .map(|h| u8::from_str_radix(h, 16).expect("hex byte"))
            .collect()
    }

    #[test]
    fn the_documented_examples_are_what_the_crate_builds() {
        let h = Header {
            channel: 2,
            pattern: Pattern::Counter,
            sequence: 5,
            timestamp: 0x1234,
            seed: 0,
        };
        let f = build(&h, 67).expect("valid length");
        assert_eq!(doc_example("<!-- example:counter-67 -->"), f);
        let last = beats(&f).last().expect("a frame has beats");
        assert_eq!((last.keep, last.last), (0x0007, true));
        let h = Header {
            channel: 1,
            pattern: Pattern::Prbs,
            sequence: 7,
            timestamp: 0x10,
            seed: 0x00C0_FFEE,
        };
        let f = build(&h, 64).expect("valid length");
        assert_eq!(doc_example("<!-- example:prbs-payload -->"), &f[32..60]);
    }

    fn any_pattern() -> impl Strategy<Value = Pattern> {
        prop_oneof![Just(Pattern::Counter), Just(Pattern::Prbs)]
    }

    proptest! {
        #[test]
        fn build_parse_round_trip(
            pattern in any_pattern(),
            channel: u8,
            sequence: u32,
            timestamp: u64,
            seed: u32,
            len in MIN_FRAME_LEN..=MAX_FRAME_LEN,
        ) {
            let h = Header { channel, pattern, sequence, timestamp, seed };
            let f = build(&h, len).expect("valid length");
            prop_assert_eq!(f.len(), len);
            let p = parse(&f).expect("a built frame parses");
            prop_assert_eq!(p.header, h);
            prop_assert_eq!(p.frame_len, len);
            prop_assert_eq!(CRC32.checksum(&f), CRC_RESIDUE);
        }

        #[test]
        fn beats_round_trip(len in MIN_FRAME_LEN..=4096usize, sequence: u32, pattern in any_pattern()) {
            let h = Header { channel: 0, pattern, sequence, timestamp: 0, seed: 1 };
            let f = build(&h, len).expect("valid length");
            let bs: Vec<Beat> = beats(&f).collect();
            prop_assert_eq!(bs.len(), beat_count(len));
            let mut a = Assembler::new();
            let mut out = None;
            for (i, b) in bs.iter().enumerate() {
                prop_assert_eq!(b.last, i + 1 == bs.len());
                if !b.last {
                    prop_assert_eq!(b.keep, 0xFFFF);
                }
                out = a.push(b).expect("beats follow the rule");
            }
            prop_assert_eq!(out, Some(f));
        }

        #[test]
        fn any_single_bit_flip_is_caught(len in MIN_FRAME_LEN..=512usize, bit in 0usize..(512 * 8), pattern in any_pattern()) {
            let h = Header { channel: 1, pattern, sequence: 77, timestamp: 5, seed: 6 };
            let mut f = build(&h, len).expect("valid length");
            let bit = bit % (len * 8);
            // The CRC covers every byte, flags and reserved ones too.
            f[bit / 8] ^= 1 << (bit % 8);
            prop_assert!(parse(&f).is_err());
        }

        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = parse(&bytes);
            let _ = parse_header(&bytes);
        }
    }
}
