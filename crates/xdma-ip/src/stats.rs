//! What the IP counts for logs and tests: its work (`IpStats`) and the card-side latencies of
//! the engines' bursts on `s_axi`, measured on the RTL.

use crate::pcie::Ps;

/// Counts of what the IP did, for logs and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IpStats {
    /// Descriptors the engines completed.
    pub descriptors: u64,
    /// Reads of descriptor blocks the engines made.
    pub descriptor_fetches: u64,
    /// Data bytes the engines moved.
    pub bytes: u64,
    /// MSI or MSI-X messages sent.
    pub messages: u64,
    /// INTx level changes.
    pub intx_changes: u64,
    /// DMA writes to host memory that fell outside it and were dropped (posted writes carry
    /// no error back to the engine).
    pub lost_writes: u64,
    /// `axi_aclk` cycles run.
    pub cycles: u64,
}

/// A running minimum and mean of card-side latencies.
#[derive(Debug, Clone, Copy, Default)]
struct Stat {
    n: u64,
    sum_ps: u64,
    min_ps: u64,
}

impl Stat {
    fn add(&mut self, ps: u64) {
        self.min_ps = if self.n == 0 { ps } else { self.min_ps.min(ps) };
        self.n += 1;
        self.sum_ps = self.sum_ps.saturating_add(ps);
    }

    fn min_ns(&self) -> f64 {
        self.min_ps as f64 / 1000.0
    }

    fn mean_ns(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum_ps as f64 / self.n as f64 / 1000.0
        }
    }
}

/// Card-side latencies seen on `s_axi` so far, measured on the RTL.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LatencyStats {
    /// Read bursts measured.
    pub reads: u64,
    /// Shortest read latency in ns: from the burst's issue to its last beat, less the time
    /// its beats take at one per cycle, which is the wait for the first beat when the burst
    /// streams without gaps. The shortest is the unloaded latency.
    pub read_min_ns: f64,
    /// Mean read latency in ns, queueing behind earlier bursts of the window included.
    pub read_mean_ns: f64,
    /// Write bursts measured.
    pub writes: u64,
    /// Shortest write latency in ns: from the burst's issue to its response, less the time
    /// its data beats take: about the last beat to the response.
    pub write_min_ns: f64,
    /// Mean write latency in ns.
    pub write_mean_ns: f64,
}

/// The card-side latencies of the engines' bursts.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Latency {
    reads: Stat,
    writes: Stat,
}

/// One `axi_aclk` cycle in ps.
const CYCLE_PS: Ps = 1_000_000_000_000 / crate::AXI_HZ;

impl Latency {
    /// Records a burst's card-side latency: from its issue at `issued` to its end at `now`,
    /// less its beats at one per cycle.
    pub(crate) fn measure(&mut self, write: bool, issued: Ps, now: Ps, beats: u32) {
        let beats_ps = u64::from(beats) * CYCLE_PS;
        // A read's last beat is itself one of the beats; a write's response comes after them.
        if write {
            self.writes.add(now.saturating_sub(issued + beats_ps));
        } else {
            self.reads
                .add(now.saturating_sub(issued + beats_ps - CYCLE_PS));
        }
    }

    pub(crate) fn stats(&self) -> LatencyStats {
        LatencyStats {
            reads: self.reads.n,
            read_min_ns: self.reads.min_ns(),
            read_mean_ns: self.reads.mean_ns(),
            writes: self.writes.n,
            write_min_ns: self.writes.min_ns(),
            write_mean_ns: self.writes.mean_ns(),
        }
    }
}
