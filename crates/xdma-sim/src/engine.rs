//! The XDMA IP's DMA engines' shape: how one transfer becomes descriptors, how each
//! descriptor becomes AXI bursts and PCIe requests, and how many requests the engines keep in
//! flight ([`EngineConfig`]).

use axi_bfm::burst::{self, Burst, Piece};
use xdma_core::{Error, Result};

/// The host page size by which the driver's scatter list is cut (one pinned page per entry).
pub use xdma_regmap::HOST_PAGE;

/// The largest length one XDMA descriptor can carry: its length field has 28 bits.
pub const MAX_DESCRIPTOR_BYTES: u64 = xdma_regmap::DESC_MAX_LEN as u64;

/// The IP's range of H2C request IDs per channel (PG195: "Number of Request IDs for Read
/// channel").
pub const H2C_IDS: std::ops::RangeInclusive<u32> = 2..=64;
/// The IP's range of C2H request IDs per channel ("Number of Request IDs for Write channel").
pub const C2H_IDS: std::ops::RangeInclusive<u32> = 2..=32;

/// The engines' shape: bus width, burst length, alignment, and how many requests they keep in
/// flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EngineConfig {
    /// Bytes per AXI beat: 4 to 128, a power of two, and the card's `s_axi` width. Default
    /// 16: the reference board's 128-bit AXI at 250 MHz.
    pub data_bytes: u32,
    /// Most beats in one H2C AXI write burst, 1 to 256. Default 16 (256 bytes). C2H read
    /// bursts are sized by the link's max payload instead, since each becomes one memory write
    /// TLP.
    pub max_burst_beats: u32,
    /// The engines' address alignment in bytes, a power of two up to 4096; 1 means any
    /// address. Default 1: the IP is built with unaligned transfers allowed, as the driver's
    /// alignment query reports on the reference board.
    pub alignment: u64,
    /// Request IDs of each H2C channel (2 to 64): memory reads of host memory in flight, each
    /// held from its issue until the card has taken its data (PG195: until the write has
    /// completed on the user interface). Default 8.
    pub h2c_request_ids: u32,
    /// Request IDs of each C2H channel (2 to 32): card reads in flight, each held from the AXI
    /// read's issue until the PCIe core reports its memory write done (acknowledged by the
    /// link partner). Default 8: with 256-byte reads and the card's read latency plus the
    /// link's acknowledge this window, not the link, sets the read ceiling, as the reference
    /// board shows.
    pub c2h_request_ids: u32,
    /// PCIe tags for non-posted requests, 1 to 256, shared by every channel's reads of host
    /// memory and descriptor fetches. Default 32: the 7-series integrated block without
    /// extended tags.
    pub pcie_tags: u32,
    /// Adjacent descriptors fetched with one read, 1 to 32 (the descriptors' Nxt_adj field
    /// allows 31 more after the first). Default 32: the driver lays descriptors out adjacent.
    pub descriptor_block: u32,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            data_bytes: 16,
            max_burst_beats: 16,
            alignment: 1,
            h2c_request_ids: 8,
            c2h_request_ids: 8,
            pcie_tags: 32,
            descriptor_block: 32,
        }
    }
}

impl EngineConfig {
    /// Checks every field against what AXI and the IP allow.
    pub fn validate(&self) -> Result<()> {
        if !self.data_bytes.is_power_of_two() || !(4..=128).contains(&self.data_bytes) {
            return Err(Error::Config(format!(
                "[sim] engine.data_bytes = {}: AXI data widths are 32 to 1024 bits (4 to 128 bytes, a power of two)",
                self.data_bytes
            )));
        }
        let ranges = [
            (
                "engine.max_burst_beats",
                self.max_burst_beats,
                1..=256,
                "an AXI4 INCR burst has 1 to 256 beats",
            ),
            (
                "engine.h2c_request_ids",
                self.h2c_request_ids,
                H2C_IDS,
                "the XDMA IP allows 2 to 64",
            ),
            (
                "engine.c2h_request_ids",
                self.c2h_request_ids,
                C2H_IDS,
                "the XDMA IP allows 2 to 32",
            ),
            (
                "engine.pcie_tags",
                self.pcie_tags,
                1..=256,
                "PCIe tags are 8 bits at most",
            ),
            (
                "engine.descriptor_block",
                self.descriptor_block,
                1..=32,
                "Nxt_adj counts up to 31 more",
            ),
        ];
        for (name, v, range, why) in ranges {
            if !range.contains(&v) {
                return Err(Error::Config(format!("[sim] {name} = {v}: {why}")));
            }
        }
        if !self.alignment.is_power_of_two() || self.alignment > HOST_PAGE {
            return Err(Error::Config(format!(
                "[sim] engine.alignment = {}: a power of two from 1 to {HOST_PAGE}",
                self.alignment
            )));
        }
        Ok(())
    }

    /// The most bytes one H2C write burst can carry.
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
    xdma_regmap::page_pieces(host_addr, len)
        .into_iter()
        .map(|(off, n)| Descriptor {
            host_addr: host_addr + off,
            card_addr: card_addr + off,
            len: n,
        })
        .collect()
}

/// The AXI bursts the engine issues for a descriptor list that starts at card address `card`:
/// each descriptor's range split on its own (INCR, full-width beats of `data_bytes`, never
/// across a 4 KiB boundary, never longer than `max_beats` beats), with the channel's AXI `id`
/// and each piece's offset from the start of the transfer.
pub fn bursts(
    descs: &[Descriptor],
    card: u64,
    id: u32,
    data_bytes: u32,
    max_beats: u32,
) -> Vec<Piece> {
    descs
        .iter()
        .flat_map(|d| {
            let off0 = (d.card_addr - card) as usize;
            burst::split(
                id,
                d.card_addr,
                d.len as usize,
                data_bytes as usize,
                max_beats,
            )
            .into_iter()
            .map(move |p| Piece {
                burst: Burst { id, ..p.burst },
                offset: off0 + p.offset,
                bytes: p.bytes,
            })
        })
        .collect()
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
        let bad = |f: fn(&mut EngineConfig)| {
            let mut c = EngineConfig::default();
            f(&mut c);
            let e = c.validate().expect_err("outside the IP's range");
            assert_eq!(e.kind(), xdma_core::ErrorKind::Config);
            e.to_string()
        };
        assert!(bad(|c| c.h2c_request_ids = 1).contains("engine.h2c_request_ids"));
        assert!(bad(|c| c.h2c_request_ids = 65).contains("engine.h2c_request_ids"));
        assert!(bad(|c| c.c2h_request_ids = 33).contains("engine.c2h_request_ids"));
        assert!(bad(|c| c.max_burst_beats = 257).contains("engine.max_burst_beats"));
        assert!(bad(|c| c.pcie_tags = 0).contains("engine.pcie_tags"));
        assert!(bad(|c| c.alignment = 3).contains("engine.alignment"));
        assert!(bad(|c| c.data_bytes = 24).contains("engine.data_bytes"));
        for (h, c) in [(2, 2), (64, 32)] {
            EngineConfig {
                h2c_request_ids: h,
                c2h_request_ids: c,
                ..EngineConfig::default()
            }
            .validate()
            .expect("inside the IP's range");
        }
    }

    proptest! {
        #[test]
        fn bursts_cover_the_range_exactly(
            host in 0u64..1 << 20,
            addr in 0u64..1 << 20,
            len in 1u64..20_000,
            beats_log in 0u32..9,
            width_log in 2u32..7,
            id in 0u32..4,
        ) {
            let db = 1u64 << width_log;
            let max_beats = 1u32 << beats_log.min(8);
            let mut next = addr;
            // The descriptors of a host buffer, as the driver cuts it by page.
            let descs = descriptors(host, addr, len);
            for x in bursts(&descs, addr, id, db as u32, max_beats) {
                let b = x.burst;
                prop_assert_eq!(b.addr, next);
                prop_assert_eq!(b.id, id);
                prop_assert_eq!(x.offset as u64, b.addr - addr, "offset from the transfer's start");
                prop_assert!(x.bytes > 0);
                prop_assert!(b.beats() <= max_beats);
                let last = b.addr + x.bytes as u64 - 1;
                prop_assert_eq!(b.addr / burst::BOUNDARY, last / burst::BOUNDARY, "crosses 4 KiB: {:?}", x);
                prop_assert_eq!(u64::from(b.beats()), last / db - b.addr / db + 1);
                prop_assert_eq!(b.lane_bytes(db as usize) as u64 >= x.bytes as u64, true);
                next += x.bytes as u64;
            }
            prop_assert_eq!(next, addr + len);
        }
    }
}
