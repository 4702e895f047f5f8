//! The memory-mapped engines (PG195's AXI4 memory-mapped H2C and C2H channels): descriptors
//! planned as AXI bursts on the card's `s_axi`, H2C reads of host memory within request IDs and
//! tags, C2H writes with their IDs held until acknowledged, bus errors, and what a stopped run
//! leaves on the bus.

use axi_bfm::burst::{self, Piece};
use axi_bfm::{Resp, TxnId};
use xdma_regmap::{self as map, control, status, Descriptor};

use super::state::{Ctx, Engine, Planned};
use crate::pcie::{pcie_pieces, Ps};
use crate::Result;

/// Bursts an engine plans ahead of the bus: enough to keep the card's AXI port busy without
/// planning a whole long chain at once.
const PLAN_AHEAD: usize = 64;
/// Bytes an engine keeps on the card's bus without timing (with timing its request IDs bound
/// them): 64 H2C bursts of 256 bytes or four C2H reads of 4 KiB, as many as keep the card's
/// paths busy. Counted in bytes, not bursts, since what is on the bus when the run bit is
/// cleared must still be drained before the engine is idle (see `Engine::stop`).
const UNTIMED_ON_BUS_BYTES: u64 = 16 << 10;

impl Engine {
    /// Takes descriptors into the memory-mapped plan while it is short: each split into AXI
    /// bursts of at most `beats` beats (never across 4 KiB), an H2C one's data queued as reads
    /// of host memory. A failed fetch at the head ends the planning with its fault.
    fn plan_mm(&mut self, cx: &mut Ctx<'_>, beats: u32) {
        let c2h = self.c2h;
        let bus = cx.card.dma().bus_bytes();
        let max_read = cx.pcie.max_read_request();
        let id = self.axi_id();
        let fixed = self.control & control::NON_INCR_ADDR != 0;
        let Some(run) = self.run.as_mut() else { return };
        while !run.stopping && run.fault.is_none() && run.planned.len() < PLAN_AHEAD {
            let Some(f) = run.supply.ready.pop_front() else {
                break;
            };
            let d = match f {
                Ok(d) => d,
                Err(bits) => {
                    run.fault = Some(bits);
                    run.supply.next = None;
                    break;
                }
            };
            let len = d.length() as u64;
            let (card, host) = if c2h { (d.src, d.dst) } else { (d.dst, d.src) };
            // PG195's fixed-address mode ("AXI4 MM fixed address" in its alignment and length
            // granularity tables) needs the card address and the length in whole beats of the
            // data path; a descriptor that breaks the rule stops the engine on it.
            let whole = |v: u64| v.is_multiple_of(bus as u64);
            if fixed && !(whole(card) && whole(len)) {
                run.fault = Some(status::ALIGN_MISMATCH);
                run.supply.next = None;
                break;
            }
            let off = if c2h {
                0
            } else {
                run.reads.push(host, len, max_read)
            };
            // Every beat of a fixed-address descriptor goes to its card address: FIXED
            // bursts, as a keyhole is addressed on AXI (PG195 names no burst type for the
            // mode; FIXED is the one AXI has for it).
            let pieces = if fixed {
                burst::split_fixed(id, card, len as usize, bus)
            } else {
                burst::split(id, card, len as usize, bus, beats)
            };
            let n = pieces.len();
            if n == 0 {
                // A descriptor of no bytes has no burst: it completes with the one before.
                run.planned.push_back(Planned {
                    piece: Piece {
                        burst: burst::Burst::incr(id, card, bus.trailing_zeros() as u8, 1),
                        offset: 0,
                        bytes: 0,
                    },
                    host,
                    void: false,
                    off,
                    last_of: Some(d),
                });
                continue;
            }
            for (i, p) in pieces.into_iter().enumerate() {
                run.planned.push_back(Planned {
                    piece: p,
                    host: host + p.offset as u64,
                    void: false,
                    off: off + p.offset as u64,
                    last_of: (i + 1 == n).then_some(d),
                });
            }
        }
    }

    /// What ends a memory-mapped run once its bus is idle: a fault, a cleared run bit.
    fn end_mm(&mut self, cx: &mut Ctx<'_>) {
        let Some(run) = self.run.as_mut() else {
            return;
        };
        if !run.on_bus.is_empty() {
            return;
        }
        if run.stopping {
            // Idle once the current descriptor is done and the bus is clear.
            if run.planned.is_empty() {
                self.finish(cx, status::IDLE_STOPPED, false);
            }
        } else if let Some(bits) = run.fault.filter(|_| run.planned.is_empty()) {
            self.finish(cx, bits, true);
        }
    }

    /// A piece has gone on the bus: when it was the last of its descriptor (`last_of`), the
    /// descriptor is done, and a descriptor with its Stop bit stops the engine. True when
    /// the engine stopped, and so nothing more of this step is to be done.
    fn piece_done(&mut self, cx: &mut Ctx<'_>, last_of: Option<Descriptor>) -> bool {
        let Some(d) = last_of else {
            return false;
        };
        self.complete(cx, &d, u64::from(d.length()));
        let stop = d.control & map::desc::STOP != 0;
        if stop {
            self.finish(cx, status::DESC_STOPPED, false);
        }
        stop
    }

    /// An error answer from the card: logged, and the run ended when the control register
    /// enables stopping on it (PG195: the ie_*_error bits enable logging the error and
    /// stopping the engine; without them the engine goes on as if nothing happened, and the
    /// Linux driver enables read errors, not write errors). True when the run ended.
    fn bus_error(&mut self, cx: &mut Ctx<'_>, resp: Resp) -> Result<bool> {
        let (c2h, ch) = (self.c2h, self.channel);
        let (bits, group) = match (c2h, resp) {
            (false, Resp::DecErr) => (status::H2C_W_DECODE_ERR, control::IE_WRITE_ERROR),
            (false, _) => (status::H2C_W_SLAVE_ERR, control::IE_WRITE_ERROR),
            (true, Resp::DecErr) => (status::C2H_R_DECODE_ERR, control::IE_READ_ERROR),
            (true, _) => (status::C2H_R_SLAVE_ERR, control::IE_READ_ERROR),
        };
        tracing::info!(
            c2h,
            ch,
            ?resp,
            "the card answered a DMA burst with an error"
        );
        if self.control & group != 0 {
            self.abandon_mm(cx)?;
            self.finish(cx, bits, true);
            return Ok(true);
        }
        Ok(false)
    }

    /// A memory-mapped H2C run: reads of host memory as the request IDs and tags allow, each
    /// AXI write burst issued once its bytes have arrived, descriptors completed in order as
    /// the card answers their last burst.
    pub(super) fn step_mm_h2c(&mut self, cx: &mut Ctx<'_>) -> Result<()> {
        let now = cx.now();
        // Retire what the card has answered, in order.
        while let Some((txn, p, issued)) = self.answered(cx) {
            if p.void {
                // A burst after the current descriptor of a stopped run: the card has it,
                // and it counts for nothing (whatever the card answered).
                if p.piece.bytes > 0 {
                    cx.card.dma().take_write(txn)?;
                }
                continue;
            }
            if let Some(run) = self.run.as_mut() {
                run.taken = p.off + p.piece.bytes as u64;
            }
            if p.piece.bytes > 0 {
                cx.latency.measure(true, issued, now, p.piece.burst.beats());
                let resp = cx.card.dma().take_write(txn)?;
                if !resp.is_ok() && self.bus_error(cx, resp)? {
                    return Ok(());
                }
            }
            if self.piece_done(cx, p.last_of) {
                return Ok(());
            }
        }
        self.supply(cx);
        let beats = cx.max_burst_beats;
        self.plan_mm(cx, beats);
        self.poll_reads(cx);
        // A burst goes to the card once its bytes are in the engine.
        let cap = on_bus_cap(cx);
        loop {
            let Some(run) = self.run.as_mut() else {
                return Ok(());
            };
            // A stopped run's plan holds only the rest of its current descriptor.
            if run.on_bus_bytes >= cap {
                break;
            }
            let Some(&p) = run.planned.front() else { break };
            if p.off + p.piece.bytes as u64 > run.reads.arrived {
                break;
            }
            run.planned.pop_front();
            let txn = if p.piece.bytes == 0 {
                TxnId(u64::MAX)
            } else {
                let mut buf = vec![0u8; p.piece.bytes];
                if cx.mem.read(p.host, &mut buf).is_err() {
                    tracing::info!(
                        src = p.host,
                        len = buf.len(),
                        "H2C data outside host memory"
                    );
                    self.abandon_mm(cx)?;
                    self.finish(cx, status::H2C_R_UNSUPP_REQ, true);
                    return Ok(());
                }
                cx.card.dma().start_write_burst(p.piece.burst, &buf)?
            };
            if let Some(run) = self.run.as_mut() {
                run.on_bus.push_back((txn, p, now));
                run.on_bus_bytes += p.piece.bytes as u64;
            }
        }
        self.end_mm(cx);
        Ok(())
    }

    /// A memory-mapped C2H run: AXI read bursts of one max payload each within the request
    /// IDs, each burst's data up the link as memory writes once the card has answered, the ID
    /// held until the link partner acknowledges them.
    pub(super) fn step_mm_c2h(&mut self, cx: &mut Ctx<'_>) -> Result<()> {
        let now = cx.now();
        if let Some(run) = self.run.as_mut() {
            run.write_ids.free_upto(now);
        }
        let mps = cx.pcie.max_payload();
        while let Some((txn, p, issued)) = self.answered(cx) {
            if p.void {
                // A read after the current descriptor of a stopped run: its data is dropped
                // in the engine, nothing goes up the link.
                if p.piece.bytes > 0 {
                    cx.card.dma().take_read(txn)?;
                }
                continue;
            }
            if p.piece.bytes > 0 {
                cx.latency
                    .measure(false, issued, now, p.piece.burst.beats());
                let (data, resp) = cx.card.dma().take_read(txn)?;
                if !resp.is_ok() {
                    if self.bus_error(cx, resp)? {
                        return Ok(());
                    }
                } else {
                    let bytes = data.get(..p.piece.bytes).unwrap_or(&data);
                    if cx.mem.write(p.host, bytes).is_err() {
                        cx.stats.lost_writes += 1;
                        tracing::info!(
                            dst = p.host,
                            len = bytes.len(),
                            "C2H data outside host memory, dropped"
                        );
                    }
                }
                let mut acked = now;
                for n in pcie_pieces(p.host, p.piece.bytes as u64, mps) {
                    let arrived = cx.pcie.write(now, n);
                    acked = acked.max(cx.pcie.acknowledged(arrived));
                }
                if let Some(run) = self.run.as_mut() {
                    run.write_ids.hold(acked);
                }
            }
            if self.piece_done(cx, p.last_of) {
                return Ok(());
            }
        }
        self.supply(cx);
        // Each read is one memory write to the host: sized by the max payload.
        let bus = cx.card.dma().bus_bytes() as u64;
        let beats = (mps / bus).clamp(1, 256) as u32;
        self.plan_mm(cx, beats);
        let cap = on_bus_cap(cx);
        loop {
            let Some(run) = self.run.as_mut() else {
                return Ok(());
            };
            // A stopped run's plan holds only the rest of its current descriptor.
            if run.on_bus_bytes >= cap || !run.write_ids.has_room(run.on_bus.len()) {
                break;
            }
            let Some(p) = run.planned.pop_front() else {
                break;
            };
            let txn = if p.piece.bytes == 0 {
                TxnId(u64::MAX)
            } else {
                cx.card.dma().start_read_burst(p.piece.burst)?
            };
            if let Some(run) = self.run.as_mut() {
                run.on_bus.push_back((txn, p, now));
                run.on_bus_bytes += p.piece.bytes as u64;
            }
        }
        self.end_mm(cx);
        Ok(())
    }

    /// The oldest burst of a memory-mapped run, taken off the bus once the card has answered
    /// it (one AXI ID per engine, so answers come in order); a burst of no bytes at once.
    fn answered(&mut self, cx: &mut Ctx<'_>) -> Option<(TxnId, Planned, Ps)> {
        let run = self.run.as_mut()?;
        let &(txn, p, _) = run.on_bus.front()?;
        if p.piece.bytes > 0 && !cx.card.dma().is_done(txn) {
            return None;
        }
        run.on_bus_bytes -= p.piece.bytes as u64;
        run.on_bus.pop_front()
    }

    /// Lets what an ended run still has on the card's bus finish, so that the bus stays legal
    /// and the next run starts on an idle port.
    fn abandon_mm(&mut self, cx: &mut Ctx<'_>) -> Result<()> {
        let c2h = self.c2h;
        let ops: Vec<(TxnId, Planned, Ps)> = self
            .run
            .as_mut()
            .map(|r| {
                r.on_bus_bytes = 0;
                r.on_bus.drain(..).collect()
            })
            .unwrap_or_default();
        for (txn, p, _) in ops {
            if p.piece.bytes == 0 {
                continue;
            }
            cx.card.wait_dma(txn)?;
            if c2h {
                cx.card.dma().take_read(txn)?;
            } else {
                cx.card.dma().take_write(txn)?;
            }
        }
        Ok(())
    }
}

/// Bytes an engine may keep on the card's bus.
fn on_bus_cap(cx: &Ctx<'_>) -> u64 {
    if cx.pcie.config().is_some() {
        u64::MAX
    } else {
        UNTIMED_ON_BUS_BYTES
    }
}
