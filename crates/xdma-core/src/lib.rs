//! xdma-core: the consumer-side API that host programs and tests use to move data to and from
//! the card, whichever card it is, with no backend in it.
//!
//! Programs are written against the [`Card`] trait (blocking) and the [`AsyncCard`] trait
//! (async), with card addresses as [`CardAddr`], buffers as [`DmaBuffer`] and failures as
//! [`Error`] whose [`ErrorKind`] is the same on every backend. The backends implement these
//! traits in crates of their own (`xdma-sim`: the simulated card; `xdma-hw`: a board on the
//! Linux XDMA driver); the `xdma` crate picks one at run time from a [`Config`].
//!
//! [`InOrder`] keeps a channel's async calls in flight and answers them in order.
//!
//! [`check`] holds the argument rules every backend applies before it touches its device, so
//! that bad input gets the same typed error on each.
//!
//! [`cli`] reads the numbers the tools take on their command lines (byte sizes with K, M and G
//! or in hex, counts, durations), each refused with a typed error outside its range.

mod addr;
mod api;
mod buffer;
pub mod check;
pub mod cli;
mod config;
mod error;
mod queue;

pub use addr::CardAddr;
pub use api::{
    AsyncCard, BufResult, Card, CardInfo, ChannelInfo, ChannelKind, Direction, LoopRate, Transfer,
};
pub use buffer::{DmaBuffer, DMA_ALIGN};
pub use config::{BackendKind, Config, BACKEND_ENV, CONFIG_ENV, DEVICE_ENV};
pub use error::{BoxError, Error, ErrorKind, Result};
pub use queue::{CallFut, InOrder};
