//! rtl-tests: block- and card-level RTL tests, through the RTL's own ports with axi-bfm bus
//! models and protocol monitors on (the host API's system tests are card-tests').
//!
//! The tests live in `tests/`; this library holds what several of them share: byte-lane
//! helpers for AXI4 bursts built on `axi_bfm::burst`, a handshake recorder, seeded random
//! test data ([`random_bytes`]), and (re-exported from `card-harness`, which
//! the XDMA IP model uses too) [`CardHarness`], the card's top with a bus model on every
//! interface, and the closure agents [`hook`] and [`on_sample`].

use std::cell::RefCell;
use std::rc::Rc;

use axi_bfm::{Burst, Env, ResetPolarity, Result};
use card_sim::{ClockId, Model, Top};

pub use card_harness::{
    fires, hook, on_sample, CardHarness, Frame, HarnessConfig, IrqAck, IrqEvent, AXI_HZ, DDR_HZ,
};
/// The card's own LOOP rate, measured on the card harness (the example `loop_rate` prints it).
pub use card_harness::{loop_rate, LoopRate};

/// `n` random bytes from `rng`. Test data comes from the workspace's one generator,
/// `rand_xorshift::XorShiftRng` seeded with `SeedableRng::seed_from_u64`: every run of a seed is
/// the same, so a failure reproduces from the seed the test names.
pub fn random_bytes(rng: &mut impl rand::Rng, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    rng.fill_bytes(&mut v);
    v
}

/// An INCR burst of `beats` beats of `1 << size` bytes at `addr`.
pub fn incr(id: u32, addr: u64, size: u8, beats: usize) -> Burst {
    Burst::incr(id, addr, size, beats as u32)
}

/// Turns full-width beats with per-lane strobes (`(bytes of the bus width, strobe bits)`)
/// into the lane bytes and strobes of [`AxiMaster::start_write_burst_strobed`]: only the lanes
/// each beat of the burst uses, in order.
pub fn strobed_lanes(burst: &Burst, bus: usize, beats: &[(Vec<u8>, u128)]) -> (Vec<u8>, Vec<bool>) {
    let mut data = Vec::new();
    let mut keep = Vec::new();
    for (k, (bytes, strb)) in beats.iter().enumerate() {
        let (lo, hi) = burst.beat_lanes(k as u32, bus);
        for (lane, &b) in bytes.iter().enumerate().take(hi).skip(lo) {
            data.push(b);
            keep.push(strb >> lane & 1 == 1);
        }
    }
    (data, keep)
}

/// What `mem` (covering `base..`) must hold after a write burst of full-width `beats` at
/// `addr` with transfer size `size`: narrow and unaligned beats only touch the byte lanes AXI
/// assigns them, and only where their strobe is set.
pub fn apply_write(
    mem: &mut [u8],
    base: u64,
    addr: u64,
    size: u8,
    bus: usize,
    beats: &[(Vec<u8>, u128)],
) {
    let burst = Burst::incr(0, addr, size, beats.len() as u32);
    for (k, (bytes, strb)) in beats.iter().enumerate() {
        let (lo, hi) = burst.beat_lanes(k as u32, bus);
        let line = burst.beat_line(k as u32, bus);
        for lane in lo..hi {
            if strb >> lane & 1 == 1 {
                mem[(line + lane as u64 - base) as usize] = bytes[lane];
            }
        }
    }
}

/// A response beat (B or R) as recorded from the bus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RespBeat {
    /// BID or RID (0 when the bus has no IDs).
    pub id: u64,
    /// BRESP or RRESP.
    pub resp: u64,
    /// RLAST (always true for B).
    pub last: bool,
    /// Edge number of the handshake on the bus's clock.
    pub cycle: u64,
}

/// Every handshake of an AXI4 bus's address and response channels, in order, recorded
/// before each edge: what the bus models do not keep (per-beat IDs, RLAST, timing).
#[derive(Debug, Clone, Default)]
pub struct AxiLog {
    /// Edges of the AW handshakes.
    pub aw: Vec<u64>,
    /// Edges of the AR handshakes.
    pub ar: Vec<u64>,
    /// Write responses.
    pub b: Vec<RespBeat>,
    /// Read data beats.
    pub r: Vec<RespBeat>,
}

/// Records the handshakes of the AXI4 bus `<prefix>_*` on `clock` (write-only buses too).
pub fn record_axi(env: &mut Env, prefix: &str, clock: ClockId) -> Result<Rc<RefCell<AxiLog>>> {
    let m = env.model();
    let p = |s: &str| m.port(&format!("{prefix}_{s}"));
    let opt = |s: &str| m.port(&format!("{prefix}_{s}")).ok();
    let aw = (p("awvalid")?, p("awready")?);
    let b = (p("bvalid")?, p("bready")?, opt("bid"), p("bresp")?);
    let ar = match (opt("arvalid"), opt("arready")) {
        (Some(v), Some(r)) => Some((v, r)),
        _ => None,
    };
    let r = match (opt("rvalid"), opt("rready"), opt("rresp"), opt("rlast")) {
        (Some(v), Some(rd), Some(resp), Some(last)) => Some((v, rd, opt("rid"), resp, last)),
        _ => None,
    };
    let log = Rc::new(RefCell::new(AxiLog::default()));
    let l = log.clone();
    on_sample(env, clock, move |m, cx| {
        if cx.in_reset {
            return;
        }
        let mut l = l.borrow_mut();
        if fires(m, aw.0, aw.1) {
            l.aw.push(cx.cycle);
        }
        if ar.is_some_and(|(v, r)| fires(m, v, r)) {
            l.ar.push(cx.cycle);
        }
        if fires(m, b.0, b.1) {
            l.b.push(RespBeat {
                id: b.2.map_or(0, |x| m.get(x)),
                resp: m.get(b.3),
                last: true,
                cycle: cx.cycle,
            });
        }
        if let Some((v, rd, id, resp, last)) = r {
            if fires(m, v, rd) {
                l.r.push(RespBeat {
                    id: id.map_or(0, |x| m.get(x)),
                    resp: m.get(resp),
                    last: m.get_bool(last),
                    cycle: cx.cycle,
                });
            }
        }
    });
    Ok(log)
}

/// `axi_mm_path_tb` (the memory-mapped path with a DDR3 model behind it) in an environment
/// with its two clocks, after reset: `(env, clk, ddr_clk)`. Both resets are held together
/// and released together, as the board's reset tree does.
pub fn mm_path() -> Result<(Env, ClockId, ClockId)> {
    let mut env = Env::new(Model::new(Top::AxiMmPathTb)?);
    let clk = env.add_clock("clk", AXI_HZ)?;
    let ddr_clk = env.add_clock("ddr_clk", DDR_HZ)?;
    env.add_reset(clk, "rst", ResetPolarity::ActiveHigh)?;
    env.add_reset(clk, "ddr_rst", ResetPolarity::ActiveHigh)?;
    card_harness::settle_in_reset(&mut env, clk)?;
    env.reset(clk, 10)?;
    env.run(clk, 5)?;
    Ok((env, clk, ddr_clk))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strobed_lanes_and_the_expected_memory_agree() {
        let b = incr(0, 0x1003, 1, 3);
        let beats: Vec<(Vec<u8>, u128)> = (0..3u8)
            .map(|k| ((0..16).map(|i| k * 16 + i).collect(), 0xffff))
            .collect();
        let (data, keep) = strobed_lanes(&b, 16, &beats);
        assert_eq!(data, [3, 20, 21, 38, 39]);
        assert!(keep.iter().all(|&k| k));
        let mut mem = vec![0u8; 16];
        apply_write(&mut mem, 0x1000, 0x1003, 1, 16, &beats);
        assert_eq!(&mem[3..8], &[3, 20, 21, 38, 39]);
        assert_eq!(mem.iter().filter(|&&b| b != 0).count(), 5);
    }
}
