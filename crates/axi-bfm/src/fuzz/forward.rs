//! A DUT that forwards AXI4 accesses (a pass-through, a width converter, a clock crossing, a
//! memory path) fuzzed as a master: the bus model drives drawn accesses into its slave port,
//! a randomizing slave answers them on its master port, and the reference says what each
//! access must report and what memory must hold from what that slave answered.

use super::axi::{span_of, AxiOp};
use super::inflight::{InFlight, Issued};
use super::master::Expected;
use crate::error::{Resp, Result};
use crate::mem::Memory;
use crate::random_slave::SlaveLog;
use crate::{AxiMaster, Env};

/// One access's outcome as the bus model reports it: the response and, for a read that
/// succeeded, its bytes (none for a write or a refused read).
pub type Outcome = (Resp, Vec<u8>);

/// Drives `ops` through `master` with at most `outstanding` in flight, none beside an older
/// one it could race with (the window replays use), and returns every access's outcome in
/// the order of `ops`. Every wait is the bus model's, bounded.
pub fn drive_axi_ops(
    env: &mut Env,
    master: &AxiMaster,
    ops: &[AxiOp],
    outstanding: usize,
) -> Result<Vec<Outcome>> {
    let bus = master.bus_bytes();
    let mut out: Vec<Outcome> = vec![(Resp::Okay, Vec::new()); ops.len()];
    let mut flight = InFlight::new(outstanding);
    let mut retire = |env: &mut Env, p: Issued<()>| -> Result<()> {
        master.wait(env, p.txn)?;
        out[p.index] = if p.write {
            (master.take_write(p.txn)?, Vec::new())
        } else {
            let (data, resp) = master.take_read(p.txn)?;
            (resp, if resp.is_ok() { data } else { Vec::new() })
        };
        Ok(())
    };
    for (index, op) in ops.iter().enumerate() {
        let (burst, write) = op.burst();
        let span = span_of(&burst.byte_addrs(bus));
        flight.make_room(write, span, |p| retire(env, p))?;
        let txn = match op {
            AxiOp::Write {
                burst,
                data,
                strobes,
            } => master.start_write_burst_strobed(*burst, data, strobes)?,
            AxiOp::Read { burst } => master.start_read_burst(*burst)?,
        };
        flight.push(Issued {
            txn,
            index,
            write,
            span,
            check: (),
        });
    }
    flight.drain(|p| retire(env, p))?;
    Ok(out)
}

/// The reference of [`drive_axi_ops`] through a DUT that forwards each access as one request
/// of the same bytes, in order per direction, and its response back unchanged: write `k` is
/// the slave's `k`-th write request, and changed memory if the slave's answer says so; read
/// `k` is its `k`-th read and returns what memory holds when it succeeded. `bus` is the data
/// width, in bytes, of the DUT's slave port (where `ops` are drawn); the expected memory is
/// the `len` bytes from `base`.
pub fn forwarded_axi_ops(
    ops: &[AxiOp],
    bus: usize,
    log: &SlaveLog,
    base: u64,
    len: usize,
) -> Expected<Vec<Outcome>> {
    let mut mem = Memory::new();
    let (mut writes, mut reads) = (log.writes.iter(), log.reads.iter());
    let mut reported = Vec::new();
    for op in ops {
        match op {
            AxiOp::Write {
                burst,
                data,
                strobes,
            } => {
                let resp = writes.next().map_or(Resp::Okay, |w| w.1);
                if log.wrote(burst, resp) {
                    for ((a, d), s) in burst.byte_addrs(bus).iter().zip(data).zip(strobes) {
                        if *s {
                            mem.write_byte(*a, *d);
                        }
                    }
                }
                reported.push((resp, Vec::new()));
            }
            AxiOp::Read { burst } => {
                let resp = reads.next().map_or(Resp::Okay, |r| r.1);
                let data = if resp.is_ok() {
                    burst
                        .byte_addrs(bus)
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
    Expected {
        memory: vec![(base, mem.read_vec(base, len))],
        reported,
    }
}
