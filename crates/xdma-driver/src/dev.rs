//! The driver's state for one card and its register access, as `libxdma.h` declares it.
//!
//! `struct xdma_dev`, `struct xdma_engine`, `struct xdma_transfer`, `struct xdma_request_cb`.
//!
//! The files that follow the driver's sources each add to [`Driver`] the part of the driver
//! they follow; this one holds what they share (the engines, the calls in flight, the
//! interrupts the IP sent, `ioread32` and `iowrite32`) and imports none of them, only the
//! leaves (`call.rs`, `error.rs`, `params.rs`, `ram.rs`), so that no two files import each
//! other.

use std::collections::VecDeque;
use std::time::Duration;

use xdma_ip::{Bar, InterruptSink, Ps, UserAccess, XdmaIp};
use xdma_regmap::driver::RING_DESCRIPTORS;

use crate::call::Dir;
use crate::error::Result;
use crate::params::{Costs, DescLayout, Params, FROM_START_DESCRIPTORS};
use crate::ram::HostRam;

/// The MSI-X message address the model's "kernel" programs: the x86 local APIC window.
pub(crate) const MSIX_ADDR: u64 = 0xFEE0_0000;

/// One engine as the driver keeps it (`struct xdma_engine`): its ring, its interrupt, its
/// address mode and where its run stands.
///
/// Not `Engine`, nor `XdmaEngine` after the C name: in this workspace an engine is the IP's
/// hardware (`xdma-ip`'s engines, which this struct only programs), and xdma-sim's engine
/// settings are another thing again, so the driver's bookkeeping gets a name of its own.
#[derive(Debug)]
pub(crate) struct EngineState {
    pub(crate) dir: Dir,
    pub(crate) channel: usize,
    pub(crate) streaming: bool,
    /// The engine's bit in the IRQ block's channel registers, which is also its MSI-X vector.
    pub(crate) irq_bit: u32,
    /// The descriptor ring's bus address and the next free index in it.
    pub(crate) desc_bus: u64,
    pub(crate) desc_idx: usize,
    /// C2H streams: the result ring's bus address.
    pub(crate) result_bus: u64,
    /// Poll mode: the write-back's bus address.
    pub(crate) poll_wb: u64,
    /// What `engine_init_regs` wrote to the interrupt enable mask.
    pub(crate) ie_mask: u32,
    /// When an interrupt for this engine reached the host, while it waits for its handler.
    pub(crate) irq_at: Option<Ps>,
    /// When the driver last finished with the engine: the next request starts from here.
    pub(crate) free_at: Ps,
    /// `engine->non_incr_addr`: the card address stays fixed for the whole transfer.
    pub(crate) non_incr_addr: bool,
    /// `engine->addr_align` and `engine->len_granularity`, from the engine's alignments
    /// register (`engine_alignments`), read again after every change of the address mode.
    pub(crate) addr_align: u64,
    pub(crate) len_granularity: u64,
    /// The completed count the driver last serviced in the engine's run.
    pub(crate) seen_completed: u32,
    /// The service routine found the engine stopped on an error with nothing completed: the
    /// transfer can only time out (see [`Params::end_dead_waits`](crate::Params::end_dead_waits)).
    pub(crate) stopped_on_error: bool,
}

/// A transfer on an engine's ring (`struct xdma_transfer`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Transfer {
    pub(crate) desc_bus: u64,
    pub(crate) res_bus: u64,
    pub(crate) desc_num: usize,
    pub(crate) len: u64,
    /// Adjacent descriptors of the first fetch (`FIRST_DESC_ADJACENT`).
    pub(crate) first_adj: u32,
}

/// What the IP sent, kept until the model's handlers look at it.
#[derive(Debug, Default)]
pub(crate) struct Irqs {
    pub(crate) msix_vectors: Vec<u32>,
    pub(crate) msi: u32,
    pub(crate) intx: bool,
}

impl InterruptSink for Irqs {
    fn msix(&mut self, addr: u64, data: u32) {
        if addr == MSIX_ADDR {
            self.msix_vectors.push(data);
        }
    }
    fn msi(&mut self, _vector: u32) {
        self.msi += 1;
    }
    fn intx(&mut self, level: bool) {
        self.intx = level;
    }
}

/// The driver bound to one card.
#[derive(Debug)]
pub struct Driver {
    pub(crate) ip: XdmaIp,
    pub(crate) ram: HostRam,
    pub(crate) irqs: Irqs,
    pub(crate) params: Params,
    pub(crate) h2c: Vec<EngineState>,
    pub(crate) c2h: Vec<EngineState>,
    /// User interrupts taken, per line (`xdma_user_irq` / `user_irq_service` events).
    pub(crate) user_events: Vec<u64>,
    /// When the driver had each user interrupt not yet taken by a reader, per line.
    pub(crate) user_latched: Vec<VecDeque<Ps>>,
    pub(crate) cycles: u64,
    pub(crate) calls: Vec<Request>,
    pub(crate) regs: Vec<RegCall>,
    pub(crate) next_call: u64,
    pub(crate) costs: Costs,
    /// The max read request size in bytes, from the IP's config block.
    pub(crate) max_read: u32,
}

/// Where a call is.
#[derive(Debug)]
pub(crate) enum Phase {
    /// Waiting for its engine.
    Queued,
    /// The driver builds the transfer and programs the engine from `from`.
    Starting { from: Ps },
    /// The doorbell reaches the engine at `at`.
    Doorbell { at: Ps },
    /// A transfer of it runs on the engine.
    Running { xfer: Transfer },
    /// What the system call returns.
    Ended(Result<Done>),
}

/// A call's request (`struct xdma_request_cb`): its scatter list and how far it got.
#[derive(Debug)]
pub(crate) struct Request {
    pub(crate) id: u64,
    pub(crate) dir: Dir,
    pub(crate) channel: usize,
    pub(crate) host: u64,
    /// The card address of the next transfer.
    pub(crate) ep: u64,
    pub(crate) pieces: Vec<(u64, u64)>,
    /// The first piece no transfer has taken yet.
    pub(crate) next: usize,
    pub(crate) eop_flush: bool,
    pub(crate) done: Done,
    pub(crate) phase: Phase,
    /// When the request is in the driver's queue.
    pub(crate) ready_at: Ps,
    /// When the running transfer times out (its start plus the timeout), and the timeout.
    pub(crate) deadline: Ps,
    pub(crate) timeout_ps: Ps,
    pub(crate) timeout: Duration,
    /// When the caller runs again, once ended.
    pub(crate) end: Ps,
}

#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Done {
    pub(crate) bytes: usize,
    pub(crate) eop: bool,
}

/// A user BAR access in the driver.
#[derive(Debug)]
pub(crate) struct RegCall {
    pub(crate) id: u64,
    pub(crate) offset: u64,
    pub(crate) write: Option<u32>,
    pub(crate) stamp: Ps,
    pub(crate) phase: RegPhase,
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum RegPhase {
    /// The system call.
    Issue,
    /// The request on the link, at the card at `at`.
    Down { at: Ps },
    /// On the card's `s_axil`.
    OnCard(UserAccess),
    /// Answered.
    Ended { word: u32, end: Ps, free: Ps },
}

impl Driver {
    /// Descriptors in each engine's ring or buffer.
    pub(crate) fn ring_descriptors(&self) -> usize {
        match self.params.desc_layout {
            DescLayout::Ring => RING_DESCRIPTORS,
            DescLayout::FromStart => FROM_START_DESCRIPTORS,
        }
    }

    pub(crate) fn engines(&self, dir: Dir) -> &[EngineState] {
        match dir {
            Dir::H2c => &self.h2c,
            Dir::C2h => &self.c2h,
        }
    }

    pub(crate) fn engine_mut(&mut self, dir: Dir, channel: usize) -> Option<&mut EngineState> {
        match dir {
            Dir::H2c => self.h2c.get_mut(channel),
            Dir::C2h => self.c2h.get_mut(channel),
        }
    }

    /// A dword read of a BAR, as `ioread32`.
    pub(crate) fn bar_read(&mut self, bar: Bar, offset: u64) -> Result<u32> {
        Ok(self
            .ip
            .bar_read(bar, offset, 4, &mut self.ram, &mut self.irqs)? as u32)
    }

    /// A dword write of a BAR, as `iowrite32`.
    pub(crate) fn bar_write(&mut self, bar: Bar, offset: u64, value: u32) -> Result<()> {
        self.ip.bar_write(
            bar,
            offset,
            u64::from(value),
            4,
            &mut self.ram,
            &mut self.irqs,
        )?;
        Ok(())
    }

    pub(crate) fn dma_read(&mut self, offset: u64) -> Result<u32> {
        self.bar_read(Bar::Dma, offset)
    }

    pub(crate) fn dma_write(&mut self, offset: u64, value: u32) -> Result<()> {
        self.bar_write(Bar::Dma, offset, value)
    }

    pub(crate) fn timeout(&self, dir: Dir) -> Duration {
        match dir {
            Dir::H2c => self.params.h2c_timeout,
            Dir::C2h => self.params.c2h_timeout,
        }
    }
}
