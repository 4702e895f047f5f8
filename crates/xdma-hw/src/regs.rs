//! Register words on the driver's register nodes (`_user`, `_control`), and the checks open
//! makes with them: the DMA BAR's and the card's identifiers, the user BAR's size.

use std::path::Path;

use crate::error::count;
use crate::sys::{self, os_error, FileKind, Io};
use xdma_core::{Error, Result};
use xdma_regmap::Target;

/// The card's identifier register on the user BAR.
pub(crate) const REG_CARD_ID: u64 = 0x000;
/// The card's version register on the user BAR.
pub(crate) const REG_CARD_VERSION: u64 = 0x004;

/// The largest user BAR the mapping probe looks for (a 32-bit BAR's limit).
pub(crate) const MAX_BAR: u64 = 1 << 32;

/// One 32-bit word from a register node at `offset`.
/// A register access that moved other than one word: the driver's register nodes always move
/// exactly 4 bytes (or fail with EPROTO), so the node is something else.
pub(crate) fn not_a_register_node(op: &str, node: &Path, offset: u64, n: usize) -> Error {
    Error::NoDevice {
        what: format!("the XDMA driver's register node {}", node.display()),
        hint: format!(
            "a 4-byte {op} at offset {offset:#x} moved {n} bytes, which the driver's register nodes never do: the node is not the driver's (/dev/null, an empty or short file); check that XDMA_DEVICE names the card's node prefix"
        ),
    }
}

pub(crate) fn read_word(io: &dyn Io, node: &Path, offset: u64) -> Result<u32> {
    let mut b = [0u8; 4];
    loop {
        match io.pread(&mut b, offset) {
            Ok(r) => {
                let n = count("pread", node, r, 4)?;
                if n != 4 {
                    return Err(not_a_register_node("pread", node, offset, n));
                }
                return Ok(u32::from_le_bytes(b));
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(os_error("pread", node, e)),
        }
    }
}

pub(crate) fn write_word(io: &dyn Io, node: &Path, offset: u64, value: u32) -> Result<()> {
    loop {
        match io.pwrite(&value.to_le_bytes(), offset) {
            Ok(r) => {
                let n = count("pwrite", node, r, 4)?;
                if n != 4 {
                    return Err(not_a_register_node("pwrite", node, offset, n));
                }
                return Ok(());
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(os_error("pwrite", node, e)),
        }
    }
}

/// The user BAR's size as the system reports it: a regular file's size (a FUSE mount or a
/// test folder), or, for the driver's character device, the longest mapping its mmap accepts
/// (the driver refuses a mapping longer than the BAR, and BARs are powers of two).
pub(crate) fn bar_size(io: &dyn Io, node: &Path) -> Result<u64> {
    let kind = io.kind().map_err(|e| os_error("fstat", node, e))?;
    let size = match kind {
        FileKind::Regular(n) => n & !3,
        FileKind::CharDevice => {
            let mut found = 0u64;
            let mut len = sys::page_size() as u64;
            while len <= MAX_BAR {
                let Ok(l) = usize::try_from(len) else { break };
                match io.map(l) {
                    Ok(_) => found = len,
                    Err(_) => break,
                }
                len *= 2;
            }
            found
        }
        FileKind::Other => 0,
    };
    if size < 4 {
        return Err(Error::NoDevice {
            what: format!("the user BAR behind {}", node.display()),
            hint: format!(
                "its size could not be learned ({kind:?}: neither a file size nor a mapping the node accepts); the driver does not check register offsets, so the backend will not guess"
            ),
        });
    }
    Ok(size)
}

/// Refuses a `_control` node that is not the XDMA IP's DMA BAR, with the driver's own test
/// for it (`is_config_bar`: the IRQ and config blocks' identifiers), so that a file of zeros
/// or `/dev/zero` is not taken for a card with no channels.
pub(crate) fn check_dma_bar(io: &dyn Io, node: &Path) -> Result<()> {
    let irq_at = xdma_regmap::irq::BASE + xdma_regmap::irq::IDENTIFIER;
    let cfg_at = xdma_regmap::config::BASE + xdma_regmap::config::IDENTIFIER;
    let irq = read_word(io, node, irq_at)?;
    let cfg = read_word(io, node, cfg_at)?;
    if xdma_regmap::is_dma_bar(irq, cfg) {
        return Ok(());
    }
    Err(Error::NoDevice {
        what: format!("the XDMA IP's DMA BAR behind {}", node.display()),
        hint: format!(
            "its IRQ block identifier (offset {irq_at:#x}) reads {irq:#010x} and its config block identifier ({cfg_at:#x}) reads {cfg:#010x}, where the XDMA IP has {:#010x} and {:#010x} (the version byte aside; the driver's own test for its DMA BAR): the node is not the driver's _control node (a file of zeros, /dev/zero, another device); check that XDMA_DEVICE names the card's node prefix",
            Target::Irq.id_base(),
            Target::Config.id_base()
        ),
    })
}

/// Refuses a user BAR whose ID register is not the expected card's (`expected` 0: any ID
/// but the two that no card presents, all zeros and all ones).
pub(crate) fn check_card_id(id: u32, expected: u32, node: &Path) -> Result<()> {
    let refuse = |why: String| Error::NoDevice {
        what: format!("the card behind {}", node.display()),
        hint: why,
    };
    if id == 0 || id == u32::MAX {
        return Err(refuse(format!(
            "its ID register reads {id:#010x}, which is no card's identifier: the node is not a card's user BAR (a file of zeros, /dev/zero, or a BAR whose reads fail); check that XDMA_DEVICE names the card's node prefix"
        )));
    }
    if expected != 0 && id != expected {
        return Err(refuse(format!(
            "its ID register reads {id:#010x}, not this card's {expected:#010x}: it is another design, whose registers mean other things; name this card's nodes in XDMA_DEVICE, or set [hw] card_id to the design's identifier (0 accepts any)"
        )));
    }
    Ok(())
}
