//! Memory-mapped transfers at any card address on any engine: the buffer's first byte sits at
//! the card address's offset modulo 64, which meets every alignment rule up to 64 bytes (the
//! XDMA engines' widest) and is what the reference IP, which takes any alignment, does not
//! care about.

use xdma::{Card, CardAddr, DmaBuffer, Result};

/// The widest engine alignment rule the suite meets.
pub const MAX_ALIGN: u64 = 64;

/// A buffer of `len` bytes whose data starts at `addr`'s offset modulo [`MAX_ALIGN`], and that
/// offset.
pub fn buffer_for(addr: u64, len: usize) -> Result<(DmaBuffer, usize)> {
    let pad = (addr % MAX_ALIGN) as usize;
    DmaBuffer::new(len + pad).map(|b| (b, pad))
}

/// Writes `data` at card address `addr` through H2C channel `ch`.
pub fn write(card: &impl Card, ch: usize, addr: u64, data: &[u8]) -> Result<()> {
    let (mut b, pad) = buffer_for(addr, data.len())?;
    b[pad..].copy_from_slice(data);
    card.write_mm(ch, CardAddr(addr), &b[pad..]).map(|_| ())
}

/// Reads `len` bytes at card address `addr` through C2H channel `ch`.
pub fn read(card: &impl Card, ch: usize, addr: u64, len: usize) -> Result<Vec<u8>> {
    let (mut b, pad) = buffer_for(addr, len)?;
    card.read_mm(ch, CardAddr(addr), &mut b[pad..])?;
    Ok(b[pad..].to_vec())
}

/// The first byte at which `got` differs from `want`, with both values, for a failure message.
pub fn first_difference(got: &[u8], want: &[u8]) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{} bytes, expected {}", got.len(), want.len()));
    }
    let at = got.iter().zip(want).position(|(a, b)| a != b)?;
    let wrong = got.iter().zip(want).filter(|(a, b)| a != b).count();
    Some(format!(
        "byte {at} is {:#04x}, expected {:#04x} ({wrong} bytes differ)",
        got[at], want[at]
    ))
}
