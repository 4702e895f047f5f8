//! The simulated card: a verilated card-sim model owned by a thread of its own.
//!
//! Requests reach the thread over a channel and answers come back over a per-request channel
//! (a std channel for blocking calls, a tokio oneshot for async ones), so both APIs work and the
//! model, which Verilator ties to one thread, never leaves it. Arguments are checked on the
//! caller's side with the same rules as the driver backend.
//!
//! What this build's RTL supports: register access over `card_core`'s AXI-Lite port (the user
//! BAR) with full valid/ready handshakes, discovery, and user interrupt waits (which time out,
//! since `card_core` has no interrupt source yet). Memory-mapped and stream data need the
//! `sim_top` top (card_core with `s_axi`, the stream ports and the DDR3 model), which this
//! build does not have: those calls return [`ErrorKind::Unsupported`](crate::ErrorKind) after
//! their arguments pass the checks. The engine model ([`crate::engine`]) and the timing model
//! ([`crate::timing`]) that will drive them are built and tested on their own.

mod axil;

use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use card_sim::{ClockId, Model, Top};

use crate::api::{
    AsyncCard, BufResult, Card, CardInfo, ChannelInfo, ChannelKind, Direction, Transfer,
};
use crate::check;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::timing::TimingModel;
use crate::{CardAddr, DmaBuffer};

pub use axil::LIMIT_CYCLES as AXIL_LIMIT_CYCLES;

/// The card's DMA-side clock: 250 MHz on the reference board (README).
const AXI_ACLK_HZ: u64 = 250_000_000;
/// Picoseconds per `axi_aclk` cycle.
const AXI_ACLK_PS: u64 = 1_000_000_000_000 / AXI_ACLK_HZ;
/// Cycles the reset is held at start, enough for every synchronous reset in the card.
const RESET_CYCLES: u64 = 4;

/// The card's identifier register.
const REG_CARD_ID: u64 = 0x000;
/// The card's version register.
const REG_CARD_VERSION: u64 = 0x004;

/// What the simulated card is missing for data transfers, named in the Unsupported errors.
const MISSING_DATA_PATH: &str = "this build's simulated card is `card_core` (registers only); memory-mapped and stream data need the `sim_top` top with the s_axi, s_axis_h2c0, m_axis_c2h0/1 ports and the DDR3 model, which is not in this build yet";

#[derive(Debug)]
enum Op {
    ReadReg(u64),
    WriteReg(u64, u32),
    WaitEvent(usize, Duration),
    WriteMm(usize, CardAddr, usize),
    ReadMm(usize, CardAddr, usize),
    Send(usize, usize),
    Recv(usize, usize, Duration),
    Now,
}

#[derive(Debug)]
enum Answer {
    Word(u32),
    Done,
    Time(u64),
}

#[derive(Debug)]
enum Reply {
    Blocking(mpsc::SyncSender<Result<Answer>>),
    Async(tokio::sync::oneshot::Sender<Result<Answer>>),
}

#[derive(Debug)]
struct Request {
    op: Op,
    reply: Reply,
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
        // Closing the request channel ends the thread's loop; joining is not needed for
        // correctness and could only wait on a request already bounded by its own limits.
        self.thread.take();
    }
}

/// The simulated card. Cloning gives another handle to the same card and thread.
#[derive(Debug, Clone)]
pub struct SimCard {
    inner: Arc<Inner>,
}

impl SimCard {
    /// Builds the model on a new thread, resets it and runs discovery.
    pub fn open(cfg: &Config) -> Result<SimCard> {
        cfg.validate()?;
        let timing = TimingModel::new(cfg.sim.timing, cfg.sim.engine)?;
        let (tx, rx) = mpsc::channel::<Request>();
        let (ready_tx, ready_rx) = mpsc::sync_channel::<Result<(u32, u32, u64)>>(1);
        let round_trip_ps = (cfg.sim.timing.link.round_trip_ns * 1000.0).round() as u64;
        let name = format!(
            "xdma-sim-{}",
            std::thread::current().name().unwrap_or("card")
        );
        let thread = std::thread::Builder::new()
            .name(name.clone())
            .spawn(move || {
                let card = CardThread::start(&name, round_trip_ps);
                let mut card = match card {
                    Ok((card, ident)) => {
                        if ready_tx.send(Ok(ident)).is_err() {
                            return;
                        }
                        card
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                while let Ok(req) = rx.recv() {
                    let answer = card.handle(req.op);
                    match req.reply {
                        Reply::Blocking(s) => {
                            let _ = s.send(answer);
                        }
                        Reply::Async(s) => {
                            let _ = s.send(answer);
                        }
                    }
                }
            })
            .map_err(|e| Error::Backend(format!("cannot start the simulation thread: {e}")))?;
        let (card_id, card_version, bar_size) = ready_rx
            .recv_timeout(cfg.sim.reply_timeout())
            .map_err(|_| {
            Error::Backend("the simulation thread stopped while building the model".into())
        })??;
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
            h2c: chan(Direction::H2C, 0, &cfg.sim.h2c),
            c2h: chan(Direction::C2H, 1, &cfg.sim.c2h),
            memory_size: cfg.memory_size,
            user_bar_size: bar_size,
            events: cfg.sim.events,
            card_id,
            card_version,
            xdma_version: None,
            alignment: cfg.sim.engine.alignment,
        };
        Ok(SimCard {
            inner: Arc::new(Inner {
                tx,
                info,
                timing,
                reply_timeout: cfg.sim.reply_timeout(),
                thread: Some(thread),
            }),
        })
    }

    /// The link and driver timing model that data transfers use.
    pub fn timing(&self) -> &TimingModel {
        &self.inner.timing
    }

    fn call(&self, op: Op) -> Result<Answer> {
        let (s, r) = mpsc::sync_channel(1);
        self.inner
            .tx
            .send(Request {
                op,
                reply: Reply::Blocking(s),
            })
            .map_err(|_| gone())?;
        match r.recv_timeout(self.inner.reply_timeout) {
            Ok(a) => a,
            Err(mpsc::RecvTimeoutError::Timeout) => Err(Error::Timeout {
                what: "the simulation thread's answer".into(),
                after: self.inner.reply_timeout,
            }),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(gone()),
        }
    }

    async fn call_async(&self, op: Op) -> Result<Answer> {
        let (s, r) = tokio::sync::oneshot::channel();
        self.inner
            .tx
            .send(Request {
                op,
                reply: Reply::Async(s),
            })
            .map_err(|_| gone())?;
        match tokio::time::timeout(self.inner.reply_timeout, r).await {
            Ok(Ok(a)) => a,
            Ok(Err(_)) => Err(gone()),
            Err(_) => Err(Error::Timeout {
                what: "the simulation thread's answer".into(),
                after: self.inner.reply_timeout,
            }),
        }
    }
}

fn gone() -> Error {
    Error::Backend("the simulation thread has stopped (an earlier RTL error or panic ended it); open a new card".into())
}

fn word(a: Answer) -> Result<u32> {
    match a {
        Answer::Word(w) => Ok(w),
        other => Err(Error::Backend(format!(
            "simulation thread answered {other:?} to a register read"
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

fn transfer(a: Answer) -> Result<Transfer> {
    Err(Error::Backend(format!(
        "simulation thread answered {a:?} to a transfer"
    )))
}

/// The state the simulation thread owns.
struct CardThread {
    m: Model,
    clk: ClockId,
    lite: axil::AxiLite,
    /// One-way link latency in cycles: a register request reaches the card this long after
    /// the host issues it, and a read's data takes as long to come back.
    one_way_cycles: u64,
}

impl CardThread {
    /// Builds and resets the model, then reads the identifiers: (card id, version, BAR size).
    fn start(name: &str, round_trip_ps: u64) -> Result<(CardThread, (u32, u32, u64))> {
        // The only card top in this build; `sim_top` replaces it once the RTL has it.
        let mut m = Model::builder(Top::CardCore).name(name).build()?;
        let clk = m.add_clock("axi_aclk", AXI_ACLK_HZ)?;
        let rstn = m.input("axi_aresetn")?;
        let lite = axil::AxiLite::attach(&mut m)?;
        m.set_bool(rstn, false);
        m.eval()?;
        m.ticks(clk, RESET_CYCLES)?;
        m.set_bool(rstn, true);
        m.eval()?;
        m.tick(clk)?;
        let mut card = CardThread {
            m,
            clk,
            lite,
            one_way_cycles: (round_trip_ps / 2).div_ceil(AXI_ACLK_PS),
        };
        let id = card.read_reg(REG_CARD_ID)?;
        let version = card.read_reg(REG_CARD_VERSION)?;
        let bar = card.lite.bar_size;
        Ok((card, (id, version, bar)))
    }

    fn handle(&mut self, op: Op) -> Result<Answer> {
        match op {
            Op::ReadReg(off) => self.read_reg(off).map(Answer::Word),
            Op::WriteReg(off, v) => self.write_reg(off, v).map(|()| Answer::Done),
            Op::WaitEvent(event, timeout) => self.wait_event(event, timeout).map(Answer::Word),
            Op::Now => Ok(Answer::Time(self.m.time_ps())),
            Op::WriteMm(ch, addr, len) => self.unsupported(format!(
                "memory-mapped H2C write of {len} bytes at {addr} on channel {ch}"
            )),
            Op::ReadMm(ch, addr, len) => self.unsupported(format!(
                "memory-mapped C2H read of {len} bytes at {addr} on channel {ch}"
            )),
            Op::Send(ch, len) => {
                self.unsupported(format!("stream H2C send of {len} bytes on channel {ch}"))
            }
            Op::Recv(ch, len, timeout) => self.unsupported(format!(
                "stream C2H receive of up to {len} bytes on channel {ch} (timeout {timeout:?})"
            )),
        }
    }

    /// The data paths need ports this top does not have; say so, naming the first missing one.
    fn unsupported(&self, what: String) -> Result<Answer> {
        let missing = ["s_axi_awvalid", "s_axis_h2c0_tvalid", "m_axis_c2h0_tvalid"]
            .into_iter()
            .find(|p| self.m.port(p).is_err())
            .unwrap_or("an engine driver for these ports");
        Err(Error::Unsupported {
            backend: "sim",
            what,
            why: format!(
                "{MISSING_DATA_PATH} (top `{}` has no `{missing}`)",
                self.m.top().name()
            ),
        })
    }

    fn read_reg(&mut self, off: u64) -> Result<u32> {
        // A non-posted read: the request crosses the link, the card answers, the completion
        // crosses back.
        self.m.ticks(self.clk, self.one_way_cycles)?;
        let v = self.lite.read(&mut self.m, self.clk, off)?;
        self.m.ticks(self.clk, self.one_way_cycles)?;
        Ok(v)
    }

    fn write_reg(&mut self, off: u64, v: u32) -> Result<()> {
        // A posted write takes effect at the card after one link crossing.
        self.m.ticks(self.clk, self.one_way_cycles)?;
        self.lite.write(&mut self.m, self.clk, off, v)
    }

    /// Waits in simulated time for user interrupt `event`, acknowledging it as the IP does: a
    /// one-cycle `usr_irq_ack` pulse on the request's bit once the interrupt is sent. A top
    /// without `usr_irq_req` has no interrupt source, so the wait runs out its time.
    fn wait_event(&mut self, event: usize, timeout: Duration) -> Result<u32> {
        let cycles =
            u64::try_from(timeout.as_nanos() * 1000 / u128::from(AXI_ACLK_PS)).unwrap_or(u64::MAX);
        let irq = match (self.m.port("usr_irq_req"), self.m.input("usr_irq_ack")) {
            (Ok(req), Ok(ack)) if (event as u32) < req.width() => Some((req, ack)),
            _ => None,
        };
        for _ in 0..cycles {
            if let Some((req, ack)) = irq {
                if (self.m.get(req) >> event) & 1 == 1 {
                    self.m.set(ack, 1 << event);
                    self.m.eval()?;
                    self.m.tick(self.clk)?;
                    self.m.set(ack, 0);
                    self.m.eval()?;
                    // The interrupt message reaches the host one link crossing later.
                    self.m.ticks(self.clk, self.one_way_cycles)?;
                    return Ok(1);
                }
            }
            self.m.tick(self.clk)?;
        }
        Err(Error::Timeout {
            what: format!("user interrupt {event} (simulated time)"),
            after: timeout,
        })
    }
}

impl Card for SimCard {
    fn info(&self) -> &CardInfo {
        &self.inner.info
    }

    fn write_mm(&self, channel: usize, addr: CardAddr, data: &[u8]) -> Result<Transfer> {
        let op = "memory-mapped H2C write";
        check::mm(
            &self.inner.info,
            op,
            Direction::H2C,
            channel,
            addr,
            data.as_ptr() as usize,
            data.len(),
        )?;
        transfer(self.call(Op::WriteMm(channel, addr, data.len()))?)
    }

    fn read_mm(&self, channel: usize, addr: CardAddr, buf: &mut [u8]) -> Result<Transfer> {
        let op = "memory-mapped C2H read";
        check::mm(
            &self.inner.info,
            op,
            Direction::C2H,
            channel,
            addr,
            buf.as_ptr() as usize,
            buf.len(),
        )?;
        transfer(self.call(Op::ReadMm(channel, addr, buf.len()))?)
    }

    fn send_stream(&self, channel: usize, frame: &[u8]) -> Result<Transfer> {
        let op = "stream H2C send";
        check::stream(
            &self.inner.info,
            op,
            Direction::H2C,
            channel,
            frame.as_ptr() as usize,
            frame.len(),
        )?;
        transfer(self.call(Op::Send(channel, frame.len()))?)
    }

    fn recv_stream(&self, channel: usize, buf: &mut [u8], timeout: Duration) -> Result<Transfer> {
        let op = "stream C2H receive";
        check::stream(
            &self.inner.info,
            op,
            Direction::C2H,
            channel,
            buf.as_ptr() as usize,
            buf.len(),
        )?;
        transfer(self.call(Op::Recv(channel, buf.len(), timeout))?)
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
        let op = "memory-mapped H2C write";
        let r = match check::mm(
            &self.inner.info,
            op,
            Direction::H2C,
            channel,
            addr,
            data.as_ptr() as usize,
            data.len(),
        ) {
            Ok(()) => self
                .call_async(Op::WriteMm(channel, addr, data.len()))
                .await
                .and_then(transfer),
            Err(e) => Err(e),
        };
        (r, data)
    }

    async fn read_mm_async(
        &self,
        channel: usize,
        addr: CardAddr,
        buf: DmaBuffer,
    ) -> BufResult<Transfer> {
        let op = "memory-mapped C2H read";
        let r = match check::mm(
            &self.inner.info,
            op,
            Direction::C2H,
            channel,
            addr,
            buf.as_ptr() as usize,
            buf.len(),
        ) {
            Ok(()) => self
                .call_async(Op::ReadMm(channel, addr, buf.len()))
                .await
                .and_then(transfer),
            Err(e) => Err(e),
        };
        (r, buf)
    }

    async fn send_stream_async(&self, channel: usize, frame: DmaBuffer) -> BufResult<Transfer> {
        let op = "stream H2C send";
        let r = match check::stream(
            &self.inner.info,
            op,
            Direction::H2C,
            channel,
            frame.as_ptr() as usize,
            frame.len(),
        ) {
            Ok(()) => self
                .call_async(Op::Send(channel, frame.len()))
                .await
                .and_then(transfer),
            Err(e) => Err(e),
        };
        (r, frame)
    }

    async fn recv_stream_async(
        &self,
        channel: usize,
        buf: DmaBuffer,
        timeout: Duration,
    ) -> BufResult<Transfer> {
        let op = "stream C2H receive";
        let r = match check::stream(
            &self.inner.info,
            op,
            Direction::C2H,
            channel,
            buf.as_ptr() as usize,
            buf.len(),
        ) {
            Ok(()) => self
                .call_async(Op::Recv(channel, buf.len(), timeout))
                .await
                .and_then(transfer),
            Err(e) => Err(e),
        };
        (r, buf)
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
