//! AXI4-Lite protocol fuzzing: the operations, their strategy, the replay against a
//! reference memory and the check of an AXI4-Lite slave.

use proptest::prelude::*;

use super::inflight::{InFlight, Issued};
use super::runner::{pauses, replay_line, run_reporting, runner, FuzzFailure, FuzzReport};
use crate::error::{BfmError, Result};
use crate::mem::Memory;
use crate::{AxilMaster, Env};

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
