//! The disk side: one file written with `O_DIRECT` from page-aligned blocks through io_uring,
//! as `fio --direct=1 --ioengine=io_uring --iodepth=D --bs=B` writes, with `fdatasync` at the
//! end (fio's `end_fsync`) and at an optional interval.
//!
//! Writes complete in any order. A write that fails (the disk full, an I/O error) ends the
//! recording: the sink waits for the others, cuts the file at the first byte that did not
//! land, syncs it, and says where and why. Everything before that byte is on the disk. The
//! sink looks at its completions after every write it submits and, while bytes come in
//! without filling a block, at least every [`POLL_EVERY`], so that the first failed write ends
//! the recording at once rather than when the queue next fills.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use io_uring::{opcode, types, IoUring};
use xdma::DmaBuffer;

use crate::RecordError;

/// The alignment `O_DIRECT` asks of buffers, offsets and lengths on every common file system.
pub const ALIGN: usize = 4096;

/// How the file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SinkOptions {
    /// Bytes per write, a multiple of [`ALIGN`] (fio's `bs`).
    pub block: usize,
    /// Writes in flight (fio's `iodepth`).
    pub depth: usize,
    /// Bytes to reserve with `fallocate` before the first write (0: none).
    pub preallocate: u64,
    /// `fdatasync` at this interval while recording, besides the one at the end.
    pub sync_every: Option<Duration>,
    /// Where the file system refuses `O_DIRECT`, write through the page cache instead (and
    /// say so) rather than fail.
    pub buffered_fallback: bool,
}

impl Default for SinkOptions {
    fn default() -> SinkOptions {
        SinkOptions {
            block: 1 << 20,
            depth: 32,
            preallocate: 0,
            sync_every: None,
            buffered_fallback: false,
        }
    }
}

impl SinkOptions {
    fn check(&self) -> Result<(), RecordError> {
        if self.block == 0 || !self.block.is_multiple_of(ALIGN) || self.block > 1 << 30 {
            return Err(RecordError::Options(format!(
                "block of {} bytes: give a multiple of {ALIGN} up to 1 GiB (default 1 MiB)",
                self.block
            )));
        }
        if !(1..=4096).contains(&self.depth) {
            return Err(RecordError::Options(format!(
                "queue depth {}: give 1 to 4096 (default 32)",
                self.depth
            )));
        }
        Ok(())
    }
}

/// How the sink ended.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SinkReport {
    /// Bytes in the file when it was closed.
    pub bytes: u64,
    /// Whether the file was written with `O_DIRECT`.
    pub direct: bool,
    /// `fdatasync` calls made.
    pub syncs: u64,
    /// Bytes handed to the sink; more than `bytes` when a write failed (what came after the
    /// failure, until it was seen, was dropped).
    #[serde(default)]
    pub pushed: u64,
    /// What the preallocation did, if it did not simply work.
    pub preallocation: Option<String>,
    /// The first write that failed: the file ends at its offset.
    pub failed: Option<WriteFailure>,
}

/// A write that did not land.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WriteFailure {
    /// Its offset in the file: everything before it is on the disk.
    pub offset: u64,
    /// The error, as the kernel gave it.
    pub error: String,
    /// Whether the disk was full (ENOSPC).
    pub disk_full: bool,
}

/// One file being written. Bytes go in with [`Sink::push`], which packs them into blocks
/// and writes each full block; [`Sink::finish`] writes the rest and closes the file.
pub struct Sink {
    /// The ring is set up for a single issuer: the thread that made the sink is the only one
    /// the kernel lets submit, so the sink stays on that thread (this marker makes it !Send).
    _one_thread: std::marker::PhantomData<*const ()>,
    file: File,
    path: PathBuf,
    /// The ring comes before the buffers, so that it is closed (and lets go of the buffers it
    /// has registered) before they are freed.
    ring: IoUring,
    opts: SinkOptions,
    /// The `depth + 1` block buffers, made when the sink is created (as fio makes its buffers
    /// before its job starts) and never moved; the rest of the sink names them by index.
    buffers: Vec<DmaBuffer>,
    /// Whether `buffers` are registered with the ring, so that a write names its buffer by
    /// index and the kernel does not look up and pin the block's pages for every write.
    registered: bool,
    /// Buffers not in flight.
    free: Vec<usize>,
    /// The block being filled and how full it is.
    current: Option<(usize, usize)>,
    /// Writes in flight, by slot (the io_uring user data): buffer, offset and length.
    slots: Vec<Option<(usize, u64, usize)>>,
    inflight: usize,
    next_offset: u64,
    direct: bool,
    syncs: u64,
    last_sync: Instant,
    last_poll: Instant,
    pushed: u64,
    preallocation: Option<String>,
    /// The file's allocated length; writes past it grow it first, while that works.
    allocated: u64,
    grow: bool,
    failed: Option<WriteFailure>,
}

/// How far the file is allocated ahead of the writes when no size was given: ext4 and XFS
/// serialise `O_DIRECT` writes that extend the file, so writes within allocated space are
/// what lets a queue depth work.
const GROW_STEP: u64 = 256 << 20;

/// How long the sink goes at most without looking at its completions while bytes come in.
pub const POLL_EVERY: Duration = Duration::from_millis(20);

impl std::fmt::Debug for Sink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sink")
            .field("path", &self.path)
            .field("next_offset", &self.next_offset)
            .field("inflight", &self.inflight)
            .finish_non_exhaustive()
    }
}

/// Reserves `len` bytes from `offset` (fallocate mode 0, which extends the file's length);
/// the sink's data file and the manifest's reserve both take their room this way.
pub(crate) fn fallocate(file: &File, offset: u64, len: u64) -> std::io::Result<()> {
    let off = i64::try_from(offset).unwrap_or(i64::MAX);
    let len = i64::try_from(len).unwrap_or(i64::MAX);
    // SAFETY: fallocate on a descriptor the caller owns; no memory is passed.
    if unsafe { libc::fallocate(file.as_raw_fd(), 0, off, len) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn os_error(what: &str, path: &Path, e: std::io::Error) -> RecordError {
    RecordError::Disk {
        what: what.into(),
        path: path.to_path_buf(),
        source: e,
    }
}

impl Sink {
    /// Creates (or truncates) `path` and prepares the ring.
    pub fn create(path: &Path, opts: SinkOptions) -> Result<Sink, RecordError> {
        opts.check()?;
        let open = |direct: bool| {
            let mut o = OpenOptions::new();
            o.write(true).create(true).truncate(true);
            if direct {
                o.custom_flags(libc::O_DIRECT);
            }
            o.open(path)
        };
        let (file, direct) = match open(true) {
            Ok(f) => (f, true),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                if !opts.buffered_fallback {
                    return Err(RecordError::NoDirectIo {
                        path: path.to_path_buf(),
                    });
                }
                (open(false).map_err(|e| os_error("create", path, e))?, false)
            }
            Err(e) => return Err(os_error("create", path, e)),
        };
        let entries = opts.depth.next_power_of_two() as u32;
        // One thread submits and reaps, and it reaps only when it waits: completions can run
        // in that wait instead of interrupting the writer (Linux 6.1 on); plain where refused.
        // The task-run flag tells the sink (through the ring's flags) that completions wait to
        // be run, so that a look at them without waiting makes a system call only then.
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .setup_taskrun_flag()
            .build(entries)
            .or_else(|_| IoUring::new(entries))
            .map_err(|e| os_error("set up io_uring for", path, e))?;
        let buffers = (0..=opts.depth)
            .map(|_| {
                DmaBuffer::new(opts.block).map_err(|e| {
                    RecordError::Options(format!(
                        "{} block buffers of {} bytes (--depth + 1 of --block): {e}; give a smaller --block or --depth",
                        opts.depth + 1,
                        opts.block
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let iovecs: Vec<libc::iovec> = buffers
            .iter()
            .map(|b| libc::iovec {
                iov_base: b.as_ptr() as *mut libc::c_void,
                iov_len: b.len(),
            })
            .collect();
        // SAFETY: every iovec describes one of `buffers`, which the sink owns and never moves
        // or frees before the ring: `ring` is declared before `buffers`, so it is dropped (and
        // its registration ends) first. Where the kernel refuses (a locked-memory limit, an
        // old kernel), the writes name their buffers by address instead.
        let registered = unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
        let mut preallocation = None;
        let mut allocated = 0;
        if opts.preallocate > 0 {
            match fallocate(&file, 0, opts.preallocate) {
                Ok(()) => allocated = opts.preallocate,
                // A file system without fallocate, or a disk that cannot hold the whole
                // recording: the recording still runs, until the disk is full.
                Err(e) => {
                    preallocation = Some(format!(
                        "preallocating {} bytes failed ({e}); writing without it",
                        opts.preallocate
                    ))
                }
            }
        }
        Ok(Sink {
            file,
            path: path.to_path_buf(),
            ring,
            opts,
            free: (0..buffers.len()).rev().collect(),
            buffers,
            registered,
            current: None,
            slots: (0..opts.depth).map(|_| None).collect(),
            inflight: 0,
            next_offset: 0,
            direct,
            syncs: 0,
            last_sync: Instant::now(),
            last_poll: Instant::now(),
            pushed: 0,
            grow: preallocation.is_none(),
            preallocation,
            allocated,
            failed: None,
            _one_thread: std::marker::PhantomData,
        })
    }

    /// How the file is written.
    pub fn options(&self) -> &SinkOptions {
        &self.opts
    }

    /// Whether the file is written with `O_DIRECT`.
    pub fn direct(&self) -> bool {
        self.direct
    }

    /// Whether the block buffers are registered with the ring (io_uring fixed buffers), so
    /// that the kernel pins their pages once rather than for every write.
    pub fn registered_buffers(&self) -> bool {
        self.registered
    }

    /// The first failed write, once one has failed: nothing more is written then.
    pub fn failure(&self) -> Option<&WriteFailure> {
        self.failed.as_ref()
    }

    /// Bytes handed to the sink so far.
    pub fn bytes_in(&self) -> u64 {
        self.next_offset + self.current.as_ref().map_or(0, |c| c.1 as u64)
    }

    /// Appends `data`, writing every block it fills. Returns `false` once a write has failed
    /// (the recording should stop); the bytes are then dropped.
    pub fn push(&mut self, mut data: &[u8]) -> Result<bool, RecordError> {
        if self.failed.is_none() {
            self.pushed += data.len() as u64;
        }
        while !data.is_empty() {
            if self.failed.is_some() {
                return Ok(false);
            }
            let (buf, mut fill) = match self.current.take() {
                Some(c) => c,
                None => (self.buffer()?, 0),
            };
            let n = (self.opts.block - fill).min(data.len());
            self.buffers[buf][fill..fill + n].copy_from_slice(&data[..n]);
            fill += n;
            data = &data[n..];
            if fill == self.opts.block {
                self.write(buf, fill)?;
            } else {
                self.current = Some((buf, fill));
            }
        }
        if self.inflight > 0 && self.last_poll.elapsed() >= POLL_EVERY {
            self.reap(0)?;
        }
        if let Some(every) = self.opts.sync_every {
            if self.last_sync.elapsed() >= every {
                self.sync()?;
            }
        }
        Ok(self.failed.is_none())
    }

    /// A free buffer: the next one a write gives back when all are in use.
    fn buffer(&mut self) -> Result<usize, RecordError> {
        loop {
            if let Some(b) = self.free.pop() {
                return Ok(b);
            }
            self.reap(1)?;
        }
    }

    /// Writes `len` bytes of `buf` at the next offset; `len` is padded to [`ALIGN`] on the
    /// disk, which [`Sink::finish`] cuts off again.
    fn write(&mut self, buf: usize, len: usize) -> Result<(), RecordError> {
        while self.inflight == self.opts.depth {
            self.reap(1)?;
        }
        let Some(slot) = self.slots.iter().position(Option::is_none) else {
            return Err(RecordError::Options("no free io_uring slot".into()));
        };
        let padded = len.div_ceil(ALIGN) * ALIGN;
        let end = self.next_offset + padded as u64;
        if self.grow && end > self.allocated {
            let step = GROW_STEP.max(self.opts.block as u64 * self.opts.depth as u64);
            match fallocate(&self.file, self.allocated, step) {
                Ok(()) => self.allocated += step,
                Err(e) => {
                    // Out of room for the step (the writes will say how far the disk goes),
                    // or no fallocate here: go on without.
                    self.grow = false;
                    self.preallocation.get_or_insert(format!(
                        "allocating ahead stopped at byte {} ({e})",
                        self.allocated
                    ));
                }
            }
        }
        let fd = types::Fd(self.file.as_raw_fd());
        let ptr = self.buffers[buf].as_ptr();
        let entry = if self.registered {
            // The index fits: at most 4097 buffers exist (depth is at most 4096).
            opcode::WriteFixed::new(fd, ptr, padded as u32, buf as u16)
                .offset(self.next_offset)
                .build()
        } else {
            opcode::Write::new(fd, ptr, padded as u32)
                .offset(self.next_offset)
                .build()
        }
        .user_data(slot as u64);
        // SAFETY: the buffer is marked in flight in `slots` until its completion has been
        // reaped (`reap` frees it only then, and `finish` and `drop` reap every write in
        // flight), so nothing writes into it meanwhile, and the sink keeps it allocated until
        // then, so the kernel reads memory that stays allocated and unchanged while the write
        // runs.
        let pushed = unsafe { self.ring.submission().push(&entry) };
        if pushed.is_err() {
            return Err(RecordError::Options(
                "the io_uring submission queue is full".into(),
            ));
        }
        self.slots[slot] = Some((buf, self.next_offset, len));
        self.inflight += 1;
        self.next_offset += len as u64;
        // Submits it, and takes what has completed meanwhile without waiting: a failed
        // write is seen at the next block.
        self.reap(0)
    }

    /// Submits what is queued, waits for at least `want` completions (fewer if fewer are in
    /// flight; 0 waits for none) and takes what has completed.
    fn reap(&mut self, want: usize) -> Result<(), RecordError> {
        let want = want.min(self.inflight);
        self.last_poll = Instant::now();
        loop {
            match self.ring.submit_and_wait(want) {
                Ok(_) => break,
                // A signal (the recorder's own Ctrl-C) interrupted the call: what is queued
                // is still queued, submit it again.
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) => return Err(os_error("wait for writes to", &self.path, e)),
            }
        }
        let done: Vec<(u64, i32)> = self
            .ring
            .completion()
            .map(|c| (c.user_data(), c.result()))
            .collect();
        for (slot, res) in done {
            let Some((buf, off, len)) = self.slots.get_mut(slot as usize).and_then(Option::take)
            else {
                continue;
            };
            self.inflight -= 1;
            self.free.push(buf);
            let wrote = usize::try_from(res).ok();
            if wrote.is_none_or(|w| w < len) {
                let error = match wrote {
                    None => std::io::Error::from_raw_os_error(-res).to_string(),
                    Some(w) => format!("short write: {w} of {len} bytes"),
                };
                let f = WriteFailure {
                    offset: off + wrote.unwrap_or(0) as u64,
                    disk_full: res == -libc::ENOSPC || wrote.is_some(),
                    error,
                };
                if self.failed.as_ref().is_none_or(|g| f.offset < g.offset) {
                    self.failed = Some(f);
                }
            }
        }
        Ok(())
    }

    fn sync(&mut self) -> Result<(), RecordError> {
        // SAFETY: fdatasync on a descriptor this sink owns; no memory is passed.
        if unsafe { libc::fdatasync(self.file.as_raw_fd()) } != 0 {
            return Err(os_error(
                "fdatasync",
                &self.path,
                std::io::Error::last_os_error(),
            ));
        }
        self.syncs += 1;
        self.last_sync = Instant::now();
        Ok(())
    }

    /// Writes what is left, waits for every write, cuts the file to the bytes that landed
    /// (the padding of the last block, or everything from the first failed write on) and
    /// syncs it.
    pub fn finish(mut self) -> Result<SinkReport, RecordError> {
        if let Some((buf, fill)) = self.current.take() {
            if self.failed.is_none() && fill > 0 {
                self.write(buf, fill)?;
            }
        }
        self.reap(usize::MAX)?;
        let len = self.failed.as_ref().map_or(self.next_offset, |f| f.offset);
        self.file
            .set_len(len)
            .map_err(|e| os_error("set the length of", &self.path, e))?;
        self.sync()?;
        Ok(SinkReport {
            bytes: len,
            direct: self.direct,
            syncs: self.syncs,
            pushed: self.pushed,
            preallocation: self.preallocation.clone(),
            failed: self.failed.clone(),
        })
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        // Writes still in flight read their buffers: wait for them before the buffers go.
        // A ring that cannot wait any more (the kernel refused) leaks the buffers instead.
        while self.inflight > 0 {
            if self.reap(1).is_err() {
                std::mem::forget(std::mem::take(&mut self.buffers));
                break;
            }
        }
    }
}
