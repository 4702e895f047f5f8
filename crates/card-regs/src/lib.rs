//! card-regs: the register map of the card's user BAR as Rust constants.
//!
//! `generated.rs` is written by `cargo xtask codegen` from `hdl/regs.toml`, the same table that
//! the RTL's `hdl/include/card_regs.vh` comes from; `cargo xtask codegen --check` (and the tidy
//! test of xtask) fails when it is stale. Each register has an offset constant (`CONTROL`,
//! or `SRC0_SENT_LO`/`SRC0_SENT_HI` for a 64-bit counter), a module of its fields
//! (`control::MODE_LSB`, `control::MODE_GEN`), and an entry in [`REGISTERS`].
//!
//! ```
//! use card_regs::{control, CONTROL, REGISTERS};
//! let value = (control::MODE_GEN << control::MODE_LSB) | control::CH0_EN_MASK;
//! assert_eq!(CONTROL, 0x010);
//! assert!(value & !control::MASK == 0);
//! assert!(REGISTERS.iter().any(|r| r.name == "CONTROL"));
//! ```

mod generated;
pub mod host;

pub use generated::*;

/// How the host may access a register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads return the value; writes are ignored.
    ReadOnly,
    /// Reads return what was written (within the field bits).
    ReadWrite,
    /// A write of 1 to a bit takes an action; reads return zero.
    WriteOnly,
    /// Reads return the value; a write of 1 to a bit clears it.
    WriteOneToClear,
}

/// A bit field of a register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// Upper-case name.
    pub name: &'static str,
    /// Lowest bit.
    pub lsb: u32,
    /// Width in bits.
    pub bits: u32,
    /// Meaning.
    pub doc: &'static str,
}

/// One register of the map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Register {
    /// Upper-case name, as in `hdl/regs.toml`.
    pub name: &'static str,
    /// Byte offset of the (low) word.
    pub offset: u32,
    /// 32, or 64 for a counter read as a low and a high word.
    pub width: u32,
    /// Host access.
    pub access: Access,
    /// Value after reset.
    pub reset: u64,
    /// Bits that fields cover; the others read as zero and ignore writes.
    pub mask: u64,
    /// True when hardware changes the value on its own.
    pub volatile: bool,
    /// Meaning.
    pub doc: &'static str,
    /// Fields, lowest first as the table lists them.
    pub fields: &'static [Field],
}

impl Register {
    /// Byte offsets of the words, low word first.
    pub fn words(&self) -> impl Iterator<Item = u32> {
        let offset = self.offset;
        (0..self.width / 32).map(move |i| offset + 4 * i)
    }
}

/// The register at a byte offset (any of its words), if there is one.
pub fn register_at(offset: u32) -> Option<&'static Register> {
    let word = offset & !3;
    REGISTERS.iter().find(|r| r.words().any(|w| w == word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_unique_and_aligned() {
        let mut seen = Vec::new();
        for r in REGISTERS {
            assert_eq!(r.offset % (r.width / 8), 0, "{} is aligned", r.name);
            for w in r.words() {
                assert!(!seen.contains(&w), "{} overlaps at {w:#x}", r.name);
                seen.push(w);
                assert!(w < WINDOW);
            }
        }
    }

    #[test]
    fn lookup_finds_both_words_of_a_counter() {
        assert_eq!(register_at(SRC0_SENT_HI).map(|r| r.name), Some("SRC0_SENT"));
        assert_eq!(register_at(SRC0_SENT_LO).map(|r| r.name), Some("SRC0_SENT"));
        assert_eq!(register_at(0xffc), None);
    }

    #[test]
    fn reset_values_lie_inside_the_fields() {
        for r in REGISTERS {
            assert_eq!(r.reset & !r.mask, 0, "{}", r.name);
        }
    }
}
