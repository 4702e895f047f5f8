//! Thin wrappers over the system calls the driver backend uses, each turning errno into an
//! [`Error`] that names the node and says what to do.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::ptr::NonNull;
use std::time::{Duration, Instant};

use xdma_core::{Error, ErrorKind, Result};

/// The driver's per-call limit: one read or write moves at most this many bytes (the kernel's
/// MAX_RW_COUNT), so larger transfers are split by the caller.
pub const RW_MAX: usize = 0x7fff_f000;

/// `_IOR('q', 6, int)`: the sgdma nodes' ALIGN_GET ioctl, which returns the engine's address
/// alignment in bytes.
pub const IOCTL_XDMA_ALIGN_GET: libc::c_ulong =
    ioc_read(b'q', 6, std::mem::size_of::<libc::c_int>());

/// Linux's `_IOR(type, nr, size)` on the architectures with the generic ioctl layout
/// (direction bits 31..30 = 2 for read, size in 29..16, type in 15..8, number in 7..0).
const fn ioc_read(ty: u8, nr: u8, size: usize) -> libc::c_ulong {
    ((2 as libc::c_ulong) << 30)
        | ((size as libc::c_ulong) << 16)
        | ((ty as libc::c_ulong) << 8)
        | nr as libc::c_ulong
}

/// Maps an errno from a call on `node` to an error with the driver's meaning.
pub fn os_error(op: &'static str, node: &Path, source: io::Error) -> Error {
    let (kind, hint) = match source.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::ENODEV) | Some(libc::ENXIO) => (
            ErrorKind::NoDevice,
            format!(
                "the node is missing: is the XDMA driver loaded (`lsmod | grep xdma`), does the card enumerate (`lspci -d 10ee:`), and does the node prefix (XDMA_DEVICE) name it? Expected nodes like {}",
                node.display()
            ),
        ),
        Some(libc::EACCES) | Some(libc::EPERM) => (
            ErrorKind::PermissionDenied,
            "this user may not open the node: run as root, or give the user access with a udev rule (MODE=\"0660\", GROUP of the user)".to_string(),
        ),
        Some(libc::EBUSY) => (
            ErrorKind::Busy,
            "another process holds this node; a streaming C2H node takes one opener at a time: close the other reader".to_string(),
        ),
        Some(libc::ETIMEDOUT) => (
            ErrorKind::Timeout,
            "the engine did not finish within the driver's timeout (module parameters h2c_timeout / c2h_timeout): check that the card's AXI side answers and, for a stream, that the card sends data".to_string(),
        ),
        Some(libc::EIO) => (
            ErrorKind::TransferFailed,
            "the engine reported a failed transfer: see the kernel log (`dmesg`) for the engine status; an AXI error response from the card or a link error is the usual cause".to_string(),
        ),
        Some(libc::EINVAL) => (
            ErrorKind::InvalidInput,
            "the driver refused the request: the buffer and card address must share their offset within the engine's alignment (use DmaBuffer), H2C nodes are written and C2H nodes read".to_string(),
        ),
        Some(libc::EPROTO) => (
            ErrorKind::RegisterAccess,
            "register nodes (_user, _control) take exactly one 32-bit word per call at an offset that is a multiple of 4".to_string(),
        ),
        Some(libc::EFAULT) => (
            ErrorKind::InvalidInput,
            "the driver could not pin the buffer: pass memory this process owns".to_string(),
        ),
        _ => (
            ErrorKind::Backend,
            "an operating-system error the driver does not document".to_string(),
        ),
    };
    Error::Os {
        kind,
        op,
        node: node.to_path_buf(),
        hint,
        source,
    }
}

/// Opens `path` with `flags` (never creating it).
pub fn open(path: &Path, flags: libc::c_int) -> Result<File> {
    let c = CString::new(path.as_os_str().as_bytes()).map_err(|_| {
        Error::Config(format!(
            "device path {} contains a NUL byte",
            path.display()
        ))
    })?;
    loop {
        // SAFETY: `c` is a valid NUL-terminated string that lives across the call; open does
        // not keep the pointer.
        let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC) };
        if fd >= 0 {
            // SAFETY: `fd` was just returned by open, is valid, and nothing else owns it.
            return Ok(unsafe { File::from_raw_fd(fd) });
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(os_error("open", path, e));
        }
    }
}

/// pread of exactly `buf.len()` bytes at `offset`, split below the driver's per-call limit.
pub fn pread_all(file: &File, node: &Path, buf: &mut [u8], offset: u64) -> Result<()> {
    let mut done = 0usize;
    while done < buf.len() {
        let n = (buf.len() - done).min(RW_MAX);
        let off = offset_at(node, offset, done)?;
        // SAFETY: the pointer and length describe `n` writable bytes inside `buf`
        // (done + n <= buf.len()), which stays borrowed for the whole call.
        let r = unsafe { libc::pread(file.as_raw_fd(), buf.as_mut_ptr().add(done).cast(), n, off) };
        if advance(&mut done, r, "pread", node, buf.len())? {
            continue;
        }
    }
    Ok(())
}

/// pwrite of exactly `data.len()` bytes at `offset`, split below the driver's per-call limit.
pub fn pwrite_all(file: &File, node: &Path, data: &[u8], offset: u64) -> Result<()> {
    let mut done = 0usize;
    while done < data.len() {
        let n = (data.len() - done).min(RW_MAX);
        let off = offset_at(node, offset, done)?;
        // SAFETY: the pointer and length describe `n` readable bytes inside `data`
        // (done + n <= data.len()), which stays borrowed for the whole call.
        let r = unsafe { libc::pwrite(file.as_raw_fd(), data.as_ptr().add(done).cast(), n, off) };
        if advance(&mut done, r, "pwrite", node, data.len())? {
            continue;
        }
    }
    Ok(())
}

fn offset_at(node: &Path, offset: u64, done: usize) -> Result<libc::off_t> {
    offset
        .checked_add(done as u64)
        .and_then(|o| libc::off_t::try_from(o).ok())
        .ok_or_else(|| Error::Invalid {
            op: "file offset",
            problem: format!(
                "card address {offset:#x} + {done} does not fit a file offset of {}",
                node.display()
            ),
        })
}

/// Adds a call's result to `done`; returns Ok(true) to retry after EINTR.
fn advance(done: &mut usize, r: isize, op: &'static str, node: &Path, len: usize) -> Result<bool> {
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(true);
        }
        return Err(os_error(op, node, e));
    }
    if r == 0 {
        return Err(Error::ShortTransfer {
            op,
            node: node.to_path_buf(),
            done: *done as u64,
            len: len as u64,
        });
    }
    *done += r as usize;
    Ok(false)
}

/// One read(2) into `buf`; returns the bytes read (0 at end of file).
pub fn read_once(file: &File, node: &Path, buf: &mut [u8]) -> Result<usize> {
    let n = buf.len().min(RW_MAX);
    loop {
        // SAFETY: `buf` is a valid writable region of at least `n` bytes for the whole call.
        let r = unsafe { libc::read(file.as_raw_fd(), buf.as_mut_ptr().cast(), n) };
        if r >= 0 {
            return Ok(r as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(os_error("read", node, e));
        }
    }
}

/// One write(2) of all of `data`; the driver ends a stream packet at the end of each write.
pub fn write_once(file: &File, node: &Path, data: &[u8]) -> Result<usize> {
    loop {
        // SAFETY: `data` is a valid readable region of `data.len()` bytes for the whole call.
        let r = unsafe { libc::write(file.as_raw_fd(), data.as_ptr().cast(), data.len()) };
        if r >= 0 {
            return Ok(r as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(os_error("write", node, e));
        }
    }
}

/// Waits until `file` is readable or `timeout` passes; returns false on timeout.
pub fn poll_readable(file: &File, node: &Path, timeout: Duration) -> Result<bool> {
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        // Round up so that a sub-millisecond timeout still waits rather than spins.
        let ms = left.as_micros().div_ceil(1000).min(i32::MAX as u128) as libc::c_int;
        let mut pfd = libc::pollfd {
            fd: file.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: `pfd` is one valid pollfd that lives across the call; nfds is 1.
        let r = unsafe { libc::poll(&mut pfd, 1, ms) };
        if r > 0 {
            return Ok(true);
        }
        if r == 0 {
            return Ok(false);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(os_error("poll", node, e));
        }
    }
}

/// The engine alignment from the ALIGN_GET ioctl, or None when the node does not answer it
/// (an older driver, or an ordinary file).
pub fn align_get(file: &File) -> Option<u64> {
    let mut align: libc::c_int = 0;
    // SAFETY: ALIGN_GET writes one int through the pointer, which points to `align`, alive and
    // writable for the whole call; any other file type refuses the request with an errno.
    let r = unsafe { libc::ioctl(file.as_raw_fd(), IOCTL_XDMA_ALIGN_GET as _, &mut align) };
    (r == 0 && align > 0).then_some(align as u64)
}

/// A shared, read-write mapping of a register node (the user BAR).
#[derive(Debug)]
pub struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain shared memory (device registers or a file's pages); all access
// goes through volatile 32-bit loads and stores, which are as safe from several threads as the
// pread/pwrite path the driver offers.
unsafe impl Send for Mapping {}
// SAFETY: as above; `&Mapping` only offers whole-word volatile accesses.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps `len` bytes of `file` from offset 0.
    pub fn new(file: &File, node: &Path, len: usize) -> Result<Mapping> {
        // SAFETY: a fresh mapping chosen by the kernel (addr null) of `len` bytes of an open
        // file; no existing memory is affected. The result is checked for MAP_FAILED.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(os_error("mmap", node, io::Error::last_os_error()));
        }
        let ptr = NonNull::new(p.cast::<u8>())
            .ok_or_else(|| Error::Backend(format!("mmap of {} returned null", node.display())))?;
        Ok(Mapping { ptr, len })
    }

    /// The mapped length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Reads the little-endian word at `offset`; the caller has checked that the offset is
    /// 4-aligned and `offset + 4 <= len`.
    pub fn read(&self, offset: usize) -> Option<u32> {
        if offset & 3 != 0 || offset.checked_add(4)? > self.len {
            return None;
        }
        // SAFETY: offset + 4 <= len keeps the access inside the mapping, which lives as long
        // as self; the mapping is page-aligned, so a 4-aligned offset is a 4-aligned address.
        let v = unsafe { self.ptr.as_ptr().add(offset).cast::<u32>().read_volatile() };
        Some(u32::from_le(v))
    }

    /// Writes the little-endian word at `offset`; false when the offset is not valid.
    pub fn write(&self, offset: usize, value: u32) -> bool {
        if offset & 3 != 0 || offset.checked_add(4).is_none_or(|e| e > self.len) {
            return false;
        }
        // SAFETY: as in `read`; the mapping is writable (PROT_WRITE).
        unsafe {
            self.ptr
                .as_ptr()
                .add(offset)
                .cast::<u32>()
                .write_volatile(value.to_le())
        };
        true
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: ptr/len are exactly what mmap returned and were given; unmapped once.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn align_get_matches_the_drivers_number() {
        // _IOR('q', 6, int) as the driver's header computes it on x86-64 and arm64.
        assert_eq!(IOCTL_XDMA_ALIGN_GET, 0x8004_7106);
    }

    #[test]
    fn errno_maps_to_kinds_with_a_hint() {
        let node = Path::new("/dev/xdma0_h2c_0");
        for (errno, kind) in [
            (libc::ENOENT, ErrorKind::NoDevice),
            (libc::EACCES, ErrorKind::PermissionDenied),
            (libc::EBUSY, ErrorKind::Busy),
            (libc::ETIMEDOUT, ErrorKind::Timeout),
            (libc::EIO, ErrorKind::TransferFailed),
            (libc::EINVAL, ErrorKind::InvalidInput),
            (libc::EPROTO, ErrorKind::RegisterAccess),
            (libc::ENOSPC, ErrorKind::Backend),
        ] {
            let e = os_error("pwrite", node, io::Error::from_raw_os_error(errno));
            assert_eq!(e.kind(), kind, "errno {errno}");
            let msg = e.to_string();
            assert!(
                msg.contains("/dev/xdma0_h2c_0") && msg.contains("pwrite"),
                "{msg}"
            );
        }
    }
}
