//! A failed formal proof's counterexample, replayed in simulation with the protocol monitors on.
//!
//! `cargo xtask formal` writes a failed proof's counterexample as a replay file
//! ([`formal_replay::Replay`]); a crate's build script builds, per replay file, a shell top around
//! the proof's wrapper ([`formal_replay::replay_tops`]). [`run`] drives the trace into a model of
//! that top cycle by cycle, with a monitor of this crate on every bus a property module of the
//! wrapper watches, and a waveform. What broke is named twice over: a monitor names the protocol
//! rule it saw broken (and the bus and channel), and Verilator stops on the first assertion of the
//! wrapper that fails (a promise of the module, or a property module's rule), which is named by
//! its label. [`check`] then says whether that is what the proof found.

use std::path::{Path, PathBuf};

use formal_replay::{Protocol, Replay, DUT_PREFIX, EDGE_SUFFIX, NEXT_PREFIX};
use sim_runtime::{Model, Port, SimError, TopDef};

use crate::env::{Env, Gate, ResetPolarity};
use crate::error::BfmError;
use crate::monitor::{AxiMonitor, AxilMonitor, AxisMonitor, AxisMonitorConfig};
use crate::protocol::Violation;

/// The replay's clock frequency: any will do, since the trace is in cycles.
const REPLAY_CLOCK_HZ: u64 = 100_000_000;

/// Who named a broken check during a replay.
#[derive(Debug, Clone)]
pub enum NamedBy {
    /// A protocol monitor of this crate, with its violation.
    Monitor(Violation),
    /// An assertion of the wrapper compiled into the model, with what Verilator said.
    Assertion(String),
}

/// A check the replay saw broken: its label relative to the wrapper, in the proof's own form
/// (`promise_order_kept`, `f_out.valid_held_until_handshake__t`), and the trace's cycle.
#[derive(Debug, Clone)]
pub struct Named {
    /// The cycle of the trace whose values broke it (0 = the first).
    pub step: usize,
    /// The label.
    pub label: String,
    /// The monitor or the assertion that named it.
    pub by: NamedBy,
}

impl std::fmt::Display for Named {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cycle {}: `{}` ", self.step, self.label)?;
        match &self.by {
            NamedBy::Monitor(v) => write!(f, "named by the monitor: {v}"),
            NamedBy::Assertion(m) => write!(f, "named by the assertion: {m}"),
        }
    }
}

/// An output of the module that the simulation drove otherwise than the trace says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// The cycle.
    pub step: usize,
    /// The module's output.
    pub output: String,
    /// The trace's value, hex.
    pub trace: String,
    /// The simulation's value, hex.
    pub sim: String,
}

/// What a replay did.
#[derive(Debug, Clone)]
pub struct ReplayRun {
    /// The checks found broken, in the order they were found.
    pub named: Vec<Named>,
    /// The first cycle at which the module's outputs left the trace, if any.
    pub divergence: Option<Divergence>,
    /// The cycles replayed.
    pub cycles: usize,
    /// The waveform written.
    pub waves: PathBuf,
}

impl std::fmt::Display for ReplayRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{} cycles replayed, waveform {}",
            self.cycles,
            self.waves.display()
        )?;
        for n in &self.named {
            writeln!(f, "  {n}")?;
        }
        if let Some(d) = &self.divergence {
            writeln!(
                f,
                "  the module's output `{}` left the trace at cycle {}: trace {}, simulation {}",
                d.output, d.step, d.trace, d.sim
            )?;
        }
        Ok(())
    }
}

/// A replay that does not show what its proof found (a seeded bug), or that still shows a
/// failure (a counterexample kept as a regression test).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayFailure {
    /// The replay file or its top could not be used.
    #[error("replay of `{proof}`: {problem}")]
    Setup { proof: String, problem: String },
    /// The model could not be built or driven.
    #[error("replay of `{proof}`: {source}")]
    Sim {
        proof: String,
        /// Boxed: a bus error is large, and a replay's result should not be.
        #[source]
        source: Box<BfmError>,
    },
    /// A seeded bug's replay did not name what its proof failed, at the same cycle (for a
    /// clocked check, the cycle before the step the solver reports).
    #[error("replay of seeded bug `{proof}`: the proof failed {expected:?} at cycle {step}, but the simulation {found}\n{run}")]
    NotReproduced {
        proof: String,
        expected: Vec<String>,
        step: usize,
        found: String,
        run: Box<ReplayRun>,
    },
    /// A real counterexample still fails in simulation: the RTL bug it found is not fixed.
    #[error("replay of `{proof}` (a counterexample of its proof, kept as a test) still fails: fix the RTL, then `cargo xtask formal` proves it again\n{run}")]
    StillFails { proof: String, run: Box<ReplayRun> },
}

/// The label of a monitor's violation in the proof's form: `<bus>.<rule>__<channel>`.
fn monitor_label(v: &Violation) -> String {
    format!(
        "{}.{}__{}",
        v.bus,
        v.rule,
        v.channel.to_string().to_ascii_lowercase()
    )
}

/// The label of a failed assertion from Verilator's message (`... Assertion failed in
/// TOP.<shell>.check.<label>...`), relative to the wrapper, which the shell names `check`.
fn assertion_label(message: &str) -> Option<String> {
    let (_, rest) = message.split_once("failed in ")?;
    let path: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '.')
        .collect();
    let (_, label) = path.split_once(".check.")?;
    Some(label.trim_end_matches('.').to_string())
}

/// The model's ports for a replay's `next_*` inputs and `dut_*` outputs.
struct Ports {
    next: Vec<(Port, u32)>,
    outputs: Vec<Port>,
}

fn sim_err(proof: &str, e: impl Into<BfmError>) -> ReplayFailure {
    ReplayFailure::Sim {
        proof: proof.to_string(),
        source: Box::new(e.into()),
    }
}

/// Replays `replay` on `top` (the shell top its crate's build script built for it), writing an
/// FST waveform to `waves`. A monitor's violation does not stop the replay; the first failed
/// assertion does, since Verilator stops the model there.
pub fn run(top: TopDef, replay: &Replay, waves: &Path) -> Result<ReplayRun, ReplayFailure> {
    let proof = replay.proof.as_str();
    let model = Model::builder(top)
        .name(format!("replay.{proof}"))
        .waves(waves)
        .build()
        .map_err(|e| sim_err(proof, e))?;
    let mut env = Env::new(model);
    let clock = env
        .add_clock(&replay.clock, REPLAY_CLOCK_HZ)
        .map_err(|e| sim_err(proof, e))?;
    for bus in &replay.buses {
        let prefix = bus.instance.as_str();
        let reset = format!("{prefix}_rst");
        if replay.multiclock.is_some() {
            // The bus's clock is a value of the trace: its monitor samples at the steps where
            // that clock rises, under the bus's own reset.
            let m = env.model();
            let gate = Gate {
                edge: m
                    .port(&format!("{prefix}{EDGE_SUFFIX}"))
                    .map_err(|e| sim_err(proof, e))?,
                reset: m.port(&reset).map_err(|e| sim_err(proof, e))?,
            };
            env.set_gate(Some(gate));
        } else {
            env.watch_reset(clock, &reset, ResetPolarity::ActiveHigh)
                .map_err(|e| sim_err(proof, e))?;
        }
        let attached = match bus.protocol {
            Protocol::Axis => AxisMonitor::attach_with(
                &mut env,
                prefix,
                clock,
                AxisMonitorConfig {
                    tkeep_packed: bus.keep_packed,
                    ..AxisMonitorConfig::default()
                },
            )
            .map(drop),
            Protocol::Axil => AxilMonitor::attach(&mut env, prefix, clock).map(drop),
            Protocol::Axi4 => AxiMonitor::attach(&mut env, prefix, clock).map(drop),
        };
        env.set_gate(None);
        attached.map_err(|e| sim_err(proof, e))?;
    }
    let ports = {
        let m = env.model();
        let mut next = Vec::new();
        for s in &replay.inputs {
            let p = m
                .input(&format!("{NEXT_PREFIX}{}", s.name))
                .map_err(|e| sim_err(proof, e))?;
            next.push((p, s.width));
        }
        let mut outputs = Vec::new();
        for s in &replay.outputs {
            outputs.push(
                m.port(&format!("{DUT_PREFIX}{}", s.name))
                    .map_err(|e| sim_err(proof, e))?,
            );
        }
        Ports { next, outputs }
    };
    let mut named = Vec::new();
    let mut divergence = None;
    let mut cycles = 0;
    // Edge k ends cycle k: the shell loads cycle k+1's inputs at it.
    for k in 0..=replay.step {
        if let Some(next) = replay.cycles.get(k + 1) {
            let m = env.model_mut();
            for ((port, width), s) in ports.next.iter().zip(&replay.inputs) {
                let value = next.inputs.get(&s.name).map_or("0", String::as_str);
                let words = formal_replay::words(value, *width).map_err(|problem| {
                    ReplayFailure::Setup {
                        proof: proof.to_string(),
                        problem: format!("cycle {}, input `{}`: {problem}", k + 1, s.name),
                    }
                })?;
                m.set_words(*port, &words);
            }
            m.eval().map_err(|e| sim_err(proof, e))?;
        }
        let ticked = env.tick(clock);
        cycles = k + 1;
        match ticked {
            Ok(()) | Err(BfmError::Violation(_)) => {}
            Err(BfmError::Sim(SimError::Rtl { message, .. })) => {
                // Verilator stopped on an assertion: a clocked one looked at cycle k, an
                // unclocked one at the values cycle k+1 settled to after the edge.
                let label = assertion_label(&message).unwrap_or_else(|| "(unnamed)".into());
                let step = if replay.is_clocked(&label) { k } else { k + 1 };
                named.push(Named {
                    step,
                    label,
                    by: NamedBy::Assertion(message),
                });
                break;
            }
            Err(e) => return Err(sim_err(proof, e)),
        }
        if divergence.is_none() && k < replay.step {
            divergence = diverged(env.model(), &ports, replay, k + 1);
        }
    }
    // The property modules check nothing at the trace's first cycle (a rule over `$past` has no
    // past there, and the solver picks that cycle's inputs freely), so a monitor's word on it is
    // left out: the edge that ends it is the clock's first.
    let mut found: Vec<Named> = env
        .violations()
        .iter()
        .filter(|v| v.cycle > 1)
        .map(|v| Named {
            step: (v.cycle as usize).saturating_sub(1),
            label: monitor_label(v),
            by: NamedBy::Monitor(v.clone()),
        })
        .collect();
    found.extend(named);
    found.sort_by_key(|n| n.step);
    Ok(ReplayRun {
        named: found,
        divergence,
        cycles,
        waves: waves.to_path_buf(),
    })
}

/// The first output of the module whose value at cycle `step` differs from the trace's.
fn diverged(m: &Model, ports: &Ports, replay: &Replay, step: usize) -> Option<Divergence> {
    let cycle = replay.cycles.get(step)?;
    for (port, s) in ports.outputs.iter().zip(&replay.outputs) {
        // Every output has a valid value in every cycle (`Replay::load` checked it).
        let Some(trace) = cycle.outputs.get(&s.name) else {
            continue;
        };
        let Ok(want) = formal_replay::words(trace, s.width) else {
            continue;
        };
        let mut got = vec![0u32; want.len()];
        m.get_words(*port, &mut got);
        if got != want {
            let digits = s.width.div_ceil(4) as usize;
            let sim: String = got
                .iter()
                .rev()
                .map(|w| format!("{w:08x}"))
                .collect::<String>();
            let sim = sim[sim.len().saturating_sub(digits)..].to_string();
            return Some(Divergence {
                step,
                output: s.name.clone(),
                trace: trace.clone(),
                sim,
            });
        }
    }
    None
}

/// Whether `run` shows what its replay must: for a seeded bug, nothing broken before the
/// proof's cycle, one of the checks its proof failed broken at that cycle, and the module
/// following the trace until then; for a counterexample kept as a regression test, nothing
/// broken at all.
pub fn check(replay: &Replay, run: ReplayRun) -> Result<ReplayRun, ReplayFailure> {
    let proof = replay.proof.clone();
    if !replay.seeded {
        if run.named.is_empty() {
            return Ok(run);
        }
        return Err(ReplayFailure::StillFails {
            proof,
            run: Box::new(run),
        });
    }
    let not = |found: String, run: ReplayRun| ReplayFailure::NotReproduced {
        proof: replay.proof.clone(),
        expected: replay.failed.clone(),
        step: replay.step,
        found,
        run: Box::new(run),
    };
    if let Some(d) = &run.divergence {
        let found = format!(
            "left the trace first: output `{}` at cycle {} is {} where the trace has {}",
            d.output, d.step, d.sim, d.trace
        );
        return Err(not(found, run));
    }
    let Some(first) = run.named.first() else {
        return Err(not("named nothing broken".into(), run));
    };
    // The cycle whose values broke each failed check: the solver reports a clocked one (an
    // assertion in `always @(posedge clk)`) at the step after the values it sampled at the
    // edge, where a monitor and the simulator's assertion name the sampled cycle itself.
    let cycle_of = |label: &str| {
        if replay.is_clocked(label) {
            replay.step.saturating_sub(1)
        } else {
            replay.step
        }
    };
    let earliest = replay
        .failed
        .iter()
        .map(|l| cycle_of(l))
        .min()
        .unwrap_or(replay.step);
    if first.step < earliest {
        let found = format!("named `{}` first, at cycle {}", first.label, first.step);
        return Err(not(found, run));
    }
    // A monitor may name a rule at the same cycle beside the proof's assertion (the solver
    // reports the assertions of its own trace's last step only), so any one will do.
    if !run
        .named
        .iter()
        .any(|n| replay.failed.contains(&n.label) && n.step == cycle_of(&n.label))
    {
        let named: Vec<String> = run
            .named
            .iter()
            .map(|n| format!("`{}` at cycle {}", n.label, n.step))
            .collect();
        let found = format!("named {}", named.join(", "));
        return Err(not(found, run));
    }
    Ok(run)
}

/// The whole test of one replay file: `<dir>/<proof>.json` replayed on its shell top (one of
/// `tops`, the crate's `ALL_TOPS`), its waveform written to `<waves_dir>/<proof>.fst`, and
/// [`check`]ed.
pub fn replay_file(
    tops: &[TopDef],
    dir: &Path,
    proof: &str,
    waves_dir: &Path,
) -> Result<ReplayRun, ReplayFailure> {
    let setup = |problem: String| ReplayFailure::Setup {
        proof: proof.to_string(),
        problem,
    };
    let replay =
        Replay::load(&dir.join(format!("{proof}.json"))).map_err(|e| setup(e.to_string()))?;
    let name = replay.top_name();
    let top = tops.iter().find(|t| t.name() == name).copied().ok_or_else(|| {
        setup(format!(
            "no top `{name}`: the crate's build script builds one per replay file (formal_replay::replay_tops)"
        ))
    })?;
    let run = run(top, &replay, &waves_dir.join(format!("{proof}.fst")))?;
    check(&replay, run)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use formal_replay::{Cycle, FORMAT};

    use super::*;

    /// A seeded bug's replay of one input that failed `promise_p` at cycle 2.
    fn seeded() -> Replay {
        let cycle = Cycle {
            inputs: BTreeMap::from([("rst".to_string(), "0".to_string())]),
            outputs: BTreeMap::new(),
        };
        Replay {
            format: FORMAT.into(),
            proof: "x_bug1".into(),
            module: "x".into(),
            wrapper: "fw_x".into(),
            params: BTreeMap::new(),
            files: Vec::new(),
            seeded: true,
            failed: vec!["promise_p".into()],
            step: 2,
            clock: "clk".into(),
            inputs: vec![formal_replay::Signal {
                name: "rst".into(),
                width: 1,
            }],
            multiclock: None,
            buses: Vec::new(),
            dut: "dut".into(),
            outputs: Vec::new(),
            clocked: Vec::new(),
            cycles: vec![cycle; 3],
        }
    }

    fn run_naming(named: &[(usize, &str)]) -> ReplayRun {
        ReplayRun {
            named: named
                .iter()
                .map(|(step, label)| Named {
                    step: *step,
                    label: (*label).to_string(),
                    by: NamedBy::Assertion(String::new()),
                })
                .collect(),
            divergence: None,
            cycles: 3,
            waves: PathBuf::new(),
        }
    }

    #[test]
    fn a_seeded_bug_must_be_named_at_its_cycle_and_nothing_before() {
        let r = seeded();
        assert!(check(&r, run_naming(&[(2, "promise_p")])).is_ok());
        // A monitor's rule beside it at the same cycle is no other failure.
        assert!(check(&r, run_naming(&[(2, "f_out.rule__t"), (2, "promise_p")])).is_ok());
        for named in [
            &[][..],
            &[(2, "promise_q")][..],
            &[(1, "f_out.rule__t"), (2, "promise_p")][..],
            &[(3, "promise_p")][..],
        ] {
            let e = check(&r, run_naming(named)).expect_err("not reproduced");
            assert!(
                matches!(e, ReplayFailure::NotReproduced { .. }),
                "{named:?}: {e}"
            );
        }
        let mut run = run_naming(&[(2, "promise_p")]);
        run.divergence = Some(Divergence {
            step: 1,
            output: "o".into(),
            trace: "0".into(),
            sim: "1".into(),
        });
        let e = check(&r, run).expect_err("diverged");
        assert!(e.to_string().contains("left the trace first"), "{e}");
    }

    #[test]
    fn a_clocked_check_is_named_at_the_cycle_before_the_solvers_step() {
        let r = Replay {
            failed: vec!["f_out.rule__t".into()],
            clocked: vec!["rule__t".into()],
            ..seeded()
        };
        assert!(check(&r, run_naming(&[(1, "f_out.rule__t")])).is_ok());
        assert!(check(&r, run_naming(&[(2, "f_out.rule__t")])).is_err());
    }

    #[test]
    fn a_kept_counterexample_passes_once_nothing_breaks() {
        let r = Replay {
            seeded: false,
            ..seeded()
        };
        assert!(check(&r, run_naming(&[])).is_ok());
        let e = check(&r, run_naming(&[(2, "promise_p")])).expect_err("still fails");
        assert!(matches!(e, ReplayFailure::StillFails { .. }), "{e}");
    }

    #[test]
    fn verilator_messages_name_the_label() {
        let m = "[5000] %Error: fw_x.v:140: Assertion failed in TOP.fr_x_bug1.check.promise_order_kept: 'assert' failed.";
        assert_eq!(assertion_label(m).as_deref(), Some("promise_order_kept"));
        let m = "Assertion failed in TOP.fr_x.check.f_out.valid_held_until_handshake__t";
        assert_eq!(
            assertion_label(m).as_deref(),
            Some("f_out.valid_held_until_handshake__t")
        );
        assert_eq!(assertion_label("$stop at x.v:3"), None);
    }
}
