//! The IP's BARs as the driver reads and writes them (PG195's register space): identifiers,
//! set and clear registers, and the user BAR passed through to the card's `s_axil`.

mod common;

use common::*;
use xdma_ip::Bar;
use xdma_regmap::{self as map, engine_regs as ereg, irq as ireg, msix};

#[test]
fn identifiers_and_set_clear_registers() {
    let mut c = combined();
    // PG195 identifiers: 0x1FC + target + stream bit 15 + channel in 11:8 + version 0x06.
    assert_eq!(c.r(0x0000), 0x1FC0_0006, "H2C 0, memory-mapped");
    assert_eq!(c.r(0x0100), 0x1FC0_8106, "H2C 1, stream");
    assert_eq!(c.r(0x0200), 0, "no H2C 2: the driver's probe stops there");
    assert_eq!(c.r(0x1000), 0x1FC1_0006, "C2H 0");
    assert_eq!(c.r(0x1200), 0x1FC1_8206, "C2H 2, stream");
    assert_eq!(c.r(0x2000), 0x1FC2_0006, "IRQ block");
    assert_eq!(c.r(0x3000), 0x1FC3_0006, "config block");
    assert_eq!(c.r(0x4000), 0x1FC4_0006, "H2C SGDMA 0");
    assert_eq!(c.r(0x5100), 0x1FC5_8106, "C2H SGDMA 1");
    assert_eq!(c.r(0x6000), 0x1FC6_0006, "SGDMA common");
    // Write 1 to set, write 1 to clear, on the interrupt enable mask.
    let e = map::engine_base(true, 1);
    c.w(e + ereg::IE_MASK, 0x0000_0006);
    c.w(e + ereg::IE_MASK_W1S, 0x0000_0010);
    assert_eq!(c.r(e + ereg::IE_MASK), 0x16);
    c.w(e + ereg::IE_MASK_W1C, 0x0000_0002);
    assert_eq!(c.r(e + ereg::IE_MASK), 0x14);
    // The channel enable mask likewise, and the vector registers hold 5-bit fields a byte.
    c.w(ireg::BASE + ireg::CHANNEL_ENABLE_W1S, 0x5);
    c.w(ireg::BASE + ireg::CHANNEL_ENABLE_W1C, 0x1);
    assert_eq!(c.r(ireg::BASE + ireg::CHANNEL_ENABLE), 0x4);
    c.w(ireg::BASE + ireg::USER_VECTOR + 4, 0xFF1F_2001);
    assert_eq!(c.r(ireg::BASE + ireg::USER_VECTOR + 4), 0x1F1F_0001);
    // A narrow write merges into its dword.
    c.ip.bar_write(
        Bar::Dma,
        e + ereg::IE_MASK + 1,
        0xAB,
        1,
        &mut c.mem,
        &mut c.irq,
    )
    .expect("byte write");
    assert_eq!(c.r(e + ereg::IE_MASK), 0xAB14);
    // The engine accepts any alignment: 1-byte address alignment and granularity, 64 bits.
    assert_eq!(c.r(ereg::ALIGNMENTS), 0x0001_0140);
    // MSI-X vectors are masked after reset (PCIe: Vector Control bit 0 is set at reset).
    assert_eq!(c.r(msix::TABLE + 12), msix::MASKED);
}

#[test]
fn the_user_bar_reaches_the_cards_registers() {
    let mut c = combined();
    c.user_w(u64::from(card_regs::SCRATCH), 0xCAFE_F00D);
    assert_eq!(c.user_r(u64::from(card_regs::SCRATCH)), 0xCAFE_F00D);
    // A byte read takes its lane of the dword.
    let b =
        c.ip.bar_read(
            Bar::User,
            u64::from(card_regs::SCRATCH) + 1,
            1,
            &mut c.mem,
            &mut c.irq,
        )
        .expect("byte read");
    assert_eq!(b, 0xF0);
    // The ID register reads as the register table says.
    assert_eq!(
        c.user_r(u64::from(card_regs::ID)),
        card_regs::id::RESET as u32
    );
}
