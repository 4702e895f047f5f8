//! The FUSE request handlers: each request of the kernel answered, the blocking ones from a
//! thread of their own, by the node handlers of the sibling modules.

use std::ffi::OsStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use fuser::{
    Errno, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, InitFlags,
    IoctlFlags, KernelConfig, LockOwner, OpenFlags, PollEvents, PollFlags, PollNotifier, ReplyAttr,
    ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyIoctl, ReplyOpen, ReplyPoll,
    ReplyWrite, Request, WriteFlags,
};
use xdma_core::{ChannelKind, Direction};

use super::sgdma::Claim;
use super::state::{lock, spawn, Handle, HandleState, Kind, Shared, PARAMS_DIR, ROOT};

/// The FUSE file system over [`Shared`].
#[derive(Debug)]
pub struct XdmaFs {
    shared: Arc<Shared>,
}

/// How long attributes and entries may be cached by the kernel.
const TTL: Duration = Duration::from_secs(1);

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

    /// Answers with the attributes of node `ino`, or ENOENT for a node the mount lacks.
    fn reply_attr(&self, ino: INodeNo, reply: ReplyAttr) {
        match self.shared.attr(ino.0) {
            Some(a) => reply.attr(&TTL, &a),
            None => reply.error(Errno::ENOENT),
        }
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
        self.reply_attr(ino, reply);
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
        self.reply_attr(ino, reply);
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
