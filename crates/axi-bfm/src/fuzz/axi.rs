//! AXI4 protocol fuzzing: the operations, their strategy, the replay against a reference
//! memory and the check of an AXI4 slave.

use proptest::prelude::*;

use sim_runtime::ClockId;

use super::inflight::{InFlight, Issued};
use super::runner::{pauses, replay_line, run_reporting, runner, FuzzFailure, FuzzReport};
use crate::burst::{Burst, FIXED, INCR, WRAP};
use crate::error::{BfmError, Result};
use crate::mem::Memory;
use crate::{AxiMaster, Env};

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

impl AxiOp {
    /// The operation's burst, and whether it writes.
    pub fn burst(&self) -> (&Burst, bool) {
        match self {
            AxiOp::Write { burst, .. } => (burst, true),
            AxiOp::Read { burst } => (burst, false),
        }
    }
}

impl std::fmt::Debug for AxiOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let b = |b: &Burst| {
            format!(
                "Burst {{ id: {}, addr: {:#x}, len: {}, size: {}, burst: {}, lock: {} }}",
                b.id, b.addr, b.len, b.size, b.burst, b.lock
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
    /// Bytes it decodes from `base`: no drawn burst touches a byte outside them.
    pub size: u64,
    /// Bursts start within the first `window` bytes of the range, so that reads land on
    /// what earlier writes wrote (a read of untouched memory checks little).
    pub window: u64,
    /// Longest burst in beats (1 to 256).
    pub max_beats: u32,
    /// IDs drawn from `0..ids`; they must fit the port's ID signals, which
    /// [`AxiFuzz::check_target`] checks before the run.
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

impl AxiFuzz {
    /// Checks the traffic against the master bound to the DUT's port, before any case runs:
    /// the IDs drawn must fit the port's ID signals (a master whose ID is cut short waits for
    /// an answer under an ID the DUT never saw, and times out with no hint why), the data
    /// width must be the port's, and the range must hold a beat. [`check_axi_slave`] calls it
    /// on the first target it builds.
    pub fn check_target(&self, master: &AxiMaster) -> Result<()> {
        let bad = |problem: String| BfmError::BadRequest {
            bus: master.bus().to_string(),
            problem,
        };
        let id_bits = master.id_bits();
        let carried = if id_bits >= 32 {
            u64::MAX
        } else {
            1u64 << id_bits
        };
        if self.ids == 0 {
            return Err(bad(
                "the fuzzer is set to draw IDs from 0..0, which is none; set `ids` to 1 or more"
                    .into(),
            ));
        }
        if u64::from(self.ids) > carried {
            let port = if id_bits == 0 {
                "the port has no ID signals, so it carries ID 0 only".to_string()
            } else {
                format!(
                    "the port's ID signals are {id_bits} bit(s) wide (IDs 0 to {})",
                    carried - 1
                )
            };
            return Err(bad(format!(
                "the fuzzer draws IDs 0 to {} but {port}; set `ids: {carried}` in AxiFuzz, or declare what the DUT keeps apart with AxiFuzz::supporting(.., &AxiSupport {{ ids: {carried}, .. }})",
                self.ids - 1
            )));
        }
        if self.bus_bytes != master.bus_bytes() {
            return Err(bad(format!(
                "the fuzzer is set for a {}-byte data bus but the port's is {} bytes; pass {} as AxiFuzz's bus_bytes",
                self.bus_bytes,
                master.bus_bytes(),
                master.bus_bytes()
            )));
        }
        let least = if self.narrow {
            1
        } else {
            self.bus_bytes as u64
        };
        if self.size < least {
            return Err(bad(format!(
                "the range of {} bytes at {:#x} holds no beat of {least} byte(s); give the bytes the DUT decodes as `size`",
                self.size, self.base
            )));
        }
        Ok(())
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

    /// INCR bursts of full-width beats only, one ID: the least a slave can be and still call
    /// itself AXI4. Still 4 bursts in flight, as [`AxiFuzz::new`] keeps: a slave that takes
    /// fewer holds its READY low, which is legal, and the polite master that waits for each
    /// answer misses the bugs of a slave that takes a second request early.
    pub const INCR_ONLY: AxiSupport = AxiSupport {
        fixed: false,
        wrap: false,
        narrow: false,
        ids: 1,
        max_beats: 256,
        outstanding: 4,
    };
}

/// A legal burst from raw draws that stays inside `[base, base + size)`: the shrinker moves
/// the draws toward zero, which moves the burst toward a one-beat, full-width INCR at the base
/// address. Every byte a burst touches is one the DUT decodes, because a burst that runs past
/// the decoded range lands where the DUT aliases (or ignores) it and the reference memory does
/// not, which reads back as a false mismatch. So the beat is no wider than the range, an INCR
/// burst no longer than the range allows, and a WRAP burst's whole wrap window inside it (the
/// longest wrap length that fits, or INCR when none does).
fn make_burst(
    cfg: &AxiFuzz,
    id: u32,
    kind: u8,
    size_raw: u8,
    len_raw: u32,
    addr_raw: u64,
) -> Burst {
    let max_size = cfg.bus_bytes.trailing_zeros() as u8;
    let mut size = if cfg.narrow {
        max_size - size_raw.min(max_size)
    } else {
        max_size
    };
    // A range narrower than a beat takes narrower beats when the DUT has them;
    // `AxiFuzz::check_target` refuses a range narrower than the beats it must take.
    while cfg.narrow && size > 0 && (1u64 << size) > cfg.size {
        size -= 1;
    }
    let beat = 1u64 << size;
    let fit_beats = (cfg.size / beat).clamp(1, 256);
    let max_beats = cfg.max_beats.clamp(1, 256).min(fit_beats as u32);
    let mut burst = match kind {
        1 if cfg.fixed => FIXED,
        2 if cfg.wrap => WRAP,
        _ => INCR,
    };
    let mut beats = match burst {
        WRAP => [2u32, 4, 8, 16][(len_raw % 4) as usize],
        FIXED => 1 + len_raw % max_beats.min(16),
        _ => 1 + len_raw % max_beats,
    };
    let top = cfg.base + cfg.size;
    if burst == WRAP {
        // A WRAP burst stays within its wrap window, `beats * beat` bytes aligned to their
        // own size: take the longest wrap length, down from the drawn one, whose window lies
        // wholly in the range; a range that holds no window of two beats gets an INCR burst.
        let mut chosen = None;
        let mut wrap_beats = beats;
        while wrap_beats > max_beats {
            wrap_beats /= 2;
        }
        while wrap_beats >= 2 {
            let span = u64::from(wrap_beats) * beat;
            let first = cfg.base.div_ceil(span) * span;
            if first + span <= top {
                let windows = (top - first) / span;
                let reach = cfg.window.max(span).div_ceil(span).max(1);
                let w = first + (addr_raw % windows.min(reach)) * span;
                let addr = w + ((addr_raw / windows.max(1)) % u64::from(wrap_beats)) * beat;
                chosen = Some((wrap_beats, addr));
                break;
            }
            wrap_beats /= 2;
        }
        match chosen {
            Some((b, addr)) => {
                return Burst {
                    id,
                    addr,
                    len: (b - 1) as u8,
                    size,
                    burst: WRAP,
                    lock: false,
                };
            }
            None => {
                burst = INCR;
                beats = beats.min(max_beats);
            }
        }
    }
    // INCR covers `beats` beats from the start's aligned address; FIXED one beat, however
    // many times.
    let span = if burst == FIXED {
        beat
    } else {
        u64::from(beats) * beat
    };
    let room = cfg
        .size
        .saturating_sub(span)
        .min(cfg.window.max(beat))
        .saturating_add(1);
    let addr = cfg.base + addr_raw % room;
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
pub(super) fn span_of(bytes: &[u64]) -> (u64, u64) {
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
        let (burst, write) = op.burst();
        let bytes = burst.byte_addrs(bus);
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

/// Fuzzes an AXI4 slave: `setup` builds a fresh target (model out of reset, master attached)
/// for each case; the case's pauses go on every channel of every agent.
pub fn check_axi_slave(
    cfg: &AxiFuzz,
    setup: impl Fn() -> Result<AxiTarget>,
) -> std::result::Result<FuzzReport, FuzzFailure> {
    // The traffic is checked against the port before the run: a mismatch is the set-up's
    // error, not a case to shrink.
    let first = setup().and_then(|t| cfg.check_target(&t.master));
    if let Err(e) = first {
        return Err(FuzzFailure::before_run(&e));
    }
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

    /// Every byte of every drawn burst lies in `[base, base + size)`, for ranges smaller than
    /// the longest burst, unaligned ones and ones of a single beat.
    #[test]
    fn no_drawn_burst_leaves_the_decoded_range() {
        let full = |bus: usize, base: u64, size: u64| {
            AxiFuzz::supporting(
                bus,
                base,
                size,
                &AxiSupport {
                    ids: 4,
                    ..AxiSupport::FULL
                },
            )
        };
        let cfgs = [
            full(4, 0, 64),
            full(16, 0x1000, 64),
            full(8, 0x40, 0x30),
            full(4, 0x10, 4),
            full(8, 0x2000, 0x3000),
            AxiFuzz::supporting(4, 0, 64, &AxiSupport::INCR_ONLY),
        ];
        for (n, cfg) in cfgs.iter().enumerate() {
            let mut runner = runner(300, 40 + n as u64);
            runner
                .run(&axi_ops(cfg), |ops| {
                    for op in &ops {
                        let (AxiOp::Write { burst, .. } | AxiOp::Read { burst }) = op;
                        for a in burst.byte_addrs(cfg.bus_bytes) {
                            prop_assert!(
                                a >= cfg.base && a < cfg.base + cfg.size,
                                "{op:?} touches {a:#x}, outside [{:#x}, {:#x})",
                                cfg.base,
                                cfg.base + cfg.size
                            );
                        }
                        if burst.burst == WRAP {
                            prop_assert!(matches!(burst.len, 1 | 3 | 7 | 15));
                            prop_assert_eq!(burst.addr % (1 << burst.size), 0);
                        }
                    }
                    Ok(())
                })
                .unwrap_or_else(|e| panic!("range {n}: {e}"));
        }
    }

    #[test]
    fn an_incr_only_slave_still_gets_several_bursts_in_flight() {
        let cfg = AxiFuzz::supporting(8, 0, 0x2000, &AxiSupport::INCR_ONLY);
        assert_eq!(cfg.outstanding, AxiFuzz::new(8, 0, 0x2000).outstanding);
        assert!(cfg.outstanding > 1);
    }

    #[test]
    fn declared_support_limits_the_draws() {
        let cfg = AxiFuzz::supporting(8, 0, 0x2000, &AxiSupport::INCR_ONLY);
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
