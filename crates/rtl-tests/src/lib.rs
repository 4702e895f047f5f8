//! rtl-tests: block- and card-level RTL tests, through the RTL's own ports with axi-bfm bus
//! models and protocol monitors on (the host API's system tests are card-tests').
//!
//! The tests live in `tests/`; this library holds what several of them share: byte-lane
//! helpers for AXI4 bursts built on `axi_bfm::burst`, a handshake recorder, seeded random
//! test data ([`random_bytes`]), and (re-exported from `card-harness`, which
//! the XDMA IP model uses too) [`CardHarness`], the card's top with a bus model on every
//! interface, and the closure agents [`hook`] and [`on_sample`].
//!
//! Its build script builds no card top (card-sim does): it makes one top and one test of
//! `tests/formal_replay.rs` per replay file of `hdl/formal/replays/`, the counterexample of a
//! formal proof (`cargo xtask formal` writes one when a proof fails) replayed on the same proof
//! wrapper with the protocol monitors on.
//!
//! # Where each module of `hdl/rtl` is tested
//!
//! Six modules have a test file of their own name; the others are tested through the tops
//! that hold them (`hdl/sim`'s test benches, `card_core`, `sim_top`). Every module of
//! `hdl/rtl` has a row here, and every test file a row names exists (the tidy test
//! `every_rtl_module_has_a_row_in_the_rtl_tests_table` checks both), so a new module gets its
//! row in the commit that adds it.
//!
//! | module | tests that exercise it (in `tests/`) |
//! | --- | --- |
//! | `async_fifo` | `async_fifo.rs` (`async_fifo_tb`: order, no loss, full and paused sides); `reset_crossing.rs` (a one-sided reset mid-traffic); through `axi_cdc_rd` and `axi_cdc_wr`, every test of the memory-mapped path |
//! | `axi_cdc_rd` | `axi_mm_path.rs`, `axi_width_converter.rs` (`unaligned_narrow_reads_return_the_right_lanes`), `reset_crossing.rs` (`an_axi_side_reset_with_read_data_owed_drops_that_data`), `smartconnect_model.rs`, `ddr_mixed_traffic.rs` |
//! | `axi_cdc_wr` | `axi_mm_path.rs`, `axi_width_converter.rs`, `reset_crossing.rs` (`an_axi_side_reset_mid_burst_leaves_the_ddr_side_whole`), `smartconnect_model.rs`, `ddr_mixed_traffic.rs` |
//! | `axi_mm_path` | `axi_mm_path.rs` (`axi_mm_path_tb`: backdoor against the bus, reads in flight, random backpressure), `axi_mm_path_fuzz.rs` (its DDR port under master fuzzing: a randomizing slave stalls, delays, takes data first and answers errors), `axi_width_converter.rs`, `reset_crossing.rs`, `errors.rs` (`bursts_the_path_cannot_serve_get_error_responses_and_touch_nothing`), `ddr_mixed_traffic.rs` and `card_capture.rs` (`dma_port_reaches_ddr_under_random_pauses`) through `sim_top` |
//! | `axi_rd_upsizer` | `axi_width_converter.rs` (`unaligned_narrow_reads_return_the_right_lanes`), `axi_mm_path.rs`, `smartconnect_model.rs` (`unaligned_transfers_arrive_intact_under_random_pauses`) |
//! | `axi_wr_arbiter` | `axi_mm_path.rs` (`capture_and_dma_writes_share_the_port_fairly`, `capture_port_under_random_pauses`), `card_capture.rs` |
//! | `axi_wr_upsizer` | `axi_width_converter.rs` (`every_strobe_pattern_writes_only_its_bytes`, `unaligned_narrow_and_odd_length_bursts`), `axi_mm_path.rs`, `smartconnect_model.rs` (`bursts_are_packed_and_writes_cut_through`) |
//! | `axil_reg_if` | `card_top.rs` (`register_map_matches_the_table`), through `card_regfile` in every test of `card_core` |
//! | `axis_skid_buffer` | `card_top.rs` (`loop_sustains_one_beat_per_cycle`, `loop_survives_backpressure`), `card_capture.rs` (the capture stream's slice), `variants.rs` (`each_variant_runs_its_own_paths`: LOOP on the stream variant), `formal_replay.rs` (its seeded bug's counterexample, the test axis_skid_buffer_bug1 of a generated file) |
//! | `capture_writer` | `capture_writer.rs` (on its own: fills, drops new, wraps), `capture_writer_fuzz.rs` (master fuzzing: stalls, latency and error responses from a randomizing slave), `card_capture.rs` (`capture_fills_overflows_and_wraps`), `errors.rs` (`a_capture_ring_past_the_end_of_ddr_takes_no_frame`) |
//! | `card_core` | `card_top.rs`, `card_capture.rs`, `variants.rs`, `errors.rs`, `ddr_mixed_traffic.rs` (through `sim_top`) |
//! | `card_regfile` | `card_top.rs` (`register_map_matches_the_table`, `timestamp_counts_cycles`), `variants.rs` (`each_variant_says_what_it_has`, `a_variant_refuses_the_modes_it_lacks`), `card_capture.rs` (`interrupt_at_fill_level_held_until_ack`), `errors.rs` (`an_event_in_the_cycle_of_the_acknowledge_is_not_lost`) |
//! | `frame_checker` | `frame_checker.rs` (on its own), `frame_loop.rs` (`frame_loop_tb`: fed by the frame source), `card_top.rs` (`check_counts_good_bad_and_missing`, `echo_answers_each_request_with_its_sequence`) |
//! | `frame_crc32` | `frame_source.rs` (the CRC against the crc crate), `frame_checker.rs` (CRC errors detected), `frame_loop.rs` |
//! | `frame_prbs31` | `frame_source.rs` (both payload patterns), `frame_loop.rs`, `card_top.rs` (`gen_one_channel`, `gen_two_channels`) |
//! | `frame_source` | `frame_source.rs` (on its own), `frame_loop.rs`, `card_top.rs` (`gen_one_channel`, `gen_two_channels`, `loop_sustains_one_beat_per_cycle`) |
//! | `frame_source_fifo` | `frame_source.rs` (both backpressure policies under random TREADY, `oneshot_sends_one_frame_per_request`), `frame_loop.rs` (the stall and drop policies), `formal_replay.rs` (its seeded bug's counterexample, the test frame_source_fifo_bug1 of a generated file) |

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
