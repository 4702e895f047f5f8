//! A system call on the driver's nodes and its end, in the model's own shape.
//!
//! The node's direction, the request a thread makes and what the call returns; `cdev_sgdma.rs`
//! (the DMA nodes) and `cdev_ctrl.rs` (the user BAR's node) take and return them. A leaf, so
//! that the driver's state can name them without a circle.

use std::time::Duration;

use xdma_ip::Ps;

use crate::error::Result;

/// A direction of transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// Host to card (a write on an `h2c` node).
    H2c,
    /// Card to host (a read on a `c2h` node).
    C2h,
}

/// What a call returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    /// The bytes read (C2H).
    pub data: Vec<u8>,
    /// The bytes written (H2C).
    pub written: usize,
    /// The read ended at end-of-packet (stream reads with `eop_flush`).
    pub end_of_packet: bool,
    /// The value a user BAR read returned.
    pub word: u32,
}

/// A call's end with its times.
#[derive(Debug)]
pub struct Ended {
    /// What the system call returns.
    pub result: Result<Received>,
    /// When the caller runs again.
    pub end: Ps,
    /// When the path the call used is free for the next call on it (a user BAR access: when
    /// the card took it).
    pub free: Ps,
}

/// A transfer's or a user BAR access's system call, as a thread makes it.
#[derive(Debug, Clone, Copy)]
pub struct Submit {
    /// The node's direction.
    pub dir: Dir,
    /// The node's channel.
    pub channel: usize,
    /// The card address (the file offset); ignored on a stream.
    pub card_addr: u64,
    /// Bytes.
    pub len: usize,
    /// Where the caller's buffer starts within its host page.
    pub page_offset: usize,
    /// The node opened with `O_TRUNC`: a stream read ends at end-of-packet.
    pub eop_flush: bool,
    /// When the system call is made, in simulated time.
    pub at: Ps,
    /// How long the call may take, in place of the direction's module parameter.
    pub timeout: Option<Duration>,
}

impl Submit {
    /// A call on the node of `dir` and `channel` made at `at`, opened without `O_TRUNC`
    /// and with the direction's module parameter as its timeout: how `pwrite` and `pread`
    /// make their calls.
    pub fn new(
        dir: Dir,
        channel: usize,
        card_addr: u64,
        len: usize,
        page_offset: usize,
        at: Ps,
    ) -> Submit {
        Submit {
            dir,
            channel,
            card_addr,
            len,
            page_offset,
            eop_flush: false,
            at,
            timeout: None,
        }
    }
}

/// A call in the driver, from [`Driver::start_write`](crate::Driver::start_write), [`Driver::start_read`](crate::Driver::start_read),
/// [`Driver::submit`](crate::Driver::submit) or [`Driver::submit_user`](crate::Driver::submit_user).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Call(pub(crate) u64);
