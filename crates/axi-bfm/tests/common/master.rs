//! The AXI4 and AXI4-Lite pass-throughs as masters under test: the bus model on the slave port
//! does a drawn list of accesses through the pass-through, a randomizing slave on its master
//! port answers them, and a reference model predicts memory and every access's outcome from
//! what the slave answered.

// The run and reference functions take `&Vec<_>`: master fuzzing hands them `&W` for the
// work type `W`, here a vector.
#![allow(clippy::ptr_arg)]

use axi_bfm::burst::{Burst, INCR};
use axi_bfm::fuzz::{
    axi_ops, drive_axi_ops, forwarded_axi_ops, AxiFuzz, AxiOp, AxilOp, Expected, MasterRun, Outcome,
};
use axi_bfm::random_slave::{SlaveChoices, SlaveLog};
use axi_bfm::{AxiMaster, AxilMaster, BfmError, Memory, RandomAxiSlave, RandomAxilSlave, Resp};
use card_sim::Top;
use proptest::prelude::*;

use super::env_of;

/// Data bus of the AXI4 pass-through, in bytes.
pub const AXI_BUS: usize = 16;
/// Where the drawn accesses go: a window that straddles a 4 KiB page.
pub const BASE: u64 = 0xc00;
pub const SIZE: u64 = 0x800;

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
    let reported = drive_axi_ops(&mut env, &m, ops, 4)?;
    Ok(MasterRun {
        env,
        slave,
        reported,
    })
}

/// The reference of [`run_axi`]: the pass-through forwards every access as it is.
pub fn reference_axi(ops: &Vec<AxiOp>, log: &SlaveLog) -> Expected<Vec<Outcome>> {
    let whole = (SIZE + 256 * AXI_BUS as u64) as usize;
    forwarded_axi_ops(ops, AXI_BUS, log, BASE, whole)
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
