//! xdma: the one API that host programs and tests use to move data to and from the card,
//! whichever card it is — the simulated card (feature `sim`) or a real board on the Linux
//! XDMA driver (feature `hw`).
//!
//! Programs are written against the [`Card`] trait (blocking) and the [`AsyncCard`] trait
//! (tokio), with card addresses as [`CardAddr`], buffers as [`DmaBuffer`] and failures as
//! [`Error`] whose [`ErrorKind`] is the same on every backend. [`Xdma::open`] picks the backend
//! at run time from a [`Config`] (`XDMA_BACKEND=sim|hw`, `XDMA_DEVICE=/dev/xdma0`).
//!
//! ```no_run
//! use xdma::{Card, CardAddr, Config, DmaBuffer, Xdma};
//! # fn main() -> xdma::Result<()> {
//! let card = Xdma::open(&Config::from_env()?)?;
//! let info = card.info();
//! println!("card {:#x}, {} H2C / {} C2H channels", info.card_id, info.h2c.len(), info.c2h.len());
//! let data = DmaBuffer::from_slice(&[0x5a; 4096])?;
//! let t = card.write_mm(0, CardAddr(0x1000), &data)?;
//! println!("{} bytes in {:?}", t.bytes, t.duration());
//! # Ok(()) }
//! ```
//!
//! The modules [`engine`] and [`timing`] hold the XDMA engine model and the link and driver
//! timing model that the simulated card uses.

mod addr;
mod any;
mod api;
mod buffer;
mod check;
mod config;
pub mod engine;
mod error;
pub mod timing;

#[cfg(all(feature = "hw", target_os = "linux"))]
pub mod hw;
#[cfg(feature = "sim")]
pub mod sim;

pub use addr::CardAddr;
pub use any::Xdma;
pub use api::{
    AsyncCard, BufResult, Card, CardInfo, ChannelInfo, ChannelKind, Direction, Transfer,
};
pub use buffer::{DmaBuffer, DMA_ALIGN};
pub use config::{BackendKind, Config, HwConfig, SimConfig, BACKEND_ENV, CONFIG_ENV, DEVICE_ENV};
pub use error::{Error, ErrorKind, Result};
