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

/// The kernel's per-call limit: one read or write moves at most this many bytes (MAX_RW_COUNT).
pub const RW_MAX: usize = 0x7fff_f000;

/// `_IOR('q', 6, int)`: the DMA nodes' ALIGN_GET ioctl, which returns the engine's address
/// alignment in bytes.
pub const IOCTL_XDMA_ALIGN_GET: libc::c_ulong = ioc(IOC_READ, b'q', 6, size_of::<libc::c_int>());
/// `_IOW('q', 4, int)`: ADDRMODE_SET; 1 puts the engine in fixed-address mode, 0 back in
/// incrementing mode. The mode belongs to the engine, not the open file.
pub const IOCTL_XDMA_ADDRMODE_SET: libc::c_ulong =
    ioc(IOC_WRITE, b'q', 4, size_of::<libc::c_int>());
/// `_IOR('q', 5, int)`: ADDRMODE_GET.
pub const IOCTL_XDMA_ADDRMODE_GET: libc::c_ulong = ioc(IOC_READ, b'q', 5, size_of::<libc::c_int>());
/// `_IOWR('x', 1, struct xdma_ioc_info)`: XDMA_IOCINFO on `_control` (and `_user`): the PCI
/// identity and the driver's version number.
pub const XDMA_IOCINFO: libc::c_ulong = ioc(IOC_READ | IOC_WRITE, b'x', 1, size_of::<IocInfo>());
/// `_IO('x', 2)`: XDMA_IOCOFFLINE, which takes the device offline (transfers then fail with
/// EBUSY).
pub const XDMA_IOCOFFLINE: libc::c_ulong = ioc(0, b'x', 2, 0);
/// `_IO('x', 3)`: XDMA_IOCONLINE.
pub const XDMA_IOCONLINE: libc::c_ulong = ioc(0, b'x', 3, 0);
/// The magic number XDMA_IOCINFO wants in its request ("XL OpenCL").
pub const XDMA_XCL_MAGIC: u32 = 0x586c_0c6c;

/// The driver's answer for a DMA timeout in every release before 2025.2: ERESTARTSYS, which
/// the kernel only turns into a restart when a signal is pending, so it leaks to user space.
pub const ERESTARTSYS: i32 = 512;

const IOC_WRITE: libc::c_ulong = 1;
const IOC_READ: libc::c_ulong = 2;

/// Linux's `_IOC(dir, type, nr, size)` on the architectures with the generic ioctl layout
/// (direction in bits 31..30, size in 29..16, type in 15..8, number in 7..0).
const fn ioc(dir: libc::c_ulong, ty: u8, nr: u8, size: usize) -> libc::c_ulong {
    (dir << 30)
        | ((size as libc::c_ulong) << 16)
        | ((ty as libc::c_ulong) << 8)
        | nr as libc::c_ulong
}

/// `struct xdma_ioc_info` of the driver's `cdev_ctrl.h`, laid out as C lays it out.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IocInfo {
    /// `base.magic`: [`XDMA_XCL_MAGIC`] in the request.
    pub magic: u32,
    /// `base.command`.
    pub command: u32,
    /// PCI vendor id.
    pub vendor: u16,
    /// PCI device id.
    pub device: u16,
    /// PCI subsystem vendor id.
    pub subsystem_vendor: u16,
    /// PCI subsystem device id.
    pub subsystem_device: u16,
    /// Not filled in by any release.
    pub dma_engine_version: u32,
    /// `major * 1000 + minor * 100 + patch`, for example 2025200 for 2025.2.0.
    pub driver_version: u32,
    /// The IP's feature identifier.
    pub feature_id: u64,
    /// PCI domain.
    pub domain: u16,
    /// PCI bus.
    pub bus: u8,
    /// PCI device (slot).
    pub dev: u8,
    /// PCI function.
    pub func: u8,
}

impl IocInfo {
    /// The structure's bytes, as the ioctl passes them.
    pub fn to_bytes(&self) -> [u8; size_of::<IocInfo>()] {
        let mut b = [0u8; size_of::<IocInfo>()];
        b[0..4].copy_from_slice(&self.magic.to_ne_bytes());
        b[4..8].copy_from_slice(&self.command.to_ne_bytes());
        b[8..10].copy_from_slice(&self.vendor.to_ne_bytes());
        b[10..12].copy_from_slice(&self.device.to_ne_bytes());
        b[12..14].copy_from_slice(&self.subsystem_vendor.to_ne_bytes());
        b[14..16].copy_from_slice(&self.subsystem_device.to_ne_bytes());
        b[16..20].copy_from_slice(&self.dma_engine_version.to_ne_bytes());
        b[20..24].copy_from_slice(&self.driver_version.to_ne_bytes());
        b[24..32].copy_from_slice(&self.feature_id.to_ne_bytes());
        b[32..34].copy_from_slice(&self.domain.to_ne_bytes());
        b[34] = self.bus;
        b[35] = self.dev;
        b[36] = self.func;
        b
    }

    /// The structure read back from its bytes; None when there are too few.
    pub fn from_bytes(b: &[u8]) -> Option<IocInfo> {
        let u16_at = |o: usize| Some(u16::from_ne_bytes(b.get(o..o + 2)?.try_into().ok()?));
        let u32_at = |o: usize| Some(u32::from_ne_bytes(b.get(o..o + 4)?.try_into().ok()?));
        Some(IocInfo {
            magic: u32_at(0)?,
            command: u32_at(4)?,
            vendor: u16_at(8)?,
            device: u16_at(10)?,
            subsystem_vendor: u16_at(12)?,
            subsystem_device: u16_at(14)?,
            dma_engine_version: u32_at(16)?,
            driver_version: u32_at(20)?,
            feature_id: u64::from_ne_bytes(b.get(24..32)?.try_into().ok()?),
            domain: u16_at(32)?,
            bus: *b.get(34)?,
            dev: *b.get(35)?,
            func: *b.get(36)?,
        })
    }
}

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
    let opening = op == "open";
    let (kind, hint) = match source.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::ENODEV) | Some(libc::ENXIO) => (
            ErrorKind::NoDevice,
            format!(
                "the node is missing: is the XDMA driver loaded (`lsmod | grep xdma`), does the card enumerate (`lspci -d 10ee:`), and does the node prefix (XDMA_DEVICE) name it? Expected nodes like {}",
                node.display()
            ),
        ),
        Some(libc::ENOTCONN) => (
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
        // ENOTCONN: a FUSE server that stopped, or a board unplugged under the driver.
        let e = os_error(
            "pread",
            Path::new("/dev/xdma0_c2h_0"),
            io::Error::from_raw_os_error(libc::ENOTCONN),
        );
        assert_eq!(e.kind(), ErrorKind::NoDevice);
        assert!(e.to_string().contains("went away"), "{e}");
    }

    #[test]
    fn ioctl_numbers_match_the_drivers_headers() {
        // The values the driver's headers compute on x86-64 and arm64, worked out by hand from
        // the _IOC layout: direction << 30 | size << 16 | type << 8 | number.
        assert_eq!(IOCTL_XDMA_ALIGN_GET, 0x8004_7106);
        assert_eq!(IOCTL_XDMA_ADDRMODE_SET, 0x4004_7104);
        assert_eq!(IOCTL_XDMA_ADDRMODE_GET, 0x8004_7105);
        // struct xdma_ioc_info is 37 bytes of fields padded to 40 by its 8-byte member.
        assert_eq!(size_of::<IocInfo>(), 40);
        assert_eq!(XDMA_IOCINFO, 0xc028_7801);
        assert_eq!(XDMA_IOCOFFLINE, 0x7802);
        assert_eq!(XDMA_IOCONLINE, 0x7803);
        let i = IocInfo {
            magic: XDMA_XCL_MAGIC,
            driver_version: 2_025_200,
            bus: 3,
            func: 1,
            ..IocInfo::default()
        };
        assert_eq!(IocInfo::from_bytes(&i.to_bytes()), Some(i));
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
