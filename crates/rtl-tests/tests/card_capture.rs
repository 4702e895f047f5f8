//! CAPTURE through sim_top (card_core with the DDR3 model), with the bus models and their
//! monitors on every interface: the ring buffer fills, overflows and wraps with correct data
//! (checked through the DDR backdoor), the user interrupt rises at the fill level and is held
//! until acknowledged, and the DMA port (`s_axi`) reaches DDR under random pauses.

use axi_bfm::{PauseSpec, Result};
use card_regs::{self as regs, control, irq_enable};
use card_sim::{DdrBackdoor, Top};
use rand::SeedableRng;
use rand_xorshift::XorShiftRng;
use rtl_tests::{random_bytes, CardHarness};

fn mode(m: u64, ch0: bool) -> u32 {
    let mut v = m << control::MODE_LSB;
    if ch0 {
        v |= control::CH0_EN_MASK;
    }
    v as u32
}

const RING_BASE: u32 = 0x0010_0000;
const RING_SIZE: u32 = 0x1000;
/// Frames that are not a whole number of beats, so that frames straddle the ring's end.
const CAP_LEN: u32 = 1000;
/// Ring bytes a frame takes: padded to the 16-byte beat.
const PADDED: u32 = CAP_LEN.div_ceil(16) * 16;
/// Frames the empty ring takes before it overflows (it is never completely full).
const KEPT: u32 = (RING_SIZE - 1) / PADDED;

fn setup_capture(card: &mut CardHarness, gap: u32) -> Result<()> {
    card.write(regs::SRC0_FRAME_LEN, CAP_LEN)?;
    card.write(regs::SRC0_GAP, gap)?;
    card.write(regs::SRC0_PATTERN, regs::src0_pattern::KIND_PRBS as u32)?;
    card.write(regs::SRC0_SEED, 0x5eed)?;
    card.write(regs::CAP_BASE, RING_BASE)?;
    card.write(regs::CAP_SIZE, RING_SIZE)?;
    Ok(())
}

/// Reads the whole frames between the read pointer and the write pointer through the DDR backdoor,
/// validates them, and moves the read pointer past them. Returns their sequence numbers.
fn consume(card: &mut CardHarness) -> Result<Vec<u32>> {
    let wptr = card.read(regs::CAP_WPTR)?;
    let mut rptr = card.read(regs::CAP_RPTR)?;
    let mut seqs = Vec::new();
    // The write pointer moves burst by burst: only whole frames before it are read.
    let mut available = (wptr + RING_SIZE - rptr) % RING_SIZE;
    while available >= PADDED {
        available -= PADDED;
        // A frame may straddle the ring's end: read it in two parts.
        let mut bytes = vec![0u8; CAP_LEN as usize];
        let first = (RING_SIZE - rptr).min(CAP_LEN) as usize;
        card.ddr_read(u64::from(RING_BASE + rptr), &mut bytes[..first])?;
        card.ddr_read(u64::from(RING_BASE), &mut bytes[first..])?;
        let p = frame::parse(&bytes)
            .unwrap_or_else(|e| panic!("frame at ring offset {rptr:#x} is not valid: {e}"));
        assert_eq!(p.header.channel, 0);
        seqs.push(p.header.sequence);
        rptr = (rptr + PADDED) % RING_SIZE;
    }
    card.write(regs::CAP_RPTR, rptr)?;
    Ok(seqs)
}

/// CAPTURE: the ring fills, overflows (drop-new: whole frames discarded and counted, unread
/// data kept), then wraps with correct data while the host keeps up.
#[test]
fn capture_fills_overflows_and_wraps() -> Result<()> {
    let mut card = CardHarness::new(Top::SimTop, true)?;
    setup_capture(&mut card, 0)?;
    card.write(regs::CONTROL, mode(control::MODE_CAPTURE, true))?;
    // The host reads nothing: the ring takes KEPT frames (it is never completely full), then
    // the capture writer discards frames.
    card.run_until(50_000, "an overflow", |c| {
        Ok(c.read(regs::CAP_OVERFLOW_LO)? >= 2)
    })?;
    // Stop the source to inspect a stable ring.
    card.write(regs::CONTROL, mode(control::MODE_CAPTURE, false))?;
    card.ticks(2_000)?;
    assert_eq!(
        card.read(regs::CAP_WPTR)?,
        KEPT * PADDED,
        "the ring is as full as it gets"
    );
    assert_eq!(card.read(regs::CAP_FILL)?, KEPT * PADDED);
    assert_eq!(card.read64(regs::CAP_FRAMES_LO)?, u64::from(KEPT));
    let overflow = card.read64(regs::CAP_OVERFLOW_LO)?;
    let sent = card.read64(regs::SRC0_SENT_LO)?;
    assert!(overflow >= 2);
    assert_eq!(
        sent,
        u64::from(KEPT) + overflow,
        "every sent frame was written or counted as overflow"
    );
    let seqs = consume(&mut card)?;
    assert_eq!(
        seqs,
        (0..KEPT).collect::<Vec<_>>(),
        "the oldest frames were kept (drop-new)"
    );
    assert_eq!(card.read(regs::CAP_FILL)?, 0);

    // With a gap between frames the host keeps up: the ring wraps several times.
    card.write(regs::SRC0_GAP, 400)?;
    card.write(regs::CONTROL, mode(control::MODE_CAPTURE, true))?;
    let mut all = Vec::new();
    for _ in 0..600 {
        card.ticks(50)?;
        all.extend(consume(&mut card)?);
        if all.len() >= 12 {
            break;
        }
    }
    assert!(
        all.len() >= 12,
        "12 frames captured through the wrap, got {}",
        all.len()
    );
    let first = u64::from(all[0]);
    assert_eq!(
        first, sent,
        "the first frame after the overflow phase follows it"
    );
    for (i, s) in all.iter().enumerate() {
        assert_eq!(
            u64::from(*s),
            first + i as u64,
            "no frame lost while the host keeps up"
        );
    }
    assert_eq!(
        card.read64(regs::CAP_OVERFLOW_LO)?,
        overflow,
        "no new overflow"
    );
    Ok(())
}

/// The fill-level interrupt rises at CAP_IRQ_LEVEL, is held until acknowledged, and its status
/// bit stays until written 1; the overflow interrupt follows.
#[test]
fn interrupt_at_fill_level_held_until_ack() -> Result<()> {
    let mut card = CardHarness::new(Top::SimTop, true)?;
    setup_capture(&mut card, 300)?;
    card.write(regs::CAP_IRQ_LEVEL, 2 * PADDED)?;
    card.write(regs::IRQ_ENABLE, irq_enable::CAP_FILL_MASK as u32)?;
    assert!(!card.irq_req());
    card.write(regs::CONTROL, mode(control::MODE_CAPTURE, true))?;
    card.run_until(20_000, "the fill interrupt", |c| Ok(c.irq_req()))?;
    let fill = card.read(regs::CAP_FILL)?;
    assert!(fill >= 2 * PADDED, "raised at the level, fill {fill}");
    assert_eq!(
        card.read64(regs::CAP_FRAMES_LO)?,
        2,
        "raised by the second frame"
    );
    // Held while not acknowledged, however long.
    for _ in 0..500 {
        card.cycle()?;
        assert!(card.irq_req(), "the request stays until acknowledged");
    }
    card.ack_irq()?;
    assert!(!card.irq_req(), "the acknowledge drops the request");
    let status = card.read(regs::IRQ_STATUS)?;
    assert_eq!(
        u64::from(status) & regs::irq_status::CAP_FILL_MASK,
        regs::irq_status::CAP_FILL_MASK
    );
    card.write(regs::IRQ_STATUS, regs::irq_status::CAP_FILL_MASK as u32)?;
    assert_eq!(
        u64::from(card.read(regs::IRQ_STATUS)?) & regs::irq_status::CAP_FILL_MASK,
        0
    );
    // Staying above the level raises nothing new.
    card.ticks(200)?;
    assert!(!card.irq_req());

    // The overflow interrupt: the host reads nothing, the ring overflows.
    card.write(regs::IRQ_ENABLE, irq_enable::CAP_OVERFLOW_MASK as u32)?;
    card.set_irq_auto_ack(Some(20));
    card.run_until(50_000, "the overflow interrupt", |c| Ok(c.irq_req()))?;
    assert!(card.read64(regs::CAP_OVERFLOW_LO)? >= 1);
    card.run_until(100, "the automatic acknowledge", |c| Ok(!c.irq_req()))?;
    assert!(card.irq_acks() >= 2);
    Ok(())
}

/// Seed of the random pauses on the DMA port's five channels.
const DMA_PAUSE_SEED: u64 = 0xd3a_0001;

/// The DMA port (`s_axi`, 128 bits at axi_aclk) reaches DDR through the clock crossing and the
/// 512-bit MIG port: unaligned writes and reads of several lengths, some crossing 4 KiB, with
/// seeded random idle cycles and backpressure on every channel, against the DDR backdoor.
#[test]
fn dma_port_reaches_ddr_under_random_pauses() -> Result<()> {
    let mut card = CardHarness::new(Top::SimTop, true)?;
    let dma = card.dma().clone();
    dma.set_pauses(&PauseSpec::random(DMA_PAUSE_SEED, 35));
    let mut rng = XorShiftRng::seed_from_u64(DMA_PAUSE_SEED);
    let env = card.env_mut();
    // Bus writes, checked through the backdoor.
    let jobs: Vec<(u64, Vec<u8>)> = [
        (0x0200_0000u64, 256usize),
        (0x0200_1ff3, 77),
        (0x0300_0fe0, 600),
    ]
    .iter()
    .map(|&(a, n)| (a, random_bytes(&mut rng, n)))
    .collect();
    for (i, (addr, data)) in jobs.iter().enumerate() {
        let t = dma.start_write(i as u32, *addr, data)?;
        dma.wait(env, t)?;
        assert!(dma.take_write(t)?.is_ok(), "write at {addr:#x}");
    }
    for (addr, data) in &jobs {
        let mut got = vec![0u8; data.len()];
        env.model().ddr_read(*addr, &mut got)?;
        assert_eq!(&got, data, "DDR holds the DMA write at {addr:#x}");
    }
    // Backdoor preloads, read over the bus, several in flight with different IDs.
    let pre: Vec<(u64, Vec<u8>)> = [
        (0x0400_0005u64, 300usize),
        (0x0400_0ff8, 40),
        (0x0400_3000, 1024),
    ]
    .iter()
    .map(|&(a, n)| (a, random_bytes(&mut rng, n)))
    .collect();
    for (addr, data) in &pre {
        env.model_mut().ddr_write(*addr, data)?;
    }
    let reads: Vec<_> = pre
        .iter()
        .enumerate()
        .map(|(i, (a, d))| dma.start_read(i as u32 + 4, *a, d.len()))
        .collect::<Result<_>>()?;
    dma.wait_idle(env)?;
    for (t, (addr, data)) in reads.into_iter().zip(&pre) {
        let (got, resp) = dma.take_read(t)?;
        assert!(resp.is_ok());
        assert_eq!(&got, data, "the bus reads the preload at {addr:#x}");
    }
    assert!(env.violations().is_empty(), "{:?}", env.violations());
    Ok(())
}
