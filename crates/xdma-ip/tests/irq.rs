//! The IRQ block (PG195's IRQ Block registers, MSI-X table and PBA): masked vectors, INTx
//! levels, and the card's user interrupts.

mod common;

use common::*;
use xdma_ip::IrqMode;
use xdma_regmap::{self as map, desc, engine_regs as ereg, irq as ireg, msix};

#[test]
fn a_masked_msix_vector_waits_in_the_pba_until_unmasked() {
    let mut c = combined();
    c.msix_mode();
    // Mask vector 0 (H2C 0's).
    c.w(msix::TABLE + 12, msix::MASKED);
    c.chain(DESCS, &[(DATA, 0, 64)], desc::STOP | desc::COMPLETED);
    c.start(false, 0, DESCS, false);
    c.run_until_idle(false, 0, 50_000);
    c.run(8);
    assert!(c.irq.msix.is_empty());
    assert_eq!(c.r(msix::PBA), 1, "pending bit of vector 0");
    c.w(msix::TABLE + 12, 0);
    assert_eq!(c.irq.msix, vec![(0xFEE0_0000, 0x40)]);
    assert_eq!(c.r(msix::PBA), 0);
    // The function mask holds messages the same way.
    c.ip.set_irq_mode(
        IrqMode::MsiX {
            function_mask: true,
        },
        &mut c.irq,
    );
    c.r(map::engine_base(false, 0) + ereg::STATUS_RC);
    c.stop(false, 0);
    c.start(false, 0, DESCS, false);
    c.run_until_idle(false, 0, 50_000);
    c.run(8);
    assert_eq!(c.irq.msix.len(), 1);
    c.ip.set_irq_mode(
        IrqMode::MsiX {
            function_mask: false,
        },
        &mut c.irq,
    );
    assert_eq!(c.irq.msix.len(), 2);
}

#[test]
fn intx_follows_the_request_and_drops_with_the_status_read() {
    let mut c = combined();
    c.w(ireg::BASE + ireg::CHANNEL_ENABLE, 0xFF);
    c.chain(DESCS, &[(DATA, 0, 64)], desc::STOP | desc::COMPLETED);
    c.start(false, 0, DESCS, false);
    c.run_until_idle(false, 0, 50_000);
    c.run(4);
    assert_eq!(c.irq.intx, vec![true]);
    assert_eq!(c.r(ireg::BASE + ireg::CHANNEL_REQUEST), 1);
    // The driver's handler masks the channel, then the service reads the status to clear it:
    // the line is low as soon as the mask is written.
    c.w(ireg::BASE + ireg::CHANNEL_ENABLE_W1C, 1);
    assert_eq!(c.irq.intx, vec![true, false]);
    c.r(map::engine_base(false, 0) + ereg::STATUS_RC);
    c.w(ireg::BASE + ireg::CHANNEL_ENABLE_W1S, 1);
    assert_eq!(c.irq.intx, vec![true, false], "nothing left to request");
    // MSI with one vector: every request is vector 0.
    c.ip.set_irq_mode(IrqMode::Msi { vectors: 1 }, &mut c.irq);
    c.stop(false, 0);
    c.start(false, 0, DESCS, false);
    c.run_until_idle(false, 0, 50_000);
    c.run(4);
    assert_eq!(c.irq.msi, vec![0]);
}

/// Starts the card's capture into a 64 KiB ring with a fill-level interrupt at 1 KiB.
fn capture_with_fill_interrupt(c: &mut Card) {
    use card_regs as r;
    let w = |c: &mut Card, reg: u32, v: u32| c.user_w(u64::from(reg), v);
    w(c, r::SRC0_FRAME_LEN, 256);
    w(c, r::SRC0_GAP, 64);
    w(c, r::CAP_BASE, 0x0100_0000);
    w(c, r::CAP_SIZE, 0x1_0000);
    w(c, r::CAP_IRQ_LEVEL, 1024);
    w(c, r::IRQ_ENABLE, 1);
    w(c, r::CONTROL, (r::control::MODE_CAPTURE as u32) | (1 << 8));
}

fn run_until(c: &mut Card, limit: u64, mut done: impl FnMut(&Card) -> bool) {
    for _ in 0..limit / 64 {
        if done(c) {
            return;
        }
        c.run(64);
    }
    panic!("not done after {limit} cycles");
}

#[test]
fn every_acknowledged_user_interrupt_is_a_message_of_its_own() {
    let mut c = combined();
    c.msix_mode();
    capture_with_fill_interrupt(&mut c);
    // User line 0 is vector 8 in this layout.
    run_until(&mut c, 400_000, |c| !c.irq.msix.is_empty());
    assert_eq!(c.irq.msix, vec![(0xFEE0_0080, 0x48)]);
    // The request register shows it until the handler (MSI and INTx) reads it there.
    assert_eq!(c.r(ireg::BASE + ireg::USER_REQUEST), 1);
    assert_eq!(c.r(ireg::BASE + ireg::USER_REQUEST), 0);
    // Empty the ring and clear the event: the fill rises past the level again, and the
    // card's second request is a second message, whether or not anyone read the register.
    let wptr = c.user_r(u64::from(card_regs::CAP_WPTR));
    c.user_w(u64::from(card_regs::CAP_RPTR), wptr);
    c.user_w(u64::from(card_regs::IRQ_STATUS), 1);
    run_until(&mut c, 400_000, |c| c.irq.msix.len() == 2);
    let wptr = c.user_r(u64::from(card_regs::CAP_WPTR));
    c.user_w(u64::from(card_regs::CAP_RPTR), wptr);
    c.user_w(u64::from(card_regs::IRQ_STATUS), 1);
    run_until(&mut c, 400_000, |c| c.irq.msix.len() == 3);
    c.user_w(u64::from(card_regs::CONTROL), 0);
}

#[test]
fn a_user_interrupt_holds_intx_until_the_handler_reads_it() {
    let mut c = combined();
    c.w(ireg::BASE + ireg::USER_ENABLE, 1);
    capture_with_fill_interrupt(&mut c);
    run_until(&mut c, 400_000, |c| !c.irq.intx.is_empty());
    c.run(1_000);
    assert_eq!(
        c.irq.intx,
        vec![true],
        "held after the card dropped its request"
    );
    assert_eq!(c.r(ireg::BASE + ireg::USER_REQUEST), 1);
    assert_eq!(
        c.irq.intx,
        vec![true, false],
        "lowered by the handler's read"
    );
    c.user_w(u64::from(card_regs::CONTROL), 0);
}
