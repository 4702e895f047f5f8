//! The file system: one simulated card as the XDMA driver's nodes, with the driver's semantics
//! (cdev_sgdma.c, cdev_ctrl.c, cdev_events.c of Xilinx dma_ip_drivers) wherever FUSE lets a
//! server have them. `docs/xdma-fuse.md` lists where it does not, and what is done instead.
//!
//! Requests that may block (DMA, stream and event reads, register accesses, which cross the
//! simulated link) are answered from a thread of their own, so the threads that read requests
//! from the kernel are never held up: one process can block on a stream read while another
//! writes. A reply that is dropped without an answer (a failure inside the simulation, a panic)
//! is answered with EIO by the FUSE library, so every request gets an answer.
//!
//! The server is cut along the driver's files: [`sgdma`] the DMA and stream nodes
//! (cdev_sgdma.c), [`ctrl`] the register nodes and the ioctls (cdev_ctrl.c), [`events`] the
//! user interrupt nodes (cdev_events.c), [`session`] the FUSE request handlers that dispatch to
//! them, and [`state`] what they all share. Each leans only on `state`, so no two import each
//! other.

mod ctrl;
mod events;
mod session;
mod sgdma;
mod state;

pub use session::XdmaFs;
pub use state::{Shared, EVENT_NODES};
