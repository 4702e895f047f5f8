//! The Linux XDMA driver's work for each call, modelled on the register-level XDMA IP.
//!
//! [`Driver`] does for a read, a write or a register access what `xdma.ko` (Xilinx
//! `dma_ip_drivers`, `XDMA/linux-kernel/xdma`: `libxdma.c`, `cdev_sgdma.c`) does for the same
//! system call, in a model of host memory ([`HostRam`]), against [`xdma_ip::XdmaIp`]:
//!
//! - probe: the engines found by their identifiers, each engine's registers set up as
//!   `engine_init_regs` does (interrupt enable mask, poll-mode write-back address), its
//!   descriptor ring and (C2H streams) result ring allocated, the IRQ block's vectors and the
//!   MSI-X table programmed, channel and user interrupts enabled;
//! - a transfer: the caller's buffer pinned and cut by host page (`page_pieces`, the
//!   scatter list), pieces longer than `desc_blen_max` split, at most the ring's free run of
//!   descriptors per engine run (`transfer_init`), the chain linked with the adjacent counts
//!   of `xdma_get_next_adj`, STOP, COMPLETED and EOP on the last descriptor (COMPLETED on
//!   every descriptor with end-of-packet reads), the engine started as `engine_start` does;
//! - completion: the MSI-X vector's handler (`xdma_channel_irq`: mask the engine, service it,
//!   unmask it), or with MSI and INTx the shared handler (`xdma_isr`: read the request
//!   registers, mask the channel, service it, unmask it), or with `poll_mode` the write-back
//!   monitored (`engine_service_wb_monitor`); `engine_service` reads status and the completed
//!   count, stops the engine, and judges the transfer as `engine_service_final_transfer` does;
//! - the errno the driver returns: `ETIMEDOUT` after `h2c_timeout`/`c2h_timeout` with the
//!   engine aborted and stopped, `EIO` for an error status or a chain that stopped half-way,
//!   `EINVAL` for a call the driver refuses.
//!
//! One setting follows another driver: [`DescLayout::FromStart`] places each transfer's
//! descriptors as the Windows XDMA driver does (every transfer of up to 8 MiB from the start of
//! the engine's buffer, adjacent counts of one max read request), for a host that ran it, as
//! the reference board's did. Everything else stays `xdma.ko`'s.
//!
//! Time is the IP's simulated time: a wait runs the card. The driver's own work takes the time
//! its [`Costs`] say, spent where the driver spends it: a call enters the driver's queue after
//! its system call (`submit`), an engine is programmed (`start`) once it is free and its
//! doorbell crosses the IP's link, a completion is serviced (`irq`) after its interrupt or
//! write-back has reached the host, and the caller runs again after its wake-up (`wake`); a
//! user BAR access costs its system call (`register`) and its trip over the link. With the
//! default costs of zero and an untimed IP, a call takes only the card's cycles.
//!
//! The files follow the driver's own, so that each can be read beside the source it models:
//!
//! | file | follows |
//! | --- | --- |
//! | `probe.rs` | `xdma_mod.c`: `probe_one`, through `libxdma.c`'s `xdma_device_open` |
//! | `engine.rs` | `libxdma.c`: the engines (set-up, start, stop, `engine_service`) |
//! | `transfer.rs` | `libxdma.c`: the transfers (scatter list, descriptor chains, a request's transfers one after another) |
//! | `interrupt.rs` | `libxdma.c`: the interrupts (IRQ block and MSI-X set-up, the handlers, the poll-mode write-back) |
//! | `cdev_sgdma.rs` | `cdev_sgdma.c`: the DMA nodes' reads, writes and ioctls |
//! | `cdev_ctrl.rs` | `cdev_ctrl.c`: the `_user` and `_control` register nodes |
//! | `cdev_events.rs` | `cdev_events.c`: the event nodes |
//! | `dev.rs` | `libxdma.h`: the driver's state, which every file above adds to and none of them imports another for |
//! | `params.rs`, `error.rs`, `call.rs` | the module parameters, the errno, a call's shape: leaves |
//! | `run.rs` | no file of the driver: time passing, the handlers and queued work going on |
//! | `ram.rs` | no file of the driver: host memory as the driver and the IP see it |

mod call;
mod cdev_ctrl;
mod cdev_events;
mod cdev_sgdma;
mod dev;
mod engine;
mod error;
mod interrupt;
mod params;
mod probe;
mod ram;
mod run;
mod transfer;

pub use call::{Call, Dir, Ended, Received, Submit};
pub use dev::Driver;
pub use error::{DriverError, Errno, Result};
pub use params::{
    Costs, DescLayout, InterruptMode, Params, FROM_START_DESCRIPTORS, FROM_START_MAX_TRANSFER,
};
pub use ram::HostRam;
pub use transfer::{next_adj, scatter};
