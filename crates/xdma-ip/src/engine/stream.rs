//! The stream engines (PG195's AXI4-Stream H2C and C2H channels): H2C packets gathered from
//! descriptors up to EOP and let out on the card's stream port as their bytes arrive, C2H
//! packets written into descriptors in order with a result record for each.

use axi_bfm::AxisFrame;
use xdma_regmap::{self as map, status};

use super::state::{Ctx, Engine};
use crate::Result;

impl Engine {
    /// An H2C stream run: descriptors gathered until one ends the packet (EOP) or the chain
    /// (STOP), the packet's bytes read from host memory as the IDs and tags allow, its beats
    /// let out as the bytes arrive, its descriptors completed once its last beat has left.
    pub(super) fn step_h2c_stream(&mut self, cx: &mut Ctx<'_>) -> Result<()> {
        let port = self.port;
        let Some(src) = cx.card.h2c(port).cloned() else {
            return Ok(());
        };
        let timed = cx.pcie.config().is_some();
        self.poll_reads(cx);
        let Some(run) = self.run.as_mut() else {
            return Ok(());
        };
        if !run.sending.is_empty() || run.sending_len > 0 {
            if run.stopping && !src.cancel_unstarted() {
                // No beat of the packet went out: it is dropped and the stream stays idle.
                src.set_credit(None);
                run.sending.clear();
                run.sending_len = 0;
            } else if !src.idle() {
                let consumed = src.progress() as u64;
                run.taken = run.sending_off + consumed;
                // A beat goes out once the link has brought its bytes. A packet that had
                // started when the run was stopped is let out whole, since AXI-Stream cannot
                // take a beat back.
                if timed {
                    let credit = if run.stopping {
                        run.sending_len
                    } else {
                        (run.reads.arrived - run.sending_off) as usize
                    };
                    src.set_credit(Some(credit));
                }
                return Ok(());
            } else {
                src.set_credit(None);
                run.taken = run.sending_off + run.sending_len as u64;
                run.sending_len = 0;
                let descs = std::mem::take(&mut run.sending);
                for d in &descs {
                    self.complete(cx, d, u64::from(d.length()));
                    if d.control & map::desc::STOP != 0 {
                        self.finish(cx, status::DESC_STOPPED, false);
                        return Ok(());
                    }
                }
            }
        }
        let Some(run) = self.run.as_mut() else {
            return Ok(());
        };
        if run.stopping {
            // An aborted run drops the packet it was gathering.
            self.finish(cx, status::IDLE_STOPPED, false);
            return Ok(());
        }
        self.supply(cx);
        let max_read = cx.pcie.max_read_request();
        // Gather descriptors until one ends the packet (EOP) or the chain (STOP).
        loop {
            let Some(run) = self.run.as_mut() else {
                return Ok(());
            };
            let Some(f) = run.supply.ready.pop_front() else {
                return Ok(());
            };
            let d = match f {
                Ok(d) => d,
                Err(bits) => {
                    self.finish(cx, bits, true);
                    return Ok(());
                }
            };
            let mut buf = vec![0u8; d.length() as usize];
            if cx.mem.read(d.src, &mut buf).is_err() {
                tracing::info!(src = d.src, "H2C stream data outside host memory");
                self.finish(cx, status::H2C_R_UNSUPP_REQ, true);
                return Ok(());
            }
            let Some(run) = self.run.as_mut() else {
                return Ok(());
            };
            let off = run.reads.push(d.src, buf.len() as u64, max_read);
            if run.packet.is_empty() {
                run.packet_off = off;
            }
            run.packet_bytes.extend_from_slice(&buf);
            run.packet.push(d);
            if d.control & (map::desc::EOP | map::desc::STOP) != 0 {
                let bytes = std::mem::take(&mut run.packet_bytes);
                let descs = std::mem::take(&mut run.packet);
                if bytes.is_empty() {
                    // An empty packet has no beat to carry TLAST: its descriptors are done.
                    for d in &descs {
                        self.complete(cx, d, 0);
                        if d.control & map::desc::STOP != 0 {
                            self.finish(cx, status::DESC_STOPPED, false);
                            return Ok(());
                        }
                    }
                    continue;
                }
                run.sending = descs;
                run.sending_off = run.packet_off;
                run.sending_len = bytes.len();
                if timed {
                    src.set_credit(Some(0));
                }
                src.start_send(AxisFrame::new(bytes))?;
                self.poll_reads(cx);
                return Ok(());
            }
        }
    }

    /// A C2H stream run: while descriptors are in the engine the port takes beats; bytes go
    /// up the link as memory writes as a payload's worth arrives; each packet fills
    /// descriptors in order, every descriptor it ends or fills gets its result record.
    pub(super) fn step_c2h_stream(&mut self, cx: &mut Ctx<'_>) -> Result<()> {
        let now = cx.now();
        let port = self.port;
        let Some(sink) = cx.card.c2h(port).cloned() else {
            return Ok(());
        };
        if self.run.as_mut().is_some_and(|r| r.stopping) {
            // The run was given up: a descriptor half filled stays as it is (its result is
            // never written), and what the stream still holds waits for the next run.
            self.finish(cx, status::IDLE_STOPPED, false);
            return Ok(());
        }
        self.supply(cx);
        let mps = cx.pcie.max_payload();
        let timed = cx.pcie.config().is_some();
        let Some(run) = self.run.as_mut() else {
            return Ok(());
        };
        if !run.open && (run.filling.is_some() || !run.supply.ready.is_empty()) {
            run.open = true;
            sink.set_enabled(true);
        }
        if timed {
            let have = sink.partial() as u64;
            let mut posted = run.posted;
            while posted + mps <= have {
                cx.pcie.write(now, mps);
                posted += mps;
            }
            if let Some(run) = self.run.as_mut() {
                run.posted = posted;
            }
        }
        loop {
            // The next packet: the rest of one an earlier descriptor could not hold, or one
            // that has come in whole.
            let (packet, fresh) = match self.leftovers.pop_front() {
                Some(p) => (p, false),
                None => match sink.try_recv() {
                    Some(f) => (f.data, true),
                    None => return Ok(()),
                },
            };
            if fresh && timed {
                // The rest of the packet goes up behind what went as it arrived.
                let posted = self.run.as_mut().map_or(0, |r| r.posted);
                let mut left = (packet.len() as u64).saturating_sub(posted);
                while left > 0 {
                    let n = left.min(mps);
                    cx.pcie.write(now, n);
                    left -= n;
                }
                if let Some(run) = self.run.as_mut() {
                    run.posted = 0;
                }
            }
            let mut at = 0usize;
            while at < packet.len() || packet.is_empty() {
                // The descriptor to fill: the one under way, or the next in the engine.
                let cur = self.run.as_mut().and_then(|r| r.filling.take());
                let (d, filled) = match cur {
                    Some(c) => c,
                    None => match self.run.as_mut().and_then(|r| r.supply.ready.pop_front()) {
                        Some(Ok(d)) => (d, 0),
                        Some(Err(bits)) => {
                            self.leftovers.push_front(packet[at..].to_vec());
                            self.finish(cx, bits, true);
                            return Ok(());
                        }
                        None => {
                            // No descriptor in the engine: the rest waits for one (or for the
                            // next run, when the chain has ended).
                            self.leftovers.push_front(packet[at..].to_vec());
                            if self.run.as_mut().is_some_and(|r| r.supply.exhausted()) {
                                self.finish(cx, status::DESC_STOPPED, false);
                            }
                            return Ok(());
                        }
                    },
                };
                let room = d.length() as usize - filled;
                let n = room.min(packet.len() - at);
                if cx
                    .mem
                    .write(d.dst + filled as u64, &packet[at..at + n])
                    .is_err()
                {
                    cx.stats.lost_writes += 1;
                    tracing::info!(dst = d.dst, "C2H stream data outside host memory, dropped");
                }
                at += n;
                let eop = at == packet.len();
                let full = filled + n == d.length() as usize;
                if eop || full {
                    let mut result = [0u8; map::RESULT_BYTES];
                    result[0..4].copy_from_slice(&map::result_status(eop).to_le_bytes());
                    result[4..8].copy_from_slice(&((filled + n) as u32).to_le_bytes());
                    // The result record is a posted write behind the data.
                    cx.pcie.write(now, map::RESULT_BYTES as u64);
                    if cx.mem.write(d.src, &result).is_err() {
                        cx.stats.lost_writes += 1;
                        tracing::info!(
                            addr = d.src,
                            "C2H stream result outside host memory, dropped"
                        );
                    }
                    self.complete(cx, &d, (filled + n) as u64);
                    if d.control & map::desc::STOP != 0 {
                        if at < packet.len() {
                            self.leftovers.push_front(packet[at..].to_vec());
                        }
                        self.finish(cx, status::DESC_STOPPED, false);
                        return Ok(());
                    }
                } else if let Some(r) = self.run.as_mut() {
                    r.filling = Some((d, filled + n));
                }
                if packet.is_empty() {
                    break;
                }
            }
        }
    }
}
