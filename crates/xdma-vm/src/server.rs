//! The device loop.
//!
//! A reader thread parses QEMU's messages off the socket and forwards them over a channel to
//! the simulation thread, which owns the IP (the IP is not `Send`, so it is built there), the
//! config space and the guest's RAM. The simulation thread runs the card's clock continuously,
//! a slice of cycles at a time, since a card's clock runs whether the guest talks to it or
//! not; between slices it handles every message that arrived and writes its reply.
//!
//! A BAR write that clears an engine's run bit is answered only once the engine has stopped:
//! the IP runs untimed here and keeps up to 16 KiB of bursts on the card's bus, which the card
//! takes tens to thousands of wall microseconds to answer, while a board's engine is idle
//! within microseconds of the write. Answered at once, the write would let the driver free the
//! pages the engine still writes (`xdma.ko`'s performance stop does so on its next line).
//!
//! A malformed message is logged and, where QEMU waits for a reply, answered with all ones, so
//! that the guest sees a failed access rather than a hung vCPU. An access outside the BARs
//! reads as all ones, as a read nobody claims does on the bus. A failure of the IP model
//! itself ends the loop: a card whose simulation died is gone.

use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::thread;
use std::time::{Duration, Instant};

use thiserror::Error;
use xdma_ip::{Bar, InterruptSink, IpConfig, IpError, IpStats, XdmaIp};

use crate::guest::GuestMemory;
use crate::pci::{BarSizes, ConfigSpace, DMA_BAR, USER_BAR};
use crate::proxy::{self, Message, ProtoError};
use crate::qtest::Qtest;
use crate::Variant;

/// How the device is built and run.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The card.
    pub variant: Variant,
    /// Protocol monitors on the card's buses.
    pub monitors: bool,
    /// User interrupt lines the IP serves.
    pub user_irqs: usize,
    /// The engines' address alignment in bytes (1: unaligned transfers allowed).
    pub alignment: u32,
    /// `axi_aclk` cycles run between two looks at the socket.
    pub slice: u64,
    /// QEMU's qtest socket.
    pub qtest: PathBuf,
    /// How long a qtest answer may take.
    pub qtest_timeout: Duration,
}

/// How many card cycles a BAR write that stops an engine may wait for the engine to go idle.
/// The engine finishes its current descriptor and what it has on the card's bus. The bound is
/// counted in cycles, not wall time, so that whether a stop succeeds does not depend on how
/// busy the host is: it is the cycles that the longest descriptor PG195's length field allows
/// (256 MiB) takes at one beat a cycle on the narrowest data path the IP offers (64 bits),
/// twice over. Only an engine that the card no longer answers reaches it; the Linux driver cuts
/// its descriptors to pages, and a healthy stop takes thousands of cycles.
pub const STOP_CYCLES_MAX: u64 = 2 * (xdma_regmap::DESC_MAX_LEN as u64 + 1) / 8;

/// What ended the device.
#[derive(Debug, Error)]
pub enum ServerError {
    /// The IP model failed (the card's simulation died).
    #[error("the XDMA IP model failed: {0}")]
    Ip(#[from] IpError),
    /// An engine whose run bit the guest cleared did not go idle in time.
    #[error(
        "an engine whose run bit was cleared was still busy after {cycles} axi_aclk cycles ({:.1} s), more than the longest descriptor takes: the card stopped answering its bursts; the device log shows what it had on the bus (XDMA_VM_LOG=debug)",
        waited.as_secs_f64()
    )]
    StopTimeout {
        /// Card cycles run while waiting.
        cycles: u64,
        /// Wall time waited.
        waited: Duration,
    },
    /// The IP model panicked.
    #[error("the XDMA IP model panicked: {0}")]
    Panic(String),
    /// This build has no top for the variant.
    #[error("this build has no RTL top `{0}` (see sim/card-sim/tops.txt)")]
    NoTop(&'static str),
    /// The link to QEMU broke in a way the stream cannot recover from.
    #[error("the link to QEMU: {0}")]
    Link(ProtoError),
    /// A thread could not be started.
    #[error("cannot start the {0} thread: {1}")]
    Thread(&'static str, std::io::Error),
}

/// Counts of what the device served, with the IP's own.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The IP's counts, if it was built.
    pub ip: Option<IpStats>,
    /// `axi_aclk` cycles the card ran.
    pub cycles: u64,
    /// Config space accesses.
    pub config_accesses: u64,
    /// BAR reads.
    pub bar_reads: u64,
    /// BAR writes.
    pub bar_writes: u64,
    /// Accesses that fell outside every BAR.
    pub stray_accesses: u64,
    /// Malformed messages.
    pub bad_messages: u64,
    /// When the guest first touched a BAR (the driver's probe), since the device started.
    pub first_bar_access: Option<Duration>,
    /// BAR writes that stopped a running engine, each answered once the engine was idle.
    pub stops: u64,
    /// Card cycles those writes waited for their engines, in all.
    pub stop_cycles: u64,
    /// Wall time those writes waited for their engines, in all.
    pub stop_wall: Duration,
    /// The longest of those waits.
    pub stop_wall_max: Duration,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(s) = &self.ip {
            write!(
                f,
                "IP: {} descriptors, {} bytes, {} MSI/MSI-X messages, {} INTx changes, {} DMA writes outside guest RAM; ",
                s.descriptors, s.bytes, s.messages, s.intx_changes, s.lost_writes
            )?;
        }
        write!(
            f,
            "card: {} axi_aclk cycles ({:.3} ms of card time); guest: {} config accesses, {} BAR reads, {} BAR writes, {} stray accesses, {} malformed messages",
            self.cycles,
            self.cycles as f64 / 250e3,
            self.config_accesses,
            self.bar_reads,
            self.bar_writes,
            self.stray_accesses,
            self.bad_messages
        )?;
        if self.stops > 0 {
            write!(
                f,
                "; {} engine stops waited {} cycles, {:.1} ms of wall time in all, {:.1} ms at most",
                self.stops,
                self.stop_cycles,
                self.stop_wall.as_secs_f64() * 1e3,
                self.stop_wall_max.as_secs_f64() * 1e3
            )?;
        }
        Ok(())
    }
}

/// What the device thread tells its owner when it ends.
pub type Outcome = (Result<(), ServerError>, Report);

/// What the reader thread forwards.
enum Incoming {
    Msg(Message),
    Bad(ProtoError),
    End(ProtoError),
}

/// Starts the reader and simulation threads on `sock`; `done` gets the outcome once the
/// simulation thread ends (QEMU closed the link, or the device failed).
pub fn spawn(
    sock: UnixStream,
    cfg: ServerConfig,
    done: Sender<Outcome>,
) -> Result<(), ServerError> {
    let (tx, rx) = mpsc::channel();
    let reader_sock = sock
        .try_clone()
        .map_err(|e| ServerError::Thread("reader", e))?;
    thread::Builder::new()
        .name("mpqemu-reader".into())
        .spawn(move || reader(reader_sock, tx))
        .map_err(|e| ServerError::Thread("reader", e))?;
    thread::Builder::new()
        .name("card".into())
        .spawn(move || {
            let mut report = Report::default();
            // A panic in the model must still end the run cleanly (QEMU stopped, temp files
            // removed), so it is caught here and reported as an error.
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                simulate(sock, cfg, rx, &mut report)
            }))
            .unwrap_or_else(|p| {
                let what = p
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "(no message)".into());
                Err(ServerError::Panic(what))
            });
            let _ = done.send((result, report));
        })
        .map_err(|e| ServerError::Thread("card", e))?;
    Ok(())
}

fn reader(sock: UnixStream, tx: Sender<Incoming>) {
    loop {
        let item = match proxy::recv(&sock) {
            Ok(m) => Incoming::Msg(m),
            Err(e) if e.is_fatal() => {
                let _ = tx.send(Incoming::End(e));
                return;
            }
            Err(e) => Incoming::Bad(e),
        };
        if tx.send(item).is_err() {
            // The simulation thread has ended; nobody is left to serve.
            return;
        }
    }
}

/// The interrupt side of the function: the config space it forms MSI messages and finds its
/// INTx line from, and the qtest link that delivers them.
struct Irqs {
    cfg: ConfigSpace,
    qtest: Qtest,
    level: bool,
    warned_line: bool,
}

impl InterruptSink for Irqs {
    fn msix(&mut self, addr: u64, data: u32) {
        tracing::trace!("MSI-X message {data:#x} to {addr:#x}");
        self.qtest.post(format!("writel {addr:#x} {data:#x}"));
    }

    fn msi(&mut self, vector: u32) {
        match self.cfg.msi_message(vector) {
            Some((addr, data)) => {
                tracing::trace!("MSI vector {vector}: {data:#x} to {addr:#x}");
                self.qtest.post(format!("writel {addr:#x} {data:#x}"))
            }
            None => tracing::warn!("MSI vector {vector} raised while MSI is disabled: dropped"),
        }
    }

    fn intx(&mut self, level: bool) {
        tracing::trace!("INTx level {}", u8::from(level));
        self.cfg.set_interrupt_status(level);
        self.level = level;
        let line = self.cfg.interrupt_line();
        // The `pc` machine's IOAPIC has 24 inputs; 0 and 0xFF mean the firmware assigned none.
        if line == 0 || line >= 24 {
            if !self.warned_line {
                tracing::warn!(
                    "INTx changed but the Interrupt Line register holds {line}, no IOAPIC input: not delivered"
                );
                self.warned_line = true;
            }
            return;
        }
        // Synchronous: the level must have changed before the BAR access that changed it
        // completes, or the driver's handler returns with the line still high and is called
        // again at once.
        let cmd = format!(
            "set_irq_in ioapic unnamed-gpio-in {line} {}",
            u8::from(level)
        );
        if let Err(e) = self.qtest.call(cmd) {
            tracing::error!("INTx level {}: {e}", u8::from(level));
        }
    }
}

struct Device {
    ip: XdmaIp,
    mem: GuestMemory,
    irqs: Irqs,
    sock: UnixStream,
    start: Instant,
}

/// All ones in the low `size` bytes: what an unclaimed read returns.
fn all_ones(size: u32) -> u64 {
    if size >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * size)) - 1
    }
}

fn simulate(
    sock: UnixStream,
    cfg: ServerConfig,
    rx: Receiver<Incoming>,
    report: &mut Report,
) -> Result<(), ServerError> {
    let top = cfg
        .variant
        .top()
        .ok_or(ServerError::NoTop(cfg.variant.top_name()))?;
    let start = Instant::now();
    // The reference board's IP (unaligned transfers allowed), with the run's choices.
    let mut ip_cfg = IpConfig::new(top, cfg.variant.h2c(), cfg.variant.c2h());
    ip_cfg.user_irqs = cfg.user_irqs;
    ip_cfg.monitors = cfg.monitors;
    ip_cfg.alignment = cfg.alignment;
    let ip = XdmaIp::new(ip_cfg)?;
    let bars = BarSizes::for_user_logic(ip.user_bar_size());
    tracing::info!(
        "card {} ({}) built in {:.2} s: user BAR {} KiB, DMA BAR {} KiB{}",
        cfg.variant.name(),
        cfg.variant.top_name(),
        start.elapsed().as_secs_f64(),
        bars.user / 1024,
        bars.dma / 1024,
        if cfg.monitors {
            ", protocol monitors on"
        } else {
            ""
        }
    );
    let mut dev = Device {
        ip,
        mem: GuestMemory::new(),
        irqs: Irqs {
            cfg: ConfigSpace::new(bars),
            qtest: Qtest::spawn(&cfg.qtest, Duration::from_secs(30), cfg.qtest_timeout),
            level: false,
            warned_line: false,
        },
        sock,
        start,
    };
    let mode = dev.irqs.cfg.irq_mode();
    dev.ip.set_irq_mode(mode, &mut dev.irqs);
    let result = dev.serve(&cfg, &rx, report);
    report.ip = Some(dev.ip.stats());
    result
}

impl Device {
    fn serve(
        &mut self,
        cfg: &ServerConfig,
        rx: &Receiver<Incoming>,
        report: &mut Report,
    ) -> Result<(), ServerError> {
        loop {
            loop {
                match rx.try_recv() {
                    Ok(Incoming::Msg(m)) => self.handle(m, report)?,
                    Ok(Incoming::Bad(e)) => self.bad(e, report),
                    Ok(Incoming::End(ProtoError::Closed)) | Err(TryRecvError::Disconnected) => {
                        tracing::debug!("QEMU closed the link");
                        return Ok(());
                    }
                    Ok(Incoming::End(e)) => return Err(ServerError::Link(e)),
                    Err(TryRecvError::Empty) => break,
                }
            }
            self.ip.run(cfg.slice, &mut self.mem, &mut self.irqs)?;
            report.cycles += cfg.slice;
        }
    }

    fn reply(&self, value: u64) -> Result<(), ServerError> {
        proxy::reply(&self.sock, value).map_err(|e| ServerError::Link(ProtoError::Io(e)))
    }

    fn bad(&mut self, e: ProtoError, report: &mut Report) {
        report.bad_messages += 1;
        tracing::warn!("malformed message from QEMU: {e}");
        if e.pending_reply().is_some() {
            if let Err(e) = self.reply(u64::MAX) {
                tracing::warn!("cannot answer the malformed message: {e}");
            }
        }
    }

    fn note_bar_access(&self, report: &mut Report) {
        if report.first_bar_access.is_none() {
            let t = self.start.elapsed();
            report.first_bar_access = Some(t);
            tracing::info!(
                "first BAR access at {:.2} s: the driver is probing",
                t.as_secs_f64()
            );
        }
    }

    fn stray(&self, what: &str, addr: u64, size: u32, report: &mut Report) {
        report.stray_accesses += 1;
        // The first few tell what happened; a flood of them would drown the log.
        if report.stray_accesses <= 10 {
            tracing::warn!("{what} of {size} bytes at {addr:#x} is outside every BAR");
        }
    }

    fn handle(&mut self, m: Message, report: &mut Report) -> Result<(), ServerError> {
        match m {
            Message::SyncSysmem(regions) => {
                for e in self.mem.sync(regions) {
                    tracing::error!("{e}");
                }
                tracing::debug!(
                    "guest RAM: {}",
                    self.mem
                        .layout()
                        .iter()
                        .map(|(g, s)| format!("{g:#x}+{s:#x}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            Message::Ret(v) => tracing::warn!("QEMU sent a reply ({v:#x}) nobody asked for"),
            Message::ConfigRead { addr, len } => {
                report.config_accesses += 1;
                let v = self.irqs.cfg.read(addr, len);
                self.reply(u64::from(v))?;
            }
            Message::ConfigWrite { addr, val, len } => {
                report.config_accesses += 1;
                let before = self.irqs.cfg.irq_mode();
                let bars = (
                    self.irqs.cfg.bar_base(USER_BAR),
                    self.irqs.cfg.bar_base(DMA_BAR),
                );
                self.irqs.cfg.write(addr, val, len);
                let after = self.irqs.cfg.irq_mode();
                if after != before {
                    tracing::debug!("interrupt mode {after:?}");
                    self.ip.set_irq_mode(after, &mut self.irqs);
                }
                let now = (
                    self.irqs.cfg.bar_base(USER_BAR),
                    self.irqs.cfg.bar_base(DMA_BAR),
                );
                if now != bars && now.0 != 0 && now.1 != 0 {
                    tracing::debug!("BARs at {:#x} (user) and {:#x} (DMA)", now.0, now.1);
                }
                self.reply(0)?;
            }
            Message::BarRead { addr, size, memory } => {
                report.bar_reads += 1;
                let hit = memory.then(|| self.irqs.cfg.decode(addr, size)).flatten();
                let v = match hit {
                    Some((bar, offset)) => {
                        self.note_bar_access(report);
                        self.bar_read(bar, offset, size)?
                    }
                    None => {
                        self.stray("read", addr, size, report);
                        all_ones(size)
                    }
                };
                self.reply(v)?;
            }
            Message::BarWrite {
                addr,
                val,
                size,
                memory,
            } => {
                report.bar_writes += 1;
                match memory.then(|| self.irqs.cfg.decode(addr, size)).flatten() {
                    Some((bar, offset)) => {
                        self.note_bar_access(report);
                        self.ip
                            .bar_write(bar, offset, val, size, &mut self.mem, &mut self.irqs)?;
                        if self.ip.stopping() {
                            self.finish_stop(report)?;
                        }
                    }
                    None => self.stray("write", addr, size, report),
                }
                self.reply(0)?;
            }
            Message::SetIrqFd(fds) => {
                // QEMU routes these eventfds only under KVM; INTx goes through qtest instead.
                tracing::debug!("INTx eventfds ({}) closed: not routed under TCG", fds.len());
            }
            Message::DeviceReset => {
                tracing::debug!("function reset");
                self.ip.reset()?;
                self.irqs.cfg.reset();
                if self.irqs.level {
                    self.irqs.intx(false);
                }
                let mode = self.irqs.cfg.irq_mode();
                self.ip.set_irq_mode(mode, &mut self.irqs);
                self.reply(0)?;
            }
        }
        Ok(())
    }

    /// Runs the card until every engine whose run bit was cleared is idle, before the write
    /// that cleared it is answered: on a board the engine is idle microseconds after the
    /// write, before the CPU's next access, and a driver may free the engine's buffers at
    /// once. One cycle at a time, so the card runs no further than the stop needs.
    fn finish_stop(&mut self, report: &mut Report) -> Result<(), ServerError> {
        let started = Instant::now();
        let mut cycles = 0u64;
        while self.ip.stopping() {
            self.ip.run(1, &mut self.mem, &mut self.irqs)?;
            cycles += 1;
            if cycles > STOP_CYCLES_MAX {
                return Err(ServerError::StopTimeout {
                    cycles,
                    waited: started.elapsed(),
                });
            }
        }
        let waited = started.elapsed();
        report.cycles += cycles;
        report.stops += 1;
        report.stop_cycles += cycles;
        report.stop_wall += waited;
        report.stop_wall_max = report.stop_wall_max.max(waited);
        tracing::debug!(
            "engine stopped {cycles} cycles after its run bit was cleared ({:.2} ms of wall time)",
            waited.as_secs_f64() * 1e3
        );
        Ok(())
    }

    fn bar_read(&mut self, bar: Bar, offset: u64, size: u32) -> Result<u64, ServerError> {
        Ok(self
            .ip
            .bar_read(bar, offset, size, &mut self.mem, &mut self.irqs)?)
    }
}
