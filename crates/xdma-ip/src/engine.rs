//! The DMA engines: a run from the run bit's rising edge until the engine stops, its
//! descriptor fetches, and the data each kind of engine moves between host memory and the
//! card's buses.
//!
//! Every access to host memory goes through the IP's PCIe port ([`Pcie`]): descriptor blocks
//! and H2C data are memory reads whose completions arrive over the link, C2H data, write-backs
//! and result records are posted writes up the link. Without timing the port answers at
//! once, and the engines are then paced by the card's buses alone.

use std::collections::VecDeque;

use axi_bfm::burst::{self, Piece};
use axi_bfm::{AxisFrame, Resp, TxnId};
use xdma_regmap::{self as map, control, status, Descriptor};

use crate::config::EngineKind;
use crate::ip::{XdmaIp, LOGGED};
use crate::pcie::{pcie_pieces, Ps, Slots};
use crate::{HostMemory, Result};

/// Bursts an engine plans ahead of the bus: enough to keep the card's AXI port busy without
/// planning a whole long chain at once.
const PLAN_AHEAD: usize = 64;
/// Bytes an engine keeps on the card's bus without timing (with timing its request IDs bound
/// them): 64 H2C bursts of 256 bytes or four C2H reads of 4 KiB, as many as keep the card's
/// paths busy. Counted in bytes, not bursts, since what is on the bus when the run bit is
/// cleared must still be drained before the engine is idle (see [`XdmaIp::stop`]).
const UNTIMED_ON_BUS_BYTES: u64 = 16 << 10;
/// Bytes of the status write-back in poll mode.
const WRITEBACK_BYTES: u64 = 8;

/// Bytes between two progress events of an engine's run.
pub(crate) const PROGRESS_STEP: u64 = 64 << 20;

/// Progress of a long run as `tracing` events (target `xdma_ip::progress`), one each
/// [`PROGRESS_STEP`] bytes: a transfer of a GiB takes minutes of wall time on the simulated
/// card, and a tool can show these as its progress.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    done: u64,
    reported: u64,
}

impl Progress {
    fn update(&mut self, engine: EngineName, bytes: u64) {
        self.done += bytes;
        let step = self.done / PROGRESS_STEP;
        if step > self.reported {
            self.reported = step;
            tracing::info!(
                target: "xdma_ip::progress",
                %engine,
                done = self.done,
                "{engine}: {} MiB of this run so far",
                self.done >> 20
            );
        }
    }
}

/// An engine's name, `H2C0-MM` or `C2H1-ST`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EngineName {
    c2h: bool,
    channel: usize,
    stream: bool,
}

impl std::fmt::Display for EngineName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}{}-{}",
            if self.c2h { "C2H" } else { "H2C" },
            self.channel,
            if self.stream { "ST" } else { "MM" }
        )
    }
}

/// A descriptor as the engine fetched it, or the status bits its fetch failed with.
type Fetched = std::result::Result<Descriptor, u32>;

#[derive(Debug)]
pub(crate) struct Engine {
    pub(crate) c2h: bool,
    pub(crate) channel: usize,
    pub(crate) kind: EngineKind,
    /// The stream port of the card, for a stream engine.
    pub(crate) port: usize,
    /// Channel interrupt request bit (H2C engines first).
    pub(crate) irq_bit: u32,
    pub(crate) control: u32,
    pub(crate) status: u32,
    pub(crate) completed: u32,
    pub(crate) ie_mask: u32,
    pub(crate) wb: u64,
    pub(crate) first_desc: u64,
    pub(crate) adjacent: u32,
    pub(crate) credits: u32,
    pub(crate) perf_ctrl: u32,
    pub(crate) perf_cyc: u64,
    pub(crate) perf_dat: u64,
    pub(crate) perf_pnd: u64,
    pub(crate) run: Option<Run>,
}

impl Engine {
    pub(crate) fn new(
        c2h: bool,
        channel: usize,
        kind: EngineKind,
        port: usize,
        irq_bit: u32,
    ) -> Engine {
        Engine {
            c2h,
            channel,
            kind,
            port,
            irq_bit,
            control: 0,
            status: 0,
            completed: 0,
            ie_mask: 0,
            wb: 0,
            first_desc: 0,
            adjacent: 0,
            credits: 0,
            perf_ctrl: 0,
            perf_cyc: 0,
            perf_dat: 0,
            perf_pnd: 0,
            run: None,
        }
    }

    pub(crate) fn stream(&self) -> bool {
        self.kind == EngineKind::Stream
    }

    /// The engine's name for messages, formatted only when a message is written: the engine
    /// looks it up on every cycle it runs.
    pub(crate) fn name(&self) -> EngineName {
        EngineName {
            c2h: self.c2h,
            channel: self.channel,
            stream: self.stream(),
        }
    }

    /// Sets status bits, as far as the control register enables their logging.
    pub(crate) fn log(&mut self, bits: u32) {
        self.status |= bits & (self.control & LOGGED);
    }

    /// Whether the run bit was cleared and the engine has yet to go idle.
    pub(crate) fn stopping(&self) -> bool {
        self.run.as_ref().is_some_and(|r| r.stopping)
    }

    pub(crate) fn requesting(&self) -> bool {
        self.status & self.ie_mask & LOGGED != 0
    }

    fn axi_id(&self) -> u32 {
        // One AXI ID per memory-mapped engine, so its responses come back in order.
        self.channel as u32
    }
}

/// The descriptors of a run as the engine fetches them: a block of adjacent descriptors per
/// memory read, the next block fetched while the engine works on the one before.
#[derive(Debug, Default)]
pub(crate) struct Supply {
    /// Where the next block starts and how many adjacent descriptors follow its first;
    /// `None` once a descriptor with STOP (or a failed fetch) has been fetched.
    next: Option<(u64, u32)>,
    /// A block on its way: when its last completion is in, and what it holds.
    fetching: Option<(Ps, Vec<Fetched>)>,
    /// Descriptors in the engine, not yet taken.
    ready: VecDeque<Fetched>,
}

impl Supply {
    /// Nothing more will come: every descriptor fetched has been taken.
    fn exhausted(&self) -> bool {
        self.next.is_none() && self.fetching.is_none() && self.ready.is_empty()
    }
}

/// Reads of host memory for H2C data: requests of at most the max read request size within
/// the engine's request IDs and the shared tags, their bytes arriving in order. Offsets count
/// the run's bytes from its start.
#[derive(Debug)]
pub(crate) struct Reads {
    /// Requests not yet issued: host address, bytes, offset of their end.
    queued: VecDeque<(u64, u64, u64)>,
    /// Offset after the last request queued.
    end: u64,
    /// Request IDs, each held until the card has taken the bytes up to its end offset.
    ids: Slots<u64>,
    /// Completions on their way: arrival and the offset up to which bytes are then in.
    arrivals: VecDeque<(Ps, u64)>,
    /// Bytes in the engine, from the start of the run.
    arrived: u64,
}

impl Reads {
    fn new(ids: u32) -> Reads {
        Reads {
            queued: VecDeque::new(),
            end: 0,
            ids: Slots::new(ids),
            arrivals: VecDeque::new(),
            arrived: 0,
        }
    }

    /// Queues the reads of `len` bytes at host address `host`; returns their first offset.
    fn push(&mut self, host: u64, len: u64, max_read: u64) -> u64 {
        let start = self.end;
        let mut at = host;
        for n in pcie_pieces(host, len, max_read) {
            self.end += n;
            self.queued.push_back((at, n, self.end));
            at += n;
        }
        start
    }
}

/// One AXI burst of a descriptor, planned.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Planned {
    piece: Piece,
    /// Host address of the burst's first byte.
    host: u64,
    /// The burst belongs to a descriptor after the current one when the run bit was cleared:
    /// the card still answers it (an AXI burst cannot be taken back), but it moves nothing
    /// to or from host memory and completes no descriptor.
    void: bool,
    /// Offset of its first byte in the run (H2C: where its bytes arrive).
    off: u64,
    /// The descriptor, on the descriptor's last burst.
    last_of: Option<Descriptor>,
}

/// An engine's run: from the run bit's rising edge until it stops.
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) supply: Supply,
    /// H2C: reads of host memory.
    reads: Reads,
    /// C2H memory-mapped: request IDs, each held until its memory write is acknowledged.
    write_ids: Slots<Ps>,
    /// Memory-mapped: bursts planned and not yet issued, in order.
    planned: VecDeque<Planned>,
    /// Memory-mapped: bursts on the card's bus, in order (one AXI ID per engine), with their
    /// issue time.
    on_bus: VecDeque<(TxnId, Planned, Ps)>,
    /// Memory-mapped: the bytes of the bursts in `on_bus`.
    on_bus_bytes: u64,
    /// H2C: bytes the card has taken, from the start of the run.
    taken: u64,
    /// H2C stream: descriptors of the packet being gathered, its bytes, and its first offset.
    packet: Vec<Descriptor>,
    packet_bytes: Vec<u8>,
    packet_off: u64,
    /// H2C stream: descriptors of the packet on the stream, its length and first offset.
    sending: Vec<Descriptor>,
    sending_len: usize,
    sending_off: u64,
    /// C2H stream: the descriptor being filled and the bytes it has.
    filling: Option<(Descriptor, usize)>,
    /// C2H stream: bytes of the packet arriving that have gone up the link.
    posted: u64,
    /// C2H stream: the port takes beats.
    open: bool,
    /// The run bit was cleared: finish the current descriptor, fetch and start nothing
    /// after it.
    stopping: bool,
    /// A descriptor fetch failed with these status bits: the run ends with them once what
    /// is on the bus before it has finished.
    fault: Option<u32>,
    progress: Progress,
}

impl Run {
    fn new(first: u64, adjacent: u32, read_ids: u32, write_ids: u32) -> Run {
        Run {
            supply: Supply {
                next: Some((first, adjacent)),
                ..Supply::default()
            },
            reads: Reads::new(read_ids),
            write_ids: Slots::new(write_ids),
            planned: VecDeque::new(),
            on_bus: VecDeque::new(),
            on_bus_bytes: 0,
            taken: 0,
            packet: Vec::new(),
            packet_bytes: Vec::new(),
            packet_off: 0,
            sending: Vec::new(),
            sending_len: 0,
            sending_off: 0,
            filling: None,
            posted: 0,
            open: false,
            stopping: false,
            fault: None,
            progress: Progress::default(),
        }
    }
}

impl XdmaIp {
    pub(crate) fn engine(&mut self, c2h: bool, ch: usize) -> Option<&mut Engine> {
        if c2h {
            self.c2h.get_mut(ch)
        } else {
            self.h2c.get_mut(ch)
        }
    }

    fn run_of(&mut self, c2h: bool, ch: usize) -> Option<&mut Run> {
        self.engine(c2h, ch).and_then(|e| e.run.as_mut())
    }

    /// The run bit's rising edge: the engine starts at its first descriptor.
    pub(crate) fn start(&mut self, c2h: bool, ch: usize) {
        let credit = c2h && self.credit_mode >> (16 + ch) & 1 == 1;
        let timing = self.pcie.config().copied();
        let (read_ids, write_ids) = timing.map_or((u32::MAX, u32::MAX), |t| {
            (t.h2c_request_ids, t.c2h_request_ids)
        });
        let Some(e) = self.engine(c2h, ch) else {
            return;
        };
        e.completed = 0;
        e.status = status::BUSY;
        if !credit {
            e.credits = u32::MAX;
        }
        e.run = Some(Run::new(e.first_desc, e.adjacent, read_ids, write_ids));
        tracing::debug!(engine = %e.name(), first = e.first_desc, "engine started");
    }

    /// The run bit cleared. PG195 (H2C and C2H Channel Control 0x04, Run): "Reset to 0 to
    /// stop transfer. If the engine is busy it completes the current descriptor"; the status
    /// register's idle_stopped is set "when the engine is idle after resetting the Control
    /// register Run bit". So a memory-mapped engine completes the descriptor it is on (the
    /// one of its oldest burst not yet answered, once any of its bursts has gone out): it
    /// issues that descriptor's remaining bursts and counts it, and for C2H writes its data
    /// to host memory. It fetches, plans and starts nothing after it. Bursts of later
    /// descriptors already on the card's bus are answered there, since an AXI master cannot
    /// take an address back, but they are void: their data goes nowhere (C2H) and their
    /// descriptors are not counted. The engine is idle once its bus is, and from then on
    /// it writes nothing to host memory: a driver may free the pages the chain pointed at
    /// as soon as it sees the engine stopped (`xdma.ko`'s performance stop frees them at
    /// once). Stream engines stop as `step_h2c_stream` and `step_c2h_stream` say: a packet
    /// on the H2C stream leaves whole, a C2H descriptor half filled is given up.
    pub(crate) fn stop(&mut self, c2h: bool, ch: usize) {
        let Some(e) = self.engine(c2h, ch) else {
            return;
        };
        let name = e.name();
        let stream = e.stream();
        let Some(r) = e.run.as_mut() else {
            return;
        };
        r.stopping = true;
        if !stream {
            match r.on_bus.iter().position(|(_, p, _)| p.last_of.is_some()) {
                Some(last) => {
                    // The current descriptor's last burst is out: what follows it is void.
                    for (_, p, _) in r.on_bus.iter_mut().skip(last + 1) {
                        p.void = true;
                    }
                    r.planned.clear();
                }
                None => {
                    // Its last burst is still planned: the engine goes on to it. (With
                    // nothing planned, the engine is between descriptors, waiting for a
                    // fetch, and stops at once.)
                    let keep = r
                        .planned
                        .iter()
                        .position(|p| p.last_of.is_some())
                        .map_or(r.planned.len(), |i| i + 1);
                    r.planned.truncate(keep);
                }
            }
            // H2C: the host reads still queued are those of the current descriptor's
            // remaining bursts at most (reads are queued a descriptor at a time, in order).
            let need = r.planned.back().map_or(0, |p| p.off + p.piece.bytes as u64);
            while r.reads.queued.back().is_some_and(|q| q.2 > need) {
                r.reads.queued.pop_back();
            }
        }
        tracing::debug!(
            engine = %name,
            on_bus = r.on_bus.len(),
            void = r.on_bus.iter().filter(|(_, p, _)| p.void).count(),
            planned = r.planned.len(),
            "run cleared"
        );
    }

    /// Ends an engine's run: BUSY low, the stream closed, the write-back written.
    fn finish(&mut self, c2h: bool, ch: usize, bits: u32, error: bool, mem: &mut dyn HostMemory) {
        let Some(e) = self.engine(c2h, ch) else {
            return;
        };
        // A packet the run had gathered but not sent is dropped with the run; a descriptor
        // half filled keeps its bytes for nobody (the run that ended was given up).
        e.run = None;
        e.status &= !status::BUSY;
        e.log(bits);
        let (stream, port, wb, count) = (e.stream(), e.port, e.wb, e.completed);
        let poll = e.control & control::POLL_MODE_WB != 0;
        tracing::debug!(engine = %e.name(), status = e.status, completed = count, "engine stopped");
        if stream && c2h {
            if let Some(s) = self.card.c2h(port) {
                s.set_enabled(false);
            }
        } else if stream {
            if let Some(s) = self.card.h2c(port) {
                s.set_credit(None);
            }
        }
        if poll && error {
            self.write_back(wb, count | map::WB_ERR, mem);
        }
    }

    /// A posted write of the poll-mode write-back: host memory has it once it arrives.
    fn write_back(&mut self, addr: u64, v: u32, mem: &mut dyn HostMemory) {
        let now = self.now();
        let at = self.pcie.write(now, WRITEBACK_BYTES);
        self.post(at, addr, v.to_le_bytes().to_vec(), mem);
    }

    /// A descriptor is done: counted, its flags logged, the write-back written.
    fn complete(
        &mut self,
        c2h: bool,
        ch: usize,
        d: &Descriptor,
        bytes: u64,
        mem: &mut dyn HostMemory,
    ) {
        let Some(e) = self.engine(c2h, ch) else {
            return;
        };
        e.completed = e.completed.wrapping_add(1);
        e.perf_dat += bytes.div_ceil(16);
        let name = e.name();
        if let Some(run) = e.run.as_mut() {
            run.progress.update(name, bytes);
        }
        let Some(e) = self.engine(c2h, ch) else {
            return;
        };
        let count = e.completed;
        let wb = e.wb;
        let poll = e.control & control::POLL_MODE_WB != 0;
        if d.control & map::desc::COMPLETED != 0 {
            e.log(status::DESC_COMPLETED);
        }
        self.stats.descriptors += 1;
        self.stats.bytes += bytes;
        // PG195: in poll mode the count is written back when a descriptor with its Completed
        // bit set completes.
        if poll && d.control & map::desc::COMPLETED != 0 {
            self.write_back(wb, count & map::WB_COUNT_MASK, mem);
        }
    }

    /// Moves the run's descriptor fetches on: a block whose completions are in joins the
    /// descriptors in the engine, and the next block is fetched once the engine has started
    /// on the last one (one block ahead), as far as the tags and credits allow.
    fn supply(&mut self, c2h: bool, ch: usize, mem: &mut dyn HostMemory) {
        let now = self.now();
        let block_max = self
            .pcie
            .config()
            .map_or(u32::from(map::desc::ADJ_MASK as u8) + 1, |t| {
                t.descriptor_block
            })
            .max(1) as usize;
        let align = u64::from(self.cfg.alignment);
        let Some(e) = self.engine(c2h, ch) else {
            return;
        };
        let (stream, credits, name) = (e.stream(), e.credits, e.name());
        let Some(run) = e.run.as_mut() else { return };
        let s = &mut run.supply;
        if s.fetching.as_ref().is_some_and(|(at, _)| *at <= now) {
            if let Some((_, got)) = s.fetching.take() {
                s.ready.extend(got);
            }
        }
        if run.stopping || s.fetching.is_some() || s.ready.len() >= block_max || credits == 0 {
            return;
        }
        let Some((addr, adj)) = s.next else { return };
        let n = (adj as usize + 1).min(block_max).min(credits as usize);
        let Some(cpls) = self.pcie.read(now, addr, (n * map::DESC_BYTES) as u64) else {
            return;
        };
        self.stats.descriptor_fetches += 1;
        let ready_at = cpls.last().map_or(now, |c| c.0);
        let mut got = Vec::with_capacity(n);
        let mut next = None;
        for i in 0..n {
            let at = addr + (i * map::DESC_BYTES) as u64;
            let mut b = [0u8; map::DESC_BYTES];
            if mem.read(at, &mut b).is_err() {
                tracing::info!(engine = %name, at, "descriptor outside host memory");
                got.push(Err(status::DESC_UNSUPP_REQ));
                break;
            }
            let d = Descriptor::from_bytes(&b);
            if !d.magic_ok() {
                tracing::info!(engine = %name, at, "descriptor with a bad magic");
                got.push(Err(status::MAGIC_STOPPED));
                break;
            }
            // Only a memory-mapped descriptor pairs two data addresses (a C2H stream's source
            // is its result record, an H2C stream's destination is unused).
            if align > 1 && d.src % align != d.dst % align && !stream {
                tracing::info!(engine = %name, src = d.src, dst = d.dst, "descriptor addresses not aligned alike");
                got.push(Err(status::ALIGN_MISMATCH));
                break;
            }
            got.push(Ok(d));
            if d.control & map::desc::STOP != 0 {
                break;
            }
            if i + 1 == n {
                next = if n < adj as usize + 1 {
                    Some((addr + (n * map::DESC_BYTES) as u64, adj - n as u32))
                } else {
                    Some((
                        d.next,
                        (d.control >> map::desc::ADJ_SHIFT) & map::desc::ADJ_MASK,
                    ))
                };
            }
        }
        let fetched = got.len() as u32;
        let Some(e) = self.engine(c2h, ch) else {
            return;
        };
        if e.credits != u32::MAX {
            e.credits = e.credits.saturating_sub(fetched);
        }
        let Some(run) = e.run.as_mut() else { return };
        run.supply.next = next;
        if ready_at <= now {
            run.supply.ready.extend(got);
        } else {
            run.supply.fetching = Some((ready_at, got));
        }
    }

    pub(crate) fn step(&mut self, c2h: bool, ch: usize, mem: &mut dyn HostMemory) -> Result<()> {
        let Some(e) = self.engine(c2h, ch) else {
            return Ok(());
        };
        if e.perf_ctrl & 1 != 0 || (e.perf_ctrl & 4 != 0 && e.run.is_some()) {
            e.perf_cyc += 1;
        }
        if e.run.is_none() {
            return Ok(());
        }
        match (e.kind, c2h) {
            (EngineKind::MemoryMapped, false) => self.step_mm_h2c(ch, mem),
            (EngineKind::MemoryMapped, true) => self.step_mm_c2h(ch, mem),
            (EngineKind::Stream, false) => self.step_h2c_stream(ch, mem),
            (EngineKind::Stream, true) => self.step_c2h_stream(ch, mem),
        }
    }

    /// Takes descriptors into the memory-mapped plan while it is short: each split into AXI
    /// bursts of at most `beats` beats (never across 4 KiB), an H2C one's data queued as reads
    /// of host memory. A failed fetch at the head ends the planning with its fault.
    fn plan_mm(&mut self, c2h: bool, ch: usize, beats: u32) {
        let bus = self.card.dma().bus_bytes();
        let max_read = self.pcie.max_read_request();
        let Some(e) = self.engine(c2h, ch) else {
            return;
        };
        let id = e.axi_id();
        let fixed = e.control & control::NON_INCR_ADDR != 0;
        let Some(run) = e.run.as_mut() else { return };
        while !run.stopping && run.fault.is_none() && run.planned.len() < PLAN_AHEAD {
            let Some(f) = run.supply.ready.pop_front() else {
                break;
            };
            let d = match f {
                Ok(d) => d,
                Err(bits) => {
                    run.fault = Some(bits);
                    run.supply.next = None;
                    break;
                }
            };
            let len = d.length() as u64;
            let (card, host) = if c2h { (d.src, d.dst) } else { (d.dst, d.src) };
            // PG195's fixed-address mode ("AXI4 MM fixed address" in its alignment and length
            // granularity tables) needs the card address and the length in whole beats of the
            // data path; a descriptor that breaks the rule stops the engine on it.
            let whole = |v: u64| v.is_multiple_of(bus as u64);
            if fixed && !(whole(card) && whole(len)) {
                run.fault = Some(status::ALIGN_MISMATCH);
                run.supply.next = None;
                break;
            }
            let off = if c2h {
                0
            } else {
                run.reads.push(host, len, max_read)
            };
            // Every beat of a fixed-address descriptor goes to its card address: FIXED
            // bursts, as a keyhole is addressed on AXI (PG195 names no burst type for the
            // mode; FIXED is the one AXI has for it).
            let pieces = if fixed {
                burst::split_fixed(id, card, len as usize, bus)
            } else {
                burst::split(id, card, len as usize, bus, beats)
            };
            let n = pieces.len();
            if n == 0 {
                // A descriptor of no bytes has no burst: it completes with the one before.
                run.planned.push_back(Planned {
                    piece: Piece {
                        burst: burst::Burst::incr(id, card, bus.trailing_zeros() as u8, 1),
                        offset: 0,
                        bytes: 0,
                    },
                    host,
                    void: false,
                    off,
                    last_of: Some(d),
                });
                continue;
            }
            for (i, p) in pieces.into_iter().enumerate() {
                run.planned.push_back(Planned {
                    piece: p,
                    host: host + p.offset as u64,
                    void: false,
                    off: off + p.offset as u64,
                    last_of: (i + 1 == n).then_some(d),
                });
            }
        }
    }

    /// What ends a memory-mapped run once its bus is idle: a fault, a cleared run bit.
    fn end_mm(&mut self, c2h: bool, ch: usize, mem: &mut dyn HostMemory) {
        let Some(run) = self.run_of(c2h, ch) else {
            return;
        };
        if !run.on_bus.is_empty() {
            return;
        }
        if run.stopping {
            // Idle once the current descriptor is done and the bus is clear.
            if run.planned.is_empty() {
                self.finish(c2h, ch, status::IDLE_STOPPED, false, mem);
            }
        } else if let Some(bits) = run.fault.filter(|_| run.planned.is_empty()) {
            self.finish(c2h, ch, bits, true, mem);
        }
    }

    /// An error answer from the card: logged, and the run ended when the control register
    /// enables stopping on it (PG195: the ie_*_error bits enable logging the error and
    /// stopping the engine; without them the engine goes on as if nothing happened, and the
    /// Linux driver enables read errors, not write errors). True when the run ended.
    fn bus_error(
        &mut self,
        c2h: bool,
        ch: usize,
        resp: Resp,
        mem: &mut dyn HostMemory,
    ) -> Result<bool> {
        let (bits, group) = match (c2h, resp) {
            (false, Resp::DecErr) => (status::H2C_W_DECODE_ERR, control::IE_WRITE_ERROR),
            (false, _) => (status::H2C_W_SLAVE_ERR, control::IE_WRITE_ERROR),
            (true, Resp::DecErr) => (status::C2H_R_DECODE_ERR, control::IE_READ_ERROR),
            (true, _) => (status::C2H_R_SLAVE_ERR, control::IE_READ_ERROR),
        };
        tracing::info!(
            c2h,
            ch,
            ?resp,
            "the card answered a DMA burst with an error"
        );
        if self.engine(c2h, ch).is_some_and(|e| e.control & group != 0) {
            self.abandon_mm(c2h, ch)?;
            self.finish(c2h, ch, bits, true, mem);
            return Ok(true);
        }
        Ok(false)
    }

    /// A memory-mapped H2C run: reads of host memory as the request IDs and tags allow, each
    /// AXI write burst issued once its bytes have arrived, descriptors completed in order as
    /// the card answers their last burst.
    fn step_mm_h2c(&mut self, ch: usize, mem: &mut dyn HostMemory) -> Result<()> {
        let now = self.now();
        // Retire what the card has answered, in order.
        while let Some((txn, p, issued)) = self.answered(false, ch) {
            if p.void {
                // A burst after the current descriptor of a stopped run: the card has it,
                // and it counts for nothing (whatever the card answered).
                if p.piece.bytes > 0 {
                    self.card.dma().take_write(txn)?;
                }
                continue;
            }
            if let Some(run) = self.run_of(false, ch) {
                run.taken = p.off + p.piece.bytes as u64;
            }
            if p.piece.bytes > 0 {
                self.latency
                    .measure(true, issued, now, p.piece.burst.beats());
                let resp = self.card.dma().take_write(txn)?;
                if !resp.is_ok() && self.bus_error(false, ch, resp, mem)? {
                    return Ok(());
                }
            }
            if let Some(d) = p.last_of {
                self.complete(false, ch, &d, u64::from(d.length()), mem);
                if d.control & map::desc::STOP != 0 {
                    self.finish(false, ch, status::DESC_STOPPED, false, mem);
                    return Ok(());
                }
            }
        }
        self.supply(false, ch, mem);
        let beats = self.cfg.max_burst_beats;
        self.plan_mm(false, ch, beats);
        self.poll_reads(false, ch);
        // A burst goes to the card once its bytes are in the engine.
        let cap = self.on_bus_cap();
        loop {
            let Some(run) = self.run_of(false, ch) else {
                return Ok(());
            };
            // A stopped run's plan holds only the rest of its current descriptor.
            if run.on_bus_bytes >= cap {
                break;
            }
            let Some(&p) = run.planned.front() else { break };
            if p.off + p.piece.bytes as u64 > run.reads.arrived {
                break;
            }
            run.planned.pop_front();
            let txn = if p.piece.bytes == 0 {
                TxnId(u64::MAX)
            } else {
                let mut buf = vec![0u8; p.piece.bytes];
                if mem.read(p.host, &mut buf).is_err() {
                    tracing::info!(
                        src = p.host,
                        len = buf.len(),
                        "H2C data outside host memory"
                    );
                    self.abandon_mm(false, ch)?;
                    self.finish(false, ch, status::H2C_R_UNSUPP_REQ, true, mem);
                    return Ok(());
                }
                self.card.dma().start_write_burst(p.piece.burst, &buf)?
            };
            if let Some(run) = self.run_of(false, ch) {
                run.on_bus.push_back((txn, p, now));
                run.on_bus_bytes += p.piece.bytes as u64;
            }
        }
        self.end_mm(false, ch, mem);
        Ok(())
    }

    /// A memory-mapped C2H run: AXI read bursts of one max payload each within the request
    /// IDs, each burst's data up the link as memory writes once the card has answered, the ID
    /// held until the link partner acknowledges them.
    fn step_mm_c2h(&mut self, ch: usize, mem: &mut dyn HostMemory) -> Result<()> {
        let now = self.now();
        if let Some(run) = self.run_of(true, ch) {
            run.write_ids.free_upto(now);
        }
        let mps = self.pcie.max_payload();
        while let Some((txn, p, issued)) = self.answered(true, ch) {
            if p.void {
                // A read after the current descriptor of a stopped run: its data is dropped
                // in the engine, nothing goes up the link.
                if p.piece.bytes > 0 {
                    self.card.dma().take_read(txn)?;
                }
                continue;
            }
            if p.piece.bytes > 0 {
                self.latency
                    .measure(false, issued, now, p.piece.burst.beats());
                let (data, resp) = self.card.dma().take_read(txn)?;
                if !resp.is_ok() {
                    if self.bus_error(true, ch, resp, mem)? {
                        return Ok(());
                    }
                } else {
                    let bytes = data.get(..p.piece.bytes).unwrap_or(&data);
                    if mem.write(p.host, bytes).is_err() {
                        self.stats.lost_writes += 1;
                        tracing::info!(
                            dst = p.host,
                            len = bytes.len(),
                            "C2H data outside host memory, dropped"
                        );
                    }
                }
                let mut acked = now;
                for n in pcie_pieces(p.host, p.piece.bytes as u64, mps) {
                    let arrived = self.pcie.write(now, n);
                    acked = acked.max(self.pcie.acknowledged(arrived));
                }
                if let Some(run) = self.run_of(true, ch) {
                    run.write_ids.hold(acked);
                }
            }
            if let Some(d) = p.last_of {
                self.complete(true, ch, &d, u64::from(d.length()), mem);
                if d.control & map::desc::STOP != 0 {
                    self.finish(true, ch, status::DESC_STOPPED, false, mem);
                    return Ok(());
                }
            }
        }
        self.supply(true, ch, mem);
        // Each read is one memory write to the host: sized by the max payload.
        let bus = self.card.dma().bus_bytes() as u64;
        let beats = (mps / bus).clamp(1, 256) as u32;
        self.plan_mm(true, ch, beats);
        let cap = self.on_bus_cap();
        loop {
            let Some(run) = self.run_of(true, ch) else {
                return Ok(());
            };
            // A stopped run's plan holds only the rest of its current descriptor.
            if run.on_bus_bytes >= cap || !run.write_ids.has_room(run.on_bus.len()) {
                break;
            }
            let Some(p) = run.planned.pop_front() else {
                break;
            };
            let txn = if p.piece.bytes == 0 {
                TxnId(u64::MAX)
            } else {
                self.card.dma().start_read_burst(p.piece.burst)?
            };
            if let Some(run) = self.run_of(true, ch) {
                run.on_bus.push_back((txn, p, now));
                run.on_bus_bytes += p.piece.bytes as u64;
            }
        }
        self.end_mm(true, ch, mem);
        Ok(())
    }

    /// The oldest burst of a memory-mapped run, taken off the bus once the card has answered
    /// it (one AXI ID per engine, so answers come in order); a burst of no bytes at once.
    fn answered(&mut self, c2h: bool, ch: usize) -> Option<(TxnId, Planned, Ps)> {
        let engines = if c2h { &mut self.c2h } else { &mut self.h2c };
        let run = engines.get_mut(ch)?.run.as_mut()?;
        let &(txn, p, _) = run.on_bus.front()?;
        if p.piece.bytes > 0 && !self.card.dma().is_done(txn) {
            return None;
        }
        run.on_bus_bytes -= p.piece.bytes as u64;
        run.on_bus.pop_front()
    }

    /// Bytes an engine may keep on the card's bus.
    fn on_bus_cap(&self) -> u64 {
        if self.pcie.config().is_some() {
            u64::MAX
        } else {
            UNTIMED_ON_BUS_BYTES
        }
    }

    /// Frees the read IDs whose bytes the card has taken, issues the H2C reads the IDs and
    /// tags allow, and counts the bytes that have arrived.
    fn poll_reads(&mut self, c2h: bool, ch: usize) {
        let now = self.now();
        let Some(e) = (if c2h {
            self.c2h.get_mut(ch)
        } else {
            self.h2c.get_mut(ch)
        }) else {
            return;
        };
        let Some(run) = e.run.as_mut() else { return };
        let r = &mut run.reads;
        r.ids.free_upto(run.taken);
        // A stopped run's queue holds only its current descriptor's reads (see `stop`).
        while r.ids.has_room(0) {
            let Some(&(host, len, end)) = r.queued.front() else {
                break;
            };
            let Some(cpls) = self.pcie.read(now, host, len) else {
                break;
            };
            r.queued.pop_front();
            let mut upto = end - len;
            for (t, n) in cpls {
                upto += n;
                r.arrivals.push_back((t, upto));
            }
            r.ids.hold(end);
        }
        while let Some(&(t, upto)) = r.arrivals.front() {
            if t > now {
                break;
            }
            r.arrived = upto;
            r.arrivals.pop_front();
        }
    }

    /// Lets what an ended run still has on the card's bus finish, so that the bus stays legal
    /// and the next run starts on an idle port.
    fn abandon_mm(&mut self, c2h: bool, ch: usize) -> Result<()> {
        let ops: Vec<(TxnId, Planned, Ps)> = self
            .run_of(c2h, ch)
            .map(|r| {
                r.on_bus_bytes = 0;
                r.on_bus.drain(..).collect()
            })
            .unwrap_or_default();
        for (txn, p, _) in ops {
            if p.piece.bytes == 0 {
                continue;
            }
            self.card.wait_dma(txn)?;
            if c2h {
                self.card.dma().take_read(txn)?;
            } else {
                self.card.dma().take_write(txn)?;
            }
        }
        Ok(())
    }

    /// An H2C stream run: descriptors gathered until one ends the packet (EOP) or the chain
    /// (STOP), the packet's bytes read from host memory as the IDs and tags allow, its beats
    /// let out as the bytes arrive, its descriptors completed once its last beat has left.
    fn step_h2c_stream(&mut self, ch: usize, mem: &mut dyn HostMemory) -> Result<()> {
        let port = self.h2c.get(ch).map_or(0, |e| e.port);
        let Some(src) = self.card.h2c(port).cloned() else {
            return Ok(());
        };
        let timed = self.pcie.config().is_some();
        self.poll_reads(false, ch);
        let Some(run) = self.run_of(false, ch) else {
            return Ok(());
        };
        if !run.sending.is_empty() || run.sending_len > 0 {
            if run.stopping && !src.cancel_unstarted() {
                // No beat of the packet went out: it is dropped and the stream stays idle.
                src.set_credit(None);
                run.sending.clear();
                run.sending_len = 0;
            } else if !src.idle() {
                let consumed = src.progress() as u64;
                run.taken = run.sending_off + consumed;
                // A beat goes out once the link has brought its bytes. A packet that had
                // started when the run was stopped is let out whole, since AXI-Stream cannot
                // take a beat back.
                if timed {
                    let credit = if run.stopping {
                        run.sending_len
                    } else {
                        (run.reads.arrived - run.sending_off) as usize
                    };
                    src.set_credit(Some(credit));
                }
                return Ok(());
            } else {
                src.set_credit(None);
                run.taken = run.sending_off + run.sending_len as u64;
                run.sending_len = 0;
                let descs = std::mem::take(&mut run.sending);
                for d in &descs {
                    self.complete(false, ch, d, u64::from(d.length()), mem);
                    if d.control & map::desc::STOP != 0 {
                        self.finish(false, ch, status::DESC_STOPPED, false, mem);
                        return Ok(());
                    }
                }
            }
        }
        let Some(run) = self.run_of(false, ch) else {
            return Ok(());
        };
        if run.stopping {
            // An aborted run drops the packet it was gathering.
            self.finish(false, ch, status::IDLE_STOPPED, false, mem);
            return Ok(());
        }
        self.supply(false, ch, mem);
        let max_read = self.pcie.max_read_request();
        // Gather descriptors until one ends the packet (EOP) or the chain (STOP).
        loop {
            let Some(run) = self.run_of(false, ch) else {
                return Ok(());
            };
            let Some(f) = run.supply.ready.pop_front() else {
                return Ok(());
            };
            let d = match f {
                Ok(d) => d,
                Err(bits) => {
                    self.finish(false, ch, bits, true, mem);
                    return Ok(());
                }
            };
            let mut buf = vec![0u8; d.length() as usize];
            if mem.read(d.src, &mut buf).is_err() {
                tracing::info!(src = d.src, "H2C stream data outside host memory");
                self.finish(false, ch, status::H2C_R_UNSUPP_REQ, true, mem);
                return Ok(());
            }
            let Some(run) = self.run_of(false, ch) else {
                return Ok(());
            };
            let off = run.reads.push(d.src, buf.len() as u64, max_read);
            if run.packet.is_empty() {
                run.packet_off = off;
            }
            run.packet_bytes.extend_from_slice(&buf);
            run.packet.push(d);
            if d.control & (map::desc::EOP | map::desc::STOP) != 0 {
                let bytes = std::mem::take(&mut run.packet_bytes);
                let descs = std::mem::take(&mut run.packet);
                if bytes.is_empty() {
                    // An empty packet has no beat to carry TLAST: its descriptors are done.
                    for d in &descs {
                        self.complete(false, ch, d, 0, mem);
                        if d.control & map::desc::STOP != 0 {
                            self.finish(false, ch, status::DESC_STOPPED, false, mem);
                            return Ok(());
                        }
                    }
                    continue;
                }
                run.sending = descs;
                run.sending_off = run.packet_off;
                run.sending_len = bytes.len();
                if timed {
                    src.set_credit(Some(0));
                }
                src.start_send(AxisFrame::new(bytes))?;
                self.poll_reads(false, ch);
                return Ok(());
            }
        }
    }

    /// A C2H stream run: while descriptors are in the engine the port takes beats; bytes go
    /// up the link as memory writes as a payload's worth arrives; each packet fills
    /// descriptors in order, every descriptor it ends or fills gets its result record.
    fn step_c2h_stream(&mut self, ch: usize, mem: &mut dyn HostMemory) -> Result<()> {
        let now = self.now();
        let port = self.c2h.get(ch).map_or(0, |e| e.port);
        let Some(sink) = self.card.c2h(port).cloned() else {
            return Ok(());
        };
        if self.run_of(true, ch).is_some_and(|r| r.stopping) {
            // The run was given up: a descriptor half filled stays as it is (its result is
            // never written), and what the stream still holds waits for the next run.
            self.finish(true, ch, status::IDLE_STOPPED, false, mem);
            return Ok(());
        }
        self.supply(true, ch, mem);
        let mps = self.pcie.max_payload();
        let timed = self.pcie.config().is_some();
        let Some(run) = self.run_of(true, ch) else {
            return Ok(());
        };
        if !run.open && (run.filling.is_some() || !run.supply.ready.is_empty()) {
            run.open = true;
            sink.set_enabled(true);
        }
        if timed {
            let have = sink.partial() as u64;
            let mut posted = run.posted;
            while posted + mps <= have {
                self.pcie.write(now, mps);
                posted += mps;
            }
            if let Some(run) = self.run_of(true, ch) {
                run.posted = posted;
            }
        }
        loop {
            // The next packet: the rest of one an earlier descriptor could not hold, or one
            // that has come in whole.
            let (packet, fresh) = match self.leftovers.get_mut(ch).and_then(VecDeque::pop_front) {
                Some(p) => (p, false),
                None => match sink.try_recv() {
                    Some(f) => (f.data, true),
                    None => return Ok(()),
                },
            };
            if fresh && timed {
                // The rest of the packet goes up behind what went as it arrived.
                let posted = self.run_of(true, ch).map_or(0, |r| r.posted);
                let mut left = (packet.len() as u64).saturating_sub(posted);
                while left > 0 {
                    let n = left.min(mps);
                    self.pcie.write(now, n);
                    left -= n;
                }
                if let Some(run) = self.run_of(true, ch) {
                    run.posted = 0;
                }
            }
            let mut at = 0usize;
            while at < packet.len() || packet.is_empty() {
                // The descriptor to fill: the one under way, or the next in the engine.
                let cur = self.run_of(true, ch).and_then(|r| r.filling.take());
                let (d, filled) = match cur {
                    Some(c) => c,
                    None => match self
                        .run_of(true, ch)
                        .and_then(|r| r.supply.ready.pop_front())
                    {
                        Some(Ok(d)) => (d, 0),
                        Some(Err(bits)) => {
                            if let Some(q) = self.leftovers.get_mut(ch) {
                                q.push_front(packet[at..].to_vec());
                            }
                            self.finish(true, ch, bits, true, mem);
                            return Ok(());
                        }
                        None => {
                            // No descriptor in the engine: the rest waits for one (or for the
                            // next run, when the chain has ended).
                            if let Some(q) = self.leftovers.get_mut(ch) {
                                q.push_front(packet[at..].to_vec());
                            }
                            if self.run_of(true, ch).is_some_and(|r| r.supply.exhausted()) {
                                self.finish(true, ch, status::DESC_STOPPED, false, mem);
                            }
                            return Ok(());
                        }
                    },
                };
                let room = d.length() as usize - filled;
                let n = room.min(packet.len() - at);
                if mem
                    .write(d.dst + filled as u64, &packet[at..at + n])
                    .is_err()
                {
                    self.stats.lost_writes += 1;
                    tracing::info!(dst = d.dst, "C2H stream data outside host memory, dropped");
                }
                at += n;
                let eop = at == packet.len();
                let full = filled + n == d.length() as usize;
                if eop || full {
                    let mut result = [0u8; map::RESULT_BYTES];
                    result[0..4].copy_from_slice(&map::result_status(eop).to_le_bytes());
                    result[4..8].copy_from_slice(&((filled + n) as u32).to_le_bytes());
                    // The result record is a posted write behind the data.
                    self.pcie.write(now, map::RESULT_BYTES as u64);
                    if mem.write(d.src, &result).is_err() {
                        self.stats.lost_writes += 1;
                        tracing::info!(
                            addr = d.src,
                            "C2H stream result outside host memory, dropped"
                        );
                    }
                    self.complete(true, ch, &d, (filled + n) as u64, mem);
                    if d.control & map::desc::STOP != 0 {
                        if at < packet.len() {
                            if let Some(q) = self.leftovers.get_mut(ch) {
                                q.push_front(packet[at..].to_vec());
                            }
                        }
                        self.finish(true, ch, status::DESC_STOPPED, false, mem);
                        return Ok(());
                    }
                } else if let Some(r) = self.run_of(true, ch) {
                    r.filling = Some((d, filled + n));
                }
                if packet.is_empty() {
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// Counts the events of the progress target.
    struct Count(Arc<AtomicUsize>);

    impl tracing::Subscriber for Count {
        fn enabled(&self, m: &tracing::Metadata<'_>) -> bool {
            m.target() == "xdma_ip::progress"
        }
        fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
            tracing::span::Id::from_u64(1)
        }
        fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
        fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
        fn event(&self, _: &tracing::Event<'_>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
        fn enter(&self, _: &tracing::span::Id) {}
        fn exit(&self, _: &tracing::span::Id) {}
    }

    fn events(f: impl FnOnce()) -> usize {
        let n = Arc::new(AtomicUsize::new(0));
        tracing::subscriber::with_default(Count(n.clone()), f);
        n.load(Ordering::SeqCst)
    }

    #[test]
    fn an_engine_is_named_by_direction_channel_and_kind() {
        let name = |c2h, channel, stream| {
            EngineName {
                c2h,
                channel,
                stream,
            }
            .to_string()
        };
        assert_eq!(name(false, 0, false), "H2C0-MM");
        assert_eq!(name(true, 2, true), "C2H2-ST");
    }

    #[test]
    fn long_runs_report_progress_each_step_and_short_ones_not() {
        // 1 GiB in descriptors of a page: an event at each 64 MiB, 16 in all.
        let gib = 1u64 << 30;
        let n = events(|| {
            let mut p = Progress::default();
            for _ in 0..gib / 4096 {
                p.update(
                    EngineName {
                        c2h: false,
                        channel: 0,
                        stream: false,
                    },
                    4096,
                );
            }
        });
        assert_eq!(n, (gib / PROGRESS_STEP) as usize);
        // A run of less than one step says nothing.
        let n = events(|| {
            let mut p = Progress::default();
            for _ in 0..(PROGRESS_STEP / 4096 - 1) {
                p.update(
                    EngineName {
                        c2h: true,
                        channel: 0,
                        stream: false,
                    },
                    4096,
                );
            }
        });
        assert_eq!(n, 0);
    }
}
