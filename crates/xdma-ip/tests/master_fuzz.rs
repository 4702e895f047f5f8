//! The XDMA IP model's AXI4 master under master fuzzing: its memory-mapped engines' bursts go
//! out of the card's top unchanged (`sim_top_tap`, PATH 2) to a randomizing slave that stalls,
//! delays, reorders and interleaves by ID, takes write data before addresses and answers
//! errors. A case is an H2C descriptor chain into one card region, then a C2H chain out of
//! another that the slave holds a pattern in.
//!
//! What each case must end with comes from PG195 (Channel Control 0x04: `ie_write_error` and
//! `ie_read_error` "Set to all 1s (0x1F) to enable logging of Status.Write_error [Read_error]
//! and to stop the engine if the error is detected"), and from what the slave answered:
//! - with those enables off, an engine completes every descriptor whatever the card answers,
//!   logs no error, and the card's region holds exactly the bytes of the bursts answered OKAY
//!   (a refused write changes nothing); host memory holds what the reads answered OKAY
//!   returned, and nothing where a read was refused (the IP has no data to send up);
//! - with them on, an engine that met a refusal stops with its error logged, and one that met
//!   none completes every descriptor as above.

mod common;

use std::collections::HashSet;

use axi_bfm::fuzz::{check_axi_master, Expected, MasterFuzz, MasterRun};
use axi_bfm::random_slave::{SlaveChoices, SlaveLog};
use axi_bfm::{BfmError, RandomAxiSlave, Situation};
use common::*;
use proptest::prelude::*;
use xdma_ip::{EngineKind, HostMemory, IpConfig};
use xdma_regmap::{self as map, control, desc, engine_regs as ereg, sgdma, status};

/// Bytes per beat of the DMA port.
const BUS: usize = 16;
/// The card region H2C writes, and the one C2H reads (which the slave holds a pattern in).
const CARD_H2C: u64 = 0x4_0000;
const CARD_C2H: u64 = 0x8_0000;
const REGION: u64 = 0x3000;
/// Where C2H puts what it reads, in host memory.
const BACK: u64 = DATA + 0x20_0000;
/// Cycles an engine may stay busy at most before the case is a hang.
const LIMIT: u64 = 400_000;

/// One case: the pieces (offset in the region, length) of the H2C and of the C2H chain, and
/// whether the engines stop on a bus error.
#[derive(Debug, Clone)]
struct Job {
    h2c: Vec<(u64, u32)>,
    c2h: Vec<(u64, u32)>,
    stop_on_error: bool,
}

/// Up to three pieces laid one after the other in a region, each after a gap, at most
/// `REGION` bytes in all.
fn pieces() -> impl Strategy<Value = Vec<(u64, u32)>> {
    prop::collection::vec((0u64..80, 1u32..=2500), 1..=3).prop_map(|draws| {
        let mut at = 0;
        let mut out = Vec::new();
        for (gap, len) in draws {
            let off = at + gap;
            if off + u64::from(len) > REGION {
                break;
            }
            out.push((off, len));
            at = off + u64::from(len);
        }
        out
    })
}

fn jobs() -> impl Strategy<Value = Job> {
    (pieces(), pieces(), any::<bool>()).prop_map(|(h2c, c2h, stop_on_error)| Job {
        h2c,
        c2h,
        stop_on_error,
    })
}

/// The bytes H2C moves (piece by piece from host memory at the same offsets) and the pattern
/// the slave holds in the C2H region.
fn h2c_data() -> Vec<u8> {
    pattern(REGION as usize, 7)
}

fn card_pattern() -> Vec<u8> {
    pattern(REGION as usize, 9)
}

/// What an engine ended with: its completed count if no error is logged, and whether one is.
type EngineEnd = (Option<u32>, bool);

#[derive(Debug, Clone, PartialEq, Eq)]
struct Report {
    h2c: EngineEnd,
    c2h: EngineEnd,
    /// Host memory over the C2H pieces, unless the C2H engine stopped on an error.
    host: Option<Vec<u8>>,
}

/// Starts an engine as the driver's engine_start does, with the bus-error enables of the case.
fn start(c: &mut Card, c2h: bool, first: u64, stop_on_error: bool) {
    let e = map::engine_base(c2h, 0);
    let s = map::sgdma_base(c2h, 0);
    let mut ie = control::IE_DESC_STOPPED | control::IE_DESC_COMPLETED;
    if stop_on_error {
        ie |= control::IE_READ_ERROR | control::IE_WRITE_ERROR;
    }
    c.w(s + sgdma::FIRST_DESC_LO, first as u32);
    c.w(s + sgdma::FIRST_DESC_HI, (first >> 32) as u32);
    c.w(s + sgdma::FIRST_DESC_ADJACENT, 0);
    c.w(e + ereg::CONTROL, control::RUN | ie);
}

/// Runs an engine's chain to its end and says how it ended.
fn finish(c: &mut Card, c2h: bool) -> EngineEnd {
    c.run_until_idle(c2h, 0, LIMIT);
    let e = map::engine_base(c2h, 0);
    let errors = if c2h {
        status::C2H_R_DECODE_ERR | status::C2H_R_SLAVE_ERR
    } else {
        status::H2C_W_DECODE_ERR | status::H2C_W_SLAVE_ERR
    };
    let logged = c.r(e + ereg::STATUS) & errors != 0;
    let completed = c.r(e + ereg::COMPLETED);
    c.stop(c2h, 0);
    ((!logged).then_some(completed), logged)
}

fn run(job: &Job, choices: &SlaveChoices) -> Result<MasterRun<RandomAxiSlave, Report>, BfmError> {
    use EngineKind::MemoryMapped as Mm;
    let mut c = card(IpConfig::new(top("sim_top_tap"), vec![Mm], vec![Mm]));
    let slave = c.ip.card().attach_tap_slave(choices.clone())?;
    slave.mem().borrow_mut().write(CARD_C2H, &card_pattern());
    let data = h2c_data();
    c.mem.write(DATA, &data).expect("host data in RAM");
    let flags = desc::STOP | desc::COMPLETED;
    let chain: Vec<_> = job
        .h2c
        .iter()
        .map(|&(off, len)| (DATA + off, CARD_H2C + off, len))
        .collect();
    c.chain(DESCS, &chain, flags);
    start(&mut c, false, DESCS, job.stop_on_error);
    let h2c = finish(&mut c, false);
    let chain: Vec<_> = job
        .c2h
        .iter()
        .map(|&(off, len)| (CARD_C2H + off, BACK + off, len))
        .collect();
    c.chain(DESCS + 0x1000, &chain, flags);
    start(&mut c, true, DESCS + 0x1000, job.stop_on_error);
    let c2h = finish(&mut c, true);
    let host = (!c2h.1).then(|| {
        let mut out = Vec::new();
        for &(off, len) in &job.c2h {
            let mut got = vec![0u8; len as usize];
            c.mem.read(BACK + off, &mut got).expect("host RAM");
            out.extend(got);
        }
        out
    });
    Ok(MasterRun {
        env: c.ip.into_card().into_env(),
        slave,
        reported: Report { h2c, c2h, host },
    })
}

/// The bytes of every burst of `list` the slave answered OKAY.
fn answered_ok(list: &[(axi_bfm::Burst, axi_bfm::Resp)]) -> HashSet<u64> {
    list.iter()
        .filter(|(_, r)| r.is_ok())
        .flat_map(|(b, _)| b.byte_addrs(BUS))
        .collect()
}

fn reference(job: &Job, log: &SlaveLog) -> Expected<Report> {
    // The H2C engine writes the card and the C2H engine reads it: the log's writes are H2C's
    // bursts, its reads C2H's.
    let h2c_refused = log.writes.iter().any(|(_, r)| !r.is_ok());
    let c2h_refused = log.reads.iter().any(|(_, r)| !r.is_ok());
    let h2c_stopped = job.stop_on_error && h2c_refused;
    let c2h_stopped = job.stop_on_error && c2h_refused;
    let end = |stopped: bool, n: usize| ((!stopped).then_some(n as u32), stopped);
    let mut memory = vec![(CARD_C2H, card_pattern())];
    if !h2c_stopped {
        let written = answered_ok(&log.writes);
        let data = h2c_data();
        let mut region = vec![0u8; REGION as usize];
        for &(off, len) in &job.h2c {
            for i in off..off + u64::from(len) {
                if written.contains(&(CARD_H2C + i)) {
                    region[i as usize] = data[i as usize];
                }
            }
        }
        memory.push((CARD_H2C, region));
    }
    let host = (!c2h_stopped).then(|| {
        let read = answered_ok(&log.reads);
        let card = card_pattern();
        job.c2h
            .iter()
            .flat_map(|&(off, len)| off..off + u64::from(len))
            .map(|i| {
                if read.contains(&(CARD_C2H + i)) {
                    card[i as usize]
                } else {
                    0
                }
            })
            .collect()
    });
    Expected {
        memory,
        reported: Report {
            h2c: end(h2c_stopped, job.h2c.len()),
            c2h: end(c2h_stopped, job.c2h.len()),
            host,
        },
    }
}

#[test]
fn the_ip_models_master_survives_any_legal_slave() {
    let cfg = MasterFuzz {
        cases: 16,
        ..MasterFuzz::default()
    };
    let report = check_axi_master(&cfg, jobs(), run, reference).unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(report.cases, 16);
    let refused = Situation::Event(axi_bfm::monitor::Event::ErrorResponse);
    assert!(report.coverage.count(refused) > 0, "{report:?}");
}
