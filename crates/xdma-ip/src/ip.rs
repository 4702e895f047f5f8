//! The IP's top (PG195's DMA/Bridge Subsystem as a whole): its BARs and their decoding, the
//! card behind it, and the clock that steps the engines (`engine/`) and the IRQ block
//! (`irq.rs`).
//!
//! The engines work between cycles of the card's clock: [`XdmaIp::run`] advances `axi_aclk`
//! one cycle at a time and, after each, lets every running engine retire what the card has
//! answered and issue what it may (`engine/`), each against a context of what it touches
//! (`engine::Ctx`) borrowed from the IP for the step. Host memory and interrupts are reached
//! through the IP's PCIe port (`pcie.rs`): with timing, reads of host memory complete after
//! the link's and the root complex's latencies, and posted writes (data, write-backs, MSI and
//! MSI-X messages) reach the host after the link's; without it, at once. Either way the data a
//! host sees is exactly what the card's RTL moved.

use axi_bfm::TxnId;
use card_harness::{CardHarness, HarnessConfig, IrqAck};
use xdma_regmap::{
    self as map, common, control, engine_regs as ereg, irq as ireg, msix, sgdma, status, Target,
};

use crate::config::{EngineKind, IpConfig};
use crate::engine::{Ctx, Engine, Posted};
use crate::irq::{Irqs, Outbox};
use crate::pcie::{Pcie, Ps};
use crate::regs::write_set_clear;
use crate::stats::{IpStats, Latency, LatencyStats};
use crate::{Bar, HostMemory, InterruptSink, IpError, IrqMode, Result};

/// Cycles a VALID on the card's AXI port may wait for READY before the monitor reports a
/// stall: 1 ms of `axi_aclk`.
const DMA_STALL_BOUND: u64 = 250_000;
/// The alignments register's granularity and address-width fields: lengths of any byte
/// count, 64 address bits (bits 23:16 hold the address alignment).
const ALIGNMENTS_LOW: u32 = 0x0000_0140;
/// The config block's PCIe data width field: 1 is 128 bits, the reference board's.
const DATA_WIDTH_128: u32 = 1;

/// A user BAR access on its way through the card's `s_axil`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserAccess {
    txn: TxnId,
    write: bool,
    addr: u64,
}

/// The XDMA IP in front of the card.
#[derive(Debug)]
pub struct XdmaIp {
    pub(crate) cfg: IpConfig,
    pub(crate) card: CardHarness,
    pub(crate) h2c: Vec<Engine>,
    pub(crate) c2h: Vec<Engine>,
    irq: Irqs,
    pub(crate) credit_mode: u32,
    pub(crate) stats: IpStats,
    pub(crate) pcie: Pcie,
    pub(crate) latency: Latency,
    /// Interrupt messages on their way to the host, in order.
    outbox: Outbox,
    /// Posted writes on their way to host memory (write-backs), in order.
    posted: Posted,
}

fn harness(cfg: &IpConfig) -> Result<CardHarness> {
    let mut hc = HarnessConfig::new(cfg.top);
    hc.fault = cfg.fault;
    hc.name.clone_from(&cfg.name);
    hc.monitors = cfg.monitors;
    hc.dma = axi_bfm::AxiMasterConfig {
        max_burst_len: 256,
        // The engines' windows are the IP's; the bus model must not limit them.
        max_outstanding_writes: 1024,
        max_outstanding_reads: 1024,
        ..axi_bfm::AxiMasterConfig::default()
    };
    hc.c2h_record = false;
    // The IP acknowledges a user interrupt request in the cycle after it sees it.
    hc.irq_ack = IrqAck::After(0);
    // The host may hold an H2C stream beat's source idle as long as it likes; how long the card
    // may hold it waiting is the front end's choice.
    hc.h2c_stall_bound = cfg.h2c_stall_bound;
    let card = CardHarness::with_config(hc)?;
    // The card may hold a burst's address while it serves the other direction's bursts on
    // the same DDR (its arbiter): with several KiB of reads in flight that is thousands of
    // cycles, backpressure rather than a hang. The bound stays, far above any healthy stall.
    if let Some(mon) = card.dma().monitor() {
        mon.set_config(axi_bfm::AxiMonitorConfig {
            stall_bound: DMA_STALL_BOUND,
            ..mon.config()
        });
    }
    Ok(card)
}

impl XdmaIp {
    /// The engine of `c2h` channel `ch`, if the IP has it.
    fn engine(&mut self, c2h: bool, ch: usize) -> Option<&mut Engine> {
        if c2h {
            self.c2h.get_mut(ch)
        } else {
            self.h2c.get_mut(ch)
        }
    }

    /// Builds the card's top, resets it and the IP.
    pub fn new(cfg: IpConfig) -> Result<XdmaIp> {
        if !(1..=256).contains(&cfg.max_burst_beats) {
            return Err(IpError::Config(format!(
                "max_burst_beats {}: an AXI4 INCR burst has 1 to 256 beats",
                cfg.max_burst_beats
            )));
        }
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
        let mut ip = XdmaIp {
            irq: Irqs::new(cfg.user_irqs),
            cfg,
            card,
            h2c,
            c2h,
            credit_mode: 0,
            stats: IpStats::default(),
            pcie: Pcie::new(None),
            latency: Latency::default(),
            outbox: Outbox::default(),
            posted: Posted::default(),
        };
        ip.pcie = Pcie::new(ip.cfg.pcie);
        // No C2H stream takes data until an engine runs with descriptors for it.
        for e in &ip.c2h {
            if e.stream() {
                if let Some(s) = ip.card.c2h(e.port) {
                    s.set_enabled(false);
                }
            }
        }
        Ok(ip)
    }

    /// Bytes of the user BAR (what the card's `s_axil` decodes).
    pub fn user_bar_size(&self) -> u64 {
        self.card.bar_size()
    }

    /// The card behind the IP, for tests that look at it directly (the `test-util` feature).
    #[cfg(feature = "test-util")]
    pub fn card(&mut self) -> &mut CardHarness {
        &mut self.card
    }

    /// The card's harness, the IP given up: only for tests that hand a finished run's
    /// environment to a checker (see [`CardHarness::into_env`]).
    #[cfg(feature = "test-util")]
    pub fn into_card(self) -> CardHarness {
        self.card
    }

    /// What a front end sets on the card before its first call (the DDR controller, bus
    /// pauses) and the card's shape, without the card's model or ports.
    pub fn card_setup(&mut self) -> card_harness::CardSetup<'_> {
        self.card.setup()
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
                Bar::User => self.user_access(word_at, None, mem, irq)?,
                Bar::Dma => self.dma_read(word_at, irq),
            };
            let part = (u64::from(word) >> shift) & ((1u64 << (8 * n)) - 1);
            out |= part << (8 * done);
            done += n;
        }
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
                Bar::User => {
                    self.user_access(word_at, Some((data, strb)), mem, irq)?;
                }
                Bar::Dma => {
                    // The DMA BAR's registers take whole dwords; a narrow write merges into
                    // the dword's current value (which is what a read-modify-write would see).
                    let full = if strb == 0xF {
                        data
                    } else {
                        let keep = !(((1u64 << (8 * n)) - 1) << (8 * lane)) as u32;
                        (self.peek_dma(word_at) & keep) | data
                    };
                    self.dma_write(word_at, full, irq);
                }
            }
            done += n;
        }
        Ok(())
    }

    /// The function's interrupt configuration changed (a config space write).
    pub fn set_irq_mode(&mut self, mode: IrqMode, irq: &mut dyn InterruptSink) {
        if !self.irq.set_mode(mode) {
            return;
        }
        // What was signalled stays signalled: a request raised under the function mask waits
        // in the PBA and is sent from there.
        self.update_irq(irq);
        self.flush_pba(irq);
    }

    /// The simulated time of the card, in ps.
    pub fn now(&self) -> Ps {
        self.card.time_ps()
    }

    /// Runs the card for `cycles` of `axi_aclk`, the engines working as they go.
    pub fn run(
        &mut self,
        cycles: u64,
        mem: &mut dyn HostMemory,
        irq: &mut dyn InterruptSink,
    ) -> Result<()> {
        for _ in 0..cycles {
            // The IP is logic clocked by axi_aclk: it reacts to what its bus models saw at an
            // edge, and what it starts then goes out at that same edge, before they drive.
            self.card.rise()?;
            self.stats.cycles += 1;
            let now = self.now();
            self.pcie.advance(now);
            self.apply_posted(mem);
            let mut cx = Ctx {
                card: &mut self.card,
                pcie: &mut self.pcie,
                stats: &mut self.stats,
                latency: &mut self.latency,
                posted: &mut self.posted,
                mem: &mut *mem,
                alignment: self.cfg.alignment,
                max_burst_beats: self.cfg.max_burst_beats,
            };
            for e in self.h2c.iter_mut().chain(self.c2h.iter_mut()) {
                e.step(&mut cx)?;
            }
            for bit in self.card.take_irqs().into_iter().map(|e| e.bit) {
                self.irq.latch_user(bit);
            }
            self.update_irq(irq);
            self.card.drive()?;
        }
        Ok(())
    }

    /// Posted writes to host memory (write-backs) that have arrived by now.
    fn apply_posted(&mut self, mem: &mut dyn HostMemory) {
        let now = self.now();
        self.posted.apply(now, mem, &mut self.stats);
    }

    /// Hands the host the interrupt messages that have reached it by now.
    fn deliver(&mut self, sink: &mut dyn InterruptSink) {
        let now = self.now();
        self.outbox.deliver(now, sink);
    }

    /// When the next `axi_aclk` cycle that [`XdmaIp::run`] would run ends: its rising edge,
    /// the instant at which the engines next act.
    pub fn next_cycle_ps(&self) -> Ps {
        self.card.next_rise_ps()
    }

    /// The card-side latencies the engines' bursts have seen on `s_axi` so far.
    pub fn latency(&self) -> LatencyStats {
        self.latency.stats()
    }

    /// The IP's PCIe port: what a front end's own traffic on the link (register accesses)
    /// costs in time.
    pub fn pcie(&mut self) -> &mut Pcie {
        &mut self.pcie
    }

    /// Whether the engine of `c2h` channel `ch` is running (its status BUSY).
    pub fn engine_busy(&self, c2h: bool, ch: usize) -> bool {
        let e = if c2h {
            self.c2h.get(ch)
        } else {
            self.h2c.get(ch)
        };
        e.is_some_and(|e| e.run.is_some())
    }

    /// Whether any engine is running.
    pub fn busy(&self) -> bool {
        self.h2c.iter().chain(&self.c2h).any(|e| e.run.is_some())
    }

    /// Whether an engine whose run bit was cleared is still finishing its current descriptor
    /// (its status still BUSY). A front end whose host must not see the register write that
    /// stops an engine complete before the engine has stopped runs the card until this is
    /// false. An H2C stream engine is left out: it lets a packet it has begun out whole,
    /// which takes as long as the card's stream takes to accept it (without bound, if the
    /// card holds the stream off), and it writes nothing to host memory meanwhile.
    pub fn stopping(&self) -> bool {
        self.h2c
            .iter()
            .filter(|e| !e.stream())
            .chain(&self.c2h)
            .any(|e| e.stopping())
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

    /// Starts a dword access of the user BAR on the card's `s_axil`: a read, or a write of
    /// `write = (data, byte strobes)`. `None` for an offset past the BAR, which the IP does not
    /// pass to the card (a read of it returns zero).
    pub fn user_start(
        &mut self,
        addr: u64,
        write: Option<(u32, u8)>,
    ) -> Result<Option<UserAccess>> {
        if addr >= self.card.bar_size() {
            return Ok(None);
        }
        let txn = match write {
            Some((data, strb)) => {
                self.card
                    .regs()
                    .start_write(addr, u64::from(data), u64::from(strb))?
            }
            None => self.card.regs().start_read(addr)?,
        };
        Ok(Some(UserAccess {
            txn,
            write: write.is_some(),
            addr,
        }))
    }

    /// The end of a user BAR access, once the card has answered: what a read returns (all ones
    /// when the card answered with an error, as a failed PCIe read completes; a write's
    /// refusal has no answer for the host and is only logged).
    pub fn user_poll(&mut self, a: UserAccess) -> Result<Option<u32>> {
        if !self.card.regs().is_done(a.txn) {
            return Ok(None);
        }
        let (data, resp) = self.card.regs().take(a.txn)?;
        if resp.is_ok() {
            return Ok(Some(data as u32));
        }
        let what = if a.write { "write" } else { "read" };
        tracing::info!(
            addr = a.addr,
            ?resp,
            "user BAR {what} answered with an error"
        );
        Ok(Some(u32::MAX))
    }

    /// A user BAR access run to its end, the engines working meanwhile.
    fn user_access(
        &mut self,
        addr: u64,
        write: Option<(u32, u8)>,
        mem: &mut dyn HostMemory,
        irq: &mut dyn InterruptSink,
    ) -> Result<u32> {
        let Some(a) = self.user_start(addr, write)? else {
            return Ok(0);
        };
        for _ in 0..card_harness::REG_TIMEOUT {
            if let Some(v) = self.user_poll(a)? {
                return Ok(v);
            }
            self.run(1, mem, irq)?;
        }
        Err(IpError::Card(axi_bfm::BfmError::Timeout {
            clock: "axi_aclk".into(),
            cycles: card_harness::REG_TIMEOUT,
            time_ps: self.now(),
            what: format!("the card's answer to a user BAR access at {addr:#x}"),
        }))
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
                    // In fixed-address mode addresses and lengths go in whole beats of the
                    // data path (PG195's alignment and granularity tables); the driver reads
                    // the register again after changing the mode.
                    ereg::ALIGNMENTS if e.control & control::NON_INCR_ADDR != 0 => {
                        let w = self.card.dma().bus_bytes() as u32;
                        (w << 16) | (w << 8) | (ALIGNMENTS_LOW & 0xFF)
                    }
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
            Target::Irq => self.irq.peek(off - ireg::BASE, self.chan_pending()),
            Target::Config => match off - map::config::BASE {
                map::config::IDENTIFIER => Target::Config.identifier(0, false),
                // The link's sizes, encoded as in Device Control; untimed, the reference
                // board's 256-byte payload and 512-byte read requests.
                map::config::MAX_PAYLOAD => device_control_size(self.pcie.max_payload(), 1),
                map::config::MAX_READ => device_control_size(self.pcie.max_read_request(), 2),
                map::config::MSI_ENABLE => match self.irq.mode() {
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
            Target::MsiX => self.irq.msix_read(off - msix::TABLE),
        }
    }

    fn dma_read(&mut self, off: u64, irq: &mut dyn InterruptSink) -> u32 {
        let ch = ((off >> 8) & 0xF) as usize;
        match Target::of(off) {
            Some(t @ (Target::H2c | Target::C2h)) if off & 0xFF == ereg::STATUS_RC => {
                let v = self.peek_dma(off);
                if let Some(e) = self.engine(t == Target::C2h, ch) {
                    e.status &= !status::CLEARED_BY_READ;
                }
                self.update_irq(irq);
                v
            }
            Some(Target::Irq) => {
                let pending = self.chan_pending();
                let (v, changed) = self.irq.read(off - ireg::BASE, pending);
                if changed {
                    self.update_irq(irq);
                }
                v
            }
            _ => self.peek_dma(off),
        }
    }

    fn chan_pending(&self) -> u32 {
        self.h2c
            .iter()
            .chain(&self.c2h)
            .filter(|e| e.requesting())
            .fold(0, |acc, e| acc | 1 << e.irq_bit)
    }

    /// Signals what the IRQ block's requests newly raise: queued behind the IP's posted
    /// writes on the link, and handed to `sink` once they reach the host.
    fn update_irq(&mut self, sink: &mut dyn InterruptSink) {
        let req = self.irq.requests(self.chan_pending());
        let now = self.now();
        let mut out = self.outbox.sender(&mut self.pcie, now);
        self.irq.update(req, &mut out, &mut self.stats);
        self.deliver(sink);
    }

    /// Sends what waits in the PBA for vectors that are no longer masked.
    fn flush_pba(&mut self, sink: &mut dyn InterruptSink) {
        let now = self.now();
        let mut out = self.outbox.sender(&mut self.pcie, now);
        self.irq.flush_pba(&mut out, &mut self.stats);
        self.deliver(sink);
    }

    fn dma_write(&mut self, off: u64, v: u32, irq: &mut dyn InterruptSink) {
        let ch = ((off >> 8) & 0xF) as usize;
        let reg = off & 0xFF;
        match Target::of(off) {
            Some(t @ (Target::H2c | Target::C2h)) => {
                let c2h = t == Target::C2h;
                // A C2H engine runs in credit mode when its bit of the SGDMA common block's
                // credit mode register is set.
                let credit = c2h && self.credit_mode >> (16 + ch) & 1 == 1;
                let timing = self.pcie.config().copied();
                let Some(e) = self.engine(c2h, ch) else {
                    return;
                };
                match reg {
                    ereg::CONTROL | ereg::CONTROL_W1S | ereg::CONTROL_W1C => {
                        let was = e.control;
                        write_set_clear(&mut e.control, reg, ereg::CONTROL, v);
                        let now = e.control;
                        if now & control::RUN != 0 && was & control::RUN == 0 {
                            e.start(credit, timing);
                        } else if now & control::RUN == 0 && was & control::RUN != 0 {
                            e.stop();
                        }
                    }
                    ereg::POLL_WB_LO => e.wb = (e.wb & !0xFFFF_FFFF) | u64::from(v),
                    ereg::POLL_WB_HI => e.wb = (e.wb & 0xFFFF_FFFF) | (u64::from(v) << 32),
                    ereg::IE_MASK | ereg::IE_MASK_W1S | ereg::IE_MASK_W1C => {
                        write_set_clear(&mut e.ie_mask, reg, ereg::IE_MASK, v)
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
            Some(Target::Irq) => self.irq.write(off - ireg::BASE, v),
            Some(Target::SgdmaCommon) => {
                let r = off - common::BASE;
                if (common::CREDIT_MODE_ENABLE..=common::CREDIT_MODE_ENABLE_W1C).contains(&r) {
                    write_set_clear(&mut self.credit_mode, r, common::CREDIT_MODE_ENABLE, v);
                }
            }
            Some(Target::MsiX) => {
                // Sent at once behind the IP's posted writes, handed to the host with the
                // requests below.
                let now = self.now();
                let mut out = self.outbox.sender(&mut self.pcie, now);
                self.irq
                    .msix_write(off - msix::TABLE, v, &mut out, &mut self.stats);
            }
            Some(Target::Config) | None => {}
        }
        self.update_irq(irq);
    }
}

/// A size as PCIe's Device Control register encodes it (128 bytes << code), or `untimed` for
/// a port without a link, whose sizes are unbounded.
fn device_control_size(bytes: u64, untimed: u32) -> u32 {
    if bytes == u64::MAX {
        untimed
    } else {
        (bytes.max(128) / 128).trailing_zeros().min(5)
    }
}
