//! The timing settings of everything around the card, in simulated time: the PCIe link and the
//! host's root complex, which the IP's PCIe port models (`xdma_ip::pcie`), and the host
//! driver's costs, which the driver model spends where the driver spends them
//! (`xdma_driver::Costs`).
//!
//! Nothing here is a table of measured rows: the driver's costs are named phases
//! ([`HostConfig`]) whose sums come from two rows of the reference (`docs/timing-model.md`).
//! The card's own latencies are whatever the RTL does.

use serde::{Deserialize, Serialize};
use xdma_core::{Error, Result};
pub use xdma_ip::pcie::{ns, Inbound, LinkConfig, Ps, RootConfig};

/// The host driver's costs, each a phase of a call. Which of them a caller pays in full
/// depends on how it submits (see `docs/timing-model.md`): a transfer queued behind another
/// on its channel hides `submit`, `wake` and `turnaround` behind the previous transfer; a
/// serial caller pays every phase.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HostConfig {
    /// From the call to the transfer waiting in the driver's queue, in ns: system call, pinning
    /// the user pages, the scatter list. Off the engine's critical path when the transfer is
    /// queued behind another. Default 5000.
    pub submit_ns: f64,
    /// From the engine being free to its doorbell write: the driver takes the next queued
    /// transfer, builds its descriptors and starts the engine. On the engine's critical path.
    /// Default 9000.
    pub start_ns: f64,
    /// From the completion interrupt reaching the host to the driver having finished with the
    /// transfer (interrupt entry, deferred work, status, unmapping): on the engine's critical
    /// path, since the next queued transfer starts after it. Default 8000.
    pub irq_ns: f64,
    /// From the driver finishing a transfer to the caller running again: waking the thread
    /// and returning from the system call. Off the critical path of queued transfers.
    /// Default 6000.
    pub wake_ns: f64,
    /// What the caller does between a call's return and its next call (its own loop, timing,
    /// checks), in ns: the modelled host time between calls, never wall-clock time.
    /// Default 2000.
    pub turnaround_ns: f64,
    /// A register access through the user BAR node: the system call and the MMIO access's
    /// host side, in ns. Default 1000.
    pub register_ns: f64,
    /// Where the driver writes each transfer's descriptors (see [`Descriptors`]). Default
    /// `from-start`, as the reference board's host driver did.
    pub descriptors: Descriptors,
}

/// Where the host driver writes a transfer's descriptors: this decides where a long request
/// is cut into engine runs (each run pays `start_ns` and `irq_ns` on the engine's critical
/// path) and how many descriptors each fetch of the IP takes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Descriptors {
    /// As the Windows XDMA driver, which the reference board's host ran (its measurements were
    /// taken with ReadFile/WriteFile): each transfer of up to 8 MiB is written from the start
    /// of the engine's descriptor buffer, so a request of up to 8 MiB is always one engine
    /// run; fetches of at most one max read request of descriptors.
    #[default]
    FromStart,
    /// As `xdma.ko`: a ring of 2048 descriptors per engine, each transfer from the ring's next
    /// free index, cut at the ring's end into a second engine run; fetches aligned to 64
    /// descriptors within a page.
    Ring,
}

impl Descriptors {
    /// The driver model's layout.
    pub fn layout(self) -> xdma_driver::DescLayout {
        match self {
            Descriptors::FromStart => xdma_driver::DescLayout::FromStart,
            Descriptors::Ring => xdma_driver::DescLayout::Ring,
        }
    }
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            submit_ns: 5000.0,
            start_ns: 9000.0,
            irq_ns: 8000.0,
            wake_ns: 6000.0,
            turnaround_ns: 2000.0,
            register_ns: 1000.0,
            descriptors: Descriptors::FromStart,
        }
    }
}

/// All timing parameters, with defaults for the reference board (Kintex-7, XDMA Gen2 x8).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TimingConfig {
    /// The PCIe link.
    pub link: LinkConfig,
    /// The root complex and host memory.
    pub root: RootConfig,
    /// The host driver.
    pub host: HostConfig,
}

/// Checks a number against its range; the error names the field.
pub(crate) fn in_range(name: &str, v: f64, lo: f64, hi: f64, what: &str) -> Result<()> {
    if v.is_finite() && (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(Error::Config(format!(
            "[sim] {name} = {v}: must be {lo} to {hi} ({what})"
        )))
    }
}

impl TimingConfig {
    /// Checks every field against its range.
    pub fn validate(&self) -> Result<()> {
        let l = &self.link;
        if !(1..=5).contains(&l.generation) {
            return Err(Error::Config(format!(
                "[sim] timing.link.generation = {}: PCIe generations 1 to 5 are modelled",
                l.generation
            )));
        }
        if ![1, 2, 4, 8, 12, 16, 32].contains(&l.lanes) {
            return Err(Error::Config(format!(
                "[sim] timing.link.lanes = {}: PCIe links have 1, 2, 4, 8, 12, 16 or 32 lanes",
                l.lanes
            )));
        }
        for (name, v) in [
            ("timing.link.max_payload", l.max_payload),
            ("timing.link.max_read_request", l.max_read_request),
        ] {
            if !v.is_power_of_two() || !(128..=4096).contains(&v) {
                return Err(Error::Config(format!(
                    "[sim] {name} = {v}: PCIe allows 128 to 4096 bytes, a power of two"
                )));
            }
        }
        let rcb = l.read_completion_boundary;
        if !rcb.is_power_of_two() || rcb < 64 || rcb > l.max_payload {
            return Err(Error::Config(format!(
                "[sim] timing.link.read_completion_boundary = {rcb}: 64, or a power of two from 128 up to max_payload ({})",
                l.max_payload
            )));
        }
        in_range(
            "timing.link.tlps_per_dllp",
            l.tlps_per_dllp,
            1.0,
            64.0,
            "TLPs per acknowledge DLLP",
        )?;
        in_range(
            "timing.link.skp_interval_symbols",
            l.skp_interval_symbols,
            370.0,
            1538.0,
            "symbol times or blocks between SKP ordered sets",
        )?;
        let latencies = [
            ("timing.link.flight_ns", l.flight_ns, 10_000.0),
            (
                "timing.root.read_latency_ns",
                self.root.read_latency_ns,
                100_000.0,
            ),
            (
                "timing.root.ack_latency_ns",
                self.root.ack_latency_ns,
                100_000.0,
            ),
        ];
        for (name, v, hi) in latencies {
            in_range(name, v, 0.0, hi, "nanoseconds")?;
        }
        let r = &self.root;
        let server = [
            (
                "timing.root.write_tlp_ns",
                r.write_tlp_ns,
                10_000.0,
                "nanoseconds",
            ),
            (
                "timing.root.read_tlp_ns",
                r.read_tlp_ns,
                10_000.0,
                "nanoseconds",
            ),
            (
                "timing.root.write_ns_per_byte",
                r.write_ns_per_byte,
                100.0,
                "nanoseconds per byte",
            ),
            (
                "timing.root.read_ns_per_byte",
                r.read_ns_per_byte,
                100.0,
                "nanoseconds per byte",
            ),
        ];
        for (name, v, hi, what) in server {
            in_range(name, v, 0.0, hi, what)?;
        }
        if r.posted_header_credits > 4096 {
            return Err(Error::Config(format!(
                "[sim] timing.root.posted_header_credits = {}: 0 (infinite) or 1 to 4096",
                r.posted_header_credits
            )));
        }
        // The PCIe Base Specification has a receiver advertise room for at least one
        // max-payload write; fewer data credits would stop every C2H write for good.
        let least = u64::from(l.max_payload).div_ceil(xdma_ip::pcie::CREDIT_BYTES);
        let d = u64::from(r.posted_data_credits);
        if d != 0 && !(least..=65_536).contains(&d) {
            return Err(Error::Config(format!(
                "[sim] timing.root.posted_data_credits = {d}: 0 (infinite) or {least} (one max payload of {} bytes, in 16-byte credits) to 65536",
                l.max_payload
            )));
        }
        let h = &self.host;
        let host = [
            ("timing.host.submit_ns", h.submit_ns),
            ("timing.host.start_ns", h.start_ns),
            ("timing.host.irq_ns", h.irq_ns),
            ("timing.host.wake_ns", h.wake_ns),
            ("timing.host.turnaround_ns", h.turnaround_ns),
            ("timing.host.register_ns", h.register_ns),
        ];
        for (name, v) in host {
            // Ten milliseconds: far beyond any driver's cost, short enough that every sum of
            // phases stays within a u64 of picoseconds.
            in_range(name, v, 0.0, 10_000_000.0, "nanoseconds")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_has_a_range() {
        let bad = |f: fn(&mut TimingConfig)| {
            let mut c = TimingConfig::default();
            f(&mut c);
            let e = c.validate().expect_err("out of range");
            assert_eq!(e.kind(), xdma_core::ErrorKind::Config);
            e.to_string()
        };
        assert!(TimingConfig::default().validate().is_ok());
        assert!(bad(|c| c.link.generation = 0).contains("timing.link.generation"));
        assert!(bad(|c| c.link.lanes = 3).contains("timing.link.lanes"));
        assert!(bad(|c| c.link.max_payload = 100).contains("timing.link.max_payload"));
        assert!(bad(|c| c.link.tlps_per_dllp = 0.0).contains("tlps_per_dllp"));
        assert!(bad(|c| c.link.flight_ns = 1e20).contains("timing.link.flight_ns"));
        assert!(bad(|c| c.root.read_latency_ns = f64::NAN).contains("read_latency_ns"));
        assert!(bad(|c| c.root.write_ns_per_byte = -0.1).contains("write_ns_per_byte"));
        assert!(bad(|c| c.root.read_tlp_ns = 1e9).contains("timing.root.read_tlp_ns"));
        assert!(bad(|c| c.root.posted_header_credits = 5000).contains("posted_header_credits"));
        // Fewer data credits than one max payload of 256 bytes (16) could never send a write.
        assert!(bad(|c| c.root.posted_data_credits = 15).contains("posted_data_credits"));
        let mut infinite = TimingConfig::default();
        infinite.root.posted_data_credits = 0;
        infinite.root.posted_header_credits = 0;
        assert!(
            infinite.validate().is_ok(),
            "0 credits advertise infinite ones"
        );
        assert!(bad(|c| c.host.submit_ns = -1.0).contains("timing.host.submit_ns"));
        assert!(bad(|c| c.host.turnaround_ns = f64::INFINITY).contains("turnaround_ns"));
    }
}
