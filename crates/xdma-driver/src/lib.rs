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

mod ram;

use std::time::Duration;

use std::collections::VecDeque;
use thiserror::Error;
use tracing::debug;

use xdma_ip::{Bar, HostMemory, InterruptSink, IpError, IrqMode, Ps, UserAccess, XdmaIp};
use xdma_regmap::{
    self as map, control, desc, engine as ereg, irq as ireg, msix, sgdma, status, Descriptor,
    Target, DESC_BYTES, DESC_MAGIC, RESULT_BYTES, RESULT_EOP, WB_COUNT_MASK, WB_ERR,
};

pub use ram::HostRam;

/// `XDMA_ENGINE_XFER_MAX_DESC`: descriptors in an engine's ring.
pub const RING_DESCRIPTORS: usize = 0x800;
/// The driver's `user_max`: a vector for each of the IP's user interrupt lines.
const USER_MAX: u32 = map::MAX_USER_IRQ as u32;
/// `XDMA_MAX_ADJ_BLOCK_SIZE`: the driver aligns blocks of adjacent descriptors to 64.
const ADJ_BLOCK: u32 = 0x40;
/// The Windows XDMA driver's `XDMA_MAX_TRANSFER_SIZE`: the longest DMA transfer, the DMA
/// enabler's maximum length, so the framework cuts a longer request into transfers of this.
pub const FROM_START_MAX_TRANSFER: u64 = 8 << 20;
/// The Windows driver's descriptor buffer per engine: `XDMA_MAX_TRANSFER_SIZE / PAGE_SIZE + 2`,
/// room for an 8 MiB transfer that starts and ends within a page.
pub const FROM_START_DESCRIPTORS: usize = (FROM_START_MAX_TRANSFER / map::HOST_PAGE) as usize + 2;
/// The MSI-X message address the model's "kernel" programs: the x86 local APIC window.
const MSIX_ADDR: u64 = 0xFEE0_0000;
/// Cycles the IP runs between two looks at the interrupts or the write-back.
const WAIT_STEP: u64 = 32;

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
    /// `xdma.ko`: a ring of [`RING_DESCRIPTORS`] per engine. A transfer starts at the ring's
    /// next free index, and one that reaches the ring's end is cut there (`transfer_init`), so
    /// where a request's descriptors fall depends on the calls before it; blocks of adjacent
    /// descriptors are aligned to 64 within a page (`xdma_get_next_adj`).
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

/// An errno the driver returns from a system call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Errno {
    /// The transfer did not complete within the direction's timeout.
    TimedOut,
    /// The engine reported an error, or stopped before the end of the chain.
    Io,
    /// The driver refused the call's arguments.
    Invalid,
    /// The host memory model has no room for the buffer (the driver's `ENOMEM`).
    NoMemory,
}

/// What went wrong with a call.
#[derive(Debug, Error)]
pub enum DriverError {
    /// The call failed as the driver fails it: the errno and what led to it.
    #[error("{errno:?}: {why}")]
    Errno {
        /// The errno.
        errno: Errno,
        /// What the driver saw.
        why: String,
    },
    /// The model itself failed: the card's simulation or the IP's configuration.
    #[error(transparent)]
    Ip(#[from] IpError),
}

impl DriverError {
    fn errno(errno: Errno, why: impl Into<String>) -> DriverError {
        DriverError::Errno {
            errno,
            why: why.into(),
        }
    }

    /// The errno, if the call failed as the driver fails it.
    pub fn kind(&self) -> Option<Errno> {
        match self {
            DriverError::Errno { errno, .. } => Some(*errno),
            DriverError::Ip(_) => None,
        }
    }
}

/// The model's result type.
pub type Result<T> = std::result::Result<T, DriverError>;

/// A direction of transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// Host to card (a write on an `h2c` node).
    H2c,
    /// Card to host (a read on a `c2h` node).
    C2h,
}

/// One engine as the driver keeps it (`struct xdma_engine`).
#[derive(Debug)]
struct Engine {
    dir: Dir,
    channel: usize,
    streaming: bool,
    /// The engine's bit in the IRQ block's channel registers, which is also its MSI-X vector.
    irq_bit: u32,
    /// The descriptor ring's bus address and the next free index in it.
    desc_bus: u64,
    desc_idx: usize,
    /// C2H streams: the result ring's bus address.
    result_bus: u64,
    /// Poll mode: the write-back's bus address.
    poll_wb: u64,
    /// What `engine_init_regs` wrote to the interrupt enable mask.
    ie_mask: u32,
    /// When an interrupt for this engine reached the host, while it waits for its handler.
    irq_at: Option<Ps>,
    /// When the driver last finished with the engine: the next request starts from here.
    free_at: Ps,
    /// `engine->non_incr_addr`: the card address stays fixed for the whole transfer.
    non_incr_addr: bool,
    /// `engine->addr_align` and `engine->len_granularity`, from the engine's alignments
    /// register (`engine_alignments`), read again after every change of the address mode.
    addr_align: u64,
    len_granularity: u64,
    /// The completed count the driver last serviced in the engine's run.
    seen_completed: u32,
    /// The service routine found the engine stopped on an error with nothing completed: the
    /// transfer can only time out (see [`Params::end_dead_waits`]).
    stopped_on_error: bool,
}

/// A transfer on an engine's ring (`struct xdma_transfer`).
#[derive(Debug, Clone, Copy)]
struct Transfer {
    desc_bus: u64,
    res_bus: u64,
    desc_num: usize,
    len: u64,
    /// Adjacent descriptors of the first fetch (`FIRST_DESC_ADJACENT`).
    first_adj: u32,
}

/// How a transfer ended, as `engine_service` leaves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Submitted,
    Completed { desc_cmpl: usize, eop: bool },
    Failed { status: u32, completed: usize },
}

/// What the IP sent, kept until the model's handlers look at it.
#[derive(Debug, Default)]
struct Irqs {
    msix_vectors: Vec<u32>,
    msi: u32,
    intx: bool,
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
    ip: XdmaIp,
    ram: HostRam,
    irqs: Irqs,
    params: Params,
    h2c: Vec<Engine>,
    c2h: Vec<Engine>,
    /// User interrupts taken, per line (`xdma_user_irq` / `user_irq_service` events).
    user_events: Vec<u64>,
    /// When the driver had each user interrupt not yet taken by a reader, per line.
    user_latched: Vec<VecDeque<Ps>>,
    cycles: u64,
    calls: Vec<Request>,
    regs: Vec<RegCall>,
    next_call: u64,
    costs: Costs,
    /// The max read request size in bytes, from the IP's config block.
    max_read: u32,
}

impl Driver {
    /// Probes the card behind `ip` as the driver's `probe` does, with host memory `ram`.
    pub fn probe(ip: XdmaIp, ram: HostRam, params: Params) -> Result<Driver> {
        let mut d = Driver {
            ip,
            ram,
            irqs: Irqs::default(),
            params,
            h2c: Vec::new(),
            c2h: Vec::new(),
            user_events: vec![0; map::MAX_USER_IRQ],
            user_latched: vec![VecDeque::new(); map::MAX_USER_IRQ],
            cycles: 0,
            calls: Vec::new(),
            regs: Vec::new(),
            next_call: 0,
            costs: Costs::default(),
            max_read: 512,
        };
        // The PCI core enables the interrupt capability the driver asked for.
        let mode = match d.params.interrupt_mode {
            _ if d.params.poll_mode => IrqMode::MsiX {
                function_mask: false,
            },
            InterruptMode::MsiX => IrqMode::MsiX {
                function_mask: false,
            },
            InterruptMode::Msi => IrqMode::Msi { vectors: 1 },
            InterruptMode::Legacy => IrqMode::Intx { disabled: false },
        };
        d.ip.set_irq_mode(mode, &mut d.irqs);
        let mrrs = d.dma_read(map::config::BASE + map::config::MAX_READ)? & 0x7;
        d.max_read = 128 << mrrs.min(5);
        // probe_engines: an engine is there when its identifier names its target and channel.
        for dir in [Dir::H2c, Dir::C2h] {
            for ch in 0..map::MAX_CHANNELS {
                let id = d.dma_read(map::engine_base(dir == Dir::C2h, ch) + ereg::IDENTIFIER)?;
                let target = if dir == Dir::C2h {
                    Target::C2h
                } else {
                    Target::H2c
                };
                if id & map::ID_ENGINE_MASK != target.id_base() || map::id_channel(id) != ch {
                    break;
                }
                let streaming = id & map::ID_STREAM != 0;
                d.engine_init(dir, ch, streaming)?;
            }
        }
        d.irq_setup()?;
        Ok(d)
    }

    /// The driver's parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Descriptors in each engine's ring or buffer.
    fn ring_descriptors(&self) -> usize {
        match self.params.desc_layout {
            DescLayout::Ring => RING_DESCRIPTORS,
            DescLayout::FromStart => FROM_START_DESCRIPTORS,
        }
    }

    /// Sets the host's costs of the driver's work.
    pub fn set_costs(&mut self, costs: Costs) {
        self.costs = costs;
    }

    /// The simulated time, in ps.
    pub fn now(&self) -> Ps {
        self.ip.now()
    }

    /// The host memory model.
    pub fn ram(&mut self) -> &mut HostRam {
        &mut self.ram
    }

    /// The IP behind the driver.
    pub fn ip(&mut self) -> &mut XdmaIp {
        &mut self.ip
    }

    /// `axi_aclk` cycles the driver's calls have run the card for.
    pub fn cycles(&self) -> u64 {
        self.cycles
    }

    /// The channels the probe found in a direction, and whether each is a stream.
    pub fn channels(&self, dir: Dir) -> Vec<bool> {
        self.engines(dir).iter().map(|e| e.streaming).collect()
    }

    fn engines(&self, dir: Dir) -> &[Engine] {
        match dir {
            Dir::H2c => &self.h2c,
            Dir::C2h => &self.c2h,
        }
    }

    fn engine_mut(&mut self, dir: Dir, channel: usize) -> Option<&mut Engine> {
        match dir {
            Dir::H2c => self.h2c.get_mut(channel),
            Dir::C2h => self.c2h.get_mut(channel),
        }
    }

    /// A dword read of a BAR, as `ioread32`.
    fn bar_read(&mut self, bar: Bar, offset: u64) -> Result<u32> {
        Ok(self
            .ip
            .bar_read(bar, offset, 4, &mut self.ram, &mut self.irqs)? as u32)
    }

    /// A dword write of a BAR, as `iowrite32`.
    fn bar_write(&mut self, bar: Bar, offset: u64, value: u32) -> Result<()> {
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

    fn dma_read(&mut self, offset: u64) -> Result<u32> {
        self.bar_read(Bar::Dma, offset)
    }

    fn dma_write(&mut self, offset: u64, value: u32) -> Result<()> {
        self.bar_write(Bar::Dma, offset, value)
    }

    /// `engine_init_regs` and `engine_alloc_resource` for one engine.
    fn engine_init(&mut self, dir: Dir, ch: usize, streaming: bool) -> Result<()> {
        let base = map::engine_base(dir == Dir::C2h, ch);
        self.dma_write(base + ereg::CONTROL_W1C, control::NON_INCR_ADDR)?;
        let mut ie = control::IE_ALIGN_MISMATCH
            | control::IE_MAGIC_STOPPED
            | control::IE_READ_ERROR
            | control::IE_DESC_ERROR;
        let no_room = || DriverError::errno(Errno::NoMemory, "no host memory for the rings");
        let mut poll_wb = 0;
        if self.params.poll_mode {
            poll_wb = self.ram.alloc_coherent(8).ok_or_else(no_room)?;
            self.dma_write(base + ereg::POLL_WB_LO, poll_wb as u32)?;
            self.dma_write(base + ereg::POLL_WB_HI, (poll_wb >> 32) as u32)?;
        } else {
            ie |= control::IE_DESC_STOPPED | control::IE_DESC_COMPLETED;
        }
        self.dma_write(base + ereg::IE_MASK, ie)?;
        let desc_bus = self
            .ram
            .alloc_coherent(self.ring_descriptors() * DESC_BYTES)
            .ok_or_else(no_room)?;
        let result_bus = if streaming && dir == Dir::C2h {
            self.ram
                .alloc_coherent(self.ring_descriptors() * RESULT_BYTES)
                .ok_or_else(no_room)?
        } else {
            0
        };
        let irq_bit = (self.h2c.len() + self.c2h.len()) as u32;
        let e = Engine {
            dir,
            channel: ch,
            streaming,
            irq_bit,
            desc_bus,
            desc_idx: 0,
            result_bus,
            poll_wb,
            ie_mask: ie,
            irq_at: None,
            free_at: 0,
            non_incr_addr: false,
            addr_align: 1,
            len_granularity: 1,
            seen_completed: 0,
            stopped_on_error: false,
        };
        match dir {
            Dir::H2c => self.h2c.push(e),
            Dir::C2h => self.c2h.push(e),
        }
        self.engine_alignments(dir, ch)
    }

    /// `engine_alignments`: the address alignment and length granularity the engine asks
    /// for, from its alignments register; 1 and 1 when the register reads zero.
    fn engine_alignments(&mut self, dir: Dir, ch: usize) -> Result<()> {
        let w = self.dma_read(map::engine_base(dir == Dir::C2h, ch) + ereg::ALIGNMENTS)?;
        let (align, granularity) = if w == 0 {
            (1, 1)
        } else {
            (u64::from((w >> 16) & 0xFF), u64::from((w >> 8) & 0xFF))
        };
        if let Some(e) = self.engine_mut(dir, ch) {
            // A zero field would make every length a multiple of it; the driver would divide
            // by nothing. Treat it as no constraint.
            e.addr_align = align.max(1);
            e.len_granularity = granularity.max(1);
        }
        Ok(())
    }

    /// The IRQ block's vectors (`prog_irq_msix_channel`, `prog_irq_msix_user`), the MSI-X
    /// table as the PCI core fills it, and the interrupts enabled.
    fn irq_setup(&mut self) -> Result<()> {
        // The engines' bits are numbered H2C first, then C2H; the probe found them so.
        let mut engines: Vec<(Dir, usize)> = self.h2c.iter().map(|e| (e.dir, e.channel)).collect();
        engines.extend(self.c2h.iter().map(|e| (e.dir, e.channel)));
        for (i, (dir, ch)) in engines.iter().enumerate() {
            if let Some(e) = self.engine_mut(*dir, *ch) {
                e.irq_bit = i as u32;
            }
        }
        let channels = engines.len() as u32;
        if self.params.poll_mode {
            return Ok(());
        }
        if self.params.interrupt_mode == InterruptMode::MsiX {
            let vectors = |first: u32, n: u32| -> Vec<u32> {
                (0..n.div_ceil(4))
                    .map(|j| {
                        (0..4)
                            .filter(|k| j * 4 + k < n)
                            .fold(0u32, |v, k| v | (((first + j * 4 + k) & 0x1F) << (8 * k)))
                    })
                    .collect()
            };
            for (j, v) in vectors(0, channels).into_iter().enumerate() {
                self.dma_write(ireg::BASE + ireg::CHANNEL_VECTOR + 4 * j as u64, v)?;
            }
            for (j, v) in vectors(channels, USER_MAX).into_iter().enumerate() {
                self.dma_write(ireg::BASE + ireg::USER_VECTOR + 4 * j as u64, v)?;
            }
            for v in 0..(channels + USER_MAX).min(msix::VECTORS as u32) {
                let entry = msix::TABLE + u64::from(v) * msix::ENTRY;
                self.dma_write(entry, MSIX_ADDR as u32)?;
                self.dma_write(entry + 4, (MSIX_ADDR >> 32) as u32)?;
                self.dma_write(entry + 8, v)?;
                self.dma_write(entry + 12, 0)?;
            }
        }
        // channel_interrupts_enable(~0) and user_interrupts_enable(~0) at the end of probe.
        self.dma_write(ireg::BASE + ireg::CHANNEL_ENABLE_W1S, !0)?;
        self.dma_write(ireg::BASE + ireg::USER_ENABLE_W1S, !0)?;
        Ok(())
    }

    /// User interrupts taken so far on line `line`.
    pub fn user_events(&self, line: usize) -> u64 {
        self.user_events.get(line).copied().unwrap_or(0)
    }

    /// The user interrupts of line `line` that a reader of its event node has not taken yet,
    /// each with when the driver had it (its handler done); a reader takes them from here.
    pub fn user_latched(&mut self, line: usize) -> Option<&mut VecDeque<Ps>> {
        self.user_latched.get_mut(line)
    }

    /// Reads a dword of the user BAR (a `pread` on the `_user` node).
    pub fn user_read(&mut self, offset: u64) -> Result<u32> {
        self.bar_read(Bar::User, offset)
    }

    /// Writes a dword of the user BAR.
    pub fn user_write(&mut self, offset: u64, value: u32) -> Result<()> {
        self.bar_write(Bar::User, offset, value)
    }

    /// Reads a dword of the DMA BAR (a `pread` on the `_control` node: `char_ctrl_read`).
    pub fn control_read(&mut self, offset: u64) -> Result<u32> {
        self.dma_read(offset)
    }

    /// Writes a dword of the DMA BAR (a `pwrite` on the `_control` node).
    pub fn control_write(&mut self, offset: u64, value: u32) -> Result<()> {
        self.dma_write(offset, value)
    }

    /// `IOCTL_XDMA_ADDRMODE_SET` on an engine's node: the engine's non-incrementing address
    /// mode set or cleared in its control register, and kept for every run the driver starts.
    pub fn addrmode_set(&mut self, dir: Dir, channel: usize, fixed: bool) -> Result<()> {
        let Some(e) = self.engine_mut(dir, channel) else {
            return Err(DriverError::errno(
                Errno::Invalid,
                format!("no {dir:?} channel {channel}"),
            ));
        };
        e.non_incr_addr = fixed;
        let base = map::engine_base(dir == Dir::C2h, channel);
        let alias = if fixed {
            ereg::CONTROL_W1S
        } else {
            ereg::CONTROL_W1C
        };
        self.dma_write(base + alias, control::NON_INCR_ADDR)?;
        self.engine_alignments(dir, channel)
    }

    /// `IOCTL_XDMA_ADDRMODE_GET`: whether the engine runs with a fixed card address.
    pub fn addrmode_get(&self, dir: Dir, channel: usize) -> Result<bool> {
        self.engines(dir)
            .get(channel)
            .map(|e| e.non_incr_addr)
            .ok_or_else(|| {
                DriverError::errno(Errno::Invalid, format!("no {dir:?} channel {channel}"))
            })
    }

    /// Runs the card for `cycles` with the interrupt handlers in place (time passing while
    /// no call waits, as it does between system calls).
    pub fn idle(&mut self, cycles: u64) -> Result<()> {
        let mut left = cycles;
        while left > 0 {
            let n = left.min(WAIT_STEP);
            self.run(n)?;
            left -= n;
        }
        Ok(())
    }

    /// Runs the card for `cycles`, the driver's handlers and queued work going on as time
    /// passes.
    pub fn run(&mut self, cycles: u64) -> Result<()> {
        for _ in 0..cycles {
            self.ip.run(1, &mut self.ram, &mut self.irqs)?;
            self.cycles += 1;
            self.handle_irqs()?;
            self.advance()?;
        }
        Ok(())
    }

    /// The top halves: what each handler does when its interrupt arrives.
    fn handle_irqs(&mut self) -> Result<()> {
        if self.params.poll_mode {
            return Ok(());
        }
        let channels = (self.h2c.len() + self.c2h.len()) as u32;
        let now = self.now();
        for v in std::mem::take(&mut self.irqs.msix_vectors) {
            if v < channels {
                // xdma_channel_irq: mask the engine's interrupts, flush, schedule its work.
                if let Some((dir, ch)) = self.engine_of_bit(v) {
                    let base = map::engine_base(dir == Dir::C2h, ch);
                    let ie = self.engine_mut(dir, ch).map_or(0, |e| e.ie_mask);
                    self.dma_write(base + ereg::IE_MASK_W1C, ie)?;
                    self.dma_read(ireg::BASE + ireg::CHANNEL_PENDING)?;
                    if let Some(e) = self.engine_mut(dir, ch) {
                        e.irq_at = Some(now);
                    }
                }
            } else {
                self.user_irq((v - channels) as usize, now);
            }
        }
        let shared = std::mem::take(&mut self.irqs.msi) > 0 || self.irqs.intx;
        if shared {
            // xdma_isr: the channel requests masked, the user requests serviced.
            let ch_irq = self.dma_read(ireg::BASE + ireg::CHANNEL_REQUEST)?;
            if ch_irq != 0 {
                self.dma_write(ireg::BASE + ireg::CHANNEL_ENABLE_W1C, ch_irq)?;
            }
            let user_irq = self.dma_read(ireg::BASE + ireg::USER_REQUEST)?;
            for line in 0..map::MAX_USER_IRQ {
                if user_irq & (1 << line) != 0 {
                    self.user_irq(line, now);
                }
            }
            for bit in 0..channels {
                if ch_irq & (1 << bit) != 0 {
                    if let Some((dir, ch)) = self.engine_of_bit(bit) {
                        if let Some(e) = self.engine_mut(dir, ch) {
                            e.irq_at = Some(now);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// A user interrupt's handler (`user_irq_service`): the event counted, and latched for
    /// the event node's readers once the handler is done.
    fn user_irq(&mut self, line: usize, at: Ps) {
        if let Some(n) = self.user_events.get_mut(line) {
            *n += 1;
        }
        let irq = self.costs.irq;
        if let Some(q) = self.user_latched.get_mut(line) {
            q.push_back(at + irq);
        }
    }

    fn engine_of_bit(&self, bit: u32) -> Option<(Dir, usize)> {
        self.h2c
            .iter()
            .chain(&self.c2h)
            .find(|e| e.irq_bit == bit)
            .map(|e| (e.dir, e.channel))
    }

    /// Writes `data` to card address `card_addr` through H2C channel `channel` (a `pwrite`
    /// on `xdma0_h2c_N`), from a buffer `page_offset` bytes into a host page; returns when
    /// the driver would return.
    pub fn write(
        &mut self,
        channel: usize,
        card_addr: u64,
        data: &[u8],
        page_offset: usize,
    ) -> Result<usize> {
        let call = self.start_write(channel, card_addr, data, page_offset)?;
        self.wait(call).map(|r| r.written)
    }

    /// Reads `len` bytes from card address `card_addr` through C2H channel `channel` (a
    /// `pread` on `xdma0_c2h_N`). On a stream channel the address is ignored; with
    /// `eop_flush` (the node opened with `O_TRUNC`) the read ends at end-of-packet.
    pub fn read(
        &mut self,
        channel: usize,
        card_addr: u64,
        len: usize,
        page_offset: usize,
        eop_flush: bool,
    ) -> Result<Received> {
        let call = self.start_read(channel, card_addr, len, page_offset, eop_flush)?;
        self.wait(call)
    }

    /// Starts a write as a thread of its own would make it, now: the call is in the driver
    /// (its engine's, or waiting for the engine's lock behind an earlier call) until
    /// [`Driver::wait`] or [`Driver::poll`] returns its end.
    pub fn start_write(
        &mut self,
        channel: usize,
        card_addr: u64,
        data: &[u8],
        page_offset: usize,
    ) -> Result<Call> {
        let now = self.now();
        self.submit(
            Submit {
                dir: Dir::H2c,
                channel,
                card_addr,
                len: data.len(),
                page_offset,
                eop_flush: false,
                at: now,
                timeout: None,
            },
            Some(data),
        )
    }

    /// Starts a read now (see [`Driver::start_write`]).
    pub fn start_read(
        &mut self,
        channel: usize,
        card_addr: u64,
        len: usize,
        page_offset: usize,
        eop_flush: bool,
    ) -> Result<Call> {
        let now = self.now();
        self.submit(
            Submit {
                dir: Dir::C2h,
                channel,
                card_addr,
                len,
                page_offset,
                eop_flush,
                at: now,
                timeout: None,
            },
            None,
        )
    }

    /// `check_transfer_align`: with a fixed card address, the buffer and the card address
    /// aligned to the engine's alignment and the length a multiple of its granularity;
    /// otherwise the buffer and the card address alike within the alignment. EINVAL if not.
    /// Only the buffer's place within its page is known here, which decides every alignment
    /// up to a page.
    fn check_transfer_align(&self, s: &Submit) -> Result<()> {
        let Some(e) = self.engines(s.dir).get(s.channel) else {
            return Ok(());
        };
        let mask = e.addr_align - 1;
        let buf = s.page_offset as u64 & mask;
        let pos = s.card_addr & mask;
        let problem = if e.non_incr_addr {
            if buf != 0 {
                Some(format!(
                    "the buffer is not aligned to {} bytes",
                    e.addr_align
                ))
            } else if pos != 0 {
                Some(format!(
                    "card address {:#x} is not aligned to {} bytes",
                    s.card_addr, e.addr_align
                ))
            } else if !(s.len as u64).is_multiple_of(e.len_granularity) {
                Some(format!(
                    "{} bytes is not a multiple of {}",
                    s.len, e.len_granularity
                ))
            } else {
                None
            }
        } else if buf != pos {
            Some(format!(
                "the buffer and card address {:#x} are not alike modulo {}",
                s.card_addr, e.addr_align
            ))
        } else {
            None
        };
        match problem {
            Some(p) => Err(DriverError::errno(Errno::Invalid, p)),
            None => Ok(()),
        }
    }

    /// Starts a transfer whose system call is made at `s.at` (now or later, in simulated
    /// time), with `data` for a write. The request waits in the driver's queue from
    /// `s.at + submit`.
    pub fn submit(&mut self, s: Submit, data: Option<&[u8]>) -> Result<Call> {
        self.check_transfer_align(&s)?;
        let host = self.pin(s.dir, s.channel, s.len, s.page_offset)?;
        if let Some(data) = data {
            if let Err(e) = self.ram.write(host, data) {
                self.ram.unpin(host);
                return Err(DriverError::errno(Errno::NoMemory, e.to_string()));
            }
        }
        Ok(self.queue(s, host))
    }

    /// Starts a user BAR access whose system call is made at `at`: a read, or a write of
    /// `write`. Its end is the value read (a write's is 0) in [`Received::word`].
    pub fn submit_user(&mut self, offset: u64, write: Option<u32>, at: Ps) -> Call {
        let id = self.next_call;
        self.next_call += 1;
        self.regs.push(RegCall {
            id,
            offset,
            write,
            stamp: at,
            phase: RegPhase::Issue,
        });
        Call(id)
    }

    /// Runs the card until `call` ends, every other call going on meanwhile, and returns what
    /// the system call returns.
    pub fn wait(&mut self, call: Call) -> Result<Received> {
        loop {
            if let Some(r) = self.poll(call)? {
                return r;
            }
            self.run(WAIT_STEP)?;
        }
    }

    /// The end of `call` if it has ended (then it is gone), or `None` while it is in the
    /// driver. A call this driver does not know ended long ago or never was: `EINVAL`.
    pub fn poll(&mut self, call: Call) -> Result<Option<Result<Received>>> {
        Ok(self.poll_ended(call)?.map(|e| e.result))
    }

    /// The end of `call` with when its caller runs again, if it has ended (see
    /// [`Driver::poll`]).
    pub fn poll_ended(&mut self, call: Call) -> Result<Option<Ended>> {
        self.advance()?;
        Ok(self.ended(call))
    }

    /// The end of `call` if the driver has finished it by the last [`Driver::run`] (then it
    /// is gone), without looking at the calls again: for a caller that runs the driver every
    /// cycle and polls many calls.
    pub fn ended(&mut self, call: Call) -> Option<Ended> {
        if let Some(i) = self.regs.iter().position(|c| c.id == call.0) {
            let RegPhase::Ended { word, end, free } = self.regs[i].phase else {
                return None;
            };
            self.regs.remove(i);
            return Some(Ended {
                result: Ok(Received {
                    data: Vec::new(),
                    written: 0,
                    end_of_packet: false,
                    word,
                }),
                end,
                free,
            });
        }
        let Some(i) = self.calls.iter().position(|c| c.id == call.0) else {
            return Some(Ended {
                result: Err(DriverError::errno(
                    Errno::Invalid,
                    format!("call {} is not in the driver", call.0),
                )),
                end: self.now(),
                free: self.now(),
            });
        };
        if !matches!(self.calls[i].phase, Phase::Ended(_)) {
            return None;
        }
        let c = self.calls.remove(i);
        self.ram.unpin(c.host);
        let Phase::Ended(r) = c.phase else {
            return None;
        };
        let result = r.and_then(|done| {
            let data = if c.dir == Dir::C2h {
                self.ram
                    .slice(c.host, done.bytes)
                    .map_err(|e| DriverError::errno(Errno::Io, e.to_string()))?
                    .to_vec()
            } else {
                Vec::new()
            };
            Ok(Received {
                written: if c.dir == Dir::H2c { done.bytes } else { 0 },
                data,
                end_of_packet: done.eop,
                word: 0,
            })
        });
        Some(Ended {
            result,
            end: c.end,
            free: c.end,
        })
    }

    /// How far `call` has got while it is in the driver: the bytes its finished engine runs
    /// moved, and the bytes it moves in all. `None` for a call the driver does not hold (a
    /// register access, or one that has ended and been taken).
    pub fn progress(&self, call: Call) -> Option<(usize, usize)> {
        self.calls.iter().find(|c| c.id == call.0).map(|c| {
            let total = c.pieces.iter().map(|p| p.1).sum::<u64>();
            (c.done.bytes, usize::try_from(total).unwrap_or(usize::MAX))
        })
    }

    /// Gives up `call` as a signal does: a transfer in flight is aborted and its engine
    /// stopped, as `xdma_xfer_submit` does when its wait is interrupted. A call that ended
    /// is dropped. A user BAR access cannot be taken back: it ends on its own.
    pub fn cancel(&mut self, call: Call) -> Result<()> {
        let Some(i) = self.calls.iter().position(|c| c.id == call.0) else {
            return Ok(());
        };
        let c = self.calls.remove(i);
        self.ram.unpin(c.host);
        if let Phase::Running { .. } = c.phase {
            self.engine_stop(c.dir, c.channel)?;
            let now = self.now();
            if let Some(e) = self.engine_mut(c.dir, c.channel) {
                e.free_at = now;
                e.irq_at = None;
            }
        }
        Ok(())
    }

    fn pin(&mut self, dir: Dir, channel: usize, len: usize, page_offset: usize) -> Result<u64> {
        if self.engines(dir).get(channel).is_none() {
            return Err(DriverError::errno(
                Errno::Invalid,
                format!("no {dir:?} channel {channel}"),
            ));
        }
        if len == 0 {
            return Err(DriverError::errno(Errno::Invalid, "a transfer of 0 bytes"));
        }
        self.ram.pin(len, page_offset).ok_or_else(|| {
            DriverError::errno(
                Errno::NoMemory,
                format!(
                    "{len} bytes do not fit the host memory model ({} bytes)",
                    self.ram.size()
                ),
            )
        })
    }

    /// `xdma_init_request`: the scatter list, one entry per page, split where longer than
    /// `desc_blen_max`; the call then waits for its engine.
    fn queue(&mut self, s: Submit, host: u64) -> Call {
        let streaming = self.engines(s.dir)[s.channel].streaming;
        let blen = u64::from(self.params.desc_blen_max.max(1));
        let cut = match self.params.desc_layout {
            DescLayout::Ring => u64::MAX,
            DescLayout::FromStart => FROM_START_MAX_TRANSFER,
        };
        let pieces = scatter(host, s.len as u64, blen, cut);
        let id = self.next_call;
        self.next_call += 1;
        let timeout = s.timeout.unwrap_or_else(|| self.timeout(s.dir));
        let timeout_ps = u64::try_from(timeout.as_nanos().saturating_mul(1000)).unwrap_or(u64::MAX);
        self.calls.push(Request {
            id,
            dir: s.dir,
            channel: s.channel,
            host,
            ep: s.card_addr,
            pieces,
            next: 0,
            eop_flush: s.eop_flush && streaming && s.dir == Dir::C2h,
            done: Done::default(),
            phase: Phase::Queued,
            ready_at: s.at.saturating_add(self.costs.submit),
            deadline: Ps::MAX,
            timeout_ps,
            timeout,
            end: 0,
        });
        Call(id)
    }

    /// One look at every call: a queued call whose engine is free starts its first transfer
    /// once the driver has done its part, a running one is serviced once its interrupt or
    /// write-back has come and the handler has done its part, or times out.
    fn advance(&mut self) -> Result<()> {
        let now = self.now();
        self.advance_regs(now)?;
        for i in 0..self.calls.len() {
            let (dir, channel) = (self.calls[i].dir, self.calls[i].channel);
            let deadline = self.calls[i].deadline;
            match self.calls[i].phase {
                Phase::Ended(_) => {}
                Phase::Queued => {
                    // The engine's desc_lock: calls on one engine run one at a time, in order.
                    let busy = self.calls[..i].iter().any(|c| {
                        c.dir == dir && c.channel == channel && !matches!(c.phase, Phase::Ended(_))
                    }) || self.ip.engine_busy(dir == Dir::C2h, channel);
                    if !busy {
                        let free = self.engines(dir)[channel].free_at;
                        let from = self.calls[i].ready_at.max(free);
                        self.calls[i].phase = Phase::Starting { from };
                        self.start_phases(i, now)?;
                    }
                }
                Phase::Starting { .. } | Phase::Doorbell { .. } => self.start_phases(i, now)?,
                Phase::Running { xfer } => {
                    let eop_flush = self.calls[i].eop_flush;
                    let state = self.check(dir, channel, xfer, eop_flush)?;
                    let (at, state) = match state {
                        Serviced::Not => (None, State::Submitted),
                        Serviced::At(at, state) => (Some(at), state),
                    };
                    if let (Some(at), Some(e)) = (at, self.engine_mut(dir, channel)) {
                        e.free_at = at;
                    }
                    // The deadline passes a transfer whose completion is on its way (descriptors
                    // completed since the driver last looked, their interrupt or write-back
                    // not yet serviced) only once it is serviced. The driver's wait and its
                    // interrupt's service race over the microseconds of the handler, which
                    // its timeouts of seconds make rare; a model's caller may wait
                    // microseconds, and would lose data that reached the host in time.
                    let pending = at.is_none() && now >= deadline && {
                        let base = map::engine_base(dir == Dir::C2h, channel);
                        let seen = self.engines(dir)[channel].seen_completed;
                        self.dma_read(base + ereg::COMPLETED)? > seen
                    };
                    let dead = self.params.end_dead_waits
                        && matches!(state, State::Submitted)
                        && self.engines(dir)[channel].stopped_on_error;
                    if matches!(state, State::Submitted) && (now >= deadline || dead) && !pending {
                        let deadline = if dead { now.min(deadline) } else { deadline };
                        // Still in flight at the timeout: abort it and stop the engine.
                        let base = map::engine_base(dir == Dir::C2h, channel);
                        let st = self.dma_read(base + ereg::STATUS)?;
                        self.engine_stop(dir, channel)?;
                        if let Some(e) = self.engine_mut(dir, channel) {
                            e.free_at = deadline;
                            e.irq_at = None;
                            e.stopped_on_error = false;
                        }
                        let timeout = self.calls[i].timeout;
                        self.end(
                            i,
                            deadline,
                            Err(DriverError::errno(
                                Errno::TimedOut,
                                format!(
                                    "{dir:?} {channel}: no completion within {timeout:?} (status {st:#x})"
                                ),
                            )),
                        );
                        continue;
                    }
                    let at = at.unwrap_or(now);
                    match state {
                        State::Submitted => {}
                        State::Failed { status, completed } => {
                            self.end(
                                i,
                                at,
                                Err(DriverError::errno(
                                    Errno::Io,
                                    format!(
                                        "{dir:?} {channel}: engine status {status:#x}, {completed} of {} descriptors completed",
                                        xfer.desc_num
                                    ),
                                )),
                            );
                        }
                        State::Completed { desc_cmpl, eop } => {
                            self.transfer_done(i, xfer, desc_cmpl, eop, at)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Ends call `i` with `r`, the driver done with it at `at`: its caller runs again after
    /// the wake-up.
    fn end(&mut self, i: usize, at: Ps, r: Result<Done>) {
        let wake = self.costs.wake;
        let c = &mut self.calls[i];
        c.end = at.saturating_add(wake);
        c.phase = Phase::Ended(r);
    }

    /// A request's way to its engine: the driver builds and programs the transfer (`start`),
    /// its doorbell crosses the link, and the engine runs from the doorbell's arrival.
    fn start_phases(&mut self, i: usize, now: Ps) -> Result<()> {
        if let Phase::Starting { from } = self.calls[i].phase {
            let write_at = from.saturating_add(self.costs.start);
            if write_at > now {
                return Ok(());
            }
            let at = self.ip.pcie().from_host(write_at, true);
            self.calls[i].phase = Phase::Doorbell { at };
        }
        if let Phase::Doorbell { at } = self.calls[i].phase {
            if at <= now {
                self.next_transfer(i, at)?;
            }
        }
        Ok(())
    }

    /// The user BAR accesses: the system call, the request down the link, the card's
    /// answer on `s_axil`, a read's completion back up the link.
    fn advance_regs(&mut self, now: Ps) -> Result<()> {
        for i in 0..self.regs.len() {
            let c = &self.regs[i];
            match c.phase {
                RegPhase::Issue => {
                    let issue = c.stamp.saturating_add(self.costs.register);
                    if issue > now {
                        continue;
                    }
                    let write = c.write.is_some();
                    let at = self.ip.pcie().from_host(issue, write);
                    self.regs[i].phase = RegPhase::Down { at };
                    if at <= now {
                        self.reg_at_card(i)?;
                    }
                }
                RegPhase::Down { at } if at <= now => self.reg_at_card(i)?,
                RegPhase::OnCard(a) => {
                    if let Some(v) = self.ip.user_poll(a)? {
                        self.reg_answered(i, v, now);
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn reg_at_card(&mut self, i: usize) -> Result<()> {
        let (offset, write) = (self.regs[i].offset, self.regs[i].write);
        match self.ip.user_start(offset, write.map(|v| (v, 0xF)))? {
            Some(a) => self.regs[i].phase = RegPhase::OnCard(a),
            // Past the BAR: the IP answers at once, reads zero.
            None => {
                let now = self.now();
                self.reg_answered(i, 0, now);
            }
        }
        Ok(())
    }

    /// The card answered: a posted write's call returned once its system call was done (the
    /// register path was held until the card took it, so accesses stay in order as PCIe
    /// keeps them); a read's completion goes back up the link.
    fn reg_answered(&mut self, i: usize, v: u32, now: Ps) {
        let c = &self.regs[i];
        let phase = if c.write.is_some() {
            RegPhase::Ended {
                word: 0,
                end: c.stamp.saturating_add(self.costs.register),
                free: now,
            }
        } else {
            let back = self.ip.pcie().completion_to_host(now, 4);
            RegPhase::Ended {
                word: v,
                end: back,
                free: now,
            }
        };
        self.regs[i].phase = phase;
    }

    fn timeout(&self, dir: Dir) -> Duration {
        match dir {
            Dir::H2c => self.params.h2c_timeout,
            Dir::C2h => self.params.c2h_timeout,
        }
    }

    /// The call's next transfer built and started at `at`, or the call ended when none is
    /// left.
    fn next_transfer(&mut self, i: usize, at: Ps) -> Result<()> {
        let (dir, channel, host, ep, next, eop_flush) = {
            let c = &self.calls[i];
            (c.dir, c.channel, c.host, c.ep, c.next, c.eop_flush)
        };
        if next >= self.calls[i].pieces.len() {
            let done = self.calls[i].done;
            self.end(i, at, Ok(done));
            return Ok(());
        }
        let pieces = self.calls[i].pieces[next..].to_vec();
        let (xfer, taken) = self.transfer_init(dir, channel, host, &pieces, ep, eop_flush)?;
        self.engine_start(dir, channel, xfer)?;
        let c = &mut self.calls[i];
        c.next += taken;
        c.ep += xfer.len;
        c.phase = Phase::Running { xfer };
        // The driver waits for each transfer from its start, for the direction's timeout.
        c.deadline = at.saturating_add(c.timeout_ps);
        Ok(())
    }

    /// A transfer completed (serviced at `at`): its bytes counted (C2H streams from the
    /// result records), and the call goes on with its next transfer unless an end-of-packet
    /// read saw its packet end.
    fn transfer_done(
        &mut self,
        i: usize,
        xfer: Transfer,
        desc_cmpl: usize,
        eop: bool,
        at: Ps,
    ) -> Result<()> {
        let (dir, channel) = (self.calls[i].dir, self.calls[i].channel);
        if self.engines(dir)[channel].streaming && dir == Dir::C2h {
            for k in 0..desc_cmpl {
                let a = xfer.res_bus + (k * RESULT_BYTES) as u64;
                let word = |a| {
                    self.ram
                        .dword(a)
                        .map_err(|e| DriverError::errno(Errno::Io, e.to_string()))
                };
                let (st, n) = (word(a)?, word(a + 4)?);
                self.calls[i].done.bytes += n as usize;
                self.calls[i].done.eop = st & RESULT_EOP != 0;
            }
            if self.calls[i].eop_flush && eop {
                let done = self.calls[i].done;
                self.end(i, at, Ok(done));
                return Ok(());
            }
        } else {
            self.calls[i].done.bytes += xfer.len as usize;
        }
        if self.calls[i].next >= self.calls[i].pieces.len() {
            let done = self.calls[i].done;
            self.end(i, at, Ok(done));
            return Ok(());
        }
        // The request's next transfer: the driver builds it from here.
        self.calls[i].phase = Phase::Starting { from: at };
        let now = self.now();
        self.start_phases(i, now)
    }

    /// `transfer_init` and `transfer_build`: descriptors for as many pieces as the ring's free
    /// run holds, linked, with adjacent counts and the last one's STOP, COMPLETED and EOP.
    fn transfer_init(
        &mut self,
        dir: Dir,
        channel: usize,
        host: u64,
        pieces: &[(u64, u64)],
        ep_addr: u64,
        eop_flush: bool,
    ) -> Result<(Transfer, usize)> {
        let (desc_idx, desc_ring, res_ring, c2h_stream, fixed) = {
            let e = &self.engines(dir)[channel];
            (
                e.desc_idx,
                e.desc_bus,
                e.result_bus,
                e.streaming && dir == Dir::C2h,
                e.non_incr_addr,
            )
        };
        let layout = self.params.desc_layout;
        let (desc_idx, desc_max) = match layout {
            DescLayout::Ring => {
                let mut desc_max = pieces.len().min(RING_DESCRIPTORS);
                if desc_idx + desc_max >= RING_DESCRIPTORS {
                    desc_max = RING_DESCRIPTORS - desc_idx;
                }
                (desc_idx, desc_max)
            }
            // The pieces were cut at every 8 MiB of the request (`scatter`): a transfer is the
            // pieces in the same 8 MiB of it as the first, as many as the buffer holds.
            DescLayout::FromStart => {
                let window = |p: &(u64, u64)| p.0 / FROM_START_MAX_TRANSFER;
                let first = pieces.first().map(window);
                let n = pieces
                    .iter()
                    .take(FROM_START_DESCRIPTORS)
                    .take_while(|p| Some(window(p)) == first)
                    .count();
                (0, n.max(1))
            }
        };
        let adjacency = Adjacency::new(layout, self.max_read, desc_max as u32);
        let desc_bus = desc_ring + (desc_idx * DESC_BYTES) as u64;
        let res_bus = res_ring + (desc_idx * RESULT_BYTES) as u64;
        let mut len = 0;
        let mut ep = ep_addr;
        let last = desc_max - 1;
        for (i, &(off, n)) in pieces[..desc_max].iter().enumerate() {
            let this = desc_bus + (i * DESC_BYTES) as u64;
            let next = if i == last {
                0
            } else {
                this + DESC_BYTES as u64
            };
            let mut ctl = DESC_MAGIC;
            if i == last {
                ctl |= desc::STOP | desc::EOP | desc::COMPLETED;
            } else if eop_flush {
                ctl |= desc::COMPLETED;
            }
            let adj = adjacency.next(i as u32, next as u32);
            ctl |= (adj & desc::ADJ_MASK) << desc::ADJ_SHIFT;
            let (src, dst) = match dir {
                Dir::H2c => (host + off, ep),
                Dir::C2h if c2h_stream => (res_bus + (i * RESULT_BYTES) as u64, host + off),
                Dir::C2h => (ep, host + off),
            };
            let d = Descriptor {
                control: ctl,
                len: n as u32,
                src,
                dst,
                next,
            };
            let write = |ram: &mut HostRam, at: u64, b: &[u8]| {
                ram.write(at, b)
                    .map_err(|e| DriverError::errno(Errno::NoMemory, e.to_string()))
            };
            write(&mut self.ram, this, &d.to_bytes())?;
            if c2h_stream {
                write(
                    &mut self.ram,
                    res_bus + (i * RESULT_BYTES) as u64,
                    &[0; RESULT_BYTES],
                )?;
            }
            len += n;
            // A fixed card address stays for every descriptor (`transfer_build`).
            if !fixed {
                ep += n;
            }
        }
        if let Some(e) = self.engine_mut(dir, channel) {
            e.desc_idx = (desc_idx + desc_max) % RING_DESCRIPTORS;
        }
        let first_adj = adjacency.first(desc_bus as u32);
        debug!(?dir, channel, desc_max, len, "transfer built");
        Ok((
            Transfer {
                desc_bus,
                res_bus,
                desc_num: desc_max,
                len,
                first_adj,
            },
            desc_max,
        ))
    }

    /// `engine_start` and `engine_start_mode_config`.
    fn engine_start(&mut self, dir: Dir, channel: usize, xfer: Transfer) -> Result<()> {
        let sg = map::sgdma_base(dir == Dir::C2h, channel);
        let base = map::engine_base(dir == Dir::C2h, channel);
        if self.params.poll_mode {
            // The write-back is cleared before the run, so that the count seen is this run's.
            let wb = self.engines(dir)[channel].poll_wb;
            self.ram
                .write(wb, &[0; 8])
                .map_err(|e| DriverError::errno(Errno::NoMemory, e.to_string()))?;
        }
        if let Some(e) = self.engine_mut(dir, channel) {
            e.seen_completed = 0;
            e.stopped_on_error = false;
        }
        self.dma_write(sg + sgdma::FIRST_DESC_LO, xfer.desc_bus as u32)?;
        self.dma_write(sg + sgdma::FIRST_DESC_HI, (xfer.desc_bus >> 32) as u32)?;
        self.dma_write(sg + sgdma::FIRST_DESC_ADJACENT, xfer.first_adj)?;
        let fixed = if self.engines(dir)[channel].non_incr_addr {
            control::NON_INCR_ADDR
        } else {
            0
        };
        self.dma_write(
            base + ereg::CONTROL,
            control::RUN | self.run_control() | fixed,
        )?;
        // The dummy read that flushes the writes, then engine_status_read(engine, 0, 0).
        self.dma_read(base + ereg::STATUS)?;
        self.dma_read(base + ereg::STATUS)?;
        Ok(())
    }

    /// The control register's bits besides RUN that the driver writes both when it starts
    /// an engine and when it stops one: the error interrupts, and the completion interrupts or
    /// the poll-mode write-back.
    fn run_control(&self) -> u32 {
        let errors = control::IE_ALIGN_MISMATCH
            | control::IE_MAGIC_STOPPED
            | control::IE_READ_ERROR
            | control::IE_DESC_ERROR;
        if self.params.poll_mode {
            errors | control::POLL_MODE_WB
        } else {
            errors | control::IE_DESC_STOPPED | control::IE_DESC_COMPLETED
        }
    }

    /// `xdma_engine_stop`: RUN cleared, the interrupt enables the driver keeps.
    fn engine_stop(&mut self, dir: Dir, channel: usize) -> Result<()> {
        let base = map::engine_base(dir == Dir::C2h, channel);
        let fixed = if self.engines(dir)[channel].non_incr_addr {
            control::NON_INCR_ADDR
        } else {
            0
        };
        self.dma_write(base + ereg::CONTROL, self.run_control() | fixed)
    }

    /// Whether the running transfer has been serviced, and when: in poll mode the write-back
    /// looked at as the completion thread does, otherwise the engine's interrupt handled if
    /// one came (the work's end enables the engine's interrupts again). Either way the
    /// handler's work takes `irq` from the moment the interrupt or write-back reached the host.
    fn check(
        &mut self,
        dir: Dir,
        channel: usize,
        xfer: Transfer,
        eop_flush: bool,
    ) -> Result<Serviced> {
        let now = self.now();
        let irq = self.costs.irq;
        if self.params.poll_mode {
            let wb = self.engines(dir)[channel].poll_wb;
            let v = self
                .ram
                .dword(wb)
                .map_err(|e| DriverError::errno(Errno::Io, e.to_string()))?;
            let expected = if eop_flush { 1 } else { xfer.desc_num as u32 };
            if v & WB_ERR == 0 && v & WB_COUNT_MASK < expected {
                return Ok(Serviced::Not);
            }
            let seen = *self
                .engine_mut(dir, channel)
                .map_or(&mut None, |e| &mut e.irq_at)
                .get_or_insert(now);
            let at = seen.saturating_add(irq);
            if at > now {
                return Ok(Serviced::Not);
            }
            if let Some(e) = self.engine_mut(dir, channel) {
                e.irq_at = None;
            }
            let s = self.service(dir, channel, xfer, eop_flush, v)?;
            return Ok(Serviced::At(at, s));
        }
        let Some(came) = self.engines(dir)[channel].irq_at else {
            return Ok(Serviced::Not);
        };
        let at = came.saturating_add(irq);
        if at > now {
            return Ok(Serviced::Not);
        }
        if let Some(e) = self.engine_mut(dir, channel) {
            e.irq_at = None;
        }
        let s = self.service(dir, channel, xfer, eop_flush, 0)?;
        let (ie, bit) = {
            let e = &self.engines(dir)[channel];
            (e.ie_mask, e.irq_bit)
        };
        if self.params.interrupt_mode == InterruptMode::MsiX {
            let base = map::engine_base(dir == Dir::C2h, channel);
            self.dma_write(base + ereg::IE_MASK_W1S, ie)?;
        } else {
            self.dma_write(ireg::BASE + ireg::CHANNEL_ENABLE_W1S, 1 << bit)?;
        }
        Ok(Serviced::At(at, s))
    }

    /// `engine_service` with `engine_service_final_transfer` for a single queued transfer:
    /// what the engine's status and completed count say about it.
    fn service(
        &mut self,
        dir: Dir,
        channel: usize,
        xfer: Transfer,
        eop_flush: bool,
        writeback: u32,
    ) -> Result<State> {
        let base = map::engine_base(dir == Dir::C2h, channel);
        let mut desc_count = writeback & WB_COUNT_MASK;
        let err_flag = writeback & WB_ERR != 0;
        let mut st = 0;
        if desc_count == 0 || err_flag {
            st = self.dma_read(base + ereg::STATUS_RC)?;
        }
        if st & status::BUSY == 0 || (!eop_flush && desc_count != 0) {
            self.engine_stop(dir, channel)?;
        }
        if desc_count == 0 {
            desc_count = self.dma_read(base + ereg::COMPLETED)?;
        }
        // Nothing completed: the driver leaves the transfer as it is, even with an error in
        // the status (the first descriptor failed), so that only the caller's timeout ends it.
        if desc_count == 0 {
            if let Some(e) = self.engine_mut(dir, channel) {
                e.stopped_on_error = st & error_mask(dir) != 0;
            }
            return Ok(State::Submitted);
        }
        if let Some(e) = self.engine_mut(dir, channel) {
            e.seen_completed = desc_count;
        }
        let completed = desc_count as usize;
        if st & error_mask(dir) != 0 {
            return Ok(State::Failed {
                status: st,
                completed,
            });
        }
        if completed < xfer.desc_num {
            if eop_flush {
                for i in 0..completed {
                    let at = xfer.res_bus + (i * RESULT_BYTES) as u64;
                    let s = self
                        .ram
                        .dword(at)
                        .map_err(|e| DriverError::errno(Errno::Io, e.to_string()))?;
                    if s & RESULT_EOP != 0 {
                        self.engine_stop(dir, channel)?;
                        return Ok(State::Completed {
                            desc_cmpl: i + 1,
                            eop: true,
                        });
                    }
                }
                return Ok(State::Submitted);
            }
            return Ok(State::Failed {
                status: st,
                completed,
            });
        }
        // Every descriptor completed: the driver does not look for end-of-packet here, so a
        // request longer than one transfer goes on with the next.
        Ok(State::Completed {
            desc_cmpl: xfer.desc_num,
            eop: false,
        })
    }
}

/// `XDMA_STAT_H2C_ERR_MASK` / `XDMA_STAT_C2H_ERR_MASK`: the status bits that fail a transfer.
fn error_mask(dir: Dir) -> u32 {
    let common = status::ALIGN_MISMATCH
        | status::MAGIC_STOPPED
        | status::INVALID_LEN
        | status::DESC_UNSUPP_REQ
        | status::DESC_COMPL_ABORT;
    match dir {
        Dir::H2c => {
            common
                | status::H2C_R_UNSUPP_REQ
                | status::H2C_R_COMPL_ABORT
                | status::H2C_W_DECODE_ERR
                | status::H2C_W_SLAVE_ERR
        }
        Dir::C2h => common | status::C2H_R_DECODE_ERR | status::C2H_R_SLAVE_ERR,
    }
}

/// `xdma_get_next_adj`: adjacent descriptors after one whose next pointer is `next_lo`, with
/// `remaining` descriptors after it, blocks aligned to 64 descriptors within a page.
pub fn next_adj(remaining: u32, next_lo: u32) -> u32 {
    if remaining <= 1 {
        return 0;
    }
    let next_index = ((next_lo & (map::HOST_PAGE as u32 - 1)) >> 5) % ADJ_BLOCK;
    (ADJ_BLOCK - next_index - 1).min(remaining - 1)
}

/// What a call returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    /// The bytes read (C2H).
    pub data: Vec<u8>,
    /// The bytes written (H2C).
    pub written: usize,
    /// The read ended at end-of-packet (stream reads with `eop_flush`).
    pub end_of_packet: bool,
    /// The value a user BAR read returned.
    pub word: u32,
}

/// A call's end with its times.
#[derive(Debug)]
pub struct Ended {
    /// What the system call returns.
    pub result: Result<Received>,
    /// When the caller runs again.
    pub end: Ps,
    /// When the path the call used is free for the next call on it (a user BAR access: when
    /// the card took it).
    pub free: Ps,
}

/// A transfer's or a user BAR access's system call, as a thread makes it.
#[derive(Debug, Clone, Copy)]
pub struct Submit {
    /// The node's direction.
    pub dir: Dir,
    /// The node's channel.
    pub channel: usize,
    /// The card address (the file offset); ignored on a stream.
    pub card_addr: u64,
    /// Bytes.
    pub len: usize,
    /// Where the caller's buffer starts within its host page.
    pub page_offset: usize,
    /// The node opened with `O_TRUNC`: a stream read ends at end-of-packet.
    pub eop_flush: bool,
    /// When the system call is made, in simulated time.
    pub at: Ps,
    /// How long the call may take, in place of the direction's module parameter.
    pub timeout: Option<Duration>,
}

/// A call in the driver, from [`Driver::start_write`], [`Driver::start_read`],
/// [`Driver::submit`] or [`Driver::submit_user`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Call(u64);

/// Where a call is.
#[derive(Debug)]
enum Phase {
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

/// Whether a running transfer has been serviced, and the driver's verdict.
#[derive(Debug)]
enum Serviced {
    Not,
    At(Ps, State),
}

/// A call's request (`struct xdma_request_cb`): its scatter list and how far it got.
#[derive(Debug)]
struct Request {
    id: u64,
    dir: Dir,
    channel: usize,
    host: u64,
    /// The card address of the next transfer.
    ep: u64,
    pieces: Vec<(u64, u64)>,
    /// The first piece no transfer has taken yet.
    next: usize,
    eop_flush: bool,
    done: Done,
    phase: Phase,
    /// When the request is in the driver's queue.
    ready_at: Ps,
    /// When the running transfer times out (its start plus the timeout), and the timeout.
    deadline: Ps,
    timeout_ps: Ps,
    timeout: Duration,
    /// When the caller runs again, once ended.
    end: Ps,
}

#[derive(Debug, Default, Clone, Copy)]
struct Done {
    bytes: usize,
    eop: bool,
}

/// A user BAR access in the driver.
#[derive(Debug)]
struct RegCall {
    id: u64,
    offset: u64,
    write: Option<u32>,
    stamp: Ps,
    phase: RegPhase,
}

/// The scatter list of a buffer at bus address `host`: `(offset, length)` pieces, one per host
/// page, none longer than `blen` (`desc_blen_max`) and none across a multiple of `cut` bytes
/// of the request. The Windows driver's framework cuts a request into transfers of at most
/// 8 MiB at that byte count whatever the pages, so a page that straddles the cut is two
/// pieces; `u64::MAX` cuts nowhere, as `xdma.ko`.
pub fn scatter(host: u64, len: u64, blen: u64, cut: u64) -> Vec<(u64, u64)> {
    let (blen, cut) = (blen.max(1), cut.max(1));
    let mut pieces = Vec::with_capacity(len.div_ceil(map::HOST_PAGE) as usize + 1);
    for (off, n) in map::page_pieces(host, len) {
        let mut done = 0;
        while done < n {
            let to_cut = cut - (off + done) % cut;
            let k = (n - done).min(blen).min(to_cut);
            pieces.push((off + done, k));
            done += k;
        }
    }
    pieces
}

/// The adjacent counts of one transfer's descriptors, by the layout's rule.
struct Adjacency {
    layout: DescLayout,
    /// Descriptors in the transfer.
    total: u32,
    /// The Windows rule's largest count: one max read request of descriptors, less one.
    adj_max: u32,
}

impl Adjacency {
    fn new(layout: DescLayout, max_read: u32, total: u32) -> Adjacency {
        Adjacency {
            layout,
            total: total.max(1),
            adj_max: (max_read / DESC_BYTES as u32).max(1) - 1,
        }
    }

    /// Descriptors left in the 4 KiB page after the one at `addr`.
    fn to_4k(addr: u32) -> u32 {
        (0x1000 - (addr & 0xFFF)) / DESC_BYTES as u32 - 1
    }

    /// The count the engine's first fetch takes beyond the first descriptor, at `first`.
    fn first(&self, first: u32) -> u32 {
        match self.layout {
            DescLayout::Ring => next_adj(self.total, first),
            DescLayout::FromStart => (self.total - 1).min(self.adj_max).min(Self::to_4k(first)),
        }
    }

    /// The count in descriptor `i`'s control word, whose next pointer is `next`: how many
    /// follow the next one in the fetch that the engine makes when `i` ends a block. The
    /// Windows rule counts a block's room down from `adj_max - 1` and starts again at
    /// `adj_max` once it reaches zero, which on a page-aligned buffer makes blocks of
    /// `adj_max + 1` descriptors in step with the first one.
    fn next(&self, i: u32, next: u32) -> u32 {
        match self.layout {
            DescLayout::Ring => next_adj(self.total - i - 1, next),
            DescLayout::FromStart => {
                let last = self.total - 1;
                let after_next = last.saturating_sub(i + 1);
                let room = match i % (self.adj_max + 1) {
                    k if k < self.adj_max => self.adj_max - 1 - k,
                    _ => self.adj_max,
                };
                after_next.min(room).min(Self::to_4k(next))
            }
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum RegPhase {
    /// The system call.
    Issue,
    /// The request on the link, at the card at `at`.
    Down { at: Ps },
    /// On the card's `s_axil`.
    OnCard(UserAccess),
    /// Answered.
    Ended { word: u32, end: Ps, free: Ps },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjacent_counts_follow_the_drivers_rule() {
        // One descriptor left or none: no adjacent ones.
        assert_eq!(next_adj(1, 0x20), 0);
        assert_eq!(next_adj(0, 0x20), 0);
        // From the start of a 64-descriptor block, 63 follow at most.
        assert_eq!(next_adj(100, 0x0), 63);
        assert_eq!(next_adj(10, 0x0), 9);
        // Descriptor 60 of a block (offset 60 * 32): 3 to the block's end.
        assert_eq!(next_adj(100, 60 * 32), 3);
        // The second block of a page starts again at 63.
        assert_eq!(next_adj(100, 64 * 32), 63);
    }

    /// The Windows rule's fetches, walked as the engine walks them: a fetch of `adj + 1`
    /// descriptors from the first, the next fetch's count in the last one fetched.
    fn fetches(total: u32, max_read: u32, base: u32) -> Vec<u32> {
        let a = Adjacency::new(DescLayout::FromStart, max_read, total);
        let mut out = Vec::new();
        let (mut at, mut n) = (0, a.first(base) + 1);
        while at < total {
            out.push(n);
            let last = at + n - 1;
            at = last + 1;
            n = a.next(last, base + at * DESC_BYTES as u32) + 1;
        }
        out
    }

    #[test]
    fn the_scatter_list_is_cut_at_every_8_mib_of_the_request_only_when_asked() {
        let page = map::HOST_PAGE;
        // 8 MiB + 1 byte from a page's start: 2048 pages and one byte, cut after the pages.
        let p = scatter(0x1_0000_0000, (8 << 20) + 1, u64::MAX, 8 << 20);
        assert_eq!(p.len(), 2049);
        assert_eq!(p[2048], (8 << 20, 1));
        // From 100 bytes into a page the cut falls inside page 2048: it is two pieces there.
        let host = 0x1_0000_0000 + 100;
        let p = scatter(host, 16 << 20, u64::MAX, 8 << 20);
        let sum = |v: &[(u64, u64)]| v.iter().map(|x| x.1).sum::<u64>();
        assert_eq!(sum(&p), 16 << 20);
        let at_cut = p
            .iter()
            .position(|x| x.0 == 8 << 20)
            .expect("a piece starts at the cut");
        assert_eq!(sum(&p[..at_cut]), 8 << 20);
        assert!(p
            .iter()
            .all(|&(o, n)| o / (8 << 20) == (o + n - 1) / (8 << 20)));
        // xdma.ko's list does not cut: one piece per page, the same 16 MiB.
        let q = scatter(host, 16 << 20, u64::MAX, u64::MAX);
        assert_eq!(q.len() as u64, (16 << 20) / page + 1);
        assert_eq!(p.len(), q.len() + 1);
        // desc_blen_max still splits pages.
        assert_eq!(scatter(0, 4096, 1024, u64::MAX).len(), 4);
    }

    #[test]
    fn the_windows_rule_fetches_one_read_request_of_descriptors_at_a_time() {
        // 512-byte read requests hold 16 descriptors of 32 bytes: 40 descriptors are fetched
        // 16, 16 and 8; 2048 (an 8 MiB transfer of pages) are 128 fetches of 16.
        assert_eq!(fetches(40, 512, 0), vec![16, 16, 8]);
        assert_eq!(fetches(2048, 512, 0), vec![16; 128]);
        // 128-byte read requests: 4 at a time; one descriptor alone is one fetch of one.
        assert_eq!(fetches(10, 128, 0), vec![4, 4, 2]);
        assert_eq!(fetches(1, 512, 0), vec![1]);
        // A buffer 3 descriptors before a 4 KiB boundary: the first fetch stops there, and the
        // next ones keep their count from the buffer's start, never crossing a page.
        let f = fetches(40, 512, 0x1000 - 3 * 32);
        assert_eq!(f.iter().sum::<u32>(), 40);
        assert_eq!(f[0], 3);
        let mut at = 0x1000 - 3 * 32;
        for n in f {
            assert!((1..=16).contains(&n));
            let end = at + n * 32 - 1;
            assert_eq!(at / 0x1000, end / 0x1000, "a fetch crosses a page");
            at += n * 32;
        }
    }
}
