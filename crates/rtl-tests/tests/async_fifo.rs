//! The asynchronous FIFO (`async_fifo_tb`: 32-bit entries, 8 deep) between an AXI-Stream
//! source bus model on the write clock and a sink on the read clock, both with their protocol
//! monitors, under random clock ratios and seeded random valid/ready: every word written
//! comes out once, in order, and nothing else does.

use axi_bfm::{AxisFrame, AxisSink, AxisSource, Env, PauseSpec, ResetPolarity, Result};
use card_sim::{Model, Top};
use proptest::prelude::*;

/// What one run moved: the words accepted on the write side and delivered on the read side.
struct Outcome {
    sent: u64,
    got: Vec<u32>,
    m_cycles: u64,
}

/// Writes `count` sequence numbers through the FIFO with the given clocks and duty cycles;
/// the pauses of both sides draw from `seed`.
fn transfer(
    s_hz: u64,
    m_hz: u64,
    valid_pct: u8,
    ready_pct: u8,
    count: u32,
    seed: u64,
) -> Result<Outcome> {
    let mut env = Env::new(Model::new(Top::AsyncFifoTb)?);
    let s_clk = env.add_clock("s_clk", s_hz)?;
    let m_clk = env.add_clock("m_clk", m_hz)?;
    env.add_reset(s_clk, "s_rst", ResetPolarity::ActiveHigh)?;
    env.add_reset(m_clk, "m_rst", ResetPolarity::ActiveHigh)?;
    let src = AxisSource::attach(&mut env, "s_axis", s_clk)?;
    let sink = AxisSink::attach(&mut env, "m_axis", m_clk)?;
    // A full FIFO holds the writer off until the reader takes a word, and the reader's random
    // pauses have no longest run, so the monitor's default bound (1 000 writer cycles) is
    // not a property of the FIFO when the reader is slow and mostly paused. The writer waits
    // for at most one reader word plus the pointers' two-stage synchronisers, counted in
    // writer cycles: a run of 700 reader pauses has a chance below 1e-15 at a 95 % pause rate.
    if let Some(mon) = src.monitor() {
        let ratio = s_hz.div_ceil(m_hz);
        let mut cfg = mon.config();
        cfg.stall_bound = cfg.stall_bound.max((700 + 8) * ratio + 16);
        mon.set_config(cfg);
    }
    src.set_pauses(&PauseSpec::random(seed, 100 - valid_pct.min(100)));
    sink.set_pauses(&PauseSpec::random(seed ^ 0x5151, 100 - ready_pct.min(100)));
    // Both resets held together for several cycles of the slower clock, as the FIFO requires.
    let (s_rst, m_rst) = (env.model().port("s_rst")?, env.model().port("m_rst")?);
    let m = env.model_mut();
    m.set_bool(s_rst, true);
    m.set_bool(m_rst, true);
    m.eval()?;
    let slow = if s_hz < m_hz { s_clk } else { m_clk };
    env.run(slow, 4)?;
    let m = env.model_mut();
    m.set_bool(s_rst, false);
    m.set_bool(m_rst, false);
    m.eval()?;

    for n in 0..count {
        src.start_send(AxisFrame::new(n.to_le_bytes().to_vec()))?;
    }
    let mut got = Vec::new();
    // Generous bound: every word needs at most a few cycles of the slower clock even at the
    // lowest duty cycles used here.
    let limit = 400 * u64::from(count) + 1_000;
    env.run_until(m_clk, limit, "every word through the FIFO", |_| {
        while let Some(f) = sink.try_recv() {
            let mut w = [0u8; 4];
            w.copy_from_slice(&f.data[..4]);
            got.push(u32::from_le_bytes(w));
        }
        got.len() >= count as usize
    })?;
    Ok(Outcome {
        sent: src.sent(),
        got,
        m_cycles: env.cycles(m_clk),
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// The seed of both sides' pauses is part of the drawn input, so a failure reports it.
    #[test]
    fn no_loss_no_duplication_order_kept(
        s_mhz in 20u64..500,
        m_mhz in 20u64..500,
        valid_pct in 5u8..=100,
        ready_pct in 5u8..=100,
        count in 20u32..200,
        seed in any::<u64>(),
    ) {
        let o = transfer(s_mhz * 1_000_000 + 1_234, m_mhz * 1_000_000 + 5_678, valid_pct, ready_pct, count, seed)
            .expect("simulation");
        let expect: Vec<u32> = (0..count).collect();
        prop_assert_eq!(o.sent, u64::from(count), "every word was accepted once");
        prop_assert_eq!(&o.got, &expect, "every word came out once, in order");
    }
}

#[test]
fn one_word_per_cycle_when_both_sides_keep_up() {
    // Read side faster than the write side: the write side must never be held off.
    let o = transfer(200_000_000, 250_000_000, 100, 100, 2_000, 7).expect("simulation");
    assert_eq!(o.got.len(), 2_000);
    assert!(o.got.windows(2).all(|w| w[1] == w[0] + 1));
    // 2 000 words at 200 MHz take 2 000 write cycles, 2 500 read cycles, plus a fill
    // latency of a handful of cycles.
    assert!(o.m_cycles < 2_500 + 20, "took {} read cycles", o.m_cycles);
}

#[test]
fn slow_paused_reader_holds_a_fast_writer_off_without_a_stall_violation() {
    // A case random testing found: a writer 17 times faster than a reader that takes one
    // cycle in twenty waited 1 001 writer cycles on a full FIFO, which the default stall bound
    // called a violation although the FIFO did what it must.
    let o =
        transfer(344_001_234, 20_005_678, 5, 5, 20, 4_495_137_567_410_420_257).expect("simulation");
    assert_eq!(o.got, (0..20).collect::<Vec<u32>>());
}

/// Seed of the reader's random pauses in the full-FIFO test.
const FULL_SEED: u64 = 11;

#[test]
fn full_fifo_holds_off_the_writer_without_loss() {
    // A reader that takes one word in ten fills the FIFO; nothing may be lost or repeated.
    let o = transfer(250_000_000, 100_000_000, 100, 10, 300, FULL_SEED).expect("simulation");
    assert_eq!(o.got, (0..300).collect::<Vec<u32>>());
}
