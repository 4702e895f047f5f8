//! Config space rules: identity, BAR sizing and decoding, the capabilities and the interrupt
//! mode they give, and what software may not change.

use xdma_ip::{Bar, IrqMode};
use xdma_vm::pci::{BarSizes, ConfigSpace};

const MSI_CTL: u32 = 0x4A;
const MSIX_CTL: u32 = 0x62;

fn space() -> ConfigSpace {
    ConfigSpace::new(BarSizes::for_user_logic(0x1000))
}

#[test]
fn identity() {
    let c = space();
    assert_eq!(c.read(0x00, 4), 0x7028_10EE);
    assert_eq!(c.read(0x08, 4) >> 8, 0x05_80_00);
    assert_eq!(c.read(0x2C, 4), 0x0007_10EE);
    assert_eq!(c.read(0x0E, 1), 0, "type 0 header, single function");
    assert_eq!(c.read(0x3D, 1), 1, "INTA#");
    assert_ne!(c.read(0x06, 2) & 0x10, 0, "capability list");
}

#[test]
fn user_bar_sizes_round_up_to_a_power_of_two_of_at_least_4k() {
    assert_eq!(BarSizes::for_user_logic(0).user, 4096);
    assert_eq!(BarSizes::for_user_logic(100).user, 4096);
    assert_eq!(BarSizes::for_user_logic(0x1000).user, 0x1000);
    assert_eq!(BarSizes::for_user_logic(0x1001).user, 0x2000);
    assert_eq!(BarSizes::for_user_logic(1 << 20).user, 1 << 20);
    assert_eq!(BarSizes::for_user_logic(0).dma, 0x1_0000);
}

#[test]
fn bar_sizing_returns_the_size_mask() {
    let mut c = ConfigSpace::new(BarSizes::for_user_logic(1 << 20));
    for (bar, mask) in [(0x10, 0xFFF0_0000u32), (0x14, 0xFFFF_0000)] {
        c.write(bar, 0xFFFF_FFFF, 4);
        // 32-bit non-prefetchable memory: type bits zero.
        assert_eq!(c.read(bar, 4), mask, "BAR at {bar:#x}");
    }
    // The absent BARs, the CardBus pointer QEMU also probes, and the expansion ROM.
    for off in [0x18, 0x1C, 0x20, 0x24, 0x28, 0x30] {
        c.write(off, 0xFFFF_FFFF, 4);
        assert_eq!(c.read(off, 4), 0, "offset {off:#x}");
    }
}

#[test]
fn a_bar_write_decodes() {
    let mut c = space();
    assert_eq!(c.decode(0, 4), None, "unassigned BARs decode nothing");
    c.write(0x10, 0xFEA0_0000, 4);
    c.write(0x14, 0xFEB1_2345, 4);
    assert_eq!(
        c.bar_base(1),
        0xFEB1_0000,
        "address bits below the size are dropped"
    );
    assert_eq!(c.decode(0xFEA0_0008, 4), Some((Bar::User, 8)));
    assert_eq!(c.decode(0xFEB1_2000, 4), Some((Bar::Dma, 0x2000)));
    assert_eq!(c.decode(0xFEB2_0000 - 4, 4), Some((Bar::Dma, 0xFFFC)));
    assert_eq!(
        c.decode(0xFEB2_0000 - 2, 4),
        None,
        "straddles the BAR's end"
    );
    assert_eq!(c.decode(0xFEA0_1000, 4), None, "past the 4 KiB user BAR");
    assert_eq!(c.decode(0x1000, 4), None);
}

#[test]
fn intx_is_the_mode_until_msi_or_msix_is_enabled() {
    let mut c = space();
    assert_eq!(c.irq_mode(), IrqMode::Intx { disabled: false });
    c.write(0x04, 0x0406, 2);
    assert_eq!(c.irq_mode(), IrqMode::Intx { disabled: true });
    assert_eq!(c.command(), 0x0406);
}

#[test]
fn msi_enable_gives_the_allocated_vectors() {
    let mut c = space();
    let ctl = c.read(MSI_CTL, 2);
    assert_eq!(ctl & 0x80, 0x80, "64-bit");
    assert_eq!((ctl >> 1) & 7, 5, "multiple message capable: 32");
    c.write(MSI_CTL, ctl | 1, 2);
    assert_eq!(c.irq_mode(), IrqMode::Msi { vectors: 1 });
    c.write(MSI_CTL, ctl | 1 | (3 << 4), 2);
    assert_eq!(c.irq_mode(), IrqMode::Msi { vectors: 8 });
    c.write(MSI_CTL, ctl | 1 | (7 << 4), 2);
    assert_eq!(
        c.irq_mode(),
        IrqMode::Msi { vectors: 32 },
        "capped at what the function asked for"
    );
}

#[test]
fn msi_messages_carry_the_vector_in_the_data() {
    let mut c = space();
    assert_eq!(c.msi_message(0), None, "MSI off");
    c.write(0x4C, 0xFEE0_1004, 4);
    c.write(0x50, 0x1, 4);
    c.write(0x54, 0x4025, 2);
    let ctl = c.read(MSI_CTL, 2);
    c.write(MSI_CTL, ctl | 1 | (2 << 4), 2);
    assert_eq!(c.msi_message(0), Some((0x1_FEE0_1004, 0x4024)));
    assert_eq!(c.msi_message(3), Some((0x1_FEE0_1004, 0x4027)));
    c.write(0x4C, 0xFEE0_1007, 4);
    assert_eq!(c.read(0x4C, 4), 0xFEE0_1004, "the address is dword aligned");
}

#[test]
fn msix_enable_and_function_mask() {
    let mut c = space();
    assert_eq!(c.read(MSIX_CTL, 2) & 0x7FF, 31, "32 vectors");
    assert_eq!(c.read(0x64, 4), 0x8001, "table in BAR1 at 0x8000");
    assert_eq!(c.read(0x68, 4), 0x8FE1, "PBA in BAR1 at 0x8FE0");
    c.write(MSIX_CTL, 0xC000, 2);
    assert_eq!(
        c.irq_mode(),
        IrqMode::MsiX {
            function_mask: true
        }
    );
    c.write(MSIX_CTL, 0x8000, 2);
    assert_eq!(
        c.irq_mode(),
        IrqMode::MsiX {
            function_mask: false
        }
    );
    assert_eq!(c.read(MSIX_CTL, 2) & 0x7FF, 31, "table size is read-only");
    // MSI enabled as well (which software must not do): MSI-X still wins.
    let ctl = c.read(MSI_CTL, 2);
    c.write(MSI_CTL, ctl | 1, 2);
    assert_eq!(
        c.irq_mode(),
        IrqMode::MsiX {
            function_mask: false
        }
    );
}

#[test]
fn read_only_fields_ignore_writes() {
    let mut c = space();
    let before: Vec<u32> = (0..64).map(|i| c.read(i * 4, 4)).collect();
    for (off, len) in [
        (0x00, 4), // IDs
        (0x08, 4), // class and revision
        (0x0E, 1), // header type
        (0x2C, 4), // subsystem
        (0x34, 1), // capability pointer
        (0x3D, 1), // interrupt pin
        (0x48, 2), // MSI id and next
        (0x60, 2), // MSI-X id and next
        (0x64, 4), // MSI-X table
        (0x68, 4), // MSI-X PBA
        (0x70, 4), // PCI Express id, next and capabilities
        (0x74, 4), // device capabilities
        (0x7C, 4), // link capabilities
    ] {
        c.write(off, 0xFFFF_FFFF, len);
        c.write(off, 0, len);
    }
    let after: Vec<u32> = (0..64).map(|i| c.read(i * 4, 4)).collect();
    assert_eq!(before, after);
}

#[test]
fn writable_fields_take_writes() {
    let mut c = space();
    c.write(0x3C, 10, 1);
    assert_eq!(c.interrupt_line(), 10);
    c.write(0x04, 0xFFFF, 2);
    assert_eq!(
        c.command(),
        0x0546,
        "memory, bus master, parity, SERR, INTx disable"
    );
    // Device control: the driver's relaxed ordering, extended tag and 512-byte reads.
    let devctl = c.read(0x78, 2);
    c.write(0x78, (devctl & !0x7000) | 0x0110 | (2 << 12), 2);
    assert_eq!(c.read(0x78, 2) & 0x7110, 0x2110);
}

#[test]
fn status_errors_clear_on_one_and_interrupt_status_mirrors_intx() {
    let mut c = space();
    c.set_interrupt_status(true);
    assert_ne!(c.read(0x06, 2) & 0x08, 0);
    c.write(0x06, 0xFFFF, 2);
    assert_ne!(c.read(0x06, 2) & 0x08, 0, "interrupt status is read-only");
    assert_ne!(c.read(0x06, 2) & 0x10, 0, "capability list stays");
    c.set_interrupt_status(false);
    assert_eq!(c.read(0x06, 2) & 0x08, 0);
}

#[test]
fn the_capability_list_is_msi_msix_pcie() {
    let c = space();
    let mut at = c.read(0x34, 1);
    let mut ids = Vec::new();
    while at != 0 && ids.len() < 8 {
        ids.push(c.read(at, 1));
        at = c.read(at + 1, 1);
    }
    assert_eq!(ids, vec![0x05, 0x11, 0x10]);
}

#[test]
fn outside_config_space_reads_zero_and_ignores_writes() {
    let mut c = space();
    c.write(0x100, 0xFFFF_FFFF, 4);
    assert_eq!(c.read(0x100, 4), 0);
    assert_eq!(c.read(0xFE, 4) >> 16, 0, "the bytes past the end read zero");
}

#[test]
fn reset_restores_power_on() {
    let mut c = space();
    c.write(0x10, 0xFEA0_0000, 4);
    c.write(MSIX_CTL, 0x8000, 2);
    c.write(0x04, 0x0006, 2);
    c.reset();
    assert_eq!(c.bar_base(0), 0);
    assert_eq!(c.command(), 0);
    assert_eq!(c.irq_mode(), IrqMode::Intx { disabled: false });
}
