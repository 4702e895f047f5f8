//! A model of the XDMA IP's DMA engines: how one transfer becomes descriptors, how each
//! descriptor becomes AXI bursts, and how many requests each channel's engine keeps in flight.
//!
//! This is the logic that drives the card's AXI ports in the simulated card and whose request
//! sizes and windows the timing model ([`crate::timing`]) uses, so that both agree on how a
//! transfer is cut up.

use std::collections::{BTreeSet, VecDeque};

use xdma_core::Direction;
use xdma_core::{Error, Result};

/// AXI's rule: a burst must not cross a 4 KiB address boundary.
pub const AXI_BOUNDARY: u64 = 4096;

/// The host page size by which the driver's scatter list is cut (one pinned page per entry).
pub const HOST_PAGE: u64 = 4096;

/// The largest length one XDMA descriptor can carry: its length field has 28 bits.
pub const MAX_DESCRIPTOR_BYTES: u64 = (1 << 28) - 1;

/// The IP's allowed range of outstanding read requests per channel.
pub const READS_RANGE: std::ops::RangeInclusive<u32> = 2..=64;
/// The IP's allowed range of outstanding write requests per channel.
pub const WRITES_RANGE: std::ops::RangeInclusive<u32> = 2..=32;

/// How many requests one channel's engine may have in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChannelLimits {
    /// Read requests in flight: for H2C, PCIe memory reads of host memory; for C2H, AXI read
    /// bursts on the card. The IP allows 2 to 64.
    pub max_outstanding_reads: u32,
    /// Write requests in flight awaiting their response: for H2C, AXI write bursts on the card;
    /// for C2H, writes to the host. The IP allows 2 to 32.
    pub max_outstanding_writes: u32,
}

impl Default for ChannelLimits {
    fn default() -> Self {
        ChannelLimits {
            // Eight reads: the reference README reads the C2H ceiling (2.47-2.52 GB/s) as an
            // in-flight read window over the read round trip. With MPS-sized 256-byte bursts
            // and a round trip of about 0.8 us (a PCIe round trip of 0.5 us plus a DDR read
            // behind a clock crossing, about 0.3 us), 2.5 GB/s x 0.8 us = 2 KiB = 8 bursts.
            max_outstanding_reads: 8,
            // Sixteen writes: half the IP's maximum. Writes are posted on PCIe and answered
            // within a few hundred ns by the card's AXI slave, so this window never limits.
            max_outstanding_writes: 16,
        }
    }
}

impl ChannelLimits {
    /// Checks the limits against the ranges the IP allows.
    pub fn validate(&self, dir: Direction) -> Result<()> {
        if !READS_RANGE.contains(&self.max_outstanding_reads) {
            return Err(Error::Config(format!(
                "{dir} max_outstanding_reads = {}: the XDMA IP allows {} to {}",
                self.max_outstanding_reads,
                READS_RANGE.start(),
                READS_RANGE.end()
            )));
        }
        if !WRITES_RANGE.contains(&self.max_outstanding_writes) {
            return Err(Error::Config(format!(
                "{dir} max_outstanding_writes = {}: the XDMA IP allows {} to {}",
                self.max_outstanding_writes,
                WRITES_RANGE.start(),
                WRITES_RANGE.end()
            )));
        }
        Ok(())
    }
}

/// The engine's shape: bus width, burst length, alignment and per-channel limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EngineConfig {
    /// Bytes per AXI beat. Default 16: the reference board's 128-bit AXI at 250 MHz.
    pub data_bytes: u32,
    /// Most beats in one AXI burst. Default 16 (256 bytes): the engine turns each C2H read
    /// burst into one memory write TLP, so bursts are sized to the link's max payload size
    /// (256 bytes, see [`crate::timing::LinkConfig::max_payload`]).
    pub max_burst_beats: u32,
    /// The engines' address alignment in bytes; 1 means any address. Default 1: the IP is
    /// built with unaligned transfers allowed, as the driver's alignment query reports on the
    /// reference board.
    pub alignment: u64,
    /// Limits of every H2C channel.
    pub h2c: ChannelLimits,
    /// Limits of every C2H channel.
    pub c2h: ChannelLimits,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            data_bytes: 16,
            max_burst_beats: 16,
            alignment: 1,
            h2c: ChannelLimits::default(),
            c2h: ChannelLimits::default(),
        }
    }
}

impl EngineConfig {
    /// Checks every field against what AXI and the IP allow.
    pub fn validate(&self) -> Result<()> {
        if !self.data_bytes.is_power_of_two() || !(4..=128).contains(&self.data_bytes) {
            return Err(Error::Config(format!(
                "engine data_bytes = {}: AXI data widths are 32 to 1024 bits (4 to 128 bytes, a power of two)",
                self.data_bytes
            )));
        }
        if !(1..=256).contains(&self.max_burst_beats) {
            return Err(Error::Config(format!(
                "engine max_burst_beats = {}: an AXI4 INCR burst has 1 to 256 beats",
                self.max_burst_beats
            )));
        }
        if !self.alignment.is_power_of_two() || self.alignment > HOST_PAGE {
            return Err(Error::Config(format!(
                "engine alignment = {}: a power of two from 1 to {HOST_PAGE}",
                self.alignment
            )));
        }
        self.h2c.validate(Direction::H2C)?;
        self.c2h.validate(Direction::C2H)
    }

    /// The limits of a direction's channels.
    pub fn limits(&self, dir: Direction) -> ChannelLimits {
        match dir {
            Direction::H2C => self.h2c,
            Direction::C2H => self.c2h,
        }
    }

    /// The most bytes one burst can carry.
    pub fn max_burst_bytes(&self) -> u64 {
        u64::from(self.max_burst_beats) * u64::from(self.data_bytes)
    }
}

/// One XDMA descriptor: a contiguous piece of a transfer on both the host and the card side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Descriptor {
    /// Host bus address of the piece.
    pub host_addr: u64,
    /// Card address of the piece.
    pub card_addr: u64,
    /// Length in bytes.
    pub len: u64,
}

/// Splits a transfer as the driver does: one descriptor per host page run of the pinned user
/// buffer (pages are not physically contiguous in general, so each page is its own run), and
/// never more than a descriptor's 28-bit length.
pub fn descriptors(host_addr: u64, card_addr: u64, len: u64) -> Vec<Descriptor> {
    let mut out = Vec::with_capacity(len.div_ceil(HOST_PAGE) as usize + 1);
    let mut done = 0;
    while done < len {
        let h = host_addr + done;
        let to_page_end = HOST_PAGE - h % HOST_PAGE;
        let n = (len - done).min(to_page_end).min(MAX_DESCRIPTOR_BYTES);
        out.push(Descriptor {
            host_addr: h,
            card_addr: card_addr + done,
            len: n,
        });
        done += n;
    }
    out
}

/// One AXI INCR burst on the card side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Burst {
    /// The first byte's address; the burst's AxADDR is this address (an unaligned start is
    /// allowed by AXI; the first beat's strobes select the bytes from here on).
    pub addr: u64,
    /// Bytes the burst carries.
    pub len: u64,
    /// Beats on the bus (AxLEN + 1).
    pub beats: u32,
}

impl Burst {
    /// The byte strobes of beat `beat` (bit i set = byte lane i carries data), for a bus of
    /// `data_bytes` lanes.
    pub fn strobes(&self, beat: u32, data_bytes: u32) -> u128 {
        let db = u64::from(data_bytes);
        let lanes_all: u128 = if data_bytes >= 128 {
            u128::MAX
        } else {
            (1u128 << data_bytes) - 1
        };
        let first_lane = self.addr % db;
        let beat_start = self.addr - first_lane + u64::from(beat) * db;
        let lo = self.addr.max(beat_start);
        let hi = (self.addr + self.len).min(beat_start + db);
        if hi <= lo {
            return 0;
        }
        let from = lo - beat_start;
        let to = hi - beat_start;
        let upto = if to >= 128 {
            u128::MAX
        } else {
            (1u128 << to) - 1
        };
        (upto & !((1u128 << from) - 1)) & lanes_all
    }
}

/// Splits `len` bytes at card address `addr` into AXI bursts that never cross a 4 KiB boundary
/// and never exceed `cfg.max_burst_beats` beats.
pub fn bursts(cfg: &EngineConfig, addr: u64, len: u64) -> Vec<Burst> {
    let db = u64::from(cfg.data_bytes.max(1));
    let max_span = cfg.max_burst_bytes().max(db);
    let mut out = Vec::new();
    let mut a = addr;
    let end = addr + len;
    while a < end {
        let lane = a % db;
        // The burst's beats count from the aligned-down start, so an unaligned first byte
        // takes room in the first beat.
        let by_beats = max_span - lane;
        let by_boundary = AXI_BOUNDARY - a % AXI_BOUNDARY;
        let n = (end - a).min(by_beats).min(by_boundary);
        let beats = (lane + n).div_ceil(db) as u32;
        out.push(Burst {
            addr: a,
            len: n,
            beats,
        });
        a += n;
    }
    out
}

/// Splits `len` bytes at `addr` into pieces of at most `max` bytes that never cross a 4 KiB
/// boundary: the rule for PCIe requests (memory reads up to the max read request size, memory
/// writes up to the max payload size).
pub fn pcie_pieces(addr: u64, len: u64, max: u64) -> Vec<u64> {
    let mut out = Vec::with_capacity(len.div_ceil(max.max(1)) as usize + 1);
    let mut a = addr;
    let end = addr + len;
    while a < end {
        let n = (end - a)
            .min(max.max(1))
            .min(AXI_BOUNDARY - a % AXI_BOUNDARY);
        out.push(n);
        a += n;
    }
    out
}

/// A request the engine has put on a bus, with the tag its completion must name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Issued {
    /// The tag (AXI ID or PCIe tag) of this request.
    pub tag: u32,
    /// The burst.
    pub burst: Burst,
}

/// One channel's engine: a queue of bursts and windows of outstanding reads and writes that
/// never exceed the channel's limits. Completions may come back in any order, as AXI IDs and
/// PCIe tags allow.
#[derive(Debug)]
pub struct ChannelEngine {
    dir: Direction,
    limits: ChannelLimits,
    reads: VecDeque<Burst>,
    writes: VecDeque<Burst>,
    reads_in_flight: BTreeSet<u32>,
    writes_in_flight: BTreeSet<u32>,
    next_tag: u32,
}

impl ChannelEngine {
    /// An idle engine for a channel of direction `dir`.
    pub fn new(dir: Direction, limits: ChannelLimits) -> Result<ChannelEngine> {
        limits.validate(dir)?;
        Ok(ChannelEngine {
            dir,
            limits,
            reads: VecDeque::new(),
            writes: VecDeque::new(),
            reads_in_flight: BTreeSet::new(),
            writes_in_flight: BTreeSet::new(),
            next_tag: 0,
        })
    }

    /// The channel's direction.
    pub fn dir(&self) -> Direction {
        self.dir
    }

    /// Queues a transfer: its descriptors' card-side pieces become bursts on the card. For
    /// H2C these are AXI writes; for C2H, AXI reads.
    pub fn submit(&mut self, cfg: &EngineConfig, descs: &[Descriptor]) {
        for d in descs {
            for b in bursts(cfg, d.card_addr, d.len) {
                match self.dir {
                    Direction::H2C => self.writes.push_back(b),
                    Direction::C2H => self.reads.push_back(b),
                }
            }
        }
    }

    /// Issues the next read burst if the read window has room.
    pub fn issue_read(&mut self) -> Option<Issued> {
        if self.reads_in_flight.len() >= self.limits.max_outstanding_reads as usize {
            return None;
        }
        let burst = self.reads.pop_front()?;
        let tag = self.take_tag();
        self.reads_in_flight.insert(tag);
        Some(Issued { tag, burst })
    }

    /// Issues the next write burst if the write window has room.
    pub fn issue_write(&mut self) -> Option<Issued> {
        if self.writes_in_flight.len() >= self.limits.max_outstanding_writes as usize {
            return None;
        }
        let burst = self.writes.pop_front()?;
        let tag = self.take_tag();
        self.writes_in_flight.insert(tag);
        Some(Issued { tag, burst })
    }

    fn take_tag(&mut self) -> u32 {
        let t = self.next_tag;
        self.next_tag = self.next_tag.wrapping_add(1);
        t
    }

    /// Records the completion of read `tag`; an unknown tag is an error (a response the engine
    /// never asked for).
    pub fn read_done(&mut self, tag: u32) -> Result<()> {
        if self.reads_in_flight.remove(&tag) {
            Ok(())
        } else {
            Err(Error::Backend(format!(
                "{} engine: read completion with tag {tag}, which is not outstanding",
                self.dir
            )))
        }
    }

    /// Records the completion of write `tag`.
    pub fn write_done(&mut self, tag: u32) -> Result<()> {
        if self.writes_in_flight.remove(&tag) {
            Ok(())
        } else {
            Err(Error::Backend(format!(
                "{} engine: write response with tag {tag}, which is not outstanding",
                self.dir
            )))
        }
    }

    /// Reads and writes in flight.
    pub fn in_flight(&self) -> (usize, usize) {
        (self.reads_in_flight.len(), self.writes_in_flight.len())
    }

    /// True when nothing is queued or in flight.
    pub fn idle(&self) -> bool {
        self.reads.is_empty()
            && self.writes.is_empty()
            && self.reads_in_flight.is_empty()
            && self.writes_in_flight.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn descriptors_follow_host_pages() {
        let d = descriptors(0x1000, 0x10_0000, 10_000);
        assert_eq!(d.len(), 3);
        assert_eq!(d[0].len, 4096);
        assert_eq!(d[2].len, 10_000 - 8192);
        assert_eq!(d[1].card_addr, 0x10_1000);
        // An unaligned host buffer starts with a short piece.
        let d = descriptors(0x1f00, 0, 512);
        assert_eq!(d.iter().map(|x| x.len).collect::<Vec<_>>(), vec![256, 256]);
    }

    #[test]
    fn bursts_stop_at_4k_and_max_length() {
        let cfg = EngineConfig::default();
        let b = bursts(&cfg, 0xff0, 64);
        assert_eq!(b.len(), 2, "{b:?}");
        assert_eq!((b[0].addr, b[0].len, b[0].beats), (0xff0, 16, 1));
        assert_eq!((b[1].addr, b[1].len, b[1].beats), (0x1000, 48, 3));
        let b = bursts(&cfg, 0, 4096);
        assert_eq!(b.len(), 16);
        assert!(b.iter().all(|x| x.beats == 16 && x.len == 256));
        // An unaligned start counts its lanes in the first beat.
        let b = bursts(&cfg, 0x8, 256);
        assert_eq!((b[0].len, b[0].beats), (248, 16));
        assert_eq!((b[1].addr, b[1].len, b[1].beats), (0x100, 8, 1));
    }

    #[test]
    fn strobes_select_the_bytes_of_each_beat() {
        let b = Burst {
            addr: 0x13,
            len: 20,
            beats: 3,
        };
        assert_eq!(b.strobes(0, 16), 0xfff8);
        assert_eq!(b.strobes(1, 16), 0x007f);
        assert_eq!(b.strobes(2, 16), 0);
        let full = Burst {
            addr: 0,
            len: 16,
            beats: 1,
        };
        assert_eq!(full.strobes(0, 16), 0xffff);
    }

    #[test]
    fn pcie_pieces_respect_size_and_boundary() {
        assert_eq!(pcie_pieces(0, 1024, 512), vec![512, 512]);
        assert_eq!(pcie_pieces(0xf00, 512, 512), vec![256, 256]);
        assert_eq!(pcie_pieces(0x10, 100, 64), vec![64, 36]);
    }

    #[test]
    fn limits_are_checked_against_the_ip() {
        let bad = |r, w| {
            ChannelEngine::new(
                Direction::H2C,
                ChannelLimits {
                    max_outstanding_reads: r,
                    max_outstanding_writes: w,
                },
            )
            .expect_err("outside the IP's range")
            .kind()
        };
        assert_eq!(bad(1, 8), xdma_core::ErrorKind::Config);
        assert_eq!(bad(65, 8), xdma_core::ErrorKind::Config);
        assert_eq!(bad(8, 1), xdma_core::ErrorKind::Config);
        assert_eq!(bad(8, 33), xdma_core::ErrorKind::Config);
        for (r, w) in [(2, 2), (64, 32)] {
            ChannelEngine::new(
                Direction::C2H,
                ChannelLimits {
                    max_outstanding_reads: r,
                    max_outstanding_writes: w,
                },
            )
            .expect("inside the IP's range");
        }
        let mut cfg = EngineConfig::default();
        assert!(cfg.validate().is_ok());
        cfg.max_burst_beats = 257;
        assert!(cfg.validate().is_err());
    }

    #[test]
    fn unknown_completion_is_an_error() {
        let mut e = ChannelEngine::new(Direction::C2H, ChannelLimits::default()).expect("engine");
        assert!(e.read_done(7).is_err());
        assert!(e.write_done(0).is_err());
    }

    proptest! {
        #[test]
        fn bursts_cover_the_range_exactly(
            addr in 0u64..1 << 20,
            len in 1u64..20_000,
            beats_log in 0u32..9,
            width_log in 2u32..7,
        ) {
            let cfg = EngineConfig {
                data_bytes: 1 << width_log,
                max_burst_beats: 1 << beats_log.min(8),
                ..EngineConfig::default()
            };
            let b = bursts(&cfg, addr, len);
            let mut next = addr;
            for x in &b {
                prop_assert_eq!(x.addr, next);
                prop_assert!(x.len > 0);
                prop_assert!(x.beats <= cfg.max_burst_beats);
                let last = x.addr + x.len - 1;
                prop_assert_eq!(x.addr / AXI_BOUNDARY, last / AXI_BOUNDARY, "crosses 4 KiB: {:?}", x);
                let db = u64::from(cfg.data_bytes);
                prop_assert_eq!(u64::from(x.beats), last / db - x.addr / db + 1);
                let lanes: u32 = (0..x.beats).map(|i| x.strobes(i, cfg.data_bytes).count_ones()).sum();
                prop_assert_eq!(u64::from(lanes), x.len);
                next += x.len;
            }
            prop_assert_eq!(next, addr + len);
        }

        #[test]
        fn engine_never_exceeds_its_windows(
            reads in 2u32..=64,
            writes in 2u32..=32,
            len in 1u64..200_000,
            host in 0u64..8192,
            seed in any::<u64>(),
            c2h in any::<bool>(),
        ) {
            let dir = if c2h { Direction::C2H } else { Direction::H2C };
            let cfg = EngineConfig::default();
            let limits = ChannelLimits { max_outstanding_reads: reads, max_outstanding_writes: writes };
            let mut e = ChannelEngine::new(dir, limits).expect("engine");
            e.submit(&cfg, &descriptors(host, 0x4000, len));
            let mut in_flight: Vec<Issued> = Vec::new();
            let mut moved = 0;
            let mut rng = seed;
            while !e.idle() {
                while let Some(i) = if c2h { e.issue_read() } else { e.issue_write() } {
                    in_flight.push(i);
                }
                let (r, w) = e.in_flight();
                prop_assert!(r <= reads as usize && w <= writes as usize);
                prop_assert!(!in_flight.is_empty(), "engine stalled with work queued");
                // Complete a pseudo-random outstanding request: any order is legal.
                rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let k = (rng >> 33) as usize % in_flight.len();
                let done = in_flight.swap_remove(k);
                moved += done.burst.len;
                if c2h { e.read_done(done.tag).expect("known tag") } else { e.write_done(done.tag).expect("known tag") }
            }
            prop_assert_eq!(moved, len);
        }
    }
}
