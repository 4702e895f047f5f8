//! What a front end asks of the XDMA IP itself rather than the card ([`Control`]): the DMA
//! BAR and the engines' ioctls.

use xdma_core::Direction;

/// An access to the XDMA IP itself rather than the card: what the driver's `_control` node
/// and its engine ioctls do, for a front end that serves the driver's nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// A dword read of the DMA BAR at this offset.
    Read(u64),
    /// A dword write of the DMA BAR.
    Write(u64, u32),
    /// Whether a channel's engine runs with a fixed card address (`ADDRMODE_GET`).
    AddrModeGet(Direction, usize),
    /// Sets or clears a channel's fixed-address mode (`ADDRMODE_SET`).
    AddrModeSet(Direction, usize, bool),
}
