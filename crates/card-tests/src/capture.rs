//! The CAPTURE ring read from the host: the frames between CAP_RPTR and CAP_WPTR read through
//! a memory-mapped C2H channel, split by their headers' lengths, and the read pointer advanced
//! past them, as docs/register-map.md describes the ring.

use xdma::{Card, Error, Result};

use crate::{mm, regs};

/// Bytes a frame of `len` takes in the ring: padded up to the stream's 16-byte beat.
pub fn padded(len: usize) -> usize {
    len.div_ceil(frame::BEAT_BYTES) * frame::BEAT_BYTES
}

/// A capture ring in card memory.
#[derive(Debug, Clone, Copy)]
pub struct Ring {
    /// CAP_BASE: the ring's card address (4 KiB aligned).
    pub base: u32,
    /// CAP_SIZE: bytes (a multiple of 4 KiB).
    pub size: u32,
}

impl Ring {
    /// Programs CAP_BASE and CAP_SIZE (which empties the ring) and the fill interrupt level
    /// (0: none). Capture must be stopped.
    pub fn set_up(&self, card: &impl Card, irq_level: u32) -> Result<()> {
        regs::write(card, card_regs::CAP_BASE, self.base)?;
        regs::write(card, card_regs::CAP_SIZE, self.size)?;
        regs::write(card, card_regs::CAP_IRQ_LEVEL, irq_level)
    }

    /// Reads `len` bytes of the ring from offset `at`, across its end if need be.
    fn read(&self, card: &impl Card, ch: usize, at: u32, len: u32) -> Result<Vec<u8>> {
        let first = len.min(self.size - at);
        let mut out = mm::read(
            card,
            ch,
            u64::from(self.base) + u64::from(at),
            first as usize,
        )?;
        if first < len {
            out.extend(mm::read(
                card,
                ch,
                u64::from(self.base),
                (len - first) as usize,
            )?);
        }
        Ok(out)
    }

    /// Takes every whole frame the ring holds: reads CAP_WPTR, reads the bytes from CAP_RPTR
    /// up to it, splits them into frames and writes CAP_RPTR past the whole ones. Returns the frames in
    /// ring order.
    pub fn take(&self, card: &impl Card, ch: usize) -> Result<Vec<Vec<u8>>> {
        let wptr = card.read_reg(u64::from(card_regs::CAP_WPTR))?;
        let rptr = card.read_reg(u64::from(card_regs::CAP_RPTR))?;
        let fill = (wptr + self.size - rptr) % self.size;
        if fill == 0 {
            return Ok(Vec::new());
        }
        let bytes = self.read(card, ch, rptr, fill)?;
        let mut frames = Vec::new();
        let mut at = 0usize;
        // CAP_WPTR moves as DDR acknowledges each burst, so the last frame may be in part
        // behind it: only whole frames are taken, and the read pointer stops before the rest.
        while bytes.len() - at >= frame::HEADER_LEN {
            let rest = &bytes[at..];
            let (_, payload) = frame::parse_header(rest).map_err(|e| {
                Error::Backend(format!(
                    "capture ring: no frame header at ring offset {} ({e})",
                    (rptr as usize + at) % self.size as usize
                ))
            })?;
            let len = payload as usize + frame::OVERHEAD;
            if len > rest.len() {
                break;
            }
            frames.push(rest[..len].to_vec());
            at += padded(len).min(rest.len());
        }
        let next = (rptr as usize + at) % self.size as usize;
        regs::write(card, card_regs::CAP_RPTR, next as u32)?;
        Ok(frames)
    }
}
