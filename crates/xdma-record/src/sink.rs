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
    ring: IoUring,
    opts: SinkOptions,
    /// Buffers not in flight. At most `depth + 1` exist, so memory is bounded.
    free: Vec<DmaBuffer>,
    made: usize,
    /// The block being filled and how full it is.
    current: Option<(DmaBuffer, usize)>,
    /// Writes in flight, by slot (the io_uring user data): buffer, offset and length.
    slots: Vec<Option<(DmaBuffer, u64, usize)>>,
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
            free: Vec::new(),
            made: 0,
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
            let (mut buf, mut fill) = match self.current.take() {
                Some(c) => c,
                None => (self.buffer()?, 0),
            };
            let n = (self.opts.block - fill).min(data.len());
            buf[fill..fill + n].copy_from_slice(&data[..n]);
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

    /// A free buffer: a new one while fewer than `depth + 1` exist, else the next one a write
    /// gives back.
    fn buffer(&mut self) -> Result<DmaBuffer, RecordError> {
        loop {
            if let Some(b) = self.free.pop() {
                return Ok(b);
            }
            if self.made <= self.opts.depth {
                self.made += 1;
                return DmaBuffer::new(self.opts.block).map_err(|e| {
                    RecordError::Options(format!(
                        "a block buffer of {} bytes: {e}",
                        self.opts.block
                    ))
                });
            }
            self.reap(1)?;
        }
    }

    /// Writes `len` bytes of `buf` at the next offset; `len` is padded to [`ALIGN`] on the
    /// disk, which [`Sink::finish`] cuts off again.
    fn write(&mut self, buf: DmaBuffer, len: usize) -> Result<(), RecordError> {
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
        let entry = opcode::Write::new(
            types::Fd(self.file.as_raw_fd()),
            buf.as_ptr(),
            padded as u32,
        )
        .offset(self.next_offset)
        .build()
        .user_data(slot as u64);
        // SAFETY: the buffer is kept in `slots` until its completion has been reaped (`reap`
        // takes it back only then, and `finish` and `drop` reap every write in flight), so the
        // kernel reads memory that stays allocated and unchanged while the write runs.
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
                for s in self.slots.iter_mut() {
                    if let Some((b, _, _)) = s.take() {
                        std::mem::forget(b);
                    }
                }
                break;
            }
        }
    }
}
