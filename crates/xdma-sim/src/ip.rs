//! The simulated XDMA IP with its link, root complex and host driver: what each call does, phase
//! by phase, in simulated time, with the card's side run on the RTL through the card harness.
//!
//! Every transfer goes through the same phases (named in `docs/timing-model.md`):
//!
//! 1. submission (`host.submit_ns`): the call until the transfer waits in the driver's queue;
//! 2. start (`host.start_ns`): once the channel's engine is free, the driver programs it and
//!    writes the doorbell, a posted write down the link;
//! 3. descriptor fetch: a memory read of the first descriptor block, up the link, answered by
//!    the root complex after its read latency, its completions down the link; later blocks are
//!    fetched one block ahead while data moves;
//! 4. data, with the card on the RTL (H2C: memory reads of host memory within the channel's
//!    request IDs and the shared tags, completions down the link, AXI writes or stream beats
//!    to the card; C2H: AXI reads or stream beats from the card, memory writes up the link,
//!    each C2H request ID held until the link partner acknowledges the write);
//! 5. write-back and interrupt: posted writes up the link behind the data;
//! 6. interrupt handling (`host.irq_ns`): the driver finishes the transfer; the engine is free
//!    for the next queued transfer from here;
//! 7. wake-up (`host.wake_ns`): the caller runs again; its next call comes
//!    `host.turnaround_ns` later.
//!
//! Both link directions are shared by every channel and every kind of traffic, and so are the
//! PCIe tags, so concurrent transfers compete where the board's would.

use std::collections::VecDeque;
use std::time::Duration;

use axi_bfm::{AxisFrame, Piece, TxnId};
use card_harness::{CardHarness, IrqEvent, AXI_HZ};
use xdma_core::{Error, Result, Transfer};

use crate::engine::{self, EngineConfig};
use crate::timing::{ns, Link, Ps, TimingConfig, Tlp, Way};
use crate::{bfm, LatencyStats};

/// The host address of the driver's descriptor ring, where descriptor fetches read (any
/// address works: only its place within a read completion boundary matters).
const RING_ADDR: u64 = 0x1_0000_0000;
/// Bytes of one XDMA descriptor.
const DESCRIPTOR_BYTES: u64 = 32;
/// Bytes of the engine's status write-back.
const WRITEBACK_BYTES: u64 = 8;
/// Bytes of an MSI message.
const MSI_BYTES: u64 = 4;
/// One `axi_aclk` cycle in ps.
const CYCLE_PS: Ps = 1_000_000_000_000 / AXI_HZ;

/// The host's costs, in ps.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Costs {
    pub submit: Ps,
    pub start: Ps,
    pub irq: Ps,
    pub wake: Ps,
    pub turnaround: Ps,
    pub register: Ps,
    pub root_read: Ps,
    pub root_ack: Ps,
}

impl Costs {
    fn new(t: &TimingConfig) -> Costs {
        Costs {
            submit: ns(t.host.submit_ns),
            start: ns(t.host.start_ns),
            irq: ns(t.host.irq_ns),
            wake: ns(t.host.wake_ns),
            turnaround: ns(t.host.turnaround_ns),
            register: ns(t.host.register_ns),
            root_read: ns(t.root.read_latency_ns),
            root_ack: ns(t.root.ack_latency_ns),
        }
    }
}

/// A running minimum and mean.
#[derive(Debug, Clone, Copy, Default)]
struct Stat {
    n: u64,
    sum_ps: u64,
    min_ps: u64,
}

impl Stat {
    fn add(&mut self, ps: u64) {
        self.min_ps = if self.n == 0 { ps } else { self.min_ps.min(ps) };
        self.n += 1;
        self.sum_ps = self.sum_ps.saturating_add(ps);
    }

    fn min_ns(&self) -> f64 {
        self.min_ps as f64 / 1000.0
    }

    fn mean_ns(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum_ps as f64 / self.n as f64 / 1000.0
        }
    }
}

/// Request slots (request IDs, tags) held from their request until a release point, freed in
/// order: the one piece of logic behind every window of outstanding requests the IP keeps.
#[derive(Debug)]
struct Slots<K> {
    cap: usize,
    held: VecDeque<K>,
}

impl<K: PartialOrd + Copy> Slots<K> {
    fn new(cap: u32) -> Slots<K> {
        Slots {
            cap: cap as usize,
            held: VecDeque::with_capacity(cap as usize),
        }
    }

    /// Frees the slots whose release point is at or before `at`.
    fn free_upto(&mut self, at: K) {
        while self.held.front().is_some_and(|&k| k <= at) {
            self.held.pop_front();
        }
    }

    /// Whether a slot is free, with `pending` more slots taken whose release is not known yet.
    fn has_room(&self, pending: usize) -> bool {
        self.held.len() + pending < self.cap
    }

    /// Holds a slot until `until` (release points come in order).
    fn hold(&mut self, until: K) {
        self.held.push_back(until);
    }
}

/// The IP's state that all channels share.
#[derive(Debug)]
pub(crate) struct Ip {
    pub link: Link,
    pub costs: Costs,
    pub engine: EngineConfig,
    /// PCIe tags in use, each until the last completion of its read has arrived.
    tags: Slots<Ps>,
    /// User interrupts on their way to the driver: (bit, when the driver has it).
    irq_in_flight: VecDeque<(u32, Ps)>,
    /// User interrupts the driver holds for each event node, with when it got them.
    latched: Vec<VecDeque<Ps>>,
    /// Per C2H stream port, the bytes of packets that a receive's buffer could not hold.
    pub leftovers: Vec<VecDeque<Vec<u8>>>,
    reads: Stat,
    writes: Stat,
}

impl Ip {
    pub(crate) fn new(
        t: &TimingConfig,
        engine: EngineConfig,
        events: usize,
        c2h_ports: usize,
    ) -> Ip {
        Ip {
            link: Link::new(t.link),
            costs: Costs::new(t),
            engine,
            tags: Slots::new(engine.pcie_tags),
            irq_in_flight: VecDeque::new(),
            latched: vec![VecDeque::new(); events],
            leftovers: vec![VecDeque::new(); c2h_ports],
            reads: Stat::default(),
            writes: Stat::default(),
        }
    }

    /// The part of the IP that runs whatever the jobs do, at `now`: tags whose reads have
    /// completed come free, and acknowledged user interrupts travel to the driver as MSI
    /// messages.
    pub(crate) fn advance(&mut self, irqs: Vec<IrqEvent>, now: Ps) {
        self.tags.free_upto(now);
        for e in irqs {
            let sent = self.link.send(Way::Up, e.time_ps, Tlp::Write(MSI_BYTES));
            let at_driver = sent + self.link.flight() + self.costs.irq;
            self.irq_in_flight.push_back((e.bit, at_driver));
        }
        while let Some(&(bit, at)) = self.irq_in_flight.front() {
            if at > now {
                break;
            }
            self.irq_in_flight.pop_front();
            if let Some(q) = self.latched.get_mut(bit as usize) {
                q.push_back(at);
            }
        }
    }

    /// A memory read of `len` bytes at host address `host`, issued at `at` if a tag is free:
    /// the request goes up, the root complex answers after its read latency, the completions
    /// come down. Returns each completion's arrival at the card with the bytes it carries;
    /// the tag is held until the last one is in.
    fn host_read(&mut self, at: Ps, host: u64, len: u64) -> Option<Vec<(Ps, u64)>> {
        if !self.tags.has_room(0) {
            return None;
        }
        let flight = self.link.flight();
        let sent = self.link.send(Way::Up, at, Tlp::Read);
        let answer = sent + flight + self.costs.root_read;
        let out: Vec<(Ps, u64)> = self
            .link
            .completions(answer, host, len)
            .into_iter()
            .map(|(t, n)| (t + flight, n))
            .collect();
        self.tags.hold(out.last().map_or(answer + flight, |l| l.0));
        Some(out)
    }

    /// The card-side latencies measured so far.
    pub(crate) fn latency(&self) -> LatencyStats {
        LatencyStats {
            reads: self.reads.n,
            read_min_ns: self.reads.min_ns(),
            read_mean_ns: self.reads.mean_ns(),
            writes: self.writes.n,
            write_min_ns: self.writes.min_ns(),
            write_mean_ns: self.writes.mean_ns(),
        }
    }

    /// Records a burst's card-side latency: from its issue at `issued` to its end at `now`,
    /// less its beats at one per cycle.
    fn measure(&mut self, write: bool, issued: Ps, now: Ps, beats: u32) {
        let beats_ps = u64::from(beats) * CYCLE_PS;
        // A read's last beat is itself one of the beats; a write's response comes after them.
        let ps = if write {
            now.saturating_sub(issued + beats_ps)
        } else {
            now.saturating_sub(issued + beats_ps - CYCLE_PS)
        };
        if write {
            self.writes.add(ps);
        } else {
            self.reads.add(ps);
        }
    }

    /// Posted writes that end a transfer (its status write-back and the MSI), queued up the
    /// link at `at`, behind its data; returns when the interrupt reaches the host.
    fn finish(&mut self, at: Ps, writebacks: u64) -> Ps {
        for _ in 0..writebacks.max(1) {
            self.link.send(Way::Up, at, Tlp::Write(WRITEBACK_BYTES));
        }
        self.link.send(Way::Up, at, Tlp::Write(MSI_BYTES)) + self.link.flight()
    }
}

/// What a job tells the simulation thread after a poll.
#[derive(Debug)]
pub(crate) enum Poll {
    /// Still going.
    Pending,
    /// Finished: the answer, which reaches the caller at `end`, and when the channel is free
    /// for the next queued call (the engine after the driver's interrupt handling).
    Done {
        end: Ps,
        free_at: Ps,
        answer: Result<Answer>,
    },
}

impl Poll {
    /// Finished at `at`, the channel free at once.
    fn at(at: Ps, answer: Result<Answer>) -> Poll {
        Poll::Done {
            end: at,
            free_at: at,
            answer,
        }
    }
}

/// What a call gets back.
#[derive(Debug)]
pub(crate) enum Answer {
    Word(u32),
    Done,
    Moved(Transfer, Vec<u8>),
}

/// The descriptor blocks of one transfer, fetched as the engine needs them.
#[derive(Debug)]
struct Descs {
    /// Descriptors per block.
    sizes: Vec<u64>,
    /// When each block is in the engine, once its fetch has been issued.
    ready_at: Vec<Option<Ps>>,
}

impl Descs {
    fn new(count: usize, block: u32) -> Descs {
        let block = block.max(1) as usize;
        let n = count.div_ceil(block).max(1);
        let sizes = (0..n)
            .map(|b| (count.saturating_sub(b * block)).clamp(1, block) as u64)
            .collect();
        Descs {
            sizes,
            ready_at: vec![None; n],
        }
    }

    /// Issues block `b`'s fetch at `at` if it is not issued yet and a tag is free.
    fn fetch(&mut self, ip: &mut Ip, b: usize, at: Ps) {
        if b >= self.sizes.len() || self.ready_at[b].is_some() {
            return;
        }
        let bytes = self.sizes[b] * DESCRIPTOR_BYTES;
        if let Some(cpls) = ip.host_read(at, RING_ADDR + b as u64 * 1024, bytes) {
            self.ready_at[b] = Some(cpls.last().map_or(at, |c| c.0));
        }
    }

    /// Whether block `b` is in the engine at `now`.
    fn ready(&self, b: usize, now: Ps) -> bool {
        self.ready_at
            .get(b)
            .copied()
            .flatten()
            .is_some_and(|t| t <= now)
    }
}

/// The phases around a transfer's data, in absolute simulated ps.
#[derive(Debug)]
struct Life {
    /// The call's submission (the caller's time).
    stamp: Ps,
    /// When the driver starts it (the engine free and the submission done).
    start: Ps,
    /// When the doorbell reaches the card; the first descriptor fetch goes out then.
    doorbell: Option<Ps>,
    stage: Stage,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Waiting for the doorbell time.
    Start,
    /// Fetching the first descriptor block.
    Descriptors,
    /// Moving data (on the RTL).
    Data,
}

impl Life {
    fn new(stamp: Ps, engine_free: Ps, c: &Costs) -> Life {
        Life {
            stamp,
            start: (stamp + c.submit).max(engine_free),
            doorbell: None,
            stage: Stage::Start,
        }
    }

    /// Moves through start and descriptor fetch; true once the data phase may run at `now`.
    fn before_data(&mut self, ip: &mut Ip, descs: &mut Descs, now: Ps) -> bool {
        if self.stage == Stage::Start {
            let write_at = self.start + ip.costs.start;
            if write_at > now {
                return false;
            }
            let at = ip.link.send(Way::Down, write_at, Tlp::Write(4)) + ip.link.flight();
            self.doorbell = Some(at);
            self.stage = Stage::Descriptors;
        }
        if self.stage == Stage::Descriptors {
            let Some(db) = self.doorbell else {
                return false;
            };
            if db > now {
                return false;
            }
            descs.fetch(ip, 0, db);
            if !descs.ready(0, now) {
                return false;
            }
            self.stage = Stage::Data;
        }
        self.stage == Stage::Data
    }

    /// Ends the data phase at `data_end` with `writebacks` status writes: the interrupt goes
    /// up behind them, the driver handles it (the engine is free from then), the caller wakes.
    fn data_done(
        &self,
        ip: &mut Ip,
        data_end: Ps,
        writebacks: u64,
        answer: impl FnOnce(Ps) -> Result<Answer>,
    ) -> Poll {
        let msi = ip.finish(data_end, writebacks);
        let isr = msi + ip.costs.irq;
        let end = isr + ip.costs.wake;
        Poll::Done {
            end,
            free_at: isr,
            answer: answer(end),
        }
    }
}

fn moved(stamp: Ps, end: Ps, bytes: usize, eop: bool, data: Vec<u8>) -> Answer {
    Answer::Moved(
        Transfer {
            bytes,
            end_of_packet: eop,
            start_ps: stamp,
            end_ps: end,
        },
        data,
    )
}

fn bus_failed(what: &str, addr: u64, resp: axi_bfm::Resp) -> Error {
    Error::Bus(format!(
        "{what} at card address {addr:#x}: the card answered {resp:?} on s_axi; the transfer failed (look at the card's AXI slave in the waves, CARD_WAVES=1)"
    ))
}

/// One memory read of host memory for an H2C transfer.
#[derive(Debug, Clone, Copy)]
struct ReadReq {
    off: u64,
    len: u64,
    host: u64,
    block: usize,
}

/// The H2C side of the engine that moves host memory to the card: memory reads within the
/// channel's request IDs and the shared tags, their data arriving in order.
#[derive(Debug)]
struct HostReads {
    reqs: Vec<ReadReq>,
    next: usize,
    /// The channel's request IDs, each held until the card has taken its bytes (the end
    /// offset of the request's bytes in the transfer).
    ids: Slots<u64>,
    /// Completion arrivals still to come: (time, end offset of the transfer's bytes so far).
    arrivals: VecDeque<(Ps, u64)>,
    /// Bytes of the transfer in the engine.
    arrived: u64,
}

impl HostReads {
    fn new(ip: &Ip, descs: &[engine::Descriptor], block: u32) -> HostReads {
        let mrrs = u64::from(ip.link.config().max_read_request);
        let mut reqs = Vec::new();
        let mut off = 0;
        for (i, d) in descs.iter().enumerate() {
            let mut host = d.host_addr;
            for n in engine::pcie_pieces(d.host_addr, d.len, mrrs) {
                reqs.push(ReadReq {
                    off,
                    len: n,
                    host,
                    block: i / block.max(1) as usize,
                });
                off += n;
                host += n;
            }
        }
        HostReads {
            reqs,
            next: 0,
            ids: Slots::new(ip.engine.h2c_request_ids),
            arrivals: VecDeque::new(),
            arrived: 0,
        }
    }

    /// Frees the IDs of requests whose bytes the card has taken (`consumed` from the start),
    /// issues what the IDs, tags and descriptors allow at `now`, and counts what has arrived.
    fn poll(&mut self, ip: &mut Ip, descs: &mut Descs, consumed: u64, stop: bool, now: Ps) {
        self.ids.free_upto(consumed);
        while !stop && self.next < self.reqs.len() {
            let r = self.reqs[self.next];
            // The next block's descriptors are fetched one block ahead.
            descs.fetch(ip, r.block + 1, now);
            if !self.ids.has_room(0) || !descs.ready(r.block, now) {
                break;
            }
            let Some(cpls) = ip.host_read(now, r.host, r.len) else {
                break;
            };
            let mut end = r.off;
            for (t, n) in cpls {
                end += n;
                self.arrivals.push_back((t, end));
            }
            self.ids.hold(r.off + r.len);
            self.next += 1;
        }
        while let Some(&(t, end)) = self.arrivals.front() {
            if t > now {
                break;
            }
            self.arrived = end;
            self.arrivals.pop_front();
        }
    }

    /// True once every request is issued and answered.
    fn all_in(&self) -> bool {
        self.next == self.reqs.len() && self.arrivals.is_empty()
    }
}

/// Bytes between two progress events of a memory-mapped transfer.
pub(crate) const PROGRESS_STEP: u64 = 64 << 20;

/// Progress of a long memory-mapped transfer as `tracing` events (target
/// `xdma_sim::progress`), one each [`PROGRESS_STEP`] bytes: a transfer of a GiB takes minutes
/// of wall time on the simulated card, and a tool shows these as its progress bar.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    reported: u64,
}

impl Progress {
    fn update(&mut self, what: &'static str, done: u64, total: u64) {
        let step = done / PROGRESS_STEP;
        if step > self.reported && total > PROGRESS_STEP {
            self.reported = step;
            tracing::info!(
                target: "xdma_sim::progress",
                what,
                done,
                total,
                "{what}: {} of {} MiB",
                done >> 20,
                total >> 20
            );
        }
    }
}

/// Memory-mapped H2C.
#[derive(Debug)]
pub(crate) struct MmWrite {
    life: Life,
    descs: Descs,
    reads: HostReads,
    data: Vec<u8>,
    bursts: Vec<Piece>,
    next: usize,
    /// Bursts on the bus: handle, offset of their end, issue time, beats.
    in_flight: VecDeque<(TxnId, u64, Ps, u32, u64)>,
    /// Bytes whose bursts the card has answered, from the start.
    written: u64,
    progress: Progress,
    failed: Option<Error>,
    abort_at: Option<Ps>,
}

/// Memory-mapped C2H.
#[derive(Debug)]
pub(crate) struct MmRead {
    life: Life,
    descs: Descs,
    /// Descriptor block of each burst.
    block_of: Vec<usize>,
    host: u64,
    buf: Vec<u8>,
    bursts: Vec<Piece>,
    next: usize,
    /// Bursts on the bus, in issue order: handle, index, issue time.
    in_flight: VecDeque<(TxnId, usize, Ps)>,
    /// The channel's request IDs: those whose write has gone, each held until it is
    /// acknowledged (the bursts still on the bus hold one each as well).
    ids: Slots<Ps>,
    last_write: Ps,
    /// Bytes whose bursts have come back from the card.
    read: u64,
    progress: Progress,
    failed: Option<Error>,
    abort_at: Option<Ps>,
}

/// Stream H2C.
#[derive(Debug)]
pub(crate) struct Send {
    port: usize,
    life: Life,
    descs: Descs,
    reads: HostReads,
    data: Option<Vec<u8>>,
    len: usize,
    started: bool,
    abort_at: Option<Ps>,
}

/// Stream C2H.
#[derive(Debug)]
pub(crate) struct Recv {
    port: usize,
    life: Life,
    descs: Descs,
    host: u64,
    len: usize,
    deadline: Ps,
    timeout: Duration,
    /// The driver's own costs on a receive's path (submission, start, interrupt handling):
    /// a timeout shorter than these always expires.
    path: Ps,
    /// Bytes of the packet so far that have gone up the link as memory writes.
    posted: u64,
    last_write: Ps,
    open: bool,
    abort_at: Option<Ps>,
}

/// A register access: the driver's system call, the MMIO request down the link, the card's
/// AXI-Lite answer, a read's completion back up.
#[derive(Debug)]
pub(crate) struct Reg {
    write: Option<u32>,
    off: u64,
    stamp: Ps,
    at_card: Option<Ps>,
    txn: Option<TxnId>,
}

/// A read of an event node: returns at once when the driver holds interrupts of that line,
/// else when one arrives, bounded in simulated time.
#[derive(Debug)]
pub(crate) struct Wait {
    event: usize,
    stamp: Ps,
    deadline: Ps,
    timeout: Duration,
    abort_at: Option<Ps>,
}

/// A job: one call as the IP and the driver carry it out.
#[derive(Debug)]
pub(crate) enum Job {
    Reg(Reg),
    Wait(Wait),
    Write(MmWrite),
    Read(MmRead),
    Send(Send),
    Recv(Recv),
}

/// A duration as ps, saturating.
pub(crate) fn dur_ps(d: Duration) -> Ps {
    u64::try_from(d.as_nanos().saturating_mul(1000)).unwrap_or(u64::MAX)
}

/// What a call asks of the card.
#[derive(Debug)]
pub(crate) enum Op {
    ReadReg(u64),
    WriteReg(u64, u32),
    WaitEvent(usize, Duration),
    WriteMm {
        ch: usize,
        addr: u64,
        host: u64,
        data: Vec<u8>,
    },
    ReadMm {
        ch: usize,
        addr: u64,
        host: u64,
        len: usize,
    },
    Send {
        port: usize,
        host: u64,
        data: Vec<u8>,
    },
    Recv {
        port: usize,
        host: u64,
        len: usize,
        timeout: Duration,
    },
}

impl Job {
    /// The job for `op`, submitted at `stamp`, on a channel whose engine is free from
    /// `engine_free`.
    pub(crate) fn new(ip: &Ip, op: Op, stamp: Ps, engine_free: Ps) -> Job {
        let c = &ip.costs;
        let block = ip.engine.descriptor_block;
        match op {
            Op::ReadReg(off) => Job::Reg(Reg {
                write: None,
                off,
                stamp: stamp.max(engine_free),
                at_card: None,
                txn: None,
            }),
            Op::WriteReg(off, v) => Job::Reg(Reg {
                write: Some(v),
                off,
                stamp: stamp.max(engine_free),
                at_card: None,
                txn: None,
            }),
            // The read enters the driver after its system call, which checks for a latched
            // interrupt and only then sleeps for the timeout.
            Op::WaitEvent(event, timeout) => Job::Wait(Wait {
                event,
                stamp,
                deadline: (stamp + c.register).saturating_add(dur_ps(timeout)),
                timeout,
                abort_at: None,
            }),
            Op::WriteMm {
                ch,
                addr,
                host,
                data,
            } => {
                let len = data.len() as u64;
                let d = engine::descriptors(host, addr, len);
                let e = &ip.engine;
                Job::Write(MmWrite {
                    life: Life::new(stamp, engine_free, c),
                    descs: Descs::new(d.len(), block),
                    reads: HostReads::new(ip, &d, block),
                    bursts: engine::bursts(&d, addr, ch as u32, e.data_bytes, e.max_burst_beats),
                    data,
                    next: 0,
                    in_flight: VecDeque::new(),
                    written: 0,
                    progress: Progress::default(),
                    failed: None,
                    abort_at: None,
                })
            }
            Op::ReadMm {
                ch,
                addr,
                host,
                len,
            } => {
                let d = engine::descriptors(host, addr, len as u64);
                let e = &ip.engine;
                // Each read is one memory write to the host: sized by the max payload.
                let beats = (ip.link.config().max_payload / e.data_bytes).clamp(1, 256);
                let bursts = engine::bursts(&d, addr, ch as u32, e.data_bytes, beats);
                let starts: Vec<u64> = d.iter().map(|x| x.card_addr - addr).collect();
                let block_of = bursts
                    .iter()
                    .map(|p| {
                        let desc = starts.partition_point(|&s| s <= p.offset as u64) - 1;
                        desc / block.max(1) as usize
                    })
                    .collect();
                Job::Read(MmRead {
                    life: Life::new(stamp, engine_free, c),
                    descs: Descs::new(d.len(), block),
                    block_of,
                    host,
                    buf: vec![0; len],
                    bursts,
                    next: 0,
                    in_flight: VecDeque::new(),
                    ids: Slots::new(e.c2h_request_ids),
                    last_write: 0,
                    read: 0,
                    progress: Progress::default(),
                    failed: None,
                    abort_at: None,
                })
            }
            Op::Send { port, host, data } => {
                let d = engine::descriptors(host, 0, data.len() as u64);
                Job::Send(Send {
                    port,
                    life: Life::new(stamp, engine_free, c),
                    descs: Descs::new(d.len(), block),
                    reads: HostReads::new(ip, &d, block),
                    len: data.len(),
                    data: Some(data),
                    started: false,
                    abort_at: None,
                })
            }
            Op::Recv {
                port,
                host,
                len,
                timeout,
            } => {
                let d = engine::descriptors(host, 0, len as u64);
                Job::Recv(Recv {
                    port,
                    life: Life::new(stamp, engine_free, c),
                    descs: Descs::new(d.len(), block),
                    host,
                    len,
                    deadline: stamp.saturating_add(dur_ps(timeout)),
                    timeout,
                    path: c.submit + c.start + c.irq,
                    posted: 0,
                    last_write: 0,
                    open: false,
                    abort_at: None,
                })
            }
        }
    }

    /// The bus a job drives, as its protocol monitor names it.
    pub(crate) fn bus<'h>(&self, card: &'h CardHarness) -> &'h str {
        match self {
            Job::Reg(_) => "s_axil",
            Job::Wait(_) => "usr_irq",
            Job::Write(_) | Job::Read(_) => "s_axi",
            Job::Send(s) => card.h2c_ports().get(s.port).map_or("", String::as_str),
            Job::Recv(r) => card.c2h_ports().get(r.port).map_or("", String::as_str),
        }
    }

    /// Stops the job from `at` on, the way the driver aborts an engine: nothing new goes on a
    /// bus, what is on a bus finishes, and the job then ends without an answer.
    pub(crate) fn abort(&mut self, at: Ps) {
        let slot = match self {
            Job::Write(j) => &mut j.abort_at,
            Job::Read(j) => &mut j.abort_at,
            Job::Send(j) => &mut j.abort_at,
            Job::Recv(j) => &mut j.abort_at,
            Job::Wait(j) => &mut j.abort_at,
            // A register access is one AXI-Lite transaction: it finishes on its own.
            Job::Reg(_) => return,
        };
        *slot = Some(slot.map_or(at, |t| t.min(at)));
    }

    /// Puts the job's buses back in a quiet state at once after a failure.
    pub(crate) fn quiet(&mut self, card: &mut CardHarness) {
        match self {
            Job::Recv(r) => {
                if let Some(s) = card.c2h.get(r.port) {
                    s.set_enabled(false);
                }
            }
            Job::Send(s) => {
                if let Some(src) = card.h2c.get(s.port) {
                    src.cancel_unstarted();
                    src.set_credit(None);
                }
            }
            _ => {}
        }
    }

    /// Moves the job on at `now`.
    pub(crate) fn poll(&mut self, ip: &mut Ip, card: &mut CardHarness, now: Ps) -> Poll {
        match self {
            Job::Reg(r) => r.poll(ip, card, now),
            Job::Wait(w) => w.poll(ip, now),
            Job::Write(w) => w.poll(ip, card, now),
            Job::Read(r) => r.poll(ip, card, now),
            Job::Send(s) => s.poll(ip, card, now),
            Job::Recv(r) => r.poll(ip, card, now),
        }
    }
}

fn aborted(at: Option<Ps>, now: Ps) -> bool {
    at.is_some_and(|t| t <= now)
}

/// An aborted job that has drained: the engine is free now and nobody waits for an answer.
fn drained(now: Ps) -> Poll {
    Poll::at(
        now,
        Err(Error::Backend(
            "the call was cancelled and its transfer aborted on the card".into(),
        )),
    )
}

impl Reg {
    fn poll(&mut self, ip: &mut Ip, card: &mut CardHarness, now: Ps) -> Poll {
        let c = ip.costs;
        let at_card = match self.at_card {
            Some(t) => t,
            None => {
                let issue = self.stamp + c.register;
                if issue > now {
                    return Poll::Pending;
                }
                let tlp = if self.write.is_some() {
                    Tlp::Write(4)
                } else {
                    Tlp::Read
                };
                let t = ip.link.send(Way::Down, issue, tlp) + ip.link.flight();
                self.at_card = Some(t);
                t
            }
        };
        match self.txn {
            None if now >= at_card => {
                let t = match self.write {
                    Some(v) => card.regs.start_write(self.off, u64::from(v), 0xf),
                    None => card.regs.start_read(self.off),
                };
                match t {
                    Ok(t) => self.txn = Some(t),
                    Err(e) => return Poll::at(now, Err(bfm(e))),
                }
                Poll::Pending
            }
            Some(t) if card.regs.is_done(t) => {
                let (v, resp) = match card.regs.take(t) {
                    Ok(x) => x,
                    Err(e) => return Poll::at(now, Err(bfm(e))),
                };
                if !resp.is_ok() {
                    let what = if self.write.is_some() {
                        "write"
                    } else {
                        "read"
                    };
                    return Poll::at(
                        now,
                        Err(Error::Bus(format!(
                            "register {what} at {:#x}: the card answered {resp:?} on s_axil",
                            self.off
                        ))),
                    );
                }
                match self.write {
                    // A posted write's call returned once its system call was done; the
                    // register path was held until the card took it, so accesses stay in
                    // order as PCIe keeps them.
                    Some(_) => Poll::Done {
                        end: self.stamp + c.register,
                        free_at: now,
                        answer: Ok(Answer::Done),
                    },
                    None => {
                        let back =
                            ip.link.send(Way::Up, now, Tlp::Completion(4)) + ip.link.flight();
                        Poll::at(back, Ok(Answer::Word(v as u32)))
                    }
                }
            }
            _ => Poll::Pending,
        }
    }
}

impl Wait {
    fn poll(&mut self, ip: &mut Ip, now: Ps) -> Poll {
        if aborted(self.abort_at, now) {
            // The read of the event node is interrupted; interrupts stay latched.
            return drained(now);
        }
        let c = ip.costs;
        let Some(q) = ip.latched.get_mut(self.event) else {
            return Poll::at(
                now,
                Err(Error::Backend(format!("no event line {}", self.event))),
            );
        };
        // The read enters the driver after its system call; interrupts the driver already
        // holds then are returned at once, collapsed into one read; otherwise the reader
        // sleeps until the next one and is woken.
        let enter = self.stamp + c.register;
        if let Some(&first) = q.front() {
            let seen = first.max(enter);
            if seen <= now && seen <= self.deadline {
                let n = q.iter().take_while(|&&t| t <= seen).count();
                q.drain(..n);
                let end = if first <= enter { enter } else { seen + c.wake };
                return Poll::at(end, Ok(Answer::Word(n as u32)));
            }
        }
        if now >= self.deadline {
            return Poll::at(
                self.deadline,
                Err(Error::Timeout {
                    what: format!("user interrupt {} (simulated time)", self.event),
                    after: self.timeout,
                }),
            );
        }
        Poll::Pending
    }
}

impl MmWrite {
    fn poll(&mut self, ip: &mut Ip, card: &mut CardHarness, now: Ps) -> Poll {
        let stop = aborted(self.abort_at, now);
        if !self.life.before_data(ip, &mut self.descs, now) {
            return if stop { drained(now) } else { Poll::Pending };
        }
        // Bursts the card has answered, in order (one AXI ID per channel).
        while let Some(&(t, end, issued, beats, addr)) = self.in_flight.front() {
            if !card.dma.is_done(t) {
                break;
            }
            self.in_flight.pop_front();
            ip.measure(true, issued, now, beats);
            match card.dma.take_write(t) {
                Ok(r) if r.is_ok() => {}
                Ok(r) => {
                    self.failed
                        .get_or_insert(bus_failed("memory-mapped H2C write", addr, r));
                }
                Err(e) => {
                    self.failed.get_or_insert(bfm(e));
                }
            }
            self.written = end;
            self.progress.update(
                "memory-mapped H2C write",
                self.written,
                self.data.len() as u64,
            );
        }
        self.reads
            .poll(ip, &mut self.descs, self.written, stop, now);
        // A burst goes to the card once its bytes are in the engine.
        while !stop && self.next < self.bursts.len() {
            let p = self.bursts[self.next];
            let end = (p.offset + p.bytes) as u64;
            if end > self.reads.arrived {
                break;
            }
            match card
                .dma
                .start_write_burst(p.burst, &self.data[p.offset..p.offset + p.bytes])
            {
                Ok(t) => self
                    .in_flight
                    .push_back((t, end, now, p.burst.beats(), p.burst.addr)),
                Err(e) => {
                    self.failed.get_or_insert(bfm(e));
                }
            }
            self.next += 1;
        }
        if !self.in_flight.is_empty() {
            return Poll::Pending;
        }
        if stop {
            // What was on the bus has finished; reads of host memory still on their way come
            // back into a stopped engine.
            return drained(now);
        }
        if self.next < self.bursts.len() || !self.reads.all_in() {
            return Poll::Pending;
        }
        tracing::debug!(
            bytes = self.data.len(),
            stamp_ns = self.life.stamp / 1000,
            start_ns = self.life.start / 1000,
            doorbell_ns = ?self.life.doorbell.map(|d| d / 1000),
            data_end_ns = now / 1000,
            "memory-mapped H2C write's phases"
        );
        let (stamp, bytes) = (self.life.stamp, self.data.len());
        let failed = self.failed.take();
        self.life.data_done(ip, now, 1, |end| match failed {
            Some(e) => Err(e),
            None => Ok(moved(stamp, end, bytes, false, Vec::new())),
        })
    }
}

impl MmRead {
    fn poll(&mut self, ip: &mut Ip, card: &mut CardHarness, now: Ps) -> Poll {
        let stop = aborted(self.abort_at, now);
        if !self.life.before_data(ip, &mut self.descs, now) {
            return if stop { drained(now) } else { Poll::Pending };
        }
        self.ids.free_upto(now);
        while !stop && self.next < self.bursts.len() {
            let b = self.block_of[self.next];
            self.descs.fetch(ip, b + 1, now);
            if !self.ids.has_room(self.in_flight.len()) || !self.descs.ready(b, now) {
                break;
            }
            match card.dma.start_read_burst(self.bursts[self.next].burst) {
                Ok(t) => self.in_flight.push_back((t, self.next, now)),
                Err(e) => {
                    self.failed.get_or_insert(bfm(e));
                }
            }
            self.next += 1;
        }
        // Bursts whose data is in (one AXI ID per channel, so they finish in order) leave for
        // the host as memory writes; each request ID stays held until the link partner has
        // acknowledged its write.
        let flight = ip.link.flight();
        let mps = u64::from(ip.link.config().max_payload);
        while let Some(&(t, i, issued)) = self.in_flight.front() {
            if !card.dma.is_done(t) {
                break;
            }
            self.in_flight.pop_front();
            let p = self.bursts[i];
            ip.measure(false, issued, now, p.burst.beats());
            match card.dma.take_read(t) {
                Ok((data, r)) if r.is_ok() => {
                    if let (Some(src), Some(dst)) = (
                        data.get(..p.bytes),
                        self.buf.get_mut(p.offset..p.offset + p.bytes),
                    ) {
                        dst.copy_from_slice(src);
                    }
                }
                Ok((_, r)) => {
                    self.failed.get_or_insert(bus_failed(
                        "memory-mapped C2H read",
                        p.burst.addr,
                        r,
                    ));
                }
                Err(e) => {
                    self.failed.get_or_insert(bfm(e));
                }
            }
            self.read += p.bytes as u64;
            self.progress
                .update("memory-mapped C2H read", self.read, self.buf.len() as u64);
            let host = self.host + p.offset as u64;
            let mut acked = now;
            for n in engine::pcie_pieces(host, p.bytes as u64, mps) {
                let sent = ip.link.send(Way::Up, now, Tlp::Write(n));
                self.last_write = self.last_write.max(sent);
                acked = acked.max(sent + flight + ip.costs.root_ack + flight);
            }
            self.ids.hold(acked);
        }
        if !self.in_flight.is_empty() {
            return Poll::Pending;
        }
        if stop {
            return drained(now);
        }
        if self.next < self.bursts.len() {
            return Poll::Pending;
        }
        let stamp = self.life.stamp;
        let buf = std::mem::take(&mut self.buf);
        let failed = self.failed.take();
        self.life
            .data_done(ip, self.last_write.max(now), 1, |end| match failed {
                Some(e) => Err(e),
                None => Ok(moved(stamp, end, buf.len(), false, buf)),
            })
    }
}

impl Send {
    fn poll(&mut self, ip: &mut Ip, card: &mut CardHarness, now: Ps) -> Poll {
        let stop = aborted(self.abort_at, now);
        let Some(src) = card.h2c.get(self.port).cloned() else {
            return Poll::at(
                now,
                Err(Error::Backend(format!("no H2C stream port {}", self.port))),
            );
        };
        if !self.life.before_data(ip, &mut self.descs, now) {
            return if stop { drained(now) } else { Poll::Pending };
        }
        if !self.started {
            if stop {
                return drained(now);
            }
            self.started = true;
            src.set_credit(Some(0));
            if let Some(d) = self.data.take() {
                if let Err(e) = src.start_send(AxisFrame::new(d)) {
                    src.set_credit(None);
                    return Poll::at(now, Err(bfm(e)));
                }
            }
        }
        let consumed = if src.idle() {
            self.len as u64
        } else {
            src.progress() as u64
        };
        self.reads.poll(ip, &mut self.descs, consumed, stop, now);
        if stop && !src.cancel_unstarted() {
            // No beat of the frame went out: it is dropped and the stream stays idle.
            src.set_credit(None);
            return drained(now);
        }
        // A beat goes out once the link has brought its bytes. An aborted frame that had
        // started is let out whole, since AXI-Stream cannot take a beat back.
        let credit = if stop {
            self.len
        } else {
            self.reads.arrived as usize
        };
        src.set_credit(Some(credit));
        if !src.idle() {
            return Poll::Pending;
        }
        src.set_credit(None);
        if stop {
            return drained(now);
        }
        // The engine ends every transfer with end-of-packet on its last beat.
        let (stamp, len) = (self.life.stamp, self.len);
        self.life.data_done(ip, now, 1, |end| {
            Ok(moved(stamp, end, len, true, Vec::new()))
        })
    }
}

impl Recv {
    fn poll(&mut self, ip: &mut Ip, card: &mut CardHarness, now: Ps) -> Poll {
        let stop = aborted(self.abort_at, now);
        let Some(sink) = card.c2h.get(self.port).cloned() else {
            return Poll::at(
                now,
                Err(Error::Backend(format!("no C2H stream port {}", self.port))),
            );
        };
        if stop {
            sink.set_enabled(false);
            return drained(now);
        }
        if !self.life.before_data(ip, &mut self.descs, now) {
            return if now >= self.deadline {
                self.timed_out(&sink)
            } else {
                Poll::Pending
            };
        }
        let mps = u64::from(ip.link.config().max_payload);
        // The rest of a packet that an earlier receive's buffer could not hold comes first.
        let frame = match ip
            .leftovers
            .get_mut(self.port)
            .and_then(VecDeque::pop_front)
        {
            Some(rest) => Some(rest),
            None => {
                if !self.open {
                    self.open = true;
                    sink.set_enabled(true);
                }
                sink.try_recv().map(|f| f.data)
            }
        };
        // Bytes that came off the bus leave for the host as the engine fills a write's worth.
        let have = frame
            .as_ref()
            .map_or(sink.partial(), Vec::len)
            .min(self.len) as u64;
        let ended = frame.is_some() || have == self.len as u64;
        while self.posted < have && (self.posted + mps <= have || ended) {
            // A write never crosses a 4 KiB boundary of the host buffer.
            let at = self.host + self.posted;
            let n = (have - self.posted).min(mps).min(4096 - at % 4096);
            let sent = ip.link.send(Way::Up, now, Tlp::Write(n));
            self.last_write = self.last_write.max(sent);
            self.posted += n;
        }
        let Some(mut data) = frame else {
            return if now >= self.deadline {
                self.timed_out(&sink)
            } else {
                Poll::Pending
            };
        };
        // The engine has its packet (or its buffer is full): no more data is taken.
        sink.set_enabled(false);
        // A packet that exactly fills the buffer reports no end-of-packet, as the driver does:
        // it cannot tell whether the packet ended there (see `Transfer::end_of_packet`).
        let eop = data.len() < self.len;
        if data.len() > self.len {
            let rest = data.split_off(self.len);
            if let Some(q) = ip.leftovers.get_mut(self.port) {
                q.push_front(rest);
            }
        }
        // The C2H stream engine writes back the length and end-of-packet of the descriptor it
        // filled, then interrupts.
        let stamp = self.life.stamp;
        self.life.data_done(ip, self.last_write.max(now), 1, |end| {
            let n = data.len();
            Ok(moved(stamp, end, n, eop, data))
        })
    }

    fn timed_out(&mut self, sink: &axi_bfm::AxisSink) -> Poll {
        sink.set_enabled(false);
        Poll::at(
            self.deadline,
            Err(Error::Timeout {
                what: if dur_ps(self.timeout) < self.path {
                    format!(
                        "a C2H stream packet (simulated time); the simulated driver's own part of a receive takes {:?} ([sim] timing.host submit_ns + start_ns + irq_ns), so a shorter timeout always expires: pass a longer one",
                        Duration::from_nanos(self.path / 1_000)
                    )
                } else {
                    "a C2H stream packet (simulated time)".into()
                },
                after: self.timeout,
            }),
        )
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
            m.target() == "xdma_sim::progress"
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
    fn long_transfers_report_progress_each_step_and_short_ones_not() {
        // 1 GiB in bursts of 256 bytes: an event at each 64 MiB, 16 in all.
        let gib = 1u64 << 30;
        let n = events(|| {
            let mut p = Progress::default();
            for done in (256..=gib).step_by(256) {
                p.update("memory-mapped H2C write", done, gib);
            }
        });
        assert_eq!(n, (gib / PROGRESS_STEP) as usize);
        // A transfer of one step or less says nothing.
        let n = events(|| {
            let mut p = Progress::default();
            for done in (4096..=PROGRESS_STEP).step_by(4096) {
                p.update("memory-mapped C2H read", done, PROGRESS_STEP);
            }
        });
        assert_eq!(n, 0);
    }
}
