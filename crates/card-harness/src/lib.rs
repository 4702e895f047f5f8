//! card-harness: the card's top (`sim_top`, `card_core` or a variant of them) in an axi-bfm
//! environment, in one place for everything that drives the card: the RTL tests and the
//! register-level XDMA IP (crate `xdma-ip`) that the simulated card and the virtual machine
//! put in front of it.
//!
//! [`CardHarness`] owns what the top's ports mean on the board:
//! - the clocks: `axi_aclk` at 250 MHz (the XDMA IP's AXI clock) and, when the top has it and
//!   the harness is asked to run it, `ddr_clk` at 200 MHz (the MIG's ui_clk);
//! - the reset tree: both resets asserted together, `axi_aresetn` released on an `axi_aclk`
//!   edge and `ddr_rst` on a `ddr_clk` edge, as the XDMA IP and the MIG each release their own
//!   user reset synchronously to their own clock;
//! - a bus model with its protocol monitor on every XDMA-side port: an AXI4-Lite master on
//!   `s_axil` (the user BAR), an AXI4 master on `s_axi` (the memory-mapped DMA port), an
//!   AXI-Stream source on every `s_axis_h2c<k>` and a sink on every `m_axis_c2h<k>`, the
//!   streams checked with the XDMA packing rule;
//! - the user-interrupt handshake (`usr_irq_req`/`usr_irq_ack`), acknowledged as the IP does
//!   or by hand ([`IrqAck`]), with every acknowledge logged;
//! - the card's memory size, read from the RTL (the DDR3 model's size parameter);
//! - the deliberate faults of `sim_top` ([`Fault`]), each a sim-only input held from before
//!   reset: high for the fault the configuration selects, low for the others.
//!
//! [`CardTop::from_name`] is where a card named by a user (`[sim] top`, `--top`) becomes a top
//! of this build and the fault to turn on: a fault's name (`sim_top_fault_rd_beat`,
//! `sim_top_fault_seq`) selects `sim_top` with that fault.
//!
//! Outside this crate the card is reached only through the harness's methods: its fields are
//! private, a front end sets what it may through [`CardHarness::setup`] ([`CardSetup`]: the
//! DDR controller's settings, bus pauses, the card's shape) and tells which bus a protocol
//! violation is on by [`CardBus`]. The environment, where the model names the ports, is
//! reachable (`CardHarness::env`) only with the `test-util` feature, which only
//! dev-dependencies turn on.
//!
//! The harness knows nothing of PCIe, the host or its driver: timing the card as a host sees it
//! is the job of the XDMA IP model (crate `xdma-ip`, with its PCIe port), which drives these
//! same bus models.
//!
//! [`loop_rate`] measures a figure of the card alone on it: the LOOP rate with C2H always
//! ready, which the simulated backend reports and the RTL tests' example prints.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use axi_bfm::{
    Agent, AxiMaster, AxiMasterConfig, AxilMaster, AxisMonitor, AxisMonitorConfig, AxisSink,
    AxisSource, BfmError, Cx, Env, PauseSpec, ResetPolarity, Result, TxnId,
};
use card_sim::{ClockId, DdrBackdoor, Model, Port, Top};

mod bus;
mod fault;
mod loop_rate;
mod setup;
pub use bus::{CardBus, CardBuses};
pub use fault::{CardTop, Fault, UnknownTop};
pub use loop_rate::{loop_rate, LoopRate};
pub use setup::{CardSetup, DdrController};

/// The reference board's AXI clock (`axi_aclk`, the XDMA IP's user clock).
pub const AXI_HZ: u64 = 250_000_000;
/// The reference board's DDR controller clock (`ddr_clk`, the MIG's ui_clk).
pub const DDR_HZ: u64 = 200_000_000;
/// Edges each reset is held at start: more than every synchronous reset in the card needs.
pub const RESET_CYCLES: u64 = 8;
/// Longest wait for one register access, in `axi_aclk` cycles.
pub const REG_TIMEOUT: u64 = 2_000;

/// How the harness acknowledges user interrupt requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IrqAck {
    /// Only when asked ([`CardHarness::ack_irq`]): a test holds the request and looks at it.
    Manual,
    /// This many `axi_aclk` edges after the edge that first sees a request: `After(0)` is what
    /// the XDMA IP does, a one-cycle acknowledge pulse right after it sees the request.
    After(u64),
}

/// One acknowledged user interrupt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IrqEvent {
    /// The request bit.
    pub bit: u32,
    /// Simulated time of the acknowledge, in ps.
    pub time_ps: u64,
    /// The `axi_aclk` edge after which the acknowledge was driven.
    pub cycle: u64,
}

/// The XDMA IP's side of the user interrupt handshake, for up to 16 request bits: the card
/// raises a bit of `usr_irq_req` and holds it; the IP pulses the matching bit of
/// `usr_irq_ack` for one cycle; the card then drops the request. A bit acknowledged is not
/// acknowledged again until it has been seen low.
#[derive(Debug)]
struct IrqAgent {
    req: Port,
    ack: Port,
    mask: u64,
    policy: IrqAck,
    /// Request bits sampled before this edge.
    seen: u64,
    /// Bits acknowledged and not yet seen low again.
    acked: u64,
    /// Edges each bit has been seen requesting without an acknowledge.
    high_for: [u64; 16],
    /// A pulse driven by hand, to be dropped at the next edge.
    manual: u64,
    log: VecDeque<IrqEvent>,
    acks: u64,
}

impl IrqAgent {
    fn record(&mut self, bits: u64, time_ps: u64, cycle: u64) {
        for bit in 0..16u32 {
            if bits >> bit & 1 == 1 {
                self.log.push_back(IrqEvent {
                    bit,
                    time_ps,
                    cycle,
                });
                self.acks += 1;
                self.high_for[bit as usize] = 0;
            }
        }
        self.acked |= bits;
    }
}

impl Agent for IrqAgent {
    fn sample(&mut self, model: &Model, _cx: &Cx) -> Result<()> {
        self.seen = model.get(self.req) & self.mask;
        Ok(())
    }

    fn drive(&mut self, model: &mut Model, cx: &Cx) -> Result<()> {
        self.manual = 0;
        if cx.in_reset {
            self.acked = 0;
            self.high_for = [0; 16];
            model.set(self.ack, 0);
            return Ok(());
        }
        // A request seen low again may be acknowledged the next time it rises.
        self.acked &= self.seen;
        let mut ack = 0u64;
        if let IrqAck::After(n) = self.policy {
            let waiting = self.seen & !self.acked;
            for bit in 0..16usize {
                if waiting >> bit & 1 == 1 {
                    self.high_for[bit] += 1;
                    if self.high_for[bit] > n {
                        ack |= 1 << bit;
                    }
                }
            }
        }
        self.record(ack, cx.time_ps, cx.cycle);
        model.set(self.ack, ack);
        Ok(())
    }
}

/// Handshakes of the card's streams, counted before every `axi_aclk` edge.
#[derive(Debug, Default)]
struct StreamCounts {
    h2c_beats: Vec<u64>,
    h2c_stalls: Vec<u64>,
    c2h_beats: Vec<u64>,
}

/// An agent made of two closures: `sample` runs before each rising edge of its clock and sees
/// the values the edge registers, `drive` runs after the edge.
struct Hook<S, D> {
    sample: S,
    drive: D,
}

impl<S, D> Agent for Hook<S, D>
where
    S: FnMut(&Model, &Cx),
    D: FnMut(&mut Model, &Cx),
{
    fn sample(&mut self, model: &Model, cx: &Cx) -> Result<()> {
        (self.sample)(model, cx);
        Ok(())
    }

    fn drive(&mut self, model: &mut Model, cx: &Cx) -> Result<()> {
        (self.drive)(model, cx);
        Ok(())
    }
}

/// Adds an agent of two closures on `clock` to the environment: `sample` runs before each
/// rising edge (to record handshakes), `drive` after it (to drive inputs no bus model owns).
pub fn hook<S, D>(env: &mut Env, clock: ClockId, sample: S, drive: D)
where
    S: FnMut(&Model, &Cx) + 'static,
    D: FnMut(&mut Model, &Cx) + 'static,
{
    env.add_agent(clock, Rc::new(RefCell::new(Hook { sample, drive })));
}

/// Adds a hook that only samples.
pub fn on_sample<S>(env: &mut Env, clock: ClockId, sample: S)
where
    S: FnMut(&Model, &Cx) + 'static,
{
    hook(env, clock, sample, |_: &mut Model, _: &Cx| {});
}

/// Whether a valid/ready pair completes a handshake at the coming edge.
pub fn fires(m: &Model, valid: Port, ready: Port) -> bool {
    m.get_bool(valid) && m.get_bool(ready)
}

/// How to build a harness.
#[derive(Debug, Clone)]
pub struct HarnessConfig {
    /// The RTL top.
    pub top: Top,
    /// The model's name (waveform files are named after it); default: the thread's name.
    pub name: Option<String>,
    /// Run `ddr_clk` (the top must have it). A test that never touches DDR leaves it off and
    /// runs faster; the DDR side then stays frozen in reset.
    pub ddr_clock: bool,
    /// Protocol monitors on every bus. Default true; turning them off trades the checks for
    /// speed in long runs whose buses are known good.
    pub monitors: bool,
    /// The `s_axi` master's splitting and outstanding limits.
    pub dma: AxiMasterConfig,
    /// Cycles an H2C stream beat may wait for the card's TREADY before the stream monitor
    /// reports a stall (0: no bound).
    pub h2c_stall_bound: u64,
    /// Keep every C2H frame's first and last edge in the streams' monitors.
    pub c2h_record: bool,
    /// How user interrupts are acknowledged.
    pub irq_ack: IrqAck,
    /// The deliberate fault to turn on (the top must have its input), or none: the card as
    /// built. The model's name then ends in `.<fault name>`, so that its waveform and coverage
    /// files say which card they are of.
    pub fault: Option<Fault>,
}

impl HarnessConfig {
    /// The defaults for `top`: `ddr_clk` running when the top has a DDR3 model, monitors on,
    /// the bus models' default limits, the stream monitor's default stall bound, interrupts
    /// acknowledged by hand.
    pub fn new(top: Top) -> HarnessConfig {
        HarnessConfig {
            top,
            name: None,
            ddr_clock: true,
            monitors: true,
            dma: AxiMasterConfig::default(),
            h2c_stall_bound: AxisMonitorConfig::default().stall_bound,
            c2h_record: true,
            irq_ack: IrqAck::Manual,
            fault: None,
        }
    }

    /// The defaults of [`HarnessConfig::new`] for a card as a name selects it: its top, with
    /// its fault.
    pub fn for_card(card: CardTop) -> HarnessConfig {
        HarnessConfig {
            fault: card.fault,
            ..HarnessConfig::new(card.top)
        }
    }
}

/// The card's top in an environment, with a bus model (and its protocol monitor) on every
/// interface, its clocks and resets, and the user-interrupt handshake. See the crate
/// documentation for what each port is driven by.
///
/// Its bus models and environment are private: outside the harness, the card is reached only
/// through its methods, and the environment (where the model names the card's ports) only in a
/// build with the `test-util` feature, which only dev-dependencies turn on. So this does not
/// compile:
///
/// ```compile_fail
/// fn the_model(card: &card_harness::CardHarness) {
///     let _ = card.env.model();
/// }
/// ```
///
/// and neither do its clocks, whose ids are of use only with the environment:
///
/// ```compile_fail
/// fn the_clocks(card: &card_harness::CardHarness) {
///     let _ = (card.clk, card.ddr_clk);
/// }
/// ```
#[derive(Debug)]
pub struct CardHarness {
    // The fields are private so that the harness stays the one place that knows the card's
    // ports: the environment (and through it the model, where ports are looked up by name) and
    // the clocks it runs are reachable from outside only in builds with the `test-util`
    // feature.
    /// The environment: the model and every agent.
    env: Env,
    /// `axi_aclk`.
    clk: ClockId,
    /// `ddr_clk`, when it runs. Only tests ask for it: the harness itself drives the clock
    /// through the environment.
    #[cfg(feature = "test-util")]
    ddr_clk: Option<ClockId>,
    /// The register BAR's master (`s_axil`).
    regs: AxilMaster,
    /// The memory-mapped DMA port's master (`s_axi`).
    dma: AxiMaster,
    /// The H2C stream sources, `s_axis_h2c<k>` in order.
    h2c: Vec<AxisSource>,
    /// The C2H stream sinks, `m_axis_c2h<k>` in order (ready on every cycle unless paused or
    /// turned off).
    c2h: Vec<AxisSink>,
    h2c_names: Vec<String>,
    c2h_names: Vec<String>,
    counts: Rc<RefCell<StreamCounts>>,
    irq: Rc<RefCell<IrqAgent>>,
    memory_size: Option<u64>,
    bar_size: u64,
    reset_cycles: u64,
    fault: Option<Fault>,
}

/// The stream ports `<prefix><k>` the top has, in order from 0.
fn stream_ports(model: &Model, prefix: &str) -> Vec<String> {
    (0..)
        .map(|k| format!("{prefix}{k}"))
        .take_while(|p| model.port(&format!("{p}_tvalid")).is_ok())
        .collect()
}

impl CardHarness {
    /// Builds `top` with the defaults of [`HarnessConfig::new`], with or without `ddr_clk`,
    /// and resets it.
    pub fn new(top: Top, ddr_clock: bool) -> Result<CardHarness> {
        CardHarness::with_config(HarnessConfig {
            ddr_clock,
            ..HarnessConfig::new(top)
        })
    }

    /// Builds the top, starts its clocks, attaches the bus models and resets the card.
    pub fn with_config(cfg: HarnessConfig) -> Result<CardHarness> {
        let mut builder = Model::builder(cfg.top);
        if let Some(n) = model_name(&cfg) {
            builder = builder.name(n);
        }
        let mut model = builder.build()?;
        drive_faults(&mut model, cfg.fault)?;
        let mut env = Env::new(model);
        env.set_monitors(cfg.monitors);
        let clk = env.add_clock("axi_aclk", AXI_HZ)?;
        let has_ddr_clk = env.model().port("ddr_clk").is_ok();
        // In the randomized build (`SIM_X`) a DDR side without a clock would never take
        // its reset and would keep its random state: its clock runs whenever that build is
        // asked for.
        let ddr_clock = cfg.ddr_clock || randomized_build();
        let ddr_clk = if ddr_clock && has_ddr_clk {
            Some(env.add_clock("ddr_clk", DDR_HZ)?)
        } else {
            None
        };
        env.add_reset(clk, "axi_aresetn", ResetPolarity::ActiveLow)?;
        if env.model().port("ddr_rst").is_ok() {
            // The DDR side's reset belongs to its own clock; with that clock stopped it is
            // released with the AXI reset and the DDR side simply never runs.
            env.add_reset(ddr_clk.unwrap_or(clk), "ddr_rst", ResetPolarity::ActiveHigh)?;
        }
        settle_in_reset(&mut env, clk)?;
        let regs = AxilMaster::attach(&mut env, bus::REGISTERS, clk)?;
        let dma = AxiMaster::attach_with(&mut env, bus::DMA, clk, cfg.dma)?;
        let h2c_names = stream_ports(env.model(), "s_axis_h2c");
        let c2h_names = stream_ports(env.model(), "m_axis_c2h");
        // The stream monitors carry the XDMA settings: TKEEP packed as the IP requires it.
        let mut h2c = Vec::new();
        for p in &h2c_names {
            let source = AxisSource::attach(&mut env, p, clk)?;
            if let Some(mon) = source.monitor() {
                mon.set_config(AxisMonitorConfig {
                    tkeep_packed: true,
                    stall_bound: cfg.h2c_stall_bound,
                    ..mon.config()
                });
            }
            h2c.push(source);
        }
        let mut c2h = Vec::new();
        for p in &c2h_names {
            let sink = AxisSink::attach(&mut env, p, clk)?;
            if let Some(mon) = sink.monitor() {
                // The host may hold TREADY low as long as it likes (no receive posted): no
                // stall bound on the card's C2H streams.
                mon.set_config(AxisMonitorConfig {
                    tkeep_packed: true,
                    stall_bound: 0,
                    record: cfg.c2h_record,
                    ..mon.config()
                });
            }
            c2h.push(sink);
        }
        let counts = Rc::new(RefCell::new(StreamCounts {
            h2c_beats: vec![0; h2c_names.len()],
            h2c_stalls: vec![0; h2c_names.len()],
            c2h_beats: vec![0; c2h_names.len()],
        }));
        {
            let m = env.model();
            let pair = |p: &String, v: &str, r: &str| -> Result<(Port, Port)> {
                Ok((m.port(&format!("{p}_{v}"))?, m.port(&format!("{p}_{r}"))?))
            };
            let h: Vec<(Port, Port)> = h2c_names
                .iter()
                .map(|p| pair(p, "tvalid", "tready"))
                .collect::<Result<_>>()?;
            let c: Vec<(Port, Port)> = c2h_names
                .iter()
                .map(|p| pair(p, "tvalid", "tready"))
                .collect::<Result<_>>()?;
            let counts = counts.clone();
            on_sample(&mut env, clk, move |m, cx| {
                if cx.in_reset {
                    return;
                }
                let mut n = counts.borrow_mut();
                for (k, &(v, r)) in h.iter().enumerate() {
                    if m.get_bool(v) {
                        if m.get_bool(r) {
                            n.h2c_beats[k] += 1;
                        } else {
                            n.h2c_stalls[k] += 1;
                        }
                    }
                }
                for (k, &(v, r)) in c.iter().enumerate() {
                    if fires(m, v, r) {
                        n.c2h_beats[k] += 1;
                    }
                }
            });
        }
        let req = env.model().port("usr_irq_req")?;
        let ack = env.model().input("usr_irq_ack")?;
        let bits = req.width().min(16);
        let irq = Rc::new(RefCell::new(IrqAgent {
            req,
            ack,
            mask: (1u64 << bits) - 1,
            policy: cfg.irq_ack,
            seen: 0,
            acked: 0,
            high_for: [0; 16],
            manual: 0,
            log: VecDeque::new(),
            acks: 0,
        }));
        env.add_agent(clk, irq.clone());
        let memory_size = env.model().ddr_size().ok();
        let bar_size = 1u64 << env.model().port("s_axil_awaddr")?.width();

        // Both resets asserted together, then each domain released on an edge of its own clock.
        if let Some(d) = ddr_clk {
            {
                let m = env.model_mut();
                let rstn = m.input("axi_aresetn")?;
                m.set_bool(rstn, false);
                m.eval()?;
            }
            env.reset(d, RESET_CYCLES)?;
        }
        env.reset(clk, RESET_CYCLES)?;
        let mut card = CardHarness {
            env,
            clk,
            #[cfg(feature = "test-util")]
            ddr_clk,
            regs,
            dma,
            h2c,
            c2h,
            h2c_names,
            c2h_names,
            counts,
            irq,
            memory_size,
            bar_size,
            reset_cycles: 0,
            fault: cfg.fault,
        };
        card.ticks(4)?;
        card.reset_cycles = card.env.cycles(clk);
        Ok(card)
    }

    /// The environment: the model and every agent. Only for tests, which look at the model
    /// and drive it directly; everything else reaches the card through the harness's methods.
    #[cfg(feature = "test-util")]
    pub fn env(&self) -> &Env {
        &self.env
    }

    /// The environment, to change: only for tests (see [`CardHarness::env`]).
    #[cfg(feature = "test-util")]
    pub fn env_mut(&mut self) -> &mut Env {
        &mut self.env
    }

    /// A randomizing slave on the DMA master's port where the top passes it out (`sim_top_tap`,
    /// sim_top's PATH 2, with nothing of the card behind it): only for tests that fuzz the XDMA
    /// IP model's master. Fails on a top without that port.
    #[cfg(feature = "test-util")]
    pub fn attach_tap_slave(
        &mut self,
        choices: axi_bfm::random_slave::SlaveChoices,
    ) -> Result<axi_bfm::RandomAxiSlave> {
        axi_bfm::RandomAxiSlave::attach(&mut self.env, bus::TAP, self.clk, choices)
    }

    /// The environment, the harness given up: only for tests that hand a finished run to a
    /// checker that takes the environment (master fuzzing's judge, say).
    #[cfg(feature = "test-util")]
    pub fn into_env(self) -> Env {
        self.env
    }

    /// `axi_aclk` in the environment, for tests that hook or run the model on it (see
    /// [`CardHarness::env`]).
    #[cfg(feature = "test-util")]
    pub fn clk(&self) -> ClockId {
        self.clk
    }

    /// `ddr_clk` in the environment, when the top runs it: only for tests (see
    /// [`CardHarness::env`]).
    #[cfg(feature = "test-util")]
    pub fn ddr_clk(&self) -> Option<ClockId> {
        self.ddr_clk
    }

    /// The register BAR's master (on `s_axil`).
    pub fn regs(&self) -> &AxilMaster {
        &self.regs
    }

    /// The memory-mapped DMA port's master (on `s_axi`).
    pub fn dma(&self) -> &AxiMaster {
        &self.dma
    }

    /// Runs `axi_aclk` until the DMA port's transaction `txn` is done (within the bus model's
    /// own bound).
    pub fn wait_dma(&mut self, txn: TxnId) -> Result<()> {
        self.dma.wait(&mut self.env, txn)
    }

    /// The source of H2C stream `k` (`s_axis_h2c<k>`), if the top has it.
    pub fn h2c(&self, k: usize) -> Option<&AxisSource> {
        self.h2c.get(k)
    }

    /// The sink of C2H stream `k` (`m_axis_c2h<k>`), if the top has it.
    pub fn c2h(&self, k: usize) -> Option<&AxisSink> {
        self.c2h.get(k)
    }

    /// Simulated time, in ps.
    pub fn time_ps(&self) -> u64 {
        self.env.time_ps()
    }

    /// The settings a front end gives the card before its first call, and the card's shape:
    /// what the simulated backend needs of the card besides the IP in front of it.
    pub fn setup(&mut self) -> CardSetup<'_> {
        CardSetup { card: self }
    }

    /// The deliberate fault turned on, if any.
    pub fn fault(&self) -> Option<Fault> {
        self.fault
    }

    /// Bytes of card memory behind `s_axi`: the DDR3 model's size, from the RTL; `None` for a
    /// top without DDR.
    pub fn memory_size(&self) -> Option<u64> {
        self.memory_size
    }

    /// Bytes of the user BAR: what `s_axil`'s address width reaches.
    pub fn bar_size(&self) -> u64 {
        self.bar_size
    }

    /// User interrupt request lines (`usr_irq_req` bits, at most 16).
    pub fn irq_lines(&self) -> usize {
        self.irq.borrow().mask.count_ones() as usize
    }

    /// The H2C stream ports' names, in channel order.
    pub fn h2c_ports(&self) -> &[String] {
        &self.h2c_names
    }

    /// The C2H stream ports' names, in channel order.
    pub fn c2h_ports(&self) -> &[String] {
        &self.c2h_names
    }

    /// `axi_aclk` cycles since the card came out of reset.
    pub fn cycle_count(&self) -> u64 {
        self.env.cycles(self.clk) - self.reset_cycles
    }

    /// When the next `axi_aclk` rising edge comes: where [`CardHarness::cycle`] goes next.
    pub fn next_rise_ps(&self) -> u64 {
        // Odd edges rise: the next rising edge is edge 2n + 1 after n completed cycles.
        card_sim::edge_time_ps(2 * self.env.cycles(self.clk) + 1, AXI_HZ)
    }

    /// One `axi_aclk` cycle.
    pub fn cycle(&mut self) -> Result<()> {
        self.env.tick(self.clk)
    }

    /// Runs to the next `axi_aclk` rising edge and stops before the bus models drive after
    /// it (see [`Env::rise`]): what the caller starts on them now goes out at this edge, as
    /// from logic clocked by it. [`CardHarness::drive`] completes the edge. For a model of the
    /// logic beside the card (the XDMA IP) that reaches the card only through its bus models
    /// and interrupt log; all of the harness's agents run on `axi_aclk`, so the falling edge
    /// that follows evaluates what they drove, and the model is not settled on return.
    pub fn rise(&mut self) -> Result<()> {
        self.env.rise(self.clk)
    }

    /// Completes the edge that [`CardHarness::rise`] stopped in: the bus models drive.
    pub fn drive(&mut self) -> Result<()> {
        self.env.drive()
    }

    /// `n` `axi_aclk` cycles.
    pub fn ticks(&mut self, n: u64) -> Result<()> {
        self.env.run(self.clk, n)
    }

    /// Runs `axi_aclk` cycles until `done` holds, at most `limit`; returns the cycles taken.
    /// `done` may access registers (which runs cycles of its own).
    pub fn run_until(
        &mut self,
        limit: u64,
        what: &str,
        mut done: impl FnMut(&mut CardHarness) -> Result<bool>,
    ) -> Result<u64> {
        for n in 0..limit {
            if done(self)? {
                return Ok(n);
            }
            self.cycle()?;
        }
        Err(BfmError::Timeout {
            clock: self.env.model().clock_name(self.clk).to_string(),
            cycles: limit,
            time_ps: self.env.time_ps(),
            what: what.to_string(),
        })
    }

    /// A register read over the BAR; a response other than OKAY is an error.
    pub fn read(&mut self, addr: u32) -> Result<u32> {
        let t = self.regs.start_read(u64::from(addr))?;
        self.wait_reg(t, "register read")?;
        let (data, resp) = self.regs.take(t)?;
        if !resp.is_ok() {
            return Err(BfmError::Response {
                bus: bus::REGISTERS.into(),
                what: "read",
                addr: u64::from(addr),
                resp,
            });
        }
        Ok(data as u32)
    }

    /// A 64-bit counter: the low word, then the (latched) high word.
    pub fn read64(&mut self, lo_addr: u32) -> Result<u64> {
        let lo = self.read(lo_addr)?;
        let hi = self.read(lo_addr + 4)?;
        Ok(u64::from(lo) | (u64::from(hi) << 32))
    }

    /// A register write of a whole word; a response other than OKAY is an error.
    pub fn write(&mut self, addr: u32, data: u32) -> Result<()> {
        self.write_strb(addr, data, 0xf)
    }

    /// A register write with byte strobes.
    pub fn write_strb(&mut self, addr: u32, data: u32, strb: u8) -> Result<()> {
        let t = self
            .regs
            .start_write(u64::from(addr), u64::from(data), u64::from(strb))?;
        self.wait_reg(t, "register write")?;
        let (_, resp) = self.regs.take(t)?;
        if !resp.is_ok() {
            return Err(BfmError::Response {
                bus: bus::REGISTERS.into(),
                what: "write",
                addr: u64::from(addr),
                resp,
            });
        }
        Ok(())
    }

    fn wait_reg(&mut self, t: TxnId, what: &str) -> Result<()> {
        let regs = self.regs.clone();
        self.env
            .run_until(self.clk, REG_TIMEOUT, what, |_| regs.is_done(t))?;
        Ok(())
    }

    /// Queues a frame on H2C stream 0; it follows what is queued before it back to back.
    pub fn send_h2c(&mut self, frame: &[u8]) -> Result<()> {
        self.h2c_source(0)?
            .start_send(axi_bfm::AxisFrame::new(frame.to_vec()))
    }

    fn h2c_source(&self, ch: usize) -> Result<&AxisSource> {
        self.h2c.get(ch).ok_or_else(|| BfmError::BadRequest {
            bus: self.env.model().name().to_string(),
            problem: format!(
                "H2C stream {ch}: the top has {} H2C stream port(s)",
                self.h2c.len()
            ),
        })
    }

    /// Whether H2C stream 0 still has frames to send.
    pub fn h2c_busy(&self) -> bool {
        self.h2c.first().is_some_and(|s| !s.idle())
    }

    /// Beats H2C stream 0 took since the card was built.
    pub fn h2c_beats(&self) -> u64 {
        self.counts.borrow().h2c_beats.first().copied().unwrap_or(0)
    }

    /// Cycles on which H2C stream 0 offered a beat that the card did not take.
    pub fn h2c_stalls(&self) -> u64 {
        self.counts
            .borrow()
            .h2c_stalls
            .first()
            .copied()
            .unwrap_or(0)
    }

    /// Sets whether the host takes beats on C2H stream `ch`: always, or never.
    pub fn set_c2h_ready(&mut self, ch: usize, ready: bool) {
        let spec = if ready {
            PauseSpec::Never
        } else {
            PauseSpec::Always
        };
        if let Some(s) = self.c2h.get(ch) {
            s.set_pauses(&spec);
        }
    }

    /// Complete frames received on C2H stream `ch` and not yet taken.
    pub fn c2h_frames(&self, ch: usize) -> usize {
        self.c2h.get(ch).map_or(0, AxisSink::pending)
    }

    /// Beats received on C2H stream `ch` since the card was built.
    pub fn c2h_beats(&self, ch: usize) -> u64 {
        self.counts.borrow().c2h_beats.get(ch).copied().unwrap_or(0)
    }

    /// Takes the frames received on C2H stream `ch`, with the edges of their first and last
    /// beats from the stream's monitor (0 when monitors are off).
    pub fn take_c2h(&mut self, ch: usize) -> Vec<Frame> {
        let Some(sink) = self.c2h.get(ch) else {
            return Vec::new();
        };
        let times = sink
            .monitor()
            .map(AxisMonitor::take_frames)
            .unwrap_or_default();
        let mut out = Vec::new();
        let mut times = times.into_iter();
        while let Some(f) = sink.try_recv() {
            let t = times.next();
            out.push(Frame {
                bytes: f.data,
                first_cycle: t.as_ref().map_or(0, |t| t.start_cycle),
                last_cycle: t.as_ref().map_or(0, |t| t.end_cycle),
            });
        }
        out
    }

    /// Whether the card requests user interrupt 0 now.
    pub fn irq_req(&self) -> bool {
        let req = self.irq.borrow().req;
        self.env.model().get(req) & 1 == 1
    }

    /// Pulses `usr_irq_ack` bit 0 for one cycle: driven now, taken by the card at the next
    /// edge, dropped after it.
    pub fn ack_irq(&mut self) -> Result<()> {
        {
            let mut irq = self.irq.borrow_mut();
            let (time, cycle) = (self.env.time_ps(), self.env.cycles(self.clk));
            irq.record(1, time, cycle);
            irq.manual = 1;
            let ack = irq.ack;
            drop(irq);
            let m = self.env.model_mut();
            m.set(ack, 1);
            m.eval()?;
        }
        self.cycle()
    }

    /// Changes how interrupts are acknowledged from now on.
    pub fn set_irq_ack(&mut self, policy: IrqAck) {
        self.irq.borrow_mut().policy = policy;
    }

    /// Acknowledges a raised request automatically this many cycles after it rises, or only by
    /// hand (`None`).
    pub fn set_irq_auto_ack(&mut self, after: Option<u64>) {
        self.set_irq_ack(after.map_or(IrqAck::Manual, |n| IrqAck::After(n.saturating_sub(1))));
    }

    /// Acknowledge pulses given so far, over all bits.
    pub fn irq_acks(&self) -> u64 {
        self.irq.borrow().acks
    }

    /// Takes the acknowledged interrupts logged since the last call, oldest first.
    pub fn take_irqs(&self) -> Vec<IrqEvent> {
        self.irq.borrow_mut().log.drain(..).collect()
    }

    /// Reads DDR through the backdoor of the DDR3 model.
    pub fn ddr_read(&self, addr: u64, out: &mut [u8]) -> Result<()> {
        Ok(self.env.model().ddr_read(addr, out)?)
    }

    /// Writes DDR through the backdoor of the DDR3 model.
    pub fn ddr_write(&mut self, addr: u64, data: &[u8]) -> Result<()> {
        Ok(self.env.model_mut().ddr_write(addr, data)?)
    }
}

/// A frame received on a C2H stream, with the `axi_aclk` edges of its first and last beat.
#[derive(Debug, Clone)]
pub struct Frame {
    /// The frame's bytes (TKEEP applied).
    pub bytes: Vec<u8>,
    /// Edge number of the first beat's handshake.
    pub first_cycle: u64,
    /// Edge number of the last beat's handshake.
    pub last_cycle: u64,
}

/// The model's name: the configured one (by default the thread's, as the runtime names a
/// model), with `.<fault name>` after it when a fault is on. `None` leaves the runtime's
/// default.
fn model_name(cfg: &HarnessConfig) -> Option<String> {
    let Some(fault) = cfg.fault else {
        return cfg.name.clone();
    };
    let base = cfg.name.clone().unwrap_or_else(|| {
        std::thread::current()
            .name()
            .map_or_else(|| "model".to_string(), str::to_string)
    });
    Some(format!("{base}.{}", fault.name()))
}

/// Holds every fault input the top has, before the first edge: high for `selected`, low for
/// the others. They are driven even when low because a randomized build (`SIM_X`) need
/// not start an input at 0. A fault selected on a top without its input is an error: running
/// the good card in its place would pass the tests that must catch the fault.
fn drive_faults(model: &mut Model, selected: Option<Fault>) -> Result<()> {
    for &fault in Fault::ALL {
        let on = selected == Some(fault);
        match model.input(fault.input()) {
            Ok(port) => model.set(port, u64::from(on)),
            Err(_) if !on => {}
            Err(e) => {
                return Err(BfmError::Bind {
                    bus: fault.input().to_string(),
                    problem: format!(
                        "the fault {} needs this input, which {}'s top `{}` lacks ({e}); it is an input of `{}`",
                        fault.name(),
                        model.name(),
                        model.top().name(),
                        fault.top().name()
                    ),
                })
            }
        }
    }
    model.eval()?;
    Ok(())
}

/// Whether the randomized build is asked for (`SIM_X`, see card-sim).
pub fn randomized_build() -> bool {
    card_sim::randomized_build_requested()
}

/// Runs two edges of `clock` with its resets asserted before any bus model is attached. A
/// synchronous reset needs an edge to act, and in the randomized build the registers start
/// from random values; the monitors then check the reset rules from an edge at which the reset
/// has acted.
pub fn settle_in_reset(env: &mut Env, clock: ClockId) -> Result<()> {
    env.reset(clock, 2)
}
