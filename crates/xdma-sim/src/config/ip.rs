//! The XDMA IP's customization as the `[sim.ip]` table sets it ([`IpCustomization`]): what
//! the IP is built with in Vivado (bus width, burst length, alignment, request IDs, PCIe tags,
//! descriptor block), which shapes how its DMA engines move data. The engines themselves are
//! the register-level IP's (`xdma_ip`); the driver cuts a transfer into descriptors
//! (`xdma_driver`).

use xdma_core::{Error, Result};

/// The host page size by which the driver's scatter list is cut (one pinned page per entry).
pub use xdma_regmap::HOST_PAGE;

/// The largest length one XDMA descriptor can carry: its length field has 28 bits.
pub const MAX_DESCRIPTOR_BYTES: u64 = xdma_regmap::DESC_MAX_LEN as u64;

/// The largest address alignment the IP can report: its alignments register holds it in
/// bits 23:16.
pub const MAX_ALIGNMENT: u64 = 128;

/// The IP's range of H2C request IDs per channel (PG195: "Number of Request IDs for Read
/// channel").
pub const H2C_IDS: std::ops::RangeInclusive<u32> = 2..=64;
/// The IP's range of C2H request IDs per channel ("Number of Request IDs for Write channel").
pub const C2H_IDS: std::ops::RangeInclusive<u32> = 2..=32;

/// The IP's customization (the `[sim.ip]` table; `[sim.engine]` before, still read with a
/// warning): bus width, burst length, alignment, and how many requests its engines keep in
/// flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IpCustomization {
    /// Bytes per AXI beat: 4 to 128, a power of two, and the card's `s_axi` width. Default
    /// 16: the reference board's 128-bit AXI at 250 MHz.
    pub data_bytes: u32,
    /// Most beats in one H2C AXI write burst, 1 to 256. Default 16 (256 bytes). C2H read
    /// bursts are sized by the link's max payload instead, since each becomes one memory write
    /// TLP.
    pub max_burst_beats: u32,
    /// The engines' address alignment in bytes, a power of two up to 128; 1 means any
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

impl Default for IpCustomization {
    fn default() -> Self {
        IpCustomization {
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

impl IpCustomization {
    /// Checks every field against what AXI and the IP allow.
    pub fn validate(&self) -> Result<()> {
        if !self.data_bytes.is_power_of_two() || !(4..=128).contains(&self.data_bytes) {
            return Err(Error::Config(format!(
                "[sim] ip.data_bytes = {}: AXI data widths are 32 to 1024 bits (4 to 128 bytes, a power of two)",
                self.data_bytes
            )));
        }
        let ranges = [
            (
                "ip.max_burst_beats",
                self.max_burst_beats,
                1..=256,
                "an AXI4 INCR burst has 1 to 256 beats",
            ),
            (
                "ip.h2c_request_ids",
                self.h2c_request_ids,
                H2C_IDS,
                "the XDMA IP allows 2 to 64",
            ),
            (
                "ip.c2h_request_ids",
                self.c2h_request_ids,
                C2H_IDS,
                "the XDMA IP allows 2 to 32",
            ),
            (
                "ip.pcie_tags",
                self.pcie_tags,
                1..=256,
                "PCIe tags are 8 bits at most",
            ),
            (
                "ip.descriptor_block",
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
        if !self.alignment.is_power_of_two() || self.alignment > MAX_ALIGNMENT {
            return Err(Error::Config(format!(
                "[sim] ip.alignment = {}: a power of two from 1 to {MAX_ALIGNMENT} (the IP's alignments register holds it in 8 bits)",
                self.alignment
            )));
        }
        Ok(())
    }

    /// The most bytes one H2C write burst can carry.
    pub fn max_burst_bytes(&self) -> u64 {
        u64::from(self.max_burst_beats) * u64::from(self.data_bytes)
    }

    /// The IP's PCIe timing with these windows and the link and root complex of `timing`.
    pub fn pcie(&self, timing: &super::timing::TimingConfig) -> xdma_ip::PcieConfig {
        xdma_ip::PcieConfig {
            link: timing.link,
            root: timing.root,
            tags: self.pcie_tags,
            h2c_request_ids: self.h2c_request_ids,
            c2h_request_ids: self.c2h_request_ids,
            descriptor_block: self.descriptor_block,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_checked_against_the_ip() {
        let bad = |f: fn(&mut IpCustomization)| {
            let mut c = IpCustomization::default();
            f(&mut c);
            let e = c.validate().expect_err("outside the IP's range");
            assert_eq!(e.kind(), xdma_core::ErrorKind::Config);
            e.to_string()
        };
        assert!(bad(|c| c.h2c_request_ids = 1).contains("ip.h2c_request_ids"));
        assert!(bad(|c| c.h2c_request_ids = 65).contains("ip.h2c_request_ids"));
        assert!(bad(|c| c.c2h_request_ids = 33).contains("ip.c2h_request_ids"));
        assert!(bad(|c| c.max_burst_beats = 257).contains("ip.max_burst_beats"));
        assert!(bad(|c| c.pcie_tags = 0).contains("ip.pcie_tags"));
        assert!(bad(|c| c.alignment = 3).contains("ip.alignment"));
        assert!(bad(|c| c.data_bytes = 24).contains("ip.data_bytes"));
        for (h, c) in [(2, 2), (64, 32)] {
            IpCustomization {
                h2c_request_ids: h,
                c2h_request_ids: c,
                ..IpCustomization::default()
            }
            .validate()
            .expect("inside the IP's range");
        }
    }
}
