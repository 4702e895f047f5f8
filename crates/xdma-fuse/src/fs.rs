//! The file system: one simulated card as the XDMA driver's nodes, with the driver's semantics
//! (cdev_sgdma.c, cdev_ctrl.c, cdev_events.c of Xilinx dma_ip_drivers) wherever FUSE lets a
//! server have them. `docs/xdma-fuse.md` lists where it does not, and what is done instead.
//!
//! Requests that may block (DMA, stream and event reads, register accesses, which cross the
//! simulated link) are answered from a thread of their own, so the threads that read requests
//! from the kernel are never held up: one process can block on a stream read while another
//! writes. A reply that is dropped without an answer (a failure inside the simulation, a panic)
//! is answered with EIO by the FUSE library, so every request gets an answer.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, InitFlags,
    IoctlFlags, KernelConfig, LockOwner, Notifier, OpenFlags, PollEvents, PollFlags, PollNotifier,
    ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyIoctl, ReplyOpen, ReplyPoll,
    ReplyWrite, Request, WriteFlags,
};
use xdma_core::{
    Card, CardAddr, CardInfo, ChannelKind, Direction, DmaBuffer, ErrorKind, DMA_ALIGN,
};
use xdma_regmap::{driver, DESC_MAX_LEN, DMA_BAR_SIZE};
use xdma_sim::{Control, SimCard};

use crate::config::ServerConfig;

/// The user interrupt event nodes the driver makes.
pub const EVENT_NODES: usize = driver::EVENT_NODES;

/// How long a held H2C stream piece (a write request exactly `max_io` long, which may be the
/// first of several pieces of one write) waits for its continuation before it is sent alone.
const HOLD: Duration = Duration::from_millis(50);

/// How long after a page of `_user` or `_control` was read into the page cache (a mapping
/// faulted it in) the server drops it again, so that the next access reads the registers anew.
const PAGE_LIFE: Duration = Duration::from_millis(2);

/// How long an open of a C2H stream node waits for the release of a previous opener that has
/// already closed its file. The kernel sends FUSE's RELEASE after `close` has returned (only
/// FLUSH is synchronous), so a process that opens the node right after another closed it, or
/// exited, would otherwise be refused for a release still on its way; the driver's own release
/// runs inside `close`.
const RELEASE_GRACE: Duration = Duration::from_secs(5);

/// How long attributes and entries may be cached by the kernel.
const TTL: Duration = Duration::from_secs(1);

const ROOT: u64 = 1;
const PARAMS_DIR: u64 = 2;
const FIRST_NODE: u64 = 16;

// The ioctl requests the driver answers (cdev_sgdma.h, cdev_ctrl.h).
const ALIGN_GET: u32 = driver::IOCTL_XDMA_ALIGN_GET as u32;
const ADDRMODE_GET: u32 = driver::IOCTL_XDMA_ADDRMODE_GET as u32;
const ADDRMODE_SET: u32 = driver::IOCTL_XDMA_ADDRMODE_SET as u32;
const IOCINFO: u32 = driver::XDMA_IOCINFO as u32;
const IOCOFFLINE: u32 = driver::XDMA_IOCOFFLINE as u32;
const IOCONLINE: u32 = driver::XDMA_IOCONLINE as u32;

/// What a file of the mount is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Dma(Direction, usize, ChannelKind),
    User,
    Control,
    Event(usize),
    Param(&'static str),
}

#[derive(Debug)]
struct Entry {
    ino: u64,
    name: String,
    kind: Kind,
}

/// One open file.
#[derive(Debug)]
struct Handle {
    kind: Kind,
    /// Opened with O_TRUNC: C2H stream reads end at end-of-packet.
    eop_flush: bool,
    /// A file descriptor of this open file was closed (FLUSH came): its RELEASE follows once
    /// the last descriptor is gone.
    flushed: AtomicBool,
    closed: AtomicBool,
    state: Mutex<HandleState>,
}

#[derive(Debug, Default)]
struct HandleState {
    /// A C2H stream reply filled its request exactly and ended at end-of-packet: the next
    /// piece of the same read (the kernel asks again after a full piece) gets nothing.
    ended_at_eop: bool,
    /// An H2C stream packet still being assembled from the pieces of one write.
    pending: Option<Vec<u8>>,
    /// Counts holds, so that a timer only sends the packet it was started for.
    generation: u64,
    /// A failure of a packet sent after its write had been answered, for the next call.
    deferred: Option<Errno>,
}

/// The driver's latch of one user interrupt line (`events_irq`).
#[derive(Debug, Default)]
struct Line {
    state: Mutex<LineState>,
    cv: Condvar,
}

#[derive(Debug, Default)]
struct LineState {
    latched: u32,
    readers: usize,
    polls: Vec<(u64, PollNotifier)>,
    watching: bool,
}

/// Everything the threads share.
#[derive(Debug)]
pub struct Shared {
    card: SimCard,
    info: CardInfo,
    server: ServerConfig,
    version: u32,
    entries: Vec<Entry>,
    handles: Mutex<HashMap<u64, Arc<Handle>>>,
    next_fh: AtomicU64,
    /// The C2H stream engines that have an opener, with the opener's file handle.
    c2h_open: Mutex<HashMap<usize, u64>>,
    /// Signalled when a C2H stream opener is released.
    c2h_released: Condvar,
    offline: AtomicBool,
    lines: Vec<Arc<Line>>,
    /// The pages of `_user` and `_control` last served to the page cache, by (inode, offset),
    /// so that a page written back changes only the words the mapping changed.
    shadows: Mutex<HashMap<(u64, u64), Vec<u8>>>,
    notifier: OnceLock<Notifier>,
    started: SystemTime,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // The protected state is plain data that a panicking holder cannot leave half-changed in a
    // way that matters to the next request; answering it beats failing every later one.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The errno the driver returns for a failure of the simulated card.
fn errno(e: &xdma_core::Error) -> Errno {
    match e.kind() {
        ErrorKind::Timeout => Errno::from_i32(libc::ETIMEDOUT),
        ErrorKind::Misaligned | ErrorKind::InvalidInput | ErrorKind::WrongChannelKind => {
            Errno::EINVAL
        }
        ErrorKind::NoSuchChannel => Errno::EINVAL,
        ErrorKind::Busy => Errno::EBUSY,
        ErrorKind::RegisterAccess => Errno::EPROTO,
        // A transfer the engine failed part way (an AXI error on the card after its first
        // descriptor) is EIO, as the driver's service routine fails it; so is any failure of
        // the simulation. A failure on the first descriptor is not EIO: see `Shared::read_mm`.
        _ => Errno::EIO,
    }
}

/// Runs `f` on a thread of its own.
fn spawn(name: &str, f: impl FnOnce() + Send + 'static) {
    // A thread that cannot be started leaves the reply inside `f`, which the FUSE library then
    // answers with EIO when it is dropped here.
    let _ = std::thread::Builder::new().name(name.into()).spawn(f);
}

/// A page-aligned copy of `data` whose first byte sits at `addr`'s offset within a page, so
/// that it meets the engine's alignment rule against `addr`.
fn aligned_copy(data: &[u8], addr: u64) -> Result<(DmaBuffer, usize), Errno> {
    let pad = (addr % DMA_ALIGN as u64) as usize;
    let mut b = DmaBuffer::new(pad + data.len()).map_err(|_| Errno::ENOMEM)?;
    b[pad..].copy_from_slice(data);
    Ok((b, pad))
}

impl Shared {
    /// Builds the node table for the card.
    pub fn new(card: SimCard, server: ServerConfig) -> Result<Shared, String> {
        let info = card.info().clone();
        let version = server.version_number()?;
        let p = &server.prefix;
        let mut entries = Vec::new();
        let mut ino = FIRST_NODE;
        let mut add = |name: String, kind: Kind| {
            entries.push(Entry { ino, name, kind });
            ino += 1;
        };
        for c in &info.h2c {
            add(
                format!("{p}{}", driver::h2c_node(c.index)),
                Kind::Dma(c.dir, c.index, c.kind),
            );
        }
        for c in &info.c2h {
            add(
                format!("{p}{}", driver::c2h_node(c.index)),
                Kind::Dma(c.dir, c.index, c.kind),
            );
        }
        add(format!("{p}{}", driver::USER_NODE), Kind::User);
        add(format!("{p}{}", driver::CONTROL_NODE), Kind::Control);
        for k in 0..EVENT_NODES {
            add(format!("{p}{}", driver::events_node(k)), Kind::Event(k));
        }
        for name in driver::MODULE_PARAMETERS {
            add(name.to_string(), Kind::Param(name));
        }
        Ok(Shared {
            card,
            info,
            server,
            version,
            entries,
            handles: Mutex::new(HashMap::new()),
            next_fh: AtomicU64::new(1),
            c2h_open: Mutex::new(HashMap::new()),
            c2h_released: Condvar::new(),
            offline: AtomicBool::new(false),
            lines: (0..EVENT_NODES)
                .map(|_| Arc::new(Line::default()))
                .collect(),
            shadows: Mutex::new(HashMap::new()),
            notifier: OnceLock::new(),
            started: SystemTime::now(),
        })
    }

    /// What the simulated card is.
    pub fn info(&self) -> &CardInfo {
        &self.info
    }

    /// Gives the server the session's notifier, for poll wake-ups and page invalidation.
    pub fn set_notifier(&self, n: Notifier) {
        let _ = self.notifier.set(n);
    }

    fn entry(&self, ino: u64) -> Option<&Entry> {
        self.entries.iter().find(|e| e.ino == ino)
    }

    fn param(&self, name: &str) -> String {
        let v: u64 = match name {
            "c2h_timeout" => u64::from(self.server.c2h_timeout),
            "h2c_timeout" => u64::from(self.server.h2c_timeout),
            "desc_blen_max" => u64::from(DESC_MAX_LEN),
            _ => 0,
        };
        format!("{v}\n")
    }

    fn attr(&self, ino: u64) -> Option<FileAttr> {
        let (kind, size, perm) = match ino {
            ROOT | PARAMS_DIR => (FileType::Directory, 0, 0o755),
            _ => {
                let e = self.entry(ino)?;
                let size = match &e.kind {
                    Kind::Dma(_, _, ChannelKind::MemoryMapped) => self.info.memory_size,
                    Kind::User => self.info.user_bar_size,
                    Kind::Control => DMA_BAR_SIZE,
                    Kind::Param(n) => self.param(n).len() as u64,
                    _ => 0,
                };
                let perm = if matches!(e.kind, Kind::Param(_)) {
                    0o444
                } else {
                    0o660
                };
                (FileType::RegularFile, size, perm)
            }
        };
        Some(FileAttr {
            ino: INodeNo(ino),
            size,
            blocks: 0,
            atime: self.started,
            mtime: self.started,
            ctime: self.started,
            crtime: self.started,
            kind,
            perm,
            nlink: if kind == FileType::Directory { 2 } else { 1 },
            // SAFETY: getuid and getgid have no preconditions.
            uid: unsafe { libc::getuid() },
            // SAFETY: as above.
            gid: unsafe { libc::getgid() },
            rdev: 0,
            blksize: 4096,
            flags: 0,
        })
    }

    fn handle(&self, fh: FileHandle) -> Option<Arc<Handle>> {
        lock(&self.handles).get(&fh.0).cloned()
    }

    /// Takes C2H stream engine `ch` for the open file `fh`, as the driver takes one opener at
    /// a time.
    fn claim_c2h_stream(&self, ch: usize, fh: u64) -> Claim {
        let mut open = lock(&self.c2h_open);
        let Some(&holder) = open.get(&ch) else {
            open.insert(ch, fh);
            return Claim::Taken;
        };
        match self.handle(FileHandle(holder)) {
            Some(h) if h.flushed.load(Ordering::SeqCst) => Claim::Closing,
            Some(_) => Claim::Held,
            // Released between the two looks: the engine is free.
            None => {
                open.insert(ch, fh);
                Claim::Taken
            }
        }
    }

    /// Waits, up to [`RELEASE_GRACE`], for the opener of C2H stream engine `ch` that has closed
    /// its file to be released, then takes the engine for `fh`; false if it is still held.
    fn claim_c2h_stream_after_release(&self, ch: usize, fh: u64) -> bool {
        let deadline = Instant::now() + RELEASE_GRACE;
        let mut open = lock(&self.c2h_open);
        while open.contains_key(&ch) {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return false;
            };
            open = self
                .c2h_released
                .wait_timeout(open, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        open.insert(ch, fh);
        true
    }

    // ---------------------------------------------------------------- DMA

    fn read_mm(&self, ch: usize, addr: u64, size: usize) -> Result<Vec<u8>, Errno> {
        if self.offline.load(Ordering::SeqCst) {
            return Err(Errno::EBUSY);
        }
        // As the driver's node: the driver model and the IP decide what a request past the
        // card's memory or in fixed-address mode does, as the driver and the IP would.
        let (mut b, pad) = aligned_copy(&vec![0u8; size], addr)?;
        if let Err(e) = self.card.node_read_mm(ch, CardAddr(addr), &mut b[pad..]) {
            return Err(self.c2h_failed(&e));
        }
        Ok(b[pad..].to_vec())
    }

    fn write_mm(&self, ch: usize, addr: u64, data: &[u8]) -> Result<(), Errno> {
        if self.offline.load(Ordering::SeqCst) {
            return Err(Errno::EBUSY);
        }
        // The driver enables no write errors in the engine (PG195: ie_write_error enables
        // logging and stopping on them), so a write the card's AXI port refuses completes as
        // if it had landed: the driver model answers so, and the card's own ERROR register is
        // where it shows.
        let (b, pad) = aligned_copy(data, addr)?;
        self.card
            .node_write_mm(ch, CardAddr(addr), &b[pad..])
            .map_err(|e| errno(&e))?;
        Ok(())
    }

    /// Whether a channel's engine runs with a fixed card address: the driver model's
    /// `engine->non_incr_addr`.
    fn fixed_address(&self, dir: Direction, ch: usize) -> Result<bool, Errno> {
        self.card
            .control(Control::AddrModeGet(dir, ch))
            .map(|v| v != 0)
            .map_err(|e| errno(&e))
    }

    /// The errno of a memory-mapped C2H transfer that failed. The driver's service routine
    /// reads the engine's completed count, and with none completed it fails nothing: a read
    /// whose first descriptor the card refused (past its memory, or FIXED bursts it does not
    /// take) ends only at `c2h_timeout`, with ETIMEDOUT. The driver model reports that
    /// timeout as soon as the engine has stopped so; the answer waits `c2h_timeout` of
    /// wall-clock time, as the driver's does. With no timeout the driver would wait for ever,
    /// which a server must not: it answers at once. A read that fails later is EIO.
    fn c2h_failed(&self, e: &xdma_core::Error) -> Errno {
        if e.kind() == ErrorKind::Timeout {
            if let Some(t) = self.server.c2h_timeout() {
                std::thread::sleep(t);
            }
            return Errno::from_i32(libc::ETIMEDOUT);
        }
        errno(e)
    }

    /// One read request on a C2H stream node: one transfer of the driver model, which ends at
    /// end-of-packet with O_TRUNC and otherwise when the buffer is full, waiting up to
    /// `c2h_timeout` (see [`SimCard::node_read_stream`]); a release of the file ends it.
    fn read_stream(
        &self,
        h: &Handle,
        ch: usize,
        offset: u64,
        size: usize,
    ) -> Result<Vec<u8>, Errno> {
        if self.offline.load(Ordering::SeqCst) {
            return Err(Errno::EBUSY);
        }
        {
            // The kernel asks for the next piece of a read only after a full piece; when that
            // piece ended exactly at end-of-packet, the read is over.
            let mut st = lock(&h.state);
            let ended = std::mem::take(&mut st.ended_at_eop);
            if offset > 0 && ended && h.eop_flush {
                return Ok(Vec::new());
            }
        }
        let mut b = DmaBuffer::new(size).map_err(|_| Errno::ENOMEM)?;
        let stop = || h.closed.load(Ordering::SeqCst);
        let t = self
            .card
            .node_read_stream(ch, &mut b, h.eop_flush, self.server.c2h_timeout(), &stop)
            .map_err(|e| errno(&e))?
            .ok_or(Errno::EINTR)?;
        if t.bytes == size && t.end_of_packet {
            lock(&h.state).ended_at_eop = true;
        }
        Ok(b[..t.bytes].to_vec())
    }

    /// Sends an assembled H2C stream packet.
    fn send_packet(&self, ch: usize, packet: &[u8]) -> Result<(), Errno> {
        if self.offline.load(Ordering::SeqCst) {
            return Err(Errno::EBUSY);
        }
        let b = DmaBuffer::from_slice(packet).map_err(|_| Errno::ENOMEM)?;
        self.card.send_stream(ch, &b).map_err(|e| errno(&e))?;
        Ok(())
    }

    /// Sends the packet a handle still holds, if any; a failure is kept for the next call.
    fn flush_pending(&self, h: &Handle, ch: usize) {
        let pending = lock(&h.state).pending.take();
        if let Some(p) = pending {
            if let Err(e) = self.send_packet(ch, &p) {
                lock(&h.state).deferred = Some(e);
            }
        }
    }

    /// One write request on an H2C stream node. The node is a stream file, so every write
    /// starts at offset 0 and its later pieces follow at their offset within the write: a
    /// piece shorter than `max_io` ends the packet; a full piece is held until the next one.
    fn write_stream(
        self: &Arc<Self>,
        h: &Arc<Handle>,
        ch: usize,
        offset: u64,
        data: &[u8],
    ) -> Result<(), Errno> {
        if let Some(e) = lock(&h.state).deferred.take() {
            return Err(e);
        }
        let mut packet = {
            let mut st = lock(&h.state);
            match st.pending.take() {
                Some(mut p) if offset > 0 && offset == p.len() as u64 => {
                    p.extend_from_slice(data);
                    p
                }
                Some(p) => {
                    drop(st);
                    self.send_packet(ch, &p)?;
                    data.to_vec()
                }
                None => data.to_vec(),
            }
        };
        if data.len() as u32 == self.server.max_io {
            let gen = {
                let mut st = lock(&h.state);
                st.generation += 1;
                st.pending = Some(std::mem::take(&mut packet));
                st.generation
            };
            let (me, h) = (self.clone(), h.clone());
            spawn("xdma-fuse-hold", move || {
                std::thread::sleep(HOLD);
                if lock(&h.state).generation == gen {
                    me.flush_pending(&h, ch);
                }
            });
            return Ok(());
        }
        self.send_packet(ch, &packet)
    }

    // ---------------------------------------------------------- the BAR nodes (user, control)

    fn bar_size(&self, kind: &Kind) -> u64 {
        match kind {
            Kind::User => self.info.user_bar_size,
            _ => DMA_BAR_SIZE,
        }
    }

    fn read_word(&self, kind: &Kind, offset: u64) -> Result<u32, Errno> {
        if offset + 4 > self.bar_size(kind) {
            // The driver does not check: the access faults in the kernel. Refuse instead.
            return Err(Errno::EFAULT);
        }
        match kind {
            Kind::User => self.card.read_reg(offset).map_err(|e| errno(&e)),
            _ => self
                .card
                .control(Control::Read(offset))
                .map_err(|e| errno(&e)),
        }
    }

    fn write_word(&self, kind: &Kind, offset: u64, value: u32) -> Result<(), Errno> {
        if offset + 4 > self.bar_size(kind) {
            return Err(Errno::EFAULT);
        }
        match kind {
            Kind::User => self.card.write_reg(offset, value).map_err(|e| errno(&e)),
            _ => self
                .card
                .control(Control::Write(offset, value))
                .map(|_| ())
                .map_err(|e| errno(&e)),
        }
    }

    /// A read of a BAR node (the user BAR or the XDMA control BAR): one word with the driver's
    /// rules, or a page for the page cache (a mapping of the node faulted it in; such reads
    /// carry no lock owner).
    fn read_bar(
        self: &Arc<Self>,
        ino: u64,
        kind: &Kind,
        offset: u64,
        size: usize,
        from_cache: bool,
    ) -> Result<Vec<u8>, Errno> {
        if !from_cache {
            if offset & 3 != 0 || size < 4 {
                return Err(Errno::EPROTO);
            }
            return Ok(self.read_word(kind, offset)?.to_le_bytes().to_vec());
        }
        let end = (offset + size as u64).min(self.bar_size(kind));
        let mut page = Vec::with_capacity(size);
        let mut at = offset & !3;
        while at < end {
            page.extend_from_slice(&self.read_word(kind, at)?.to_le_bytes());
            at += 4;
        }
        page.truncate(size);
        lock(&self.shadows).insert((ino, offset), page.clone());
        // Drop the page again shortly, so that the next access through the mapping reads the
        // registers anew (and a dirty page is written back).
        let me = self.clone();
        spawn("xdma-fuse-inval", move || {
            std::thread::sleep(PAGE_LIFE);
            if let Some(n) = me.notifier.get() {
                let _ = n.inval_inode(INodeNo(ino), offset as i64, size as i64);
            }
        });
        Ok(page)
    }

    /// A write of a BAR node (the user BAR or the XDMA control BAR): one word with the driver's
    /// rules, or a page written back from the page cache, of which only the words that differ
    /// from what was served are written.
    fn write_bar(
        &self,
        ino: u64,
        kind: &Kind,
        offset: u64,
        data: &[u8],
        from_cache: bool,
    ) -> Result<u32, Errno> {
        if !from_cache {
            if offset & 3 != 0 || data.len() < 4 {
                return Err(Errno::EPROTO);
            }
            let v = u32::from_le_bytes([data[0], data[1], data[2], data[3]]);
            self.write_word(kind, offset, v)?;
            return Ok(4);
        }
        let shadow = lock(&self.shadows).remove(&(ino, offset));
        for (i, w) in data.chunks_exact(4).enumerate() {
            let at = offset + 4 * i as u64;
            if at + 4 > self.bar_size(kind) {
                break;
            }
            let old = shadow.as_ref().and_then(|s| s.get(4 * i..4 * i + 4));
            if old != Some(w) {
                self.write_word(kind, at, u32::from_le_bytes([w[0], w[1], w[2], w[3]]))?;
            }
        }
        Ok(data.len() as u32)
    }

    // ---------------------------------------------------------------- events

    /// Starts the thread that runs the simulated card while someone waits for interrupt `k`.
    fn watch(self: &Arc<Self>, k: usize) {
        let line = &self.lines[k];
        {
            let mut st = lock(&line.state);
            if st.watching || k >= self.info.events {
                return;
            }
            st.watching = true;
        }
        let me = self.clone();
        spawn("xdma-fuse-irq", move || {
            let line = me.lines[k].clone();
            loop {
                {
                    let mut st = lock(&line.state);
                    if st.readers == 0 && st.polls.is_empty() {
                        st.watching = false;
                        return;
                    }
                }
                let idle = || {
                    let st = lock(&line.state);
                    st.readers == 0 && st.polls.is_empty()
                };
                match me.card.node_wait_event(k, &idle) {
                    Ok(Some(_)) => me.latch(k),
                    Ok(None) => {}
                    Err(_) => std::thread::sleep(Duration::from_millis(100)),
                }
            }
        });
    }

    /// Latches interrupt `k` as the driver's handler does (events_irq = 1) and wakes its
    /// readers and pollers.
    fn latch(&self, k: usize) {
        let polls = {
            let mut st = lock(&self.lines[k].state);
            st.latched = 1;
            std::mem::take(&mut st.polls)
        };
        self.wake(k, polls);
    }

    /// Wakes the readers and the pollers of line `k` once it is latched.
    fn wake(&self, k: usize, polls: Vec<(u64, PollNotifier)>) {
        self.lines[k].cv.notify_all();
        for (_, p) in polls {
            let _ = p.notify();
        }
    }

    /// Fetches an interrupt that the simulated card raised since the last look, without
    /// letting simulated time run. An event node's calls go one at a time, so a look must not
    /// meet a watcher's wait on the line (it would queue behind a wait that may not end):
    /// while the line is watched, the watcher latches whatever comes and there is nothing to
    /// look for; otherwise the look is made holding the line's lock, under which no watcher
    /// can start.
    fn peek(&self, k: usize) {
        if k >= self.info.events {
            return;
        }
        let polls = {
            let mut st = lock(&self.lines[k].state);
            if st.latched != 0 || st.watching {
                return;
            }
            match self.card.wait_event(k, Duration::ZERO) {
                Ok(n) if n > 0 => {
                    st.latched = 1;
                    std::mem::take(&mut st.polls)
                }
                _ => return,
            }
        };
        self.wake(k, polls);
    }

    /// A blocking event read: waits until the line is latched, then takes it.
    fn read_event(self: &Arc<Self>, h: &Handle, k: usize) -> Result<u32, Errno> {
        self.peek(k);
        let line = self.lines[k].clone();
        lock(&line.state).readers += 1;
        self.watch(k);
        let mut st = lock(&line.state);
        let r = loop {
            if st.latched != 0 {
                break Ok(std::mem::take(&mut st.latched));
            }
            if h.closed.load(Ordering::SeqCst) {
                break Err(Errno::EINTR);
            }
            st = line
                .cv
                .wait_timeout(st, Duration::from_millis(100))
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        };
        st.readers -= 1;
        r
    }

    // ---------------------------------------------------------------- ioctls

    fn ioctl(&self, kind: &Kind, cmd: u32, input: &[u8]) -> Result<Vec<u8>, Errno> {
        let int = |v: i32| v.to_ne_bytes().to_vec();
        match kind {
            Kind::Dma(dir, ch, ck) => match cmd {
                ALIGN_GET => Ok(int(self.info.alignment.min(i32::MAX as u64) as i32)),
                ADDRMODE_GET => Ok(int(i32::from(self.fixed_address(*dir, *ch)?))),
                ADDRMODE_SET => {
                    let v = input.get(..4).ok_or(Errno::EFAULT)?;
                    let fixed = i32::from_ne_bytes([v[0], v[1], v[2], v[3]]) != 0;
                    // Only memory-mapped engines have an address to hold fixed.
                    if *ck == ChannelKind::MemoryMapped {
                        self.card
                            .control(Control::AddrModeSet(*dir, *ch, fixed))
                            .map_err(|e| errno(&e))?;
                    }
                    Ok(Vec::new())
                }
                _ => Err(Errno::EINVAL),
            },
            Kind::User | Kind::Control => match cmd {
                IOCINFO => {
                    let req = driver::IocInfo::from_bytes(input).ok_or(Errno::EFAULT)?;
                    if req.magic != driver::XDMA_XCL_MAGIC {
                        return Err(Errno::ENOTTY);
                    }
                    let info = driver::IocInfo {
                        vendor: 0x10ee,
                        device: 0x7028,
                        subsystem_vendor: 0x10ee,
                        subsystem_device: 0x0007,
                        driver_version: self.version,
                        ..driver::IocInfo::default()
                    };
                    Ok(info.to_bytes().to_vec())
                }
                IOCOFFLINE => {
                    self.offline.store(true, Ordering::SeqCst);
                    Ok(Vec::new())
                }
                IOCONLINE => {
                    self.offline.store(false, Ordering::SeqCst);
                    Ok(Vec::new())
                }
                _ => Err(Errno::ENOTTY),
            },
            _ => Err(Errno::ENOTTY),
        }
    }
}

/// What an open of a C2H stream node finds.
enum Claim {
    /// The engine was free and is now the opener's.
    Taken,
    /// Another open file holds it.
    Held,
    /// Its opener has closed its file and its release is on the way.
    Closing,
}

/// The FUSE file system over [`Shared`].
#[derive(Debug)]
pub struct XdmaFs {
    shared: Arc<Shared>,
}

impl XdmaFs {
    /// The file system for a shared state.
    pub fn new(shared: Arc<Shared>) -> XdmaFs {
        XdmaFs { shared }
    }

    /// Sends what an H2C stream file still holds of a write, and answers with a failure of an
    /// earlier packet that its write could no longer report (FLUSH and FSYNC).
    fn send_held_writes(&self, fh: FileHandle, reply: ReplyEmpty) {
        let s = self.shared.clone();
        let Some(h) = s.handle(fh) else {
            return reply.ok();
        };
        spawn("xdma-fuse-flush", move || {
            if let Kind::Dma(Direction::H2C, ch, ChannelKind::Stream) = h.kind {
                s.flush_pending(&h, ch);
                if let Some(e) = lock(&h.state).deferred.take() {
                    return reply.error(e);
                }
            }
            reply.ok();
        });
    }
}

impl Filesystem for XdmaFs {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        // O_TRUNC must reach open (it selects end-of-packet reads), and the register nodes are
        // direct I/O yet mappable, as the driver's are.
        let want = InitFlags::FUSE_ATOMIC_O_TRUNC | InitFlags::FUSE_DIRECT_IO_ALLOW_MMAP;
        let have = config.capabilities();
        let _ = config.add_capabilities(want & have);
        let _ = config.set_max_write(self.shared.server.max_io);
        Ok(())
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let s = &self.shared;
        let name = name.to_string_lossy();
        let found = if parent.0 == ROOT && name == "parameters" {
            Some(PARAMS_DIR)
        } else {
            s.entries
                .iter()
                .find(|e| {
                    e.name == name && (parent.0 == PARAMS_DIR) == matches!(e.kind, Kind::Param(_))
                })
                .filter(|_| parent.0 == ROOT || parent.0 == PARAMS_DIR)
                .map(|e| e.ino)
        };
        match found.and_then(|i| s.attr(i)) {
            Some(a) => reply.entry(&TTL, &a, Generation(0)),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.shared.attr(ino.0) {
            Some(a) => reply.attr(&TTL, &a),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        _size: Option<u64>,
        _atime: Option<fuser::TimeOrNow>,
        _mtime: Option<fuser::TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        // A truncate (O_TRUNC, or dd's ftruncate) means nothing to a device: accepted, as the
        // driver's nodes accept O_TRUNC, and ignored.
        match self.shared.attr(ino.0) {
            Some(a) => reply.attr(&TTL, &a),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let s = &self.shared;
        let mut list: Vec<(u64, FileType, String)> = vec![
            (ino.0, FileType::Directory, ".".into()),
            (ROOT, FileType::Directory, "..".into()),
        ];
        match ino.0 {
            ROOT => {
                list.push((PARAMS_DIR, FileType::Directory, "parameters".into()));
                for e in s
                    .entries
                    .iter()
                    .filter(|e| !matches!(e.kind, Kind::Param(_)))
                {
                    list.push((e.ino, FileType::RegularFile, e.name.clone()));
                }
            }
            PARAMS_DIR => {
                for e in s
                    .entries
                    .iter()
                    .filter(|e| matches!(e.kind, Kind::Param(_)))
                {
                    list.push((e.ino, FileType::RegularFile, e.name.clone()));
                }
            }
            _ => return reply.error(Errno::ENOTDIR),
        }
        for (i, (ino, kind, name)) in list.into_iter().enumerate().skip(offset as usize) {
            if reply.add(INodeNo(ino), (i + 1) as u64, kind, name) {
                break;
            }
        }
        reply.ok();
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        let s = &self.shared;
        let Some(e) = s.entry(ino.0) else {
            return reply.error(Errno::ENOENT);
        };
        let fh = s.next_fh.fetch_add(1, Ordering::SeqCst);
        let h = Arc::new(Handle {
            kind: e.kind.clone(),
            eop_flush: flags.0 & libc::O_TRUNC != 0,
            flushed: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            state: Mutex::new(HandleState::default()),
        });
        let mut fopen = FopenFlags::FOPEN_DIRECT_IO;
        match e.kind {
            Kind::Dma(Direction::C2H, ch, ChannelKind::Stream) => {
                fopen |= FopenFlags::FOPEN_STREAM | FopenFlags::FOPEN_NONSEEKABLE;
                match s.claim_c2h_stream(ch, fh) {
                    Claim::Taken => {}
                    Claim::Held => return reply.error(Errno::EBUSY),
                    Claim::Closing => {
                        // The wait must not hold up the thread that reads the kernel's
                        // requests: the RELEASE it waits for comes through that thread.
                        let s = self.shared.clone();
                        spawn("xdma-fuse-open", move || {
                            if s.claim_c2h_stream_after_release(ch, fh) {
                                lock(&s.handles).insert(fh, h);
                                reply.opened(FileHandle(fh), fopen);
                            } else {
                                reply.error(Errno::EBUSY);
                            }
                        });
                        return;
                    }
                }
            }
            Kind::Dma(_, _, ChannelKind::Stream) => {
                fopen |= FopenFlags::FOPEN_STREAM | FopenFlags::FOPEN_NONSEEKABLE;
            }
            _ => {}
        }
        lock(&s.handles).insert(fh, h);
        reply.opened(FileHandle(fh), fopen);
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let s = self.shared.clone();
        let Some(h) = s.handle(fh) else {
            return reply.error(Errno::EBADF);
        };
        let size = size as usize;
        if let Kind::Param(n) = h.kind {
            let text = s.param(n);
            let start = (offset as usize).min(text.len());
            let end = (start + size).min(text.len());
            return reply.data(&text.as_bytes()[start..end]);
        }
        spawn("xdma-fuse-read", move || {
            let r = match h.kind.clone() {
                Kind::Dma(Direction::C2H, ch, ChannelKind::MemoryMapped) => {
                    s.read_mm(ch, offset, size)
                }
                Kind::Dma(Direction::C2H, ch, ChannelKind::Stream) => {
                    s.read_stream(&h, ch, offset, size)
                }
                // The driver's H2C nodes refuse reads (r/w mismatch).
                Kind::Dma(Direction::H2C, ..) => Err(Errno::EINVAL),
                k @ (Kind::User | Kind::Control) => {
                    s.read_bar(ino.0, &k, offset, size, lock_owner.is_none())
                }
                Kind::Event(k) => {
                    if size != 4 || offset & 3 != 0 {
                        Err(Errno::EPROTO)
                    } else {
                        s.read_event(&h, k).map(|v| v.to_le_bytes().to_vec())
                    }
                }
                Kind::Param(_) => Err(Errno::EINVAL),
            };
            match r {
                Ok(d) => reply.data(&d),
                Err(e) => reply.error(e),
            }
        });
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let s = self.shared.clone();
        // Page-cache write-back may come with any open file of the inode.
        let from_cache = write_flags.contains(WriteFlags::FUSE_WRITE_CACHE);
        let h = match s.handle(fh) {
            Some(h) => Some(h),
            None if from_cache => None,
            None => return reply.error(Errno::EBADF),
        };
        let kind = match (&h, s.entry(ino.0)) {
            (Some(h), _) => h.kind.clone(),
            (None, Some(e)) => e.kind.clone(),
            (None, None) => return reply.error(Errno::ENOENT),
        };
        let data = data.to_vec();
        spawn("xdma-fuse-write", move || {
            let n = data.len() as u32;
            let r = match (&kind, &h) {
                (Kind::Dma(Direction::H2C, ch, ChannelKind::MemoryMapped), _) => {
                    s.write_mm(*ch, offset, &data).map(|_| n)
                }
                (Kind::Dma(Direction::H2C, ch, ChannelKind::Stream), Some(h)) => {
                    s.write_stream(h, *ch, offset, &data).map(|_| n)
                }
                (Kind::User | Kind::Control, _) => {
                    s.write_bar(ino.0, &kind, offset, &data, from_cache)
                }
                // C2H nodes refuse writes; event and parameter nodes have none.
                _ => Err(Errno::EINVAL),
            };
            match r {
                Ok(n) => reply.written(n),
                Err(e) => reply.error(e),
            }
        });
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _lo: LockOwner,
        reply: ReplyEmpty,
    ) {
        if let Some(h) = self.shared.handle(fh) {
            // Marked before the answer, so that an open that follows the close sees it.
            h.flushed.store(true, Ordering::SeqCst);
        }
        self.send_held_writes(fh, reply);
    }

    fn fsync(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        self.send_held_writes(fh, reply);
    }

    fn release(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        let s = self.shared.clone();
        let Some(h) = lock(&s.handles).remove(&fh.0) else {
            return reply.ok();
        };
        h.closed.store(true, Ordering::SeqCst);
        match h.kind {
            Kind::Dma(Direction::C2H, ch, ChannelKind::Stream) => {
                let mut open = lock(&s.c2h_open);
                if open.get(&ch) == Some(&fh.0) {
                    open.remove(&ch);
                }
                s.c2h_released.notify_all();
            }
            Kind::Event(k) => {
                let line = &s.lines[k];
                lock(&line.state).polls.retain(|(f, _)| *f != fh.0);
                line.cv.notify_all();
            }
            _ => {}
        }
        spawn("xdma-fuse-release", move || {
            if let Kind::Dma(Direction::H2C, ch, ChannelKind::Stream) = h.kind {
                s.flush_pending(&h, ch);
            }
            reply.ok();
        });
    }

    fn ioctl(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: IoctlFlags,
        cmd: u32,
        in_data: &[u8],
        out_size: u32,
        reply: ReplyIoctl,
    ) {
        let s = &self.shared;
        let Some(h) = s.handle(fh) else {
            return reply.error(Errno::EBADF);
        };
        match s.ioctl(&h.kind, cmd, in_data) {
            Ok(mut d) => {
                d.truncate(out_size as usize);
                reply.ioctl(0, &d)
            }
            Err(e) => reply.error(e),
        }
    }

    fn poll(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        ph: PollNotifier,
        _events: PollEvents,
        flags: PollFlags,
        reply: ReplyPoll,
    ) {
        let s = self.shared.clone();
        let Some(h) = s.handle(fh) else {
            return reply.error(Errno::EBADF);
        };
        let Kind::Event(k) = h.kind else {
            // The DMA and register nodes have no poll: a file without one is always ready.
            return reply.poll(
                PollEvents::POLLIN
                    | PollEvents::POLLOUT
                    | PollEvents::POLLRDNORM
                    | PollEvents::POLLWRNORM,
            );
        };
        spawn("xdma-fuse-poll", move || {
            s.peek(k);
            let ready = {
                let mut st = lock(&s.lines[k].state);
                if st.latched != 0 {
                    true
                } else {
                    if flags.contains(PollFlags::FUSE_POLL_SCHEDULE_NOTIFY) {
                        st.polls.push((fh.0, ph));
                    }
                    false
                }
            };
            if ready {
                reply.poll(PollEvents::POLLIN | PollEvents::POLLRDNORM);
            } else {
                s.watch(k);
                reply.poll(PollEvents::empty());
            }
        });
    }
}
