//! Host memory as the driver and the IP both see it: one range of bus addresses with the
//! driver's coherent allocations (descriptor rings, result rings, poll write-backs) at its
//! start and the pinned pages of the caller's buffer after them.

use xdma_ip::{BufferMemory, DmaFault, HostMemory};
use xdma_regmap::HOST_PAGE;

/// Host memory at a bus address, no IOMMU: bus address and physical address are one.
#[derive(Debug)]
pub struct HostRam {
    mem: BufferMemory,
    /// End of the coherent allocations, an offset into `bytes`.
    coherent_end: usize,
    /// The callers' pinned buffers, as offset ranges, in address order.
    pinned: Vec<(usize, usize)>,
}

impl HostRam {
    /// `size` bytes of host memory at bus address `base` (a multiple of the host page).
    pub fn new(base: u64, size: usize) -> HostRam {
        HostRam {
            mem: BufferMemory::new(base - base % HOST_PAGE, size),
            coherent_end: 0,
            pinned: Vec::new(),
        }
    }

    /// The bus address of the first byte.
    pub fn base(&self) -> u64 {
        self.mem.base()
    }

    /// Bytes of host memory.
    pub fn size(&self) -> usize {
        self.mem.len()
    }

    /// A coherent allocation of `len` bytes, page aligned and zeroed, as
    /// `dma_alloc_coherent` gives: its bus address, or `None` when memory is full.
    /// Coherent memory is allocated at probe, before any call pins a buffer.
    pub(crate) fn alloc_coherent(&mut self, len: usize) -> Option<u64> {
        let start = round_up(self.coherent_end, HOST_PAGE as usize);
        let end = start.checked_add(len)?;
        if end > self.mem.len() || !self.pinned.is_empty() {
            return None;
        }
        let addr = self.base() + start as u64;
        self.mem.slice_mut(addr, len).ok()?.fill(0);
        self.coherent_end = end;
        Some(addr)
    }

    /// Places a caller's buffer of `len` bytes that starts `page_offset` bytes into a page (a
    /// user buffer's address modulo the page, which decides how the driver cuts it) in the
    /// first free pages: its bus address, or `None` when memory is full. The pages stay
    /// pinned until [`HostRam::unpin`].
    pub(crate) fn pin(&mut self, len: usize, page_offset: usize) -> Option<u64> {
        let page = HOST_PAGE as usize;
        let mut from = self.coherent_end;
        let mut at = self.pinned.len();
        for (i, &(s, e)) in self.pinned.iter().enumerate() {
            let start = round_up(from, page) + page_offset % page;
            if start.checked_add(len)? <= s {
                at = i;
                break;
            }
            from = e;
        }
        let start = round_up(from, page) + page_offset % page;
        let end = start.checked_add(len)?;
        if end > self.mem.len() {
            return None;
        }
        if at == self.pinned.len() {
            self.pinned.push((start, end));
        } else {
            self.pinned.insert(at, (start, end));
        }
        Some(self.base() + start as u64)
    }

    /// Releases the pinned buffer at `addr` (its pages unpinned and unmapped).
    pub(crate) fn unpin(&mut self, addr: u64) {
        let off = addr.wrapping_sub(self.base()) as usize;
        self.pinned.retain(|&(s, _)| s != off);
    }

    /// The bytes at a bus address, for the driver's own copies.
    pub(crate) fn slice(&self, addr: u64, len: usize) -> Result<&[u8], DmaFault> {
        self.mem.slice(addr, len)
    }

    /// A little-endian dword at a bus address.
    pub(crate) fn dword(&self, addr: u64) -> Result<u32, DmaFault> {
        let b = self.slice(addr, 4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

fn round_up(x: usize, to: usize) -> usize {
    x.div_ceil(to) * to
}

impl HostMemory for HostRam {
    fn read(&mut self, addr: u64, buf: &mut [u8]) -> Result<(), DmaFault> {
        self.mem.read(addr, buf)
    }

    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), DmaFault> {
        self.mem.write(addr, data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coherent_allocations_are_page_aligned_and_pins_keep_their_offset() {
        let mut ram = HostRam::new(0x1_0000_0000, 64 << 10);
        let a = ram.alloc_coherent(100).expect("room");
        let b = ram.alloc_coherent(32).expect("room");
        assert_eq!(a, 0x1_0000_0000);
        assert_eq!(b, 0x1_0000_1000);
        let p = ram.pin(10, 0xF00).expect("room");
        assert_eq!(p % HOST_PAGE, 0xF00);
        assert!(p > b);
        // A second buffer takes the next free page; the first one's page is free again after
        // it is unpinned, and a buffer that fits before the second goes there.
        let q = ram.pin(5000, 0).expect("room");
        assert_eq!(q, 0x1_0000_3000);
        ram.unpin(p);
        assert_eq!(ram.pin(1, 0).expect("room"), 0x1_0000_2000);
        assert!(ram.pin(1 << 20, 0).is_none());
        assert!(
            ram.alloc_coherent(8).is_none(),
            "no coherent memory once buffers are pinned"
        );
        assert!(ram.slice(0x1_0000_0000 + (64 << 10), 1).is_err());
    }
}
