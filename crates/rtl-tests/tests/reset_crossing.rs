//! Resets that hit one side of a clock crossing in the middle of traffic.
//!
//! - The asynchronous FIFO (`async_fifo_tb`) streams sequence numbers while one side is reset
//!   for 1 to 8 of its cycles at a random moment, under random clock ratios and random
//!   valid/ready: what comes out is an in-order subsequence of what went in (nothing invented,
//!   nothing repeated), everything accepted once the reset handshake is over comes out, and
//!   the loss is bounded by what the FIFO can hold.
//! - The memory-mapped path (`axi_mm_path_tb`) is reset on its AXI side while a long write
//!   burst is half way across: the DDR3 model behind the crossing is not left waiting (later
//!   transfers complete and read back), and no byte outside what the burst really carried
//!   changes.
//! - The same path is reset on its AXI side while a long read has its data still owed by the
//!   DDR side (its master holds RREADY low): none of that data reaches a read made after the
//!   reset.

use std::cell::RefCell;
use std::rc::Rc;

use axi_bfm::{AxiMaster, AxisFrame, AxisSink, AxisSource, Env, PauseSpec, ResetPolarity, Result};
use card_sim::{DdrBackdoor, Model, Top};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_xorshift::XorShiftRng;
use rtl_tests::{fires, mm_path, on_sample, random_bytes};

/// What one run saw: words accepted on the write side and delivered on the read side, with
/// the write side's edge of each acceptance, and the last edge at which the write side was
/// still busy with a reset.
#[derive(Debug, Default)]
struct Seen {
    accepted: Vec<(u64, u32)>,
    delivered: Vec<u32>,
    last_busy: u64,
}

/// Entries of `async_fifo_tb` (ADDR_WIDTH = 3) plus its output register.
const HOLD: usize = 8 + 1;

/// The rules of a reset for a FIFO carrying increasing words: delivered words are accepted
/// ones, in order, each once; every word accepted after the reset handshake ended is
/// delivered; no more are lost than the FIFO holds plus the two-cycle window of the request.
fn check(seen: &Seen) -> std::result::Result<(), String> {
    let accepted: Vec<u32> = seen.accepted.iter().map(|a| a.1).collect();
    let mut it = accepted.iter();
    for d in &seen.delivered {
        if !it.any(|a| a == d) {
            return Err(format!(
                "word {d} was delivered out of order, twice or never accepted"
            ));
        }
    }
    for &(cycle, w) in &seen.accepted {
        if cycle > seen.last_busy && !seen.delivered.contains(&w) {
            return Err(format!(
                "word {w}, accepted after the reset at edge {cycle}, was lost"
            ));
        }
    }
    let lost = accepted.len() - seen.delivered.len();
    if lost > HOLD + 2 {
        return Err(format!(
            "{lost} accepted words were lost; the FIFO holds {HOLD}"
        ));
    }
    Ok(())
}

/// Streams `count` words through the FIFO and resets the write side (`write_side`) or the
/// read side for `rst_cycles` of its clock after `at` cycles of the read clock.
fn run(
    s_hz: u64,
    m_hz: u64,
    write_side: bool,
    rst_cycles: u64,
    at: u64,
    count: u32,
    seed: u64,
) -> Result<Seen> {
    let mut env = Env::new(Model::new(Top::AsyncFifoTb)?);
    let s_clk = env.add_clock("s_clk", s_hz)?;
    let m_clk = env.add_clock("m_clk", m_hz)?;
    // The read side's reset is the sink's too, so its monitor holds the FIFO's output to the
    // reset rules. The write side's reset is the FIFO's alone (driven below): the source keeps
    // offering its word through it, as a writer outside the reset does, and must see it wait.
    env.add_reset(m_clk, "m_rst", ResetPolarity::ActiveHigh)?;
    let s_rst = env.model_mut().input("s_rst")?;
    let src = AxisSource::attach(&mut env, "s_axis", s_clk)?;
    let sink = AxisSink::attach(&mut env, "m_axis", m_clk)?;
    src.set_pauses(&PauseSpec::random(seed, 20));
    sink.set_pauses(&PauseSpec::random(seed ^ 0x77, 30));
    let pulse = |env: &mut Env, on: bool| -> Result<()> {
        let m = env.model_mut();
        m.set_bool(s_rst, on);
        Ok(m.eval()?)
    };
    pulse(&mut env, true)?;
    env.reset(m_clk, 4)?;
    env.run(s_clk, 4)?;
    pulse(&mut env, false)?;

    let seen = Rc::new(RefCell::new(Seen::default()));
    {
        let m = env.model();
        let (v, r, d) = (
            m.port("s_axis_tvalid")?,
            m.port("s_axis_tready")?,
            m.port("s_axis_tdata")?,
        );
        let busy = m.port("s_rst_busy")?;
        let s = seen.clone();
        on_sample(&mut env, s_clk, move |m, cx| {
            let mut s = s.borrow_mut();
            if fires(m, v, r) {
                s.accepted.push((cx.cycle, m.get(d) as u32));
            }
            if m.get_bool(busy) {
                s.last_busy = cx.cycle;
            }
        });
    }
    for n in 0..count {
        src.start_send(AxisFrame::new(n.to_le_bytes().to_vec()))?;
    }
    env.run(m_clk, at)?;
    if write_side {
        pulse(&mut env, true)?;
        env.run(s_clk, rst_cycles)?;
        pulse(&mut env, false)?;
    } else {
        env.reset(m_clk, rst_cycles)?;
    }
    // Everything still queued gets through once the reset is over.
    let limit = 400 * u64::from(count) + 2_000;
    env.run_until(m_clk, limit, "the source drained", |_| src.idle())?;
    env.run(m_clk, 200)?;
    // The hook still holds its handle: take the record out from under it.
    let mut seen = std::mem::take(&mut *seen.borrow_mut());
    while let Some(f) = sink.try_recv() {
        let mut w = [0u8; 4];
        w.copy_from_slice(&f.data[..4]);
        seen.delivered.push(u32::from_le_bytes(w));
    }
    Ok(seen)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Either side, any reset length from one cycle, at any moment of the stream.
    #[test]
    fn a_one_sided_reset_neither_invents_nor_loses_what_follows(
        s_mhz in 50u64..400,
        m_mhz in 50u64..400,
        write_side in any::<bool>(),
        rst_cycles in 1u64..8,
        at in 5u64..120,
        seed in any::<u64>(),
    ) {
        let seen = run(s_mhz * 1_000_000 + 321, m_mhz * 1_000_000 + 987, write_side, rst_cycles, at, 150, seed)
            .expect("simulation");
        prop_assert!(
            check(&seen).is_ok(),
            "{:?}: accepted {:?} delivered {:?}",
            check(&seen),
            &seen.accepted[..seen.accepted.len().min(24)],
            &seen.delivered[..seen.delivered.len().min(24)]
        );
        prop_assert!(seen.delivered.len() >= 100, "most words got through: {}", seen.delivered.len());
    }
}

#[test]
fn the_rules_catch_a_repeated_an_invented_and_a_lost_word() {
    let accepted: Vec<(u64, u32)> = (0..20).map(|i| (i + 1, i as u32)).collect();
    let ok = Seen {
        accepted: accepted.clone(),
        delivered: (0..20).filter(|w| !(5..9).contains(w)).collect(),
        last_busy: 10,
    };
    assert!(check(&ok).is_ok(), "{:?}", check(&ok));
    let repeated = Seen {
        delivered: vec![0, 1, 2, 2, 3],
        ..Seen {
            accepted: accepted.clone(),
            ..Seen::default()
        }
    };
    assert!(check(&repeated).is_err());
    let invented = Seen {
        accepted: accepted.clone(),
        delivered: vec![0, 1, 77],
        last_busy: 30,
    };
    assert!(check(&invented).is_err());
    let lost_after = Seen {
        accepted,
        delivered: (0..19).collect(),
        last_busy: 10,
    };
    assert!(check(&lost_after).is_err());
}

/// Resets the AXI side of the path for three of its cycles, the DDR side not.
fn pulse_rst(env: &mut Env, clk: card_sim::ClockId) -> Result<()> {
    let rst = env.model().port("rst")?;
    let m = env.model_mut();
    m.set_bool(rst, true);
    m.eval()?;
    env.run(clk, 3)?;
    let m = env.model_mut();
    m.set_bool(rst, false);
    m.eval()?;
    Ok(())
}

/// Beats the abandoned burst sends of its 256 before its master is reset.
const SENT_BEATS: u64 = 100;

/// A reset of the AXI side in the middle of a 256-beat write burst: its master (a hand-driven
/// one here, as a reset master abandons what it was doing) gets 100 beats across, then `rst`
/// is pulsed. Only those beats may land; the rest of the region keeps its contents, and the
/// path works normally afterwards: the DDR model was not left waiting for the missing beats.
#[test]
fn an_axi_side_reset_mid_burst_leaves_the_ddr_side_whole() -> Result<()> {
    let (mut env, clk, _ddr_clk) = mm_path()?;
    let mut rng = XorShiftRng::seed_from_u64(14);
    let base = 0x0004_0000u64;
    let before = random_bytes(&mut rng, 4096);
    env.model_mut().ddr_write(base, &before)?;
    let data = random_bytes(&mut rng, 4096);
    // The abandoned burst: AW of 256 beats, then beats until SENT_BEATS are taken.
    let sent = Rc::new(RefCell::new(0u64));
    {
        let m = env.model_mut();
        let p = |m: &mut Model, n: &str| m.input(n);
        let awvalid = p(m, "s_axi_awvalid")?;
        let (awaddr, awlen, awsize, awburst) = (
            p(m, "s_axi_awaddr")?,
            p(m, "s_axi_awlen")?,
            p(m, "s_axi_awsize")?,
            p(m, "s_axi_awburst")?,
        );
        let (wvalid, wdata, wstrb, wlast, bready) = (
            p(m, "s_axi_wvalid")?,
            p(m, "s_axi_wdata")?,
            p(m, "s_axi_wstrb")?,
            p(m, "s_axi_wlast")?,
            p(m, "s_axi_bready")?,
        );
        let awready = m.port("s_axi_awready")?;
        let wready = m.port("s_axi_wready")?;
        m.set(awaddr, base);
        m.set(awlen, 255);
        m.set(awsize, 4);
        m.set(awburst, 1);
        m.set(wstrb, 0xffff);
        m.set(bready, 1);
        m.set(wlast, 0);
        m.set_bool(awvalid, true);
        m.eval()?;
        let state = Rc::new(RefCell::new((false, false)));
        let st = state.clone();
        let sent_s = sent.clone();
        let data_d = data.clone();
        rtl_tests::hook(
            &mut env,
            clk,
            move |m, _| {
                let mut s = st.borrow_mut();
                s.0 = fires(m, awvalid, awready);
                s.1 = fires(m, wvalid, wready);
            },
            move |m, _| {
                let (aw, w) = *state.borrow();
                if aw {
                    m.set_bool(awvalid, false);
                }
                let mut n = sent_s.borrow_mut();
                // Once the burst is abandoned, the bus belongs to the next master.
                if *n >= SENT_BEATS {
                    return;
                }
                if w {
                    *n += 1;
                }
                if *n < SENT_BEATS && (aw || *n > 0 || !m.get_bool(awvalid)) {
                    let i = *n as usize * 16;
                    let mut words = [0u32; 4];
                    for (k, wd) in words.iter_mut().enumerate() {
                        let b = &data_d[i + 4 * k..i + 4 * k + 4];
                        *wd = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                    }
                    m.set_words(wdata, &words);
                    m.set_bool(wvalid, true);
                } else {
                    m.set_bool(wvalid, false);
                }
            },
        );
    }
    env.run_until(clk, 5_000, "the first beats of the burst", |_| {
        *sent.borrow() >= SENT_BEATS
    })?;
    // The master is reset: the AXI side of the path with it, the DDR side not.
    pulse_rst(&mut env, clk)?;
    env.run(clk, 600)?;
    let mut after = vec![0u8; 4096];
    env.model().ddr_read(base, &mut after)?;
    let crossed = SENT_BEATS as usize * 16;
    for (i, &b) in after.iter().enumerate() {
        let allowed = b == before[i] || (i < crossed && b == data[i]);
        assert!(
            allowed,
            "byte {i} became {b:#04x}: neither its old value nor a beat that was sent"
        );
    }
    assert_ne!(
        after, before,
        "the beats that crossed before the reset were written"
    );
    // The path still works: a new write and read go through and agree.
    let a = AxiMaster::attach(&mut env, "s_axi", clk)?;
    let fresh = random_bytes(&mut rng, 2048);
    let w = a.start_write(2, 0x0008_0000, &fresh)?;
    a.wait(&mut env, w)?;
    assert!(a.take_write(w)?.is_ok());
    let r = a.start_read(3, 0x0008_0000, fresh.len())?;
    a.wait(&mut env, r)?;
    let (got, resp) = a.take_read(r)?;
    assert!(resp.is_ok());
    assert_eq!(got, fresh, "the path works after the reset");
    Ok(())
}

/// A reset of the AXI side while a 256-beat read is owed: its master (hand-driven, RREADY held
/// low, as a master that is about to be reset has stopped taking data) has its request taken,
/// then `rst` is pulsed while the DDR side still owes most of the beats. The crossing must
/// take and drop those beats itself: a read made after the reset, of other data, must get
/// exactly that data, with no beat of the old read in front of it, and the new master's
/// monitor must see no read data it did not ask for.
#[test]
fn an_axi_side_reset_with_read_data_owed_drops_that_data() -> Result<()> {
    let (mut env, clk, _ddr_clk) = mm_path()?;
    let mut rng = XorShiftRng::seed_from_u64(15);
    let old_base = 0x0004_0000u64;
    env.model_mut()
        .ddr_write(old_base, &random_bytes(&mut rng, 4096))?;
    let taken = Rc::new(RefCell::new(false));
    {
        let m = env.model_mut();
        let arvalid = m.input("s_axi_arvalid")?;
        for (name, v) in [
            ("s_axi_araddr", old_base),
            ("s_axi_arlen", 255),
            ("s_axi_arsize", 4),
            ("s_axi_arburst", 1),
            ("s_axi_rready", 0),
        ] {
            let p = m.input(name)?;
            m.set(p, v);
        }
        m.set_bool(arvalid, true);
        m.eval()?;
        let arready = m.port("s_axi_arready")?;
        let t = taken.clone();
        on_sample(&mut env, clk, move |m, _| {
            if fires(m, arvalid, arready) {
                *t.borrow_mut() = true;
            }
        });
    }
    env.run_until(clk, 2_000, "the read request", |_| *taken.borrow())?;
    let arvalid = env.model().port("s_axi_arvalid")?;
    env.model_mut().set_bool(arvalid, false);
    // Long enough for the DDR side to fill the crossing's R FIFO and stop, owing the rest.
    env.run(clk, 400)?;
    pulse_rst(&mut env, clk)?;
    env.run(clk, 50)?;
    // A new master reads other data; the old read's beats must not be in front of it.
    let a = AxiMaster::attach(&mut env, "s_axi", clk)?;
    let new_base = 0x0008_0000u64;
    let fresh = random_bytes(&mut rng, 4096);
    env.model_mut().ddr_write(new_base, &fresh)?;
    let r = a.start_read(3, new_base, fresh.len())?;
    a.wait(&mut env, r)?;
    let (got, resp) = a.take_read(r)?;
    assert!(resp.is_ok());
    assert_eq!(got, fresh, "the read after the reset got its own data");
    env.run(clk, 200)?;
    env.finish()
}
