//! A fake of the XDMA driver's nodes, for the driver behaviours that neither plain files nor a
//! FUSE mount of the simulated card can put in front of the backend. Each test says why FUSE
//! cannot show its behaviour; everything FUSE can show is tested over the mount instead
//! (`tests/over_fuse.rs`).
//!
//! The fake copies the driver's rules where they matter (cdev_sgdma.c, libxdma.c): pages are
//! pinned writable in both directions (EFAULT for read-only memory), one descriptor per page of
//! the user buffer, a descriptor ring of 2048 whose position carries over and that cuts a
//! transfer (each piece ends with end-of-packet), stream reads in end-of-packet mode whose
//! count sums the descriptors the engine completed, a DMA aborted by a signal, and a mapping
//! refused when it is longer than the BAR.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use xdma_core::{BackendKind, Card, CardAddr, Config, DmaBuffer, ErrorKind};
use xdma_regmap::driver::RING_DESCRIPTORS as RING;
use xdma_regmap::{engine_base, page_pieces, Target, HOST_PAGE};

use crate::card::HwCard;
use crate::config::HwConfig;
use crate::error::DriverError;
use crate::sys::{
    FileKind, Io, IocInfo, Mapping, Opener, IOCTL_XDMA_ADDRMODE_GET, IOCTL_XDMA_ADDRMODE_SET,
    IOCTL_XDMA_ALIGN_GET,
};

const PAGE: usize = HOST_PAGE as usize;
/// Card memory of the fake board.
const MEM: usize = 64 << 20;

/// What the next C2H stream read answers instead of moving packets.
#[derive(Debug, Clone, Copy)]
enum Answer {
    Errno(i32),
    Count(isize),
}

#[derive(Debug)]
struct State {
    control: HashMap<u64, u32>,
    user: Vec<u8>,
    user_kind: FileKind,
    /// For a character-device user BAR: the longest mapping the driver accepts.
    user_bar: usize,
    mem: Vec<u8>,
    /// (call, length) of every DMA call, in order.
    calls: Vec<(&'static str, usize)>,
    /// H2C stream packets as they leave the card.
    packets: Vec<Vec<u8>>,
    desc_idx: usize,
    c2h: VecDeque<Vec<u8>>,
    answer: Option<Answer>,
    /// The errno of a timeout: 512 before 2025.2, ETIMEDOUT from then on.
    timeout_errno: i32,
    event: u32,
    version: u32,
    addrmode: HashMap<&'static str, libc::c_int>,
    /// When set, pwrite on h2c_0 blocks reading this pipe, and a signal that interrupts the
    /// wait aborts the DMA as the driver does.
    gate: Option<(libc::c_int, libc::c_int)>,
    /// The thread waiting at the gate.
    waiter: Option<libc::pthread_t>,
    /// How long a C2H stream read with no data waits before its timeout, as the driver waits
    /// `c2h_timeout` (kept shorter here so that tests stay quick).
    read_wait: Duration,
    /// C2H stream reads made.
    reads: usize,
}

impl State {
    /// A DMA call `op` of `len` bytes at card address `at`: logged, and the card memory it
    /// reaches, or EIO when it runs past the memory, as the card's refusal ends up.
    fn dma(&mut self, op: &'static str, at: usize, len: usize) -> io::Result<&mut [u8]> {
        self.calls.push((op, len));
        self.mem
            .get_mut(at..at + len)
            .ok_or_else(|| errno(libc::EIO))
    }
}

impl Default for State {
    fn default() -> Self {
        let mut control = HashMap::new();
        // H2C 0 memory-mapped, H2C 1 stream; C2H 0 memory-mapped, C2H 1 stream (version 6).
        for (c2h, target) in [(false, Target::H2c), (true, Target::C2h)] {
            control.insert(engine_base(c2h, 0), target.identifier(0, false));
            control.insert(engine_base(c2h, 1), target.identifier(1, true));
        }
        // The IRQ and config blocks, by which the driver knows the IP's DMA BAR.
        control.insert(xdma_regmap::irq::BASE, Target::Irq.identifier(0, false));
        control.insert(
            xdma_regmap::config::BASE,
            Target::Config.identifier(0, false),
        );
        let mut user = vec![0u8; 64 << 10];
        user[..4].copy_from_slice(&0x4441_5131u32.to_le_bytes());
        State {
            control,
            user,
            user_kind: FileKind::Regular(64 << 10),
            user_bar: 64 << 10,
            mem: vec![0u8; MEM],
            calls: Vec::new(),
            packets: Vec::new(),
            desc_idx: 0,
            c2h: VecDeque::new(),
            answer: None,
            timeout_errno: libc::ETIMEDOUT,
            event: 0,
            version: 2_025_200,
            addrmode: HashMap::new(),
            gate: None,
            waiter: None,
            read_wait: Duration::ZERO,
            reads: 0,
        }
    }
}

#[derive(Debug, Clone, Default)]
struct Fake(Arc<Mutex<State>>);

impl Fake {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[derive(Debug)]
struct FakeIo {
    fake: Fake,
    node: &'static str,
}

impl Opener for Fake {
    fn open(&self, path: &Path, _flags: libc::c_int) -> io::Result<Box<dyn Io>> {
        let name = path.to_string_lossy();
        let suffix = name.rsplit_once("xdma0").map(|(_, s)| s).unwrap_or("");
        let node = match suffix {
            "_control" => "control",
            "_user" => "user",
            "_h2c_0" => "h2c_0",
            "_h2c_1" => "h2c_1",
            "_c2h_0" => "c2h_0",
            "_c2h_1" => "c2h_1",
            "_events_0" => "events_0",
            _ => return Err(io::Error::from_raw_os_error(libc::ENOENT)),
        };
        Ok(Box::new(FakeIo {
            fake: self.clone(),
            node,
        }))
    }
}

fn errno(e: i32) -> io::Error {
    io::Error::from_raw_os_error(e)
}

/// True when every byte of `[ptr, ptr + len)` lies in a writable mapping of this process, which
/// is what get_user_pages(write = 1) needs.
fn writable(ptr: usize, len: usize) -> bool {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return false;
    };
    let mut at = ptr;
    let end = ptr + len;
    while at < end {
        let region = maps.lines().find_map(|l| {
            let (range, rest) = l.split_once(' ')?;
            let (a, b) = range.split_once('-')?;
            let (a, b) = (
                usize::from_str_radix(a, 16).ok()?,
                usize::from_str_radix(b, 16).ok()?,
            );
            (a <= at && at < b).then_some((b, rest.as_bytes().get(1) == Some(&b'w')))
        });
        match region {
            Some((b, true)) => at = b,
            _ => return false,
        }
    }
    true
}

/// The pages of the user buffer, as the driver's scatter list cuts it: one descriptor each.
fn descriptors(ptr: usize, len: usize) -> Vec<(usize, usize)> {
    page_pieces(ptr as u64, len as u64)
        .into_iter()
        .map(|(off, n)| (off as usize, n as usize))
        .collect()
}

impl FakeIo {
    /// Holds a DMA call at the test's gate, when one is set, until the test writes a byte to
    /// it; a signal that ends the wait aborts the transfer, as the driver does.
    fn pass_gate(&self) -> io::Result<()> {
        let gate = self.fake.state().gate;
        if let Some((r, _)) = gate {
            // SAFETY: pthread_self has no preconditions.
            self.fake.state().waiter = Some(unsafe { libc::pthread_self() });
            let mut b = 0u8;
            // SAFETY: reads one byte into `b` from the gate pipe, which stays open for the
            // fake's lifetime.
            let n = unsafe { libc::read(r, (&mut b as *mut u8).cast(), 1) };
            if n < 0 {
                // The driver's wait was interrupted: it aborts the transfer and reports the
                // abort as its timeout.
                return Err(errno(libc::ETIMEDOUT));
            }
        }
        Ok(())
    }
}

impl Io for FakeIo {
    fn pread(&self, buf: &mut [u8], offset: u64) -> io::Result<isize> {
        let mut s = self.fake.state();
        let o = offset as usize;
        match self.node {
            "control" => {
                let w = s.control.get(&offset).copied().unwrap_or(0);
                buf[..4].copy_from_slice(&w.to_le_bytes());
                Ok(4)
            }
            "user" => {
                let w = s
                    .user
                    .get(o..o + 4)
                    .ok_or_else(|| errno(libc::EFAULT))?
                    .to_vec();
                buf[..4].copy_from_slice(&w);
                Ok(4)
            }
            "c2h_0" => {
                buf.copy_from_slice(s.dma("pread", o, buf.len())?);
                Ok(buf.len() as isize)
            }
            _ => Err(errno(libc::EINVAL)),
        }
    }

    fn pwrite(&self, data: &[u8], offset: u64) -> io::Result<isize> {
        let o = offset as usize;
        match self.node {
            "user" => {
                let mut s = self.fake.state();
                let dst = s
                    .user
                    .get_mut(o..o + 4)
                    .ok_or_else(|| errno(libc::EFAULT))?;
                dst.copy_from_slice(&data[..4]);
                Ok(4)
            }
            "h2c_0" => {
                if !writable(data.as_ptr() as usize, data.len()) {
                    return Err(errno(libc::EFAULT));
                }
                self.pass_gate()?;
                let mut s = self.fake.state();
                s.dma("pwrite", o, data.len())?.copy_from_slice(data);
                Ok(data.len() as isize)
            }
            _ => Err(errno(libc::EINVAL)),
        }
    }

    fn read(&self, buf: &mut [u8]) -> io::Result<isize> {
        let mut s = self.fake.state();
        match self.node {
            "events_0" => {
                let v = std::mem::take(&mut s.event);
                buf[..4].copy_from_slice(&v.to_le_bytes());
                Ok(4)
            }
            "c2h_1" => {
                s.reads += 1;
                drop(s);
                self.pass_gate()?;
                let mut s = self.fake.state();
                if let Some(a) = s.answer.take() {
                    return match a {
                        Answer::Errno(e) => Err(errno(e)),
                        Answer::Count(c) => Ok(c),
                    };
                }
                let Some(first) = s.c2h.pop_front() else {
                    let (wait, e) = (s.read_wait, s.timeout_errno);
                    drop(s);
                    std::thread::sleep(wait);
                    return Err(errno(e));
                };
                // End-of-packet mode: the packet fills descriptors until its end; under
                // back-to-back traffic the engine goes on into the next descriptor with the
                // next packet before the driver stops it, and the count sums both.
                let descs = descriptors(buf.as_ptr() as usize, buf.len());
                let mut count = 0usize;
                let mut pkt = first;
                let mut used = 0usize;
                for (off, n) in descs {
                    let k = n.min(pkt.len() - used);
                    buf[off..off + k].copy_from_slice(&pkt[used..used + k]);
                    used += k;
                    count += k;
                    if used == pkt.len() {
                        match s.c2h.pop_front() {
                            Some(next) => {
                                pkt = next;
                                used = 0;
                            }
                            None => break,
                        }
                    }
                }
                if used < pkt.len() && used > 0 {
                    let rest = pkt[used..].to_vec();
                    s.c2h.push_front(rest);
                } else if used == 0 && !pkt.is_empty() && count > 0 {
                    s.c2h.push_front(pkt);
                }
                Ok(count as isize)
            }
            _ => Err(errno(libc::EINVAL)),
        }
    }

    fn write(&self, data: &[u8]) -> io::Result<isize> {
        if self.node != "h2c_1" {
            return Err(errno(libc::EINVAL));
        }
        if !writable(data.as_ptr() as usize, data.len()) {
            return Err(errno(libc::EFAULT));
        }
        let mut s = self.fake.state();
        // Transfers end at the end of the ring, each piece with end-of-packet.
        let descs = descriptors(data.as_ptr() as usize, data.len());
        let mut i = 0;
        while i < descs.len() {
            let room = RING - s.desc_idx;
            let take = room.min(descs.len() - i);
            let from = descs[i].0;
            let (last_off, last_len) = descs[i + take - 1];
            s.packets.push(data[from..last_off + last_len].to_vec());
            s.desc_idx = (s.desc_idx + take) % RING;
            i += take;
        }
        Ok(data.len() as isize)
    }

    fn ioctl_int(&self, request: libc::c_ulong, value: &mut libc::c_int) -> io::Result<()> {
        let mut s = self.fake.state();
        match request {
            IOCTL_XDMA_ALIGN_GET => {
                *value = 1;
                Ok(())
            }
            IOCTL_XDMA_ADDRMODE_GET => {
                *value = s.addrmode.get(self.node).copied().unwrap_or(0);
                Ok(())
            }
            IOCTL_XDMA_ADDRMODE_SET => {
                s.addrmode.insert(self.node, *value);
                Ok(())
            }
            _ => Err(errno(libc::EINVAL)),
        }
    }

    fn ioctl_info(&self, info: &mut IocInfo) -> io::Result<()> {
        info.driver_version = self.fake.state().version;
        Ok(())
    }

    fn poll_in(&self, _timeout_ms: libc::c_int) -> io::Result<bool> {
        Ok(self.fake.state().event != 0)
    }

    fn kind(&self) -> io::Result<FileKind> {
        Ok(match self.node {
            "user" => self.fake.state().user_kind,
            _ => FileKind::CharDevice,
        })
    }

    fn map(&self, len: usize) -> io::Result<Mapping> {
        if self.node != "user" || len > self.fake.state().user_bar {
            return Err(errno(libc::EINVAL));
        }
        // SAFETY: memfd_create takes a NUL-terminated name; the result is checked.
        let fd = unsafe { libc::memfd_create(c"fake-bar".as_ptr(), 0) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just returned by memfd_create and nothing else owns it.
        let f = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd) };
        f.set_len(len as u64)?;
        // The mapping shows the BAR's registers as they are now (the card's ID first).
        {
            use std::os::unix::fs::FileExt;
            let st = self.fake.state();
            let n = st.user.len().min(len);
            f.write_all_at(&st.user[..n], 0)?;
        }
        Mapping::new(&f, len)
    }
}

/// A card on the fake driver, with the module parameters in a folder of its own.
fn open(
    fake: &Fake,
    c2h_timeout_s: u32,
    f: impl FnOnce(&mut HwConfig),
) -> (HwCard, tempfile::TempDir) {
    let params = tempfile::tempdir().expect("parameters folder");
    std::fs::write(
        params.path().join("c2h_timeout"),
        format!("{c2h_timeout_s}\n"),
    )
    .expect("c2h_timeout");
    let mut hw = HwConfig {
        events: 1,
        memory_size: MEM as u64,
        module_parameters: Some(params.path().to_path_buf()),
        ..HwConfig::default()
    };
    f(&mut hw);
    let mut cfg = Config {
        backend: BackendKind::Hw,
        device: "/fake/xdma0".into(),
        ..Config::default()
    };
    cfg.set_section(BackendKind::Hw, &hw).expect("hw section");
    let card = HwCard::open_with(&cfg, Arc::new(fake.clone())).expect("open the fake card");
    (card, params)
}

#[test]
fn a_timeout_reports_what_the_driver_waited() {
    // The driver waits whole c2h_timeouts: a 2.5 s receive with c2h_timeout = 1 s is two
    // reads, 2 s, and the error says 2 s and why.
    let fake = Fake::default();
    let (card, _p) = open(&fake, 1, |_| {});
    let mut buf = DmaBuffer::new(4096).expect("buffer");
    let e = card
        .recv_stream(1, &mut buf, Duration::from_millis(2_500))
        .expect_err("no data");
    assert_eq!(e.kind(), ErrorKind::Timeout);
    let xdma_core::Error::Timeout { after, what } = &e else {
        panic!("not a timeout: {e}");
    };
    assert_eq!(*after, Duration::from_secs(2), "{e}");
    assert!(what.contains("2 read(s) of c2h_timeout = 1 s"), "{e}");
}

#[test]
fn errno_512_is_a_timeout() {
    // FUSE cannot show it: the kernel refuses a FUSE reply with an errno of 512 or more.
    let fake = Fake::default();
    fake.state().timeout_errno = crate::sys::ERESTARTSYS;
    fake.state().version = 2_020_202;
    let (card, _p) = open(&fake, 1, |_| {});
    assert_eq!(
        card.driver().version.map(|v| v.to_string()).as_deref(),
        Some("2020.2.2")
    );
    assert!(
        card.driver().describe().contains("errno 512"),
        "{}",
        card.driver().describe()
    );
    let mut buf = DmaBuffer::new(4096).expect("buffer");
    let e = card
        .recv_stream(1, &mut buf, Duration::from_secs(1))
        .expect_err("no data");
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    // With a longer timeout the backend reads again, and a second 512 is a timeout as well.
    fake.state().answer = Some(Answer::Errno(crate::sys::ERESTARTSYS));
    let e = card
        .recv_stream(1, &mut buf, Duration::from_secs(2))
        .expect_err("no data twice");
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(e.to_string().contains("2 read(s)"), "{e}");
}

#[test]
fn counts_outside_the_buffer_are_protocol_errors() {
    // FUSE cannot show it: the kernel rejects a read reply longer than the request, and a
    // FUSE reply has no way to carry a negative count.
    let fake = Fake::default();
    let (card, _p) = open(&fake, 1, |_| {});
    let mut buf = DmaBuffer::new(4096).expect("buffer");
    for bad in [-7isize, 4097, isize::MAX] {
        fake.state().answer = Some(Answer::Count(bad));
        let e = card
            .recv_stream(1, &mut buf, Duration::from_secs(1))
            .expect_err("a count outside the buffer");
        assert_eq!(e.kind(), ErrorKind::TransferFailed, "{e}");
        let src = std::error::Error::source(&e).expect("the driver's error");
        assert!(
            matches!(src.downcast_ref::<DriverError>(), Some(DriverError::Count { returned, len: 4096, .. }) if *returned == bad as i64),
            "{e}"
        );
    }
    // The card still works afterwards.
    fake.state().c2h.push_back(vec![5; 10]);
    let t = card
        .recv_stream(1, &mut buf, Duration::from_secs(1))
        .expect("a good read");
    assert_eq!((t.bytes, t.end_of_packet), (10, true));
}

#[test]
fn a_receive_never_holds_two_packets() {
    // FUSE cannot show it: the server ends every read at end-of-packet; the merge comes from the
    // engine running on into the next descriptor before the driver stops it, a race of the
    // real hardware.
    let fake = Fake::default();
    let (card, _p) = open(&fake, 1, |_| {});
    let a: Vec<u8> = (0..100u32).map(|i| i as u8).collect();
    let b: Vec<u8> = (0..300u32).map(|i| (i * 7 + 1) as u8).collect();
    fake.state().c2h.extend([a.clone(), b.clone()]);
    let mut buf = DmaBuffer::new(16 << 10).expect("buffer");
    let t = card
        .recv_stream(1, &mut buf, Duration::from_secs(1))
        .expect("first packet");
    assert_eq!((t.bytes, t.end_of_packet), (100, true));
    assert_eq!(&buf[..100], &a[..]);
    let t = card
        .recv_stream(1, &mut buf, Duration::from_secs(1))
        .expect("second packet");
    assert_eq!((t.bytes, t.end_of_packet), (300, true));
    assert_eq!(&buf[..300], &b[..]);
    // A packet longer than one descriptor comes in one-page pieces, the last with its end.
    let long: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
    fake.state().c2h.push_back(long.clone());
    let t1 = card
        .recv_stream(1, &mut buf, Duration::from_secs(1))
        .expect("piece");
    assert_eq!((t1.bytes, t1.end_of_packet), (4096, false));
    assert_eq!(&buf[..4096], &long[..4096]);
    let t2 = card
        .recv_stream(1, &mut buf, Duration::from_secs(1))
        .expect("rest");
    assert_eq!((t2.bytes, t2.end_of_packet), (904, true));
    assert_eq!(&buf[..904], &long[4096..]);
}

/// An anonymous page holding `data`, made read-only.
struct ReadOnly {
    ptr: *mut u8,
    len: usize,
}

impl ReadOnly {
    fn new(data: &[u8], at: usize) -> ReadOnly {
        let len = (at + data.len()).div_ceil(PAGE) * PAGE;
        // SAFETY: a fresh private anonymous mapping; checked for MAP_FAILED.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        let ptr = p.cast::<u8>();
        // SAFETY: at + data.len() <= len, inside the fresh mapping; then the pages are made
        // read-only, which mprotect allows on our own mapping.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), ptr.add(at), data.len());
            assert_eq!(libc::mprotect(p, len, libc::PROT_READ), 0);
        }
        ReadOnly { ptr, len }
    }

    fn slice(&self, at: usize, n: usize) -> &[u8] {
        assert!(at + n <= self.len);
        // SAFETY: inside the mapping, which is readable and lives as long as self.
        unsafe { std::slice::from_raw_parts(self.ptr.add(at), n) }
    }
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        // SAFETY: exactly the mapping made in `new`.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

#[test]
fn read_only_buffers_are_copied_before_the_driver_pins_them() {
    // FUSE cannot show it: the kernel copies a write's data out of read-only memory without
    // complaint; the driver pins the pages writable and fails with EFAULT.
    let fake = Fake::default();
    let (card, _p) = open(&fake, 1, |_| {});
    let data: Vec<u8> = (0..10_000u32).map(|i| (i * 13) as u8).collect();
    let ro = ReadOnly::new(&data, 0x123);
    card.write_mm(0, CardAddr(0x5123), ro.slice(0x123, data.len()))
        .expect("a memory-mapped write from read-only memory");
    assert_eq!(&fake.state().mem[0x5123..0x5123 + data.len()], &data[..]);
    card.send_stream(1, ro.slice(0x123, 1000))
        .expect("a stream frame from read-only memory");
    assert_eq!(
        fake.state().packets.last().map(Vec::as_slice),
        Some(&data[..1000])
    );
}

#[test]
fn a_frame_goes_out_as_one_packet_whatever_the_ring_position() {
    // FUSE cannot show it: the server sends one packet per write; the cut at the end of the
    // descriptor ring is the driver's, and only a fake that counts descriptors by the user
    // buffer's pages sees why a frame straddling a page would be cut.
    let fake = Fake::default();
    let (card, _p) = open(&fake, 1, |_| {});
    let mut page = DmaBuffer::new(2 * PAGE).expect("two pages");
    for (i, x) in page.iter_mut().enumerate() {
        *x = (i % 253) as u8;
    }
    // The ring is one descriptor from its end, as earlier calls may have left it.
    fake.state().desc_idx = RING - 1;
    let frame = &page[4000..4200];
    card.send_stream(1, frame)
        .expect("a frame across a page boundary");
    assert_eq!(
        fake.state().packets,
        vec![frame.to_vec()],
        "one packet, whole"
    );
    // A frame longer than a page would take two descriptors wherever it sits: refused.
    let e = card.send_stream(1, &page[..]).expect_err("two pages long");
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    assert!(e.to_string().contains("h2c_stream_max_frame"), "{e}");
    assert_eq!(fake.state().packets.len(), 1, "nothing was sent");
}

#[test]
fn large_calls_are_cut_into_chunks() {
    // FUSE cannot show it: the kernel cuts every request at max_read/max_write before the
    // server sees it, so the size of the backend's own call is invisible there.
    let fake = Fake::default();
    let (card, _p) = open(&fake, 1, |hw| hw.chunk_bytes = 4 << 20);
    let data = DmaBuffer::from_slice(&vec![0x3c; 10 << 20]).expect("data");
    card.write_mm(0, CardAddr(0x1000), &data).expect("write");
    let mut back = DmaBuffer::new(10 << 20).expect("buffer");
    card.read_mm(0, CardAddr(0x1000), &mut back).expect("read");
    assert!(back[..] == data[..]);
    let calls = fake.state().calls.clone();
    let m = 4 << 20;
    assert_eq!(
        calls,
        vec![
            ("pwrite", m),
            ("pwrite", m),
            ("pwrite", 2 << 20),
            ("pread", m),
            ("pread", m),
            ("pread", 2 << 20)
        ]
    );
}

/// Starts a receive of up to 4 KiB on C2H stream channel 1 that may wait 30 s, on `rt`, and
/// leaves it in flight.
fn receive_in_flight(
    rt: &tokio::runtime::Runtime,
    card: &HwCard,
) -> tokio::task::JoinHandle<xdma_core::BufResult<xdma_core::Transfer>> {
    use xdma_core::AsyncCard;
    let c = card.clone();
    rt.spawn(async move {
        let buf = DmaBuffer::new(4096).expect("buffer");
        c.recv_stream_async(1, buf, Duration::from_secs(30)).await
    })
}

/// The gate of a test that holds a DMA call in the driver: a pipe the fake's call reads one
/// byte from before it goes on. The pipe is closed when the gate is dropped.
struct Gate {
    read: libc::c_int,
    write: libc::c_int,
}

impl Gate {
    /// Makes the pipe and sets it as `fake`'s gate.
    fn set(fake: &Fake) -> Gate {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: pipe writes two descriptors into the array.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        fake.state().gate = Some((fds[0], fds[1]));
        Gate {
            read: fds[0],
            write: fds[1],
        }
    }

    /// Lets the call waiting at the gate whose write end is `write` go on.
    fn release(write: libc::c_int) {
        // SAFETY: writes one byte from a live buffer into the gate pipe, open until the
        // gate is dropped, which the tests do after the call has gone on.
        assert_eq!(unsafe { libc::write(write, [1u8].as_ptr().cast(), 1) }, 1);
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        // SAFETY: closes the pipe made in `Gate::set`, once.
        unsafe {
            libc::close(self.read);
            libc::close(self.write);
        }
    }
}

#[test]
fn dropping_a_runtime_with_a_receive_in_flight_returns_at_once() {
    let fake = Fake::default();
    let gate = Gate::set(&fake);
    fake.state().c2h.push_back(vec![5; 64]);
    let (card, _p) = open(&fake, 1, |_| {});
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let _pending = receive_in_flight(&rt, &card);
    // The receive is in the driver (held at the gate) ...
    while fake.state().waiter.is_none() {
        std::thread::sleep(Duration::from_millis(1));
    }
    // ... and stays there for 2 s, as a receive waits out c2h_timeout.
    let write_end = gate.write;
    let opener = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(2));
        Gate::release(write_end);
    });
    let started = std::time::Instant::now();
    drop(rt);
    let took = started.elapsed();
    opener.join().expect("gate opener");
    assert!(
        took < Duration::from_millis(500),
        "the runtime's drop took {took:?}"
    );
    std::thread::sleep(Duration::from_millis(50));
    drop(gate);
}

#[test]
fn a_receive_given_up_frees_its_channel_and_the_next_one_says_what_it_waited_for() {
    // FUSE could show it too, but only in the driver's whole seconds: here each read waits
    // 500 ms, and the receive given up asked for 30 s, which is 30 reads of c2h_timeout (1 s).
    use xdma_core::Error;
    let fake = Fake::default();
    fake.state().read_wait = Duration::from_millis(500);
    let (card, _p) = open(&fake, 1, |_| {});
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let _pending = receive_in_flight(&rt, &card);
    // The receive is in the driver's first read ...
    while fake.state().reads == 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    // ... when its runtime goes, which gives it up.
    drop(rt);
    let started = std::time::Instant::now();
    let mut buf = DmaBuffer::new(4096).expect("buffer");
    let e = card
        .recv_stream(1, &mut buf, Duration::from_secs(1))
        .expect_err("no data");
    let took = started.elapsed();
    // The read in flight (up to 500 ms) and this receive's own read (500 ms), not the 15 s the
    // given-up receive's remaining reads would take.
    assert!(
        took < Duration::from_secs(3),
        "the next receive took {took:?} behind the one given up: {e}"
    );
    let Error::Timeout { what, after } = &e else {
        panic!("a timeout: {e}");
    };
    assert!(
        what.contains("stream C2H receive before it") && what.contains("gave it up"),
        "says what it waited behind: {e}"
    );
    assert!(
        *after >= Duration::from_millis(800),
        "reports the time from the call, not from its own read: {e}"
    );
    // Nothing more was read for the receive given up: its first read, then this call's one.
    assert_eq!(fake.state().reads, 2);
}

#[test]
fn a_long_transfer_reports_its_progress_chunk_by_chunk() {
    // FUSE could show it, but in pieces of the mount's max_io rather than of chunk_bytes.
    use xdma_core::{Progress, ProgressReport};
    let fake = Fake::default();
    let (card, _p) = open(&fake, 1, |hw| hw.chunk_bytes = 1 << 20);
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let s = seen.clone();
    card.set_progress(ProgressReport::callback(move |p| {
        s.lock().expect("reports").push(p.clone());
    }));
    let data = DmaBuffer::from_slice(&vec![7u8; (3 << 20) + 100]).expect("data");
    card.write_mm(0, CardAddr(0x2000), &data).expect("write");
    let got: Vec<(u64, bool)> = seen
        .lock()
        .expect("reports")
        .iter()
        .map(|p| (p.done, p.finished))
        .collect();
    let len = data.len() as u64;
    assert_eq!(
        got,
        vec![
            (1 << 20, false),
            (2 << 20, false),
            (3 << 20, false),
            (len, false),
            (len, true)
        ]
    );
}

extern "C" fn on_signal(_: libc::c_int) {}

#[test]
fn a_signal_does_not_abort_a_dma() {
    // FUSE cannot show it: the FUSE library in use ignores the kernel's INTERRUPT requests, so
    // a signal never reaches the server; the driver aborts a transfer whose wait a signal ends.
    let fake = Fake::default();
    let gate = Gate::set(&fake);
    // A handler without SA_RESTART, so that a signal ends a blocking call with EINTR.
    // SAFETY: sigaction is plain data; the handler is an extern "C" fn that does nothing.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        assert_eq!(libc::sigaction(libc::SIGUSR1, &sa, std::ptr::null_mut()), 0);
    }
    let (card, _p) = open(&fake, 1, |_| {});
    let data = DmaBuffer::from_slice(&[0x77; 4096]).expect("data");
    std::thread::scope(|s| {
        let t = s.spawn(|| card.write_mm(0, CardAddr(0x2000), &data));
        // Wait for the call to reach the gate, signal its thread, then let the DMA finish.
        let waiter = loop {
            if let Some(w) = fake.state().waiter {
                break w;
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        std::thread::sleep(Duration::from_millis(20));
        // SAFETY: the waiter thread is alive (it is blocked at the gate); SIGUSR1 has a
        // handler.
        assert_eq!(unsafe { libc::pthread_kill(waiter, libc::SIGUSR1) }, 0);
        std::thread::sleep(Duration::from_millis(20));
        Gate::release(gate.write);
        t.join()
            .expect("thread")
            .expect("the DMA completes despite the signal");
    });
    assert_eq!(&fake.state().mem[0x2000..0x3000], &data[..]);
    drop(gate);
}

#[test]
fn a_character_device_bar_is_as_long_as_the_longest_mapping_it_accepts() {
    // FUSE cannot show it: a FUSE file accepts a mapping of any length (its pages past the end
    // fault later); the driver's mmap refuses one longer than the BAR.
    let fake = Fake::default();
    {
        let mut s = fake.state();
        s.user_kind = FileKind::CharDevice;
        s.user_bar = 16 << 10;
    }
    let (card, _p) = open(&fake, 1, |hw| hw.mmap_user = true);
    assert_eq!(card.info().user_bar_size, 16 << 10);
    card.write_reg(0x3ffc, 9).expect("the last word");
    assert_eq!(card.read_reg(0x3ffc).expect("read back"), 9);
    assert_eq!(
        card.read_reg(0x4000).expect_err("past the BAR").kind(),
        ErrorKind::OutOfRange
    );
}

#[test]
fn waits_of_any_length_do_not_panic() {
    // FUSE shows it too (over_fuse.rs); here it also covers the event node's latch, which the
    // fake answers at once.
    let fake = Fake::default();
    let (card, _p) = open(&fake, 1, |_| {});
    fake.state().event = 1;
    assert_eq!(card.wait_event(0, Duration::MAX).expect("latched"), 1);
    fake.state().c2h.push_back(vec![1; 64]);
    let mut buf = DmaBuffer::new(4096).expect("buffer");
    let t = card.recv_stream(1, &mut buf, Duration::MAX).expect("data");
    assert_eq!(t.bytes, 64);
    // A huge timeout that is not MAX is plain arithmetic, too.
    fake.state().c2h.push_back(vec![2; 8]);
    let t = card
        .recv_stream(1, &mut buf, Duration::from_secs(u64::MAX / 2))
        .expect("data");
    assert_eq!(t.bytes, 8);
}
