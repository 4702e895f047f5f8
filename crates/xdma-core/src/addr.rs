//! The card address newtype.

use std::fmt;

/// A byte address in the card's memory-mapped space (the AXI address that the DMA engine puts
/// on the card's `s_axi` port; on the Linux driver, the file offset of an `_h2c_<k>` or
/// `_c2h_<k>` node). A newtype so that a card address is never confused with a host pointer, a
/// length or a register offset.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(transparent)]
pub struct CardAddr(pub u64);

impl CardAddr {
    /// The address as a number.
    pub const fn raw(self) -> u64 {
        self.0
    }

    /// The address `offset` bytes further on, or `None` on overflow.
    pub fn checked_add(self, offset: u64) -> Option<CardAddr> {
        self.0.checked_add(offset).map(CardAddr)
    }

    /// True when the address is a multiple of `align` (a power of two; 0 and 1 mean no rule).
    pub fn is_aligned(self, align: u64) -> bool {
        align <= 1 || self.0 & (align - 1) == 0
    }
}

impl fmt::Display for CardAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

impl From<u64> for CardAddr {
    fn from(v: u64) -> CardAddr {
        CardAddr(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_and_display() {
        let a = CardAddr(0x1000);
        assert_eq!(a.checked_add(0x10), Some(CardAddr(0x1010)));
        assert_eq!(CardAddr(u64::MAX).checked_add(1), None);
        assert!(a.is_aligned(4096));
        assert!(!CardAddr(0x1010).is_aligned(0x20));
        assert!(CardAddr(3).is_aligned(1));
        assert_eq!(a.to_string(), "0x1000");
    }
}
