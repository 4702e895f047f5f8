//! The system calls the driver backend makes on a device node, behind the [`Io`] trait so that
//! the driver's behaviour that no file system can reproduce (errno 512, counts outside the
//! buffer, a DMA cut short by a signal) can be put in front of the backend by a fake node in the
//! tests. [`OsIo`] is the real thing: one open file descriptor.
//!
//! Every call returns the driver's raw answer: `Ok(r)` with whatever count the call returned
//! (which the callers check against the buffer, because old drivers return counts outside it),
//! or `Err` with the errno. EINTR is returned too; the callers decide whether to retry.

use std::ffi::CString;
use std::fmt;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::ptr::NonNull;

use xdma_core::{Error, ErrorKind};
use xdma_regmap::driver;

/// The kernel's per-call limit: one read or write moves at most this many bytes (MAX_RW_COUNT).
pub const RW_MAX: usize = 0x7fff_f000;

// The driver's ABI lives with the rest of the XDMA contract; here as the C types the system
// calls take.
pub use xdma_regmap::driver::{IocInfo, ERESTARTSYS, XDMA_XCL_MAGIC};

/// ALIGN_GET (see [`xdma_regmap::driver::IOCTL_XDMA_ALIGN_GET`]).
pub const IOCTL_XDMA_ALIGN_GET: libc::c_ulong = driver::IOCTL_XDMA_ALIGN_GET as libc::c_ulong;
/// ADDRMODE_SET.
pub const IOCTL_XDMA_ADDRMODE_SET: libc::c_ulong = driver::IOCTL_XDMA_ADDRMODE_SET as libc::c_ulong;
/// ADDRMODE_GET.
pub const IOCTL_XDMA_ADDRMODE_GET: libc::c_ulong = driver::IOCTL_XDMA_ADDRMODE_GET as libc::c_ulong;
/// XDMA_IOCINFO.
pub const XDMA_IOCINFO: libc::c_ulong = driver::XDMA_IOCINFO as libc::c_ulong;
/// XDMA_IOCOFFLINE.
pub const XDMA_IOCOFFLINE: libc::c_ulong = driver::XDMA_IOCOFFLINE as libc::c_ulong;
/// XDMA_IOCONLINE.
pub const XDMA_IOCONLINE: libc::c_ulong = driver::XDMA_IOCONLINE as libc::c_ulong;

/// What kind of file a node is, from fstat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A character device: the driver's own node.
    CharDevice,
    /// A regular file of this many bytes (a FUSE mount of the simulated card, a test folder).
    Regular(u64),
    /// Anything else (a FIFO, a socket).
    Other,
}

/// The operations the backend performs on one open node.
pub trait Io: Send + Sync + fmt::Debug {
    /// pread(2): the raw count or the errno.
    fn pread(&self, buf: &mut [u8], offset: u64) -> io::Result<isize>;
    /// pwrite(2).
    fn pwrite(&self, data: &[u8], offset: u64) -> io::Result<isize>;
    /// read(2).
    fn read(&self, buf: &mut [u8]) -> io::Result<isize>;
    /// write(2).
    fn write(&self, data: &[u8]) -> io::Result<isize>;
    /// An ioctl whose argument points to one int, read or written by the driver.
    fn ioctl_int(&self, request: libc::c_ulong, value: &mut libc::c_int) -> io::Result<()>;
    /// XDMA_IOCINFO.
    fn ioctl_info(&self, info: &mut IocInfo) -> io::Result<()>;
    /// poll(2) for POLLIN with a timeout in milliseconds (-1: forever); true when readable.
    fn poll_in(&self, timeout_ms: libc::c_int) -> io::Result<bool>;
    /// fstat(2): what the node is.
    fn kind(&self) -> io::Result<FileKind>;
    /// Maps `len` bytes from offset 0, shared and writable.
    fn map(&self, len: usize) -> io::Result<Mapping>;
    /// Whether the node lives on a FUSE file system (`xdma-fuse`'s mount).
    fn on_fuse(&self) -> bool {
        false
    }
}

/// `FUSE_SUPER_MAGIC` of statfs(2).
const FUSE_SUPER_MAGIC: i64 = 0x6573_5546;

/// Opens nodes. The real one calls open(2); the tests' fake opens fake nodes.
pub trait Opener: Send + Sync + fmt::Debug {
    /// Opens `path` with `flags` (never creating it).
    fn open(&self, path: &Path, flags: libc::c_int) -> io::Result<Box<dyn Io>>;
}

/// The operating system's open(2).
#[derive(Debug, Default)]
pub struct OsOpener;

impl Opener for OsOpener {
    fn open(&self, path: &Path, flags: libc::c_int) -> io::Result<Box<dyn Io>> {
        let c = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
        loop {
            // SAFETY: `c` is a valid NUL-terminated string that lives across the call; open
            // does not keep the pointer.
            let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC) };
            if fd >= 0 {
                // SAFETY: `fd` was just returned by open, is valid, and nothing else owns it.
                let file = unsafe { File::from_raw_fd(fd) };
                return Ok(Box::new(OsIo { file }));
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

/// One open file descriptor.
#[derive(Debug)]
pub struct OsIo {
    file: File,
}

/// The raw result of a read/write-like call: -1 is the errno, anything else is the count the
/// driver returned, however odd.
fn raw(r: isize) -> io::Result<isize> {
    if r == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn off(offset: u64) -> io::Result<libc::off_t> {
    libc::off_t::try_from(offset).map_err(|_| io::Error::from_raw_os_error(libc::EOVERFLOW))
}

impl Io for OsIo {
    fn pread(&self, buf: &mut [u8], offset: u64) -> io::Result<isize> {
        let o = off(offset)?;
        // SAFETY: the pointer and length describe `buf`, writable and borrowed for the call.
        raw(unsafe { libc::pread(self.file.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), o) })
    }

    fn pwrite(&self, data: &[u8], offset: u64) -> io::Result<isize> {
        let o = off(offset)?;
        // SAFETY: the pointer and length describe `data`, readable and borrowed for the call.
        raw(unsafe { libc::pwrite(self.file.as_raw_fd(), data.as_ptr().cast(), data.len(), o) })
    }

    fn read(&self, buf: &mut [u8]) -> io::Result<isize> {
        // SAFETY: the pointer and length describe `buf`, writable and borrowed for the call.
        raw(unsafe { libc::read(self.file.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) })
    }

    fn write(&self, data: &[u8]) -> io::Result<isize> {
        // SAFETY: the pointer and length describe `data`, readable and borrowed for the call.
        raw(unsafe { libc::write(self.file.as_raw_fd(), data.as_ptr().cast(), data.len()) })
    }

    fn ioctl_int(&self, request: libc::c_ulong, value: &mut libc::c_int) -> io::Result<()> {
        // SAFETY: the int ioctls read or write one int through the pointer, which points to
        // `value`, alive and writable for the whole call; other files refuse with an errno.
        let r = unsafe {
            libc::ioctl(
                self.file.as_raw_fd(),
                request as _,
                value as *mut libc::c_int,
            )
        };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    fn ioctl_info(&self, info: &mut IocInfo) -> io::Result<()> {
        // SAFETY: XDMA_IOCINFO reads and writes one `struct xdma_ioc_info`, which IocInfo lays
        // out exactly (repr(C)); the pointer is to `info`, alive and writable for the call.
        let r = unsafe {
            libc::ioctl(
                self.file.as_raw_fd(),
                XDMA_IOCINFO as _,
                info as *mut IocInfo,
            )
        };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    fn poll_in(&self, timeout_ms: libc::c_int) -> io::Result<bool> {
        let mut pfd = libc::pollfd {
            fd: self.file.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: `pfd` is one valid pollfd that lives across the call; nfds is 1.
        let r = unsafe { libc::poll(&mut pfd, 1, timeout_ms) };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(r > 0)
        }
    }

    fn kind(&self) -> io::Result<FileKind> {
        let m = self.file.metadata()?;
        let t = m.file_type();
        Ok(if t.is_char_device() {
            FileKind::CharDevice
        } else if t.is_file() {
            FileKind::Regular(m.len())
        } else {
            FileKind::Other
        })
    }

    fn map(&self, len: usize) -> io::Result<Mapping> {
        Mapping::new(&self.file, len)
    }

    // f_type is an i64 on x86-64 and another integer elsewhere: the conversion is needed there.
    #[allow(clippy::useless_conversion)]
    fn on_fuse(&self) -> bool {
        // SAFETY: statfs is plain data, fully written by a successful fstatfs; the descriptor
        // is this node's, open for the call.
        unsafe {
            let mut st: libc::statfs = std::mem::zeroed();
            libc::fstatfs(self.file.as_raw_fd(), &mut st) == 0
                && i64::from(st.f_type) == FUSE_SUPER_MAGIC
        }
    }
}

/// Maps an errno from `op` on `node` to an error with the driver's meaning and what to do.
pub fn os_error(op: &'static str, node: &Path, source: io::Error) -> Error {
    // ESPIPE: a FIFO, pipe or socket where a node belongs. The system's own words for it
    // ("Illegal seek") say nothing of the cause, so the error leaves them out.
    if source.raw_os_error() == Some(libc::ESPIPE) {
        return Error::NoDevice {
            what: format!("the XDMA driver's node {}", node.display()),
            hint: format!(
                "{op} found no file position: the node is a FIFO, pipe or socket, and every node of the XDMA driver has one, so it is not the driver's node; check that XDMA_DEVICE names the card's node prefix"
            ),
        };
    }
    let opening = op == "open";
    let (kind, hint) = match source.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::ENODEV) | Some(libc::ENXIO) => (
            ErrorKind::NoDevice,
            format!(
                "the node is missing: is the XDMA driver loaded (`lsmod | grep xdma`), does the card enumerate (`lspci -d 10ee:`), and does the node prefix (XDMA_DEVICE) name it? Expected nodes like {}",
                node.display()
            ),
        ),
        // ENOTCONN for a call made after the process serving the nodes (a FUSE server such
        // as xdma-fuse) died, ECONNABORTED for the call that was in flight when it died.
        Some(libc::ENOTCONN) | Some(libc::ECONNABORTED) => (
            ErrorKind::NoDevice,
            "the device went away: the card was removed or reset (a hot unplug, the link down), or the process that served its nodes stopped; open the card again once it is back".to_string(),
        ),
        Some(libc::EISDIR) | Some(libc::ENOTDIR) => (
            ErrorKind::NoDevice,
            format!(
                "{} is not the driver's node (a directory where a device node belongs, or a path through a file): check that XDMA_DEVICE names the card's node prefix",
                node.display()
            ),
        ),
        Some(libc::EACCES) | Some(libc::EPERM) => (
            ErrorKind::PermissionDenied,
            "this user may not open the node: run as root, or give the user access with a udev rule (MODE=\"0660\", GROUP of the user)".to_string(),
        ),
        Some(libc::EBUSY) if opening => (
            ErrorKind::Busy,
            "another process has this C2H stream node open (the driver takes one opener at a time), or the device is being reset: close the other reader, or wait for the reset to end".to_string(),
        ),
        Some(libc::EBUSY) => (
            ErrorKind::Busy,
            "the driver refused the transfer because the device is offline or being reset (XDMA_IOCOFFLINE, a link or function reset): bring it back with XDMA_IOCONLINE or wait for the reset to end, then retry".to_string(),
        ),
        Some(libc::ETIMEDOUT) => (
            ErrorKind::Timeout,
            "the engine did not finish within the driver's timeout (module parameters h2c_timeout / c2h_timeout, in seconds); the driver aborted the transfer, and stream data that arrived meanwhile is lost: check that the card's AXI side answers and, for a stream, that the card sends data".to_string(),
        ),
        Some(ERESTARTSYS) => (
            ErrorKind::Timeout,
            "errno 512 is ERESTARTSYS, which XDMA drivers before 2025.2 return for a DMA timeout (h2c_timeout / c2h_timeout): the driver aborted the transfer; check that the card's AXI side answers and, for a stream, that the card sends data".to_string(),
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
            "register nodes (_user, _control) take exactly one 32-bit word per call at an offset that is a multiple of 4, event nodes a 4-byte read".to_string(),
        ),
        Some(libc::EFAULT) => (
            ErrorKind::InvalidInput,
            "the driver could not pin the buffer's pages for writing (it pins them writable in both directions): pass memory this process owns and may write".to_string(),
        ),
        Some(libc::ENOMEM) => (
            ErrorKind::Backend,
            "the driver could not pin the buffer's pages or allocate its descriptor list: lower [hw] chunk_bytes so that each call pins less".to_string(),
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

/// Blocks every signal that can be blocked in the calling thread until dropped, so that no
/// signal reaches the thread while it waits in a DMA call: the driver aborts a transfer that a
/// signal interrupts (the data of a stream receive is lost, a send may be cut). Signals sent
/// meanwhile stay pending and are delivered when the guard is dropped.
pub struct SignalGuard {
    old: libc::sigset_t,
    active: bool,
}

impl SignalGuard {
    /// Blocks signals when `enabled`; otherwise does nothing.
    pub fn new(enabled: bool) -> SignalGuard {
        // SAFETY: sigset_t is plain data; an all-zero value is a valid (empty) set that
        // pthread_sigmask overwrites.
        let old: libc::sigset_t = unsafe { std::mem::zeroed() };
        let mut g = SignalGuard { old, active: false };
        if !enabled {
            return g;
        }
        // SAFETY: sigset_t is plain data; sigfillset initialises it fully.
        let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: both pointers are to valid sigset_t values that live across the calls; the
        // mask change affects only the calling thread and is undone in Drop.
        unsafe {
            libc::sigfillset(&mut all);
            g.active = libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut g.old) == 0;
        }
        g
    }
}

impl Drop for SignalGuard {
    fn drop(&mut self) {
        if self.active {
            // SAFETY: restores the mask saved by `new` in the same thread (the guard is not
            // Send); the pointer is to a valid sigset_t.
            unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut()) };
        }
    }
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
    pub fn new(file: &File, len: usize) -> io::Result<Mapping> {
        if len == 0 {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
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
            return Err(io::Error::last_os_error());
        }
        let ptr =
            NonNull::new(p.cast::<u8>()).ok_or_else(|| io::Error::other("mmap returned null"))?;
        Ok(Mapping { ptr, len })
    }

    /// The mapped length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Reads the little-endian word at `offset`; None unless the offset is 4-aligned and the
    /// word lies inside the mapping.
    pub fn read(&self, offset: usize) -> Option<u32> {
        if offset & 3 != 0 || offset.checked_add(4)? > self.len {
            return None;
        }
        // SAFETY: offset + 4 <= len keeps the access inside the mapping, which lives as long
        // as self; the mapping is page-aligned, so a 4-aligned offset is a 4-aligned address.
        let v = unsafe { self.ptr.as_ptr().add(offset).cast::<u32>().read_volatile() };
        Some(u32::from_le(v))
    }

    /// Writes the little-endian word at `offset`; false unless the offset is valid.
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

/// The host's page size.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(p)
        .ok()
        .filter(|&p| p.is_power_of_two())
        .unwrap_or(xdma_regmap::HOST_PAGE as usize)
}

/// True when the node is a path in `/dev` (the driver's own nodes).
pub fn in_dev(path: &Path) -> bool {
    path.parent() == Some(Path::new("/dev"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_that_went_away_is_no_device() {
        // ENOTCONN: a FUSE server that stopped, or a board unplugged under the driver;
        // ECONNABORTED: the call that was in flight when the server died.
        for errno in [libc::ENOTCONN, libc::ECONNABORTED] {
            let e = os_error(
                "pread",
                Path::new("/dev/xdma0_c2h_0"),
                io::Error::from_raw_os_error(errno),
            );
            assert_eq!(e.kind(), ErrorKind::NoDevice, "errno {errno}");
            assert!(e.to_string().contains("went away"), "{e}");
        }
    }

    #[test]
    fn a_node_without_a_file_position_is_not_the_drivers() {
        // ESPIPE: a FIFO, pipe or socket where a node belongs, which pread cannot use.
        let e = os_error(
            "pread",
            Path::new("/tmp/x/xdma0_control"),
            io::Error::from_raw_os_error(libc::ESPIPE),
        );
        assert_eq!(e.kind(), ErrorKind::NoDevice);
        let msg = e.to_string();
        assert!(msg.contains("FIFO") && msg.contains("XDMA_DEVICE"), "{msg}");
        assert!(!msg.contains("Illegal seek"), "{msg}");
    }

    #[test]
    fn errno_maps_to_kinds_with_a_hint() {
        let node = Path::new("/dev/xdma0_h2c_0");
        for (op, errno, kind) in [
            ("open", libc::ENOENT, ErrorKind::NoDevice),
            ("open", libc::EACCES, ErrorKind::PermissionDenied),
            ("open", libc::EBUSY, ErrorKind::Busy),
            ("pwrite", libc::EBUSY, ErrorKind::Busy),
            ("pwrite", libc::ETIMEDOUT, ErrorKind::Timeout),
            ("read", 512, ErrorKind::Timeout),
            ("pwrite", libc::EIO, ErrorKind::TransferFailed),
            ("pwrite", libc::EINVAL, ErrorKind::InvalidInput),
            ("pread", libc::EPROTO, ErrorKind::RegisterAccess),
            ("pwrite", libc::ENOSPC, ErrorKind::Backend),
        ] {
            let e = os_error(op, node, io::Error::from_raw_os_error(errno));
            assert_eq!(e.kind(), kind, "errno {errno}");
            let msg = e.to_string();
            assert!(
                msg.contains("/dev/xdma0_h2c_0") && msg.contains(op),
                "{msg}"
            );
        }
        let busy = os_error("pwrite", node, io::Error::from_raw_os_error(libc::EBUSY));
        assert!(busy.to_string().contains("offline"), "{busy}");
        let old = os_error("read", node, io::Error::from_raw_os_error(512));
        assert!(old.to_string().contains("2025.2"), "{old}");
    }
}
