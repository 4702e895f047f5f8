//! The PCIe side of the IP in simulated time: the link with its two directions, the host's root
//! complex and memory as the card sees them, and the IP's PCIe tags.
//!
//! Nothing here is a table of measured rows. The link is two queues, one per direction, each
//! carrying every TLP and DLLP that crosses it for all channels at once, with the exact bytes
//! each puts on the wire ([`Link`]); the host answers reads after its memory latency and
//! acknowledges posted writes after its ACK latency. An IP built without timing ([`Pcie`] of
//! `None`) reaches host memory at once, which is what a virtual machine's front end wants.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

/// One picosecond is the unit of simulated time.
pub type Ps = u64;

const PS_PER_NS: f64 = 1000.0;

/// A value in nanoseconds as picoseconds, rounded; the ranges that configuration checks keep
/// every value far from overflow.
pub fn ns(v: f64) -> Ps {
    (v * PS_PER_NS).round().max(0.0) as Ps
}

/// PCIe link parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LinkConfig {
    /// PCIe generation, 1 to 5. Default 2: the reference board's link (Gen2 x8).
    pub generation: u8,
    /// Lanes: 1, 2, 4, 8, 12, 16 or 32. Default 8.
    pub lanes: u8,
    /// Max payload size in bytes of a memory write or completion, 128 to 4096, a power of
    /// two. Default 256: the Kintex-7 endpoint offers up to 1024, but the root port caps it,
    /// and x86 root ports grant 256.
    pub max_payload: u32,
    /// Max read request size in bytes, 128 to 4096, a power of two. Default 512: what Linux
    /// and Windows program into an endpoint's Device Control register by default.
    pub max_read_request: u32,
    /// Size in bytes of the completions the host returns for a read (it cuts a read's data at
    /// read completion boundaries): 64, or a power of two from 128 up to `max_payload`.
    /// Default 128: with 64-byte completions the downstream link could carry at most
    /// 64 / (64 + 20) of 4.0 GB/s = 3.05 GB/s, less than the 3.39 GB/s the reference measured
    /// for 8 MiB writes, so the reference host returns (at least) 128-byte completions.
    pub read_completion_boundary: u32,
    /// True when host addresses are 64-bit, so memory requests carry a 4-dword header.
    /// Default true: DMA buffers on a 64-bit host sit above 4 GiB.
    pub address_64bit: bool,
    /// True when TLPs carry an end-to-end CRC (4 bytes). Default false: the XDMA IP does not
    /// generate ECRC unless asked to.
    pub ecrc: bool,
    /// TLPs received per acknowledge or flow-control DLLP sent back, 1 to 64. Default 4:
    /// receivers coalesce ACKs over a few TLPs and update credits at a similar pace; at
    /// 128-byte completions this costs the reverse direction 8 / 4 bytes per TLP.
    pub tlps_per_dllp: f64,
    /// Symbol times between SKP ordered sets, 1180 to 1538 as Gen1/2 transmitters send them
    /// (Gen3 and later: 370 to 375 blocks; the same field). Default 1359, the middle.
    pub skp_interval_symbols: f64,
    /// One-way latency of the link in ns, 0 to 10 000: both ends' transaction and data link
    /// layers, the PHYs and the wire, from a TLP's last byte leaving one end to its arrival at
    /// the other. Default 125: a Gen2 endpoint plus root port pipeline of about 60 to 70 ns
    /// each way on each side.
    pub flight_ns: f64,
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
            flight_ns: 125.0,
        }
    }
}

/// The host's root complex and memory as the card sees them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RootConfig {
    /// From a memory read request arriving at the root port to its first completion leaving
    /// it, in ns, 0 to 100 000: the root complex and a DRAM read. Default 250: with the link's
    /// flight both ways, a read round trip of about 0.5 us, the order of x86 root ports.
    pub read_latency_ns: f64,
    /// From a posted write arriving at the root port to the acknowledge DLLP that frees its
    /// place in the endpoint's replay buffer leaving the root port, in ns, 0 to 100 000.
    /// Default 250: the PCIe specification's AckNak latency limit for a Gen2 x8 link at a
    /// 256-byte max payload is about 120 symbol times (240 ns); the XDMA IP releases a C2H
    /// request ID when the IP reports the write done, which needs this acknowledge.
    pub ack_latency_ns: f64,
}

impl Default for RootConfig {
    fn default() -> Self {
        RootConfig {
            read_latency_ns: 250.0,
            ack_latency_ns: 250.0,
        }
    }
}

/// The PCIe timing of the IP: the link, the host's root complex, and the request windows the
/// IP keeps (PG195's request IDs and the integrated block's tags).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PcieConfig {
    /// The link.
    pub link: LinkConfig,
    /// The root complex and host memory.
    pub root: RootConfig,
    /// PCIe tags for non-posted requests, shared by every engine's reads of host memory and
    /// descriptor fetches.
    pub tags: u32,
    /// Request IDs of each H2C engine: reads of host memory in flight, each held from its
    /// issue until the card has taken its data.
    pub h2c_request_ids: u32,
    /// Request IDs of each C2H engine: card reads in flight, each held from the AXI read's
    /// issue until the link partner has acknowledged the memory write that carried its data.
    pub c2h_request_ids: u32,
    /// Adjacent descriptors fetched with one read at most.
    pub descriptor_block: u32,
}

impl Default for PcieConfig {
    fn default() -> Self {
        PcieConfig {
            link: LinkConfig::default(),
            root: RootConfig::default(),
            tags: 32,
            h2c_request_ids: 8,
            c2h_request_ids: 8,
            descriptor_block: 32,
        }
    }
}

/// Bytes that every TLP carries besides its header and payload, and a DLLP's size.
pub mod wire {
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
}

/// What crosses the link, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tlp {
    /// A memory read request (no payload).
    Read,
    /// A memory write of this many bytes (DMA data, a write-back, an MSI).
    Write(u64),
    /// A completion with this many data bytes.
    Completion(u64),
}

/// One direction of the link: a single queue that sends what it is given in order, each TLP
/// taking its wire time, and the DLLPs that the other direction's traffic causes.
#[derive(Debug, Clone, Copy, Default)]
pub struct LinkDir {
    /// When the last queued byte has left, in ps (fractional, so rounding does not drift).
    free_at: f64,
    /// DLLP bytes owed: they go out between TLPs, in idle time when there is some, else they
    /// delay the next TLP.
    debt: f64,
    /// Bytes sent so far, DLLPs included.
    pub bytes: f64,
}

/// Which way a TLP goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// Card to host.
    Up,
    /// Host to card.
    Down,
}

/// The link with its two directions and the arithmetic of what each TLP costs on the wire.
#[derive(Debug, Clone)]
pub struct Link {
    cfg: LinkConfig,
    /// Usable bytes per ps after line coding and SKP ordered sets.
    rate: f64,
    framing: u64,
    up: LinkDir,
    down: LinkDir,
}

impl Link {
    pub fn new(cfg: LinkConfig) -> Link {
        // Transfer rate per lane in GT/s and the line code's efficiency, per generation.
        let (gt_s, code, framing) = match cfg.generation {
            1 => (2.5, 8.0 / 10.0, 2),
            2 => (5.0, 8.0 / 10.0, 2),
            3 => (8.0, 128.0 / 130.0, 4),
            4 => (16.0, 128.0 / 130.0, 4),
            _ => (32.0, 128.0 / 130.0, 4),
        };
        let raw_bytes_per_ns = gt_s * code * f64::from(cfg.lanes) / 8.0;
        let skp = 4.0 / cfg.skp_interval_symbols;
        Link {
            cfg,
            rate: raw_bytes_per_ns * (1.0 - skp) / PS_PER_NS,
            framing,
            up: LinkDir::default(),
            down: LinkDir::default(),
        }
    }

    /// Raw bandwidth per direction after line coding, in bytes per ns (GB/s).
    #[cfg(test)]
    pub fn raw_gb_per_s(&self) -> f64 {
        self.rate * PS_PER_NS / (1.0 - 4.0 / self.cfg.skp_interval_symbols)
    }

    /// The link's parameters.
    pub fn config(&self) -> &LinkConfig {
        &self.cfg
    }

    /// Wire bytes of one TLP.
    pub fn wire_bytes(&self, tlp: Tlp) -> u64 {
        let mem_hdr = if self.cfg.address_64bit {
            wire::HDR_MEM64
        } else {
            wire::HDR_MEM32
        };
        let (header, payload) = match tlp {
            Tlp::Read => (mem_hdr, 0),
            Tlp::Write(n) => (mem_hdr, n),
            Tlp::Completion(n) => (wire::HDR_CPL, n),
        };
        let ecrc = if self.cfg.ecrc { wire::ECRC } else { 0 };
        self.framing + wire::SEQ + header + payload + ecrc + wire::LCRC
    }

    fn dir(&mut self, way: Way) -> (&mut LinkDir, &mut LinkDir) {
        match way {
            Way::Up => (&mut self.up, &mut self.down),
            Way::Down => (&mut self.down, &mut self.up),
        }
    }

    /// Queues `tlp` on the `way` direction at time `at` (never later than the simulation's
    /// present, so that the queue serves TLPs in the order they became ready); returns when its
    /// last byte has left, in ps. The acknowledge and flow-control DLLPs it causes take their
    /// share of the other direction.
    pub fn send(&mut self, way: Way, at: Ps, tlp: Tlp) -> Ps {
        let bytes = self.wire_bytes(tlp) as f64;
        let dllp = wire::DLLP as f64 / self.cfg.tlps_per_dllp;
        let rate = self.rate;
        let (this, other) = self.dir(way);
        let at = at as f64;
        // DLLPs owed by this direction went out in whatever idle time it had before `at`;
        // what did not fit delays this TLP.
        let idle = (at - this.free_at).max(0.0);
        let owed = (this.debt - idle * rate).max(0.0);
        this.debt = 0.0;
        let start = this.free_at.max(at) + owed / rate;
        this.free_at = start + bytes / rate;
        this.bytes += bytes;
        // The acknowledge and flow-control DLLPs that receiving this TLP causes go the other
        // way.
        other.debt += dllp;
        other.bytes += dllp;
        this.free_at.ceil() as Ps
    }

    /// Queues the completions that answer a read of `len` bytes at host address `addr`, cut
    /// at read completion boundaries, on the downstream direction at `at`; returns each one's
    /// departure (when its last byte has left) with the bytes of the read it carries.
    pub fn completions(&mut self, at: Ps, addr: u64, len: u64) -> Vec<(Ps, u64)> {
        let rcb = u64::from(self.cfg.read_completion_boundary);
        let mut out = Vec::with_capacity((len / rcb) as usize + 2);
        let (mut a, end) = (addr, addr + len);
        while a < end {
            let n = (end - a).min(rcb - a % rcb);
            out.push((self.send(Way::Down, at, Tlp::Completion(n)), n));
            a += n;
        }
        out
    }

    /// The link's one-way latency in ps.
    pub fn flight(&self) -> Ps {
        ns(self.cfg.flight_ns)
    }

    /// Bytes sent so far on each direction (upstream, downstream), DLLPs included.
    #[cfg(test)]
    pub fn bytes(&self) -> (f64, f64) {
        (self.up.bytes, self.down.bytes)
    }
}

/// Request slots (request IDs, tags) held from their request until a release point, freed in
/// order: the one piece of logic behind every window of outstanding requests the IP keeps.
#[derive(Debug, Clone)]
pub struct Slots<K> {
    cap: usize,
    held: VecDeque<K>,
}

impl<K: PartialOrd + Copy> Slots<K> {
    /// A window of `cap` slots.
    pub fn new(cap: u32) -> Slots<K> {
        Slots {
            cap: cap as usize,
            held: VecDeque::with_capacity(cap.min(1024) as usize),
        }
    }

    /// Frees the slots whose release point is at or before `at`.
    pub fn free_upto(&mut self, at: K) {
        while self.held.front().is_some_and(|&k| k <= at) {
            self.held.pop_front();
        }
    }

    /// Whether a slot is free, with `pending` more slots taken whose release is not known yet.
    pub fn has_room(&self, pending: usize) -> bool {
        self.held.len() + pending < self.cap
    }

    /// Holds a slot until `until` (release points come in order).
    pub fn hold(&mut self, until: K) {
        self.held.push_back(until);
    }

    /// Frees every slot.
    pub fn clear(&mut self) {
        self.held.clear();
    }
}

/// Splits `len` bytes at `addr` into pieces of at most `max` bytes that never cross a 4 KiB
/// boundary: the rule for PCIe requests (memory reads up to the max read request size, memory
/// writes up to the max payload size). It is the AXI split with one-byte lanes.
pub fn pcie_pieces(addr: u64, len: u64, max: u64) -> Vec<u64> {
    let max = u32::try_from(max).unwrap_or(u32::MAX);
    axi_bfm::burst::split(0, addr, len as usize, 1, max)
        .into_iter()
        .map(|p| p.bytes as u64)
        .collect()
}

/// The IP's port to the host: the timed link with its tags, or none (host memory at once).
#[derive(Debug, Clone)]
pub struct Pcie {
    timed: Option<Timed>,
}

#[derive(Debug, Clone)]
struct Timed {
    cfg: PcieConfig,
    link: Link,
    root_read: Ps,
    root_ack: Ps,
    tags: Slots<Ps>,
}

/// Bytes of an MSI or MSI-X message, a posted write.
pub const MSI_BYTES: u64 = 4;

impl Pcie {
    /// A port with the timing of `cfg`, or an untimed one.
    pub fn new(cfg: Option<PcieConfig>) -> Pcie {
        Pcie {
            timed: cfg.map(|cfg| Timed {
                link: Link::new(cfg.link),
                root_read: ns(cfg.root.read_latency_ns),
                root_ack: ns(cfg.root.ack_latency_ns),
                tags: Slots::new(cfg.tags),
                cfg,
            }),
        }
    }

    /// The timing, if the port has one.
    pub fn config(&self) -> Option<&PcieConfig> {
        self.timed.as_ref().map(|t| &t.cfg)
    }

    /// Frees the tags whose reads have completed by `now`.
    pub fn advance(&mut self, now: Ps) {
        if let Some(t) = &mut self.timed {
            t.tags.free_upto(now);
        }
    }

    /// A memory read of `len` bytes at host address `host`, issued at `at` if a tag is free:
    /// the request goes up, the root complex answers after its read latency, the completions
    /// come down cut at the read completion boundary. Returns each completion's arrival at
    /// the card with the bytes it carries; the tag is held until the last one is in. Untimed,
    /// the bytes are there at once.
    pub fn read(&mut self, at: Ps, host: u64, len: u64) -> Option<Vec<(Ps, u64)>> {
        let Some(t) = &mut self.timed else {
            return Some(vec![(at, len)]);
        };
        if !t.tags.has_room(0) {
            return None;
        }
        let flight = t.link.flight();
        let sent = t.link.send(Way::Up, at, Tlp::Read);
        let answer = sent + flight + t.root_read;
        let out: Vec<(Ps, u64)> = t
            .link
            .completions(answer, host, len)
            .into_iter()
            .map(|(c, n)| (c + flight, n))
            .collect();
        t.tags.hold(out.last().map_or(answer + flight, |l| l.0));
        Some(out)
    }

    /// A posted write of `len` bytes up the link at `at` (data, a write-back, a message);
    /// returns when it reaches the host.
    pub fn write(&mut self, at: Ps, len: u64) -> Ps {
        match &mut self.timed {
            Some(t) => t.link.send(Way::Up, at, Tlp::Write(len)) + t.link.flight(),
            None => at,
        }
    }

    /// When the link partner acknowledges a posted write that reached it at `arrived`: the
    /// point at which the IP's PCIe core reports the write done.
    pub fn acknowledged(&self, arrived: Ps) -> Ps {
        match &self.timed {
            Some(t) => arrived + t.root_ack + t.link.flight(),
            None => arrived,
        }
    }

    /// A host access to a BAR issued at `at`: a posted write's or a read request's arrival
    /// at the card.
    pub fn from_host(&mut self, at: Ps, write: bool) -> Ps {
        match &mut self.timed {
            Some(t) => {
                let tlp = if write { Tlp::Write(4) } else { Tlp::Read };
                t.link.send(Way::Down, at, tlp) + t.link.flight()
            }
            None => at,
        }
    }

    /// A read's completion of `len` bytes sent back to the host at `at`; returns its arrival.
    pub fn completion_to_host(&mut self, at: Ps, len: u64) -> Ps {
        match &mut self.timed {
            Some(t) => t.link.send(Way::Up, at, Tlp::Completion(len)) + t.link.flight(),
            None => at,
        }
    }

    /// The largest memory write the link carries (max payload size); untimed, unbounded.
    pub fn max_payload(&self) -> u64 {
        self.timed
            .as_ref()
            .map_or(u64::MAX, |t| u64::from(t.cfg.link.max_payload))
    }

    /// The largest memory read request; untimed, unbounded.
    pub fn max_read_request(&self) -> u64 {
        self.timed
            .as_ref()
            .map_or(u64::MAX, |t| u64::from(t.cfg.link.max_read_request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gen2_x8_is_4_gb_per_s_after_encoding() {
        let l = Link::new(LinkConfig::default());
        assert!((l.raw_gb_per_s() - 4.0).abs() < 1e-9);
        let g3 = Link::new(LinkConfig {
            generation: 3,
            lanes: 4,
            ..LinkConfig::default()
        });
        assert!((g3.raw_gb_per_s() - 8.0 * 4.0 * 128.0 / 130.0 / 8.0).abs() < 1e-9);
    }

    #[test]
    fn a_busy_direction_serves_tlps_in_order_at_the_wire_rate() {
        let mut l = Link::new(LinkConfig::default());
        // 256-byte writes with 64-bit headers: 2 + 2 + 16 + 256 + 4 = 280 wire bytes each.
        assert_eq!(l.wire_bytes(Tlp::Write(256)), 280);
        assert_eq!(l.wire_bytes(Tlp::Completion(128)), 148);
        assert_eq!(l.wire_bytes(Tlp::Read), 24);
        let n = 1000u64;
        let mut end = 0;
        for _ in 0..n {
            end = l.send(Way::Up, 0, Tlp::Write(256));
        }
        let usable = 4.0 * (1.0 - 4.0 / 1359.0);
        let expected = (n * 280) as f64 / usable * 1000.0;
        assert!((end as f64 - expected).abs() < 2.0, "{end} vs {expected}");
        // The downstream direction carried their acknowledges: 8 / 4 bytes per TLP.
        assert!((l.bytes().1 - n as f64 * 2.0).abs() < 1e-6);
        // A TLP ready later than the queue's end starts when it is ready.
        let later = end + 1_000_000;
        let t = l.send(Way::Up, later, Tlp::Read);
        assert_eq!(t, later + (24.0 / usable * 1000.0_f64).ceil() as u64);
    }

    #[test]
    fn completions_are_cut_at_the_read_completion_boundary() {
        let mut l = Link::new(LinkConfig::default());
        let c = l.completions(0, 0x1f40, 512);
        assert_eq!(
            c.iter().map(|x| x.1).collect::<Vec<_>>(),
            vec![64, 128, 128, 128, 64]
        );
        assert!(c.windows(2).all(|w| w[0].0 < w[1].0));
    }
}
