//! xdma: the one API that host programs and tests use to move data to and from the card,
//! whichever card it is — the simulated card (feature `sim`, crate `xdma-sim`) or a real board
//! on the Linux XDMA driver (feature `hw`, crate `xdma-hw`).
//!
//! Programs are written against the [`Card`] trait (blocking) and the [`AsyncCard`] trait
//! (async), with card addresses as [`CardAddr`], buffers as [`DmaBuffer`] and failures as
//! [`Error`] whose [`ErrorKind`] is the same on every backend; these come from `xdma-core`,
//! which this crate re-exports. [`Xdma::open`] picks the backend at run time from a [`Config`]
//! (`XDMA_BACKEND=sim|hw`, `XDMA_DEVICE=/dev/xdma0`, `XDMA_CONFIG=file.toml`).
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
//! With no default features the crate is the API alone, which builds and tests without a
//! simulator or a driver.

mod any;

pub use any::Xdma;
pub use xdma_core::*;

/// The simulated card's backend.
#[cfg(feature = "sim")]
pub use xdma_sim as sim;

/// The Linux driver's backend.
#[cfg(all(feature = "hw", target_os = "linux"))]
pub use xdma_hw as hw;
