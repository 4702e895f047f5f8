//! The register table's registers on a card: lookups by name, 64-bit counters read as the map
//! says (low word first, which latches the high word), frame source 0 started in a mode, and
//! the rest state.

use card_regs::{Access, Register, REGISTERS};
use xdma::{Card, Result};

use crate::caps::Mode;

/// The register of this name in the table. A name the table lacks is a bug in the test.
pub fn by_name(name: &str) -> &'static Register {
    REGISTERS
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("the register table has no {name}"))
}

/// Reads a register, a 64-bit one as its low word then its high word.
pub fn read(card: &impl Card, reg: &Register) -> Result<u64> {
    let lo = card.read_reg(u64::from(reg.offset))?;
    if reg.width == 64 {
        let hi = card.read_reg(u64::from(reg.offset) + 4)?;
        Ok(u64::from(lo) | u64::from(hi) << 32)
    } else {
        Ok(u64::from(lo))
    }
}

/// Reads a register by name.
pub fn read_named(card: &impl Card, name: &str) -> Result<u64> {
    read(card, by_name(name))
}

/// Writes a 32-bit register by offset constant.
pub fn write(card: &impl Card, offset: u32, value: u32) -> Result<()> {
    card.write_reg(u64::from(offset), value)
}

/// Starts frame source 0 in `mode`: CONTROL set to the mode with channel 0 enabled.
pub fn start(card: &impl Card, mode: Mode) -> Result<()> {
    write(
        card,
        card_regs::CONTROL,
        mode.value() | card_regs::control::CH0_EN_MASK as u32,
    )
}

/// The registers that the host can set and that keep what it wrote: read/write and not
/// changed by hardware.
pub fn settable() -> impl Iterator<Item = &'static Register> {
    REGISTERS
        .iter()
        .filter(|r| r.access == Access::ReadWrite && !r.volatile && r.width == 32)
}

/// Puts the card back into the state reset leaves it in, as far as the host can: stream mode
/// OFF first (so that nothing runs while the rest changes), every settable register at its
/// reset value, every write-1-to-clear bit cleared, and the counters zeroed. Only what the
/// register table says is written. Errors are returned, the first one, after trying all.
pub fn restore(card: &impl Card) -> Result<()> {
    let mut first = Ok(());
    let mut keep = |r: Result<()>| {
        if first.is_ok() {
            first = r;
        }
    };
    keep(write(
        card,
        card_regs::CONTROL,
        card_regs::control::RESET as u32,
    ));
    for r in settable() {
        keep(write(card, r.offset, r.reset as u32));
    }
    for r in REGISTERS
        .iter()
        .filter(|r| r.access == Access::WriteOneToClear)
    {
        keep(write(card, r.offset, r.mask as u32));
    }
    keep(write(
        card,
        card_regs::CLEAR,
        card_regs::clear::COUNTERS_MASK as u32,
    ));
    first
}
