//! The PCIe side of the IP in simulated time: the link with its two directions, the host's root
//! complex and memory as the card sees them, and the IP's PCIe tags.
//!
//! Nothing here is a table of measured rows. The link is two queues, one per direction, each
//! carrying every TLP and DLLP that crosses it for all channels at once, with the exact bytes
//! each puts on the wire ([`Link`]); the host's inbound path serves every upstream request,
//! posted writes and read requests of every channel, one at a time in arrival order
//! ([`Inbound::Ordered`]) within the root port's posted credits, and answers reads after its
//! memory latency; or, with [`Inbound::Independent`], answers each read after its latency and
//! acknowledges each posted write after its ACK latency, whatever else is in flight. An IP
//! built without timing ([`Pcie`] of `None`) reaches host memory at once, which is what a
//! virtual machine's front end wants.

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

/// How the root complex takes the card's upstream requests (see [`RootConfig::inbound`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Inbound {
    /// One server for every upstream request: posted memory writes and memory read requests
    /// of every channel are served one at a time in the order they arrive, as PCIe ordering
    /// (a read request may not pass a posted write) has a root port take them; a read's
    /// completions start once the server has taken it; posted writes are bounded by the root
    /// port's posted credits; a C2H request ID is released when its write is handed to the
    /// PCIe block (PG195).
    #[default]
    Ordered,
    /// No shared server: each read is answered after the read latency and each posted write
    /// is in host memory on arrival, whatever else is in flight; a C2H request ID is held until
    /// the root port acknowledges its write. The model before the ordered server.
    Independent,
}

/// The host's root complex and memory as the card sees them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RootConfig {
    /// From a memory read request leaving the inbound server (`inbound = "ordered"`) or
    /// arriving at the root port (`"independent"`) to its first completion leaving the root
    /// port, in ns, 0 to 100 000: the root complex and a DRAM read. Default 250: with the
    /// link's flight both ways, a read round trip of about 0.5 us, the order of x86 root ports.
    pub read_latency_ns: f64,
    /// From a posted write arriving at the root port to the acknowledge DLLP that frees its
    /// place in the endpoint's replay buffer leaving the root port, in ns, 0 to 100 000.
    /// Default 250: the PCIe specification's AckNak latency limit for a Gen2 x8 link at a
    /// 256-byte max payload is about 120 symbol times (240 ns). Only `inbound =
    /// "independent"` holds a C2H request ID until this acknowledge.
    pub ack_latency_ns: f64,
    /// How the root complex takes the card's upstream requests. Default `ordered`.
    pub inbound: Inbound,
    /// The ordered server's time for one posted write, besides its bytes, in ns, 0 to 10 000.
    /// Default 0: the reference rows carry writes of one size (the max payload), so they
    /// cannot tell a cost per TLP from a cost per byte; all of it is put on the bytes.
    pub write_tlp_ns: f64,
    /// The ordered server's time per byte of a posted write, in ns, 0 to 100. Default 0.398:
    /// the reference's per-byte cost of a read (C2H) transfer, its fit through 4 KiB and
    /// 8 MiB (2510 MB/s), so that one read direction alone drains at the board's plateau.
    pub write_ns_per_byte: f64,
    /// The ordered server's time for one memory read request, besides its bytes, in ns, 0 to
    /// 10 000. Default 0: the reference rows carry reads of one size (the max read request).
    pub read_tlp_ns: f64,
    /// The ordered server's time per byte a memory read request asks for, in ns, 0 to 100.
    /// Default 0.293: the reference's per-byte cost of a write (H2C) transfer, its fit through
    /// 4 KiB and 8 MiB (3413 MB/s), the largest that leaves one write direction alone at the
    /// board's rate.
    pub read_ns_per_byte: f64,
    /// Posted header credits the root port advertises, 0 (infinite, as the PCIe Base
    /// Specification's flow control reads an initial 0) or 1 to 4096. Default 32: the only
    /// published root-port figure at hand, a Xeon C5500/C3500 x8 port (its datasheet's
    /// Table 76). With `inbound = "ordered"` a posted write goes up only with a header credit
    /// and its data credits free; a credit comes back when the server has taken the write.
    pub posted_header_credits: u32,
    /// Posted data credits (16 bytes each) the root port advertises, 0 (infinite) or from one
    /// max payload's worth to 65 536. Default 160 (2560 bytes), the same port's.
    pub posted_data_credits: u32,
}

impl Default for RootConfig {
    fn default() -> Self {
        RootConfig {
            read_latency_ns: 250.0,
            ack_latency_ns: 250.0,
            inbound: Inbound::Ordered,
            write_tlp_ns: 0.0,
            write_ns_per_byte: 0.398,
            read_tlp_ns: 0.0,
            read_ns_per_byte: 0.293,
            posted_header_credits: 32,
            posted_data_credits: 160,
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
    /// issue until the memory write that carries its data is handed to the PCIe block
    /// (`inbound = "ordered"`, PG195) or acknowledged by the link partner (`"independent"`).
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

    /// Queues `tlp` on the `way` direction at time `at` (never earlier than a TLP queued before
    /// it became ready, so that the queue serves TLPs in the order they became ready: the
    /// simulation's present, or later for a posted write that waits for the root port's
    /// credits, which everything behind it then waits for too); returns when its
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

/// Bytes of one posted data credit (PCIe Base Specification, flow control: one credit is
/// 4 dwords of data).
pub const CREDIT_BYTES: u64 = 16;

/// The root port's posted credits as the card's transmitter sees them: a header credit and
/// the data credits of each write, held from the write's departure until the root port has
/// taken it off its receive buffer and the credit update is back. Returns come in the order
/// the writes were sent, since the server takes them in that order.
#[derive(Debug, Clone)]
struct Credits {
    /// Header and data credits advertised; 0 is infinite.
    headers: u64,
    data: u64,
    used_headers: u64,
    used_data: u64,
    /// Credits held: when they come back, and how many data credits.
    held: VecDeque<(f64, u64)>,
}

impl Credits {
    fn new(headers: u32, data: u32) -> Credits {
        Credits {
            headers: u64::from(headers),
            data: u64::from(data),
            used_headers: 0,
            used_data: 0,
            held: VecDeque::new(),
        }
    }

    fn short(&self, data: u64) -> bool {
        (self.headers > 0 && self.used_headers + 1 > self.headers)
            || (self.data > 0 && self.used_data + data > self.data)
    }

    /// The earliest time from `at` at which a write of `data` data credits (and a header
    /// credit) may go: credits held by earlier writes are taken back, oldest first, until
    /// there is room. The caller then holds the write's own credits with [`Credits::hold`],
    /// once it knows when they come back. Configuration checks that one max payload fits in
    /// the data credits, so there is room at the latest once every held credit is back.
    fn take(&mut self, at: f64, data: u64) -> f64 {
        let mut t = at;
        while self.short(data) {
            let Some((back, d)) = self.held.pop_front() else {
                break;
            };
            t = t.max(back);
            self.used_headers -= 1;
            self.used_data -= d;
        }
        t
    }

    /// Holds a header credit and `data` data credits until `back`.
    fn hold(&mut self, back: f64, data: u64) {
        self.used_headers += 1;
        self.used_data += data;
        self.held.push_back((back, data));
    }
}

/// The root complex's inbound path as one server (`inbound = "ordered"`): every upstream
/// request, posted write or read request of any channel, is served one at a time in the order
/// it arrives, each for its kind's time per TLP and per byte.
#[derive(Debug, Clone)]
struct Server {
    /// When the last request queued has been served, in ps.
    free_at: f64,
    write_tlp: f64,
    write_byte: f64,
    read_tlp: f64,
    read_byte: f64,
    credits: Credits,
}

impl Server {
    fn new(root: &RootConfig) -> Server {
        Server {
            free_at: 0.0,
            write_tlp: root.write_tlp_ns * PS_PER_NS,
            write_byte: root.write_ns_per_byte * PS_PER_NS,
            read_tlp: root.read_tlp_ns * PS_PER_NS,
            read_byte: root.read_ns_per_byte * PS_PER_NS,
            credits: Credits::new(root.posted_header_credits, root.posted_data_credits),
        }
    }

    /// A request arriving at `arrived` that occupies the server for `cost` ps: when the server
    /// takes it, behind everything that arrived before it. The cost is the server's occupancy,
    /// what bounds its rate, not a delay of its own: a request that finds the server free is
    /// taken on arrival (the root port's fixed latencies are the link's and `root_read`), so
    /// a caller that never queues pays nothing for the server.
    fn serve(&mut self, arrived: f64, cost: f64) -> f64 {
        let taken = self.free_at.max(arrived);
        self.free_at = taken + cost;
        taken
    }
}

/// When a posted write up the link reaches host memory, and when the C2H request ID whose data
/// it carries is free again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    /// The write is in host memory (and a message has reached the host).
    pub arrived: Ps,
    /// The IP frees the C2H request ID: when the write is handed to the PCIe block (PG195,
    /// `inbound = "ordered"`), or when the root port's acknowledge is back
    /// (`"independent"`).
    pub released: Ps,
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
    /// The ordered inbound server; `None` for `inbound = "independent"`.
    server: Option<Server>,
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
                server: (cfg.root.inbound == Inbound::Ordered).then(|| Server::new(&cfg.root)),
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
    /// the request goes up, the root complex answers after its read latency (from when the
    /// ordered server takes the request, behind every request that arrived before it), the
    /// completions come down cut at the read completion boundary. Returns each completion's
    /// arrival at the card with the bytes it carries; the tag is held until the last one is
    /// in. Untimed, the bytes are there at once.
    pub fn read(&mut self, at: Ps, host: u64, len: u64) -> Option<Vec<(Ps, u64)>> {
        let Some(t) = &mut self.timed else {
            return Some(vec![(at, len)]);
        };
        if !t.tags.has_room(0) {
            return None;
        }
        let flight = t.link.flight();
        let sent = t.link.send(Way::Up, at, Tlp::Read);
        let answer = match &mut t.server {
            Some(s) => {
                let cost = s.read_tlp + s.read_byte * len as f64;
                s.serve((sent + flight) as f64, cost).ceil() as Ps + t.root_read
            }
            None => sent + flight + t.root_read,
        };
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
    /// returns when it reaches host memory.
    pub fn write(&mut self, at: Ps, len: u64) -> Ps {
        self.post(at, len).arrived
    }

    /// A posted write of `len` bytes up the link, given to the PCIe block at `at`. With the
    /// ordered server it waits in the block for the root port's posted credits (and every
    /// request behind it waits too: PCIe ordering lets neither a read request nor another
    /// write pass it), goes up once they are free, and is in host memory once the server has
    /// taken it, behind every request that arrived before it; its credits come back a flight
    /// after that. Without it (`"independent"`), it is in host memory on arrival and
    /// its ID is held until the root port's acknowledge is back.
    pub fn post(&mut self, at: Ps, len: u64) -> Written {
        let Some(t) = &mut self.timed else {
            return Written {
                arrived: at,
                released: at,
            };
        };
        let flight = t.link.flight();
        match &mut t.server {
            Some(s) => {
                let data = len.div_ceil(CREDIT_BYTES);
                let handed = s.credits.take(at as f64, data).ceil() as Ps;
                let sent = t.link.send(Way::Up, handed, Tlp::Write(len));
                let cost = s.write_tlp + s.write_byte * len as f64;
                let taken = s.serve((sent + flight) as f64, cost);
                s.credits.hold(taken + flight as f64, data);
                Written {
                    arrived: taken.ceil() as Ps,
                    released: handed,
                }
            }
            None => {
                let arrived = t.link.send(Way::Up, at, Tlp::Write(len)) + flight;
                Written {
                    arrived,
                    released: arrived + t.root_ack + flight,
                }
            }
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
    /// Completions go to the waiting processor, not to host memory, so they do not enter the
    /// inbound server; on the link they queue behind everything sent before them.
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

#[cfg(test)]
mod inbound {
    //! The ordered inbound server against its arithmetic: the rates and splits below are
    //! computed from the configuration's costs, never from the port's own output.
    use super::*;

    fn port(root: RootConfig, link: LinkConfig, tags: u32) -> Pcie {
        Pcie::new(Some(PcieConfig {
            link,
            root,
            tags,
            ..PcieConfig::default()
        }))
    }

    /// MB/s (bytes per us) of `bytes` moved in `ps`.
    fn mb_s(bytes: u64, ps: Ps) -> f64 {
        bytes as f64 / (ps as f64 / 1e6)
    }

    /// Reads of `len` bytes issued whenever a tag is free, `n` of them: returns the arrival of
    /// the last completion of the first and of the last read.
    fn reads(p: &mut Pcie, n: usize, len: u64) -> (Ps, Ps) {
        let mut now = 0;
        let mut out: VecDeque<Ps> = VecDeque::new();
        let (mut first, mut last) = (None, 0);
        let tags = p.config().map_or(1, |c| c.tags) as usize;
        for _ in 0..n {
            if out.len() == tags {
                now = out.pop_front().unwrap_or(now).max(now);
            }
            p.advance(now);
            let cpls = p.read(now, 0, len).expect("a tag is free");
            last = cpls.last().map_or(now, |c| c.0);
            first.get_or_insert(last);
            out.push_back(last);
        }
        (first.unwrap_or(0), last)
    }

    #[test]
    fn one_kind_alone_saturates_the_server_at_its_own_rate() {
        let root = RootConfig::default();
        assert_eq!(root.inbound, Inbound::Ordered);
        // Writes alone, handed to the PCIe block as fast as the credits take them: the server
        // drains 256-byte writes at 1 / write_ns_per_byte (the link would carry 3646 MB/s).
        let mut p = port(root, LinkConfig::default(), 32);
        let n = 4000u64;
        let times: Vec<Written> = (0..n).map(|_| p.post(0, 256)).collect();
        let got = mb_s(
            (n - 1) * 256,
            times[n as usize - 1].arrived - times[0].arrived,
        );
        let want = 1e3 / (root.write_tlp_ns / 256.0 + root.write_ns_per_byte);
        assert!(
            (got / want - 1.0).abs() < 0.005,
            "writes alone: {got:.1} MB/s, the server's rate {want:.1}"
        );
        // The credits bound what waits in the server: a write is handed once one in 2560
        // bytes ahead of it has been served and its credits are back.
        assert!(times[n as usize - 1].released > times[n as usize - 1 - 10].arrived);
        // Reads alone, as many in flight as the tags allow: the server takes 512-byte
        // requests at 1 / read_ns_per_byte (the link's 128-byte completions would carry
        // 3449 MB/s).
        let mut p = port(root, LinkConfig::default(), 32);
        let n = 4000;
        let (first, last) = reads(&mut p, n, 512);
        let got = mb_s((n as u64 - 1) * 512, last - first);
        let want = 1e3 / (root.read_tlp_ns / 512.0 + root.read_ns_per_byte);
        assert!(
            (got / want - 1.0).abs() < 0.005,
            "reads alone: {got:.1} MB/s, the server's rate {want:.1}"
        );
    }

    #[test]
    fn a_request_alone_does_not_queue() {
        // A serial caller finds the server idle: it is taken on arrival, so every request
        // ends when it does in the independent model (the server's cost is its occupancy,
        // which only a request behind it waits for).
        let link = LinkConfig::default();
        let root = RootConfig::default();
        let mut ordered = port(root, link, 32);
        let mut independent = port(
            RootConfig {
                inbound: Inbound::Independent,
                ..root
            },
            link,
            32,
        );
        let mut at = 0;
        for len in [32u64, 512, 4096] {
            let o = ordered.read(at, 0, len).expect("tag");
            let i = independent.read(at, 0, len).expect("tag");
            let (o, i) = (o.last().expect("a completion").0, i.last().expect("one").0);
            assert!(o.abs_diff(i) <= 1, "read of {len}: {o} vs {i}");
            at = o + 1_000_000;
        }
        for len in [4u64, 256] {
            let o = ordered.post(at, len);
            let i = independent.post(at, len);
            assert!(o.arrived.abs_diff(i.arrived) <= 1, "write of {len}");
            // PG195: the ID is free once the PCIe block has the write, at once when credits
            // are free.
            assert_eq!(o.released, at);
            at = o.arrived + 1_000_000;
        }
    }

    /// Both windows kept full on a link and root fast enough that every request spends its
    /// life in the server: `read_ids` reads in flight, each held until its last completion;
    /// writes handed to the PCIe block with `write_ids` IDs, each free once its write is
    /// handed, behind `credits` writes' worth of posted credits. Returns the bytes of reads
    /// and of writes the server finished in the second half of `span` ps.
    fn both(read_ids: u32, credits: u32, write_ids: usize, span: Ps) -> (u64, u64) {
        let root = RootConfig {
            read_latency_ns: 0.0,
            posted_header_credits: 0,
            posted_data_credits: credits * 256 / CREDIT_BYTES as u32,
            // Ten times the defaults' costs, so that the link's wire time is a small part of
            // each request's life.
            write_ns_per_byte: 3.98,
            read_ns_per_byte: 2.93,
            ..RootConfig::default()
        };
        let link = LinkConfig {
            generation: 5,
            lanes: 16,
            flight_ns: 0.0,
            ..LinkConfig::default()
        };
        let mut p = port(root, link, read_ids);
        let mut now = 0;
        let mut reads: VecDeque<Ps> = VecDeque::new();
        let mut writes: VecDeque<Ps> = VecDeque::new();
        let (mut rb, mut wb) = (0, 0);
        let from = span / 2;
        // The time at which a window has a slot: now if it has one, else when its oldest is
        // free.
        let slot = |q: &VecDeque<Ps>, cap: usize, now: Ps| {
            if q.len() < cap {
                now
            } else {
                q.front().copied().unwrap_or(now).max(now)
            }
        };
        while now < span {
            let read_at = slot(&reads, read_ids as usize, now);
            let write_at = slot(&writes, write_ids, now);
            now = read_at.min(write_at);
            for q in [&mut reads, &mut writes] {
                while q.front().is_some_and(|&t| t <= now) {
                    q.pop_front();
                }
            }
            p.advance(now);
            if read_at <= write_at {
                let done = p.read(now, 0, 512).expect("a tag").last().expect("cpl").0;
                reads.push_back(done);
                if (from..span).contains(&done) {
                    rb += 512;
                }
            } else {
                let w = p.post(now, 256);
                writes.push_back(w.released);
                if (from..span).contains(&w.arrived) {
                    wb += 256;
                }
            }
        }
        (rb, wb)
    }

    #[test]
    fn with_both_windows_queued_the_bytes_split_as_the_windows() {
        // A first-come first-served server with each side's whole window in its queue serves
        // every request of both windows once per round, so the bytes split as the windows do:
        // 512-byte reads times the H2C window against 256-byte writes times the C2H window.
        // The C2H window is what PCIe ordering puts ahead of a read: the writes the posted
        // credits let into the server and those waiting for credits in the PCIe block, one per
        // C2H ID (released when its write is handed).
        for (h2c, credits, c2h) in [(4u32, 6u32, 2usize), (8, 6, 2), (16, 6, 2), (8, 2, 6)] {
            let (rb, wb) = both(h2c, credits, c2h, 2_000_000_000);
            let got = rb as f64 / wb as f64;
            let want = f64::from(h2c * 512) / ((credits as usize + c2h) * 256) as f64;
            assert!(
                (got / want - 1.0).abs() < 0.02,
                "H2C {h2c} x 512 against C2H ({credits} + {c2h}) x 256: bytes {rb}:{wb} = {got:.3}, windows {want:.3}"
            );
        }
    }

    #[test]
    fn independent_is_the_model_without_the_server() {
        // The independent setting answers each read after the read latency and takes each
        // write on arrival, whatever else is in flight, with the C2H ID held until the root's
        // acknowledge: the link's arithmetic alone, replayed here on a bare link.
        let root = RootConfig {
            inbound: Inbound::Independent,
            ..RootConfig::default()
        };
        let cfg = LinkConfig::default();
        let mut p = port(root, cfg, 1024);
        let mut link = Link::new(cfg);
        let (flight, rl, ack) = (
            ns(cfg.flight_ns),
            ns(root.read_latency_ns),
            ns(root.ack_latency_ns),
        );
        for i in 0..500u64 {
            let at = i * 37_000;
            if i % 3 == 0 {
                let got = p.read(at, i * 512, 512).expect("tag");
                let answer = link.send(Way::Up, at, Tlp::Read) + flight + rl;
                let want: Vec<(Ps, u64)> = link
                    .completions(answer, i * 512, 512)
                    .into_iter()
                    .map(|(c, n)| (c + flight, n))
                    .collect();
                assert_eq!(got, want);
            } else {
                let got = p.post(at, 256);
                let arrived = link.send(Way::Up, at, Tlp::Write(256)) + flight;
                assert_eq!(
                    got,
                    Written {
                        arrived,
                        released: arrived + ack + flight
                    }
                );
            }
        }
    }
}
