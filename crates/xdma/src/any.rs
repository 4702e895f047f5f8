//! The backend chosen at run time from configuration.

use std::time::Duration;

use crate::api::{AsyncCard, BufResult, Card, CardInfo, Transfer};
use crate::config::{BackendKind, Config};
use crate::error::{Error, Result};
use crate::{CardAddr, DmaBuffer};

/// A card on whichever backend the configuration names. A program written against [`Card`]
/// and [`AsyncCard`] runs unchanged on either.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Xdma {
    /// The simulated card.
    #[cfg(feature = "sim")]
    Sim(crate::sim::SimCard),
    /// A board on the Linux XDMA driver.
    #[cfg(all(feature = "hw", target_os = "linux"))]
    Hw(crate::hw::HwCard),
}

impl Xdma {
    /// Opens the card that `cfg` describes.
    pub fn open(cfg: &Config) -> Result<Xdma> {
        match cfg.backend {
            #[cfg(feature = "sim")]
            BackendKind::Sim => Ok(Xdma::Sim(crate::sim::SimCard::open(cfg)?)),
            #[cfg(all(feature = "hw", target_os = "linux"))]
            BackendKind::Hw => Ok(Xdma::Hw(crate::hw::HwCard::open(cfg)?)),
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
}

/// Forwards a call to the backend in use.
macro_rules! each {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            #[cfg(feature = "sim")]
            Xdma::Sim($c) => $e,
            #[cfg(all(feature = "hw", target_os = "linux"))]
            Xdma::Hw($c) => $e,
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

impl AsyncCard for Xdma {
    async fn write_mm_async(
        &self,
        channel: usize,
        addr: CardAddr,
        data: DmaBuffer,
    ) -> BufResult<Transfer> {
        each!(self, c => c.write_mm_async(channel, addr, data).await)
    }
    async fn read_mm_async(
        &self,
        channel: usize,
        addr: CardAddr,
        buf: DmaBuffer,
    ) -> BufResult<Transfer> {
        each!(self, c => c.read_mm_async(channel, addr, buf).await)
    }
    async fn send_stream_async(&self, channel: usize, frame: DmaBuffer) -> BufResult<Transfer> {
        each!(self, c => c.send_stream_async(channel, frame).await)
    }
    async fn recv_stream_async(
        &self,
        channel: usize,
        buf: DmaBuffer,
        timeout: Duration,
    ) -> BufResult<Transfer> {
        each!(self, c => c.recv_stream_async(channel, buf, timeout).await)
    }
    async fn read_reg_async(&self, offset: u64) -> Result<u32> {
        each!(self, c => c.read_reg_async(offset).await)
    }
    async fn write_reg_async(&self, offset: u64, value: u32) -> Result<()> {
        each!(self, c => c.write_reg_async(offset, value).await)
    }
    async fn wait_event_async(&self, event: usize, timeout: Duration) -> Result<u32> {
        each!(self, c => c.wait_event_async(event, timeout).await)
    }
}
