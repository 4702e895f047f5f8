//! Protocol fuzzing: proptest strategies for random AXI4, AXI4-Lite and AXI-Stream traffic,
//! and runners that drive it into a user's DUT against a reference model, shrink a failure to
//! a minimal sequence and print it as a list that can be pasted back and replayed.
//!
//! One call per DUT: [`check_axi_slave`], [`check_axil_slave`] or [`check_axis_path`], given a
//! closure that builds a fresh environment (model, clocks, reset, bus models) for each case.
//! Every case draws its own operations and its own random pauses on every channel; monitors
//! stay on, and [`crate::Env::finish`] checks that every request was answered. A run that
//! finds nothing returns a [`FuzzReport`]: its cases and the protocol situations the monitors
//! counted (functional coverage), with those their rules are about that it never reached.
//!
//! ```no_run
//! use axi_bfm::fuzz::{check_axi_slave, AxiFuzz};
//! # fn setup() -> axi_bfm::Result<axi_bfm::fuzz::AxiTarget> { unimplemented!() }
//! let cfg = AxiFuzz { cases: 64, ..AxiFuzz::new(16, 0x0, 0x1_0000) };
//! if let Err(failure) = check_axi_slave(&cfg, setup) {
//!     panic!("{failure}"); // the minimal sequence, replayable with `replay_axi`
//! }
//! ```

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};

use sim_runtime::ClockId;

use std::collections::VecDeque;

use crate::axi::TxnId;
use crate::burst::{Burst, FIXED, INCR, WRAP};
use crate::error::{BfmError, Result};
use crate::mem::Memory;
use crate::monitor::{Coverage, Situation};
use crate::{AxiMaster, AxilMaster, AxisFrame, AxisSink, AxisSource, Env, PauseSpec};

/// One AXI4 operation of a fuzz sequence.
#[derive(Clone, PartialEq, Eq)]
pub enum AxiOp {
    /// One write burst exactly as given: `data` and `strobes` hold one entry per lane each
    /// beat uses, in order (see [`AxiMaster::start_write_burst_strobed`]).
    Write {
        /// The burst.
        burst: Burst,
        /// The bytes.
        data: Vec<u8>,
        /// Which bytes go out with their strobe high.
        strobes: Vec<bool>,
    },
    /// One read burst exactly as given.
    Read {
        /// The burst.
        burst: Burst,
    },
}

impl std::fmt::Debug for AxiOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let b = |b: &Burst| {
            format!(
                "Burst {{ id: {}, addr: {:#x}, len: {}, size: {}, burst: {}, lock: false }}",
                b.id, b.addr, b.len, b.size, b.burst
            )
        };
        // Written as Rust, so a printed failure pastes back into a test for `replay_axi`.
        match self {
            AxiOp::Write {
                burst,
                data,
                strobes,
            } => write!(
                f,
                "AxiOp::Write {{ burst: {}, data: vec!{data:?}, strobes: vec!{strobes:?} }}",
                b(burst)
            ),
            AxiOp::Read { burst } => write!(f, "AxiOp::Read {{ burst: {} }}", b(burst)),
        }
    }
}

/// What AXI4 traffic to draw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AxiFuzz {
    /// Data bus width in bytes.
    pub bus_bytes: usize,
    /// First address the DUT decodes.
    pub base: u64,
    /// Bytes it decodes from `base`.
    pub size: u64,
    /// Bursts start within the first `window` bytes of the range, so that reads land on
    /// what earlier writes wrote (a read of untouched memory checks little).
    pub window: u64,
    /// Longest burst in beats (1 to 256).
    pub max_beats: u32,
    /// IDs drawn from `0..ids`.
    pub ids: u32,
    /// Draw FIXED bursts.
    pub fixed: bool,
    /// Draw WRAP bursts.
    pub wrap: bool,
    /// Draw narrow beats (AxSIZE below the bus width).
    pub narrow: bool,
    /// Bursts in flight at most (1 issues each burst after the previous one's answer). A
    /// burst that touches bytes an earlier one in flight writes, or a write that touches
    /// bytes one reads, waits for it, so every read has one right answer.
    pub outstanding: usize,
    /// Operations per case at most.
    pub max_ops: usize,
    /// Cases to run (before shrinking).
    pub cases: u32,
    /// Highest pause percentage drawn for the random pauses on every channel.
    pub max_pause_percent: u8,
    /// Drive garbage on payloads while VALID is low.
    pub idle_garbage: bool,
    /// The seed of the whole run; the same seed draws the same cases.
    pub seed: u64,
}

impl AxiFuzz {
    /// Every burst type, narrow beats, 4 IDs, bursts of up to 16 beats starting in the first
    /// KiB, 4 bursts in flight, 12 operations per case, 32 cases, pauses up to 50 %, garbage
    /// while idle: what any AXI4 slave must take. For a DUT that supports less, declare it
    /// with [`AxiFuzz::supporting`].
    pub fn new(bus_bytes: usize, base: u64, size: u64) -> AxiFuzz {
        AxiFuzz {
            bus_bytes,
            base,
            size,
            window: 1024,
            max_beats: 16,
            ids: 4,
            fixed: true,
            wrap: true,
            narrow: true,
            outstanding: 4,
            max_ops: 12,
            cases: 32,
            max_pause_percent: 50,
            idle_garbage: true,
            seed: 0x5eed,
        }
    }

    /// The traffic of [`AxiFuzz::new`] narrowed to what the DUT declares it supports, so that
    /// a failure is a bug and not a feature the DUT never had.
    pub fn supporting(bus_bytes: usize, base: u64, size: u64, dut: &AxiSupport) -> AxiFuzz {
        let mut cfg = AxiFuzz::new(bus_bytes, base, size);
        cfg.fixed = dut.fixed;
        cfg.wrap = dut.wrap;
        cfg.narrow = dut.narrow;
        cfg.ids = dut.ids.max(1);
        cfg.max_beats = dut.max_beats.clamp(1, 256);
        cfg.outstanding = dut.outstanding.max(1);
        cfg
    }
}

/// What an AXI4 slave supports, as its data sheet says: the fuzzer draws nothing else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AxiSupport {
    /// FIXED bursts.
    pub fixed: bool,
    /// WRAP bursts.
    pub wrap: bool,
    /// Narrow beats (AxSIZE below the bus width).
    pub narrow: bool,
    /// Distinct IDs it keeps apart: IDs are drawn from `0..ids`.
    pub ids: u32,
    /// Longest burst in beats.
    pub max_beats: u32,
    /// Bursts it accepts before it answers the first (its outstanding depth); the fuzzer
    /// keeps at most this many in flight.
    pub outstanding: usize,
}

impl AxiSupport {
    /// A full AXI4 slave: every burst type, narrow beats, 16 IDs, 256-beat bursts, 8 bursts in
    /// flight.
    pub const FULL: AxiSupport = AxiSupport {
        fixed: true,
        wrap: true,
        narrow: true,
        ids: 16,
        max_beats: 256,
        outstanding: 8,
    };

    /// INCR bursts of full-width beats only, one ID, one burst at a time: the least a slave
    /// can be and still call itself AXI4.
    pub const INCR_ONLY: AxiSupport = AxiSupport {
        fixed: false,
        wrap: false,
        narrow: false,
        ids: 1,
        max_beats: 256,
        outstanding: 1,
    };
}

/// A legal burst from raw draws: the shrinker moves the draws toward zero, which moves the
/// burst toward a one-beat, full-width INCR at the base address.
fn make_burst(
    cfg: &AxiFuzz,
    id: u32,
    kind: u8,
    size_raw: u8,
    len_raw: u32,
    addr_raw: u64,
) -> Burst {
    let max_size = cfg.bus_bytes.trailing_zeros() as u8;
    let size = if cfg.narrow {
        max_size - size_raw.min(max_size)
    } else {
        max_size
    };
    let beat = 1u64 << size;
    let burst = match kind {
        1 if cfg.fixed => FIXED,
        2 if cfg.wrap => WRAP,
        _ => INCR,
    };
    let max_beats = cfg.max_beats.clamp(1, 256);
    let beats = match burst {
        WRAP => [2u32, 4, 8, 16][(len_raw % 4) as usize],
        FIXED => 1 + len_raw % max_beats.min(16),
        _ => 1 + len_raw % max_beats,
    };
    let span = (u64::from(beats) * beat).min(cfg.size.max(beat));
    let room = cfg
        .size
        .saturating_sub(span)
        .min(cfg.window.max(beat))
        .max(1);
    let mut addr = cfg.base + addr_raw % room;
    if burst == WRAP {
        // A WRAP burst starts aligned to its beats and stays within its own wrap window.
        addr &= !(beat - 1);
    }
    let mut b = Burst {
        id,
        addr,
        len: (beats - 1) as u8,
        size,
        burst,
        lock: false,
    };
    if burst == INCR {
        // No INCR burst crosses 4 KiB: shorten it to end at the boundary.
        let aligned = addr & !(beat - 1);
        let to_boundary = crate::burst::to_boundary(aligned) / beat;
        let beats = u64::from(beats).min(to_boundary.max(1));
        b.len = (beats - 1) as u8;
    }
    b
}

/// A strategy for sequences of AXI4 operations as `cfg` describes.
pub fn axi_ops(cfg: &AxiFuzz) -> impl Strategy<Value = Vec<AxiOp>> {
    let c = cfg.clone();
    let ids = cfg.ids.max(1);
    let op = (
        any::<bool>(),
        0..ids,
        0u8..3,
        0u8..8,
        0u32..256,
        any::<u64>(),
    )
        .prop_flat_map(move |(write, id, kind, size_raw, len_raw, addr_raw)| {
            let burst = make_burst(&c, id, kind, size_raw, len_raw, addr_raw);
            let n = burst.lane_bytes(c.bus_bytes);
            (
                Just(write),
                Just(burst),
                prop::collection::vec(any::<u8>(), n),
                prop::collection::vec(prop::bool::weighted(0.85), n),
            )
        })
        .prop_map(|(write, burst, data, strobes)| {
            if write {
                AxiOp::Write {
                    burst,
                    data,
                    strobes,
                }
            } else {
                AxiOp::Read { burst }
            }
        });
    prop::collection::vec(op, 1..=cfg.max_ops.max(1))
}

/// The lanes each beat of `b` uses, as (byte address) in order: the reference model's view
/// of a burst, from the one place that computes beat addresses and lanes.
fn burst_bytes(b: &Burst, bus_bytes: usize) -> Vec<u64> {
    let mut out = Vec::new();
    for k in 0..b.beats() {
        let base = b.beat_addr(k) & !(bus_bytes as u64 - 1);
        let (lo, hi) = b.beat_lanes(k, bus_bytes);
        out.extend((lo..hi).map(|i| base + i as u64));
    }
    out
}

/// What a fuzz case needs from the user's set-up: the environment, after reset, with an
/// AXI4 master on the DUT's slave port, and the clock it runs on.
#[derive(Debug)]
pub struct AxiTarget {
    /// The environment (model, clocks, resets, agents).
    pub env: Env,
    /// The master on the DUT's port.
    pub master: AxiMaster,
    /// Its clock.
    pub clock: ClockId,
}

/// An access a replay has issued and not yet checked.
struct Issued<C> {
    txn: TxnId,
    /// Its place in the sequence, for the error.
    index: usize,
    write: bool,
    /// The bytes it touches, `[lo, hi)`.
    span: (u64, u64),
    /// What its answer is checked against.
    check: C,
}

/// The accesses in flight during a replay: the one place that decides when a new access must
/// first wait for older ones. It keeps at most `depth` in flight, and lets no access go out
/// while an older one in flight touches the same bytes with a write on either side: on AXI
/// the order of such accesses is not defined, so the reference could not say what a read
/// returns. Waiting retires the oldest first.
struct InFlight<C> {
    depth: usize,
    queue: VecDeque<Issued<C>>,
}

impl<C> InFlight<C> {
    fn new(depth: usize) -> InFlight<C> {
        InFlight {
            depth: depth.max(1),
            queue: VecDeque::new(),
        }
    }

    /// Retires accesses, oldest first, until one that `write`s or reads `span` may go out.
    fn make_room(
        &mut self,
        write: bool,
        span: (u64, u64),
        mut retire: impl FnMut(Issued<C>) -> Result<()>,
    ) -> Result<()> {
        let clashes = |q: &VecDeque<Issued<C>>| {
            q.iter()
                .any(|p| (write || p.write) && p.span.0 < span.1 && span.0 < p.span.1)
        };
        while self.queue.len() >= self.depth || clashes(&self.queue) {
            let Some(oldest) = self.queue.pop_front() else {
                break;
            };
            retire(oldest)?;
        }
        Ok(())
    }

    fn push(&mut self, issued: Issued<C>) {
        self.queue.push_back(issued);
    }

    /// Retires everything still in flight, oldest first.
    fn drain(&mut self, mut retire: impl FnMut(Issued<C>) -> Result<()>) -> Result<()> {
        while let Some(oldest) = self.queue.pop_front() {
            retire(oldest)?;
        }
        Ok(())
    }
}

/// A read's bytes and what the reference held there when it went out.
type ReadCheck = Vec<(u64, u8)>;

/// Waits for an AXI4 access and checks a read's data.
fn retire_axi(target: &mut AxiTarget, p: Issued<ReadCheck>) -> Result<()> {
    target.master.wait(&mut target.env, p.txn)?;
    if p.write {
        target.master.take_write(p.txn)?;
        return Ok(());
    }
    let (got, _) = target.master.take_read(p.txn)?;
    for (j, ((a, want), g)) in p.check.iter().zip(&got).enumerate() {
        if want != g {
            return Err(BfmError::Mismatch {
                bus: "fuzz".into(),
                what: format!("operation {} (read), byte {j} at {a:#x}", p.index),
                expected: format!("{want:#04x}"),
                actual: format!("{g:#04x}"),
            });
        }
    }
    Ok(())
}

/// The lowest and one past the highest byte of a list.
fn span_of(bytes: &[u64]) -> (u64, u64) {
    let lo = bytes.iter().copied().min().unwrap_or(0);
    let hi = bytes.iter().copied().max().map_or(lo, |h| h + 1);
    (lo, hi)
}

/// Runs `ops` through `target` against a reference memory, with at most `outstanding` bursts
/// in flight: every read must return what the reference holds; any protocol violation,
/// timeout or mismatch ends the run with its error.
pub fn replay_axi(target: &mut AxiTarget, ops: &[AxiOp], outstanding: usize) -> Result<()> {
    let bus = target.master.bus_bytes();
    let mut reference = Memory::new();
    let mut flight = InFlight::new(outstanding);
    for (index, op) in ops.iter().enumerate() {
        let (burst, write) = match op {
            AxiOp::Write { burst, .. } => (burst, true),
            AxiOp::Read { burst } => (burst, false),
        };
        let bytes = burst_bytes(burst, bus);
        let span = span_of(&bytes);
        flight.make_room(write, span, |p| retire_axi(target, p))?;
        let (txn, check) = match op {
            AxiOp::Write {
                burst,
                data,
                strobes,
            } => {
                let t = target
                    .master
                    .start_write_burst_strobed(*burst, data, strobes)?;
                for ((a, d), s) in bytes.iter().zip(data).zip(strobes) {
                    if *s {
                        reference.write_byte(*a, *d);
                    }
                }
                (t, Vec::new())
            }
            AxiOp::Read { burst } => {
                let t = target.master.start_read_burst(*burst)?;
                (
                    t,
                    bytes
                        .iter()
                        .map(|a| (*a, reference.read_byte(*a)))
                        .collect(),
                )
            }
        };
        flight.push(Issued {
            txn,
            index,
            write,
            span,
            check,
        });
    }
    flight.drain(|p| retire_axi(target, p))?;
    target.env.finish()
}

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

impl std::fmt::Display for FuzzFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
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

    /// Adds a case's monitor: its counts, and its situations once.
    fn add(&mut self, coverage: Coverage, situations: Vec<Situation>) {
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

fn pauses(max: u8) -> impl Strategy<Value = PauseSpec> {
    (any::<u64>(), 0..=max).prop_map(|(seed, pct)| {
        if pct == 0 {
            PauseSpec::Never
        } else {
            PauseSpec::random(seed, pct)
        }
    })
}

fn runner(cases: u32, seed: u64) -> TestRunner {
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

fn run<T: std::fmt::Debug + Clone>(
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
fn replay_line(call: String, first: Option<&str>) -> String {
    match first {
        Some(first) => format!("{call}, {first}"),
        None => call,
    }
}

/// [`run`], with a report that each case adds its monitors' counts to.
fn run_reporting<T: std::fmt::Debug + Clone>(
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

/// Fuzzes an AXI4 slave: `setup` builds a fresh target (model out of reset, master attached)
/// for each case; the case's pauses go on every channel of every agent.
pub fn check_axi_slave(
    cfg: &AxiFuzz,
    setup: impl Fn() -> Result<AxiTarget>,
) -> std::result::Result<FuzzReport, FuzzFailure> {
    let strategy = (axi_ops(cfg), pauses(cfg.max_pause_percent));
    let replay = replay_line(
        format!("fuzz::replay_axi(&mut target, &ops, {})", cfg.outstanding),
        cfg.idle_garbage
            .then_some("with idle_garbage in the master's config"),
    );
    run_reporting(
        runner(cfg.cases, cfg.seed),
        strategy,
        &replay,
        |ops, p, report| {
            let mut target = setup()?;
            target.env.set_pauses(p);
            if cfg.idle_garbage {
                let mut c = target.master.config();
                c.idle_garbage = true;
                target.master.set_config(c);
            }
            let result = replay_axi(&mut target, ops, cfg.outstanding);
            if let Some(m) = target.master.monitor() {
                report.borrow_mut().add(m.coverage(), m.situations());
            }
            result
        },
    )
}

/// One AXI4-Lite operation.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum AxilOp {
    /// A write of `data` under the byte strobes `strb`.
    Write {
        /// Address (aligned to the bus width).
        addr: u64,
        /// Data.
        data: u64,
        /// Strobes.
        strb: u64,
    },
    /// A read.
    Read {
        /// Address.
        addr: u64,
    },
}

impl std::fmt::Debug for AxilOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AxilOp::Write { addr, data, strb } => write!(
                f,
                "AxilOp::Write {{ addr: {addr:#x}, data: {data:#x}, strb: {strb:#x} }}"
            ),
            AxilOp::Read { addr } => write!(f, "AxilOp::Read {{ addr: {addr:#x} }}"),
        }
    }
}

/// What AXI4-Lite traffic to draw: word accesses in `[base, base + size)` of a memory-like
/// slave (every written byte reads back).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AxilFuzz {
    /// Data bus width in bytes (4 or 8).
    pub bus_bytes: usize,
    /// First address.
    pub base: u64,
    /// Bytes decoded.
    pub size: u64,
    /// Accesses in flight at most (1 issues each after the previous one's answer); as for
    /// AXI4, an access waits for an older one in flight on the same word when either writes.
    pub outstanding: usize,
    /// Drive garbage on AW, W and AR while their VALID is low.
    pub idle_garbage: bool,
    /// Operations per case at most.
    pub max_ops: usize,
    /// Cases to run.
    pub cases: u32,
    /// Highest pause percentage.
    pub max_pause_percent: u8,
    /// The run's seed.
    pub seed: u64,
}

impl AxilFuzz {
    /// Four accesses in flight, garbage while idle, 12 operations per case, 32 cases, pauses
    /// up to 50 %: what any AXI4-Lite slave must take. A slave that is polite only to a
    /// polite master shows with these defaults; `outstanding: 1` and `idle_garbage: false`
    /// are the polite master.
    pub fn new(bus_bytes: usize, base: u64, size: u64) -> AxilFuzz {
        AxilFuzz {
            bus_bytes,
            base,
            size,
            outstanding: 4,
            idle_garbage: true,
            max_ops: 12,
            cases: 32,
            max_pause_percent: 50,
            seed: 0x5eed,
        }
    }
}

/// A strategy for AXI4-Lite operation sequences.
pub fn axil_ops(cfg: &AxilFuzz) -> impl Strategy<Value = Vec<AxilOp>> {
    let (base, bytes) = (cfg.base, cfg.bus_bytes.max(1) as u64);
    let words = (cfg.size / bytes).max(1);
    let strb_max = (1u64 << bytes) - 1;
    let op = (any::<bool>(), 0..words, any::<u64>(), 0..=strb_max).prop_map(
        move |(write, w, data, strb)| {
            let addr = base + w * bytes;
            if write {
                AxilOp::Write { addr, data, strb }
            } else {
                AxilOp::Read { addr }
            }
        },
    );
    prop::collection::vec(op, 1..=cfg.max_ops.max(1))
}

/// Waits for an AXI4-Lite access and checks its response, and a read's data.
fn retire_axil(env: &mut Env, master: &AxilMaster, p: Issued<u64>) -> Result<()> {
    master.wait(env, p.txn)?;
    let (got, resp) = master.take(p.txn)?;
    let what = if p.write { "write" } else { "read" };
    if resp != crate::Resp::Okay {
        return Err(BfmError::Response {
            bus: "fuzz".into(),
            what,
            addr: p.span.0,
            resp,
        });
    }
    if !p.write && got != p.check {
        return Err(BfmError::Mismatch {
            bus: "fuzz".into(),
            what: format!("operation {} (read at {:#x})", p.index, p.span.0),
            expected: format!("{:#x}", p.check),
            actual: format!("{got:#x}"),
        });
    }
    Ok(())
}

/// Runs AXI4-Lite `ops` against a reference memory, with at most `outstanding` accesses in
/// flight.
pub fn replay_axil(
    env: &mut Env,
    master: &AxilMaster,
    ops: &[AxilOp],
    outstanding: usize,
) -> Result<()> {
    let bus_bytes = master.bus_bytes();
    let mut reference = Memory::new();
    let mut flight = InFlight::new(outstanding);
    for (index, op) in ops.iter().enumerate() {
        let (addr, write) = match *op {
            AxilOp::Write { addr, .. } => (addr, true),
            AxilOp::Read { addr } => (addr, false),
        };
        let span = (addr, addr + bus_bytes as u64);
        flight.make_room(write, span, |p| retire_axil(env, master, p))?;
        let (txn, check) = match *op {
            AxilOp::Write { addr, data, strb } => {
                for b in 0..bus_bytes {
                    if strb >> b & 1 == 1 {
                        reference.write_byte(addr + b as u64, (data >> (8 * b)) as u8);
                    }
                }
                (master.start_write(addr, data, strb)?, 0)
            }
            AxilOp::Read { addr } => {
                let mut want = 0u64;
                for b in 0..bus_bytes {
                    want |= u64::from(reference.read_byte(addr + b as u64)) << (8 * b);
                }
                (master.start_read(addr)?, want)
            }
        };
        flight.push(Issued {
            txn,
            index,
            write,
            span,
            check,
        });
    }
    flight.drain(|p| retire_axil(env, master, p))?;
    env.finish()
}

/// Fuzzes a memory-like AXI4-Lite slave; `setup` returns a fresh environment out of reset and
/// the master on the DUT's port.
pub fn check_axil_slave(
    cfg: &AxilFuzz,
    setup: impl Fn() -> Result<(Env, AxilMaster)>,
) -> std::result::Result<FuzzReport, FuzzFailure> {
    let strategy = (axil_ops(cfg), pauses(cfg.max_pause_percent));
    let replay = replay_line(
        format!(
            "fuzz::replay_axil(&mut env, &master, &ops, {})",
            cfg.outstanding
        ),
        cfg.idle_garbage
            .then_some("after master.set_idle_garbage(true)"),
    );
    run_reporting(
        runner(cfg.cases, cfg.seed),
        strategy,
        &replay,
        |ops, p, report| {
            let (mut env, master) = setup()?;
            env.set_pauses(p);
            master.set_idle_garbage(cfg.idle_garbage);
            let result = replay_axil(&mut env, &master, ops, cfg.outstanding);
            if let Some(m) = master.monitor() {
                report.borrow_mut().add(m.coverage(), m.situations());
            }
            result
        },
    )
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drawn_bursts_are_legal() {
        let cfg = AxiFuzz::new(16, 0x1000, 0x4000);
        let mut runner = runner(200, 1);
        runner
            .run(&axi_ops(&cfg), |ops| {
                for op in &ops {
                    let b = match op {
                        AxiOp::Write {
                            burst,
                            data,
                            strobes,
                        } => {
                            prop_assert_eq!(data.len(), burst.lane_bytes(16));
                            prop_assert_eq!(strobes.len(), data.len());
                            *burst
                        }
                        AxiOp::Read { burst } => *burst,
                    };
                    prop_assert!(b.addr >= 0x1000 && b.addr < 0x5000);
                    prop_assert!(b.size <= 4);
                    if b.burst == INCR {
                        let last =
                            crate::burst::incr_last_byte(b.addr, u64::from(b.beats()), b.size);
                        prop_assert!(!crate::burst::crosses_4k(b.addr, last), "no 4 KiB crossing");
                    }
                    if b.burst == WRAP {
                        prop_assert!(matches!(b.len, 1 | 3 | 7 | 15));
                        prop_assert_eq!(b.addr % (1 << b.size), 0);
                    }
                }
                Ok(())
            })
            .expect("legal bursts");
    }

    #[test]
    fn declared_support_limits_the_draws() {
        let cfg = AxiFuzz::supporting(8, 0, 0x2000, &AxiSupport::INCR_ONLY);
        assert_eq!(cfg.outstanding, 1);
        let mut runner = runner(200, 2);
        runner
            .run(&axi_ops(&cfg), |ops| {
                for op in &ops {
                    let (AxiOp::Write { burst, .. } | AxiOp::Read { burst }) = op;
                    prop_assert_eq!(burst.burst, INCR);
                    prop_assert_eq!(burst.size, 3, "full-width beats of 8 bytes");
                    prop_assert_eq!(burst.id, 0);
                }
                Ok(())
            })
            .expect("only what the DUT declares");
    }

    /// Issues (write, lo, hi) accesses through a window of `depth` and returns, for each, the
    /// accesses retired before it could go out.
    fn waits(depth: usize, accesses: &[(bool, u64, u64)]) -> Vec<Vec<usize>> {
        let mut flight = InFlight::new(depth);
        let mut out = Vec::new();
        for (index, &(write, lo, hi)) in accesses.iter().enumerate() {
            let mut retired = Vec::new();
            flight
                .make_room(write, (lo, hi), |p| {
                    retired.push(p.index);
                    Ok(())
                })
                .expect("no retire fails");
            out.push(retired);
            flight.push(Issued {
                txn: TxnId(index as u64),
                index,
                write,
                span: (lo, hi),
                check: (),
            });
        }
        out
    }

    #[test]
    fn an_access_waits_only_for_a_clash_or_for_room() {
        // Reads of the same bytes share the window; a write to them waits for both.
        assert_eq!(
            waits(4, &[(false, 0, 4), (false, 0, 4), (true, 2, 3)]),
            [vec![], vec![], vec![0, 1]]
        );
        // A read of bytes a write in flight touches waits for it; other bytes do not.
        assert_eq!(
            waits(4, &[(true, 8, 16), (false, 0, 8), (false, 15, 16)]),
            [vec![], vec![], vec![0]]
        );
        // Depth 2: the third access waits for the oldest however far apart they are.
        assert_eq!(
            waits(2, &[(true, 0, 4), (true, 64, 68), (false, 128, 132)]),
            [vec![], vec![], vec![0]]
        );
    }

    #[test]
    fn failures_print_as_rust() {
        let op = AxiOp::Read {
            burst: Burst::incr(1, 0x40, 2, 2),
        };
        let s = format!("{op:?}");
        assert!(
            s.starts_with("AxiOp::Read { burst: Burst { id: 1, addr: 0x40"),
            "{s}"
        );
    }
}
