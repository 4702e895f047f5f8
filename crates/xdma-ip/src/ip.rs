//! The IP: engines, IRQ block, MSI-X table, and the card behind them.
//!
//! The engines work between cycles of the card's clock: [`XdmaIp::run`] advances `axi_aclk`
//! one cycle at a time and, after each, lets every running engine retire what the card has
//! answered and issue what it may. Host memory is read and written at once (the model has no
//! PCIe timing: the card's own buses set the pace), so the data a guest sees is exactly what
//! the card's RTL moved.

use std::collections::VecDeque;

use axi_bfm::{AxisFrame, Resp, TxnId};
use card_harness::{CardHarness, HarnessConfig, IrqAck};
use card_sim::Top;
use xdma_regmap::{
    self as map, common, control, engine as ereg, irq as ireg, msix, sgdma, status, Descriptor,
    Target,
};

use crate::{Bar, HostMemory, InterruptSink, IpError, IrqMode, Result};

/// What kind of engine a channel has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineKind {
    /// AXI4 memory-mapped, on the card's `s_axi`.
    MemoryMapped,
    /// AXI-Stream, on the card's next free stream port of its direction.
    Stream,
}

/// How the IP is built: the card's top and the channels the IP has.
#[derive(Debug, Clone)]
pub struct IpConfig {
    /// The card's RTL top.
    pub top: Top,
    /// H2C engines, channel 0 first (at most 4).
    pub h2c: Vec<EngineKind>,
    /// C2H engines, channel 0 first (at most 4).
    pub c2h: Vec<EngineKind>,
    /// User interrupt lines the IP serves (at most the card's `usr_irq_req` bits, 16).
    pub user_irqs: usize,
    /// Protocol monitors on the card's buses.
    pub monitors: bool,
    /// The engines' address alignment in bytes, a power of two from 1 to 128: 1 when the IP
    /// is built to allow unaligned transfers (the reference board's), otherwise a descriptor
    /// whose source and destination differ modulo it stops the engine with ALIGN_MISMATCH.
    pub alignment: u32,
}

impl IpConfig {
    /// The IP of the reference board in front of `top`, with these channels: unaligned
    /// transfers allowed, one user interrupt line, monitors on.
    pub fn new(top: Top, h2c: Vec<EngineKind>, c2h: Vec<EngineKind>) -> IpConfig {
        IpConfig {
            top,
            h2c,
            c2h,
            user_irqs: 1,
            monitors: true,
            alignment: 1,
        }
    }
}

/// Counts of what the IP did, for logs and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IpStats {
    /// Descriptors the engines completed.
    pub descriptors: u64,
    /// Data bytes the engines moved.
    pub bytes: u64,
    /// MSI or MSI-X messages sent.
    pub messages: u64,
    /// INTx level changes.
    pub intx_changes: u64,
    /// DMA writes to host memory that fell outside it and were dropped (posted writes carry
    /// no error back to the engine).
    pub lost_writes: u64,
    /// `axi_aclk` cycles run.
    pub cycles: u64,
}

/// Cycles a VALID on the card's AXI port may wait for READY before the monitor reports a
/// stall: 1 ms of `axi_aclk`.
const DMA_STALL_BOUND: u64 = 250_000;
/// Memory-mapped transactions an engine keeps in flight: enough to keep the card's AXI port
/// busy with 4 KiB descriptors.
const MM_IN_FLIGHT: usize = 4;
/// The alignments register's granularity and address-width fields: lengths of any byte
/// count, 64 address bits (bits 23:16 hold the address alignment).
const ALIGNMENTS_LOW: u32 = 0x0000_0140;
/// The config block's PCIe data width field: 1 is 128 bits, the reference board's.
const DATA_WIDTH_128: u32 = 1;
/// The status bits whose logging the control register enables (bits 23:1 map one to one).
const LOGGED: u32 = 0x00FF_FFFE;

/// One memory-mapped descriptor on the card's bus.
#[derive(Debug)]
struct MmOp {
    txn: TxnId,
    desc: Descriptor,
}

/// An engine's run: from the run bit's rising edge until it stops.
#[derive(Debug, Default)]
struct Run {
    /// Where the next descriptor is; `None` once a descriptor with STOP has been fetched.
    next: Option<u64>,
    /// Memory-mapped descriptors on the bus, in order (one AXI ID per engine).
    mm: VecDeque<MmOp>,
    /// H2C stream: descriptors of the packet being gathered and its bytes.
    packet: Vec<Descriptor>,
    packet_bytes: Vec<u8>,
    /// H2C stream: descriptors of the packet on the stream, waiting for it to leave.
    sending: Vec<Descriptor>,
    /// C2H stream: the descriptor being filled and the bytes it has.
    filling: Option<(Descriptor, usize)>,
    /// The run bit was cleared: finish what is on the bus, issue nothing new.
    stopping: bool,
    /// A descriptor fetch failed with these status bits: the run ends with them once what
    /// is on the bus before it has finished.
    fault: Option<u32>,
}

#[derive(Debug)]
struct Engine {
    c2h: bool,
    channel: usize,
    kind: EngineKind,
    /// The stream port of the card, for a stream engine.
    port: usize,
    /// Channel interrupt request bit (H2C engines first).
    irq_bit: u32,
    control: u32,
    status: u32,
    completed: u32,
    ie_mask: u32,
    wb: u64,
    first_desc: u64,
    adjacent: u32,
    credits: u32,
    perf_ctrl: u32,
    perf_cyc: u64,
    perf_dat: u64,
    perf_pnd: u64,
    run: Option<Run>,
}

impl Engine {
    fn new(c2h: bool, channel: usize, kind: EngineKind, port: usize, irq_bit: u32) -> Engine {
        Engine {
            c2h,
            channel,
            kind,
            port,
            irq_bit,
            control: 0,
            status: 0,
            completed: 0,
            ie_mask: 0,
            wb: 0,
            first_desc: 0,
            adjacent: 0,
            credits: 0,
            perf_ctrl: 0,
            perf_cyc: 0,
            perf_dat: 0,
            perf_pnd: 0,
            run: None,
        }
    }

    fn stream(&self) -> bool {
        self.kind == EngineKind::Stream
    }

    fn name(&self) -> String {
        format!(
            "{}{}-{}",
            if self.c2h { "C2H" } else { "H2C" },
            self.channel,
            if self.stream() { "ST" } else { "MM" }
        )
    }

    /// Sets status bits, as far as the control register enables their logging.
    fn log(&mut self, bits: u32) {
        self.status |= bits & (self.control & LOGGED);
    }

    fn requesting(&self) -> bool {
        self.status & self.ie_mask & LOGGED != 0
    }

    fn axi_id(&self) -> u32 {
        // One AXI ID per memory-mapped engine, so its responses come back in order.
        self.channel as u32
    }
}

/// The IRQ block and the MSI-X table.
#[derive(Debug)]
struct Irqs {
    mode: IrqMode,
    user_lines: usize,
    user_enable: u32,
    chan_enable: u32,
    /// User requests the IP has acknowledged on the card and not yet handed to the driver.
    user_latched: u32,
    user_vec: [u8; 16],
    chan_vec: [u8; 8],
    table: [u32; msix::VECTORS * 4],
    pba: u32,
    /// Request bits already signalled (channel bits 0-7, user bits 16-31).
    asserted: u32,
    intx: bool,
}

impl Irqs {
    fn new(user_lines: usize) -> Irqs {
        let mut table = [0u32; msix::VECTORS * 4];
        for v in 0..msix::VECTORS {
            table[4 * v + 3] = msix::MASKED;
        }
        Irqs {
            mode: IrqMode::Intx { disabled: false },
            user_lines,
            user_enable: 0,
            chan_enable: 0,
            user_latched: 0,
            user_vec: [0; 16],
            chan_vec: [0; 8],
            table,
            pba: 0,
            asserted: 0,
            intx: false,
        }
    }

    fn vector_of(&self, bit: u32) -> u32 {
        let v = if bit >= 16 {
            self.user_vec[(bit - 16) as usize]
        } else {
            self.chan_vec[bit as usize & 7]
        };
        u32::from(v & 0x1F)
    }

    fn masked(&self, v: u32) -> bool {
        self.table[4 * v as usize + 3] & msix::MASKED != 0
    }

    fn send_msix(&mut self, v: u32, sink: &mut dyn InterruptSink, stats: &mut IpStats) {
        let e = 4 * v as usize;
        let addr = u64::from(self.table[e]) | (u64::from(self.table[e + 1]) << 32);
        sink.msix(addr, self.table[e + 2]);
        stats.messages += 1;
    }

    /// Signals what `req` newly raises, and the INTx level.
    fn update(&mut self, req: u32, sink: &mut dyn InterruptSink, stats: &mut IpStats) {
        let new = req & !self.asserted;
        self.asserted = req;
        match self.mode {
            IrqMode::MsiX { function_mask } => {
                for bit in (0..32).filter(|b| new >> b & 1 == 1) {
                    let v = self.vector_of(bit);
                    if function_mask || self.masked(v) {
                        self.pba |= 1 << v;
                    } else {
                        self.send_msix(v, sink, stats);
                    }
                }
            }
            IrqMode::Msi { vectors } => {
                for bit in (0..32).filter(|b| new >> b & 1 == 1) {
                    sink.msi(self.vector_of(bit) & (vectors.max(1) - 1));
                    stats.messages += 1;
                }
            }
            IrqMode::Intx { .. } => {}
        }
        let level = matches!(self.mode, IrqMode::Intx { disabled: false }) && req != 0;
        if level != self.intx {
            self.intx = level;
            sink.intx(level);
            stats.intx_changes += 1;
        }
    }

    /// Sends what waits in the PBA for vectors that are no longer masked.
    fn flush_pba(&mut self, sink: &mut dyn InterruptSink, stats: &mut IpStats) {
        if let IrqMode::MsiX {
            function_mask: false,
        } = self.mode
        {
            for v in 0..msix::VECTORS as u32 {
                if self.pba >> v & 1 == 1 && !self.masked(v) {
                    self.pba &= !(1 << v);
                    self.send_msix(v, sink, stats);
                }
            }
        }
    }
}

/// The XDMA IP in front of the card.
#[derive(Debug)]
pub struct XdmaIp {
    cfg: IpConfig,
    card: CardHarness,
    h2c: Vec<Engine>,
    c2h: Vec<Engine>,
    irq: Irqs,
    credit_mode: u32,
    /// Rest of C2H stream packets an earlier run's descriptors could not hold, per engine.
    leftovers: Vec<VecDeque<Vec<u8>>>,
    stats: IpStats,
}

fn harness(cfg: &IpConfig) -> Result<CardHarness> {
    let mut hc = HarnessConfig::new(cfg.top);
    hc.monitors = cfg.monitors;
    hc.c2h_record = false;
    // The IP acknowledges a user interrupt request in the cycle after it sees it.
    hc.irq_ack = IrqAck::After(0);
    // The host may hold an H2C stream beat's source idle as long as it likes, and the card may
    // hold it waiting: no stall bound on the IP's side.
    hc.h2c_stall_bound = 0;
    let card = CardHarness::with_config(hc)?;
    // The card may hold a burst's address while it serves the other direction's bursts on
    // the same DDR (its arbiter): with several KiB of reads in flight that is thousands of
    // cycles, backpressure rather than a hang. The bound stays, far above any healthy stall.
    if let Some(mon) = card.dma.monitor() {
        mon.set_config(axi_bfm::AxiMonitorConfig {
            stall_bound: DMA_STALL_BOUND,
            ..mon.config()
        });
    }
    Ok(card)
}

impl XdmaIp {
    /// Builds the card's top, resets it and the IP.
    pub fn new(cfg: IpConfig) -> Result<XdmaIp> {
        if !cfg.alignment.is_power_of_two() || cfg.alignment > 128 {
            return Err(IpError::Config(format!(
                "alignment {}: a power of two from 1 to 128",
                cfg.alignment
            )));
        }
        if cfg.h2c.len() > map::MAX_CHANNELS || cfg.c2h.len() > map::MAX_CHANNELS {
            return Err(IpError::Config(format!(
                "{} H2C and {} C2H channels: the XDMA IP has at most {} a direction",
                cfg.h2c.len(),
                cfg.c2h.len(),
                map::MAX_CHANNELS
            )));
        }
        let card = harness(&cfg)?;
        if cfg.user_irqs > card.irq_lines() {
            return Err(IpError::Config(format!(
                "{} user interrupts: the card has {} usr_irq_req line(s)",
                cfg.user_irqs,
                card.irq_lines()
            )));
        }
        let mut ports = [0usize; 2];
        let mut engines =
            |c2h: bool, kinds: &[EngineKind], first_bit: u32| -> Result<Vec<Engine>> {
                let have = if c2h {
                    card.c2h_ports().len()
                } else {
                    card.h2c_ports().len()
                };
                let mut out = Vec::new();
                for (ch, &k) in kinds.iter().enumerate() {
                    let port = ports[usize::from(c2h)];
                    if k == EngineKind::Stream {
                        if port >= have {
                            return Err(IpError::Config(format!(
                                "{} stream channel {ch}: the card has {have} {} stream port(s)",
                                if c2h { "C2H" } else { "H2C" },
                                if c2h { "C2H" } else { "H2C" },
                            )));
                        }
                        ports[usize::from(c2h)] += 1;
                    }
                    out.push(Engine::new(c2h, ch, k, port, first_bit + ch as u32));
                }
                Ok(out)
            };
        let h2c = engines(false, &cfg.h2c, 0)?;
        let c2h = engines(true, &cfg.c2h, cfg.h2c.len() as u32)?;
        if (h2c.iter().chain(&c2h)).any(|e| e.kind == EngineKind::MemoryMapped)
            && card.memory_size().is_none()
        {
            return Err(IpError::Config(
                "a memory-mapped channel needs a card top with DDR behind s_axi".into(),
            ));
        }
        let leftovers = (0..c2h.len()).map(|_| VecDeque::new()).collect();
        let mut ip = XdmaIp {
            irq: Irqs::new(cfg.user_irqs),
            cfg,
            card,
            h2c,
            c2h,
            credit_mode: 0,
            leftovers,
            stats: IpStats::default(),
        };
        // No C2H stream takes data until an engine runs with descriptors for it.
        for e in &ip.c2h {
            if e.stream() {
                ip.card.set_c2h_ready(e.port, false);
            }
        }
        Ok(ip)
    }

    /// Bytes of the user BAR (what the card's `s_axil` decodes).
    pub fn user_bar_size(&self) -> u64 {
        self.card.bar_size()
    }

    /// The card behind the IP, for tests that look at it directly.
    pub fn card(&mut self) -> &mut CardHarness {
        &mut self.card
    }

    /// A read of `size` bytes (1, 2, 4 or 8) at `offset` of `bar`. An access the IP does not
    /// decode reads zero; a user BAR read runs the card until its `s_axil` answers, and an
    /// error answer reads all ones, as a failed PCIe read completes.
    pub fn bar_read(
        &mut self,
        bar: Bar,
        offset: u64,
        size: u32,
        mem: &mut dyn HostMemory,
        irq: &mut dyn InterruptSink,
    ) -> Result<u64> {
        let size = size.clamp(1, 8);
        let mut out = 0u64;
        // Dword registers on both BARs: an access of several dwords is one dword at a time, a
        // narrow one takes its bytes out of the dword it falls in.
        let mut done = 0u32;
        while done < size {
            let at = offset + u64::from(done);
            let word_at = at & !3;
            let shift = 8 * (at & 3) as u32;
            let n = (4 - (at & 3) as u32).min(size - done);
            let word = match bar {
                Bar::User => self.user_read(word_at)?,
                Bar::Dma => self.dma_read(word_at, irq),
            };
            let part = (u64::from(word) >> shift) & ((1u64 << (8 * n)) - 1);
            out |= part << (8 * done);
            done += n;
        }
        let _ = mem;
        Ok(out)
    }

    /// A write of `size` bytes at `offset` of `bar`.
    pub fn bar_write(
        &mut self,
        bar: Bar,
        offset: u64,
        value: u64,
        size: u32,
        mem: &mut dyn HostMemory,
        irq: &mut dyn InterruptSink,
    ) -> Result<()> {
        let size = size.clamp(1, 8);
        let mut done = 0u32;
        while done < size {
            let at = offset + u64::from(done);
            let word_at = at & !3;
            let lane = (at & 3) as u32;
            let n = (4 - lane).min(size - done);
            let bytes = (value >> (8 * done)) & ((1u64 << (8 * n)) - 1);
            let data = (bytes << (8 * lane)) as u32;
            let strb = (((1u32 << n) - 1) << lane) as u8;
            match bar {
                Bar::User => self.user_write(word_at, data, strb)?,
                Bar::Dma => {
                    // The DMA BAR's registers take whole dwords; a narrow write merges into
                    // the dword's current value (which is what a read-modify-write would see).
                    let full = if strb == 0xF {
                        data
                    } else {
                        let keep = !(((1u64 << (8 * n)) - 1) << (8 * lane)) as u32;
                        (self.peek_dma(word_at) & keep) | data
                    };
                    self.dma_write(word_at, full, mem, irq);
                }
            }
            done += n;
        }
        Ok(())
    }

    /// The function's interrupt configuration changed (a config space write).
    pub fn set_irq_mode(&mut self, mode: IrqMode, irq: &mut dyn InterruptSink) {
        if self.irq.mode == mode {
            return;
        }
        self.irq.mode = mode;
        // What was signalled stays signalled: a request raised under the function mask waits
        // in the PBA and is sent from there.
        self.update_irq(irq);
        self.irq.flush_pba(irq, &mut self.stats);
    }

    /// Runs the card for `cycles` of `axi_aclk`, the engines working as they go.
    pub fn run(
        &mut self,
        cycles: u64,
        mem: &mut dyn HostMemory,
        irq: &mut dyn InterruptSink,
    ) -> Result<()> {
        for _ in 0..cycles {
            self.card.cycle()?;
            self.stats.cycles += 1;
            for i in 0..self.h2c.len() {
                self.step(false, i, mem)?;
            }
            for i in 0..self.c2h.len() {
                self.step(true, i, mem)?;
            }
            for bit in self.card.take_irqs().into_iter().map(|e| e.bit) {
                if (bit as usize) < self.irq.user_lines {
                    self.irq.user_latched |= 1 << bit;
                    // Every request the IP acknowledges is an interrupt of its own: a message
                    // in MSI and MSI-X mode even while an earlier one is still latched (the
                    // MSI-X handler never reads the request register that clears it).
                    self.irq.asserted &= !(1 << (16 + bit));
                }
            }
            self.update_irq(irq);
        }
        Ok(())
    }

    /// Whether any engine is running.
    pub fn busy(&self) -> bool {
        self.h2c.iter().chain(&self.c2h).any(|e| e.run.is_some())
    }

    /// The function's reset (PCIe hot reset or FLR): every engine stopped, every register at
    /// its reset value, the card reset (its top rebuilt from reset, DDR contents included).
    pub fn reset(&mut self) -> Result<()> {
        let fresh = XdmaIp::new(self.cfg.clone())?;
        let stats = self.stats;
        *self = fresh;
        self.stats = stats;
        Ok(())
    }

    /// What the IP did so far.
    pub fn stats(&self) -> IpStats {
        self.stats
    }

    fn user_read(&mut self, addr: u64) -> Result<u32> {
        if addr >= self.card.bar_size() {
            return Ok(0);
        }
        let t = self.card.regs.start_read(addr)?;
        let regs = self.card.regs.clone();
        self.card
            .run_until(card_harness::REG_TIMEOUT, "a user BAR read", |_| {
                Ok(regs.is_done(t))
            })?;
        let (data, resp) = self.card.regs.take(t)?;
        if resp.is_ok() {
            Ok(data as u32)
        } else {
            tracing::info!(addr, ?resp, "user BAR read answered with an error");
            Ok(u32::MAX)
        }
    }

    fn user_write(&mut self, addr: u64, data: u32, strb: u8) -> Result<()> {
        if addr >= self.card.bar_size() {
            return Ok(());
        }
        let t = self
            .card
            .regs
            .start_write(addr, u64::from(data), u64::from(strb))?;
        let regs = self.card.regs.clone();
        self.card
            .run_until(card_harness::REG_TIMEOUT, "a user BAR write", |_| {
                Ok(regs.is_done(t))
            })?;
        let (_, resp) = self.card.regs.take(t)?;
        if !resp.is_ok() {
            // A posted write has no answer for the host: the card's refusal is only logged.
            tracing::info!(addr, data, ?resp, "user BAR write answered with an error");
        }
        Ok(())
    }

    fn engine(&mut self, c2h: bool, ch: usize) -> Option<&mut Engine> {
        if c2h {
            self.c2h.get_mut(ch)
        } else {
            self.h2c.get_mut(ch)
        }
    }

    /// A DMA BAR register's value without the side effect of a read.
    fn peek_dma(&self, off: u64) -> u32 {
        let Some(t) = Target::of(off) else { return 0 };
        let ch = ((off >> 8) & 0xF) as usize;
        let reg = off & 0xFF;
        let eng = |c2h: bool| {
            if c2h {
                self.c2h.get(ch)
            } else {
                self.h2c.get(ch)
            }
        };
        match t {
            Target::H2c | Target::C2h => {
                let Some(e) = eng(t == Target::C2h) else {
                    return 0;
                };
                match reg {
                    ereg::IDENTIFIER => t.identifier(ch, e.stream()),
                    ereg::CONTROL | ereg::CONTROL_W1S | ereg::CONTROL_W1C => e.control,
                    ereg::STATUS | ereg::STATUS_RC => e.status,
                    ereg::COMPLETED => e.completed,
                    ereg::ALIGNMENTS => (self.cfg.alignment << 16) | ALIGNMENTS_LOW,
                    ereg::POLL_WB_LO => e.wb as u32,
                    ereg::POLL_WB_HI => (e.wb >> 32) as u32,
                    ereg::IE_MASK | ereg::IE_MASK_W1S | ereg::IE_MASK_W1C => e.ie_mask,
                    ereg::PERF_CTRL => e.perf_ctrl,
                    ereg::PERF_CYC_LO => e.perf_cyc as u32,
                    ereg::PERF_CYC_HI => (e.perf_cyc >> 32) as u32,
                    ereg::PERF_DAT_LO => e.perf_dat as u32,
                    ereg::PERF_DAT_HI => (e.perf_dat >> 32) as u32,
                    ereg::PERF_PND_LO => e.perf_pnd as u32,
                    ereg::PERF_PND_HI => (e.perf_pnd >> 32) as u32,
                    _ => 0,
                }
            }
            Target::H2cSgdma | Target::C2hSgdma => {
                let Some(e) = eng(t == Target::C2hSgdma) else {
                    return 0;
                };
                match reg {
                    sgdma::IDENTIFIER => t.identifier(ch, e.stream()),
                    sgdma::FIRST_DESC_LO => e.first_desc as u32,
                    sgdma::FIRST_DESC_HI => (e.first_desc >> 32) as u32,
                    sgdma::FIRST_DESC_ADJACENT => e.adjacent,
                    sgdma::CREDITS => e.credits,
                    _ => 0,
                }
            }
            Target::Irq => {
                let r = off - ireg::BASE;
                let vec4 = |v: &[u8], i: usize| {
                    (0..4).fold(0u32, |acc, k| {
                        acc | u32::from(v.get(i + k).copied().unwrap_or(0)) << (8 * k)
                    })
                };
                match r {
                    ireg::IDENTIFIER => Target::Irq.identifier(0, false),
                    ireg::USER_ENABLE | ireg::USER_ENABLE_W1S | ireg::USER_ENABLE_W1C => {
                        self.irq.user_enable
                    }
                    ireg::CHANNEL_ENABLE | ireg::CHANNEL_ENABLE_W1S | ireg::CHANNEL_ENABLE_W1C => {
                        self.irq.chan_enable
                    }
                    ireg::USER_REQUEST => self.irq.user_latched & self.irq.user_enable,
                    ireg::CHANNEL_REQUEST => self.chan_pending() & self.irq.chan_enable,
                    ireg::USER_PENDING => self.irq.user_latched,
                    ireg::CHANNEL_PENDING => self.chan_pending(),
                    0x80..=0x9F => vec4(&self.irq.user_vec, (r - ireg::USER_VECTOR) as usize),
                    0xA0..=0xBF => vec4(&self.irq.chan_vec, (r - ireg::CHANNEL_VECTOR) as usize),
                    _ => 0,
                }
            }
            Target::Config => match off - map::config::BASE {
                map::config::IDENTIFIER => Target::Config.identifier(0, false),
                // 256-byte payload and 512-byte read requests, encoded as in Device Control.
                map::config::MAX_PAYLOAD => 1,
                map::config::MAX_READ => 2,
                map::config::MSI_ENABLE => match self.irq.mode {
                    IrqMode::Msi { .. } => 1,
                    IrqMode::MsiX { .. } => 2,
                    IrqMode::Intx { .. } => 0,
                },
                map::config::DATA_WIDTH => DATA_WIDTH_128,
                _ => 0,
            },
            Target::SgdmaCommon => match off - common::BASE {
                common::IDENTIFIER => Target::SgdmaCommon.identifier(0, false),
                common::CREDIT_MODE_ENABLE
                | common::CREDIT_MODE_ENABLE_W1S
                | common::CREDIT_MODE_ENABLE_W1C => self.credit_mode,
                _ => 0,
            },
            Target::MsiX => {
                let r = off - msix::TABLE;
                if off >= msix::PBA {
                    if off == msix::PBA {
                        self.irq.pba
                    } else {
                        0
                    }
                } else {
                    self.irq.table.get((r / 4) as usize).copied().unwrap_or(0)
                }
            }
        }
    }

    fn dma_read(&mut self, off: u64, irq: &mut dyn InterruptSink) -> u32 {
        let v = self.peek_dma(off);
        let ch = ((off >> 8) & 0xF) as usize;
        match Target::of(off) {
            Some(t @ (Target::H2c | Target::C2h)) if off & 0xFF == ereg::STATUS_RC => {
                if let Some(e) = self.engine(t == Target::C2h, ch) {
                    e.status &= !status::CLEARED_BY_READ;
                }
                self.update_irq(irq);
            }
            Some(Target::Irq) if off - ireg::BASE == ireg::USER_REQUEST => {
                // The card drops its request once the IP has acknowledged it, so the IP keeps
                // what it acknowledged until the driver's handler has read it here: the
                // handler reads this register to learn which user interrupt fired.
                self.irq.user_latched &= !v;
                self.update_irq(irq);
            }
            _ => {}
        }
        v
    }

    fn chan_pending(&self) -> u32 {
        self.h2c
            .iter()
            .chain(&self.c2h)
            .filter(|e| e.requesting())
            .fold(0, |acc, e| acc | 1 << e.irq_bit)
    }

    fn update_irq(&mut self, sink: &mut dyn InterruptSink) {
        let user = self.irq.user_latched & self.irq.user_enable;
        let req = (self.chan_pending() & self.irq.chan_enable) | (user << 16);
        self.irq.update(req, sink, &mut self.stats);
    }

    fn dma_write(
        &mut self,
        off: u64,
        v: u32,
        mem: &mut dyn HostMemory,
        irq: &mut dyn InterruptSink,
    ) {
        let ch = ((off >> 8) & 0xF) as usize;
        let reg = off & 0xFF;
        let set = |r: &mut u32, which: u64, base: u64| match which - base {
            0 => *r = v,
            4 => *r |= v,
            8 => *r &= !v,
            _ => {}
        };
        match Target::of(off) {
            Some(t @ (Target::H2c | Target::C2h)) => {
                let c2h = t == Target::C2h;
                let Some(e) = self.engine(c2h, ch) else {
                    return;
                };
                match reg {
                    ereg::CONTROL | ereg::CONTROL_W1S | ereg::CONTROL_W1C => {
                        let was = e.control;
                        set(&mut e.control, reg, ereg::CONTROL);
                        let now = e.control;
                        if now & control::RUN != 0 && was & control::RUN == 0 {
                            self.start(c2h, ch, mem);
                        } else if now & control::RUN == 0 && was & control::RUN != 0 {
                            self.stop(c2h, ch);
                        }
                    }
                    ereg::POLL_WB_LO => e.wb = (e.wb & !0xFFFF_FFFF) | u64::from(v),
                    ereg::POLL_WB_HI => e.wb = (e.wb & 0xFFFF_FFFF) | (u64::from(v) << 32),
                    ereg::IE_MASK | ereg::IE_MASK_W1S | ereg::IE_MASK_W1C => {
                        set(&mut e.ie_mask, reg, ereg::IE_MASK)
                    }
                    ereg::PERF_CTRL => {
                        if v & 2 != 0 {
                            e.perf_cyc = 0;
                            e.perf_dat = 0;
                            e.perf_pnd = 0;
                        }
                        e.perf_ctrl = v & 0b101;
                    }
                    _ => {}
                }
            }
            Some(t @ (Target::H2cSgdma | Target::C2hSgdma)) => {
                let Some(e) = self.engine(t == Target::C2hSgdma, ch) else {
                    return;
                };
                match reg {
                    sgdma::FIRST_DESC_LO => {
                        e.first_desc = (e.first_desc & !0xFFFF_FFFF) | u64::from(v)
                    }
                    sgdma::FIRST_DESC_HI => {
                        e.first_desc = (e.first_desc & 0xFFFF_FFFF) | (u64::from(v) << 32)
                    }
                    sgdma::FIRST_DESC_ADJACENT => e.adjacent = v & 0x3F,
                    sgdma::CREDITS => e.credits = v & 0x3FF,
                    _ => {}
                }
            }
            Some(Target::Irq) => {
                let r = off - ireg::BASE;
                match r {
                    ireg::USER_ENABLE | ireg::USER_ENABLE_W1S | ireg::USER_ENABLE_W1C => {
                        set(&mut self.irq.user_enable, r, ireg::USER_ENABLE)
                    }
                    ireg::CHANNEL_ENABLE | ireg::CHANNEL_ENABLE_W1S | ireg::CHANNEL_ENABLE_W1C => {
                        set(&mut self.irq.chan_enable, r, ireg::CHANNEL_ENABLE)
                    }
                    ireg::USER_VECTOR..=0xBF => {
                        let (vec, base): (&mut [u8], u64) = if r < ireg::CHANNEL_VECTOR {
                            (&mut self.irq.user_vec, ireg::USER_VECTOR)
                        } else {
                            (&mut self.irq.chan_vec, ireg::CHANNEL_VECTOR)
                        };
                        for k in 0..4 {
                            if let Some(b) = vec.get_mut((r - base) as usize + k) {
                                *b = (v >> (8 * k)) as u8 & 0x1F;
                            }
                        }
                    }
                    _ => {}
                }
            }
            Some(Target::SgdmaCommon) => {
                let r = off - common::BASE;
                if (common::CREDIT_MODE_ENABLE..=common::CREDIT_MODE_ENABLE_W1C).contains(&r) {
                    set(&mut self.credit_mode, r, common::CREDIT_MODE_ENABLE);
                }
            }
            Some(Target::MsiX) => {
                if off < msix::PBA {
                    if let Some(w) = self.irq.table.get_mut(((off - msix::TABLE) / 4) as usize) {
                        *w = v;
                    }
                    self.irq.flush_pba(irq, &mut self.stats);
                }
            }
            Some(Target::Config) | None => {}
        }
        self.update_irq(irq);
    }

    /// The run bit's rising edge: the engine starts at its first descriptor.
    fn start(&mut self, c2h: bool, ch: usize, mem: &mut dyn HostMemory) {
        let _ = mem;
        let credit = c2h && self.credit_mode >> (16 + ch) & 1 == 1;
        let Some(e) = self.engine(c2h, ch) else {
            return;
        };
        e.completed = 0;
        e.status = status::BUSY;
        if !credit {
            e.credits = u32::MAX;
        }
        e.run = Some(Run {
            next: Some(e.first_desc),
            ..Run::default()
        });
        let (stream, port) = (e.stream(), e.port);
        tracing::debug!(engine = %e.name(), first = e.first_desc, "engine started");
        if stream && c2h {
            self.card.set_c2h_ready(port, true);
        }
    }

    /// The run bit cleared: the engine stops after what is on the bus.
    fn stop(&mut self, c2h: bool, ch: usize) {
        let Some(e) = self.engine(c2h, ch) else {
            return;
        };
        if let Some(r) = e.run.as_mut() {
            r.stopping = true;
            tracing::debug!(engine = %e.name(), "run cleared");
        }
    }

    /// Ends an engine's run: BUSY low, the stream closed, the write-back written.
    fn finish(&mut self, c2h: bool, ch: usize, bits: u32, error: bool, mem: &mut dyn HostMemory) {
        let Some(e) = self.engine(c2h, ch) else {
            return;
        };
        let run = e.run.take();
        e.status &= !status::BUSY;
        e.log(bits);
        let (stream, port, wb, count) = (e.stream(), e.port, e.wb, e.completed);
        let poll = e.control & control::POLL_MODE_WB != 0;
        tracing::debug!(engine = %e.name(), status = e.status, completed = count, "engine stopped");
        if stream && c2h {
            self.card.set_c2h_ready(port, false);
            // A descriptor half filled when the run ended keeps its bytes for nobody: the run
            // that ended was given up by the driver.
            let _ = run;
        } else if stream {
            // A packet the run had gathered but not sent is dropped with the run.
            drop(run);
        }
        if poll && error {
            self.write_back(wb, count | map::WB_ERR, mem);
        }
    }

    fn write_back(&mut self, addr: u64, v: u32, mem: &mut dyn HostMemory) {
        if mem.write(addr, &v.to_le_bytes()).is_err() {
            self.stats.lost_writes += 1;
            tracing::info!(addr, "poll-mode write-back outside host memory, dropped");
        }
    }

    /// A descriptor is done: counted, its flags logged, the write-back written.
    fn complete(
        &mut self,
        c2h: bool,
        ch: usize,
        d: &Descriptor,
        bytes: u64,
        mem: &mut dyn HostMemory,
    ) {
        let Some(e) = self.engine(c2h, ch) else {
            return;
        };
        e.completed = e.completed.wrapping_add(1);
        e.perf_dat += bytes.div_ceil(16);
        let count = e.completed;
        let wb = e.wb;
        let poll = e.control & control::POLL_MODE_WB != 0;
        if d.control & map::desc::COMPLETED != 0 {
            e.log(status::DESC_COMPLETED);
        }
        self.stats.descriptors += 1;
        self.stats.bytes += bytes;
        // PG195: in poll mode the count is written back when a descriptor with its Completed
        // bit set completes.
        if poll && d.control & map::desc::COMPLETED != 0 {
            self.write_back(wb, count & map::WB_COUNT_MASK, mem);
        }
    }

    /// Fetches the engine's next descriptor, or ends the run with the error a fetch gives.
    fn fetch(&mut self, c2h: bool, ch: usize, mem: &mut dyn HostMemory) -> Option<Descriptor> {
        let e = self.engine(c2h, ch)?;
        let name = e.name();
        let (stream, credits) = (e.kind == EngineKind::Stream, e.credits);
        let run = e.run.as_mut()?;
        if run.stopping || credits == 0 {
            return None;
        }
        let at = run.next?;
        let mut b = [0u8; map::DESC_BYTES];
        let fault = if mem.read(at, &mut b).is_err() {
            tracing::info!(engine = %name, at, "descriptor outside host memory");
            Some(status::DESC_UNSUPP_REQ)
        } else if !Descriptor::from_bytes(&b).magic_ok() {
            tracing::info!(engine = %name, at, "descriptor with a bad magic");
            Some(status::MAGIC_STOPPED)
        } else {
            None
        };
        if let Some(bits) = fault {
            run.next = None;
            run.fault = Some(bits);
            if stream || run.mm.is_empty() {
                self.finish(c2h, ch, bits, true, mem);
            }
            return None;
        }
        let d = Descriptor::from_bytes(&b);
        let align = u64::from(self.cfg.alignment);
        if align > 1 && d.src % align != d.dst % align && !stream {
            // Only a memory-mapped descriptor pairs two data addresses (a C2H stream's source
            // is its result record, an H2C stream's destination is unused).
            tracing::info!(engine = %name, src = d.src, dst = d.dst, "descriptor addresses not aligned alike");
            if let Some(run) = self.run_of(c2h, ch) {
                run.next = None;
                run.fault = Some(status::ALIGN_MISMATCH);
                if stream || run.mm.is_empty() {
                    self.finish(c2h, ch, status::ALIGN_MISMATCH, true, mem);
                }
            }
            return None;
        }
        let run = self.run_of(c2h, ch)?;
        run.next = if d.control & map::desc::STOP != 0 {
            None
        } else {
            Some(d.next)
        };
        if let Some(e) = self.engine(c2h, ch) {
            if e.credits != u32::MAX {
                e.credits -= 1;
            }
        }
        Some(d)
    }

    fn step(&mut self, c2h: bool, ch: usize, mem: &mut dyn HostMemory) -> Result<()> {
        let Some(e) = self.engine(c2h, ch) else {
            return Ok(());
        };
        if e.perf_ctrl & 1 != 0 || (e.perf_ctrl & 4 != 0 && e.run.is_some()) {
            e.perf_cyc += 1;
        }
        if e.run.is_none() {
            return Ok(());
        }
        match (e.kind, c2h) {
            (EngineKind::MemoryMapped, _) => self.step_mm(c2h, ch, mem),
            (EngineKind::Stream, false) => self.step_h2c_stream(ch, mem),
            (EngineKind::Stream, true) => self.step_c2h_stream(ch, mem),
        }
    }

    fn run_of(&mut self, c2h: bool, ch: usize) -> Option<&mut Run> {
        self.engine(c2h, ch).and_then(|e| e.run.as_mut())
    }

    fn step_mm(&mut self, c2h: bool, ch: usize, mem: &mut dyn HostMemory) -> Result<()> {
        // Retire what the card has answered, in order.
        loop {
            let dma = self.card.dma.clone();
            let Some(run) = self.run_of(c2h, ch) else {
                return Ok(());
            };
            let Some(op) = run.mm.front() else { break };
            if !dma.is_done(op.txn) {
                break;
            }
            let Some(op) = run.mm.pop_front() else { break };
            let resp = if c2h {
                let (data, resp) = dma.take_read(op.txn)?;
                if resp.is_ok() && mem.write(op.desc.dst, &data).is_err() {
                    self.stats.lost_writes += 1;
                    tracing::info!(
                        dst = op.desc.dst,
                        len = data.len(),
                        "C2H data outside host memory, dropped"
                    );
                }
                resp
            } else {
                dma.take_write(op.txn)?
            };
            if !resp.is_ok() {
                let (bits, group) = match (c2h, resp) {
                    (false, Resp::DecErr) => (status::H2C_W_DECODE_ERR, control::IE_WRITE_ERROR),
                    (false, _) => (status::H2C_W_SLAVE_ERR, control::IE_WRITE_ERROR),
                    (true, Resp::DecErr) => (status::C2H_R_DECODE_ERR, control::IE_READ_ERROR),
                    (true, _) => (status::C2H_R_SLAVE_ERR, control::IE_READ_ERROR),
                };
                tracing::info!(
                    c2h,
                    ch,
                    ?resp,
                    "the card answered a DMA burst with an error"
                );
                // PG195: the ie_*_error bits of the control register enable logging the error
                // and stopping the engine; without them the engine goes on as if nothing
                // happened (the Linux driver enables read errors, not write errors).
                if self.engine(c2h, ch).is_some_and(|e| e.control & group != 0) {
                    self.abandon_mm(c2h, ch)?;
                    self.finish(c2h, ch, bits, true, mem);
                    return Ok(());
                }
            }
            self.complete(c2h, ch, &op.desc, u64::from(op.desc.length()), mem);
            if op.desc.control & map::desc::STOP != 0 {
                self.finish(c2h, ch, status::DESC_STOPPED, false, mem);
                return Ok(());
            }
        }
        // Issue what the window allows.
        loop {
            let Some(run) = self.run_of(c2h, ch) else {
                return Ok(());
            };
            if run.mm.len() >= MM_IN_FLIGHT {
                break;
            }
            if run.stopping || run.next.is_none() {
                if run.mm.is_empty() {
                    if let Some(bits) = run.fault {
                        self.finish(c2h, ch, bits, true, mem);
                    } else if run.stopping {
                        self.finish(c2h, ch, status::IDLE_STOPPED, false, mem);
                    }
                }
                break;
            }
            let Some(d) = self.fetch(c2h, ch, mem) else {
                break;
            };
            let len = d.length() as usize;
            let id = self.engine(c2h, ch).map_or(0, |e| e.axi_id());
            let txn = if c2h {
                self.card.dma.start_read(id, d.src, len)?
            } else {
                let mut buf = vec![0u8; len];
                if mem.read(d.src, &mut buf).is_err() {
                    tracing::info!(src = d.src, len, "H2C data outside host memory");
                    self.abandon_mm(c2h, ch)?;
                    self.finish(c2h, ch, status::H2C_R_UNSUPP_REQ, true, mem);
                    return Ok(());
                }
                self.card.dma.start_write(id, d.dst, &buf)?
            };
            if let Some(run) = self.run_of(c2h, ch) {
                run.mm.push_back(MmOp { txn, desc: d });
            }
        }
        Ok(())
    }

    /// Lets what an ended run still has on the card's bus finish, so that the bus stays legal
    /// and the next run starts on an idle port.
    fn abandon_mm(&mut self, c2h: bool, ch: usize) -> Result<()> {
        let ops: Vec<MmOp> = self
            .run_of(c2h, ch)
            .map(|r| r.mm.drain(..).collect())
            .unwrap_or_default();
        for op in ops {
            let dma = self.card.dma.clone();
            dma.wait(&mut self.card.env, op.txn)?;
            if c2h {
                dma.take_read(op.txn)?;
            } else {
                dma.take_write(op.txn)?;
            }
        }
        Ok(())
    }

    fn step_h2c_stream(&mut self, ch: usize, mem: &mut dyn HostMemory) -> Result<()> {
        let port = self.h2c.get(ch).map_or(0, |e| e.port);
        let Some(src) = self.card.h2c.get(port).cloned() else {
            return Ok(());
        };
        // A packet on the stream completes its descriptors once its last beat has left.
        let sending = self.run_of(false, ch).map_or(0, |r| r.sending.len());
        if sending > 0 {
            if !src.idle() {
                return Ok(());
            }
            let descs = self
                .run_of(false, ch)
                .map(|r| std::mem::take(&mut r.sending))
                .unwrap_or_default();
            for d in &descs {
                self.complete(false, ch, d, u64::from(d.length()), mem);
                if d.control & map::desc::STOP != 0 {
                    self.finish(false, ch, status::DESC_STOPPED, false, mem);
                    return Ok(());
                }
            }
        }
        let Some(run) = self.run_of(false, ch) else {
            return Ok(());
        };
        if run.stopping || run.next.is_none() {
            if run.stopping {
                // An aborted run drops the packet it was gathering; one already on the stream
                // has left whole, since AXI-Stream cannot take a beat back.
                self.finish(false, ch, status::IDLE_STOPPED, false, mem);
            }
            return Ok(());
        }
        // Gather descriptors until one ends the packet (EOP) or the chain (STOP).
        while let Some(d) = self.fetch(false, ch, mem) {
            let mut buf = vec![0u8; d.length() as usize];
            if mem.read(d.src, &mut buf).is_err() {
                tracing::info!(src = d.src, "H2C stream data outside host memory");
                self.finish(false, ch, status::H2C_R_UNSUPP_REQ, true, mem);
                return Ok(());
            }
            let Some(run) = self.run_of(false, ch) else {
                return Ok(());
            };
            run.packet_bytes.extend_from_slice(&buf);
            run.packet.push(d);
            if d.control & (map::desc::EOP | map::desc::STOP) != 0 {
                let bytes = std::mem::take(&mut run.packet_bytes);
                run.sending = std::mem::take(&mut run.packet);
                if bytes.is_empty() {
                    // An empty packet has no beat to carry TLAST; its descriptors are done.
                    continue;
                }
                src.start_send(AxisFrame::new(bytes))?;
                break;
            }
        }
        Ok(())
    }

    fn step_c2h_stream(&mut self, ch: usize, mem: &mut dyn HostMemory) -> Result<()> {
        let port = self.c2h.get(ch).map_or(0, |e| e.port);
        let Some(sink) = self.card.c2h.get(port).cloned() else {
            return Ok(());
        };
        if self.run_of(true, ch).is_some_and(|r| r.stopping) {
            // The run was given up: a descriptor half filled stays as it is (its result is
            // never written), and what the stream still holds waits for the next run.
            self.finish(true, ch, status::IDLE_STOPPED, false, mem);
            return Ok(());
        }
        loop {
            // The next packet: the rest of one an earlier descriptor could not hold, or one
            // that has come in whole.
            let Some(packet) = self
                .leftovers
                .get_mut(ch)
                .and_then(VecDeque::pop_front)
                .or_else(|| sink.try_recv().map(|f| f.data))
            else {
                return Ok(());
            };
            let mut at = 0usize;
            while at < packet.len() || packet.is_empty() {
                // The descriptor to fill: the one under way, or the next of the chain.
                let cur = self.run_of(true, ch).and_then(|r| r.filling.take());
                let (d, filled) = match cur {
                    Some(c) => c,
                    None => match self.fetch(true, ch, mem) {
                        Some(d) => (d, 0),
                        None => {
                            // No descriptor left: the rest waits for the next run.
                            if let Some(q) = self.leftovers.get_mut(ch) {
                                q.push_front(packet[at..].to_vec());
                            }
                            if self.run_of(true, ch).is_some_and(|r| r.next.is_none()) {
                                self.finish(true, ch, status::DESC_STOPPED, false, mem);
                            }
                            return Ok(());
                        }
                    },
                };
                let room = d.length() as usize - filled;
                let n = room.min(packet.len() - at);
                if mem
                    .write(d.dst + filled as u64, &packet[at..at + n])
                    .is_err()
                {
                    self.stats.lost_writes += 1;
                    tracing::info!(dst = d.dst, "C2H stream data outside host memory, dropped");
                }
                at += n;
                let eop = at == packet.len();
                let full = filled + n == d.length() as usize;
                if eop || full {
                    let mut result = [0u8; map::RESULT_BYTES];
                    result[0..4].copy_from_slice(&map::result_status(eop).to_le_bytes());
                    result[4..8].copy_from_slice(&((filled + n) as u32).to_le_bytes());
                    if mem.write(d.src, &result).is_err() {
                        self.stats.lost_writes += 1;
                        tracing::info!(
                            addr = d.src,
                            "C2H stream result outside host memory, dropped"
                        );
                    }
                    self.complete(true, ch, &d, (filled + n) as u64, mem);
                    if d.control & map::desc::STOP != 0 {
                        if at < packet.len() {
                            if let Some(q) = self.leftovers.get_mut(ch) {
                                q.push_front(packet[at..].to_vec());
                            }
                        }
                        self.finish(true, ch, status::DESC_STOPPED, false, mem);
                        return Ok(());
                    }
                } else if let Some(r) = self.run_of(true, ch) {
                    r.filling = Some((d, filled + n));
                }
                if packet.is_empty() {
                    break;
                }
            }
        }
    }
}
