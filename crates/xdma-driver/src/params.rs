//! The driver's module parameters (`libxdma.c`'s and `cdev_sgdma.c`'s) and the host's costs.
//!
//! Every parameter that changes what a call does has the driver's default.
//! The costs are the model's own: where the driver spends them is said in the crate's
//! documentation.

use std::time::Duration;

use xdma_ip::Ps;
use xdma_regmap as map;

/// The Windows XDMA driver's `XDMA_MAX_TRANSFER_SIZE`: the longest DMA transfer, the DMA
/// enabler's maximum length, so the framework cuts a longer request into transfers of this.
pub const FROM_START_MAX_TRANSFER: u64 = 8 << 20;

/// The Windows driver's descriptor buffer per engine: `XDMA_MAX_TRANSFER_SIZE / PAGE_SIZE + 2`,
/// room for an 8 MiB transfer that starts and ends within a page.
pub const FROM_START_DESCRIPTORS: usize = (FROM_START_MAX_TRANSFER / map::HOST_PAGE) as usize + 2;

/// The interrupt mode, as the driver's `interrupt_mode` parameter selects it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InterruptMode {
    /// 0, the default: MSI-X, one vector per channel and per user interrupt.
    MsiX,
    /// 1: MSI, one vector shared by everything through `xdma_isr`.
    Msi,
    /// 2: the legacy INTx pin, through `xdma_isr`.
    Legacy,
}

/// Where the driver writes a transfer's descriptors, which decides how a request is cut into
/// engine runs and how many descriptors each fetch takes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DescLayout {
    /// `xdma.ko`: a ring of [`RING_DESCRIPTORS`](map::driver::RING_DESCRIPTORS) per engine. A
    /// transfer starts at the ring's next free index, and one that reaches the ring's end is
    /// cut there (`transfer_init`), so where a request's descriptors fall depends on the calls
    /// before it; blocks of adjacent descriptors are aligned to 64 within a page
    /// (`xdma_get_next_adj`).
    #[default]
    Ring,
    /// The Windows XDMA driver (`XDMA_EngineProgramDma`): a buffer of
    /// [`FROM_START_DESCRIPTORS`] per engine, every transfer of at most
    /// [`FROM_START_MAX_TRANSFER`] bytes written from its start; blocks of adjacent
    /// descriptors of at most one max read request, within a 4 KiB page
    /// (`OptimizeDescriptors`).
    FromStart,
}

/// The driver's module parameters that change what a call does, each with the driver's
/// default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Params {
    /// `poll_mode` (0): poll the engines' write-backs instead of taking interrupts.
    pub poll_mode: bool,
    /// `interrupt_mode` (0, MSI-X).
    pub interrupt_mode: InterruptMode,
    /// `h2c_timeout` (10 s): how long a host-to-card transfer may take.
    pub h2c_timeout: Duration,
    /// `c2h_timeout` (10 s): how long a card-to-host transfer may take.
    pub c2h_timeout: Duration,
    /// `desc_blen_max` (`XDMA_DESC_BLEN_MAX`, 2^28 - 1): the longest descriptor.
    pub desc_blen_max: u32,
    /// Where transfers' descriptors go: `xdma.ko`'s ring by default.
    pub desc_layout: DescLayout,
    /// Not a parameter of the driver's: end at once, with the ETIMEDOUT the driver returns at
    /// its timeout, a transfer whose engine has stopped on an error with no descriptor
    /// completed. The driver's service routine fails nothing then, so its call waits out
    /// `h2c_timeout`/`c2h_timeout` for an outcome that can no longer change: seconds that a
    /// simulated card would spend minutes simulating. Off by default (the driver's wait);
    /// on, the call ends when the service routine has found the engine so, not at the
    /// deadline.
    pub end_dead_waits: bool,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            poll_mode: false,
            interrupt_mode: InterruptMode::MsiX,
            h2c_timeout: Duration::from_secs(10),
            c2h_timeout: Duration::from_secs(10),
            desc_blen_max: map::DESC_MAX_LEN,
            desc_layout: DescLayout::Ring,
            end_dead_waits: false,
        }
    }
}

/// The host's costs of the driver's work, in ps of simulated time (see the crate's
/// documentation for where each is spent). Zero by default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Costs {
    /// From the system call to the request waiting in the driver's queue.
    pub submit: Ps,
    /// From the engine being free to the driver's doorbell write.
    pub start: Ps,
    /// From an interrupt (or poll-mode write-back) reaching the host to the driver having
    /// serviced the engine; the engine is free for the next request from then.
    pub irq: Ps,
    /// From the driver finishing a call to the caller running again.
    pub wake: Ps,
    /// A user BAR access's system call, before its request goes down the link.
    pub register: Ps,
}
