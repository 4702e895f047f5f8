//! The simulated card as the PCIe function of a QEMU guest, so that the unmodified Linux XDMA
//! driver (`xdma.ko`) and the vendor's tools run against the card's RTL.
//!
//! QEMU 7.2's stock `x-pci-proxy-dev` forwards the function's config space and BAR accesses
//! over a socket to this process and hands it the guest's RAM as memory files; this process
//! answers them from the XDMA IP model (`xdma-ip`) in front of the verilated card, lets the
//! IP's engines DMA straight into the guest's RAM, and raises the IP's interrupts through
//! QEMU's qtest socket. The pieces:
//! - [`proxy`]: the message codec of QEMU's multi-process protocol;
//! - [`pci`]: the function's config space (identity, BARs, MSI, MSI-X, PCI Express);
//! - [`guest`]: the guest's RAM as the IP's host memory;
//! - [`qtest`]: the client that delivers interrupts;
//! - [`server`]: the device loop, with the IP on a simulation thread of its own;
//! - [`vm`]: QEMU started with the device, its console, signals, timeout and clean-up.
//!
//! `cargo xtask vm` builds a guest (Debian's kernel, `xdma.ko` and the vendor tools, a busybox
//! initramfs with the check list of `xtask/guest/`) and runs `xdma-vm run --kernel K --initrd I
//! --variant mm|stream|combined` once per variant and interrupt mode. `XDMA_VM_LOG=debug` (or
//! `trace`, which adds every interrupt) makes the device's log verbose.

pub mod guest;
pub mod log;
pub mod pci;
pub mod proxy;
pub mod qtest;
pub mod server;
pub mod vm;

use card_sim::Top;
use xdma_ip::EngineKind;

/// Which card the function is: the card's variants, each with the channels its XDMA IP has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Variant {
    /// `sim_top_mm`: H2C 0 and C2H 0 memory-mapped to DDR.
    Mm,
    /// `sim_top_stream`: H2C 0, C2H 0 and C2H 1 streams.
    Stream,
    /// `sim_top`: both side by side (H2C 0 and C2H 0 memory-mapped, H2C 1, C2H 1 and C2H 2
    /// streams); simulation only.
    Combined,
}

impl Variant {
    /// Every variant.
    pub const ALL: [Variant; 3] = [Variant::Mm, Variant::Stream, Variant::Combined];

    /// The variant's name.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Mm => "mm",
            Variant::Stream => "stream",
            Variant::Combined => "combined",
        }
    }

    /// The name of the card's RTL top.
    pub fn top_name(self) -> &'static str {
        match self {
            Variant::Mm => "sim_top_mm",
            Variant::Stream => "sim_top_stream",
            Variant::Combined => "sim_top",
        }
    }

    /// The card's RTL top, if this build has it.
    pub fn top(self) -> Option<Top> {
        Top::ALL
            .iter()
            .copied()
            .find(|t| t.name() == self.top_name())
    }

    /// The IP's H2C engines, channel 0 first.
    pub fn h2c(self) -> Vec<EngineKind> {
        use EngineKind::{MemoryMapped as Mm, Stream as St};
        match self {
            Variant::Mm => vec![Mm],
            Variant::Stream => vec![St],
            Variant::Combined => vec![Mm, St],
        }
    }

    /// The IP's C2H engines, channel 0 first.
    pub fn c2h(self) -> Vec<EngineKind> {
        use EngineKind::{MemoryMapped as Mm, Stream as St};
        match self {
            Variant::Mm => vec![Mm],
            Variant::Stream => vec![St, St],
            Variant::Combined => vec![Mm, St, St],
        }
    }
}
