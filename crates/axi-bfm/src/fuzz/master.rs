//! Master fuzzing: the caller's strategy draws a master's work (the DUT's start parameters),
//! a randomizing slave answers it as its drawn [`SlaveChoices`] say, and the caller's
//! reference model says what memory must hold afterwards and what the master must report.
//! Work and choices are one proptest case, so a failure shrinks both and replays exactly.

use std::cell::RefCell;
use std::rc::Rc;

use proptest::prelude::*;

use super::runner::{run_reporting, runner, FuzzFailure, FuzzReport};
use crate::error::{BfmError, Result};
use crate::mem::Memory;
use crate::monitor::{Coverage, Situation};
use crate::random_slave::{slave_choices, SlaveChoices, SlaveLog, SlaveProfile};
use crate::{Env, PauseSpec, RandomAxiSlave, RandomAxilSlave};

/// What to draw for a master under test: the slave's behaviour comes from `slave`, the work
/// from the caller's strategy.
#[derive(Debug, Clone, PartialEq)]
pub struct MasterFuzz {
    /// Cases to run (before shrinking).
    pub cases: u32,
    /// What the randomizing slave may do.
    pub slave: SlaveProfile,
    /// The seed of the whole run.
    pub seed: u64,
}

impl Default for MasterFuzz {
    /// 32 cases against everything a legal slave may do ([`SlaveProfile::default`]).
    fn default() -> Self {
        MasterFuzz {
            cases: 32,
            slave: SlaveProfile::default(),
            seed: 0x5eed,
        }
    }
}

/// One case run by the caller: the environment after the master finished its work (every
/// wait bounded), the randomizing slave it ran against, and what the master reported (its
/// status, error flags, per-access responses: whatever the reference model predicts).
#[derive(Debug)]
pub struct MasterRun<S, E> {
    /// The environment.
    pub env: Env,
    /// The randomizing slave on the DUT's master port, attached with the case's choices.
    pub slave: S,
    /// What the master reported.
    pub reported: E,
}

/// What the reference model says a case must end with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected<E> {
    /// Address ranges and the bytes each must hold in the slave's memory.
    pub memory: Vec<(u64, Vec<u8>)>,
    /// What the master must report.
    pub reported: E,
}

/// A randomizing slave as master fuzzing uses it: its memory, its log and its monitor's
/// coverage.
pub trait FuzzedSlave {
    /// The memory behind the slave.
    fn memory(&self) -> Rc<RefCell<Memory>>;
    /// What it answered.
    fn answers(&self) -> SlaveLog;
    /// Its monitor's coverage and situations, if a monitor is attached.
    fn covered(&self) -> Option<(Coverage, Vec<Situation>)>;
}

impl FuzzedSlave for RandomAxiSlave {
    fn memory(&self) -> Rc<RefCell<Memory>> {
        self.mem()
    }
    fn answers(&self) -> SlaveLog {
        self.log()
    }
    fn covered(&self) -> Option<(Coverage, Vec<Situation>)> {
        self.monitor().map(|m| (m.coverage(), m.situations()))
    }
}

impl FuzzedSlave for RandomAxilSlave {
    fn memory(&self) -> Rc<RefCell<Memory>> {
        self.mem()
    }
    fn answers(&self) -> SlaveLog {
        self.log()
    }
    fn covered(&self) -> Option<(Coverage, Vec<Situation>)> {
        self.monitor().map(|m| (m.coverage(), m.situations()))
    }
}

/// Checks a finished run against the reference: every request answered, no violation, the
/// memory and the master's report as the reference says.
fn judge<S: FuzzedSlave, E: PartialEq + std::fmt::Debug>(
    r: &mut MasterRun<S, E>,
    expected: &Expected<E>,
) -> Result<()> {
    r.env.finish()?;
    let mem = r.slave.memory();
    let mem = mem.borrow();
    for (addr, want) in &expected.memory {
        let got = mem.read_vec(*addr, want.len());
        if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
            return Err(BfmError::Mismatch {
                bus: "memory behind the master".into(),
                what: format!("{:#x}", addr + i as u64),
                expected: format!("{:#04x}", want[i]),
                actual: format!("{:#04x}", got[i]),
            });
        }
    }
    if r.reported != expected.reported {
        return Err(BfmError::Mismatch {
            bus: "master's report".into(),
            what: "what the master reported after its work".into(),
            expected: format!("{:?}", expected.reported),
            actual: format!("{:?}", r.reported),
        });
    }
    Ok(())
}

/// Runs one case of master fuzzing: `run` performs `work` against a slave attached with
/// `choices`, `reference` says what it must end with. The replay of a printed failure.
pub fn replay_master<W, S: FuzzedSlave, E: PartialEq + std::fmt::Debug>(
    work: &W,
    choices: &SlaveChoices,
    run: impl Fn(&W, &SlaveChoices) -> Result<MasterRun<S, E>>,
    reference: impl Fn(&W, &SlaveLog) -> Expected<E>,
) -> Result<()> {
    let mut r = run(work, choices)?;
    let expected = reference(work, &r.slave.answers());
    judge(&mut r, &expected)
}

/// The one runner of both forms.
fn check_master<WS, S, E>(
    cfg: &MasterFuzz,
    work: WS,
    run: impl Fn(&WS::Value, &SlaveChoices) -> Result<MasterRun<S, E>>,
    reference: impl Fn(&WS::Value, &SlaveLog) -> Expected<E>,
) -> std::result::Result<FuzzReport, FuzzFailure>
where
    WS: Strategy,
    WS::Value: std::fmt::Debug + Clone,
    S: FuzzedSlave,
    E: PartialEq + std::fmt::Debug,
{
    let strategy = (
        (work, slave_choices(&cfg.slave)).prop_map(|c| vec![c]),
        Just(PauseSpec::Never),
    );
    let replay = "fuzz::replay_master(&ops[0].0, &ops[0].1, run, reference)";
    run_reporting(
        runner(cfg.cases, cfg.seed),
        strategy,
        replay,
        |case, _, report| {
            for (w, choices) in case {
                let mut r = run(w, choices)?;
                let expected = reference(w, &r.slave.answers());
                let result = judge(&mut r, &expected);
                if let Some((c, s)) = r.slave.covered() {
                    report.borrow_mut().add(c, s);
                }
                result?;
            }
            Ok(())
        },
    )
}

/// Fuzzes an AXI4 master: `work` draws what a case asks of it; `run` builds a fresh
/// environment, attaches a [`RandomAxiSlave`] with the case's choices on the DUT's master
/// port, starts the DUT with the work and waits (bounded) for it to finish; `reference` says,
/// from the work and what the slave answered, what memory must hold and what the master must
/// report. A failure shrinks the work and the slave's choices together and prints both.
pub fn check_axi_master<WS, E>(
    cfg: &MasterFuzz,
    work: WS,
    run: impl Fn(&WS::Value, &SlaveChoices) -> Result<MasterRun<RandomAxiSlave, E>>,
    reference: impl Fn(&WS::Value, &SlaveLog) -> Expected<E>,
) -> std::result::Result<FuzzReport, FuzzFailure>
where
    WS: Strategy,
    WS::Value: std::fmt::Debug + Clone,
    E: PartialEq + std::fmt::Debug,
{
    check_master(cfg, work, run, reference)
}

/// As [`check_axi_master`], for an AXI4-Lite master and a [`RandomAxilSlave`].
pub fn check_axil_master<WS, E>(
    cfg: &MasterFuzz,
    work: WS,
    run: impl Fn(&WS::Value, &SlaveChoices) -> Result<MasterRun<RandomAxilSlave, E>>,
    reference: impl Fn(&WS::Value, &SlaveLog) -> Expected<E>,
) -> std::result::Result<FuzzReport, FuzzFailure>
where
    WS: Strategy,
    WS::Value: std::fmt::Debug + Clone,
    E: PartialEq + std::fmt::Debug,
{
    check_master(cfg, work, run, reference)
}
