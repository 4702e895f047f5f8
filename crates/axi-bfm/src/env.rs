//! The environment: one model, its resets and the agents that drive and watch it.

use std::cell::RefCell;
use std::rc::Rc;

use card_sim::{ClockId, Edges, Model, Port};

use crate::error::{BfmError, Result};
use crate::monitor::Violation;
use crate::pause::PauseSpec;

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
    clock: ClockId,
    agent: Rc<RefCell<dyn Agent>>,
}

/// One model with its agents, stepped edge by edge.
pub struct Env {
    model: Model,
    slots: Vec<Slot>,
    resets: Vec<ResetLine>,
    monitors: bool,
    violations: Vec<Violation>,
}

impl std::fmt::Debug for Env {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Env")
            .field("model", &self.model)
            .field("agents", &self.slots.len())
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
            slots: Vec::new(),
            resets: Vec::new(),
            monitors: true,
            violations: Vec::new(),
        }
    }

    /// The model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The model, to drive inputs that no agent owns (call [`Model::eval`] after).
    pub fn model_mut(&mut self) -> &mut Model {
        &mut self.model
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
        Ok(())
    }

    /// Whether bus models attach a protocol monitor for their bus (default true).
    pub fn monitors_enabled(&self) -> bool {
        self.monitors
    }

    /// Turns the default protocol monitors of bus models attached from now on on or off.
    /// Monitors attached explicitly are not affected.
    pub fn set_monitors(&mut self, on: bool) {
        self.monitors = on;
    }

    /// Adds an agent that runs on every rising edge of `clock`. Bus models call this from
    /// their `attach`; use it for agents of your own.
    pub fn add_agent(&mut self, clock: ClockId, agent: Rc<RefCell<dyn Agent>>) {
        self.slots.push(Slot { clock, agent });
    }

    /// Installs pause generators from one spec on every channel of every agent: one line turns
    /// on random backpressure and idle cycles, reproducible from the spec's seed.
    pub fn set_pauses(&mut self, spec: &PauseSpec) {
        for (i, s) in self.slots.iter().enumerate() {
            s.agent.borrow_mut().set_pauses(spec, i as u64 + 1);
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

    fn reset_level(&self, clock: ClockId) -> bool {
        self.resets
            .iter()
            .filter(|r| r.clock == clock)
            .any(|r| self.model.get_bool(r.port) == r.active_high)
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
    /// steps, those agents drive, the model is evaluated. Returns the first violation any
    /// agent reported; the instant is completed either way, so the environment stays usable.
    pub fn step(&mut self) -> Result<Edges> {
        self.step_inner(None)
    }

    fn step_inner(&mut self, release: Option<ClockId>) -> Result<Edges> {
        let Some((time_ps, edges)) = self.model.next_edges() else {
            return Err(BfmError::BadRequest {
                bus: self.model.name().to_string(),
                problem: "the model has no clock to step; add one with Env::add_clock".into(),
            });
        };
        let mut first: Option<BfmError> = None;
        // Agents sample before the edge, in the order they were attached.
        let mut before = [Cx::default(); 32];
        for s in &self.slots {
            if !edges.rising(s.clock) {
                continue;
            }
            let i = s.clock.index();
            if i < before.len() && before[i].cycle == 0 {
                let in_reset = self.reset_level(s.clock);
                before[i] = Cx {
                    time_ps,
                    cycle: self.model.cycles(s.clock) + 1,
                    in_reset,
                    reset_now: in_reset,
                };
            }
            let cx = before.get(i).copied().unwrap_or_default();
            if let Err(e) = s.agent.borrow_mut().sample(&self.model, &cx) {
                record(&mut self.violations, &mut first, e);
            }
        }
        self.model.step()?;
        if let Some(c) = release {
            if edges.rising(c) {
                // A reset generator releases reset just after the edge, like any register.
                self.drive_resets(c, false);
            }
        }
        for s in &self.slots {
            if !edges.rising(s.clock) {
                continue;
            }
            let mut cx = before.get(s.clock.index()).copied().unwrap_or_default();
            cx.reset_now = self.reset_level(s.clock);
            if let Err(e) = s.agent.borrow_mut().drive(&mut self.model, &cx) {
                record(&mut self.violations, &mut first, e);
            }
        }
        self.model.eval()?;
        match first {
            Some(e) => Err(e),
            None => Ok(edges),
        }
    }

    /// Runs `n` rising edges of `clock`.
    pub fn run(&mut self, clock: ClockId, n: u64) -> Result<()> {
        for _ in 0..n {
            self.tick(clock)?;
        }
        Ok(())
    }

    /// Steps until `clock` has risen once more.
    pub fn tick(&mut self, clock: ClockId) -> Result<()> {
        self.tick_inner(clock, None)
    }

    fn tick_inner(&mut self, clock: ClockId, release: Option<ClockId>) -> Result<()> {
        // Bounded so that a clock the model does not have cannot spin forever.
        for _ in 0..1_000_000 {
            if self.step_inner(release)?.rising(clock) {
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
        Ok(())
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

    pub(crate) fn timeout(&self, clock: ClockId, cycles: u64, what: &str) -> BfmError {
        BfmError::Timeout {
            clock: clock.index(),
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
