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
/// delivered; no more are lost than the FIFO holds plus the two-cycle window of the request,
/// for each of the run's `resets`.
fn check(seen: &Seen, resets: usize) -> std::result::Result<(), String> {
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
    if lost > resets * (HOLD + 2) {
        return Err(format!(
            "{lost} accepted words were lost over {resets} reset(s); the FIFO holds {HOLD}"
        ));
    }
    Ok(())
}

/// Streams `count` words through the FIFO and resets the write side (`write_side`) or the
/// read side for `rst_cycles` of its clock after `at` cycles of the read clock; with `again`,
/// resets the same side once more that many of its cycles after its reset handshake ended.
#[allow(clippy::too_many_arguments)] // One run's whole plan, each named at the call.
fn run(
    top: Top,
    s_hz: u64,
    m_hz: u64,
    write_side: bool,
    rst_cycles: u64,
    at: u64,
    again: Option<u64>,
    count: u32,
    seed: u64,
) -> Result<Seen> {
    let mut env = Env::new(Model::new(top)?);
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
    let (clk, busy) = if write_side {
        (s_clk, env.model().port("s_rst_busy")?)
    } else {
        (m_clk, env.model().port("m_rst_busy")?)
    };
    for gap in std::iter::once(None).chain(again.map(Some)) {
        if let Some(gap) = gap {
            env.run_until(clk, 1_000, "the reset handshake ended", |e| {
                !e.model().get_bool(busy)
            })?;
            env.run(clk, gap)?;
        }
        if write_side {
            pulse(&mut env, true)?;
            env.run(s_clk, rst_cycles)?;
            pulse(&mut env, false)?;
        } else {
            env.reset(m_clk, rst_cycles)?;
        }
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
        let seen = run(Top::AsyncFifoTb, s_mhz * 1_000_000 + 321, m_mhz * 1_000_000 + 987, write_side, rst_cycles, at, None, 150, seed)
            .expect("simulation");
        prop_assert!(
            check(&seen, 1).is_ok(),
            "{:?}: accepted {:?} delivered {:?}",
            check(&seen, 1),
            &seen.accepted[..seen.accepted.len().min(24)],
            &seen.delivered[..seen.delivered.len().min(24)]
        );
        prop_assert!(seen.delivered.len() >= 100, "most words got through: {}", seen.delivered.len());
    }
}

/// Resets a side again 0 to 8 of its cycles after its reset handshake ended, either side,
/// four clock ratios, on `top`: what `check` says of each run that broke the rules.
/// Deterministic, so that the window of a stale acknowledge is always hit.
fn second_resets(top: Top) -> Result<Vec<String>> {
    let ratios = [(250, 200), (200, 250), (100, 300), (300, 100)];
    let mut failures = Vec::new();
    for (i, &(s_mhz, m_mhz)) in ratios.iter().enumerate() {
        for write_side in [true, false] {
            for gap in 0..=8u64 {
                let seed = (i as u64) << 8 | gap;
                let seen = run(
                    top,
                    s_mhz * 1_000_000 + 321,
                    m_mhz * 1_000_000 + 987,
                    write_side,
                    1,
                    40,
                    Some(gap),
                    120,
                    seed,
                )?;
                if let Err(e) = check(&seen, 2) {
                    failures.push(format!(
                        "{s_mhz}/{m_mhz} MHz, {} side, gap {gap}: {e}",
                        if write_side { "write" } else { "read" }
                    ));
                }
            }
        }
    }
    Ok(failures)
}

/// A side reset again just after its reset handshake ended, while the acknowledge of the first
/// request may still be on its way back through the synchronizers: the second request must be
/// answered on its own, not by that stale acknowledge (which let the side run while its peer
/// then cleared its pointer, and the reader read entries nobody wrote).
#[test]
fn a_second_reset_right_after_the_first_is_handshaken_on_its_own() -> Result<()> {
    let failures = second_resets(Top::AsyncFifoTb)?;
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}

/// The same runs on the FIFO with its seeded bug (BUG=1, the handshake before the fix, whose
/// proof fails `promise_nothing_repeated`): they must deliver a word that was never accepted
/// or came before, as the proof's counterexample does.
#[test]
fn the_seeded_stale_acknowledge_is_caught() -> Result<()> {
    let failures = second_resets(Top::AsyncFifoTbBug1)?;
    assert!(
        failures
            .iter()
            .any(|f| f.contains("delivered out of order, twice or never accepted")),
        "the seeded bug went unseen: {failures:?}"
    );
    Ok(())
}

#[test]
fn the_rules_catch_a_repeated_an_invented_and_a_lost_word() {
    let accepted: Vec<(u64, u32)> = (0..20).map(|i| (i + 1, i as u32)).collect();
    let ok = Seen {
        accepted: accepted.clone(),
        delivered: (0..20).filter(|w| !(5..9).contains(w)).collect(),
        last_busy: 10,
    };
    assert!(check(&ok, 1).is_ok(), "{:?}", check(&ok, 1));
    let repeated = Seen {
        delivered: vec![0, 1, 2, 2, 3],
        ..Seen {
            accepted: accepted.clone(),
            ..Seen::default()
        }
    };
    assert!(check(&repeated, 1).is_err());
    let invented = Seen {
        accepted: accepted.clone(),
        delivered: vec![0, 1, 77],
        last_busy: 30,
    };
    assert!(check(&invented, 1).is_err());
    let lost_after = Seen {
        accepted,
        delivered: (0..19).collect(),
        last_busy: 10,
    };
    assert!(check(&lost_after, 1).is_err());
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

/// The memory path alone (its DDR port a port of the top, driven by hand), out of reset, with
/// a monitor on the DDR port and a master on s_axi: the environment, `clk`, `ddr_clk`, the
/// AXI side's reset input (which the tests pulse themselves) and the master.
fn ddr_port_under_reset() -> Result<(
    Env,
    card_sim::ClockId,
    card_sim::ClockId,
    card_sim::Port,
    AxiMaster,
)> {
    let mut env = Env::new(Model::new(Top::AxiMmPath)?);
    let clk = env.add_clock("clk", rtl_tests::AXI_HZ)?;
    let ddr_clk = env.add_clock("ddr_clk", rtl_tests::DDR_HZ)?;
    env.add_reset(ddr_clk, "ddr_rst", ResetPolarity::ActiveHigh)?;
    let rst = env.model_mut().input("rst")?;
    set(&mut env, rst, 1)?;
    env.reset(ddr_clk, 10)?;
    set(&mut env, rst, 0)?;
    env.run(clk, 10)?;
    axi_bfm::AxiMonitor::attach(&mut env, "m_axi_ddr", ddr_clk)?;
    let master = AxiMaster::attach(&mut env, "s_axi", clk)?;
    Ok((env, clk, ddr_clk, rst, master))
}

/// Drives an input of the model and settles it.
fn set(env: &mut Env, port: card_sim::Port, v: u64) -> Result<()> {
    let m = env.model_mut();
    m.set(port, v);
    Ok(m.eval()?)
}

/// Pulses the AXI side's reset for three of its cycles.
fn pulse_axi_side(env: &mut Env, clk: card_sim::ClockId, rst: card_sim::Port) -> Result<()> {
    set(env, rst, 1)?;
    env.run(clk, 3)?;
    set(env, rst, 0)
}

/// What the DDR port's monitor found once the run is finished. The s_axi master was not reset
/// with the path (its bus model has no reset input here), so its own monitor's unanswered
/// requests are the reset's and are left out.
fn ddr_port_violations(env: &mut Env) -> Vec<axi_bfm::Violation> {
    let _ = env.finish();
    env.violations()
        .iter()
        .filter(|v| v.bus == "m_axi_ddr")
        .cloned()
        .collect()
}

/// A reset of the AXI side while the DDR side has a burst issued and unanswered and the next
/// address offered, its slave holding AWREADY low: the bridge then completes what it issued,
/// but AXI does not let a master take back what it offered, so the address stays offered,
/// unchanged, until it is taken (the DDR port's monitor holds the rule, and the test looks
/// at every edge), and its burst is then completed with beats that strobe nothing, so the
/// slave is not left waiting.
#[test]
fn an_axi_side_reset_keeps_an_offered_ddr_address_until_it_is_taken() -> Result<()> {
    let (mut env, clk, ddr_clk, rst, master) = ddr_port_under_reset()?;
    let (awvalid, awid, wvalid, wlast, wstrb, bready) = {
        let m = env.model();
        (
            m.port("m_axi_ddr_awvalid")?,
            m.port("m_axi_ddr_awid")?,
            m.port("m_axi_ddr_wvalid")?,
            m.port("m_axi_ddr_wlast")?,
            m.port("m_axi_ddr_wstrb")?,
            m.port("m_axi_ddr_bready")?,
        )
    };
    let (awready, wready, bvalid, bid) = {
        let m = env.model_mut();
        (
            m.input("m_axi_ddr_awready")?,
            m.input("m_axi_ddr_wready")?,
            m.input("m_axi_ddr_bvalid")?,
            m.input("m_axi_ddr_bid")?,
        )
    };
    // Holds `valid` (an input) up until the DUT's `ready` takes it.
    let handshake = |env: &mut Env, valid: card_sim::Port, ready: card_sim::Port| -> Result<()> {
        set(env, valid, 1)?;
        env.run_until(ddr_clk, 200, "the handshake", |e| e.model().get_bool(ready))?;
        env.run(ddr_clk, 1)?;
        set(env, valid, 0)
    };
    // Takes an offered address and returns its ID.
    let take_address = |env: &mut Env| -> Result<u64> {
        env.run_until(ddr_clk, 2_000, "an address offered on the DDR port", |e| {
            e.model().get_bool(awvalid)
        })?;
        let id = env.model().get(awid);
        set(env, awready, 1)?;
        env.run(ddr_clk, 1)?;
        set(env, awready, 0)?;
        Ok(id)
    };
    // Two 16-beat writes: the first is issued whole and left unanswered, the second's
    // address waits on the DDR port.
    set(&mut env, wready, 1)?;
    master.start_write(1, 0x0001_0000, &[0xa5; 256])?;
    master.start_write(2, 0x0002_0000, &[0x5a; 256])?;
    let first = take_address(&mut env)?;
    env.run_until(ddr_clk, 2_000, "the second address offered", |e| {
        e.model().get_bool(awvalid)
    })?;
    env.run(ddr_clk, 3)?;
    pulse_axi_side(&mut env, clk, rst)?;
    // The slave keeps stalling well past the reset's handshake.
    for _ in 0..60 {
        env.run(ddr_clk, 1)?;
        assert!(
            env.model().get_bool(awvalid),
            "the offered address was withdrawn at DDR cycle {}",
            env.cycles(ddr_clk)
        );
    }
    let (beats, empty, last) = (
        Rc::new(RefCell::new(0u32)),
        Rc::new(RefCell::new(0u32)),
        Rc::new(RefCell::new(false)),
    );
    {
        let (b, e, l) = (beats.clone(), empty.clone(), last.clone());
        let wready_out = env.model().port("m_axi_ddr_wready")?;
        on_sample(&mut env, ddr_clk, move |m, _| {
            if fires(m, wvalid, wready_out) && !*l.borrow() {
                *b.borrow_mut() += 1;
                if m.get(wstrb) == 0 {
                    *e.borrow_mut() += 1;
                }
                *l.borrow_mut() = m.get_bool(wlast);
            }
        });
    }
    let second = take_address(&mut env)?;
    env.run_until(ddr_clk, 2_000, "the second burst's last beat", |_| {
        *last.borrow()
    })?;
    // 256 bytes are four 512-bit beats; the reset came before any of the second burst's data
    // crossed, so none of its beats writes a byte.
    assert_eq!(*beats.borrow(), 4, "the burst ends where its address said");
    assert_eq!(
        *empty.borrow(),
        4,
        "no beat of an abandoned burst writes a byte"
    );
    // Both bursts answered: the bridge takes the responses and drops them.
    for id in [first, second] {
        set(&mut env, bid, id)?;
        handshake(&mut env, bvalid, bready)?;
    }
    env.run(ddr_clk, 20)?;
    let ddr = ddr_port_violations(&mut env);
    assert!(ddr.is_empty(), "the DDR port owes nothing: {ddr:?}");
    Ok(())
}

/// The read side of the same rule: a reset of the AXI side while one read is issued with its
/// data owed and the next request offered, its slave holding ARREADY low. The request stays
/// offered until it is taken, and the bridge then takes and drops the data of both.
#[test]
fn an_axi_side_reset_keeps_an_offered_ddr_read_until_it_is_taken() -> Result<()> {
    let (mut env, clk, ddr_clk, rst, master) = ddr_port_under_reset()?;
    let (arready, rvalid, rid, rlast) = {
        let m = env.model_mut();
        (
            m.input("m_axi_ddr_arready")?,
            m.input("m_axi_ddr_rvalid")?,
            m.input("m_axi_ddr_rid")?,
            m.input("m_axi_ddr_rlast")?,
        )
    };
    let (arvalid, arid, arlen, rready) = {
        let m = env.model();
        (
            m.port("m_axi_ddr_arvalid")?,
            m.port("m_axi_ddr_arid")?,
            m.port("m_axi_ddr_arlen")?,
            m.port("m_axi_ddr_rready")?,
        )
    };
    let offered = |env: &mut Env| {
        env.run_until(ddr_clk, 2_000, "a request offered on the DDR port", |e| {
            e.model().get_bool(arvalid)
        })
    };
    // Two 16-beat reads: the first is taken and its data held back, the second waits.
    master.start_read(1, 0x0001_0000, 256)?;
    master.start_read(2, 0x0002_0000, 256)?;
    let mut taken = Vec::new();
    offered(&mut env)?;
    taken.push((env.model().get(arid), env.model().get(arlen)));
    set(&mut env, arready, 1)?;
    env.run(ddr_clk, 1)?;
    set(&mut env, arready, 0)?;
    offered(&mut env)?;
    env.run(ddr_clk, 3)?;
    pulse_axi_side(&mut env, clk, rst)?;
    for _ in 0..60 {
        env.run(ddr_clk, 1)?;
        assert!(
            env.model().get_bool(arvalid),
            "the offered request was withdrawn at DDR cycle {}",
            env.cycles(ddr_clk)
        );
    }
    taken.push((env.model().get(arid), env.model().get(arlen)));
    set(&mut env, arready, 1)?;
    env.run(ddr_clk, 1)?;
    set(&mut env, arready, 0)?;
    // The data of both, which the bridge must take (RREADY) and drop.
    for (id, len) in taken {
        set(&mut env, rid, id)?;
        set(&mut env, rvalid, 1)?;
        for beat in 0..=len {
            set(&mut env, rlast, u64::from(beat == len))?;
            env.run_until(ddr_clk, 200, "RREADY", |e| e.model().get_bool(rready))?;
            env.run(ddr_clk, 1)?;
        }
        set(&mut env, rvalid, 0)?;
    }
    env.run(ddr_clk, 20)?;
    let ddr = ddr_port_violations(&mut env);
    assert!(ddr.is_empty(), "the DDR port owes nothing: {ddr:?}");
    Ok(())
}
