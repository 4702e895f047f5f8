//! No silent corruption: what the card cannot carry out gets an error, and an interrupt event
//! is never lost.
//!
//! - DMA bursts outside the 2 GiB DDR get DECERR, FIXED and WRAP bursts SLVERR, reads and
//!   writes alike, with their IDs, in order behind earlier bursts of the same ID, and without
//!   touching the DDR (the address below 2 GiB that dropping the high bits would give keeps its
//!   bytes). The path's error pulses count each.
//! - A capture ring that ends past the DDR takes no frame: ERROR.CAP_RING is set and nothing
//!   is written where the ring would wrap onto address 0.
//! - An interrupt event in the very cycle of usr_irq_ack raises a new request: the
//!   acknowledged one drops for a cycle and the next comes, whatever cycle the acknowledge
//!   falls on relative to the events.

use std::cell::Cell;
use std::rc::Rc;

use axi_bfm::{AxiMaster, Burst, Resp, Result};
use card_regs::{self as regs, control, error, irq_enable};
use card_sim::{DdrBackdoor, Top};
use rand::SeedableRng;
use rand_xorshift::XorShiftRng;
use rtl_tests::{mm_path, on_sample, random_bytes, record_axi, CardHarness};

fn burst(id: u32, addr: u64, beats: u8, kind: u8) -> Burst {
    Burst {
        id,
        addr,
        len: beats - 1,
        size: 4,
        burst: kind,
        lock: false,
    }
}

#[test]
fn bursts_the_path_cannot_serve_get_error_responses_and_touch_nothing() -> Result<()> {
    let (mut env, clk, _) = mm_path()?;
    let a = AxiMaster::attach(&mut env, "s_axi", clk)?;
    let log = record_axi(&mut env, "s_axi", clk)?;
    let pulses = Rc::new(Cell::new((0u32, 0u32)));
    {
        let m = env.model();
        let (addr_err, burst_err) = (m.port("addr_error")?, m.port("burst_error")?);
        let p = pulses.clone();
        on_sample(&mut env, clk, move |m, _| {
            let (a, b) = p.get();
            p.set((
                a + u32::from(m.get_bool(addr_err)),
                b + u32::from(m.get_bool(burst_err)),
            ));
        });
    }
    let mut rng = XorShiftRng::seed_from_u64(3);
    let low = 0x0000_3000u64;
    let before = random_bytes(&mut rng, 4096);
    env.model_mut().ddr_write(low, &before)?;
    // A good write, then one with the same ID 2 GiB higher (the same low address bits): the
    // second must answer after the first, with DECERR, and write nothing.
    let good = random_bytes(&mut rng, 256);
    let w_ok = a.start_write_burst(burst(5, low + 0x800, 16, 1), &good)?;
    let w_far = a.start_write_burst(
        burst(5, low + (1 << 31), 16, 1),
        &random_bytes(&mut rng, 256),
    )?;
    let w_fixed = a.start_write_burst(burst(6, low, 4, 0), &random_bytes(&mut rng, 64))?;
    let w_wrap = a.start_write_burst(burst(7, low + 0x40, 4, 2), &random_bytes(&mut rng, 64))?;
    let r_far = a.start_read_burst(burst(8, 0x1_0000_0000 + low, 8, 1))?;
    let r_wrap = a.start_read_burst(burst(9, low, 4, 2))?;
    let r_ok = a.start_read_burst(burst(9, low + 0x100, 4, 1))?;
    a.wait_idle(&mut env)?;
    assert_eq!(a.take_write(w_ok)?, Resp::Okay);
    assert_eq!(a.take_write(w_far)?, Resp::DecErr);
    assert_eq!(a.take_write(w_fixed)?, Resp::SlvErr);
    assert_eq!(a.take_write(w_wrap)?, Resp::SlvErr);
    let (data, resp) = a.take_read(r_far)?;
    assert_eq!((data.len(), resp), (128, Resp::DecErr));
    assert_eq!(a.take_read(r_wrap)?.1, Resp::SlvErr);
    let (data, resp) = a.take_read(r_ok)?;
    assert_eq!(
        resp,
        Resp::Okay,
        "a good read after a refused one of the same ID"
    );
    assert_eq!(data, before[0x100..0x140]);
    // Responses per ID in issue order: ID 5 got OKAY before DECERR.
    let ids5: Vec<u64> = log
        .borrow()
        .b
        .iter()
        .filter(|b| b.id == 5)
        .map(|b| b.resp)
        .collect();
    assert_eq!(ids5, vec![0, 3]);
    // Only the good write landed.
    let mut after = vec![0u8; 4096];
    env.model().ddr_read(low, &mut after)?;
    let mut expect = before.clone();
    expect[0x800..0x900].copy_from_slice(&good);
    assert_eq!(after, expect, "refused bursts wrote nothing");
    assert_eq!(
        pulses.get(),
        (2, 3),
        "two bursts out of range, three not INCR"
    );
    Ok(())
}

#[test]
fn a_capture_ring_past_the_end_of_ddr_takes_no_frame() -> Result<()> {
    let mut card = CardHarness::new(Top::SimTop, true)?;
    // A ring of 8 KiB at the last 4 KiB of the 2 GiB: it would wrap onto address 0.
    let mark = vec![0xa5u8; 4096];
    card.ddr_write(0, &mark)?;
    card.write(regs::SRC0_FRAME_LEN, 256)?;
    card.write(regs::CAP_BASE, 0x7fff_f000)?;
    card.write(regs::CAP_SIZE, 0x2000)?;
    card.write(
        regs::CONTROL,
        ((control::MODE_CAPTURE << control::MODE_LSB) | control::CH0_EN_MASK) as u32,
    )?;
    card.run_until(5_000, "ERROR.CAP_RING", |c| {
        Ok(u64::from(c.read(regs::ERROR)?) & error::CAP_RING_MASK != 0)
    })?;
    card.ticks(2_000)?;
    assert_eq!(
        card.read64(regs::CAP_FRAMES_LO)?,
        0,
        "no frame was captured"
    );
    let mut low = vec![0u8; 4096];
    card.ddr_read(0, &mut low)?;
    assert_eq!(low, mark, "nothing was written at the wrapped address");
    // A ring that fits works, and the error bit clears with a written 1.
    card.write(regs::CONTROL, 0)?;
    card.write(regs::CAP_BASE, 0x7fff_e000)?;
    card.write(regs::ERROR, error::CAP_RING_MASK as u32)?;
    card.write(
        regs::CONTROL,
        ((control::MODE_CAPTURE << control::MODE_LSB) | control::CH0_EN_MASK) as u32,
    )?;
    card.run_until(20_000, "frames in a ring that fits", |c| {
        Ok(c.read64(regs::CAP_FRAMES_LO)? >= 2)
    })?;
    assert_eq!(u64::from(card.read(regs::ERROR)?) & error::CAP_RING_MASK, 0);
    Ok(())
}

/// Capture overflows give an interrupt event every frame slot (the ring is never read); the
/// acknowledge is given at every phase of that period in turn. After each acknowledge the
/// request must drop (a new interrupt is a new rising edge for the XDMA IP) and rise again.
#[test]
fn an_event_in_the_cycle_of_the_acknowledge_is_not_lost() -> Result<()> {
    let mut card = CardHarness::new(Top::SimTop, true)?;
    // 256-byte frames (16 beats) and a gap of 16: an overflow every 32 cycles once full.
    card.write(regs::SRC0_FRAME_LEN, 256)?;
    card.write(regs::SRC0_GAP, 16)?;
    card.write(regs::CAP_BASE, 0x0010_0000)?;
    card.write(regs::CAP_SIZE, 0x1000)?;
    card.write(regs::IRQ_ENABLE, irq_enable::CAP_OVERFLOW_MASK as u32)?;
    card.write(
        regs::CONTROL,
        ((control::MODE_CAPTURE << control::MODE_LSB) | control::CH0_EN_MASK) as u32,
    )?;
    for phase in 0..70u64 {
        card.run_until(2_000, "the interrupt request", |c| Ok(c.irq_req()))?;
        card.ticks(phase % 35)?;
        card.ack_irq()?;
        assert!(
            !card.irq_req(),
            "phase {phase}: the request dropped after the acknowledge"
        );
    }
    assert!(card.irq_acks() >= 70);
    Ok(())
}
