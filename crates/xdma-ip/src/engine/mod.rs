//! The DMA engines (PG195's H2C and C2H channels): a run from the run bit's rising edge until
//! the engine stops, and each cycle's step, handed to the memory-mapped engines (`mm.rs`) or
//! the stream engines (`stream.rs`); what they share is in `state.rs`.

mod mm;
mod state;
mod stream;

pub(crate) use state::{Ctx, Engine, Posted};

use xdma_regmap::status;

use crate::config::EngineKind;
use crate::pcie::PcieConfig;
use crate::Result;
use state::Run;

impl Engine {
    /// The run bit's rising edge: the engine starts at its first descriptor. `credit`: the
    /// engine runs in credit mode (a C2H stream engine whose bit of the SGDMA common block's
    /// credit mode register is set); `timing`: the IP's PCIe port's, whose request IDs bound
    /// the engine's requests.
    pub(crate) fn start(&mut self, credit: bool, timing: Option<PcieConfig>) {
        let (read_ids, write_ids) = timing.map_or((u32::MAX, u32::MAX), |t| {
            (t.h2c_request_ids, t.c2h_request_ids)
        });
        self.completed = 0;
        self.status = status::BUSY;
        if !credit {
            self.credits = u32::MAX;
        }
        self.run = Some(Run::new(
            self.first_desc,
            self.adjacent,
            read_ids,
            write_ids,
        ));
        tracing::debug!(engine = %self.name(), first = self.first_desc, "engine started");
    }

    /// The run bit cleared. PG195 (H2C and C2H Channel Control 0x04, Run): "Reset to 0 to
    /// stop transfer. If the engine is busy it completes the current descriptor"; the status
    /// register's idle_stopped is set "when the engine is idle after resetting the Control
    /// register Run bit". So a memory-mapped engine completes the descriptor it is on (the
    /// one of its oldest burst not yet answered, once any of its bursts has gone out): it
    /// issues that descriptor's remaining bursts and counts it, and for C2H writes its data
    /// to host memory. It fetches, plans and starts nothing after it. Bursts of later
    /// descriptors already on the card's bus are answered there, since an AXI master cannot
    /// take an address back, but they are void: their data goes nowhere (C2H) and their
    /// descriptors are not counted. The engine is idle once its bus is, and from then on
    /// it writes nothing to host memory: a driver may free the pages the chain pointed at
    /// as soon as it sees the engine stopped (`xdma.ko`'s performance stop frees them at
    /// once). Stream engines stop as `step_h2c_stream` and `step_c2h_stream` say: a packet
    /// on the H2C stream leaves whole, a C2H descriptor half filled is given up.
    pub(crate) fn stop(&mut self) {
        let name = self.name();
        let stream = self.stream();
        let Some(r) = self.run.as_mut() else {
            return;
        };
        r.stopping = true;
        if !stream {
            match r.on_bus.iter().position(|(_, p, _)| p.last_of.is_some()) {
                Some(last) => {
                    // The current descriptor's last burst is out: what follows it is void.
                    for (_, p, _) in r.on_bus.iter_mut().skip(last + 1) {
                        p.void = true;
                    }
                    r.planned.clear();
                }
                None => {
                    // Its last burst is still planned: the engine goes on to it. (With
                    // nothing planned, the engine is between descriptors, waiting for a
                    // fetch, and stops at once.)
                    let keep = r
                        .planned
                        .iter()
                        .position(|p| p.last_of.is_some())
                        .map_or(r.planned.len(), |i| i + 1);
                    r.planned.truncate(keep);
                }
            }
            // H2C: the host reads still queued are those of the current descriptor's
            // remaining bursts at most (reads are queued a descriptor at a time, in order).
            let need = r.planned.back().map_or(0, |p| p.off + p.piece.bytes as u64);
            while r.reads.queued.back().is_some_and(|q| q.2 > need) {
                r.reads.queued.pop_back();
            }
        }
        tracing::debug!(
            engine = %name,
            on_bus = r.on_bus.len(),
            void = r.on_bus.iter().filter(|(_, p, _)| p.void).count(),
            planned = r.planned.len(),
            "run cleared"
        );
    }

    /// One cycle of the engine: its performance counter, and its run's step.
    pub(crate) fn step(&mut self, cx: &mut Ctx<'_>) -> Result<()> {
        if self.perf_ctrl & 1 != 0 || (self.perf_ctrl & 4 != 0 && self.run.is_some()) {
            self.perf_cyc += 1;
        }
        if self.run.is_none() {
            return Ok(());
        }
        match (self.kind, self.c2h) {
            (EngineKind::MemoryMapped, false) => self.step_mm_h2c(cx),
            (EngineKind::MemoryMapped, true) => self.step_mm_c2h(cx),
            (EngineKind::Stream, false) => self.step_h2c_stream(cx),
            (EngineKind::Stream, true) => self.step_c2h_stream(cx),
        }
    }
}
