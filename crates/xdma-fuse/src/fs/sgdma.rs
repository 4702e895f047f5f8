//! The DMA nodes `_h2c_<k>` and `_c2h_<k>` (cdev_sgdma.c): memory-mapped reads and writes,
//! stream packets, and who may hold a C2H stream engine.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fuser::{Errno, FileHandle};
use xdma_core::{Card, CardAddr, Direction, DmaBuffer, ErrorKind, DMA_ALIGN};
use xdma_sim::Control;

use super::state::{errno, lock, spawn, Handle, Shared};

/// How long a held H2C stream piece (a write request exactly `max_io` long, which may be the
/// first of several pieces of one write) waits for its continuation before it is sent alone.
const HOLD: Duration = Duration::from_millis(50);

/// How long an open of a C2H stream node waits for the release of a previous opener that has
/// already closed its file. The kernel sends FUSE's RELEASE after `close` has returned (only
/// FLUSH is synchronous), so a process that opens the node right after another closed it, or
/// exited, would otherwise be refused for a release still on its way; the driver's own release
/// runs inside `close`.
const RELEASE_GRACE: Duration = Duration::from_secs(5);

impl Shared {
    /// Takes C2H stream engine `ch` for the open file `fh`, as the driver takes one opener at
    /// a time.
    pub(super) fn claim_c2h_stream(&self, ch: usize, fh: u64) -> Claim {
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
    pub(super) fn claim_c2h_stream_after_release(&self, ch: usize, fh: u64) -> bool {
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

    pub(super) fn read_mm(&self, ch: usize, addr: u64, size: usize) -> Result<Vec<u8>, Errno> {
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

    pub(super) fn write_mm(&self, ch: usize, addr: u64, data: &[u8]) -> Result<(), Errno> {
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
    pub(super) fn fixed_address(&self, dir: Direction, ch: usize) -> Result<bool, Errno> {
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
    pub(super) fn read_stream(
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
    pub(super) fn flush_pending(&self, h: &Handle, ch: usize) {
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
    pub(super) fn write_stream(
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
}

/// What an open of a C2H stream node finds.
pub(super) enum Claim {
    /// The engine was free and is now the opener's.
    Taken,
    /// Another open file holds it.
    Held,
    /// Its opener has closed its file and its release is on the way.
    Closing,
}

/// A page-aligned copy of `data` whose first byte sits at `addr`'s offset within a page, so
/// that it meets the engine's alignment rule against `addr`.
fn aligned_copy(data: &[u8], addr: u64) -> Result<(DmaBuffer, usize), Errno> {
    let pad = (addr % DMA_ALIGN as u64) as usize;
    let mut b = DmaBuffer::new(pad + data.len()).map_err(|_| Errno::ENOMEM)?;
    b[pad..].copy_from_slice(data);
    Ok((b, pad))
}
