//! The DMA nodes' reads, writes and ioctls, as `cdev_sgdma.c` serves them.
//!
//! `char_sgdma_read_write`, `check_transfer_align` and the ADDRMODE ioctls: a read or a write
//! checked, pinned, queued and waited for, given up on a signal, and the engine's address mode.

use xdma_ip::HostMemory;
use xdma_regmap::{self as map, control, engine_regs as ereg};

use crate::call::{Call, Dir, Ended, Received, Submit};
use crate::dev::{Driver, Phase, RegPhase};
use crate::error::{DriverError, Errno, Result};
use crate::run::WAIT_STEP;

impl Driver {
    /// `IOCTL_XDMA_ADDRMODE_SET` on an engine's node: the engine's non-incrementing address
    /// mode set or cleared in its control register, and kept for every run the driver starts.
    pub fn addrmode_set(&mut self, dir: Dir, channel: usize, fixed: bool) -> Result<()> {
        let Some(e) = self.engine_mut(dir, channel) else {
            return Err(DriverError::errno(
                Errno::Invalid,
                format!("no {dir:?} channel {channel}"),
            ));
        };
        e.non_incr_addr = fixed;
        let base = map::engine_base(dir == Dir::C2h, channel);
        let alias = if fixed {
            ereg::CONTROL_W1S
        } else {
            ereg::CONTROL_W1C
        };
        self.dma_write(base + alias, control::NON_INCR_ADDR)?;
        self.engine_alignments(dir, channel)
    }

    /// `IOCTL_XDMA_ADDRMODE_GET`: whether the engine runs with a fixed card address.
    pub fn addrmode_get(&self, dir: Dir, channel: usize) -> Result<bool> {
        self.engines(dir)
            .get(channel)
            .map(|e| e.non_incr_addr)
            .ok_or_else(|| {
                DriverError::errno(Errno::Invalid, format!("no {dir:?} channel {channel}"))
            })
    }

    /// Writes `data` to card address `card_addr` through H2C channel `channel` (a `pwrite`
    /// on `xdma0_h2c_N`), from a buffer `page_offset` bytes into a host page; returns when
    /// the driver would return.
    pub fn write(
        &mut self,
        channel: usize,
        card_addr: u64,
        data: &[u8],
        page_offset: usize,
    ) -> Result<usize> {
        let call = self.start_write(channel, card_addr, data, page_offset)?;
        self.wait(call).map(|r| r.written)
    }

    /// Reads `len` bytes from card address `card_addr` through C2H channel `channel` (a
    /// `pread` on `xdma0_c2h_N`). On a stream channel the address is ignored; with
    /// `eop_flush` (the node opened with `O_TRUNC`) the read ends at end-of-packet.
    pub fn read(
        &mut self,
        channel: usize,
        card_addr: u64,
        len: usize,
        page_offset: usize,
        eop_flush: bool,
    ) -> Result<Received> {
        let call = self.start_read(channel, card_addr, len, page_offset, eop_flush)?;
        self.wait(call)
    }

    /// Starts a write as a thread of its own would make it, now: the call is in the driver
    /// (its engine's, or waiting for the engine's lock behind an earlier call) until
    /// [`Driver::wait`] or [`Driver::poll`] returns its end.
    pub fn start_write(
        &mut self,
        channel: usize,
        card_addr: u64,
        data: &[u8],
        page_offset: usize,
    ) -> Result<Call> {
        let s = Submit::new(
            Dir::H2c,
            channel,
            card_addr,
            data.len(),
            page_offset,
            self.now(),
        );
        self.submit(s, Some(data))
    }

    /// Starts a read now (see [`Driver::start_write`]).
    pub fn start_read(
        &mut self,
        channel: usize,
        card_addr: u64,
        len: usize,
        page_offset: usize,
        eop_flush: bool,
    ) -> Result<Call> {
        let s = Submit {
            eop_flush,
            ..Submit::new(Dir::C2h, channel, card_addr, len, page_offset, self.now())
        };
        self.submit(s, None)
    }

    /// `check_transfer_align`: with a fixed card address, the buffer and the card address
    /// aligned to the engine's alignment and the length a multiple of its granularity;
    /// otherwise the buffer and the card address alike within the alignment. EINVAL if not.
    /// Only the buffer's place within its page is known here, which decides every alignment
    /// up to a page.
    fn check_transfer_align(&self, s: &Submit) -> Result<()> {
        let Some(e) = self.engines(s.dir).get(s.channel) else {
            return Ok(());
        };
        let mask = e.addr_align - 1;
        let buf = s.page_offset as u64 & mask;
        let pos = s.card_addr & mask;
        let problem = if e.non_incr_addr {
            if buf != 0 {
                Some(format!(
                    "the buffer is not aligned to {} bytes",
                    e.addr_align
                ))
            } else if pos != 0 {
                Some(format!(
                    "card address {:#x} is not aligned to {} bytes",
                    s.card_addr, e.addr_align
                ))
            } else if !(s.len as u64).is_multiple_of(e.len_granularity) {
                Some(format!(
                    "{} bytes is not a multiple of {}",
                    s.len, e.len_granularity
                ))
            } else {
                None
            }
        } else if buf != pos {
            Some(format!(
                "the buffer and card address {:#x} are not alike modulo {}",
                s.card_addr, e.addr_align
            ))
        } else {
            None
        };
        match problem {
            Some(p) => Err(DriverError::errno(Errno::Invalid, p)),
            None => Ok(()),
        }
    }

    /// Starts a transfer whose system call is made at `s.at` (now or later, in simulated
    /// time), with `data` for a write. The request waits in the driver's queue from
    /// `s.at + submit`.
    pub fn submit(&mut self, s: Submit, data: Option<&[u8]>) -> Result<Call> {
        self.check_transfer_align(&s)?;
        let host = self.pin(s.dir, s.channel, s.len, s.page_offset)?;
        if let Some(data) = data {
            if let Err(e) = self.ram.write(host, data) {
                self.ram.unpin(host);
                return Err(DriverError::errno(Errno::NoMemory, e.to_string()));
            }
        }
        Ok(self.queue(s, host))
    }

    /// Runs the card until `call` ends, every other call going on meanwhile, and returns what
    /// the system call returns.
    pub fn wait(&mut self, call: Call) -> Result<Received> {
        loop {
            if let Some(r) = self.poll(call)? {
                return r;
            }
            self.run(WAIT_STEP)?;
        }
    }

    /// The end of `call` if it has ended (then it is gone), or `None` while it is in the
    /// driver. A call this driver does not know ended long ago or never was: `EINVAL`.
    pub fn poll(&mut self, call: Call) -> Result<Option<Result<Received>>> {
        Ok(self.poll_ended(call)?.map(|e| e.result))
    }

    /// The end of `call` with when its caller runs again, if it has ended (see
    /// [`Driver::poll`]).
    pub fn poll_ended(&mut self, call: Call) -> Result<Option<Ended>> {
        self.advance()?;
        Ok(self.ended(call))
    }

    /// The end of `call` if the driver has finished it by the last [`Driver::run`] (then it
    /// is gone), without looking at the calls again: for a caller that runs the driver every
    /// cycle and polls many calls.
    pub fn ended(&mut self, call: Call) -> Option<Ended> {
        if let Some(i) = self.regs.iter().position(|c| c.id == call.0) {
            let RegPhase::Ended { word, end, free } = self.regs[i].phase else {
                return None;
            };
            self.regs.remove(i);
            return Some(Ended {
                result: Ok(Received {
                    data: Vec::new(),
                    written: 0,
                    end_of_packet: false,
                    word,
                }),
                end,
                free,
            });
        }
        let Some(i) = self.calls.iter().position(|c| c.id == call.0) else {
            return Some(Ended {
                result: Err(DriverError::errno(
                    Errno::Invalid,
                    format!("call {} is not in the driver", call.0),
                )),
                end: self.now(),
                free: self.now(),
            });
        };
        if !matches!(self.calls[i].phase, Phase::Ended(_)) {
            return None;
        }
        let c = self.calls.remove(i);
        self.ram.unpin(c.host);
        let Phase::Ended(r) = c.phase else {
            return None;
        };
        let result = r.and_then(|done| {
            let data = if c.dir == Dir::C2h {
                self.ram
                    .slice(c.host, done.bytes)
                    .map_err(|e| DriverError::errno(Errno::Io, e.to_string()))?
                    .to_vec()
            } else {
                Vec::new()
            };
            Ok(Received {
                written: if c.dir == Dir::H2c { done.bytes } else { 0 },
                data,
                end_of_packet: done.eop,
                word: 0,
            })
        });
        Some(Ended {
            result,
            end: c.end,
            free: c.end,
        })
    }

    /// How far `call` has got while it is in the driver: the bytes its finished engine runs
    /// moved, and the bytes it moves in all. `None` for a call the driver does not hold (a
    /// register access, or one that has ended and been taken).
    pub fn progress(&self, call: Call) -> Option<(usize, usize)> {
        self.calls.iter().find(|c| c.id == call.0).map(|c| {
            let total = c.pieces.iter().map(|p| p.1).sum::<u64>();
            (c.done.bytes, usize::try_from(total).unwrap_or(usize::MAX))
        })
    }

    /// Gives up `call` as a signal does: a transfer in flight is aborted and its engine
    /// stopped, as `xdma_xfer_submit` does when its wait is interrupted. A call that ended
    /// is dropped. A user BAR access cannot be taken back: it ends on its own.
    pub fn cancel(&mut self, call: Call) -> Result<()> {
        let Some(i) = self.calls.iter().position(|c| c.id == call.0) else {
            return Ok(());
        };
        let c = self.calls.remove(i);
        self.ram.unpin(c.host);
        if let Phase::Running { .. } = c.phase {
            self.engine_stop(c.dir, c.channel)?;
            let now = self.now();
            if let Some(e) = self.engine_mut(c.dir, c.channel) {
                e.free_at = now;
                e.irq_at = None;
            }
        }
        Ok(())
    }

    fn pin(&mut self, dir: Dir, channel: usize, len: usize, page_offset: usize) -> Result<u64> {
        if self.engines(dir).get(channel).is_none() {
            return Err(DriverError::errno(
                Errno::Invalid,
                format!("no {dir:?} channel {channel}"),
            ));
        }
        if len == 0 {
            return Err(DriverError::errno(Errno::Invalid, "a transfer of 0 bytes"));
        }
        self.ram.pin(len, page_offset).ok_or_else(|| {
            DriverError::errno(
                Errno::NoMemory,
                format!(
                    "{len} bytes do not fit the host memory model ({} bytes)",
                    self.ram.size()
                ),
            )
        })
    }
}
