//! AXI-Stream protocol fuzzing: frames with random gaps and null bytes through a path, and a
//! source DUT against a sink.

use proptest::prelude::*;

use sim_runtime::ClockId;

use super::runner::{pauses, replay_line, run_reporting, runner, FuzzFailure, FuzzReport};
use crate::error::{BfmError, Result};
use crate::{AxisFrame, AxisSink, AxisSource, Env, PauseSpec};

/// What stream traffic to draw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AxisFuzz {
    /// Longest frame in bytes.
    pub max_frame: usize,
    /// Frames per case at most.
    pub max_frames: usize,
    /// Put null bytes (TKEEP low) inside frames, in a seeded pattern per case.
    pub tkeep_gaps: bool,
    /// Cases to run.
    pub cases: u32,
    /// Highest pause percentage.
    pub max_pause_percent: u8,
    /// Drive garbage on the source's payload while TVALID is low.
    pub idle_garbage: bool,
    /// The run's seed.
    pub seed: u64,
}

impl Default for AxisFuzz {
    fn default() -> Self {
        AxisFuzz {
            max_frame: 200,
            max_frames: 8,
            tkeep_gaps: false,
            cases: 32,
            max_pause_percent: 50,
            idle_garbage: true,
            seed: 0x5eed,
        }
    }
}

/// One stream case: the frames and the null-byte pattern's seed and density.
#[derive(Clone, PartialEq, Eq)]
pub struct AxisCase {
    /// The frames, in order.
    pub frames: Vec<Vec<u8>>,
    /// Null bytes: `(seed, percent)`, percent 0 for none.
    pub gaps: (u64, u8),
}

impl std::fmt::Debug for AxisCase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AxisCase {{ frames: vec![")?;
        for (i, fr) in self.frames.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "vec!{fr:?}")?;
        }
        write!(f, "], gaps: ({:#x}, {}) }}", self.gaps.0, self.gaps.1)
    }
}

/// A strategy for stream cases.
pub fn axis_cases(cfg: &AxisFuzz) -> impl Strategy<Value = Vec<AxisCase>> {
    let gaps = cfg.tkeep_gaps;
    let frame = prop::collection::vec(any::<u8>(), 1..=cfg.max_frame.max(1));
    (
        prop::collection::vec(frame, 1..=cfg.max_frames.max(1)),
        any::<u64>(),
        0u8..40,
    )
        .prop_map(move |(frames, seed, pct)| {
            vec![AxisCase {
                frames,
                gaps: if gaps { (seed, pct) } else { (0, 0) },
            }]
        })
}

/// Sends the case's frames into a pass-through DUT and checks that the same frames come out,
/// in order.
pub fn replay_axis(
    env: &mut Env,
    source: &AxisSource,
    sink: &AxisSink,
    case: &AxisCase,
) -> Result<()> {
    let gap = if case.gaps.1 == 0 {
        PauseSpec::Never
    } else {
        PauseSpec::random(case.gaps.0, case.gaps.1)
    };
    source.set_gaps(&gap)?;
    for f in &case.frames {
        source.start_send(AxisFrame::new(f.clone()))?;
    }
    let got = sink.recv_n(env, case.frames.len())?;
    compare_frames(&case.frames, &got)?;
    env.finish()
}

/// Checks that `got` are the frames `want`, in order: the first differing byte is the error.
fn compare_frames(want: &[Vec<u8>], got: &[AxisFrame]) -> Result<()> {
    for (i, (want, got)) in want.iter().zip(got).enumerate() {
        if *want != got.data {
            let at = want
                .iter()
                .zip(&got.data)
                .position(|(a, b)| a != b)
                .unwrap_or(want.len().min(got.data.len()));
            return Err(BfmError::Mismatch {
                bus: "fuzz".into(),
                what: format!(
                    "frame {i}, byte {at} (sent {} bytes, got {})",
                    want.len(),
                    got.data.len()
                ),
                expected: want
                    .get(at)
                    .map_or("end of frame".into(), |b| format!("{b:#04x}")),
                actual: got
                    .data
                    .get(at)
                    .map_or("end of frame".into(), |b| format!("{b:#04x}")),
            });
        }
    }
    Ok(())
}

/// Fuzzes a stream pass-through (a FIFO, a register slice, a width-preserving path):
/// `setup` returns a fresh environment out of reset with a source on its input and a sink on
/// its output.
pub fn check_axis_path(
    cfg: &AxisFuzz,
    setup: impl Fn() -> Result<(Env, AxisSource, AxisSink)>,
) -> std::result::Result<FuzzReport, FuzzFailure> {
    let strategy = (axis_cases(cfg), pauses(cfg.max_pause_percent));
    let replay = replay_line(
        "fuzz::replay_axis(&mut env, &source, &sink, &ops[0])".into(),
        cfg.idle_garbage
            .then_some("after source.set_idle_garbage(true)"),
    );
    run_reporting(
        runner(cfg.cases, cfg.seed),
        strategy,
        &replay,
        |cases, p, report| {
            let (mut env, source, sink) = setup()?;
            env.set_pauses(p);
            source.set_idle_garbage(cfg.idle_garbage);
            let result = cases
                .iter()
                .try_for_each(|c| replay_axis(&mut env, &source, &sink, c));
            // Both ends: what the source drove in and what the DUT drove out.
            for m in [source.monitor(), sink.monitor()].into_iter().flatten() {
                report.borrow_mut().add(m.coverage(), m.situations());
            }
            result
        },
    )
}

/// What to draw for a DUT that is a stream source (a frame generator, a packetizer, a DMA's
/// read side): the parameters of each case come from the caller's strategy, and the fuzzer
/// adds random back-pressure on the sink (and pauses on every other agent of the set-up).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AxisSourceFuzz {
    /// Cases to run.
    pub cases: u32,
    /// Highest pause percentage.
    pub max_pause_percent: u8,
    /// The run's seed.
    pub seed: u64,
}

impl Default for AxisSourceFuzz {
    fn default() -> Self {
        AxisSourceFuzz {
            cases: 32,
            max_pause_percent: 50,
            seed: 0x5eed,
        }
    }
}

/// A stream source under test, as the caller's set-up builds it for one case: the environment
/// out of reset with the DUT started as the case says, a sink on its output, and the frames
/// the DUT must send (from the caller's reference model).
#[derive(Debug)]
pub struct SourceTarget {
    /// The environment.
    pub env: Env,
    /// The sink on the DUT's output.
    pub sink: AxisSink,
    /// The sink's clock.
    pub clock: ClockId,
    /// The frames the DUT must send, in order, and then nothing.
    pub expected: Vec<Vec<u8>>,
}

/// Edges a source is watched after its last expected frame, for one it should not send.
const AFTER_LAST_FRAME: u64 = 64;

/// Receives the frames of `target` and checks them against its expected ones; a frame that
/// comes after them is an error too.
pub fn replay_axis_source(target: &mut SourceTarget) -> Result<()> {
    let got = target.sink.recv_n(&mut target.env, target.expected.len())?;
    compare_frames(&target.expected, &got)?;
    target.env.run(target.clock, AFTER_LAST_FRAME)?;
    let (more, partial) = (target.sink.pending(), target.sink.partial());
    if more > 0 || partial > 0 {
        return Err(BfmError::Mismatch {
            bus: "fuzz".into(),
            what: format!("after frame {}", target.expected.len()),
            expected: "no more beats".into(),
            actual: format!("{more} more frame(s) and {partial} beat(s) of another"),
        });
    }
    target.env.finish()
}

/// Fuzzes a stream source: `params` draws what a case asks of the DUT (frame lengths, counts,
/// modes ...), `setup` builds a fresh target for those parameters. A failure shrinks both the
/// parameters and the pauses, and prints the parameters with `{:?}`.
pub fn check_axis_source<S>(
    cfg: &AxisSourceFuzz,
    params: S,
    setup: impl Fn(&S::Value) -> Result<SourceTarget>,
) -> std::result::Result<FuzzReport, FuzzFailure>
where
    S: Strategy,
    S::Value: std::fmt::Debug + Clone,
{
    let strategy = (params.prop_map(|v| vec![v]), pauses(cfg.max_pause_percent));
    let replay = "fuzz::replay_axis_source(&mut setup(&ops[0])?)";
    run_reporting(
        runner(cfg.cases, cfg.seed),
        strategy,
        replay,
        |case, p, report| {
            let mut result = Ok(());
            for params in case {
                let mut target = setup(params)?;
                target.env.set_pauses(p);
                result = replay_axis_source(&mut target);
                if let Some(m) = target.sink.monitor() {
                    report.borrow_mut().add(m.coverage(), m.situations());
                }
                if result.is_err() {
                    break;
                }
            }
            result
        },
    )
}
