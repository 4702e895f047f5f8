//! The AXI4 and AXI4-Lite pass-throughs as masters under test: the bus model on the slave port
//! does a drawn list of accesses through the pass-through, a randomizing slave on its master
//! port answers them, and a reference model predicts memory and every access's outcome from
//! what the slave answered.

// The run and reference functions take `&Vec<_>`: master fuzzing hands them `&W` for the
// work type `W`, here a vector.
#![allow(clippy::ptr_arg)]

use std::collections::VecDeque;

use axi_bfm::burst::{Burst, INCR};
use axi_bfm::fuzz::{axi_ops, AxiFuzz, AxiOp, AxilOp, Expected, MasterRun};
use axi_bfm::random_slave::{SlaveChoices, SlaveLog};
use axi_bfm::{
    AxiMaster, AxilMaster, BfmError, Memory, RandomAxiSlave, RandomAxilSlave, Resp, TxnId,
};
use card_sim::Top;
use proptest::prelude::*;

use super::env_of;

/// Data bus of the AXI4 pass-through, in bytes.
pub const AXI_BUS: usize = 16;
/// Where the drawn accesses go: a window that straddles a 4 KiB page.
pub const BASE: u64 = 0xc00;
pub const SIZE: u64 = 0x800;

/// One access's outcome as the master model reports it: the response and, for a read that
/// succeeded, its bytes.
pub type Outcome = (Resp, Vec<u8>);

/// The bytes each beat of `b` carries, in order.
pub fn burst_bytes(b: &Burst, bus: usize) -> Vec<u64> {
    (0..b.beats())
        .flat_map(|k| {
            let line = b.beat_line(k, bus);
            let (lo, hi) = b.beat_lanes(k, bus);
            (lo..hi).map(move |i| line + i as u64)
        })
        .collect()
}

/// A legal exclusive burst (A7.2.4: up to 16 beats, a power-of-two total of up to 128 bytes,
/// aligned to it) in the window, as an exclusive read followed by an exclusive write of it.
fn exclusive_pair() -> impl Strategy<Value = (Burst, Vec<u8>)> {
    (0u32..4, 0u8..=4, 0u32..5, 0u64..(SIZE / 128)).prop_flat_map(|(id, size, lb, slot)| {
        let beats = 1u32 << lb;
        let size = if (beats << size) > 128 {
            7 - lb as u8
        } else {
            size
        };
        let b = Burst {
            id,
            addr: BASE + slot * 128,
            len: (beats - 1) as u8,
            size,
            burst: INCR,
            lock: true,
        };
        let n = b.lane_bytes(AXI_BUS);
        (Just(b), prop::collection::vec(any::<u8>(), n))
    })
}

/// The AXI4 work: the slave-side fuzzer's accesses (bursts up to 256 beats) with up to three
/// exclusive read-write pairs among them.
pub fn axi_work() -> impl Strategy<Value = Vec<AxiOp>> {
    let cfg = AxiFuzz {
        max_beats: 256,
        window: SIZE,
        ..AxiFuzz::new(AXI_BUS, BASE, SIZE)
    };
    (
        axi_ops(&cfg),
        prop::collection::vec((exclusive_pair(), any::<usize>()), 0..=3),
    )
        .prop_map(|(mut ops, pairs)| {
            for ((b, data), at) in pairs {
                let at = at % (ops.len() + 1);
                let strobes = vec![true; data.len()];
                ops.insert(
                    at,
                    AxiOp::Write {
                        burst: b,
                        data,
                        strobes,
                    },
                );
                ops.insert(at, AxiOp::Read { burst: b });
            }
            ops
        })
}

/// The touched bytes' range of an access.
fn span(op: &AxiOp) -> (u64, u64, bool) {
    let (b, write) = match op {
        AxiOp::Write { burst, .. } => (burst, true),
        AxiOp::Read { burst } => (burst, false),
    };
    let bytes = burst_bytes(b, AXI_BUS);
    let lo = bytes.iter().copied().min().unwrap_or(0);
    let hi = bytes.iter().copied().max().map_or(lo, |h| h + 1);
    (lo, hi, write)
}

/// Runs `ops` through the AXI4 pass-through against a randomizing slave with `choices`, four
/// accesses in flight at most and none next to an older one it could race with.
pub fn run_axi(
    ops: &Vec<AxiOp>,
    choices: &SlaveChoices,
) -> Result<MasterRun<RandomAxiSlave, Vec<Outcome>>, BfmError> {
    let (mut env, clk) = env_of(Top::AxiPassthrough);
    let m = AxiMaster::attach(&mut env, "s_axi", clk)?;
    let slave = RandomAxiSlave::attach(&mut env, "m_axi", clk, choices.clone())?;
    env.reset(clk, 4)?;
    let mut out: Vec<Outcome> = vec![(Resp::Okay, Vec::new()); ops.len()];
    let mut flight: VecDeque<(TxnId, usize, (u64, u64, bool))> = VecDeque::new();
    let retire = |env: &mut axi_bfm::Env,
                  out: &mut Vec<Outcome>,
                  (t, i, (_, _, write)): (TxnId, usize, (u64, u64, bool))|
     -> Result<(), BfmError> {
        m.wait(env, t)?;
        out[i] = if write {
            (m.take_write(t)?, Vec::new())
        } else {
            let (d, r) = m.take_read(t)?;
            (r, if r.is_ok() { d } else { Vec::new() })
        };
        Ok(())
    };
    for (i, op) in ops.iter().enumerate() {
        let s = span(op);
        while flight.len() >= 4
            || flight
                .iter()
                .any(|(_, _, p)| (s.2 || p.2) && p.0 < s.1 && s.0 < p.1)
        {
            if let Some(p) = flight.pop_front() {
                retire(&mut env, &mut out, p)?;
            }
        }
        let t = match op {
            AxiOp::Write {
                burst,
                data,
                strobes,
            } => m.start_write_burst_strobed(*burst, data, strobes)?,
            AxiOp::Read { burst } => m.start_read_burst(*burst)?,
        };
        flight.push_back((t, i, s));
    }
    while let Some(p) = flight.pop_front() {
        retire(&mut env, &mut out, p)?;
    }
    Ok(MasterRun {
        env,
        slave,
        reported: out,
    })
}

/// The reference of [`run_axi`]: the accesses in order, each write applied when the slave's
/// answer says it changed memory, each read returning the reference's bytes when it succeeded.
pub fn reference_axi(ops: &Vec<AxiOp>, log: &SlaveLog) -> Expected<Vec<Outcome>> {
    let mut mem = Memory::new();
    let (mut wi, mut ri) = (0, 0);
    let mut reported = Vec::new();
    for op in ops {
        match op {
            AxiOp::Write {
                burst,
                data,
                strobes,
            } => {
                let resp = log.writes.get(wi).map_or(Resp::Okay, |w| w.1);
                wi += 1;
                if log.wrote(burst, resp) {
                    for ((a, d), s) in burst_bytes(burst, AXI_BUS).iter().zip(data).zip(strobes) {
                        if *s {
                            mem.write_byte(*a, *d);
                        }
                    }
                }
                reported.push((resp, Vec::new()));
            }
            AxiOp::Read { burst } => {
                let resp = log.reads.get(ri).map_or(Resp::Okay, |r| r.1);
                ri += 1;
                let data = if resp.is_ok() {
                    burst_bytes(burst, AXI_BUS)
                        .iter()
                        .map(|a| mem.read_byte(*a))
                        .collect()
                } else {
                    Vec::new()
                };
                reported.push((resp, data));
            }
        }
    }
    let whole = (SIZE + 256 * AXI_BUS as u64) as usize;
    Expected {
        memory: vec![(BASE, mem.read_vec(BASE, whole))],
        reported,
    }
}

/// AXI4-Lite work: word accesses in the first 256 bytes.
pub fn axil_work(bus: usize) -> impl Strategy<Value = Vec<AxilOp>> {
    let words = 256 / bus as u64;
    let op = (any::<bool>(), 0..words, any::<u64>(), 1u64..(1 << bus)).prop_map(
        move |(w, k, data, strb)| {
            let addr = k * bus as u64;
            if w {
                AxilOp::Write { addr, data, strb }
            } else {
                AxilOp::Read { addr }
            }
        },
    );
    prop::collection::vec(op, 1..=16)
}

/// Runs `ops` through the AXI4-Lite pass-through, one at a time, against a randomizing slave.
pub fn run_axil(
    ops: &Vec<AxilOp>,
    choices: &SlaveChoices,
) -> Result<MasterRun<RandomAxilSlave, Vec<(Resp, u64)>>, BfmError> {
    let (mut env, clk) = env_of(Top::AxilPassthrough);
    let m = AxilMaster::attach(&mut env, "s_axil", clk)?;
    let slave = RandomAxilSlave::attach(&mut env, "m_axil", clk, choices.clone())?;
    env.reset(clk, 4)?;
    let mut out = Vec::new();
    for op in ops {
        out.push(match *op {
            AxilOp::Write { addr, data, strb } => (m.write_resp(&mut env, addr, data, strb)?, 0),
            AxilOp::Read { addr } => {
                let (d, r) = m.read_resp(&mut env, addr)?;
                (r, if r.is_ok() { d } else { 0 })
            }
        });
    }
    Ok(MasterRun {
        env,
        slave,
        reported: out,
    })
}

/// The reference of [`run_axil`] on a bus of `bus` bytes.
pub fn reference_axil(bus: usize, ops: &Vec<AxilOp>, log: &SlaveLog) -> Expected<Vec<(Resp, u64)>> {
    let mut mem = Memory::new();
    let (mut wi, mut ri) = (0, 0);
    let mut reported = Vec::new();
    let mask = if bus == 8 {
        u64::MAX
    } else {
        (1u64 << (8 * bus)) - 1
    };
    for op in ops {
        match *op {
            AxilOp::Write { addr, data, strb } => {
                let resp = log.writes.get(wi).map_or(Resp::Okay, |w| w.1);
                wi += 1;
                if resp.is_ok() {
                    for i in 0..bus {
                        if strb >> i & 1 == 1 {
                            mem.write_byte(addr + i as u64, (data >> (8 * i)) as u8);
                        }
                    }
                }
                reported.push((resp, 0));
            }
            AxilOp::Read { addr } => {
                let resp = log.reads.get(ri).map_or(Resp::Okay, |r| r.1);
                ri += 1;
                let d = (0..bus).fold(0u64, |a, i| {
                    a | u64::from(mem.read_byte(addr + i as u64)) << (8 * i)
                });
                reported.push((resp, if resp.is_ok() { d & mask } else { 0 }));
            }
        }
    }
    Expected {
        memory: vec![(0, mem.read_vec(0, 256))],
        reported,
    }
}
