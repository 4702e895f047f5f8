//! The transfers, as `libxdma.c` builds, starts and ends them for a request.
//!
//! `xdma_init_request`, `transfer_init`, `transfer_build`, `xdma_get_next_adj` and
//! `xdma_xfer_submit`: a request's scatter list, its transfers built as descriptor chains on
//! the engine's ring, started, serviced and timed out one after another.

use tracing::debug;
use xdma_ip::{HostMemory, Ps};
use xdma_regmap::driver::RING_DESCRIPTORS;
use xdma_regmap::{
    self as map, desc, engine_regs as ereg, Descriptor, DESC_BYTES, DESC_MAGIC, RESULT_BYTES,
    RESULT_EOP,
};

use crate::call::{Call, Dir, Submit};
use crate::dev::{Done, Driver, Phase, Request, Transfer};
use crate::engine::State;
use crate::error::{DriverError, Errno, Result};
use crate::interrupt::Serviced;
use crate::params::{DescLayout, FROM_START_DESCRIPTORS, FROM_START_MAX_TRANSFER};
use crate::ram::HostRam;

/// `XDMA_MAX_ADJ_BLOCK_SIZE`: the driver aligns blocks of adjacent descriptors to 64.
const ADJ_BLOCK: u32 = 0x40;

impl Driver {
    /// `xdma_init_request`: the scatter list, one entry per page, split where longer than
    /// `desc_blen_max`; the call then waits for its engine.
    pub(crate) fn queue(&mut self, s: Submit, host: u64) -> Call {
        let streaming = self.engines(s.dir)[s.channel].streaming;
        let blen = u64::from(self.params.desc_blen_max.max(1));
        let cut = match self.params.desc_layout {
            DescLayout::Ring => u64::MAX,
            DescLayout::FromStart => FROM_START_MAX_TRANSFER,
        };
        let pieces = scatter(host, s.len as u64, blen, cut);
        let id = self.next_call;
        self.next_call += 1;
        let timeout = s.timeout.unwrap_or_else(|| self.timeout(s.dir));
        let timeout_ps = u64::try_from(timeout.as_nanos().saturating_mul(1000)).unwrap_or(u64::MAX);
        self.calls.push(Request {
            id,
            dir: s.dir,
            channel: s.channel,
            host,
            ep: s.card_addr,
            pieces,
            next: 0,
            eop_flush: s.eop_flush && streaming && s.dir == Dir::C2h,
            done: Done::default(),
            phase: Phase::Queued,
            ready_at: s.at.saturating_add(self.costs.submit),
            deadline: Ps::MAX,
            timeout_ps,
            timeout,
            end: 0,
        });
        Call(id)
    }

    /// One look at every call: a queued call whose engine is free starts its first transfer
    /// once the driver has done its part, a running one is serviced once its interrupt or
    /// write-back has come and the handler has done its part, or times out.
    pub(crate) fn advance(&mut self) -> Result<()> {
        let now = self.now();
        self.advance_regs(now)?;
        for i in 0..self.calls.len() {
            let (dir, channel) = (self.calls[i].dir, self.calls[i].channel);
            let deadline = self.calls[i].deadline;
            match self.calls[i].phase {
                Phase::Ended(_) => {}
                Phase::Queued => {
                    // The engine's desc_lock: calls on one engine run one at a time, in order.
                    let busy = self.calls[..i].iter().any(|c| {
                        c.dir == dir && c.channel == channel && !matches!(c.phase, Phase::Ended(_))
                    }) || self.ip.engine_busy(dir == Dir::C2h, channel);
                    if !busy {
                        let free = self.engines(dir)[channel].free_at;
                        let from = self.calls[i].ready_at.max(free);
                        self.calls[i].phase = Phase::Starting { from };
                        self.start_phases(i, now)?;
                    }
                }
                Phase::Starting { .. } | Phase::Doorbell { .. } => self.start_phases(i, now)?,
                Phase::Running { xfer } => {
                    let eop_flush = self.calls[i].eop_flush;
                    let state = self.check(dir, channel, xfer, eop_flush)?;
                    let (at, state) = match state {
                        Serviced::Not => (None, State::Submitted),
                        Serviced::At(at, state) => (Some(at), state),
                    };
                    if let (Some(at), Some(e)) = (at, self.engine_mut(dir, channel)) {
                        e.free_at = at;
                    }
                    // The deadline passes a transfer whose completion is on its way (descriptors
                    // completed since the driver last looked, their interrupt or write-back
                    // not yet serviced) only once it is serviced. The driver's wait and its
                    // interrupt's service race over the microseconds of the handler, which
                    // its timeouts of seconds make rare; a model's caller may wait
                    // microseconds, and would lose data that reached the host in time.
                    let pending = at.is_none() && now >= deadline && {
                        let base = map::engine_base(dir == Dir::C2h, channel);
                        let seen = self.engines(dir)[channel].seen_completed;
                        self.dma_read(base + ereg::COMPLETED)? > seen
                    };
                    let dead = self.params.end_dead_waits
                        && matches!(state, State::Submitted)
                        && self.engines(dir)[channel].stopped_on_error;
                    if matches!(state, State::Submitted) && (now >= deadline || dead) && !pending {
                        let deadline = if dead { now.min(deadline) } else { deadline };
                        // Still in flight at the timeout: abort it and stop the engine.
                        let base = map::engine_base(dir == Dir::C2h, channel);
                        let st = self.dma_read(base + ereg::STATUS)?;
                        self.engine_stop(dir, channel)?;
                        if let Some(e) = self.engine_mut(dir, channel) {
                            e.free_at = deadline;
                            e.irq_at = None;
                            e.stopped_on_error = false;
                        }
                        let timeout = self.calls[i].timeout;
                        self.end(
                            i,
                            deadline,
                            Err(DriverError::errno(
                                Errno::TimedOut,
                                format!(
                                    "{dir:?} {channel}: no completion within {timeout:?} (status {st:#x})"
                                ),
                            )),
                        );
                        continue;
                    }
                    let at = at.unwrap_or(now);
                    match state {
                        State::Submitted => {}
                        State::Failed { status, completed } => {
                            self.end(
                                i,
                                at,
                                Err(DriverError::errno(
                                    Errno::Io,
                                    format!(
                                        "{dir:?} {channel}: engine status {status:#x}, {completed} of {} descriptors completed",
                                        xfer.desc_num
                                    ),
                                )),
                            );
                        }
                        State::Completed { desc_cmpl, eop } => {
                            self.transfer_done(i, xfer, desc_cmpl, eop, at)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Ends call `i` with `r`, the driver done with it at `at`: its caller runs again after
    /// the wake-up.
    fn end(&mut self, i: usize, at: Ps, r: Result<Done>) {
        let wake = self.costs.wake;
        let c = &mut self.calls[i];
        c.end = at.saturating_add(wake);
        c.phase = Phase::Ended(r);
    }

    /// A request's way to its engine: the driver builds and programs the transfer (`start`),
    /// its doorbell crosses the link, and the engine runs from the doorbell's arrival.
    fn start_phases(&mut self, i: usize, now: Ps) -> Result<()> {
        if let Phase::Starting { from } = self.calls[i].phase {
            let write_at = from.saturating_add(self.costs.start);
            if write_at > now {
                return Ok(());
            }
            let at = self.ip.pcie().from_host(write_at, true);
            self.calls[i].phase = Phase::Doorbell { at };
        }
        if let Phase::Doorbell { at } = self.calls[i].phase {
            if at <= now {
                self.next_transfer(i, at)?;
            }
        }
        Ok(())
    }

    /// The call's next transfer built and started at `at`, or the call ended when none is
    /// left.
    fn next_transfer(&mut self, i: usize, at: Ps) -> Result<()> {
        let (dir, channel, host, ep, next, eop_flush) = {
            let c = &self.calls[i];
            (c.dir, c.channel, c.host, c.ep, c.next, c.eop_flush)
        };
        if next >= self.calls[i].pieces.len() {
            let done = self.calls[i].done;
            self.end(i, at, Ok(done));
            return Ok(());
        }
        let pieces = self.calls[i].pieces[next..].to_vec();
        let (xfer, taken) = self.transfer_init(dir, channel, host, &pieces, ep, eop_flush)?;
        self.engine_start(dir, channel, xfer)?;
        let c = &mut self.calls[i];
        c.next += taken;
        c.ep += xfer.len;
        c.phase = Phase::Running { xfer };
        // The driver waits for each transfer from its start, for the direction's timeout.
        c.deadline = at.saturating_add(c.timeout_ps);
        Ok(())
    }

    /// A transfer completed (serviced at `at`): its bytes counted (C2H streams from the
    /// result records), and the call goes on with its next transfer unless an end-of-packet
    /// read saw its packet end.
    fn transfer_done(
        &mut self,
        i: usize,
        xfer: Transfer,
        desc_cmpl: usize,
        eop: bool,
        at: Ps,
    ) -> Result<()> {
        let (dir, channel) = (self.calls[i].dir, self.calls[i].channel);
        if self.engines(dir)[channel].streaming && dir == Dir::C2h {
            for k in 0..desc_cmpl {
                let a = xfer.res_bus + (k * RESULT_BYTES) as u64;
                let word = |a| {
                    self.ram
                        .dword(a)
                        .map_err(|e| DriverError::errno(Errno::Io, e.to_string()))
                };
                let (st, n) = (word(a)?, word(a + 4)?);
                self.calls[i].done.bytes += n as usize;
                self.calls[i].done.eop = st & RESULT_EOP != 0;
            }
            if self.calls[i].eop_flush && eop {
                let done = self.calls[i].done;
                self.end(i, at, Ok(done));
                return Ok(());
            }
        } else {
            self.calls[i].done.bytes += xfer.len as usize;
        }
        if self.calls[i].next >= self.calls[i].pieces.len() {
            let done = self.calls[i].done;
            self.end(i, at, Ok(done));
            return Ok(());
        }
        // The request's next transfer: the driver builds it from here.
        self.calls[i].phase = Phase::Starting { from: at };
        let now = self.now();
        self.start_phases(i, now)
    }

    /// `transfer_init` and `transfer_build`: descriptors for as many pieces as the ring's free
    /// run holds, linked, with adjacent counts and the last one's STOP, COMPLETED and EOP.
    fn transfer_init(
        &mut self,
        dir: Dir,
        channel: usize,
        host: u64,
        pieces: &[(u64, u64)],
        ep_addr: u64,
        eop_flush: bool,
    ) -> Result<(Transfer, usize)> {
        let (desc_idx, desc_ring, res_ring, c2h_stream, fixed) = {
            let e = &self.engines(dir)[channel];
            (
                e.desc_idx,
                e.desc_bus,
                e.result_bus,
                e.streaming && dir == Dir::C2h,
                e.non_incr_addr,
            )
        };
        let layout = self.params.desc_layout;
        let (desc_idx, desc_max) = match layout {
            DescLayout::Ring => {
                let mut desc_max = pieces.len().min(RING_DESCRIPTORS);
                if desc_idx + desc_max >= RING_DESCRIPTORS {
                    desc_max = RING_DESCRIPTORS - desc_idx;
                }
                (desc_idx, desc_max)
            }
            // The pieces were cut at every 8 MiB of the request (`scatter`): a transfer is the
            // pieces in the same 8 MiB of it as the first, as many as the buffer holds.
            DescLayout::FromStart => {
                let window = |p: &(u64, u64)| p.0 / FROM_START_MAX_TRANSFER;
                let first = pieces.first().map(window);
                let n = pieces
                    .iter()
                    .take(FROM_START_DESCRIPTORS)
                    .take_while(|p| Some(window(p)) == first)
                    .count();
                (0, n.max(1))
            }
        };
        let adjacency = Adjacency::new(layout, self.max_read, desc_max as u32);
        let desc_bus = desc_ring + (desc_idx * DESC_BYTES) as u64;
        let res_bus = res_ring + (desc_idx * RESULT_BYTES) as u64;
        let mut len = 0;
        let mut ep = ep_addr;
        let last = desc_max - 1;
        for (i, &(off, n)) in pieces[..desc_max].iter().enumerate() {
            let this = desc_bus + (i * DESC_BYTES) as u64;
            let next = if i == last {
                0
            } else {
                this + DESC_BYTES as u64
            };
            let mut ctl = DESC_MAGIC;
            if i == last {
                ctl |= desc::STOP | desc::EOP | desc::COMPLETED;
            } else if eop_flush {
                ctl |= desc::COMPLETED;
            }
            let adj = adjacency.next(i as u32, next as u32);
            ctl |= (adj & desc::ADJ_MASK) << desc::ADJ_SHIFT;
            let (src, dst) = match dir {
                Dir::H2c => (host + off, ep),
                Dir::C2h if c2h_stream => (res_bus + (i * RESULT_BYTES) as u64, host + off),
                Dir::C2h => (ep, host + off),
            };
            let d = Descriptor {
                control: ctl,
                len: n as u32,
                src,
                dst,
                next,
            };
            let write = |ram: &mut HostRam, at: u64, b: &[u8]| {
                ram.write(at, b)
                    .map_err(|e| DriverError::errno(Errno::NoMemory, e.to_string()))
            };
            write(&mut self.ram, this, &d.to_bytes())?;
            if c2h_stream {
                write(
                    &mut self.ram,
                    res_bus + (i * RESULT_BYTES) as u64,
                    &[0; RESULT_BYTES],
                )?;
            }
            len += n;
            // A fixed card address stays for every descriptor (`transfer_build`).
            if !fixed {
                ep += n;
            }
        }
        if let Some(e) = self.engine_mut(dir, channel) {
            e.desc_idx = (desc_idx + desc_max) % RING_DESCRIPTORS;
        }
        let first_adj = adjacency.first(desc_bus as u32);
        debug!(?dir, channel, desc_max, len, "transfer built");
        Ok((
            Transfer {
                desc_bus,
                res_bus,
                desc_num: desc_max,
                len,
                first_adj,
            },
            desc_max,
        ))
    }
}

/// `xdma_get_next_adj`: adjacent descriptors after one whose next pointer is `next_lo`, with
/// `remaining` descriptors after it, blocks aligned to 64 descriptors within a page.
pub fn next_adj(remaining: u32, next_lo: u32) -> u32 {
    if remaining <= 1 {
        return 0;
    }
    let next_index = ((next_lo & (map::HOST_PAGE as u32 - 1)) >> 5) % ADJ_BLOCK;
    (ADJ_BLOCK - next_index - 1).min(remaining - 1)
}

/// The scatter list of a buffer at bus address `host`: `(offset, length)` pieces, one per host
/// page, none longer than `blen` (`desc_blen_max`) and none across a multiple of `cut` bytes
/// of the request. The Windows driver's framework cuts a request into transfers of at most
/// 8 MiB at that byte count whatever the pages, so a page that straddles the cut is two
/// pieces; `u64::MAX` cuts nowhere, as `xdma.ko`.
pub fn scatter(host: u64, len: u64, blen: u64, cut: u64) -> Vec<(u64, u64)> {
    let (blen, cut) = (blen.max(1), cut.max(1));
    let mut pieces = Vec::with_capacity(len.div_ceil(map::HOST_PAGE) as usize + 1);
    for (off, n) in map::page_pieces(host, len) {
        let mut done = 0;
        while done < n {
            let to_cut = cut - (off + done) % cut;
            let k = (n - done).min(blen).min(to_cut);
            pieces.push((off + done, k));
            done += k;
        }
    }
    pieces
}

/// The adjacent counts of one transfer's descriptors, by the layout's rule.
struct Adjacency {
    layout: DescLayout,
    /// Descriptors in the transfer.
    total: u32,
    /// The Windows rule's largest count: one max read request of descriptors, less one.
    adj_max: u32,
}

impl Adjacency {
    fn new(layout: DescLayout, max_read: u32, total: u32) -> Adjacency {
        Adjacency {
            layout,
            total: total.max(1),
            adj_max: (max_read / DESC_BYTES as u32).max(1) - 1,
        }
    }

    /// Descriptors left in the 4 KiB page after the one at `addr`.
    fn to_4k(addr: u32) -> u32 {
        (0x1000 - (addr & 0xFFF)) / DESC_BYTES as u32 - 1
    }

    /// The count the engine's first fetch takes beyond the first descriptor, at `first`.
    fn first(&self, first: u32) -> u32 {
        match self.layout {
            DescLayout::Ring => next_adj(self.total, first),
            DescLayout::FromStart => (self.total - 1).min(self.adj_max).min(Self::to_4k(first)),
        }
    }

    /// The count in descriptor `i`'s control word, whose next pointer is `next`: how many
    /// follow the next one in the fetch that the engine makes when `i` ends a block. The
    /// Windows rule counts a block's room down from `adj_max - 1` and starts again at
    /// `adj_max` once it reaches zero, which on a page-aligned buffer makes blocks of
    /// `adj_max + 1` descriptors in step with the first one.
    fn next(&self, i: u32, next: u32) -> u32 {
        match self.layout {
            DescLayout::Ring => next_adj(self.total - i - 1, next),
            DescLayout::FromStart => {
                let last = self.total - 1;
                let after_next = last.saturating_sub(i + 1);
                let room = match i % (self.adj_max + 1) {
                    k if k < self.adj_max => self.adj_max - 1 - k,
                    _ => self.adj_max,
                };
                after_next.min(room).min(Self::to_4k(next))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjacent_counts_follow_the_drivers_rule() {
        // One descriptor left or none: no adjacent ones.
        assert_eq!(next_adj(1, 0x20), 0);
        assert_eq!(next_adj(0, 0x20), 0);
        // From the start of a 64-descriptor block, 63 follow at most.
        assert_eq!(next_adj(100, 0x0), 63);
        assert_eq!(next_adj(10, 0x0), 9);
        // Descriptor 60 of a block (offset 60 * 32): 3 to the block's end.
        assert_eq!(next_adj(100, 60 * 32), 3);
        // The second block of a page starts again at 63.
        assert_eq!(next_adj(100, 64 * 32), 63);
    }

    /// The Windows rule's fetches, walked as the engine walks them: a fetch of `adj + 1`
    /// descriptors from the first, the next fetch's count in the last one fetched.
    fn fetches(total: u32, max_read: u32, base: u32) -> Vec<u32> {
        let a = Adjacency::new(DescLayout::FromStart, max_read, total);
        let mut out = Vec::new();
        let (mut at, mut n) = (0, a.first(base) + 1);
        while at < total {
            out.push(n);
            let last = at + n - 1;
            at = last + 1;
            n = a.next(last, base + at * DESC_BYTES as u32) + 1;
        }
        out
    }

    #[test]
    fn the_scatter_list_is_cut_at_every_8_mib_of_the_request_only_when_asked() {
        let page = map::HOST_PAGE;
        // 8 MiB + 1 byte from a page's start: 2048 pages and one byte, cut after the pages.
        let p = scatter(0x1_0000_0000, (8 << 20) + 1, u64::MAX, 8 << 20);
        assert_eq!(p.len(), 2049);
        assert_eq!(p[2048], (8 << 20, 1));
        // From 100 bytes into a page the cut falls inside page 2048: it is two pieces there.
        let host = 0x1_0000_0000 + 100;
        let p = scatter(host, 16 << 20, u64::MAX, 8 << 20);
        let sum = |v: &[(u64, u64)]| v.iter().map(|x| x.1).sum::<u64>();
        assert_eq!(sum(&p), 16 << 20);
        let at_cut = p
            .iter()
            .position(|x| x.0 == 8 << 20)
            .expect("a piece starts at the cut");
        assert_eq!(sum(&p[..at_cut]), 8 << 20);
        assert!(p
            .iter()
            .all(|&(o, n)| o / (8 << 20) == (o + n - 1) / (8 << 20)));
        // xdma.ko's list does not cut: one piece per page, the same 16 MiB.
        let q = scatter(host, 16 << 20, u64::MAX, u64::MAX);
        assert_eq!(q.len() as u64, (16 << 20) / page + 1);
        assert_eq!(p.len(), q.len() + 1);
        // desc_blen_max still splits pages.
        assert_eq!(scatter(0, 4096, 1024, u64::MAX).len(), 4);
    }

    #[test]
    fn the_windows_rule_fetches_one_read_request_of_descriptors_at_a_time() {
        // 512-byte read requests hold 16 descriptors of 32 bytes: 40 descriptors are fetched
        // 16, 16 and 8; 2048 (an 8 MiB transfer of pages) are 128 fetches of 16.
        assert_eq!(fetches(40, 512, 0), vec![16, 16, 8]);
        assert_eq!(fetches(2048, 512, 0), vec![16; 128]);
        // 128-byte read requests: 4 at a time; one descriptor alone is one fetch of one.
        assert_eq!(fetches(10, 128, 0), vec![4, 4, 2]);
        assert_eq!(fetches(1, 512, 0), vec![1]);
        // A buffer 3 descriptors before a 4 KiB boundary: the first fetch stops there, and the
        // next ones keep their count from the buffer's start, never crossing a page.
        let f = fetches(40, 512, 0x1000 - 3 * 32);
        assert_eq!(f.iter().sum::<u32>(), 40);
        assert_eq!(f[0], 3);
        let mut at = 0x1000 - 3 * 32;
        for n in f {
            assert!((1..=16).contains(&n));
            let end = at + n * 32 - 1;
            assert_eq!(at / 0x1000, end / 0x1000, "a fetch crosses a page");
            at += n * 32;
        }
    }
}
