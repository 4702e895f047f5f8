//! The simulation thread: `sim_top` in an axi-bfm environment, driven the way the XDMA IP
//! drives it, with every transfer timed by the link and driver model.
//!
//! Requests are queued per lane (the register path, each interrupt line, each channel) and
//! the head of every lane runs at once, so channels move data concurrently in simulated time
//! while calls on one channel keep their order. Every transfer goes through the same phases:
//!
//! 1. set-up: the host's submission and the first descriptor fetch (timing model);
//! 2. data, on the RTL: H2C bursts are released as the link delivers their bytes; C2H bursts
//!    are issued within the channel's read window and their data queues on the upstream link;
//!    stream data goes through the AXI-Stream bus models;
//! 3. completion: the engine's write-back and interrupt, and the host's completion (timing
//!    model).
//!
//! The card's own latencies (DDR, clock crossings, width conversion, backpressure) are whatever
//! the RTL does in phase 2. Protocol monitors watch every bus; a violation fails the transfers
//! that were running.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::Duration;

use axi_bfm::{
    AxiMaster, AxiMasterConfig, AxilMaster, AxisFrame, AxisMonitor, AxisMonitorConfig, AxisSink,
    AxisSource, BfmError, Burst, Env, Piece, ResetPolarity, Resp, TxnId,
};
use card_sim::{Model, Top};

use xdma_core::{ChannelKind, Direction, Error, Result, Transfer};

use crate::engine::{self, EngineConfig};
use crate::irq::IrqAgent;
use crate::timing::{Arrival, TimingModel};
use crate::{bfm, sim};

/// The card's DMA-side clock: 250 MHz on the reference board (README).
pub(super) const AXI_ACLK_HZ: u64 = 250_000_000;
/// The DDR controller's user clock: 200 MHz on the reference board (MIG ui_clk, README).
const DDR_CLK_HZ: u64 = 200_000_000;
/// Cycles each reset is held at start, enough for every synchronous reset in the card.
const RESET_CYCLES: u64 = 8;
/// The user BAR's stream ports, in channel order.
const H2C_STREAMS: &[&str] = &["s_axis_h2c0"];
const C2H_STREAMS: &[&str] = &["m_axis_c2h0", "m_axis_c2h1"];

/// What a request asks of the card.
#[derive(Debug)]
pub(super) enum Op {
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
        ch: usize,
        host: u64,
        data: Vec<u8>,
    },
    Recv {
        ch: usize,
        host: u64,
        len: usize,
        timeout: Duration,
    },
    Now,
    Latency,
}

/// What the card answers.
#[derive(Debug)]
pub(super) enum Answer {
    Word(u32),
    Done,
    Time(u64),
    Moved(Transfer, Vec<u8>),
    Latency(LatencyStats),
}

/// Card-side latencies seen on `s_axi` so far, measured on the RTL.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LatencyStats {
    /// Read bursts measured.
    pub reads: u64,
    /// Shortest read latency in ns: from the burst's issue to its last beat, less the time
    /// its beats take at one per cycle, which is the wait for the first beat when the burst
    /// streams without gaps. The shortest is the unloaded latency.
    pub read_min_ns: f64,
    /// Mean read latency in ns, queueing behind earlier bursts of the window included.
    pub read_mean_ns: f64,
    /// Write bursts measured.
    pub writes: u64,
    /// Shortest write latency in ns: from the burst's issue to its response, less the time
    /// its data beats take: about the last beat to the response.
    pub write_min_ns: f64,
    /// Mean write latency in ns.
    pub write_mean_ns: f64,
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
        self.sum_ps += ps;
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

/// Where an answer goes.
#[derive(Debug)]
pub(super) enum Reply {
    Blocking(std::sync::mpsc::SyncSender<Result<Answer>>),
    Async(tokio::sync::oneshot::Sender<Result<Answer>>),
}

impl Reply {
    fn send(self, a: Result<Answer>) {
        // A caller that gave up (its own timeout) no longer listens; nothing to do then.
        match self {
            Reply::Blocking(s) => {
                let _ = s.send(a);
            }
            Reply::Async(s) => {
                let _ = s.send(a);
            }
        }
    }
}

/// One request.
#[derive(Debug)]
pub(super) struct Request {
    pub(super) op: Op,
    pub(super) reply: Reply,
}

/// The card's shape, found when it is built.
#[derive(Debug, Clone, Copy)]
pub(super) struct Found {
    pub(super) card_id: u32,
    pub(super) card_version: u32,
    pub(super) bar_size: u64,
    /// Bytes of card memory: the DDR3 model's size, from the RTL.
    pub(super) memory_size: u64,
    pub(super) irq_lines: usize,
}

/// The buses and agents the jobs drive.
struct Hw {
    env: Env,
    axi: AxiMaster,
    lite: AxilMaster,
    h2c_streams: Vec<AxisSource>,
    c2h_streams: Vec<AxisSink>,
    /// Bytes of a frame left over from a receive whose buffer was too small, per C2H stream.
    leftovers: Vec<VecDeque<Vec<u8>>>,
    irq: Rc<RefCell<IrqAgent>>,
    timing: TimingModel,
    engine: EngineConfig,
    /// Per H2C / C2H channel: its stream port index when it is a stream channel.
    h2c_port: Vec<Option<usize>>,
    c2h_port: Vec<Option<usize>>,
    reads: Stat,
    writes: Stat,
}

impl Hw {
    /// Records a burst's latency: from its issue at `issued` to its end now, less its beats.
    fn measure(&mut self, write: bool, issued: u64, now: u64, beats: u32) {
        let cycle = 1_000_000_000_000 / AXI_ACLK_HZ;
        let beats_ps = u64::from(beats) * cycle;
        // A read's last beat is itself one of the beats; a write's response comes after them.
        let ps = if write {
            now.saturating_sub(issued + beats_ps)
        } else {
            now.saturating_sub(issued + beats_ps - cycle)
        };
        if write {
            self.writes.add(ps);
        } else {
            self.reads.add(ps);
        }
    }
}

/// Queues: the register path, each interrupt line, each channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lane {
    Reg,
    Event(usize),
    H2c(usize),
    C2h(usize),
}

fn lane_of(op: &Op) -> Option<Lane> {
    Some(match op {
        Op::ReadReg(_) | Op::WriteReg(..) => Lane::Reg,
        Op::WaitEvent(e, _) => Lane::Event(*e),
        Op::WriteMm { ch, .. } | Op::Send { ch, .. } => Lane::H2c(*ch),
        Op::ReadMm { ch, .. } | Op::Recv { ch, .. } => Lane::C2h(*ch),
        Op::Now | Op::Latency => return None,
    })
}

struct Queued {
    lane: Lane,
    op: Op,
    reply: Reply,
}

struct Running {
    lane: Lane,
    job: Job,
    reply: Reply,
}

/// The state the simulation thread owns.
pub(super) struct CardThread {
    hw: Hw,
    queued: VecDeque<Queued>,
    running: Vec<Running>,
}

/// The card's top as configured: a top of this build by name, or a missing device.
fn find_top(name: &str) -> Result<Top> {
    Top::ALL
        .iter()
        .copied()
        .find(|t| t.name() == name)
        .ok_or_else(|| Error::NoDevice {
            what: format!("simulated card `{name}`"),
            hint: format!(
                "this build has no RTL top of that name; set sim.top to a card top listed in sim/tops.txt (the card is `sim_top`; this build has {})",
                Top::ALL.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
            ),
        })
}

impl CardThread {
    /// Builds the model, attaches the XDMA side to its ports, resets it and reads the
    /// identifiers.
    pub(super) fn start(
        top: &str,
        name: &str,
        timing: TimingModel,
        h2c: &[ChannelKind],
        c2h: &[ChannelKind],
        stall_limit: Duration,
    ) -> Result<(CardThread, Found)> {
        let stall_limit_cycles =
            u64::try_from(stall_limit.as_nanos() * u128::from(AXI_ACLK_HZ) / 1_000_000_000)
                .unwrap_or(u64::MAX);
        let top = find_top(top)?;
        let model = Model::builder(top).name(name).build().map_err(sim)?;
        let not_a_card = |e: BfmError| Error::NoDevice {
            what: format!("simulated card `{}`", top.name()),
            hint: format!(
                "this RTL top is not a card with the XDMA-side ports ({e}); use `sim_top`"
            ),
        };
        let mut env = Env::new(model);
        let clk = env.add_clock("axi_aclk", AXI_ACLK_HZ).map_err(not_a_card)?;
        let ddr = env.add_clock("ddr_clk", DDR_CLK_HZ).map_err(not_a_card)?;
        env.add_reset(clk, "axi_aresetn", ResetPolarity::ActiveLow)
            .map_err(not_a_card)?;
        env.add_reset(ddr, "ddr_rst", ResetPolarity::ActiveHigh)
            .map_err(not_a_card)?;
        let engine = *timing.engine();
        // The per-channel windows are the engine model's; the bus model only must not limit
        // them, so its own limits are the sum over channels.
        let windows = |dir| {
            let n = match dir {
                Direction::H2C => h2c.len(),
                Direction::C2H => c2h.len(),
            };
            n.max(1)
        };
        let axi_cfg = AxiMasterConfig {
            max_burst_len: engine.max_burst_beats,
            max_outstanding_writes: windows(Direction::H2C)
                * engine.h2c.max_outstanding_writes as usize,
            max_outstanding_reads: windows(Direction::C2H)
                * engine.c2h.max_outstanding_reads as usize,
            ..AxiMasterConfig::default()
        };
        let axi = AxiMaster::attach_with(&mut env, "s_axi", clk, axi_cfg).map_err(not_a_card)?;
        if axi.bus_bytes() != engine.data_bytes as usize {
            return Err(Error::Config(format!(
                "sim.engine.data_bytes = {} but the card's s_axi data bus has {} bytes; make them equal",
                engine.data_bytes,
                axi.bus_bytes()
            )));
        }
        let lite = AxilMaster::attach(&mut env, "s_axil", clk).map_err(not_a_card)?;
        let ports = |kinds: &[ChannelKind], names: &[&str], dir: Direction| {
            let mut next = 0;
            let mut map = Vec::with_capacity(kinds.len());
            for &k in kinds {
                if k == ChannelKind::Stream {
                    if next >= names.len() {
                        return Err(Error::Config(format!(
                            "sim.{} lists more stream channels than the card has {dir} stream ports ({})",
                            dir.to_string().to_ascii_lowercase(),
                            names.join(", ")
                        )));
                    }
                    map.push(Some(next));
                    next += 1;
                } else {
                    map.push(None);
                }
            }
            Ok(map)
        };
        let h2c_port = ports(h2c, H2C_STREAMS, Direction::H2C)?;
        let c2h_port = ports(c2h, C2H_STREAMS, Direction::C2H)?;
        // Every stream port is driven even when no channel uses it, so no input floats. The
        // stream monitors are attached by hand for their XDMA settings: frames packed as the
        // IP requires (TKEEP all ones but on the last beat), and stall bounds that fit DMA.
        env.set_monitors(false);
        let mut h2c_streams = Vec::new();
        for p in H2C_STREAMS {
            h2c_streams.push(AxisSource::attach(&mut env, p, clk).map_err(not_a_card)?);
            // A send that the card does not take within the limit fails rather than hangs.
            let cfg = AxisMonitorConfig {
                tkeep_packed: true,
                stall_bound: stall_limit_cycles.max(1),
                ..AxisMonitorConfig::default()
            };
            AxisMonitor::attach_with(&mut env, p, clk, cfg).map_err(not_a_card)?;
        }
        let mut c2h_streams = Vec::new();
        for p in C2H_STREAMS {
            let sink = AxisSink::attach(&mut env, p, clk).map_err(not_a_card)?;
            // A C2H stream engine takes data only while a receive has a buffer posted, so the
            // card may wait for TREADY as long as the host likes: no stall bound here.
            sink.set_enabled(false);
            c2h_streams.push(sink);
            let cfg = AxisMonitorConfig {
                tkeep_packed: true,
                stall_bound: 0,
                ..AxisMonitorConfig::default()
            };
            AxisMonitor::attach_with(&mut env, p, clk, cfg).map_err(not_a_card)?;
        }
        env.set_monitors(true);
        let req = env
            .model()
            .port("usr_irq_req")
            .map_err(|e| not_a_card(e.into()))?;
        let ack = env
            .model()
            .input("usr_irq_ack")
            .map_err(|e| not_a_card(e.into()))?;
        let irq = Rc::new(RefCell::new(IrqAgent::new(req, ack, timing.one_way_ps())));
        env.add_agent(clk, irq.clone());

        // Both resets asserted together, then each domain released after its own cycles.
        {
            let m = env.model_mut();
            let rstn = m.input("axi_aresetn").map_err(sim)?;
            let rst = m.input("ddr_rst").map_err(sim)?;
            m.set_bool(rstn, false);
            m.set_bool(rst, true);
            m.eval().map_err(sim)?;
        }
        env.reset(ddr, RESET_CYCLES).map_err(bfm)?;
        env.reset(clk, RESET_CYCLES).map_err(bfm)?;
        env.tick(clk).map_err(bfm)?;

        let leftovers = vec![VecDeque::new(); c2h_streams.len()];
        let irq_lines = irq.borrow().lines();
        let mut card = CardThread {
            hw: Hw {
                env,
                axi,
                lite,
                h2c_streams,
                c2h_streams,
                leftovers,
                irq,
                timing,
                engine,
                h2c_port,
                c2h_port,
                reads: Stat::default(),
                writes: Stat::default(),
            },
            queued: VecDeque::new(),
            running: Vec::new(),
        };
        let memory_size = card.hw.env.model().ddr_size().map_err(sim)?;
        let card_id = card.read_reg_now(0x000)?;
        let card_version = card.read_reg_now(0x004)?;
        let bar_size = 1u64
            << card
                .hw
                .env
                .model()
                .port("s_axil_awaddr")
                .map_err(sim)?
                .width();
        Ok((
            card,
            Found {
                card_id,
                card_version,
                bar_size,
                memory_size,
                irq_lines,
            },
        ))
    }

    /// A register read outside the request loop (discovery at start).
    fn read_reg_now(&mut self, off: u64) -> Result<u32> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.accept(Request {
            op: Op::ReadReg(off),
            reply: Reply::Blocking(tx),
        });
        while self.busy() {
            self.turn();
        }
        match rx.try_recv() {
            Ok(Ok(Answer::Word(w))) => Ok(w),
            Ok(Err(e)) => Err(e),
            Ok(Ok(other)) => Err(Error::Backend(format!("register read answered {other:?}"))),
            Err(_) => Err(Error::Backend("register read got no answer".into())),
        }
    }

    /// Serves requests until every sender is gone.
    pub(super) fn run(mut self, rx: std::sync::mpsc::Receiver<Request>) {
        loop {
            if !self.busy() {
                match rx.recv() {
                    Ok(r) => self.accept(r),
                    Err(_) => return,
                }
            }
            loop {
                match rx.try_recv() {
                    Ok(r) => self.accept(r),
                    Err(std::sync::mpsc::TryRecvError::Empty) => break,
                    Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                        if !self.busy() {
                            return;
                        }
                        break;
                    }
                }
            }
            self.turn();
        }
    }

    fn busy(&self) -> bool {
        !self.running.is_empty() || !self.queued.is_empty()
    }

    fn accept(&mut self, r: Request) {
        match lane_of(&r.op) {
            None => r.reply.send(Ok(match r.op {
                Op::Latency => Answer::Latency(LatencyStats {
                    reads: self.hw.reads.n,
                    read_min_ns: self.hw.reads.min_ns(),
                    read_mean_ns: self.hw.reads.mean_ns(),
                    writes: self.hw.writes.n,
                    write_min_ns: self.hw.writes.min_ns(),
                    write_mean_ns: self.hw.writes.mean_ns(),
                }),
                _ => Answer::Time(self.hw.env.time_ps()),
            })),
            Some(lane) => self.queued.push_back(Queued {
                lane,
                op: r.op,
                reply: r.reply,
            }),
        }
    }

    /// Starts the head of every idle lane, polls the jobs, and advances the model one edge
    /// instant while any job runs.
    fn turn(&mut self) {
        let now = self.hw.env.time_ps();
        let mut started = false;
        let mut i = 0;
        while i < self.queued.len() {
            let lane = self.queued[i].lane;
            let lane_busy = self.running.iter().any(|r| r.lane == lane)
                || self.queued.iter().take(i).any(|q| q.lane == lane);
            if lane_busy {
                i += 1;
                continue;
            }
            if let Some(q) = self.queued.remove(i) {
                match Job::start(&mut self.hw, q.op, now) {
                    Ok(job) => {
                        started = true;
                        self.running.push(Running {
                            lane,
                            job,
                            reply: q.reply,
                        });
                    }
                    Err(e) => q.reply.send(Err(e)),
                }
            }
        }
        // Jobs already running were polled after the last step; only new ones need it now.
        if started {
            self.poll();
        }
        if self.running.is_empty() {
            return;
        }
        if let Err(e) = self.hw.env.step() {
            // A protocol violation fails the transfers on that bus; the environment finished
            // the instant, so the others go on. Any other error (the RTL stopped) fails every
            // running transfer, and the poisoned model fails later ones in turn.
            if let Some(bus) = e.violation().map(|v| v.bus.clone()) {
                if self.running.iter().any(|r| r.job.bus() == bus) {
                    let mut e = Some(bfm(e));
                    let mut i = 0;
                    while i < self.running.len() {
                        if self.running[i].job.bus() == bus {
                            let r = self.running.swap_remove(i);
                            r.job.abort(&mut self.hw);
                            let err = e.take().unwrap_or_else(|| {
                                Error::Backend(format!(
                                    "simulated card: an earlier protocol violation on `{bus}` failed this transfer too"
                                ))
                            });
                            r.reply.send(Err(err));
                        } else {
                            i += 1;
                        }
                    }
                    self.poll();
                    return;
                }
            }
            let text = e.to_string();
            let mut first = Some(bfm(e));
            for r in self.running.drain(..) {
                r.job.abort(&mut self.hw);
                let err = first
                    .take()
                    .unwrap_or_else(|| Error::Backend(format!("simulated card: {text}")));
                r.reply.send(Err(err));
            }
            return;
        }
        self.poll();
    }

    fn poll(&mut self) {
        let now = self.hw.env.time_ps();
        let mut i = 0;
        while i < self.running.len() {
            match self.running[i].job.poll(&mut self.hw, now) {
                Some(answer) => {
                    let r = self.running.swap_remove(i);
                    r.reply.send(answer);
                }
                None => i += 1,
            }
        }
    }
}

/// A transfer's fixed phases around its data, in absolute simulated ps.
#[derive(Debug, Clone, Copy)]
struct Frame {
    start: u64,
    /// When the data phase may begin: after submission and the first descriptor block.
    data_at: u64,
    /// The completion phase's length: write-back and interrupt, then the host's completion.
    tail: u64,
}

impl Frame {
    fn new(t: &TimingModel, host: u64, card: u64, len: u64, now: u64) -> Frame {
        let p = t.fixed_phases(host, card, len);
        Frame {
            start: now,
            data_at: now + p.submit_ps + p.descriptor_ps,
            tail: p.completion_ps + p.host_complete_ps,
        }
    }
}

/// Where a transfer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Setup,
    Data,
    /// Done on the card; the call returns at this time.
    Tail(u64),
}

/// One H2C transfer's link schedule, read as simulated time passes.
#[derive(Debug)]
struct Link {
    arrivals: Vec<Arrival>,
    next: usize,
    arrived: u64,
}

impl Link {
    fn h2c(t: &TimingModel, host: u64, card: u64, len: u64) -> Link {
        Link {
            arrivals: t.h2c_arrivals(host, card, len),
            next: 0,
            arrived: 0,
        }
    }

    /// Bytes arrived by `now`, for a data phase that began at `data_at`.
    fn arrived(&mut self, data_at: u64, now: u64) -> u64 {
        while let Some(a) = self.arrivals.get(self.next) {
            if data_at + a.at_ps > now {
                break;
            }
            self.arrived = a.bytes;
            self.next += 1;
        }
        self.arrived
    }
}

/// The bursts of a transfer on AXI ID `id`, each with its offset in the transfer: the
/// driver's descriptors (one per host page) cut into the engine's bursts.
fn plan(engine: &EngineConfig, id: u32, host: u64, card: u64, len: u64) -> Vec<Piece> {
    engine::descriptors(host, card, len)
        .iter()
        .flat_map(|d| {
            let off0 = (d.card_addr - card) as usize;
            engine::bursts(engine, d.card_addr, d.len)
                .into_iter()
                .map(move |p| Piece {
                    burst: Burst { id, ..p.burst },
                    offset: off0 + p.offset,
                    bytes: p.bytes,
                })
        })
        .collect()
}

fn bus_failed(what: &str, addr: u64, resp: Resp) -> Error {
    Error::Bus(format!(
        "{what} at card address {addr:#x}: the card answered {resp:?} on s_axi; the transfer failed (look at the card's AXI slave in the waves, CARD_WAVES=1)"
    ))
}

/// Memory-mapped H2C.
struct MmWrite {
    frame: Frame,
    phase: Phase,
    data: Vec<u8>,
    bursts: Vec<Piece>,
    next: usize,
    link: Link,
    window: usize,
    /// Bursts in flight: handle, address, issue time, beats.
    in_flight: VecDeque<(TxnId, u64, u64, u32)>,
    failed: Option<Error>,
}

/// Memory-mapped C2H.
struct MmRead {
    frame: Frame,
    phase: Phase,
    host: u64,
    buf: Vec<u8>,
    bursts: Vec<Piece>,
    next: usize,
    window: usize,
    /// Slots taken: (burst index, when its AXI read goes out or went out, its handle once
    /// issued).
    slots: VecDeque<(usize, u64, Option<TxnId>)>,
    /// When the upstream link is free again.
    link_free: u64,
    failed: Option<Error>,
}

/// Stream H2C.
struct Send {
    port: usize,
    frame: Frame,
    phase: Phase,
    data: Option<Vec<u8>>,
    len: usize,
    link: Link,
}

/// Stream C2H.
struct Recv {
    port: usize,
    frame: Frame,
    phase: Phase,
    host: u64,
    len: usize,
    deadline: u64,
    timeout: Duration,
    got: Option<(Vec<u8>, bool)>,
}

/// A register access: the request crosses the link, the card answers, a read's completion
/// crosses back.
struct Reg {
    write: Option<u32>,
    off: u64,
    issue_at: u64,
    txn: Option<TxnId>,
    answer_at: Option<(u64, u32)>,
}

/// A wait for a user interrupt, bounded in simulated time.
struct Wait {
    event: usize,
    deadline: u64,
    timeout: Duration,
}

enum Job {
    Reg(Reg),
    Wait(Wait),
    Write(MmWrite),
    Read(MmRead),
    Send(Send),
    Recv(Recv),
}

fn ps(d: Duration) -> u64 {
    u64::try_from(d.as_nanos().saturating_mul(1000)).unwrap_or(u64::MAX)
}

impl Job {
    fn start(hw: &mut Hw, op: Op, now: u64) -> Result<Job> {
        let one_way = hw.timing.one_way_ps();
        let t = &hw.timing;
        Ok(match op {
            Op::ReadReg(off) => Job::Reg(Reg {
                write: None,
                off,
                issue_at: now + one_way,
                txn: None,
                answer_at: None,
            }),
            Op::WriteReg(off, v) => Job::Reg(Reg {
                write: Some(v),
                off,
                issue_at: now + one_way,
                txn: None,
                answer_at: None,
            }),
            Op::WaitEvent(event, timeout) => Job::Wait(Wait {
                event,
                deadline: now.saturating_add(ps(timeout)),
                timeout,
            }),
            Op::WriteMm {
                ch,
                addr,
                host,
                data,
            } => {
                let len = data.len() as u64;
                Job::Write(MmWrite {
                    frame: Frame::new(t, host, addr, len, now),
                    phase: Phase::Setup,
                    bursts: plan(&hw.engine, ch as u32, host, addr, len),
                    next: 0,
                    link: Link::h2c(t, host, addr, len),
                    window: hw.engine.h2c.max_outstanding_writes as usize,
                    in_flight: VecDeque::new(),
                    data,
                    failed: None,
                })
            }
            Op::ReadMm {
                ch,
                addr,
                host,
                len,
            } => Job::Read(MmRead {
                frame: Frame::new(t, host, addr, len as u64, now),
                phase: Phase::Setup,
                host,
                buf: vec![0; len],
                bursts: plan(&hw.engine, ch as u32, host, addr, len as u64),
                next: 0,
                window: hw.engine.c2h.max_outstanding_reads as usize,
                slots: VecDeque::new(),
                link_free: 0,
                failed: None,
            }),
            Op::Send { ch, host, data } => {
                let port = stream_port(&hw.h2c_port, Direction::H2C, ch)?;
                let len = data.len();
                Job::Send(Send {
                    port,
                    frame: Frame::new(t, host, 0, len as u64, now),
                    phase: Phase::Setup,
                    data: Some(data),
                    len,
                    link: Link::h2c(t, host, 0, len as u64),
                })
            }
            Op::Recv {
                ch,
                host,
                len,
                timeout,
            } => {
                let port = stream_port(&hw.c2h_port, Direction::C2H, ch)?;
                Job::Recv(Recv {
                    port,
                    frame: Frame::new(t, host, 0, len as u64, now),
                    phase: Phase::Setup,
                    host,
                    len,
                    deadline: now.saturating_add(ps(timeout)),
                    timeout,
                    got: None,
                })
            }
            Op::Now | Op::Latency => {
                return Err(Error::Backend(
                    "a query is answered at once, not run as a job".into(),
                ))
            }
        })
    }

    /// The bus a job drives, as its protocol monitor names it.
    fn bus(&self) -> &'static str {
        match self {
            Job::Reg(_) => "s_axil",
            Job::Wait(_) => "usr_irq",
            Job::Write(_) | Job::Read(_) => "s_axi",
            Job::Send(s) => H2C_STREAMS[s.port],
            Job::Recv(r) => C2H_STREAMS[r.port],
        }
    }

    /// Puts the buses back in a quiet state after a failure. A frame already handed to a
    /// stream source stays queued and leaves when the card takes it, as data already given to
    /// the IP would.
    fn abort(self, hw: &mut Hw) {
        match self {
            Job::Recv(r) => hw.c2h_streams[r.port].set_enabled(false),
            Job::Send(s) => hw.h2c_streams[s.port].set_credit(None),
            _ => {}
        }
    }

    /// Moves the job on at time `now`; its answer once it is finished.
    fn poll(&mut self, hw: &mut Hw, now: u64) -> Option<Result<Answer>> {
        match self {
            Job::Reg(r) => r.poll(hw, now),
            Job::Wait(w) => w.poll(hw, now),
            Job::Write(w) => run_phases(w, hw, now),
            Job::Read(r) => run_phases(r, hw, now),
            Job::Send(s) => run_phases(s, hw, now),
            Job::Recv(r) => run_phases(r, hw, now),
        }
    }
}

fn stream_port(map: &[Option<usize>], dir: Direction, ch: usize) -> Result<usize> {
    map.get(ch).copied().flatten().ok_or_else(|| {
        Error::Backend(format!(
            "{dir} channel {ch} has no stream port on the simulated card"
        ))
    })
}

/// What differs between the kinds of transfer; [`run_phases`] runs the phases they share.
trait Phased {
    /// The transfer's fixed phases and where it is.
    fn frame(&mut self) -> (&Frame, &mut Phase);
    /// Called once, entering the data phase.
    fn begin(&mut self, _hw: &mut Hw) -> Result<()> {
        Ok(())
    }
    /// One step of the data phase at `now`: the time the data is done once it is, or an
    /// error that ends the call at once.
    fn data(&mut self, hw: &mut Hw, now: u64) -> Option<Result<u64>>;
    /// The call's answer, at the transfer's end time `end`.
    fn answer(&mut self, end: u64) -> Result<Answer>;
}

/// Set-up, data, completion: the data phase starts once set-up time has passed, and the call
/// returns the completion phase's length after the data is done.
fn run_phases(j: &mut impl Phased, hw: &mut Hw, now: u64) -> Option<Result<Answer>> {
    let (frame, phase) = j.frame();
    match *phase {
        Phase::Setup if now >= frame.data_at => {
            *phase = Phase::Data;
            if let Err(e) = j.begin(hw) {
                return Some(Err(e));
            }
        }
        Phase::Tail(end) => return (now >= end).then(|| j.answer(end)),
        _ => {}
    }
    let (_, phase) = j.frame();
    if *phase != Phase::Data {
        return None;
    }
    match j.data(hw, now)? {
        Ok(data_end) => {
            let (frame, phase) = j.frame();
            *phase = Phase::Tail(data_end + frame.tail);
            None
        }
        Err(e) => Some(Err(e)),
    }
}

fn moved(frame: &Frame, end: u64, bytes: usize, eop: bool, data: Vec<u8>) -> Answer {
    Answer::Moved(
        Transfer {
            bytes,
            end_of_packet: eop,
            start_ps: frame.start,
            end_ps: end,
        },
        data,
    )
}

impl Reg {
    fn poll(&mut self, hw: &mut Hw, now: u64) -> Option<Result<Answer>> {
        if let Some((at, v)) = self.answer_at {
            let answer = match self.write {
                Some(_) => Answer::Done,
                None => Answer::Word(v),
            };
            return (now >= at).then_some(Ok(answer));
        }
        match self.txn {
            None if now >= self.issue_at => {
                let t = match self.write {
                    Some(v) => hw.lite.start_write(self.off, u64::from(v), 0xf),
                    None => hw.lite.start_read(self.off),
                };
                match t {
                    Ok(t) => self.txn = Some(t),
                    Err(e) => return Some(Err(bfm(e))),
                }
                None
            }
            Some(t) if hw.lite.is_done(t) => {
                let (v, resp) = match hw.lite.take(t) {
                    Ok(x) => x,
                    Err(e) => return Some(Err(bfm(e))),
                };
                if !resp.is_ok() {
                    return Some(Err(Error::Bus(format!(
                        "register {} at {:#x}: the card answered {resp:?} on s_axil",
                        if self.write.is_some() {
                            "write"
                        } else {
                            "read"
                        },
                        self.off
                    ))));
                }
                // A posted write is done once the card has taken it; a read's completion
                // still crosses the link.
                let back = if self.write.is_some() {
                    0
                } else {
                    hw.timing.one_way_ps()
                };
                self.answer_at = Some((now + back, v as u32));
                None
            }
            _ => None,
        }
    }
}

impl Wait {
    fn poll(&mut self, hw: &mut Hw, now: u64) -> Option<Result<Answer>> {
        let n = hw.irq.borrow_mut().take(self.event, now);
        if n > 0 {
            return Some(Ok(Answer::Word(n)));
        }
        (now >= self.deadline).then(|| {
            Err(Error::Timeout {
                what: format!("user interrupt {} (simulated time)", self.event),
                after: self.timeout,
            })
        })
    }
}

impl Phased for MmWrite {
    fn frame(&mut self) -> (&Frame, &mut Phase) {
        (&self.frame, &mut self.phase)
    }

    fn answer(&mut self, end: u64) -> Result<Answer> {
        match self.failed.take() {
            Some(e) => Err(e),
            None => Ok(moved(&self.frame, end, self.data.len(), false, Vec::new())),
        }
    }

    fn data(&mut self, hw: &mut Hw, now: u64) -> Option<Result<u64>> {
        // Retire answered bursts (one ID per channel, so they answer in order).
        while let Some(&(t, addr, issued, beats)) = self.in_flight.front() {
            if !hw.axi.is_done(t) {
                break;
            }
            self.in_flight.pop_front();
            hw.measure(true, issued, now, beats);
            match hw.axi.take_write(t) {
                Ok(r) if r.is_ok() => {}
                Ok(r) => {
                    self.failed
                        .get_or_insert(bus_failed("memory-mapped H2C write", addr, r));
                }
                Err(e) => {
                    self.failed.get_or_insert(bfm(e));
                }
            }
        }
        let arrived = self.link.arrived(self.frame.data_at, now);
        while self.next < self.bursts.len() && self.in_flight.len() < self.window {
            let p = self.bursts[self.next];
            let (off, b) = (p.offset, p.burst);
            let end = (off + p.bytes) as u64;
            if end > arrived {
                break;
            }
            let slice = &self.data[off..off + p.bytes];
            match hw.axi.start_write_burst(b, slice) {
                Ok(t) => self.in_flight.push_back((t, b.addr, now, b.beats())),
                Err(e) => {
                    self.failed.get_or_insert(bfm(e));
                }
            }
            self.next += 1;
        }
        (self.next == self.bursts.len() && self.in_flight.is_empty()).then_some(Ok(now))
    }
}

impl Phased for MmRead {
    fn frame(&mut self) -> (&Frame, &mut Phase) {
        (&self.frame, &mut self.phase)
    }

    fn answer(&mut self, end: u64) -> Result<Answer> {
        match self.failed.take() {
            Some(e) => Err(e),
            None => {
                let buf = std::mem::take(&mut self.buf);
                Ok(moved(&self.frame, end, buf.len(), false, buf))
            }
        }
    }

    fn data(&mut self, hw: &mut Hw, now: u64) -> Option<Result<u64>> {
        // Take free slots: a read goes to the card after the engine's own part of the round
        // trip; the card's part is whatever the RTL takes.
        let lat = hw.timing.c2h_engine_latency_ps();
        while self.next < self.bursts.len() && self.slots.len() < self.window {
            self.slots.push_back((self.next, now + lat, None));
            self.next += 1;
        }
        for slot in self.slots.iter_mut() {
            if slot.2.is_none() && now >= slot.1 {
                let b = self.bursts[slot.0].burst;
                match hw.axi.start_read_burst(b) {
                    Ok(t) => {
                        slot.1 = now;
                        slot.2 = Some(t);
                    }
                    Err(e) => {
                        self.failed.get_or_insert(bfm(e));
                        // Count the burst as done so that the transfer still ends.
                        slot.1 = u64::MAX;
                    }
                }
            }
        }
        // Retire bursts whose data is in; each leaves for the host as memory writes queued on
        // the upstream link.
        let mut i = 0;
        while i < self.slots.len() {
            let (idx, at, t) = self.slots[i];
            let done = match t {
                Some(t) => hw.axi.is_done(t),
                None => at == u64::MAX,
            };
            if !done {
                i += 1;
                continue;
            }
            self.slots.remove(i);
            let p = self.bursts[idx];
            let (b, off) = (p.burst, p.offset);
            if let Some(t) = t {
                hw.measure(false, at, now, b.beats());
                match hw.axi.take_read(t) {
                    Ok((data, r)) if r.is_ok() => {
                        let n = p.bytes;
                        if let (Some(src), Some(dst)) =
                            (data.get(..n), self.buf.get_mut(off..off + n))
                        {
                            dst.copy_from_slice(src);
                        }
                    }
                    Ok((_, r)) => {
                        self.failed
                            .get_or_insert(bus_failed("memory-mapped C2H read", b.addr, r));
                    }
                    Err(e) => {
                        self.failed.get_or_insert(bfm(e));
                    }
                }
            }
            self.link_free = self.link_free.max(now)
                + hw.timing
                    .c2h_writes_ps(self.host + off as u64, p.bytes as u64);
        }
        // Once every burst is in, the last write still crosses the link.
        (self.next == self.bursts.len() && self.slots.is_empty())
            .then(|| Ok(self.link_free.max(now) + hw.timing.one_way_ps()))
    }
}

impl Phased for Send {
    fn frame(&mut self) -> (&Frame, &mut Phase) {
        (&self.frame, &mut self.phase)
    }

    fn begin(&mut self, hw: &mut Hw) -> Result<()> {
        let src = &hw.h2c_streams[self.port];
        src.set_credit(Some(0));
        if let Some(d) = self.data.take() {
            if let Err(e) = src.start_send(AxisFrame::new(d)) {
                src.set_credit(None);
                return Err(bfm(e));
            }
        }
        Ok(())
    }

    fn data(&mut self, hw: &mut Hw, now: u64) -> Option<Result<u64>> {
        let src = &hw.h2c_streams[self.port];
        let arrived = self.link.arrived(self.frame.data_at, now);
        src.set_credit(Some(arrived as usize));
        let idle = src.idle();
        if idle {
            src.set_credit(None);
        }
        idle.then_some(Ok(now))
    }

    fn answer(&mut self, end: u64) -> Result<Answer> {
        Ok(moved(&self.frame, end, self.len, true, Vec::new()))
    }
}

impl Phased for Recv {
    fn frame(&mut self) -> (&Frame, &mut Phase) {
        (&self.frame, &mut self.phase)
    }

    fn begin(&mut self, hw: &mut Hw) -> Result<()> {
        hw.c2h_streams[self.port].set_enabled(true);
        Ok(())
    }

    fn answer(&mut self, end: u64) -> Result<Answer> {
        let (data, eop) = self.got.take().unwrap_or_default();
        Ok(moved(&self.frame, end, data.len(), eop, data))
    }

    fn data(&mut self, hw: &mut Hw, now: u64) -> Option<Result<u64>> {
        let sink = &hw.c2h_streams[self.port];
        let left = &mut hw.leftovers[self.port];
        let frame = match left.pop_front() {
            Some(f) => Some(f),
            None => sink.try_recv().map(|f| f.data),
        };
        let Some(mut data) = frame else {
            if now >= self.deadline {
                sink.set_enabled(false);
                return Some(Err(Error::Timeout {
                    what: "a C2H stream packet (simulated time)".into(),
                    after: self.timeout,
                }));
            }
            return None;
        };
        // The engine has its packet (or its buffer is full): no more data is taken.
        sink.set_enabled(false);
        let eop = data.len() <= self.len;
        if !eop {
            let rest = data.split_off(self.len);
            left.push_front(rest);
        }
        // The data went out over the upstream link as it came off the bus; where the link is
        // slower than the bus, its last write leaves later than the last beat came in.
        let n = data.len() as u64;
        let link = hw.timing.c2h_writes_ps(self.host, n);
        let bus = hw.timing.axi_bus_ps(n);
        let end = now.max((now + link).saturating_sub(bus)) + hw.timing.one_way_ps();
        self.got = Some((data, eop));
        Some(Ok(end))
    }
}
