//! The backend chosen at run time from configuration.

// Built with no backend, the enum has no variants and every forwarding method matches nothing,
// so its arguments go unused.
#![cfg_attr(
    not(any(feature = "sim", feature = "hw")),
    allow(unused_variables, unreachable_code)
)]

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use xdma_core::{
    AsyncCard, BackendKind, BufResult, Card, CardAddr, CardInfo, Config, DmaBuffer, Error,
    LoopRate, ProgressReport, Result, Transfer,
};

/// A card on whichever backend the configuration names. A program written against [`Card`]
/// and [`AsyncCard`] runs unchanged on either.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Xdma {
    /// The simulated card.
    #[cfg(feature = "sim")]
    Sim(xdma_sim::SimCard),
    /// A board on the Linux XDMA driver.
    #[cfg(all(feature = "hw", target_os = "linux"))]
    Hw(xdma_hw::HwCard),
}

impl Xdma {
    /// Opens the card that `cfg` describes.
    pub fn open(cfg: &Config) -> Result<Xdma> {
        match cfg.backend {
            #[cfg(feature = "sim")]
            BackendKind::Sim => Ok(Xdma::Sim(xdma_sim::SimCard::open(cfg)?)),
            #[cfg(all(feature = "hw", target_os = "linux"))]
            BackendKind::Hw => Ok(Xdma::Hw(xdma_hw::HwCard::open(cfg)?)),
            #[allow(unreachable_patterns)]
            other => Err(Error::Config(format!(
                "backend {other:?} is not in this build: enable cargo feature `{}` (the `hw` backend needs Linux)",
                match other {
                    BackendKind::Sim => "sim",
                    BackendKind::Hw => "hw",
                }
            ))),
        }
    }

    /// Opens the card that the environment describes (see [`Config::from_env`]).
    pub fn from_env() -> Result<Xdma> {
        Xdma::open(&Config::from_env()?)
    }

    /// Where the progress of this card's memory-mapped transfers goes from the next transfer
    /// on ([`ProgressReport`], see [`xdma_core::progress`]): by default, a transfer that runs
    /// longer than 5 s of wall-clock time (a large one on the simulated card, which moves
    /// about 1.5 MiB a second) is shown by a line on stderr every 10 s, or by `tracing`
    /// events of target `xdma::progress` when the program has installed a subscriber; a
    /// callback gets every report instead; `Off` shows nothing.
    pub fn set_progress(&self, report: ProgressReport) -> Result<()> {
        match *self {
            #[cfg(feature = "sim")]
            Xdma::Sim(ref c) => c.set_progress(report),
            #[cfg(all(feature = "hw", target_os = "linux"))]
            Xdma::Hw(ref c) => {
                c.set_progress(report);
                Ok(())
            }
        }
    }

    /// What the backend knows of the card's own LOOP rate ([`LoopRate`]) for `frames` frames
    /// of `frame_len` bytes: the simulated card measures it on its RTL; a board's backend has
    /// no RTL to measure it on and answers `None`.
    pub fn loop_rate(&self, frame_len: usize, frames: u32) -> Result<Option<LoopRate>> {
        match *self {
            #[cfg(feature = "sim")]
            Xdma::Sim(ref c) => c.loop_rate(frame_len, frames).map(Some),
            #[cfg(all(feature = "hw", target_os = "linux"))]
            Xdma::Hw(_) => Ok(None),
        }
    }
}

/// Forwards a call to the backend in use.
macro_rules! each {
    ($self:ident, $c:ident => $e:expr) => {
        // Matching on the value (not the reference) lets a build with no backend, where the
        // enum has no variants, match nothing.
        match *$self {
            #[cfg(feature = "sim")]
            Xdma::Sim(ref $c) => $e,
            #[cfg(all(feature = "hw", target_os = "linux"))]
            Xdma::Hw(ref $c) => $e,
        }
    };
}

impl Card for Xdma {
    fn info(&self) -> &CardInfo {
        each!(self, c => c.info())
    }
    fn write_mm(&self, channel: usize, addr: CardAddr, data: &[u8]) -> Result<Transfer> {
        each!(self, c => c.write_mm(channel, addr, data))
    }
    fn read_mm(&self, channel: usize, addr: CardAddr, buf: &mut [u8]) -> Result<Transfer> {
        each!(self, c => c.read_mm(channel, addr, buf))
    }
    fn send_stream(&self, channel: usize, frame: &[u8]) -> Result<Transfer> {
        each!(self, c => c.send_stream(channel, frame))
    }
    fn recv_stream(&self, channel: usize, buf: &mut [u8], timeout: Duration) -> Result<Transfer> {
        each!(self, c => c.recv_stream(channel, buf, timeout))
    }
    fn read_reg(&self, offset: u64) -> Result<u32> {
        each!(self, c => c.read_reg(offset))
    }
    fn write_reg(&self, offset: u64, value: u32) -> Result<()> {
        each!(self, c => c.write_reg(offset, value))
    }
    fn wait_event(&self, event: usize, timeout: Duration) -> Result<u32> {
        each!(self, c => c.wait_event(event, timeout))
    }
    fn now_ps(&self) -> Result<u64> {
        each!(self, c => c.now_ps())
    }
}

/// A backend's future, boxed so that both backends' futures have one type.
type Boxed<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Forwards an async call to the backend in use, creating the backend's future at once: a
/// backend that submits when the future is created (the simulated card) keeps doing so.
macro_rules! each_async {
    ($self:ident, $c:ident => $e:expr) => {{
        let f: Boxed<'_, _> = match *$self {
            #[cfg(feature = "sim")]
            Xdma::Sim(ref $c) => Box::pin($e),
            #[cfg(all(feature = "hw", target_os = "linux"))]
            Xdma::Hw(ref $c) => Box::pin($e),
        };
        f
    }};
}

impl AsyncCard for Xdma {
    fn write_mm_async(
        &self,
        channel: usize,
        addr: CardAddr,
        data: DmaBuffer,
    ) -> impl Future<Output = BufResult<Transfer>> + Send {
        each_async!(self, c => c.write_mm_async(channel, addr, data))
    }
    fn read_mm_async(
        &self,
        channel: usize,
        addr: CardAddr,
        buf: DmaBuffer,
    ) -> impl Future<Output = BufResult<Transfer>> + Send {
        each_async!(self, c => c.read_mm_async(channel, addr, buf))
    }
    fn send_stream_async(
        &self,
        channel: usize,
        frame: DmaBuffer,
    ) -> impl Future<Output = BufResult<Transfer>> + Send {
        each_async!(self, c => c.send_stream_async(channel, frame))
    }
    fn recv_stream_async(
        &self,
        channel: usize,
        buf: DmaBuffer,
        timeout: Duration,
    ) -> impl Future<Output = BufResult<Transfer>> + Send {
        each_async!(self, c => c.recv_stream_async(channel, buf, timeout))
    }
    fn read_reg_async(&self, offset: u64) -> impl Future<Output = Result<u32>> + Send {
        each_async!(self, c => c.read_reg_async(offset))
    }
    fn write_reg_async(&self, offset: u64, value: u32) -> impl Future<Output = Result<()>> + Send {
        each_async!(self, c => c.write_reg_async(offset, value))
    }
    fn wait_event_async(
        &self,
        event: usize,
        timeout: Duration,
    ) -> impl Future<Output = Result<u32>> + Send {
        each_async!(self, c => c.wait_event_async(event, timeout))
    }
}
