//! The runner the three protocols share: proptest's configuration, a shrunk failure printed
//! as Rust, and the coverage report of a run that found nothing.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};

use crate::error::Result;
use crate::monitor::{Coverage, Situation};
use crate::PauseSpec;

/// A failing case, shrunk: the minimal sequence and the error it ends in. Its `Display` is the
/// sequence as Rust, for [`replay_axi`] (or the stream and AXI-Lite equivalents).
#[derive(Debug, Clone)]
pub struct FuzzFailure {
    /// The minimal operations, printed as Rust.
    pub sequence: Vec<String>,
    /// The pauses of the minimal case.
    pub pauses: PauseSpec,
    /// The error the minimal case ended in.
    pub error: String,
    /// Cases run before the first failure.
    pub cases_run: u32,
    /// The call that replays `ops` (with the case's pauses set on the environment).
    pub replay: String,
}

impl FuzzFailure {
    /// A run that could not start: the set-up failed, or the traffic does not fit the DUT's
    /// port. No case ran, so there is nothing to shrink or replay.
    pub(super) fn before_run(error: &crate::BfmError) -> FuzzFailure {
        FuzzFailure {
            sequence: Vec::new(),
            pauses: PauseSpec::Never,
            error: error.to_string(),
            cases_run: 0,
            replay: String::new(),
        }
    }

    /// Whether the run stopped before its first case (see [`FuzzFailure::error`] for why).
    pub fn before_first_case(&self) -> bool {
        self.cases_run == 0 && self.sequence.is_empty()
    }
}

impl std::fmt::Display for FuzzFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.before_first_case() {
            return write!(f, "fuzzing did not start: {}", self.error);
        }
        writeln!(
            f,
            "fuzzing failed (after {} cases); minimal case, {} operation(s), pauses {:?}:",
            self.cases_run,
            self.sequence.len(),
            self.pauses
        )?;
        writeln!(f, "let ops = vec![")?;
        for s in &self.sequence {
            writeln!(f, "    {s},")?;
        }
        writeln!(f, "];")?;
        writeln!(f, "replay: {}", self.replay)?;
        write!(f, "error: {}", self.error)
    }
}

impl std::error::Error for FuzzFailure {}

/// What a fuzz run that found nothing did: the cases it ran and the protocol situations its
/// monitors counted over all of them.
#[derive(Debug, Clone, Default)]
pub struct FuzzReport {
    /// Cases run.
    pub cases: u32,
    /// The situations reached, with their counts.
    pub coverage: Coverage,
    /// The situations the monitors' rules are about on the fuzzed buses (empty when the
    /// set-up attached no monitor).
    pub situations: Vec<Situation>,
}

impl FuzzReport {
    /// The situations the rules are about that no case reached.
    pub fn missing(&self) -> Vec<Situation> {
        self.coverage.missing(&self.situations)
    }

    /// Adds another run's counts and situations, so that runs of several kinds on one bus
    /// (slave-side and master-side fuzzing) report their coverage together.
    pub fn merge(&mut self, other: &FuzzReport) {
        self.cases += other.cases;
        self.add(other.coverage.clone(), other.situations.clone());
    }

    /// Adds a case's monitor: its counts, and its situations once.
    pub(super) fn add(&mut self, coverage: Coverage, situations: Vec<Situation>) {
        self.coverage.merge(&coverage);
        for s in situations {
            if !self.situations.contains(&s) {
                self.situations.push(s);
            }
        }
    }
}

impl std::fmt::Display for FuzzReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{} cases; {} of {} situations reached",
            self.cases,
            self.situations.len() - self.missing().len(),
            self.situations.len()
        )?;
        write!(f, "{}", self.coverage)?;
        for s in self.missing() {
            writeln!(f, "not reached: {s}")?;
        }
        Ok(())
    }
}

pub(super) fn pauses(max: u8) -> impl Strategy<Value = PauseSpec> {
    (any::<u64>(), 0..=max).prop_map(|(seed, pct)| {
        if pct == 0 {
            PauseSpec::Never
        } else {
            PauseSpec::random(seed, pct)
        }
    })
}

pub(super) fn runner(cases: u32, seed: u64) -> TestRunner {
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRunner::new_with_rng(
        Config {
            cases,
            failure_persistence: None,
            max_shrink_iters: 2_000,
            ..Config::default()
        },
        proptest::test_runner::TestRng::from_seed(
            proptest::test_runner::RngAlgorithm::ChaCha,
            &seed_bytes,
        ),
    )
}

pub(super) fn run<T: std::fmt::Debug + Clone>(
    mut runner: TestRunner,
    strategy: impl Strategy<Value = (Vec<T>, PauseSpec)>,
    replay: &str,
    case: impl Fn(&[T], &PauseSpec) -> Result<()>,
) -> std::result::Result<u32, FuzzFailure> {
    let count = std::cell::Cell::new(0u32);
    let first = std::cell::Cell::new(0u32);
    let last_error = std::cell::RefCell::new(String::new());
    let result = runner.run(&strategy, |(ops, p)| {
        count.set(count.get() + 1);
        match case(&ops, &p) {
            Ok(()) => Ok(()),
            Err(e) => {
                if first.get() == 0 {
                    first.set(count.get());
                }
                *last_error.borrow_mut() = e.to_string();
                Err(TestCaseError::fail(e.to_string()))
            }
        }
    });
    match result {
        Ok(()) => Ok(count.get()),
        Err(TestError::Fail(reason, (ops, p))) => {
            // The shrunk case was the last one to fail; run it once more for its own error.
            let error = match case(&ops, &p) {
                Err(e) => e.to_string(),
                Ok(()) => format!("{reason}"),
            };
            Err(FuzzFailure {
                sequence: ops.iter().map(|o| format!("{o:?}")).collect(),
                pauses: p,
                error,
                cases_run: first.get(),
                replay: replay.to_string(),
            })
        }
        Err(TestError::Abort(reason)) => Err(FuzzFailure {
            sequence: Vec::new(),
            pauses: PauseSpec::Never,
            error: format!(
                "the fuzzer gave up: {reason}; last error: {}",
                last_error.borrow()
            ),
            cases_run: count.get(),
            replay: replay.to_string(),
        }),
    }
}

/// A failure's replay line: the call, and what the bench must switch on first to see the same
/// bus (the garbage a run drove while idle is part of the case).
pub(super) fn replay_line(call: String, first: Option<&str>) -> String {
    match first {
        Some(first) => format!("{call}, {first}"),
        None => call,
    }
}

/// [`run`], with a report that each case adds its monitors' counts to.
pub(super) fn run_reporting<T: std::fmt::Debug + Clone>(
    runner: TestRunner,
    strategy: impl Strategy<Value = (Vec<T>, PauseSpec)>,
    replay: &str,
    case: impl Fn(&[T], &PauseSpec, &std::cell::RefCell<FuzzReport>) -> Result<()>,
) -> std::result::Result<FuzzReport, FuzzFailure> {
    let report = std::cell::RefCell::new(FuzzReport::default());
    let cases = run(runner, strategy, replay, |ops, p| case(ops, p, &report))?;
    let mut report = report.into_inner();
    report.cases = cases;
    Ok(report)
}
