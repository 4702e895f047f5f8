//! The timing model of the PCIe link, the DMA engine and the host driver, in simulated time.
//!
//! A transfer's duration comes out of the mechanism, never out of a table of measured rows:
//!
//! 1. the host submits it (system call, page pinning, scatter list, descriptors, doorbell);
//! 2. the engine fetches the first block of descriptors with a PCIe read round trip;
//! 3. the data moves through a pipeline of requests. H2C: memory reads of host memory, at most
//!    the channel's read window in flight, each answered after a round trip by completions that
//!    queue on the downstream link; then AXI write bursts to the card, whose last response
//!    comes after the card's write latency. C2H: AXI read bursts on the card, at most the
//!    channel's read window in flight, each answered after the read round trip (engine side
//!    plus card side), then sent to the host as memory writes that queue on the upstream link;
//! 4. the engine writes back its status and raises the interrupt (posted writes: half a round
//!    trip);
//! 5. the host takes the interrupt and completes the call.
//!
//! Link time per packet follows from the link's generation (rate and encoding), its width and
//! the exact bytes each TLP and DLLP puts on the wire. Every parameter is in [`TimingConfig`];
//! the card-side AXI latencies are an input ([`CardLatency`]) because they come from the RTL.

use crate::engine::{self, EngineConfig};
use xdma_core::{Error, Result};

/// PCIe link parameters.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LinkConfig {
    /// PCIe generation, 1 to 5. Default 2: the reference board's link (README: Gen2 x8).
    pub generation: u8,
    /// Lanes. Default 8 (README: Gen2 x8).
    pub lanes: u8,
    /// Max payload size in bytes of a memory write or completion. Default 256: the Kintex-7
    /// endpoint offers up to 1024, but the root port caps it, and x86 root ports grant 256.
    pub max_payload: u32,
    /// Max read request size in bytes. Default 512: what Linux and Windows program by
    /// default into an endpoint's Device Control register.
    pub max_read_request: u32,
    /// Size in bytes of the completions the host returns for a read (it splits a read's data
    /// at read completion boundaries). Default 128: with 64-byte completions the downstream
    /// link could carry at most 64 / (64 + 20) of 4.0 GB/s = 3.05 GB/s, less than the 3.39
    /// GB/s that the reference measured for 8 MiB writes, so the reference host returns (at
    /// least) 128-byte completions.
    pub read_completion_boundary: u32,
    /// True when host addresses are 64-bit, so memory requests carry a 4-dword header.
    /// Default true: DMA buffers on a 64-bit host sit above 4 GiB.
    pub address_64bit: bool,
    /// True when TLPs carry an end-to-end CRC (4 bytes). Default false: the XDMA IP does not
    /// generate ECRC unless asked to.
    pub ecrc: bool,
    /// TLPs per acknowledge or flow-control DLLP travelling the same way as the data. Default
    /// 4: receivers coalesce ACKs over a few TLPs and update credits at a similar pace; at
    /// 128-byte completions this costs 8 / (4 x 148) = 1.4 % of the link.
    pub tlps_per_dllp: f64,
    /// Symbol times between SKP ordered sets. Default 1359: Gen1/2 transmitters send one every
    /// 1180 to 1538 symbol times; the middle of that range.
    pub skp_interval_symbols: f64,
    /// Round trip of a memory read from the endpoint to host memory and back (first completion),
    /// in ns. Default 500: the order of a root port plus memory controller read on x86 hosts,
    /// and consistent with the reference (see [`EngineTiming::c2h_engine_latency_ns`]).
    pub round_trip_ns: f64,
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig {
            generation: 2,
            lanes: 8,
            max_payload: 256,
            max_read_request: 512,
            read_completion_boundary: 128,
            address_64bit: true,
            ecrc: false,
            tlps_per_dllp: 4.0,
            skp_interval_symbols: 1359.0,
            round_trip_ns: 500.0,
        }
    }
}

/// Bytes that every TLP carries besides its header and payload, and a DLLP's size.
mod wire {
    /// Sequence number added by the data link layer.
    pub const SEQ: u64 = 2;
    /// Link CRC.
    pub const LCRC: u64 = 4;
    /// End-to-end CRC, when enabled.
    pub const ECRC: u64 = 4;
    /// Header of a completion (3 dwords).
    pub const HDR_CPL: u64 = 12;
    /// Header of a memory request with a 32-bit address (3 dwords).
    pub const HDR_MEM32: u64 = 12;
    /// Header of a memory request with a 64-bit address (4 dwords).
    pub const HDR_MEM64: u64 = 16;
    /// A DLLP: 6 bytes plus 2 bytes of framing.
    pub const DLLP: u64 = 8;
    /// An XDMA descriptor.
    pub const DESCRIPTOR: u64 = 32;
    /// Descriptors the engine fetches in one read when they are adjacent (the driver chains up
    /// to 32 adjacent descriptors, the "Nxt_adj" field's limit).
    pub const DESC_BLOCK: u64 = 32;
}

/// The engine's own latencies.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EngineTiming {
    /// The part of a C2H read round trip outside the card's AXI slave, in ns: from the engine
    /// issuing a read to the card until the data is back in the engine, less the card's own
    /// read latency. Default 500: the reference README names the read round trip's parts as
    /// the PCIe request/completion path, the AXI clock crossing and the DDR read; the PCIe part
    /// is one link round trip ([`LinkConfig::round_trip_ns`]). With the default window of eight
    /// 256-byte reads and a card-side latency of about 0.3 us this gives 2 KiB / 0.8 us = 2.5
    /// GB/s, the README's read plateau.
    pub c2h_engine_latency_ns: f64,
}

impl Default for EngineTiming {
    fn default() -> Self {
        EngineTiming {
            c2h_engine_latency_ns: 500.0,
        }
    }
}

/// The host driver's costs per transfer.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HostConfig {
    /// From the call to the doorbell write, in ns: system call, pinning the user pages,
    /// building the scatter list and the descriptors, starting the engine. Default 8000.
    pub submit_ns: f64,
    /// From the engine's interrupt to the call's return, in ns: interrupt service, deferred
    /// work, unpinning, waking the caller. Default 9300.
    ///
    /// Why these two: the reference README fits a fixed cost t0 of 18.8 us (writes) and 18.5
    /// us (reads) per transfer, of which this model's link and engine parts (descriptor fetch,
    /// first data round trip, write-back and interrupt) account for about 1.4 us; the rest,
    /// about 17.3 us, is host software. The split between submit and completion does not change
    /// one transfer's duration.
    pub complete_ns: f64,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            submit_ns: 8000.0,
            complete_ns: 9300.0,
        }
    }
}

/// All timing parameters, with defaults for the reference board (Kintex-7, XDMA Gen2 x8).
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TimingConfig {
    /// The PCIe link.
    pub link: LinkConfig,
    /// The engine's latencies.
    pub engine: EngineTiming,
    /// The host driver.
    pub host: HostConfig,
}

/// Where the time of one transfer went, in picoseconds from the call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TransferTime {
    /// Host submission (system call to doorbell).
    pub submit_ps: u64,
    /// Fetching the first descriptor block.
    pub descriptor_ps: u64,
    /// From the first data request to the last data accepted by the far side.
    pub data_ps: u64,
    /// Status write-back and interrupt delivery.
    pub completion_ps: u64,
    /// Host completion (interrupt to return).
    pub host_complete_ps: u64,
}

impl TransferTime {
    /// The whole duration in picoseconds.
    pub fn total_ps(&self) -> u64 {
        self.submit_ps
            + self.descriptor_ps
            + self.data_ps
            + self.completion_ps
            + self.host_complete_ps
    }
}

/// One step of an H2C transfer's data reaching the engine (see [`TimingModel::h2c_arrivals`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    /// Bytes of the transfer, from its start, that have arrived.
    pub bytes: u64,
    /// When, in ps from the start of the data phase.
    pub at_ps: u64,
}

/// The timing model: link, engine and host parameters together.
#[derive(Debug, Clone)]
pub struct TimingModel {
    cfg: TimingConfig,
    engine: EngineConfig,
}

const PS_PER_NS: f64 = 1000.0;

impl TimingModel {
    /// A model from its parameters, checked.
    pub fn new(cfg: TimingConfig, engine: EngineConfig) -> Result<TimingModel> {
        let l = &cfg.link;
        if !(1..=5).contains(&l.generation) {
            return Err(Error::Config(format!(
                "link generation {}: PCIe generations 1 to 5 are modelled",
                l.generation
            )));
        }
        if ![1, 2, 4, 8, 12, 16, 32].contains(&l.lanes) {
            return Err(Error::Config(format!(
                "link width x{}: PCIe links have 1, 2, 4, 8, 12, 16 or 32 lanes",
                l.lanes
            )));
        }
        for (name, v) in [
            ("max_payload", l.max_payload),
            ("max_read_request", l.max_read_request),
        ] {
            if !v.is_power_of_two() || !(128..=4096).contains(&v) {
                return Err(Error::Config(format!(
                    "link {name} = {v}: PCIe allows 128 to 4096 bytes, a power of two"
                )));
            }
        }
        let rcb = l.read_completion_boundary;
        if !rcb.is_power_of_two() || rcb < 64 || rcb > l.max_payload {
            return Err(Error::Config(format!(
                "link read_completion_boundary = {rcb}: 64 or 128 bytes as PCIe defines it (or a larger power of two up to max_payload for hosts that return larger completions)"
            )));
        }
        let positive = [
            ("tlps_per_dllp", l.tlps_per_dllp),
            ("skp_interval_symbols", l.skp_interval_symbols),
        ];
        for (name, v) in positive {
            if !(v.is_finite() && v > 0.0) {
                return Err(Error::Config(format!(
                    "link {name} = {v}: must be a positive number"
                )));
            }
        }
        let non_negative = [
            ("link round_trip_ns", l.round_trip_ns),
            (
                "engine c2h_engine_latency_ns",
                cfg.engine.c2h_engine_latency_ns,
            ),
            ("host submit_ns", cfg.host.submit_ns),
            ("host complete_ns", cfg.host.complete_ns),
        ];
        for (name, v) in non_negative {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::Config(format!("{name} = {v}: must be zero or more")));
            }
        }
        engine.validate()?;
        Ok(TimingModel { cfg, engine })
    }

    /// The parameters.
    pub fn config(&self) -> &TimingConfig {
        &self.cfg
    }

    /// The engine's shape.
    pub fn engine(&self) -> &EngineConfig {
        &self.engine
    }

    /// Raw link bandwidth per direction after line encoding, in bytes per ns (GB/s).
    pub fn link_bytes_per_ns(&self) -> f64 {
        let l = &self.cfg.link;
        // Transfer rate per lane in GT/s and the line code's efficiency, per generation.
        let (gt_s, code) = match l.generation {
            1 => (2.5, 8.0 / 10.0),
            2 => (5.0, 8.0 / 10.0),
            3 => (8.0, 128.0 / 130.0),
            4 => (16.0, 128.0 / 130.0),
            _ => (32.0, 128.0 / 130.0),
        };
        gt_s * code * f64::from(l.lanes) / 8.0
    }

    /// Bytes per ns left for TLPs and DLLPs after SKP ordered sets (4 symbols per interval).
    fn usable_bytes_per_ns(&self) -> f64 {
        let skp = 4.0 / self.cfg.link.skp_interval_symbols;
        self.link_bytes_per_ns() * (1.0 - skp)
    }

    /// Framing bytes per TLP: STP and END symbols on Gen1/2, the 4-byte STP token on Gen3 on.
    fn framing(&self) -> u64 {
        if self.cfg.link.generation <= 2 {
            2
        } else {
            4
        }
    }

    /// Wire bytes of one TLP with `header` header bytes and `payload` payload bytes, plus its
    /// share of the acknowledge and flow-control DLLPs that travel the same way.
    fn tlp_wire_bytes(&self, header: u64, payload: u64) -> f64 {
        let ecrc = if self.cfg.link.ecrc { wire::ECRC } else { 0 };
        let tlp = self.framing() + wire::SEQ + header + payload + ecrc + wire::LCRC;
        tlp as f64 + wire::DLLP as f64 / self.cfg.link.tlps_per_dllp
    }

    fn wire_ps(&self, bytes: f64) -> f64 {
        bytes / self.usable_bytes_per_ns() * PS_PER_NS
    }

    /// Link time in ps of the completions that answer a read of `len` bytes at host address
    /// `addr`: the data is cut at read completion boundaries.
    fn completions_ps(&self, addr: u64, len: u64) -> f64 {
        let rcb = u64::from(self.cfg.link.read_completion_boundary);
        let mut bytes = 0.0;
        let mut a = addr;
        let end = addr + len;
        while a < end {
            let n = (end - a).min(rcb - a % rcb);
            bytes += self.tlp_wire_bytes(wire::HDR_CPL, n);
            a += n;
        }
        self.wire_ps(bytes)
    }

    /// Link time in ps of the memory writes that carry `len` bytes to host address `addr`.
    fn writes_ps(&self, addr: u64, len: u64) -> f64 {
        let hdr = if self.cfg.link.address_64bit {
            wire::HDR_MEM64
        } else {
            wire::HDR_MEM32
        };
        let bytes: f64 = engine::pcie_pieces(addr, len, u64::from(self.cfg.link.max_payload))
            .into_iter()
            .map(|n| self.tlp_wire_bytes(hdr, n))
            .sum();
        self.wire_ps(bytes)
    }

    /// Time in ps of `len` bytes on the card's AXI data bus (one beat per `axi_aclk` cycle).
    fn axi_ps(&self, len: u64) -> f64 {
        // 250 MHz: the XDMA IP's AXI clock on the reference board (README).
        const AXI_CYCLE_PS: f64 = 4000.0;
        let beats = len.div_ceil(u64::from(self.engine.data_bytes));
        beats as f64 * AXI_CYCLE_PS
    }

    /// The phases of a transfer around its data, which do not depend on the card: submission,
    /// the first descriptor fetch, write-back and interrupt, host completion (`data_ps` is 0).
    pub fn fixed_phases(&self, host_addr: u64, card_addr: u64, len: u64) -> TransferTime {
        let rtt = self.cfg.link.round_trip_ns * PS_PER_NS;
        let ndesc = engine::descriptors(host_addr, card_addr, len).len() as u64;
        let first_block = ndesc.min(wire::DESC_BLOCK);
        // The first descriptor block is one read: a round trip and its completions.
        let descriptor = rtt + self.completions_ps(0, first_block * wire::DESCRIPTOR);
        TransferTime {
            submit_ps: (self.cfg.host.submit_ns * PS_PER_NS).round() as u64,
            descriptor_ps: descriptor.round() as u64,
            data_ps: 0,
            // Status write-back and the interrupt message are posted writes: half a round trip.
            completion_ps: (rtt / 2.0).round() as u64,
            host_complete_ps: (self.cfg.host.complete_ns * PS_PER_NS).round() as u64,
        }
    }

    /// When the data of an H2C transfer reaches the engine, counted from the start of its data
    /// phase (after the first descriptor block is in): one entry per memory read of host
    /// memory, in order, with the bytes of the transfer received once that read's last
    /// completion has arrived.
    ///
    /// The engine keeps at most the channel's read window in flight; each read's completions
    /// arrive a round trip after it is issued and queue on the downstream link; a read's slot
    /// frees when its last completion is in. When the data reaches a new block of 32
    /// descriptors, the engine fetches the next block, whose completions take the same link.
    pub fn h2c_arrivals(&self, host_addr: u64, card_addr: u64, len: u64) -> Vec<Arrival> {
        let rtt = self.cfg.link.round_trip_ns * PS_PER_NS;
        let mrrs = u64::from(self.cfg.link.max_read_request);
        let descs = engine::descriptors(host_addr, card_addr, len);
        let window = self.engine.h2c.max_outstanding_reads as usize;
        let mut out: Vec<Arrival> = Vec::with_capacity(descs.len() * 8);
        let mut done_ps: Vec<f64> = Vec::with_capacity(descs.len() * 8);
        let mut link_free = 0.0f64;
        let mut bytes = 0;
        for (d, desc) in descs.iter().enumerate() {
            let block = d as u64 / wire::DESC_BLOCK;
            if block > 0 && d as u64 % wire::DESC_BLOCK == 0 {
                // The prefetch of this block was issued a block earlier; its completions take
                // their turn on the link now.
                let n = (descs.len() as u64 - d as u64).min(wire::DESC_BLOCK);
                link_free += self.completions_ps(0, n * wire::DESCRIPTOR);
            }
            let mut a = desc.host_addr;
            for n in engine::pcie_pieces(desc.host_addr, desc.len, mrrs) {
                let i = done_ps.len();
                let issue = if i >= window {
                    done_ps[i - window]
                } else {
                    0.0
                };
                let start = (issue + rtt).max(link_free);
                let end = start + self.completions_ps(a, n);
                link_free = end;
                done_ps.push(end);
                a += n;
                bytes += n;
                out.push(Arrival {
                    bytes,
                    at_ps: end.round() as u64,
                });
            }
        }
        out
    }

    /// Link time in ps of the memory writes that carry `len` bytes to host address `addr`
    /// (C2H data on the upstream link).
    pub fn c2h_writes_ps(&self, addr: u64, len: u64) -> u64 {
        self.writes_ps(addr, len).round() as u64
    }

    /// The part of a C2H read round trip outside the card's AXI slave, in ps.
    pub fn c2h_engine_latency_ps(&self) -> u64 {
        (self.cfg.engine.c2h_engine_latency_ns * PS_PER_NS).round() as u64
    }

    /// One link crossing (half the round trip), in ps.
    pub fn one_way_ps(&self) -> u64 {
        (self.cfg.link.round_trip_ns * PS_PER_NS / 2.0).round() as u64
    }

    /// Time in ps of `len` bytes on the card's AXI data bus at one beat per cycle.
    pub fn axi_bus_ps(&self, len: u64) -> u64 {
        self.axi_ps(len).round() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> TimingModel {
        TimingModel::new(TimingConfig::default(), EngineConfig::default()).expect("defaults")
    }

    #[test]
    fn gen2_x8_is_4_gb_per_s_after_encoding() {
        let m = model();
        assert!((m.link_bytes_per_ns() - 4.0).abs() < 1e-9);
        let g3 = TimingModel::new(
            TimingConfig {
                link: LinkConfig {
                    generation: 3,
                    lanes: 4,
                    ..LinkConfig::default()
                },
                ..TimingConfig::default()
            },
            EngineConfig::default(),
        )
        .expect("gen3");
        assert!((g3.link_bytes_per_ns() - 8.0 * 4.0 * 128.0 / 130.0 / 8.0).abs() < 1e-9);
    }

    #[test]
    fn h2c_data_arrives_in_order_at_the_link_rate() {
        let m = model();
        let len = 1 << 20;
        let a = m.h2c_arrivals(0, 0, len);
        // One memory read per max read request: 512-byte reads of 4 KiB pages.
        assert_eq!(a.len() as u64, len / 512);
        assert!(a
            .windows(2)
            .all(|w| w[0].bytes < w[1].bytes && w[0].at_ps <= w[1].at_ps));
        assert_eq!(a.last().map(|x| x.bytes), Some(len));
        // The first data needs a round trip; after that the link's completion rate rules:
        // 128-byte completions carry 128 of 12 + 128 + 8 bytes of TLP, plus DLLP share.
        assert!(a[0].at_ps >= 500_000);
        let rate = (len - a[0].bytes) as f64 / (a[a.len() - 1].at_ps - a[0].at_ps) as f64 * 1000.0;
        let expected = 4.0 * (1.0 - 4.0 / 1359.0) * 128.0 / (2.0 + 2.0 + 12.0 + 128.0 + 4.0 + 2.0);
        assert!(
            (rate - expected).abs() / expected < 0.02,
            "{rate:.3} GB/s, link allows {expected:.3}"
        );
        // A buffer that starts mid-page needs one more descriptor, hence one more read.
        assert_eq!(m.h2c_arrivals(100, 0, len).len() as u64, len / 512 + 1);
    }

    #[test]
    fn bad_parameters_are_config_errors() {
        let bad = |f: fn(&mut TimingConfig)| {
            let mut c = TimingConfig::default();
            f(&mut c);
            TimingModel::new(c, EngineConfig::default())
                .expect_err("bad")
                .kind()
        };
        assert_eq!(bad(|c| c.link.generation = 0), xdma_core::ErrorKind::Config);
        assert_eq!(bad(|c| c.link.lanes = 3), xdma_core::ErrorKind::Config);
        assert_eq!(
            bad(|c| c.link.max_payload = 100),
            xdma_core::ErrorKind::Config
        );
        assert_eq!(
            bad(|c| c.link.tlps_per_dllp = 0.0),
            xdma_core::ErrorKind::Config
        );
        assert_eq!(
            bad(|c| c.host.submit_ns = f64::NAN),
            xdma_core::ErrorKind::Config
        );
    }
}
