//! The guest's RAM as the card's DMA sees it: the memory files QEMU sends with `SYNC_SYSMEM`,
//! mapped into this process.
//!
//! QEMU resends the whole layout whenever its memory map changes (many times while the
//! firmware and the kernel boot), so [`GuestMemory::sync`] drops every mapping and maps the
//! new regions. A DMA that is not wholly inside the guest's RAM is a [`DmaFault`], as the bus
//! would answer it with an unsupported request.

use std::num::NonZeroUsize;
use std::os::fd::OwnedFd;
use std::ptr::NonNull;

use nix::sys::mman::{self, MapFlags, ProtFlags};
use thiserror::Error;
use xdma_ip::{DmaFault, HostMemory};

use crate::proxy::SysmemRegion;

/// A region that cannot be mapped.
#[derive(Debug, Error)]
#[error("cannot map guest RAM at {gpa:#x} ({size:#x} bytes from file offset {offset:#x}): {why}")]
pub struct MapError {
    /// Guest physical address of the region.
    pub gpa: u64,
    /// Its size.
    pub size: u64,
    /// Its offset in the file.
    pub offset: u64,
    /// What went wrong.
    pub why: String,
}

/// One mapped region.
#[derive(Debug)]
struct Mapping {
    /// Guest physical address of the region's first byte.
    gpa: u64,
    /// Bytes of guest RAM in the region.
    size: u64,
    /// Start of the mapping (page aligned, at or before the region's first byte).
    base: NonNull<u8>,
    /// Bytes mapped.
    len: usize,
    /// Where the region's first byte lies in the mapping.
    skip: usize,
    /// The memory file, kept open as long as its mapping lives.
    _fd: OwnedFd,
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `base` and `len` are exactly what mmap returned for this mapping, which is
        // unmapped once, here; no reference into it outlives the mapping (accesses copy).
        if let Err(e) = unsafe { mman::munmap(self.base.cast(), self.len) } {
            tracing::warn!("munmap of guest RAM at {:#x}: {e}", self.gpa);
        }
    }
}

/// The guest's RAM, by guest physical address.
#[derive(Debug, Default)]
pub struct GuestMemory {
    regions: Vec<Mapping>,
}

impl GuestMemory {
    /// No RAM yet: every DMA faults until the first [`GuestMemory::sync`].
    pub fn new() -> GuestMemory {
        GuestMemory::default()
    }

    /// Replaces the layout with `regions`. A region that cannot be mapped is left out (every
    /// DMA into it faults) and reported; the others are mapped.
    pub fn sync(&mut self, regions: Vec<SysmemRegion>) -> Vec<MapError> {
        self.regions.clear();
        let mut errors = Vec::new();
        for r in regions {
            if r.size == 0 {
                continue;
            }
            match map(r) {
                Ok(m) => self.regions.push(m),
                Err(e) => errors.push(e),
            }
        }
        self.regions.sort_by_key(|m| m.gpa);
        errors
    }

    /// The layout as `(guest physical address, size)` pairs, for logs and tests.
    pub fn layout(&self) -> Vec<(u64, u64)> {
        self.regions.iter().map(|m| (m.gpa, m.size)).collect()
    }

    /// Splits `[addr, addr + len)` into pieces that each lie in one region, calling `f` with
    /// the host pointer and length of each, in order. Fails, touching nothing, unless the
    /// whole range is RAM.
    fn pieces(
        &self,
        addr: u64,
        len: usize,
        mut f: impl FnMut(*mut u8, usize, usize),
    ) -> Result<(), DmaFault> {
        let fault = DmaFault { addr, len };
        let end = addr.checked_add(len as u64).ok_or(fault)?;
        // Check first, so that a fault leaves memory untouched.
        let mut plan = Vec::with_capacity(1);
        let mut at = addr;
        while at < end {
            let m = self
                .regions
                .iter()
                .find(|m| m.gpa <= at && at < m.gpa + m.size)
                .ok_or(fault)?;
            let n = (end.min(m.gpa + m.size) - at) as usize;
            let off = m.skip + (at - m.gpa) as usize;
            // SAFETY: `off + n` is within the mapping (the region is `size` bytes from `skip`
            // and the mapping covers it), so the pointer stays inside one allocation.
            let p = unsafe { m.base.as_ptr().add(off) };
            plan.push((p, n, (at - addr) as usize));
            at += n as u64;
        }
        for (p, n, done) in plan {
            f(p, n, done);
        }
        Ok(())
    }
}

fn map(r: SysmemRegion) -> Result<Mapping, MapError> {
    let err = |why: String| MapError {
        gpa: r.gpa,
        size: r.size,
        offset: r.offset,
        why,
    };
    let page = nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
        .ok()
        .flatten()
        .map_or(4096, |p| p as u64);
    let aligned = r.offset & !(page - 1);
    let skip = r.offset - aligned;
    let len = usize::try_from(r.size + skip).map_err(|_| err("too large".into()))?;
    let len_nz = NonZeroUsize::new(len).ok_or_else(|| err("empty".into()))?;
    let file_offset = i64::try_from(aligned).map_err(|_| err("offset too large".into()))?;
    // SAFETY: a fresh shared mapping of a memory file at an address the kernel picks aliases
    // no Rust object; the guest writes into it concurrently, which is why it is only ever
    // accessed by copying bytes through raw pointers, never through references.
    let base = unsafe {
        mman::mmap(
            None,
            len_nz,
            ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
            MapFlags::MAP_SHARED,
            &r.fd,
            file_offset,
        )
    }
    .map_err(|e| err(e.to_string()))?;
    Ok(Mapping {
        gpa: r.gpa,
        size: r.size,
        base: base.cast(),
        len,
        skip: skip as usize,
        _fd: r.fd,
    })
}

impl HostMemory for GuestMemory {
    fn read(&mut self, addr: u64, buf: &mut [u8]) -> Result<(), DmaFault> {
        let dst = buf.as_mut_ptr();
        self.pieces(addr, buf.len(), |p, n, done| {
            // SAFETY: `p..p+n` lies in a live mapping (see `pieces`) and `dst+done..+n` in
            // `buf`; the two never overlap, since no slice is ever made of a guest mapping, so
            // `buf` cannot lie in one.
            unsafe { std::ptr::copy_nonoverlapping(p, dst.add(done), n) }
        })
    }

    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), DmaFault> {
        let src = data.as_ptr();
        self.pieces(addr, data.len(), |p, n, done| {
            // SAFETY: as in `read`, with the roles of the two ranges swapped.
            unsafe { std::ptr::copy_nonoverlapping(src.add(done), p, n) }
        })
    }
}
