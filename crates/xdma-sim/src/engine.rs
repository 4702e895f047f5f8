//! A model of the XDMA IP's DMA engines: how one transfer becomes descriptors, how each
//! descriptor becomes AXI bursts, and how many requests each channel's engine keeps in flight.
//!
//! This is the logic that drives the card's AXI ports in the simulated card and whose request
//! sizes and windows the timing model ([`crate::timing`]) uses, so that both agree on how a
//! transfer is cut up.

use axi_bfm::burst::{self, Piece};
use xdma_core::Direction;
use xdma_core::{Error, Result};

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

/// Splits `len` bytes at card address `addr` into the AXI bursts the engine issues: INCR,
/// full-width beats, never across a 4 KiB boundary and never longer than
/// `cfg.max_burst_beats` beats.
pub fn bursts(cfg: &EngineConfig, addr: u64, len: u64) -> Vec<Piece> {
    burst::split(
        0,
        addr,
        len as usize,
        cfg.data_bytes as usize,
        cfg.max_burst_beats,
    )
}

/// Splits `len` bytes at `addr` into pieces of at most `max` bytes that never cross a 4 KiB
/// boundary: the rule for PCIe requests (memory reads up to the max read request size, memory
/// writes up to the max payload size). It is the AXI split with one-byte lanes.
pub fn pcie_pieces(addr: u64, len: u64, max: u64) -> Vec<u64> {
    let max = u32::try_from(max).unwrap_or(u32::MAX);
    burst::split(0, addr, len as usize, 1, max)
        .into_iter()
        .map(|p| p.bytes as u64)
        .collect()
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
    fn pcie_pieces_respect_size_and_boundary() {
        assert_eq!(pcie_pieces(0, 1024, 512), vec![512, 512]);
        assert_eq!(pcie_pieces(0xf00, 512, 512), vec![256, 256]);
        assert_eq!(pcie_pieces(0x10, 100, 64), vec![64, 36]);
    }

    #[test]
    fn limits_are_checked_against_the_ip() {
        let bad = |r, w| {
            ChannelLimits {
                max_outstanding_reads: r,
                max_outstanding_writes: w,
            }
            .validate(Direction::H2C)
            .expect_err("outside the IP's range")
            .kind()
        };
        assert_eq!(bad(1, 8), xdma_core::ErrorKind::Config);
        assert_eq!(bad(65, 8), xdma_core::ErrorKind::Config);
        assert_eq!(bad(8, 1), xdma_core::ErrorKind::Config);
        assert_eq!(bad(8, 33), xdma_core::ErrorKind::Config);
        for (r, w) in [(2, 2), (64, 32)] {
            ChannelLimits {
                max_outstanding_reads: r,
                max_outstanding_writes: w,
            }
            .validate(Direction::C2H)
            .expect("inside the IP's range");
        }
        let mut cfg = EngineConfig::default();
        assert!(cfg.validate().is_ok());
        cfg.max_burst_beats = 257;
        assert!(cfg.validate().is_err());
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
            let db = u64::from(cfg.data_bytes);
            let mut next = addr;
            for x in bursts(&cfg, addr, len) {
                let b = x.burst;
                prop_assert_eq!(b.addr, next);
                prop_assert!(x.bytes > 0);
                prop_assert!(b.beats() <= cfg.max_burst_beats);
                let last = b.addr + x.bytes as u64 - 1;
                prop_assert_eq!(b.addr / burst::BOUNDARY, last / burst::BOUNDARY, "crosses 4 KiB: {:?}", x);
                prop_assert_eq!(u64::from(b.beats()), last / db - b.addr / db + 1);
                prop_assert_eq!(b.lane_bytes(cfg.data_bytes as usize) as u64 >= x.bytes as u64, true);
                next += x.bytes as u64;
            }
            prop_assert_eq!(next, addr + len);
        }
    }
}
