//! Memory-mapped transfers: chunks of `[hw] chunk_bytes` at the card address, their progress,
//! and errors that name the address and `[hw] memory_size`.

use std::path::Path;
use std::time::Instant;

use crate::card::{HwCard, Inner};
use crate::error::count;
use crate::node::{Abandon, Node};
use crate::sys::{os_error, Io, SignalGuard};
use xdma_core::{
    check, CardAddr, Direction, DmaBuffer, Error, ErrorKind, ProgressTracker, Result, Transfer,
    DMA_ALIGN,
};

/// Where the driver backend has the card memory's size from, for the error of a transfer past
/// it: the driver cannot tell, and a request past the card's memory is not refused by it (a
/// write there succeeds without landing, a read times out), so the setting is the only guard.
const MEMORY_SIZE_FROM: &str = "as [hw] memory_size sets it: the driver cannot tell a card's memory size, and on the card a write past its memory reports success without landing while a read there times out; set [hw] memory_size to the card's memory";

/// The buffer of a memory-mapped call: sent to the card or filled from it.
enum Buf<'a> {
    Out(&'a [u8]),
    In(&'a mut [u8]),
}

impl Buf<'_> {
    pub(crate) fn len(&self) -> usize {
        match self {
            Buf::Out(d) => d.len(),
            Buf::In(b) => b.len(),
        }
    }
}

impl Inner {
    /// One pread or pwrite of a whole chunk at `addr`, retried on EINTR and continued after a
    /// partial count; a buffer the driver cannot pin (EFAULT) goes through an owned,
    /// page-aligned copy that keeps the card address's offset within the page (and so the
    /// alignment rule).
    fn mm_chunk(&self, io: &dyn Io, node: &Path, buf: &mut Buf<'_>, addr: u64) -> Result<()> {
        let op = match buf {
            Buf::Out(_) => "pwrite",
            Buf::In(_) => "pread",
        };
        let len = buf.len();
        let mut done = 0usize;
        // The copy, the offset of its first byte within its page, and the chunk offset it
        // starts at.
        let mut bounce: Option<(DmaBuffer, usize, usize)> = None;
        while done < len {
            let at = addr + done as u64;
            let r = {
                let _signals = SignalGuard::new(self.hw.block_signals);
                match (&mut *buf, &mut bounce) {
                    (Buf::Out(d), None) => io.pwrite(&d[done..], at),
                    (Buf::In(b), None) => io.pread(&mut b[done..], at),
                    (Buf::Out(_), Some((c, pad, base))) => io.pwrite(&c[*pad + done - *base..], at),
                    (Buf::In(_), Some((c, pad, base))) => {
                        io.pread(&mut c[*pad + done - *base..], at)
                    }
                }
            };
            match r {
                Ok(r) => {
                    let k = count(op, node, r, len - done)?;
                    if k == 0 {
                        return Err(Error::ShortTransfer {
                            op,
                            node: node.to_path_buf(),
                            done: done as u64,
                            len: len as u64,
                        });
                    }
                    if let (Buf::In(b), Some((c, pad, base))) = (&mut *buf, &bounce) {
                        let from = pad + done - base;
                        b[done..done + k].copy_from_slice(&c[from..from + k]);
                    }
                    done += k;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) if e.raw_os_error() == Some(libc::EFAULT) && bounce.is_none() => {
                    // The driver pins pages writable in both directions; read-only memory
                    // (or memory it cannot pin) fails, an owned copy does not.
                    let pad = (at % DMA_ALIGN as u64) as usize;
                    let mut c = DmaBuffer::new(pad + len - done)?;
                    if let Buf::Out(d) = buf {
                        c[pad..].copy_from_slice(&d[done..]);
                    }
                    bounce = Some((c, pad, done));
                }
                Err(e) => return Err(self.mm_os_error(op, node, e, at, len - done)),
            }
        }
        Ok(())
    }

    /// A memory-mapped call's failure, naming the card address and length it was at; a read
    /// that timed out says that a read past the card's memory ends so too, with the setting
    /// that let it through.
    fn mm_os_error(
        &self,
        op: &'static str,
        node: &Path,
        source: std::io::Error,
        at: u64,
        len: usize,
    ) -> Error {
        let mut e = os_error(op, node, source);
        if let Error::Os { kind, op, hint, .. } = &mut e {
            *hint = format!("{len} bytes at card address {at:#x}: {hint}");
            if *kind == ErrorKind::Timeout && *op == "pread" {
                hint.push_str(&format!(
                    "; a read that starts past the card's memory ends so too (the card refuses it, the engine stops on its first descriptor and the driver waits out c2h_timeout), and [hw] memory_size = {:#x} lets reads below that address through: if the card has less memory, set [hw] memory_size to the card's",
                    self.hw.memory_size
                ));
            }
        }
        e
    }

    /// A memory-mapped transfer cut into chunks of `chunk_bytes` (a multiple of the page, so
    /// that every chunk keeps the buffer's alignment against its card address).
    fn mm(
        &self,
        node: &Node,
        channel: usize,
        addr: CardAddr,
        mut buf: Buf<'_>,
        abandon: &Abandon,
    ) -> Result<()> {
        let what = match buf {
            Buf::Out(_) => "memory-mapped H2C write",
            Buf::In(_) => "memory-mapped C2H read",
        };
        let called = Instant::now();
        let g = node.lock_for(what, abandon)?;
        let io = g.io()?;
        let len = buf.len();
        let report = self
            .progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let mut progress = ProgressTracker::new(&report, what, channel, addr, len as u64);
        let chunk = self.hw.chunk_bytes;
        let mut off = 0usize;
        let r = loop {
            if off >= len {
                break Ok(());
            }
            // A transfer given up by its caller stops between chunks.
            if abandon.given_up() {
                break Err(abandon.error(what, &node.path));
            }
            let n = chunk.min(len - off);
            let mut part = match &mut buf {
                Buf::Out(d) => Buf::Out(&d[off..off + n]),
                Buf::In(b) => Buf::In(&mut b[off..off + n]),
            };
            if let Err(e) = self.mm_chunk(io, &node.path, &mut part, addr.raw() + off as u64) {
                break Err(e);
            }
            off += n;
            progress.update(off as u64, called.elapsed());
        };
        progress.finish(off as u64, called.elapsed());
        r
    }
}

/// The memory-mapped calls, with the flag an async caller sets when it gives the call up
/// ([`Abandon`]); the blocking API's calls are never given up.
impl HwCard {
    pub(crate) fn write_mm_for(
        &self,
        channel: usize,
        addr: CardAddr,
        data: &[u8],
        abandon: &Abandon,
    ) -> Result<Transfer> {
        self.mm_for(channel, addr, Buf::Out(data), abandon)
    }

    pub(crate) fn read_mm_for(
        &self,
        channel: usize,
        addr: CardAddr,
        buf: &mut [u8],
        abandon: &Abandon,
    ) -> Result<Transfer> {
        self.mm_for(channel, addr, Buf::In(buf), abandon)
    }

    /// A write or a read, by which way `buf` goes: checked against the card's channels and
    /// memory first, then timed from before the first chunk to after the last.
    fn mm_for(
        &self,
        channel: usize,
        addr: CardAddr,
        buf: Buf<'_>,
        abandon: &Abandon,
    ) -> Result<Transfer> {
        let i = &self.inner;
        let (what, dir, ptr, nodes) = match &buf {
            Buf::Out(d) => (
                "memory-mapped H2C write",
                Direction::H2C,
                d.as_ptr(),
                &i.h2c,
            ),
            Buf::In(b) => ("memory-mapped C2H read", Direction::C2H, b.as_ptr(), &i.c2h),
        };
        let len = buf.len();
        check::mm(
            &i.info,
            what,
            dir,
            channel,
            addr,
            ptr as usize,
            len,
            MEMORY_SIZE_FROM,
        )?;
        let start_ps = i.now_ps();
        i.mm(&nodes[channel], channel, addr, buf, abandon)?;
        Ok(Transfer {
            bytes: len,
            end_of_packet: false,
            start_ps,
            end_ps: i.now_ps(),
        })
    }
}
