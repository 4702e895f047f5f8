//! The environment: one model, its resets and the agents that drive and watch it.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use sim_runtime::{ClockId, Edges, Model, Port, PortSet};

use crate::error::{BfmError, Result};
use crate::pause::PauseSpec;
use crate::protocol::Violation;
use crate::signal_map::SignalMapping;

/// The cycle limit of blocking bus operations unless a bus model is configured otherwise.
pub const DEFAULT_TIMEOUT_CYCLES: u64 = 100_000;

/// What an agent knows about the edge it is called for.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cx {
    /// Simulated time of the edge in picoseconds.
    pub time_ps: u64,
    /// The edge's number on the agent's clock, counting from 1.
    pub cycle: u64,
    /// The agent's reset as sampled before the edge (false when the clock has no reset).
    pub in_reset: bool,
    /// The reset's level when driving, after the edge: a reset released at this edge is
    /// already false here while `in_reset` is still true.
    pub reset_now: bool,
}

impl Cx {
    /// Whether a model that drives VALID holds its outputs in reset for this edge. A model with
    /// the `valid_right_after_reset` fault looks at the reset after the edge, so it raises
    /// VALID on the very edge the reset is released at; a correct one waits for the next.
    pub fn holds_in_reset(&self, valid_right_after_reset: bool) -> bool {
        if valid_right_after_reset {
            self.reset_now
        } else {
            self.in_reset
        }
    }
}

/// Something that takes part in every rising edge of one clock.
///
/// `sample` runs before the edge and sees the settled values that the edge will register;
/// `drive` runs after it and sets the agent's inputs for the next edge. Neither may step the
/// model.
pub trait Agent {
    /// Reads the bus before the edge. A protocol monitor returns the first violation here.
    fn sample(&mut self, model: &Model, cx: &Cx) -> Result<()>;
    /// Drives the agent's inputs after the edge.
    fn drive(&mut self, model: &mut Model, cx: &Cx) -> Result<()>;
    /// Installs pause generators on every channel the agent drives; `salt` makes the channels
    /// of different agents draw different sequences from one seed. The default does nothing.
    fn set_pauses(&mut self, spec: &PauseSpec, salt: u64) {
        let _ = (spec, salt);
    }
    /// True for a protocol monitor: [`Env::set_monitors`] switches these on and off.
    fn is_monitor(&self) -> bool {
        false
    }
    /// Forgets what the agent tracked, for a monitor switched back on after a pause during
    /// which it saw nothing. The default does nothing.
    fn restart(&mut self) {}
    /// The end-of-test check ([`Env::finish`]): a monitor reports what is still owed (every
    /// accepted request answered once). The default has nothing to report.
    fn finish(&mut self, model: &Model, cx: &Cx) -> Result<()> {
        let _ = (model, cx);
        Ok(())
    }
    /// The agent's idle flag and the ports that wake it, asked once when the agent is added.
    /// While the flag is raised and every one of those ports reads zero, the environment skips
    /// the agent's `sample` and `drive` at edges clear of reset (neither the edge nor the one
    /// before it in reset). An agent raises the flag only when both calls would change nothing,
    /// and whatever gives it work lowers it. The default (`None`) runs the agent at every edge.
    fn idle(&self) -> Option<(Idle, Vec<Port>)> {
        None
    }
}

/// An agent's "nothing to do" flag, shared between the agent, its handle and the environment
/// (see [`Agent::idle`]): a bus model with nothing queued and its inputs unchanged costs the
/// environment a flag test and a read of the ports that wake it, instead of two calls.
#[derive(Debug, Clone, Default)]
pub struct Idle(Rc<Cell<bool>>);

impl Idle {
    /// A lowered flag.
    pub fn new() -> Idle {
        Idle::default()
    }
    /// Raises (`true`) or lowers the flag.
    #[inline]
    pub fn set(&self, idle: bool) {
        self.0.set(idle);
    }
    /// Whether the flag is raised.
    #[inline]
    pub fn get(&self) -> bool {
        self.0.get()
    }
}

/// The clock enable of agents whose bus runs on a clock that the model's inputs carry rather
/// than one the environment schedules (a multiclock replay drives its buses' clocks from a
/// trace, one step per edge of the environment's clock): they sample only at edges where
/// `edge` reads 1, with their reset read from `reset` (active high).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Gate {
    pub(crate) edge: Port,
    pub(crate) reset: Port,
}

/// An agent behind a [`Gate`].
struct Gated {
    inner: Rc<RefCell<dyn Agent>>,
    gate: Gate,
    /// Whether the gate was open at this edge's sample, so that the drive phase follows it.
    open: bool,
    in_reset: bool,
}

impl Agent for Gated {
    fn sample(&mut self, model: &Model, cx: &Cx) -> Result<()> {
        self.open = model.get_bool(self.gate.edge);
        if !self.open {
            return Ok(());
        }
        self.in_reset = model.get_bool(self.gate.reset);
        let cx = Cx {
            in_reset: self.in_reset,
            reset_now: self.in_reset,
            ..*cx
        };
        self.inner.borrow_mut().sample(model, &cx)
    }

    fn drive(&mut self, model: &mut Model, cx: &Cx) -> Result<()> {
        if !self.open {
            return Ok(());
        }
        let cx = Cx {
            in_reset: self.in_reset,
            reset_now: model.get_bool(self.gate.reset),
            ..*cx
        };
        self.inner.borrow_mut().drive(model, &cx)
    }

    fn is_monitor(&self) -> bool {
        self.inner.borrow().is_monitor()
    }

    fn restart(&mut self) {
        self.inner.borrow_mut().restart();
    }

    fn finish(&mut self, model: &Model, cx: &Cx) -> Result<()> {
        self.inner.borrow_mut().finish(model, cx)
    }
}

/// Whether a reset input is asserted high or low.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResetPolarity {
    /// Asserted when 1 (`rst`).
    ActiveHigh,
    /// Asserted when 0 (`aresetn`).
    ActiveLow,
}

#[derive(Debug)]
struct ResetLine {
    clock: ClockId,
    port: Port,
    active_high: bool,
}

struct Slot {
    agent: Rc<RefCell<dyn Agent>>,
    monitor: bool,
    /// The agent's idle flag and the ports that wake it ([`Agent::idle`]), gathered into one
    /// set of the model's when the agent is added: they are read at every edge it sleeps.
    idle: Option<(Idle, PortSet)>,
}

impl Slot {
    /// True when the agent may be skipped at this edge: its flag is raised and nothing it
    /// watches has woken it.
    #[inline]
    fn asleep(&self, model: &Model) -> bool {
        self.idle
            .as_ref()
            .is_some_and(|(flag, wake)| flag.get() && !model.any_nonzero(wake))
    }
}

/// The agents of one clock, and that clock's resets: looked up once per edge, not per agent.
struct Group {
    clock: ClockId,
    slots: Vec<Slot>,
    resets: Vec<(Port, bool)>,
    cx: Cx,
    /// Whether reset was sampled active at this clock's previous edge: agents are never
    /// skipped around a reset.
    was_in_reset: bool,
    /// Bit `i` set: slot `i` was skipped at this edge's sample, so its drive is skipped too.
    skipped: u64,
    /// The slots that are not monitors, in order: only they take part in the drive phase,
    /// which so passes over the monitors without looking at them.
    drivers: Vec<usize>,
}

/// One model with its agents, stepped edge by edge.
///
/// Per edge instant the model is evaluated once for the edge; inputs the agents drive after it
/// are settled by the next evaluation the model needs anyway (the falling edge, or before any
/// agent samples), the way a plain C++ testbench does it. Public calls that hand the model to
/// user code ([`Env::tick`], [`Env::run`], [`Env::run_until`]'s condition) settle it first.
pub struct Env {
    model: Model,
    groups: Vec<Group>,
    /// Bit `i` set: clock `i` has agents.
    active: u32,
    /// Agent-driven inputs not yet evaluated.
    dirty: bool,
    /// Rising clocks (a mask) whose agents sampled and whose edge the model took, but whose
    /// drive phase waits for [`Env::drive`] (see [`Env::rise`]).
    held: u32,
    resets: Vec<ResetLine>,
    monitors: bool,
    violations: Vec<Violation>,
    signal_map: Vec<SignalMapping>,
    /// The gate put on the agents added while it is set.
    gate: Option<Gate>,
}

impl std::fmt::Debug for Env {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Env")
            .field("model", &self.model)
            .field(
                "agents",
                &self.groups.iter().map(|g| g.slots.len()).sum::<usize>(),
            )
            .field("resets", &self.resets)
            .field("monitors", &self.monitors)
            .field("violations", &self.violations.len())
            .finish()
    }
}

impl Env {
    /// Wraps a model. Protocol monitors are attached with bus models by default.
    pub fn new(model: Model) -> Env {
        Env {
            model,
            groups: Vec::new(),
            active: 0,
            dirty: false,
            held: 0,
            resets: Vec::new(),
            monitors: true,
            violations: Vec::new(),
            signal_map: Vec::new(),
            gate: None,
        }
    }

    /// Names the port that carries `signal` (`awaddr`, `tvalid`, ...) of the bus `prefix`,
    /// for ports that no `<prefix>_<signal>` in any case finds. Bus models and monitors
    /// attached from now on use it.
    pub fn map_signal(&mut self, prefix: &str, signal: &str, port: &str) {
        self.signal_map
            .retain(|m| !(m.prefix == prefix && m.signal.eq_ignore_ascii_case(signal)));
        self.signal_map.push(SignalMapping {
            prefix: prefix.to_string(),
            signal: signal.to_ascii_lowercase(),
            port: port.to_string(),
        });
    }

    pub(crate) fn signal_map(&self) -> &[SignalMapping] {
        &self.signal_map
    }

    /// The model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The model, to drive inputs that no agent owns (call [`Model::eval`] after).
    pub fn model_mut(&mut self) -> &mut Model {
        self.dirty = false;
        &mut self.model
    }

    /// Evaluates the model if agents drove inputs since its last evaluation, so that its
    /// combinational outputs are current.
    pub fn settle(&mut self) -> Result<()> {
        self.drive()?;
        if self.dirty {
            self.dirty = false;
            self.model.eval()?;
        }
        Ok(())
    }

    /// Adds a clock to the model; see [`Model::add_clock`].
    pub fn add_clock(&mut self, port: &str, freq_hz: u64) -> Result<ClockId> {
        Ok(self.model.add_clock(port, freq_hz)?)
    }

    /// Declares `port` the reset of the agents on `clock` and drives it inactive. Monitors
    /// then check the reset rules on that clock's buses.
    pub fn add_reset(&mut self, clock: ClockId, port: &str, polarity: ResetPolarity) -> Result<()> {
        let port = self.model.input(port)?;
        let active_high = polarity == ResetPolarity::ActiveHigh;
        self.model.set_bool(port, !active_high);
        self.model.eval()?;
        self.resets.push(ResetLine {
            clock,
            port,
            active_high,
        });
        self.group(clock).resets.push((port, active_high));
        Ok(())
    }

    /// Declares `port` (an input or an output) the reset of the agents on `clock` without
    /// driving it, for a model that makes its own reset or whose inputs come from elsewhere (a
    /// formal counterexample's replay). Monitors then check the reset rules on that clock's
    /// buses; [`Env::reset`] leaves it alone.
    pub fn watch_reset(
        &mut self,
        clock: ClockId,
        port: &str,
        polarity: ResetPolarity,
    ) -> Result<()> {
        let port = self.model.port(port)?;
        let active_high = polarity == ResetPolarity::ActiveHigh;
        self.group(clock).resets.push((port, active_high));
        Ok(())
    }

    /// Whether bus models attach a protocol monitor for their bus (default true).
    pub fn monitors_enabled(&self) -> bool {
        self.monitors
    }

    /// Turns protocol monitors on or off: those already attached (bus models' and explicit
    /// ones alike) stop or resume checking, and bus models attached from now on attach one
    /// or not. A monitor switched back on starts afresh, since it missed what happened
    /// meanwhile.
    pub fn set_monitors(&mut self, on: bool) {
        if on && !self.monitors {
            for s in self.groups.iter().flat_map(|g| &g.slots) {
                if s.monitor {
                    s.agent.borrow_mut().restart();
                }
            }
        }
        self.monitors = on;
    }

    fn group(&mut self, clock: ClockId) -> &mut Group {
        let i = match self.groups.iter().position(|g| g.clock == clock) {
            Some(i) => i,
            None => {
                self.groups.push(Group {
                    clock,
                    slots: Vec::new(),
                    resets: Vec::new(),
                    cx: Cx::default(),
                    was_in_reset: false,
                    skipped: 0,
                    drivers: Vec::new(),
                });
                self.groups.len() - 1
            }
        };
        &mut self.groups[i]
    }

    /// Adds an agent that runs on every rising edge of `clock`. Bus models call this from
    /// their `attach`; use it for agents of your own.
    pub fn add_agent(&mut self, clock: ClockId, agent: Rc<RefCell<dyn Agent>>) {
        let agent: Rc<RefCell<dyn Agent>> = match self.gate {
            // A gated agent is never skipped as idle: its group's reset is not its own.
            Some(gate) => Rc::new(RefCell::new(Gated {
                inner: agent,
                gate,
                open: false,
                in_reset: false,
            })),
            None => agent,
        };
        let (monitor, idle) = {
            let a = agent.borrow();
            (a.is_monitor(), a.idle())
        };
        let idle = idle.map(|(flag, wake)| (flag, self.model.port_set(&wake)));
        let g = self.group(clock);
        if !monitor {
            g.drivers.push(g.slots.len());
        }
        g.slots.push(Slot {
            agent,
            monitor,
            idle,
        });
        if clock.index() < 32 {
            self.active |= 1 << clock.index();
        }
    }

    /// Puts `gate` on the agents added from now on (none with `None`).
    pub(crate) fn set_gate(&mut self, gate: Option<Gate>) {
        self.gate = gate;
    }

    /// Installs pause generators from one spec on every channel of every agent: one line turns
    /// on random backpressure and idle cycles, reproducible from the spec's seed.
    pub fn set_pauses(&mut self, spec: &PauseSpec) {
        for (i, s) in self.groups.iter().flat_map(|g| &g.slots).enumerate() {
            s.agent.borrow_mut().set_pauses(spec, i as u64 + 1);
        }
    }

    /// The end-of-test check: every monitor reports what its bus still owes (each accepted
    /// request answered exactly once, with the request's address and the cycle it was
    /// accepted). Returns the first such violation; all are in [`Env::violations`].
    pub fn finish(&mut self) -> Result<()> {
        self.settle()?;
        let mut first = None;
        if !self.monitors {
            return Ok(());
        }
        for g in &self.groups {
            let cx = Cx {
                time_ps: self.model.time_ps(),
                cycle: self.model.cycles(g.clock),
                in_reset: false,
                reset_now: false,
            };
            for s in g.slots.iter().filter(|s| s.monitor) {
                if let Err(e) = s.agent.borrow_mut().finish(&self.model, &cx) {
                    record(&mut self.violations, &mut first, e);
                }
            }
        }
        match first {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Every violation seen so far, including ones after the first that a call returned.
    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }

    /// Simulated time in picoseconds.
    pub fn time_ps(&self) -> u64 {
        self.model.time_ps()
    }

    /// Completed cycles of `clock`.
    pub fn cycles(&self, clock: ClockId) -> u64 {
        self.model.cycles(clock)
    }

    fn drive_resets(&mut self, clock: ClockId, asserted: bool) {
        for i in 0..self.resets.len() {
            let r = &self.resets[i];
            if r.clock == clock {
                let (port, level) = (r.port, r.active_high == asserted);
                self.model.set_bool(port, level);
            }
        }
    }

    /// Advances to the next edge instant: agents of the clocks that rise sample, the model
    /// steps, those agents drive. Returns the first violation any agent reported; the instant
    /// is completed either way, so the environment stays usable.
    pub fn step(&mut self) -> Result<Edges> {
        let e = self.step_inner(None, None)?;
        Ok(e)
    }

    /// One edge instant; with `hold` rising at it, everything but its agents' drive phase,
    /// which then waits for [`Env::drive`].
    ///
    /// Inlined into the stepping loops for the instants at which no agent runs (most of them:
    /// falling edges, and every edge of a clock nobody watches); the agents' edges are out of
    /// line in [`Env::agents_edge`], whose larger frame those instants need not set up.
    #[inline]
    fn step_inner(&mut self, release: Option<ClockId>, hold: Option<ClockId>) -> Result<Edges> {
        self.drive()?;
        let Some((time_ps, edges)) = self.model.next_edges() else {
            return Err(self.no_clock());
        };
        let rising = edges.rising_mask() & self.active;
        if rising == 0 {
            // No agent runs at this instant (a falling edge, or a clock nobody watches): one
            // evaluation, which also settles what agents drove at the last edge.
            self.model.step()?;
            self.dirty = false;
            if let Some(c) = release.filter(|c| edges.rising(*c)) {
                self.drive_resets(c, false);
                self.dirty = true;
            }
            return Ok(edges);
        }
        self.agents_edge(time_ps, edges, rising, release, hold)
    }

    #[cold]
    #[inline(never)]
    fn no_clock(&self) -> BfmError {
        BfmError::BadRequest {
            bus: self.model.name().to_string(),
            problem: "the model has no clock to step; add one with Env::add_clock".into(),
        }
    }

    /// The rest of [`Env::step_inner`] at an instant where the clocks in `rising` rise and
    /// have agents: they sample, the model steps, they drive.
    #[inline(never)]
    fn agents_edge(
        &mut self,
        time_ps: u64,
        edges: Edges,
        rising: u32,
        release: Option<ClockId>,
        hold: Option<ClockId>,
    ) -> Result<Edges> {
        // Agents sample settled values.
        self.settle()?;
        let mut first: Option<BfmError> = None;
        let monitors = self.monitors;
        for g in &mut self.groups {
            if rising & (1 << g.clock.index()) == 0 {
                continue;
            }
            let in_reset = g
                .resets
                .iter()
                .any(|&(p, high)| self.model.get_bool(p) == high);
            g.cx = Cx {
                time_ps,
                cycle: self.model.cycles(g.clock) + 1,
                in_reset,
                reset_now: in_reset,
            };
            let may_skip = !in_reset && !g.was_in_reset;
            g.was_in_reset = in_reset;
            g.skipped = 0;
            for (i, s) in g.slots.iter().enumerate() {
                if s.monitor && !monitors {
                    continue;
                }
                if may_skip && i < 64 && s.asleep(&self.model) {
                    g.skipped |= 1 << i;
                    continue;
                }
                if let Err(e) = s.agent.borrow_mut().sample(&self.model, &g.cx) {
                    record(&mut self.violations, &mut first, e);
                }
            }
        }
        self.model.step()?;
        if let Some(c) = release {
            if edges.rising(c) {
                // A reset generator releases reset just after the edge, like any register.
                self.drive_resets(c, false);
            }
        }
        if hold.is_some_and(|c| edges.rising(c)) {
            self.held = rising;
        } else if let Err(e) = self.drive_phase(rising) {
            first.get_or_insert(e);
        }
        match first {
            Some(e) => Err(e),
            None => Ok(edges),
        }
    }

    /// The agents of the clocks in `rising` drive after their edge. Returns the first
    /// violation; every agent drives either way.
    fn drive_phase(&mut self, rising: u32) -> Result<()> {
        let mut first: Option<BfmError> = None;
        for g in &mut self.groups {
            if rising & (1 << g.clock.index()) == 0 {
                continue;
            }
            if g.cx.in_reset {
                g.cx.reset_now = g
                    .resets
                    .iter()
                    .any(|&(p, high)| self.model.get_bool(p) == high);
            }
            let cx = g.cx;
            // Monitors only watch; they drive nothing, and `drivers` leaves them out.
            for &i in &g.drivers {
                let Some(s) = g.slots.get(i) else {
                    continue;
                };
                // An agent skipped at the sample would drive what it already drives, unless it
                // was given work since (between `rise` and `drive`), which lowered its idle
                // flag.
                let skipped = i < 64
                    && g.skipped & (1 << i) != 0
                    && s.idle.as_ref().is_none_or(|(flag, _)| flag.get());
                if skipped {
                    continue;
                }
                if let Err(e) = s.agent.borrow_mut().drive(&mut self.model, &cx) {
                    record(&mut self.violations, &mut first, e);
                }
            }
        }
        self.dirty = true;
        if self.model.waves_path().is_some() {
            // With waves on, what the agents drove shows one picosecond after the edge.
            self.dirty = false;
            self.model.eval()?;
        }
        match first {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Runs the drive phase that [`Env::rise`] held, if any: the agents drive what they have
    /// now, including what they were given since the edge. Every other call that moves or
    /// reads through the environment does this first, so forgetting it only delays the drive
    /// to the next step, never loses it.
    pub fn drive(&mut self) -> Result<()> {
        let held = std::mem::take(&mut self.held);
        if held == 0 {
            return Ok(());
        }
        self.drive_phase(held)
    }

    /// Runs `n` rising edges of `clock`.
    pub fn run(&mut self, clock: ClockId, n: u64) -> Result<()> {
        for _ in 0..n {
            self.tick_inner(clock, None)?;
        }
        self.settle()
    }

    /// Steps until `clock` has risen once more; the model is settled on return.
    pub fn tick(&mut self, clock: ClockId) -> Result<()> {
        self.tick_inner(clock, None)?;
        self.settle()
    }

    /// Steps until `clock` has risen once more, and stops between that edge's two halves:
    /// its agents have sampled and the model has taken the edge, but the agents have not
    /// driven yet. Work given to them now (a burst started, a beat queued) goes out at this
    /// edge, as the output of logic clocked by the same edge does, instead of one cycle later;
    /// [`Env::drive`] then completes the edge. For logic modelled in software beside the RTL
    /// that reacts to what the agents saw at an edge.
    ///
    /// What the agents then drive is left unevaluated: the next step evaluates it together
    /// with its own edge, so a loop that sees the model only through its agents (which
    /// sample settled values) also saves the evaluation [`Env::tick`] spends on settling.
    /// Read a port directly only after [`Env::settle`].
    pub fn rise(&mut self, clock: ClockId) -> Result<()> {
        // Bounded so that a clock the model does not have cannot spin forever.
        for _ in 0..1_000_000 {
            if self.step_inner(None, Some(clock))?.rising(clock) {
                return Ok(());
            }
        }
        Err(self.timeout(clock, 0, "a rising edge of a clock that never rises"))
    }

    fn tick_inner(&mut self, clock: ClockId, release: Option<ClockId>) -> Result<()> {
        // Bounded so that a clock the model does not have cannot spin forever.
        for _ in 0..1_000_000 {
            if self.step_inner(release, None)?.rising(clock) {
                return Ok(());
            }
        }
        Err(self.timeout(clock, 0, "a rising edge of a clock that never rises"))
    }

    /// Asserts the resets of `clock` for `cycles` rising edges and releases them just after
    /// the last one, the way a synchronous reset generator does.
    pub fn reset(&mut self, clock: ClockId, cycles: u64) -> Result<()> {
        self.drive_resets(clock, true);
        self.model.eval()?;
        for i in 0..cycles.max(1) {
            let last = i + 1 == cycles.max(1);
            self.tick_inner(clock, last.then_some(clock))?;
        }
        self.settle()
    }

    /// Ticks `clock` until `done(self)` holds after an edge, at most `limit` cycles; returns
    /// the cycles taken or [`BfmError::Timeout`].
    pub fn run_until(
        &mut self,
        clock: ClockId,
        limit: u64,
        what: &str,
        mut done: impl FnMut(&Env) -> bool,
    ) -> Result<u64> {
        self.settle()?;
        if done(self) {
            return Ok(0);
        }
        for n in 1..=limit {
            self.tick(clock)?;
            if done(self) {
                return Ok(n);
            }
        }
        Err(self.timeout(clock, limit, what))
    }

    /// As [`Env::run_until`] for conditions on agents' state only (the bus models' waits):
    /// the model is settled once at the end, not after every cycle.
    pub(crate) fn run_until_agents(
        &mut self,
        clock: ClockId,
        limit: u64,
        what: &str,
        mut done: impl FnMut() -> bool,
    ) -> Result<u64> {
        if done() {
            return Ok(0);
        }
        for n in 1..=limit {
            self.tick_inner(clock, None)?;
            if done() {
                self.settle()?;
                return Ok(n);
            }
        }
        self.settle()?;
        Err(self.timeout(clock, limit, what))
    }

    /// Runs until `done()`, failing only after `limit` cycles in a row in which `progress()`
    /// did not change: a bound on a stalled bus, not on the length of a long transfer.
    pub(crate) fn run_while_progressing(
        &mut self,
        clock: ClockId,
        limit: u64,
        what: &str,
        mut done: impl FnMut() -> bool,
        mut progress: impl FnMut() -> u64,
    ) -> Result<u64> {
        let mut last = progress();
        let mut still = 0;
        let mut n = 0;
        loop {
            if done() {
                self.settle()?;
                return Ok(n);
            }
            if still >= limit {
                self.settle()?;
                return Err(self.timeout(
                    clock,
                    still,
                    &format!("{what} (no handshake for {still} cycles)"),
                ));
            }
            self.tick_inner(clock, None)?;
            n += 1;
            let p = progress();
            if p == last {
                still += 1;
            } else {
                last = p;
                still = 0;
            }
        }
    }

    pub(crate) fn timeout(&self, clock: ClockId, cycles: u64, what: &str) -> BfmError {
        let name = self.model.clock_name(clock);
        BfmError::Timeout {
            clock: if name.is_empty() {
                format!("#{}", clock.index())
            } else {
                name.to_string()
            },
            cycles,
            time_ps: self.model.time_ps(),
            what: what.to_string(),
        }
    }
}

fn record(all: &mut Vec<Violation>, first: &mut Option<BfmError>, e: BfmError) {
    if let BfmError::Violation(v) = &e {
        all.push((**v).clone());
    }
    if first.is_none() {
        *first = Some(e);
    }
}
