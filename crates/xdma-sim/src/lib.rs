//! xdma-sim: the simulated card behind the host DMA API. The verilated card (`sim_top`: card_core
//! with the DDR3 model), in the card harness on a thread of its own, with the XDMA IP, the PCIe
//! link, the host's root complex and the host driver modelled around it.
//!
//! Calls reach the thread over a channel and answers come back over a per-call channel (a std
//! channel for blocking calls, a tokio oneshot for async ones), so both APIs work and the model,
//! which Verilator ties to one thread, never leaves it. Arguments are checked on the caller's
//! side with the same rules as every backend (`xdma_core::check`).
//!
//! - Each call is the system call the driver backend would make on a board, made into the
//!   driver model (`xdma_driver`), which does what `xdma.ko` does for it: pins and cuts the
//!   buffer, writes the descriptor chain, programs the register-level XDMA IP (`xdma_ip`),
//!   takes its interrupt and services the engine. The IP drives the card's ports through the
//!   harness's bus models: memory-mapped channels on `s_axi` (one AXI ID per channel), stream
//!   channels on `s_axis_h2c<k>` and `m_axis_c2h<k>`, registers on `s_axil`, user interrupts
//!   on `usr_irq_*`; every bus has its protocol monitor on.
//! - The link and root complex are the IP's PCIe port, the driver's costs are spent by the
//!   driver model, both set by [`config::timing`]; the card's latencies are whatever the RTL does.
//!   `docs/timing-model.md` names every phase of a call.
//! - Simulated time is deterministic: each handle ([`SimCard`], one per host thread or task: a
//!   clone is a new one) has its own clock, and the card's clock advances only through the
//!   model (see the `thread` module's documentation).
//! - A call whose caller gives up (a wall-clock timeout, a dropped future) is cancelled: its
//!   transfer is aborted on the card as the driver aborts an engine, and the buses are left
//!   idle and legal. Dropping the last handle drains and stops the thread within a bound.
//!
//! Async calls are submitted when their future is created, not when it is first polled, as a
//! driver's queued I/O is: two futures made one after the other are queued together.

pub mod config;
mod control;
mod error;
mod job;
mod open;
mod thread;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use xdma_core::{
    check, AsyncCard, BufResult, Card, CardAddr, CardInfo, ChannelKind, Config, Direction,
    DmaBuffer, Error, LoopRate, ProgressReport, Result, Transfer,
};
use xdma_regmap::{Target, HOST_PAGE};

/// The names that select a card in `[sim] top`: a top of this build, or a deliberate fault of
/// `sim_top` turned on at run time.
pub use card_harness::{CardTop, Fault};
pub use config::ddr::{Arbitration, DataPath, DdrConfig};
pub use config::driver::DriverConfig;
pub use config::pauses::RandomPauses;
pub use config::{SimConfig, Variant, MAX_CHANNELS};
pub use control::Control;

use crate::error::bfm;
use crate::job::{Answer, Kind, Op};
use crate::open::{build, channels, Found};
use crate::thread::{ClientId, JobId, Lane, Msg, Reply};

/// Card-side latencies seen on `s_axi` so far, measured on the RTL.
pub use xdma_ip::LatencyStats;

/// How long dropping the card waits for the simulation thread to drain and stop.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(10);

/// How often a node's wait ([`SimCard::node_read_stream`], [`SimCard::node_wait_event`])
/// asks whether its caller still waits, in wall-clock time.
pub const NODE_POLL: Duration = Duration::from_millis(20);

#[derive(Debug)]
struct Inner {
    tx: Mutex<Option<mpsc::Sender<Msg>>>,
    info: CardInfo,
    reply_timeout: Duration,
    next_client: AtomicU64,
    next_job: AtomicU64,
    thread: Mutex<Option<JoinHandle<()>>>,
    stopped: Mutex<Option<mpsc::Receiver<()>>>,
}

impl Inner {
    fn send(&self, m: Msg) -> Result<()> {
        let guard = self.tx.lock().map_err(|_| gone())?;
        match guard.as_ref() {
            Some(tx) => tx.send(m).map_err(|_| gone()),
            None => Err(gone()),
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Closing the channel ends the thread's loop: it aborts what runs, lets the buses
        // drain for a bounded stretch of simulated time and stops. It is joined so that the
        // model is gone before the caller goes on (a model torn down while the process exits
        // would race the Verilator runtime's own teardown), but never waited for longer than
        // SHUTDOWN_WAIT: a thread still busy then is left to finish on its own.
        if let Ok(mut tx) = self.tx.lock() {
            tx.take();
        }
        let stopped = self
            .stopped
            .lock()
            .ok()
            .and_then(|mut s| s.take())
            .is_some_and(|rx| rx.recv_timeout(SHUTDOWN_WAIT).is_ok());
        if stopped {
            if let Some(t) = self.thread.lock().ok().and_then(|mut t| t.take()) {
                let _ = t.join();
            }
        }
    }
}

/// The simulated card. Each handle is one host thread of the model with its own clock: give
/// every thread or task that calls the card a clone of its own (see the crate documentation).
#[derive(Debug)]
pub struct SimCard {
    inner: Arc<Inner>,
    client: ClientId,
}

impl Clone for SimCard {
    /// A new handle on the same card whose clock starts at this handle's.
    fn clone(&self) -> SimCard {
        let client = self.inner.next_client.fetch_add(1, Ordering::Relaxed);
        let _ = self.inner.send(Msg::Register {
            client,
            parent: self.client,
        });
        SimCard {
            inner: self.inner.clone(),
            client,
        }
    }
}

impl Drop for SimCard {
    fn drop(&mut self) {
        let _ = self.inner.send(Msg::Unregister {
            client: self.client,
        });
    }
}

/// One data call before it is checked: which call, on which channel, with what buffer.
struct DataCall<'a> {
    op: &'static str,
    dir: Direction,
    kind: ChannelKind,
    channel: usize,
    addr: CardAddr,
    buf: &'a [u8],
    /// A receive's wait in simulated time; `None` for other calls.
    timeout: Option<Duration>,
    /// Checked as the driver's node checks it ([`check::mm_node`]), not as the API does.
    node: bool,
    /// A receive ends at end-of-packet, as the API's always does and a node's read does when
    /// the node was opened with `O_TRUNC`.
    eop_flush: bool,
}

impl DataCall<'_> {
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
            timeout: None,
            node: false,
            eop_flush: false,
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
            timeout: (dir == Direction::C2H).then_some(timeout),
            node: false,
            eop_flush: true,
        }
    }
}

impl SimCard {
    /// Builds the card that the `[sim]` section of `cfg` describes.
    pub fn open(cfg: &Config) -> Result<SimCard> {
        SimCard::open_with(&SimConfig::from_config(cfg)?)
    }

    /// Builds the model on a new thread, resets it and runs discovery.
    pub fn open_with(cfg: &SimConfig) -> Result<SimCard> {
        let cfg = &cfg.resolved()?;
        cfg.validate()?;
        let (tx, rx) = mpsc::channel::<Msg>();
        let (ready_tx, ready_rx) = mpsc::sync_channel::<Result<Found>>(1);
        let (stopped_tx, stopped_rx) = mpsc::sync_channel::<()>(1);
        let name = format!(
            "xdma-sim-{}",
            std::thread::current().name().unwrap_or("card")
        );
        let thread_cfg = cfg.clone();
        let thread_name = name.clone();
        let thread = std::thread::Builder::new()
            .name(name)
            .spawn(move || {
                match build(&thread_cfg, &thread_name) {
                    Ok((card, found)) => {
                        if ready_tx.send(Ok(found)).is_ok() {
                            card.run(rx);
                        }
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                    }
                }
                let _ = stopped_tx.send(());
            })
            .map_err(|e| Error::Backend(format!("cannot start the simulation thread: {e}")))?;
        let found =
            match ready_rx.recv_timeout(cfg.reply_timeout()) {
                Ok(f) => f?,
                Err(mpsc::RecvTimeoutError::Timeout) => return Err(Error::Timeout {
                    what:
                        "the simulated card to be built and reset (wall clock, sim.reply_timeout_s)"
                            .into(),
                    after: cfg.reply_timeout(),
                }),
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(Error::Backend(
                        "the simulation thread stopped while building the model".into(),
                    ))
                }
            };
        if found.bus_bytes != cfg.ip.data_bytes as usize {
            return Err(Error::Config(format!(
                "[sim] ip.data_bytes = {} but the card's s_axi data bus has {} bytes; make them equal",
                cfg.ip.data_bytes, found.bus_bytes
            )));
        }
        let info = CardInfo {
            backend: "sim".into(),
            h2c: channels(Direction::H2C, Target::H2c, &cfg.h2c),
            c2h: channels(Direction::C2H, Target::C2h, &cfg.c2h),
            memory_size: found.memory_size,
            user_bar_size: found.bar_size,
            events: cfg.events,
            card_id: found.card_id,
            card_version: found.card_version,
            xdma_version: None,
            alignment: cfg.ip.alignment,
            // Receives time out in simulated time, as short as the caller likes.
            min_stream_timeout: Duration::ZERO,
        };
        Ok(SimCard {
            inner: Arc::new(Inner {
                tx: Mutex::new(Some(tx)),
                info,
                reply_timeout: cfg.reply_timeout(),
                next_client: AtomicU64::new(1),
                next_job: AtomicU64::new(0),
                thread: Mutex::new(Some(thread)),
                stopped: Mutex::new(Some(stopped_rx)),
            }),
            client: 0,
        })
    }

    /// An access to the XDMA IP's own registers or engine settings (see [`Control`]): what a
    /// read returns, 0 for the rest. A DMA BAR offset must be a multiple of 4 inside the BAR.
    pub fn control(&self, c: Control) -> Result<u32> {
        if let Control::Read(off) | Control::Write(off, _) = c {
            if off % 4 != 0 || off + 4 > xdma_regmap::DMA_BAR_SIZE {
                return Err(Error::Invalid {
                    op: "DMA BAR access",
                    problem: format!(
                        "offset {off:#x}: pass a multiple of 4 below {:#x}",
                        xdma_regmap::DMA_BAR_SIZE
                    ),
                });
            }
        }
        word(self.call(Lane::Reg, Op::Control(c))?)
    }

    /// A memory-mapped write as a program's `pwrite` on the driver's H2C node makes it: checked
    /// only as the driver checks it ([`check::mm_node`]), so a card address past the card's
    /// memory goes to the card, which answers as its RTL does; the driver model then applies
    /// the driver's own rules (its alignment checks, the write errors it leaves unlogged). For
    /// a front end that stands in for the driver's nodes, such as the FUSE mount.
    pub fn node_write_mm(&self, channel: usize, addr: CardAddr, data: &[u8]) -> Result<Transfer> {
        let c = DataCall {
            node: true,
            ..DataCall::mm(Direction::H2C, channel, addr, data)
        };
        let (lane, op) = self.data_op(c)?;
        landed(self.call(lane, op)?, None)
    }

    /// A memory-mapped read as a `pread` on the driver's C2H node makes it (see
    /// [`SimCard::node_write_mm`]): a read whose engine stops on its first descriptor ends with
    /// the driver's timeout, at once rather than after the driver's 10 s.
    pub fn node_read_mm(&self, channel: usize, addr: CardAddr, buf: &mut [u8]) -> Result<Transfer> {
        let c = DataCall {
            node: true,
            ..DataCall::mm(Direction::C2H, channel, addr, buf)
        };
        let (lane, op) = self.data_op(c)?;
        landed(self.call(lane, op)?, Some(buf))
    }

    /// A read on a C2H stream node as the driver's `read` makes it: one transfer of the whole
    /// buffer, which ends at end-of-packet when the node was opened with `O_TRUNC`
    /// (`eop_flush`) and otherwise when every descriptor is filled, each packet starting a
    /// descriptor of its own as the engine places it. The driver waits `timeout` (its
    /// `c2h_timeout`; `None` waits for ever) and then aborts the engine: here both in simulated
    /// time and in wall-clock time, whichever ends first, since an idle stream's seconds take
    /// the model much longer than seconds to simulate. `stop` is asked every
    /// [`NODE_POLL`] of wall-clock time; once it says so (the file was closed, the caller
    /// interrupted), the transfer is aborted as a signal aborts it in the driver and the call
    /// returns `None`. For a front end that stands in for the driver's nodes.
    pub fn node_read_stream(
        &self,
        channel: usize,
        buf: &mut [u8],
        eop_flush: bool,
        timeout: Option<Duration>,
        stop: &dyn Fn() -> bool,
    ) -> Result<Option<Transfer>> {
        let c = DataCall {
            node: true,
            eop_flush,
            ..DataCall::stream(
                Direction::C2H,
                channel,
                buf,
                timeout.unwrap_or(Duration::MAX),
            )
        };
        let (lane, op) = self.data_op(c)?;
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        self.call_until(lane, op, deadline, stop)?
            .map(|a| landed(a, Some(buf)))
            .transpose()
    }

    /// An event node's read as the driver makes it: it waits, with no timeout, until the
    /// interrupt line fires, then takes it. `stop` ends the wait as in
    /// [`SimCard::node_read_stream`], with `None`.
    pub fn node_wait_event(&self, event: usize, stop: &dyn Fn() -> bool) -> Result<Option<u32>> {
        check::event(&self.inner.info, event)?;
        let op = Op::WaitEvent(event, Duration::MAX);
        self.call_until(Lane::Event(event), op, None, stop)?
            .map(word)
            .transpose()
    }

    /// Where the progress of this card's memory-mapped transfers goes from the next transfer
    /// on, for every handle of the card (see [`xdma_core::progress`]): by default a line on
    /// stderr (or a `tracing` event when a subscriber is installed) for a transfer that runs
    /// longer than 5 s of wall-clock time, after each of the driver's engine runs (8 MiB
    /// each). A callback is called on the simulation thread, which waits for it.
    pub fn set_progress(&self, report: ProgressReport) -> Result<()> {
        self.inner.send(Msg::Progress(report))
    }

    /// The card-side AXI latencies measured on the RTL's `s_axi` by the transfers so far: the
    /// part of each transfer's time that comes from the card rather than the timing model.
    pub fn card_latency(&self) -> Result<LatencyStats> {
        let (s, r) = mpsc::sync_channel(1);
        self.inner.send(Msg::Latency { reply: s })?;
        r.recv_timeout(self.inner.reply_timeout)
            .map_err(|_| self.no_answer())
    }

    /// The card's own LOOP rate for `frames` frames of `frame_len` bytes, measured on the RTL
    /// alone: `card_core` in the card harness, on a model of its own (not this card's, which
    /// its calls go on using), with C2H always ready, so that nothing outside the card limits
    /// it. Every frame is checked to come back unchanged.
    pub fn loop_rate(&self, frame_len: usize, frames: u32) -> Result<LoopRate> {
        let r = card_harness::loop_rate(frame_len, frames).map_err(bfm)?;
        Ok(LoopRate {
            frame_len: r.frame_len,
            frames: r.frames,
            cycles: r.cycles,
            fraction: r.fraction,
        })
    }

    fn no_answer(&self) -> Error {
        Error::Timeout {
            what: "any answer from the simulation thread (wall clock): it did not even report a timeout of its own, so it is stuck inside one step of the model".into(),
            after: self.inner.reply_timeout,
        }
    }

    /// Checks a data call as every backend does and turns it into the thread's request.
    fn data_op(&self, c: DataCall<'_>) -> Result<(Lane, Op)> {
        let info = &self.inner.info;
        let ptr = c.buf.as_ptr() as usize;
        match c.kind {
            ChannelKind::MemoryMapped if c.node => {
                check::mm_node(info, c.op, c.dir, c.channel, c.buf.len())?
            }
            ChannelKind::MemoryMapped => check::mm(
                info,
                c.op,
                c.dir,
                c.channel,
                c.addr,
                ptr,
                c.buf.len(),
                "the simulated card's memory as its RTL has it",
            )?,
            ChannelKind::Stream => check::stream(info, c.op, c.dir, c.channel, ptr, c.buf.len())?,
        }
        // Only the buffer's place within its page matters to the engine: it decides how the
        // driver's scatter list cuts the transfer into descriptors.
        let page_offset = (ptr as u64 % HOST_PAGE) as usize;
        let (ch, len) = (c.channel, c.buf.len());
        let (lane, kind) = match (c.kind, c.dir) {
            (ChannelKind::MemoryMapped, Direction::H2C) => (Lane::H2c(ch), Kind::WriteMm),
            (ChannelKind::MemoryMapped, Direction::C2H) => (Lane::C2h(ch), Kind::ReadMm),
            (ChannelKind::Stream, Direction::H2C) => (Lane::H2c(ch), Kind::Send),
            (ChannelKind::Stream, Direction::C2H) => (Lane::C2h(ch), Kind::Recv),
        };
        let data = (c.dir == Direction::H2C).then(|| c.buf.to_vec());
        Ok((
            lane,
            Op::Transfer {
                kind,
                channel: ch,
                addr: c.addr.raw(),
                page_offset,
                data,
                len,
                timeout: c.timeout,
                eop_flush: c.eop_flush,
                driver_eop: c.node,
            },
        ))
    }

    /// Submits a call whose caller waits on it at once: its job and where its answer comes.
    fn submit_blocking(
        &self,
        lane: Lane,
        op: Op,
    ) -> Result<(JobId, mpsc::Receiver<Result<Answer>>)> {
        let (s, r) = mpsc::sync_channel(1);
        let job = self.inner.next_job.fetch_add(1, Ordering::Relaxed);
        self.inner.send(Msg::Submit {
            client: self.client,
            job,
            lane,
            op,
            reply: Reply::Blocking(s),
            waits: true,
        })?;
        Ok((job, r))
    }

    /// Runs a call, blocking: the caller waits on it at once.
    fn call(&self, lane: Lane, op: Op) -> Result<Answer> {
        let (job, r) = self.submit_blocking(lane, op)?;
        // The thread answers every call, with a timeout of its own past sim.reply_timeout_s;
        // this bound only catches a thread stuck inside one step of the model.
        match r.recv_timeout(self.inner.reply_timeout + Duration::from_secs(30)) {
            Ok(a) => a,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let _ = self.inner.send(Msg::Cancel {
                    client: self.client,
                    job,
                });
                Err(self.no_answer())
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(gone()),
        }
    }

    /// Runs a call, blocking, until its answer, `deadline` of wall-clock time (a timeout) or
    /// `stop` (`None`): the last two cancel it, which aborts its transfer on the card as the
    /// driver aborts an engine.
    fn call_until(
        &self,
        lane: Lane,
        op: Op,
        deadline: Option<Instant>,
        stop: &dyn Fn() -> bool,
    ) -> Result<Option<Answer>> {
        let started = Instant::now();
        let (job, r) = self.submit_blocking(lane, op)?;
        let cancel = || {
            let _ = self.inner.send(Msg::Cancel {
                client: self.client,
                job,
            });
        };
        loop {
            let step = deadline.map_or(NODE_POLL, |d| {
                d.saturating_duration_since(Instant::now()).min(NODE_POLL)
            });
            match r.recv_timeout(step) {
                Ok(a) => return a.map(Some),
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err(gone()),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            if stop() {
                cancel();
                return Ok(None);
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                cancel();
                return Err(Error::Timeout {
                    what: "the transfer to end within the driver's timeout (wall-clock time on the simulated card); it was aborted on the card and what arrived of it is lost".into(),
                    after: started.elapsed(),
                });
            }
        }
    }

    /// Submits a call now and returns the future of its answer.
    fn submit_async(&self, lane: Lane, op: Op) -> Result<SimCall<'_>> {
        let (s, r) = tokio::sync::oneshot::channel();
        let job = self.inner.next_job.fetch_add(1, Ordering::Relaxed);
        self.inner.send(Msg::Submit {
            client: self.client,
            job,
            lane,
            op,
            reply: Reply::Async(s),
            waits: false,
        })?;
        Ok(SimCall {
            card: self,
            job,
            rx: r,
            finished: false,
        })
    }

    /// A data call on an owned buffer, submitted at once, its answer awaited later.
    fn data_async(
        &self,
        make: impl FnOnce(&DmaBuffer) -> DataCall<'_>,
        mut buf: DmaBuffer,
        fill: bool,
    ) -> impl Future<Output = BufResult<Transfer>> + Send + '_ {
        let call = self
            .data_op(make(&buf))
            .and_then(|(lane, op)| self.submit_async(lane, op));
        async move {
            let r = match call {
                Ok(c) => match c.await {
                    Ok(a) => landed(a, fill.then_some(&mut buf[..])),
                    Err(e) => Err(e),
                },
                Err(e) => Err(e),
            };
            (r, buf)
        }
    }

    fn small_async(&self, lane: Lane, op: Op) -> impl Future<Output = Result<Answer>> + Send + '_ {
        let call = self.submit_async(lane, op);
        async move { call?.await }
    }
}

/// An async call in flight. Dropped before its answer, it cancels the call.
struct SimCall<'a> {
    card: &'a SimCard,
    job: JobId,
    rx: tokio::sync::oneshot::Receiver<Result<Answer>>,
    finished: bool,
}

impl Future for SimCall<'_> {
    type Output = Result<Answer>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<Answer>> {
        match Pin::new(&mut self.rx).poll(cx) {
            Poll::Ready(r) => {
                self.finished = true;
                Poll::Ready(r.unwrap_or_else(|_| Err(gone())))
            }
            Poll::Pending => {
                // The caller waits on its calls now: the simulation need not hold for it. Said
                // on every poll that finds no answer, since an answer to another of its calls
                // makes the simulation hold for the caller again (it may call next), and a
                // caller that waits on this one after that must say so once more.
                let _ = self.card.inner.send(Msg::Release {
                    client: self.card.client,
                });
                Poll::Pending
            }
        }
    }
}

impl Drop for SimCall<'_> {
    fn drop(&mut self) {
        if !self.finished {
            let _ = self.card.inner.send(Msg::Cancel {
                client: self.card.client,
                job: self.job,
            });
        }
    }
}

fn gone() -> Error {
    Error::Backend("the simulation thread has stopped (an earlier RTL error ended it, or the card was closed); open a new card".into())
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
        let (lane, op) = self.data_op(DataCall::mm(Direction::H2C, channel, addr, data))?;
        landed(self.call(lane, op)?, None)
    }

    fn read_mm(&self, channel: usize, addr: CardAddr, buf: &mut [u8]) -> Result<Transfer> {
        let (lane, op) = self.data_op(DataCall::mm(Direction::C2H, channel, addr, buf))?;
        landed(self.call(lane, op)?, Some(buf))
    }

    fn send_stream(&self, channel: usize, frame: &[u8]) -> Result<Transfer> {
        let c = DataCall::stream(Direction::H2C, channel, frame, Duration::ZERO);
        let (lane, op) = self.data_op(c)?;
        landed(self.call(lane, op)?, None)
    }

    fn recv_stream(&self, channel: usize, buf: &mut [u8], timeout: Duration) -> Result<Transfer> {
        let (lane, op) = self.data_op(DataCall::stream(Direction::C2H, channel, buf, timeout))?;
        landed(self.call(lane, op)?, Some(buf))
    }

    fn read_reg(&self, offset: u64) -> Result<u32> {
        check::reg(&self.inner.info, offset)?;
        word(self.call(Lane::Reg, Op::ReadReg(offset))?)
    }

    fn write_reg(&self, offset: u64, value: u32) -> Result<()> {
        check::reg(&self.inner.info, offset)?;
        done(self.call(Lane::Reg, Op::WriteReg(offset, value))?)
    }

    fn wait_event(&self, event: usize, timeout: Duration) -> Result<u32> {
        check::event(&self.inner.info, event)?;
        word(self.call(Lane::Event(event), Op::WaitEvent(event, timeout))?)
    }

    /// This handle's clock: the simulated time its next call would start at.
    fn now_ps(&self) -> Result<u64> {
        let (s, r) = mpsc::sync_channel(1);
        self.inner.send(Msg::Now {
            client: self.client,
            reply: s,
        })?;
        r.recv_timeout(self.inner.reply_timeout)
            .map_err(|_| self.no_answer())
    }
}

impl AsyncCard for SimCard {
    fn write_mm_async(
        &self,
        channel: usize,
        addr: CardAddr,
        data: DmaBuffer,
    ) -> impl Future<Output = BufResult<Transfer>> + Send {
        self.data_async(
            move |b| DataCall::mm(Direction::H2C, channel, addr, b),
            data,
            false,
        )
    }

    fn read_mm_async(
        &self,
        channel: usize,
        addr: CardAddr,
        buf: DmaBuffer,
    ) -> impl Future<Output = BufResult<Transfer>> + Send {
        self.data_async(
            move |b| DataCall::mm(Direction::C2H, channel, addr, b),
            buf,
            true,
        )
    }

    fn send_stream_async(
        &self,
        channel: usize,
        frame: DmaBuffer,
    ) -> impl Future<Output = BufResult<Transfer>> + Send {
        self.data_async(
            move |b| DataCall::stream(Direction::H2C, channel, b, Duration::ZERO),
            frame,
            false,
        )
    }

    fn recv_stream_async(
        &self,
        channel: usize,
        buf: DmaBuffer,
        timeout: Duration,
    ) -> impl Future<Output = BufResult<Transfer>> + Send {
        self.data_async(
            move |b| DataCall::stream(Direction::C2H, channel, b, timeout),
            buf,
            true,
        )
    }

    fn read_reg_async(&self, offset: u64) -> impl Future<Output = Result<u32>> + Send {
        let checked = check::reg(&self.inner.info, offset);
        let call = checked.map(|()| self.small_async(Lane::Reg, Op::ReadReg(offset)));
        async move { word(call?.await?) }
    }

    fn write_reg_async(&self, offset: u64, value: u32) -> impl Future<Output = Result<()>> + Send {
        let checked = check::reg(&self.inner.info, offset);
        let call = checked.map(|()| self.small_async(Lane::Reg, Op::WriteReg(offset, value)));
        async move { done(call?.await?) }
    }

    fn wait_event_async(
        &self,
        event: usize,
        timeout: Duration,
    ) -> impl Future<Output = Result<u32>> + Send {
        let checked = check::event(&self.inner.info, event);
        let call =
            checked.map(|()| self.small_async(Lane::Event(event), Op::WaitEvent(event, timeout)));
        async move { word(call?.await?) }
    }
}
