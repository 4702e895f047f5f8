//! The asynchronous FIFO (`async_fifo_tb`: 32-bit entries, 8 deep) under random clock ratios
//! and random valid/ready: every word written comes out once, in order, and nothing else does.

use card_sim::{Model, Result, Top};
use proptest::prelude::*;

/// What one run moved: the words accepted on the write side and delivered on the read side.
struct Outcome {
    sent: Vec<u32>,
    got: Vec<u32>,
    m_cycles: u64,
}

/// Writes `count` sequence numbers through the FIFO with the given clocks and duty cycles.
fn transfer(
    s_hz: u64,
    m_hz: u64,
    valid_pct: u64,
    ready_pct: u64,
    count: u32,
    seed: u64,
) -> Result<Outcome> {
    let mut m = Model::new(Top::AsyncFifoTb)?;
    let s_clk = m.add_clock("s_clk", s_hz)?;
    let m_clk = m.add_clock("m_clk", m_hz)?;
    let (s_rst, m_rst) = (m.input("s_rst")?, m.input("m_rst")?);
    let (s_data, s_valid, s_ready) = (m.input("s_data")?, m.input("s_valid")?, m.port("s_ready")?);
    let (m_data, m_valid, m_ready) = (m.port("m_data")?, m.port("m_valid")?, m.input("m_ready")?);
    // Both resets held for several cycles of the slower clock, as the FIFO requires.
    m.set_bool(s_rst, true);
    m.set_bool(m_rst, true);
    m.eval()?;
    let slow = if s_hz < m_hz { s_clk } else { m_clk };
    m.ticks(slow, 4)?;
    m.set_bool(s_rst, false);
    m.set_bool(m_rst, false);
    m.eval()?;

    let mut rng = seed | 1;
    let mut roll = move |pct: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % 100 < pct
    };
    let (mut next, mut sent, mut got) = (0u32, Vec::new(), Vec::new());
    let mut valid = false;
    // Generous bound: every word needs at most a few cycles of the slower clock even at the
    // lowest duty cycles used here.
    let limit = 400 * u64::from(count) + 1_000;
    for _ in 0..limit {
        if got.len() == count as usize {
            break;
        }
        let Some((_, edges)) = m.next_edges() else {
            break;
        };
        // Sample the handshakes that the coming edges complete.
        let s_fire = edges.rising(s_clk) && valid && m.get_bool(s_ready);
        let m_fire = edges.rising(m_clk) && m.get_bool(m_valid) && m.get_bool(m_ready);
        let out = m.get(m_data) as u32;
        m.step()?;
        if s_fire {
            sent.push(next);
            next += 1;
            valid = false;
        }
        if m_fire {
            got.push(out);
        }
        if edges.rising(s_clk) {
            // A raised VALID is held with its data until taken.
            if !valid && next < count && roll(valid_pct) {
                valid = true;
                m.set(s_data, u64::from(next));
            }
            m.set_bool(s_valid, valid);
        }
        if edges.rising(m_clk) {
            let ready = roll(ready_pct);
            m.set_bool(m_ready, ready);
        }
        if edges.rising(s_clk) || edges.rising(m_clk) {
            m.eval()?;
        }
    }
    Ok(Outcome {
        sent,
        got,
        m_cycles: m.cycles(m_clk),
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn no_loss_no_duplication_order_kept(
        s_mhz in 20u64..500,
        m_mhz in 20u64..500,
        valid_pct in 5u64..=100,
        ready_pct in 5u64..=100,
        count in 20u32..200,
        seed in any::<u64>(),
    ) {
        let o = transfer(s_mhz * 1_000_000 + 1_234, m_mhz * 1_000_000 + 5_678, valid_pct, ready_pct, count, seed)
            .expect("simulation");
        let expect: Vec<u32> = (0..count).collect();
        prop_assert_eq!(&o.sent, &expect, "every word was accepted once");
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
fn full_fifo_holds_off_the_writer_without_loss() {
    // A reader that takes one word in ten fills the FIFO; nothing may be lost or repeated.
    let o = transfer(250_000_000, 100_000_000, 100, 10, 300, 11).expect("simulation");
    assert_eq!(o.got, (0..300).collect::<Vec<u32>>());
}
