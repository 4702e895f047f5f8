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

/// Which card the function is: the card's variants, each with the channels its XDMA IP has.
pub use xdma_ip::Variant;
