//! The simulated card: the verilated `sim_top` (card_core with the DDR3 model) owned by a
//! thread of its own, driven through axi-bfm bus models the way the XDMA IP drives the card.
//!
//! Requests reach the thread over a channel and answers come back over a per-request channel
//! (a std channel for blocking calls, a tokio oneshot for async ones), so both APIs work and the
//! model, which Verilator ties to one thread, never leaves it. Arguments are checked on the
//! caller's side with the same rules as the driver backend.
//!
//! On the thread ([`card`]), each channel's engine runs its transfers concurrently with the
//! others in simulated time: memory-mapped channels on `s_axi` (one AXI ID per channel, bursts
//! from [`crate::engine`], the channel's outstanding limits), stream channels on
//! `s_axis_h2c0` and `m_axis_c2h0/1`, registers on `s_axil`, user interrupts on `usr_irq_*`
//! acknowledged as the IP does. The link and the host driver are timed by
//! [`crate::timing::TimingModel`]; the card's own latencies come from the RTL. Every bus has
//! its protocol monitor on.
//!
//! Timeouts of event waits and stream receives count simulated time, the card's clock; the
//! configuration's `reply_timeout_s` bounds every call in wall-clock time as well.

mod card;
pub mod engine;
mod irq;
pub mod timing;

use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use xdma_core::{
    check, AsyncCard, BackendKind, BufResult, Card, CardAddr, CardInfo, ChannelInfo, ChannelKind,
    Config, Direction, DmaBuffer, Error, ErrorKind, Result, Transfer,
};

use crate::engine::{EngineConfig, HOST_PAGE};
use crate::timing::{TimingConfig, TimingModel};

pub use card::LatencyStats;
use card::{Answer, CardThread, Found, Op, Reply, Request};

/// Settings of the simulated card: the `[sim]` section of the configuration.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimConfig {
    /// The RTL top that is the card, by module name. Default `sim_top` (card_core with the
    /// DDR3 model). A name this build does not have is a missing device.
    pub top: String,
    /// The H2C channels of the simulated card, by index. Default: 0 memory-mapped (the card's
    /// `s_axi` write side), 1 stream (`s_axis_h2c0`).
    pub h2c: Vec<ChannelKind>,
    /// The C2H channels. Default: 0 memory-mapped (`s_axi` read side), 1 and 2 streams
    /// (`m_axis_c2h0`, `m_axis_c2h1`).
    pub c2h: Vec<ChannelKind>,
    /// User interrupt lines (`usr_irq_req` bits). Default 1.
    pub events: usize,
    /// The XDMA engine model's shape and limits.
    pub engine: EngineConfig,
    /// The link and driver timing model.
    pub timing: TimingConfig,
    /// How long, in microseconds of simulated time, the card may hold an H2C stream beat
    /// waiting (TREADY low) before the send fails with a timeout. Default 1000: far longer than
    /// any healthy stall, yet short enough to simulate in seconds.
    pub stream_stall_limit_us: u64,
    /// Wall-clock bound on any one request to the simulation thread, in seconds; a request
    /// that takes longer fails with a timeout rather than hang. Default 600.
    pub reply_timeout_s: u64,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            top: "sim_top".into(),
            h2c: vec![ChannelKind::MemoryMapped, ChannelKind::Stream],
            c2h: vec![
                ChannelKind::MemoryMapped,
                ChannelKind::Stream,
                ChannelKind::Stream,
            ],
            events: 1,
            engine: EngineConfig::default(),
            timing: TimingConfig::default(),
            stream_stall_limit_us: 1000,
            reply_timeout_s: 600,
        }
    }
}

impl SimConfig {
    /// The `[sim]` section of `cfg`.
    pub fn from_config(cfg: &Config) -> Result<SimConfig> {
        cfg.section(BackendKind::Sim)
    }

    /// The wall-clock bound on one request.
    pub fn reply_timeout(&self) -> Duration {
        Duration::from_secs(self.reply_timeout_s)
    }

    /// A whole configuration for the simulated card with these settings.
    pub fn into_config(self) -> Result<Config> {
        let mut cfg = Config::default();
        cfg.set_section(BackendKind::Sim, &self)?;
        Ok(cfg)
    }
}

/// A simulator failure as the API's error.
pub(crate) fn sim(e: card_sim::SimError) -> Error {
    let kind = match e {
        card_sim::SimError::Timeout { .. } => ErrorKind::Timeout,
        _ => ErrorKind::Backend,
    };
    Error::Source {
        kind,
        context: "simulated card",
        source: Box::new(e),
    }
}

/// A bus-model or protocol-monitor failure as the API's error.
pub(crate) fn bfm(e: axi_bfm::BfmError) -> Error {
    let e = match e {
        axi_bfm::BfmError::Sim(inner) => return sim(inner),
        other => other,
    };
    let kind = match &e {
        axi_bfm::BfmError::Timeout { .. } => ErrorKind::Timeout,
        // A stall past the monitor's bound is the simulated card's timeout.
        axi_bfm::BfmError::Violation(v) if v.rule == axi_bfm::Rule::StallBound => {
            ErrorKind::Timeout
        }
        _ => ErrorKind::Backend,
    };
    Error::Source {
        kind,
        context: "simulated card",
        source: Box::new(e),
    }
}

#[derive(Debug)]
struct Inner {
    tx: mpsc::Sender<Request>,
    info: CardInfo,
    timing: TimingModel,
    reply_timeout: Duration,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Closing the request channel ends the thread's loop once its running requests are
        // answered (each is bounded by its own limits). The thread is joined so that the model
        // is gone before the caller goes on: a model still being torn down while the process
        // exits would race the Verilator runtime's own teardown.
        let (closed, _) = mpsc::channel();
        drop(std::mem::replace(&mut self.tx, closed));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The simulated card. Cloning gives another handle to the same card and thread.
#[derive(Debug, Clone)]
pub struct SimCard {
    inner: Arc<Inner>,
}

/// One data call before it is checked: which call, on which channel, with what buffer.
struct DataCall<'a> {
    op: &'static str,
    dir: Direction,
    kind: ChannelKind,
    channel: usize,
    addr: CardAddr,
    buf: &'a [u8],
    /// True when the call sends the buffer's contents to the card.
    sends: bool,
    timeout: Duration,
}

impl SimCard {
    /// Builds the model on a new thread, resets it and runs discovery.
    pub fn open(cfg: &Config) -> Result<SimCard> {
        SimCard::open_with(&SimConfig::from_config(cfg)?)
    }

    /// Builds the card from its settings.
    pub fn open_with(cfg: &SimConfig) -> Result<SimCard> {
        let timing = TimingModel::new(cfg.timing, cfg.engine)?;
        let (tx, rx) = mpsc::channel::<Request>();
        let (ready_tx, ready_rx) = mpsc::sync_channel::<Result<Found>>(1);
        let name = format!(
            "xdma-sim-{}",
            std::thread::current().name().unwrap_or("card")
        );
        let (top, h2c, c2h) = (cfg.top.clone(), cfg.h2c.clone(), cfg.c2h.clone());
        let stall_limit = Duration::from_micros(cfg.stream_stall_limit_us);
        let thread_timing = timing.clone();
        let thread = std::thread::Builder::new()
            .name(name.clone())
            .spawn(move || {
                match CardThread::start(&top, &name, thread_timing, &h2c, &c2h, stall_limit) {
                    Ok((card, found)) => {
                        if ready_tx.send(Ok(found)).is_ok() {
                            card.run(rx);
                        }
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                    }
                }
            })
            .map_err(|e| Error::Backend(format!("cannot start the simulation thread: {e}")))?;
        let found = ready_rx.recv_timeout(cfg.reply_timeout()).map_err(|_| {
            Error::Backend("the simulation thread stopped while building the model".into())
        })??;
        if cfg.events > found.irq_lines {
            return Err(Error::Config(format!(
                "sim.events = {}: the card has {} user interrupt line(s) (usr_irq_req)",
                cfg.events, found.irq_lines
            )));
        }
        let chan = |dir: Direction, target: u32, kinds: &[ChannelKind]| -> Vec<ChannelInfo> {
            kinds
                .iter()
                .enumerate()
                .map(|(index, &kind)| ChannelInfo {
                    dir,
                    index,
                    kind,
                    // The IP's identifier layout (subsystem 0x1fc, target, stream bit, channel);
                    // version 0, since this is a model rather than an IP release.
                    id_register: (0x1fc << 20)
                        | (target << 16)
                        | if kind == ChannelKind::Stream {
                            1 << 15
                        } else {
                            0
                        }
                        | ((index as u32 & 0xf) << 8),
                })
                .collect()
        };
        let info = CardInfo {
            backend: "sim".into(),
            h2c: chan(Direction::H2C, 0, &cfg.h2c),
            c2h: chan(Direction::C2H, 1, &cfg.c2h),
            memory_size: found.memory_size,
            user_bar_size: found.bar_size,
            events: cfg.events,
            card_id: found.card_id,
            card_version: found.card_version,
            xdma_version: None,
            alignment: cfg.engine.alignment,
        };
        Ok(SimCard {
            inner: Arc::new(Inner {
                tx,
                info,
                timing,
                reply_timeout: cfg.reply_timeout(),
                thread: Some(thread),
            }),
        })
    }

    /// The link and driver timing model that data transfers use.
    pub fn timing(&self) -> &TimingModel {
        &self.inner.timing
    }

    /// The card-side AXI latencies measured on the RTL's `s_axi` by the transfers so far: the
    /// part of each transfer's time that comes from the card rather than the timing model.
    pub fn card_latency(&self) -> Result<LatencyStats> {
        match self.call(Op::Latency)? {
            Answer::Latency(l) => Ok(l),
            other => Err(Error::Backend(format!(
                "simulation thread answered {other:?} to a latency query"
            ))),
        }
    }

    fn send(&self, op: Op, reply: Reply) -> Result<()> {
        self.inner
            .tx
            .send(Request { op, reply })
            .map_err(|_| gone())
    }

    fn call(&self, op: Op) -> Result<Answer> {
        let (s, r) = mpsc::sync_channel(1);
        self.send(op, Reply::Blocking(s))?;
        match r.recv_timeout(self.inner.reply_timeout) {
            Ok(a) => a,
            Err(mpsc::RecvTimeoutError::Timeout) => Err(self.no_answer()),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(gone()),
        }
    }

    async fn call_async(&self, op: Op) -> Result<Answer> {
        let (s, r) = tokio::sync::oneshot::channel();
        self.send(op, Reply::Async(s))?;
        match tokio::time::timeout(self.inner.reply_timeout, r).await {
            Ok(Ok(a)) => a,
            Ok(Err(_)) => Err(gone()),
            Err(_) => Err(self.no_answer()),
        }
    }

    fn no_answer(&self) -> Error {
        Error::Timeout {
            what: "the simulation thread's answer (wall clock; raise sim.reply_timeout_s for very long simulated transfers)".into(),
            after: self.inner.reply_timeout,
        }
    }

    /// Checks a data call as every backend does and turns it into the thread's request.
    fn data_op(&self, c: DataCall<'_>) -> Result<Op> {
        let info = &self.inner.info;
        let ptr = c.buf.as_ptr() as usize;
        match c.kind {
            ChannelKind::MemoryMapped => {
                check::mm(info, c.op, c.dir, c.channel, c.addr, ptr, c.buf.len())?
            }
            ChannelKind::Stream => check::stream(info, c.op, c.dir, c.channel, ptr, c.buf.len())?,
        }
        // Only the buffer's place within its page matters to the engine: it decides how the
        // driver's scatter list cuts the transfer into descriptors.
        let host = ptr as u64 % HOST_PAGE;
        let (ch, addr, len) = (c.channel, c.addr.raw(), c.buf.len());
        Ok(match (c.kind, c.sends) {
            (ChannelKind::MemoryMapped, true) => Op::WriteMm {
                ch,
                addr,
                host,
                data: c.buf.to_vec(),
            },
            (ChannelKind::MemoryMapped, false) => Op::ReadMm {
                ch,
                addr,
                host,
                len,
            },
            (ChannelKind::Stream, true) => Op::Send {
                ch,
                host,
                data: c.buf.to_vec(),
            },
            (ChannelKind::Stream, false) => Op::Recv {
                ch,
                host,
                len,
                timeout: c.timeout,
            },
        })
    }

    fn mm(dir: Direction, channel: usize, addr: CardAddr, buf: &[u8]) -> DataCall<'_> {
        DataCall {
            op: match dir {
                Direction::H2C => "memory-mapped H2C write",
                Direction::C2H => "memory-mapped C2H read",
            },
            dir,
            kind: ChannelKind::MemoryMapped,
            channel,
            addr,
            buf,
            sends: dir == Direction::H2C,
            timeout: Duration::ZERO,
        }
    }

    fn stream(dir: Direction, channel: usize, buf: &[u8], timeout: Duration) -> DataCall<'_> {
        DataCall {
            op: match dir {
                Direction::H2C => "stream H2C send",
                Direction::C2H => "stream C2H receive",
            },
            dir,
            kind: ChannelKind::Stream,
            channel,
            addr: CardAddr(0),
            buf,
            sends: dir == Direction::H2C,
            timeout,
        }
    }

    /// Runs a data call, blocking.
    fn data(&self, c: DataCall<'_>, into: Option<&mut [u8]>) -> Result<Transfer> {
        let op = self.data_op(c)?;
        landed(self.call(op)?, into)
    }

    /// Runs a data call on a buffer it hands back, async.
    async fn data_async(
        &self,
        make: impl FnOnce(&DmaBuffer) -> DataCall<'_>,
        mut buf: DmaBuffer,
        fill: bool,
    ) -> BufResult<Transfer> {
        let op = self.data_op(make(&buf));
        let r = match op {
            Ok(op) => match self.call_async(op).await {
                Ok(a) => landed(a, fill.then_some(&mut buf[..])),
                Err(e) => Err(e),
            },
            Err(e) => Err(e),
        };
        (r, buf)
    }
}

fn gone() -> Error {
    Error::Backend("the simulation thread has stopped (an earlier RTL error or panic ended it); open a new card".into())
}

/// A data call's answer: the transfer, with received bytes copied into `into`.
fn landed(a: Answer, into: Option<&mut [u8]>) -> Result<Transfer> {
    match a {
        Answer::Moved(t, data) => {
            if let Some(buf) = into {
                let n = data.len().min(buf.len());
                buf[..n].copy_from_slice(&data[..n]);
            }
            Ok(t)
        }
        other => Err(Error::Backend(format!(
            "simulation thread answered {other:?} to a transfer"
        ))),
    }
}

fn word(a: Answer) -> Result<u32> {
    match a {
        Answer::Word(w) => Ok(w),
        other => Err(Error::Backend(format!(
            "simulation thread answered {other:?} to a register read or event wait"
        ))),
    }
}

fn done(a: Answer) -> Result<()> {
    match a {
        Answer::Done => Ok(()),
        other => Err(Error::Backend(format!(
            "simulation thread answered {other:?} where nothing was expected"
        ))),
    }
}

impl Card for SimCard {
    fn info(&self) -> &CardInfo {
        &self.inner.info
    }

    fn write_mm(&self, channel: usize, addr: CardAddr, data: &[u8]) -> Result<Transfer> {
        self.data(Self::mm(Direction::H2C, channel, addr, data), None)
    }

    fn read_mm(&self, channel: usize, addr: CardAddr, buf: &mut [u8]) -> Result<Transfer> {
        let op = self.data_op(Self::mm(Direction::C2H, channel, addr, buf))?;
        landed(self.call(op)?, Some(buf))
    }

    fn send_stream(&self, channel: usize, frame: &[u8]) -> Result<Transfer> {
        self.data(
            Self::stream(Direction::H2C, channel, frame, Duration::ZERO),
            None,
        )
    }

    fn recv_stream(&self, channel: usize, buf: &mut [u8], timeout: Duration) -> Result<Transfer> {
        let op = self.data_op(Self::stream(Direction::C2H, channel, buf, timeout))?;
        landed(self.call(op)?, Some(buf))
    }

    fn read_reg(&self, offset: u64) -> Result<u32> {
        check::reg(&self.inner.info, offset)?;
        word(self.call(Op::ReadReg(offset))?)
    }

    fn write_reg(&self, offset: u64, value: u32) -> Result<()> {
        check::reg(&self.inner.info, offset)?;
        done(self.call(Op::WriteReg(offset, value))?)
    }

    fn wait_event(&self, event: usize, timeout: Duration) -> Result<u32> {
        check::event(&self.inner.info, event)?;
        word(self.call(Op::WaitEvent(event, timeout))?)
    }

    fn now_ps(&self) -> Result<u64> {
        match self.call(Op::Now)? {
            Answer::Time(t) => Ok(t),
            other => Err(Error::Backend(format!(
                "simulation thread answered {other:?} to a time query"
            ))),
        }
    }
}

impl AsyncCard for SimCard {
    async fn write_mm_async(
        &self,
        channel: usize,
        addr: CardAddr,
        data: DmaBuffer,
    ) -> BufResult<Transfer> {
        self.data_async(|b| Self::mm(Direction::H2C, channel, addr, b), data, false)
            .await
    }

    async fn read_mm_async(
        &self,
        channel: usize,
        addr: CardAddr,
        buf: DmaBuffer,
    ) -> BufResult<Transfer> {
        self.data_async(|b| Self::mm(Direction::C2H, channel, addr, b), buf, true)
            .await
    }

    async fn send_stream_async(&self, channel: usize, frame: DmaBuffer) -> BufResult<Transfer> {
        self.data_async(
            |b| Self::stream(Direction::H2C, channel, b, Duration::ZERO),
            frame,
            false,
        )
        .await
    }

    async fn recv_stream_async(
        &self,
        channel: usize,
        buf: DmaBuffer,
        timeout: Duration,
    ) -> BufResult<Transfer> {
        self.data_async(
            |b| Self::stream(Direction::C2H, channel, b, timeout),
            buf,
            true,
        )
        .await
    }

    async fn read_reg_async(&self, offset: u64) -> Result<u32> {
        check::reg(&self.inner.info, offset)?;
        word(self.call_async(Op::ReadReg(offset)).await?)
    }

    async fn write_reg_async(&self, offset: u64, value: u32) -> Result<()> {
        check::reg(&self.inner.info, offset)?;
        done(self.call_async(Op::WriteReg(offset, value)).await?)
    }

    async fn wait_event_async(&self, event: usize, timeout: Duration) -> Result<u32> {
        check::event(&self.inner.info, event)?;
        word(self.call_async(Op::WaitEvent(event, timeout)).await?)
    }
}
