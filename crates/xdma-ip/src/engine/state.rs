//! What every engine shares (PG195's H2C and C2H channels, whichever their kind): the
//! engine's registers and its run, the descriptors it fetches one block ahead, its reads of
//! host memory, and the context of what it touches while it steps.
//!
//! Every access to host memory goes through the IP's PCIe port ([`Pcie`]): descriptor blocks
//! and H2C data are memory reads whose completions arrive over the link, C2H data, write-backs
//! and result records are posted writes up the link. Without timing the port answers at
//! once, and the engines are then paced by the card's buses alone.

use std::collections::VecDeque;

use axi_bfm::burst::Piece;
use axi_bfm::TxnId;
use card_harness::CardHarness;
use xdma_regmap::{self as map, control, status, Descriptor};

use crate::config::EngineKind;
use crate::pcie::{pcie_pieces, Pcie, Ps, Slots};
use crate::stats::{IpStats, Latency};
use crate::HostMemory;

/// The status bits whose logging the control register enables (bits 23:1 map one to one).
pub(crate) const LOGGED: u32 = 0x00FF_FFFE;

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
    pub(crate) fn update(&mut self, engine: EngineName, bytes: u64) {
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

/// One channel's engine: its registers, and its run while it has one. It steps against a
/// [`Ctx`], so that it knows nothing of the IP around it.
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
    /// C2H stream: the rest of packets an earlier run's descriptors could not hold.
    pub(crate) leftovers: VecDeque<Vec<u8>>,
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
            leftovers: VecDeque::new(),
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

    pub(crate) fn axi_id(&self) -> u32 {
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
    pub(crate) next: Option<(u64, u32)>,
    /// A block on its way: when its last completion is in, and what it holds.
    pub(crate) fetching: Option<(Ps, Vec<Fetched>)>,
    /// Descriptors in the engine, not yet taken.
    pub(crate) ready: VecDeque<Fetched>,
}

impl Supply {
    /// Nothing more will come: every descriptor fetched has been taken.
    pub(crate) fn exhausted(&self) -> bool {
        self.next.is_none() && self.fetching.is_none() && self.ready.is_empty()
    }
}

/// Reads of host memory for H2C data: requests of at most the max read request size within
/// the engine's request IDs and the shared tags, their bytes arriving in order. Offsets count
/// the run's bytes from its start.
#[derive(Debug)]
pub(crate) struct Reads {
    /// Requests not yet issued: host address, bytes, offset of their end.
    pub(crate) queued: VecDeque<(u64, u64, u64)>,
    /// Offset after the last request queued.
    pub(crate) end: u64,
    /// Request IDs, each held until the card has taken the bytes up to its end offset.
    pub(crate) ids: Slots<u64>,
    /// Completions on their way: arrival and the offset up to which bytes are then in.
    pub(crate) arrivals: VecDeque<(Ps, u64)>,
    /// Bytes in the engine, from the start of the run.
    pub(crate) arrived: u64,
}

impl Reads {
    pub(crate) fn new(ids: u32) -> Reads {
        Reads {
            queued: VecDeque::new(),
            end: 0,
            ids: Slots::new(ids),
            arrivals: VecDeque::new(),
            arrived: 0,
        }
    }

    /// Queues the reads of `len` bytes at host address `host`; returns their first offset.
    pub(crate) fn push(&mut self, host: u64, len: u64, max_read: u64) -> u64 {
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
    pub(crate) piece: Piece,
    /// Host address of the burst's first byte.
    pub(crate) host: u64,
    /// The burst belongs to a descriptor after the current one when the run bit was cleared:
    /// the card still answers it (an AXI burst cannot be taken back), but it moves nothing
    /// to or from host memory and completes no descriptor.
    pub(crate) void: bool,
    /// Offset of its first byte in the run (H2C: where its bytes arrive).
    pub(crate) off: u64,
    /// The descriptor, on the descriptor's last burst.
    pub(crate) last_of: Option<Descriptor>,
}

/// An engine's run: from the run bit's rising edge until it stops.
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) supply: Supply,
    /// H2C: reads of host memory.
    pub(crate) reads: Reads,
    /// C2H memory-mapped: request IDs, each held until the port releases it (`Pcie::post`).
    pub(crate) write_ids: Slots<Ps>,
    /// Memory-mapped: bursts planned and not yet issued, in order.
    pub(crate) planned: VecDeque<Planned>,
    /// Memory-mapped: bursts on the card's bus, in order (one AXI ID per engine), with their
    /// issue time.
    pub(crate) on_bus: VecDeque<(TxnId, Planned, Ps)>,
    /// Memory-mapped: the bytes of the bursts in `on_bus`.
    pub(crate) on_bus_bytes: u64,
    /// H2C: bytes the card has taken, from the start of the run.
    pub(crate) taken: u64,
    /// H2C stream: descriptors of the packet being gathered, its bytes, and its first offset.
    pub(crate) packet: Vec<Descriptor>,
    pub(crate) packet_bytes: Vec<u8>,
    pub(crate) packet_off: u64,
    /// H2C stream: descriptors of the packet on the stream, its length and first offset.
    pub(crate) sending: Vec<Descriptor>,
    pub(crate) sending_len: usize,
    pub(crate) sending_off: u64,
    /// C2H stream: the descriptor being filled and the bytes it has.
    pub(crate) filling: Option<(Descriptor, usize)>,
    /// C2H stream: bytes of the packet arriving that have gone up the link.
    pub(crate) posted: u64,
    /// C2H stream: the port takes beats.
    pub(crate) open: bool,
    /// The run bit was cleared: finish the current descriptor, fetch and start nothing
    /// after it.
    pub(crate) stopping: bool,
    /// A descriptor fetch failed with these status bits: the run ends with them once what
    /// is on the bus before it has finished.
    pub(crate) fault: Option<u32>,
    pub(crate) progress: Progress,
}

impl Run {
    pub(crate) fn new(first: u64, adjacent: u32, read_ids: u32, write_ids: u32) -> Run {
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

/// What an engine touches while it steps, borrowed from the IP for one step: the card's
/// buses (through its harness), the IP's PCIe port, its counters, the posted writes on their
/// way to host memory, host memory itself, and the IP's build settings the engines follow.
pub(crate) struct Ctx<'a> {
    pub(crate) card: &'a mut CardHarness,
    pub(crate) pcie: &'a mut Pcie,
    pub(crate) stats: &'a mut IpStats,
    pub(crate) latency: &'a mut Latency,
    pub(crate) posted: &'a mut Posted,
    pub(crate) mem: &'a mut dyn HostMemory,
    /// The engines' address alignment in bytes (`IpConfig::alignment`).
    pub(crate) alignment: u32,
    /// Most beats in one H2C AXI write burst (`IpConfig::max_burst_beats`).
    pub(crate) max_burst_beats: u32,
}

impl Ctx<'_> {
    /// The simulated time of the card, in ps.
    pub(crate) fn now(&self) -> Ps {
        self.card.time_ps()
    }

    /// A posted write of the poll-mode write-back: host memory has it once it arrives.
    pub(crate) fn write_back(&mut self, addr: u64, v: u32) {
        let now = self.now();
        let at = self.pcie.write(now, WRITEBACK_BYTES);
        self.post(at, addr, v.to_le_bytes().to_vec());
    }

    /// A posted write of `bytes` at host address `addr` that reaches host memory at `at`.
    pub(crate) fn post(&mut self, at: Ps, addr: u64, bytes: Vec<u8>) {
        self.posted.push(at, addr, bytes);
        let now = self.now();
        self.posted.apply(now, self.mem, self.stats);
    }
}

/// Posted writes on their way to host memory (write-backs), in order.
#[derive(Debug, Default)]
pub(crate) struct Posted {
    queue: VecDeque<(Ps, u64, Vec<u8>)>,
}

impl Posted {
    /// A write of `bytes` at host address `addr` that reaches host memory at `at`.
    fn push(&mut self, at: Ps, addr: u64, bytes: Vec<u8>) {
        self.queue.push_back((at, addr, bytes));
    }

    /// Writes to host memory what has arrived by `now`; a write outside it is dropped and
    /// counted.
    pub(crate) fn apply(&mut self, now: Ps, mem: &mut dyn HostMemory, stats: &mut IpStats) {
        while self.queue.front().is_some_and(|p| p.0 <= now) {
            let Some((_, addr, bytes)) = self.queue.pop_front() else {
                break;
            };
            if mem.write(addr, &bytes).is_err() {
                stats.lost_writes += 1;
                tracing::info!(addr, "posted write outside host memory, dropped");
            }
        }
    }
}

impl Engine {
    /// Ends an engine's run: BUSY low, the stream closed, the write-back written.
    pub(crate) fn finish(&mut self, cx: &mut Ctx<'_>, bits: u32, error: bool) {
        let c2h = self.c2h;
        // A packet the run had gathered but not sent is dropped with the run; a descriptor
        // half filled keeps its bytes for nobody (the run that ended was given up).
        self.run = None;
        self.status &= !status::BUSY;
        self.log(bits);
        let (stream, port, wb, count) = (self.stream(), self.port, self.wb, self.completed);
        let poll = self.control & control::POLL_MODE_WB != 0;
        tracing::debug!(engine = %self.name(), status = self.status, completed = count, "engine stopped");
        if stream && c2h {
            if let Some(s) = cx.card.c2h(port) {
                s.set_enabled(false);
            }
        } else if stream {
            if let Some(s) = cx.card.h2c(port) {
                s.set_credit(None);
            }
        }
        if poll && error {
            cx.write_back(wb, count | map::WB_ERR);
        }
    }

    /// A descriptor is done: counted, its flags logged, the write-back written.
    pub(crate) fn complete(&mut self, cx: &mut Ctx<'_>, d: &Descriptor, bytes: u64) {
        self.completed = self.completed.wrapping_add(1);
        self.perf_dat += bytes.div_ceil(16);
        let name = self.name();
        if let Some(run) = self.run.as_mut() {
            run.progress.update(name, bytes);
        }
        let count = self.completed;
        let wb = self.wb;
        let poll = self.control & control::POLL_MODE_WB != 0;
        if d.control & map::desc::COMPLETED != 0 {
            self.log(status::DESC_COMPLETED);
        }
        cx.stats.descriptors += 1;
        cx.stats.bytes += bytes;
        // PG195: in poll mode the count is written back when a descriptor with its Completed
        // bit set completes.
        if poll && d.control & map::desc::COMPLETED != 0 {
            cx.write_back(wb, count & map::WB_COUNT_MASK);
        }
    }

    /// Moves the run's descriptor fetches on: a block whose completions are in joins the
    /// descriptors in the engine, and the next block is fetched once the engine has started
    /// on the last one (one block ahead), as far as the tags and credits allow.
    pub(crate) fn supply(&mut self, cx: &mut Ctx<'_>) {
        let now = cx.now();
        let block_max = cx
            .pcie
            .config()
            .map_or(u32::from(map::desc::ADJ_MASK as u8) + 1, |t| {
                t.descriptor_block
            })
            .max(1) as usize;
        let align = u64::from(cx.alignment);
        let (stream, credits, name) = (self.stream(), self.credits, self.name());
        let Some(run) = self.run.as_mut() else { return };
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
        let Some(cpls) = cx.pcie.read(now, addr, (n * map::DESC_BYTES) as u64) else {
            return;
        };
        cx.stats.descriptor_fetches += 1;
        let ready_at = cpls.last().map_or(now, |c| c.0);
        let mut got = Vec::with_capacity(n);
        let mut next = None;
        for i in 0..n {
            let at = addr + (i * map::DESC_BYTES) as u64;
            let mut b = [0u8; map::DESC_BYTES];
            if cx.mem.read(at, &mut b).is_err() {
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
        if self.credits != u32::MAX {
            self.credits = self.credits.saturating_sub(fetched);
        }
        let Some(run) = self.run.as_mut() else { return };
        run.supply.next = next;
        if ready_at <= now {
            run.supply.ready.extend(got);
        } else {
            run.supply.fetching = Some((ready_at, got));
        }
    }

    /// Frees the read IDs whose bytes the card has taken, issues the H2C reads the IDs and
    /// tags allow, and counts the bytes that have arrived.
    pub(crate) fn poll_reads(&mut self, cx: &mut Ctx<'_>) {
        let now = cx.now();
        let Some(run) = self.run.as_mut() else { return };
        let r = &mut run.reads;
        r.ids.free_upto(run.taken);
        // A stopped run's queue holds only its current descriptor's reads (see `stop`).
        while r.ids.has_room(0) {
            let Some(&(host, len, end)) = r.queued.front() else {
                break;
            };
            let Some(cpls) = cx.pcie.read(now, host, len) else {
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
