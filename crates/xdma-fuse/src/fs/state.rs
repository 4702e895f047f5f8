//! The server's shared state: the node table, the open files, the user interrupt latches and
//! the attributes of each node, with the helpers every request handler uses.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::SystemTime;

use fuser::{Errno, FileAttr, FileHandle, FileType, INodeNo, Notifier, PollNotifier};
use xdma_core::{Card, CardInfo, ChannelKind, Direction, ErrorKind};
use xdma_regmap::{driver, DESC_MAX_LEN, DMA_BAR_SIZE};
use xdma_sim::SimCard;

use crate::config::ServerConfig;

/// The user interrupt event nodes the driver makes.
pub const EVENT_NODES: usize = driver::EVENT_NODES;

pub(super) const ROOT: u64 = 1;
pub(super) const PARAMS_DIR: u64 = 2;
pub(super) const FIRST_NODE: u64 = 16;

/// What a file of the mount is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Kind {
    Dma(Direction, usize, ChannelKind),
    User,
    Control,
    Event(usize),
    Param(&'static str),
}

#[derive(Debug)]
pub(super) struct Entry {
    pub(super) ino: u64,
    pub(super) name: String,
    pub(super) kind: Kind,
}

/// One open file.
#[derive(Debug)]
pub(super) struct Handle {
    pub(super) kind: Kind,
    /// Opened with O_TRUNC: C2H stream reads end at end-of-packet.
    pub(super) eop_flush: bool,
    /// A file descriptor of this open file was closed (FLUSH came): its RELEASE follows once
    /// the last descriptor is gone.
    pub(super) flushed: AtomicBool,
    pub(super) closed: AtomicBool,
    pub(super) state: Mutex<HandleState>,
}

#[derive(Debug, Default)]
pub(super) struct HandleState {
    /// A C2H stream reply filled its request exactly and ended at end-of-packet: the next
    /// piece of the same read (the kernel asks again after a full piece) gets nothing.
    pub(super) ended_at_eop: bool,
    /// An H2C stream packet still being assembled from the pieces of one write.
    pub(super) pending: Option<Vec<u8>>,
    /// Counts holds, so that a timer only sends the packet it was started for.
    pub(super) generation: u64,
    /// A failure of a packet sent after its write had been answered, for the next call.
    pub(super) deferred: Option<Errno>,
}

/// The driver's latch of one user interrupt line (`events_irq`).
#[derive(Debug, Default)]
pub(super) struct Line {
    pub(super) state: Mutex<LineState>,
    pub(super) cv: Condvar,
}

#[derive(Debug, Default)]
pub(super) struct LineState {
    pub(super) latched: u32,
    pub(super) readers: usize,
    pub(super) polls: Vec<(u64, PollNotifier)>,
    pub(super) watching: bool,
}

/// Everything the threads share.
#[derive(Debug)]
pub struct Shared {
    pub(super) card: SimCard,
    pub(super) info: CardInfo,
    pub(super) server: ServerConfig,
    pub(super) version: u32,
    pub(super) entries: Vec<Entry>,
    pub(super) handles: Mutex<HashMap<u64, Arc<Handle>>>,
    pub(super) next_fh: AtomicU64,
    /// The C2H stream engines that have an opener, with the opener's file handle.
    pub(super) c2h_open: Mutex<HashMap<usize, u64>>,
    /// Signalled when a C2H stream opener is released.
    pub(super) c2h_released: Condvar,
    pub(super) offline: AtomicBool,
    pub(super) lines: Vec<Arc<Line>>,
    /// The pages of `_user` and `_control` last served to the page cache, by (inode, offset),
    /// so that a page written back changes only the words the mapping changed.
    pub(super) shadows: Mutex<HashMap<(u64, u64), Vec<u8>>>,
    pub(super) notifier: OnceLock<Notifier>,
    pub(super) started: SystemTime,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // The protected state is plain data that a panicking holder cannot leave half-changed in a
    // way that matters to the next request; answering it beats failing every later one.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The errno the driver returns for a failure of the simulated card.
pub(super) fn errno(e: &xdma_core::Error) -> Errno {
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
pub(super) fn spawn(name: &str, f: impl FnOnce() + Send + 'static) {
    // A thread that cannot be started leaves the reply inside `f`, which the FUSE library then
    // answers with EIO when it is dropped here.
    let _ = std::thread::Builder::new().name(name.into()).spawn(f);
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

    pub(super) fn entry(&self, ino: u64) -> Option<&Entry> {
        self.entries.iter().find(|e| e.ino == ino)
    }

    pub(super) fn param(&self, name: &str) -> String {
        let v: u64 = match name {
            "c2h_timeout" => u64::from(self.server.c2h_timeout),
            "h2c_timeout" => u64::from(self.server.h2c_timeout),
            "desc_blen_max" => u64::from(DESC_MAX_LEN),
            _ => 0,
        };
        format!("{v}\n")
    }

    pub(super) fn attr(&self, ino: u64) -> Option<FileAttr> {
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

    pub(super) fn handle(&self, fh: FileHandle) -> Option<Arc<Handle>> {
        lock(&self.handles).get(&fh.0).cloned()
    }
}
