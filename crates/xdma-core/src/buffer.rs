//! A page-aligned host buffer for DMA.

use std::alloc::{self, Layout};
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

use crate::error::{Error, Result};

/// The alignment of a [`DmaBuffer`]: one host page. The XDMA driver pins the user pages of a
/// transfer and builds one descriptor per page run; a page-aligned buffer gives the fewest
/// descriptors and meets any engine alignment (which is at most a page).
pub const DMA_ALIGN: usize = 4096;

/// A zero-initialised host buffer whose first byte sits on a 4096-byte boundary.
///
/// It dereferences to `[u8]`, so it can be passed wherever a byte slice is taken; the async API
/// takes it by value, because a buffer that a background thread fills must be owned.
pub struct DmaBuffer {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: a DmaBuffer owns its allocation exclusively, like a Box<[u8]>; moving it to another
// thread moves that ownership.
unsafe impl Send for DmaBuffer {}
// SAFETY: shared references only give `&[u8]`, which is safe to read from several threads.
unsafe impl Sync for DmaBuffer {}

impl DmaBuffer {
    /// Allocates `len` zeroed bytes aligned to [`DMA_ALIGN`]. A zero-length buffer allocates
    /// nothing (and is refused by every transfer call).
    pub fn new(len: usize) -> Result<DmaBuffer> {
        if len == 0 {
            return Ok(DmaBuffer::empty());
        }
        let layout = Self::layout(len)?;
        // SAFETY: the layout has a non-zero size (len > 0 here) and a valid power-of-two
        // alignment, as `alloc_zeroed` requires.
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or_else(|| {
            Error::Backend(format!(
                "cannot allocate a {len}-byte DMA buffer: out of memory"
            ))
        })?;
        Ok(DmaBuffer { ptr, len })
    }

    /// A zero-length buffer, which allocates nothing (and is refused by every transfer call).
    pub fn empty() -> DmaBuffer {
        // SAFETY: DMA_ALIGN is a non-zero constant, so the pointer is not null; with length 0
        // it is never dereferenced, and it is aligned like every DmaBuffer.
        let ptr = unsafe { NonNull::new_unchecked(DMA_ALIGN as *mut u8) };
        DmaBuffer { ptr, len: 0 }
    }

    /// A buffer holding a copy of `data`.
    pub fn from_slice(data: &[u8]) -> Result<DmaBuffer> {
        let mut b = DmaBuffer::new(data.len())?;
        b.copy_from_slice(data);
        Ok(b)
    }

    fn layout(len: usize) -> Result<Layout> {
        Layout::from_size_align(len, DMA_ALIGN).map_err(|_| Error::Invalid {
            op: "DmaBuffer::new",
            problem: format!(
                "a DMA buffer of {len} bytes is larger than the address space allows; ask for at most {} bytes",
                isize::MAX as usize - (DMA_ALIGN - 1)
            ),
        })
    }

    /// The buffer's length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for a zero-length buffer.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Deref for DmaBuffer {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: `ptr` points to `len` initialised (zeroed at allocation) bytes owned by self,
        // or is an aligned dangling pointer with len 0; the borrow of self keeps them alive and
        // unaliased by any mutable reference.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for DmaBuffer {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`; the exclusive borrow of self makes this the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for DmaBuffer {
    fn drop(&mut self) {
        if self.len == 0 {
            return;
        }
        if let Ok(layout) = Self::layout(self.len) {
            // SAFETY: the pointer came from `alloc_zeroed` with exactly this layout (same len,
            // same alignment) and is freed once, here.
            unsafe { alloc::dealloc(self.ptr.as_ptr(), layout) };
        }
    }
}

impl fmt::Debug for DmaBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DmaBuffer")
            .field("addr", &self.ptr)
            .field("len", &self.len)
            .finish()
    }
}

impl Clone for DmaBuffer {
    fn clone(&self) -> DmaBuffer {
        // Cloning allocates; an allocation failure here is an out-of-memory abort, as it is
        // for Vec::clone.
        match DmaBuffer::from_slice(self) {
            Ok(b) => b,
            Err(_) => alloc::handle_alloc_error(
                Layout::from_size_align(self.len, DMA_ALIGN).unwrap_or(Layout::new::<u8>()),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_zeroed_and_writable() {
        for len in [1, 100, 4096, 4097, 1 << 20] {
            let mut b = DmaBuffer::new(len).expect("alloc");
            assert_eq!(b.as_ptr() as usize % DMA_ALIGN, 0, "len {len}");
            assert_eq!(b.len(), len);
            assert!(b.iter().all(|&x| x == 0));
            b[len - 1] = 0xa5;
            assert_eq!(b[len - 1], 0xa5);
        }
    }

    #[test]
    fn empty_and_copies() {
        let e = DmaBuffer::new(0).expect("empty");
        assert!(e.is_empty());
        assert_eq!(&*e, &[] as &[u8]);
        let b = DmaBuffer::from_slice(&[1, 2, 3]).expect("copy");
        let c = b.clone();
        assert_eq!(&*c, &[1, 2, 3]);
        assert_eq!(c.as_ptr() as usize % DMA_ALIGN, 0);
    }

    #[test]
    fn impossible_size_is_an_error_not_a_panic() {
        // A size no allocation can have is the caller's input, not a configuration.
        let err = DmaBuffer::new(usize::MAX - 10).expect_err("too large");
        assert_eq!(err.kind(), crate::error::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("at most"), "{err}");
    }
}
