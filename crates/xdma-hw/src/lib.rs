//! The real board through the Linux XDMA driver (Xilinx dma_ip_drivers, `XDMA/linux-kernel`),
//! following what the driver does in the releases in the field (2020.2 and 2025.2) rather than
//! what its readme suggests:
//!
//! - nodes `<prefix>_h2c_<k>`, `<prefix>_c2h_<k>`, `<prefix>_user`, `<prefix>_control`,
//!   `<prefix>_events_<k>`, where the prefix (default `/dev/xdma0`) may name any folder (a FUSE
//!   mount of the simulated card, `xdma-fuse`, serves the same nodes);
//! - open first checks that `_control` is the IP's DMA BAR with the driver's own test (the IRQ
//!   and config blocks' identifiers, `is_config_bar`), so that a file of zeros or `/dev/zero`
//!   is refused rather than taken for a card with no channels; a node without a file position
//!   (a FIFO: ESPIPE) is not the driver's either;
//! - discovery reads the engines' identifier registers over `_control` and stops, as the
//!   driver's probe does, at the first engine whose identifier or channel number is not the
//!   expected one; the driver's version comes from XDMA_IOCINFO ([`HwCard::driver`]);
//! - memory-mapped channels: the file offset is the card address and only pread/pwrite are
//!   used (the driver's read/write do not move the file position). Each call is cut into
//!   chunks of [`HwConfig::chunk_bytes`], because the driver pins a whole call's pages at once;
//!   a buffer the driver cannot pin (EFAULT: it pins pages writable in both directions, so
//!   read-only memory fails) is copied into an owned page-aligned buffer and the call retried;
//! - the driver does not know the card's memory: a write past it reports success without
//!   landing and a read there times out after `c2h_timeout`, so [`HwConfig::memory_size`] is
//!   the only guard, and a transfer past it is refused up front with an error that names the
//!   address, the size and the setting; a memory-mapped call's driver error names its card
//!   address, and a read that timed out says that a read past the card's memory ends so;
//! - a memory-mapped engine that an earlier process left in fixed-address mode (ADDRMODE is
//!   the engine's, not the file's) is put back into incrementing mode at open;
//! - H2C streams: the driver ends every internal transfer with end-of-packet and cuts a
//!   transfer at the end of its descriptor ring, whose position carries over from earlier
//!   calls, so only a frame that fits one descriptor leaves the card as one packet. Frames
//!   longer than [`HwConfig::h2c_stream_max_frame`] (one page) are refused; shorter ones that
//!   straddle a page boundary are copied into one page first;
//! - C2H streams are opened with O_TRUNC (a read ends at end-of-packet) and take one opener at
//!   a time (EBUSY). A read is at most one descriptor ([`HwConfig::c2h_stream_read`]), because
//!   under back-to-back traffic a longer read can hold the end of one packet and the start of
//!   the next. The DMA nodes have no poll and ignore O_NONBLOCK, so a read blocks until data or
//!   the driver's `c2h_timeout` (module parameter): a receive whose timeout is shorter than
//!   `c2h_timeout` is refused up front with an error that names it; a longer one is served by
//!   reads of `c2h_timeout` each;
//! - errno 512 (ERESTARTSYS, what drivers before 2025.2 return for a DMA timeout) and
//!   ETIMEDOUT are both [`ErrorKind::Timeout`](xdma_core::ErrorKind::Timeout); EBUSY on a transfer means the device is offline
//!   or being reset; a count outside the buffer is a [`DriverError::Count`];
//! - DMA calls run with signals blocked in the calling thread, because a signal aborts the
//!   driver's transfer;
//! - an async call runs on a thread of its own; when its future is dropped (a task aborted, a
//!   runtime dropped), the call makes no further driver call (a receive no next read of
//!   `c2h_timeout`, a transfer no next chunk, an event wait no next poll of 50 ms), so the
//!   next call on its node waits at most for the driver's call in flight; a call that timed
//!   out after waiting for its node behind another says so, and counts its time from the
//!   call;
//! - a memory-mapped transfer reports its progress after each chunk ([`HwCard::set_progress`],
//!   `xdma_core::progress`);
//! - ENOTCONN and ECONNABORTED (a call made after, or in flight when, the process serving the
//!   nodes died, as `xdma-fuse`) are [`ErrorKind::NoDevice`](xdma_core::ErrorKind::NoDevice), as a board that went away;
//! - `_user` and `_control`: one 32-bit word per call at a 4-aligned offset (anything else is
//!   EPROTO), checked against the user BAR's size as the system reports it (the file size, or
//!   for the driver's character device the longest mapping it accepts), because the driver
//!   itself does not check and an access past the BAR is a kernel oops; the user BAR may instead
//!   be mapped into memory, never longer than the node;
//! - `_events_<k>`: interrupts stay latched until the node is read, and several collapse into
//!   one read, so latched ones are drained at open; a wait is a poll then a 4-byte read;
//! - the alignment comes from the ALIGN_GET ioctl (the reference IP answers 1).
//!
//! The backend's settings are the `[hw]` section of the configuration ([`HwConfig`]).

#![cfg(target_os = "linux")]

mod asynchronous;
mod blocking;
mod card;
mod config;
mod driver;
mod error;
mod events;
#[cfg(test)]
mod fake;
mod machine;
mod mm;
mod node;
mod open;
mod regs;
mod stream;
mod sys;

pub use card::HwCard;
pub use config::HwConfig;
pub use driver::{DriverInfo, DriverVersion, ModuleParams};
pub use error::DriverError;
pub use machine::virtual_machine;
pub use sys::{
    IocInfo, ERESTARTSYS, IOCTL_XDMA_ADDRMODE_GET, IOCTL_XDMA_ADDRMODE_SET, IOCTL_XDMA_ALIGN_GET,
    RW_MAX, XDMA_IOCINFO, XDMA_IOCOFFLINE, XDMA_IOCONLINE, XDMA_XCL_MAGIC,
};
