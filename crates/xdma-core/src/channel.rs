//! What a DMA channel is, named as the XDMA IP names it: its direction and its kind. A leaf
//! of the crate (it imports nothing of it), so that both the API's traits (`api`) and its
//! errors (`error`), which name channels, take these from here and not from each other.

use std::fmt;

/// The direction of a DMA channel, named from the host as the XDMA IP names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Host to card.
    H2C,
    /// Card to host.
    C2H,
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::H2C => "H2C",
            Direction::C2H => "C2H",
        })
    }
}

/// What a channel's card-side interface is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChannelKind {
    /// AXI memory-mapped: transfers go to a card address.
    MemoryMapped,
    /// AXI-Stream: transfers are packets ended by TLAST.
    Stream,
}

impl fmt::Display for ChannelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ChannelKind::MemoryMapped => "memory-mapped",
            ChannelKind::Stream => "stream",
        })
    }
}
