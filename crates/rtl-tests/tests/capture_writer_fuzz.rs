//! The capture writer as an AXI4 master under master fuzzing: frames of drawn lengths into a
//! ring, against a randomizing slave that stalls, delays and answers errors. What it must end
//! with: every frame's bytes in the ring where no error was answered (an errored write changes
//! nothing), every frame counted, each error response counted once, the write pointer past
//! the last frame.

use axi_bfm::burst::Burst;
use axi_bfm::fuzz::{check_axi_master, Expected, MasterFuzz, MasterRun};
use axi_bfm::random_slave::{SlaveChoices, SlaveLog};
use axi_bfm::{AxisFrame, AxisSource, BfmError, Env, RandomAxiSlave, ResetPolarity, Result};
use card_sim::{Model, Top};
use proptest::prelude::*;
use rtl_tests::AXI_HZ;

const BEAT: u64 = 16;
const BASE: u64 = 0x1000;
const RING: u64 = 0x2000;
/// Cycles a case may take at most before it is a hang.
const LIMIT: u64 = 200_000;

/// One case's work: the frame length the writer is configured with, and the frames' seeds.
#[derive(Debug, Clone)]
struct Job {
    len: u64,
    frames: Vec<u8>,
}

fn jobs() -> impl Strategy<Value = Job> {
    (1u64..=300, prop::collection::vec(any::<u8>(), 1..=6))
        .prop_map(|(len, frames)| Job { len, frames })
}

fn frame(seed: u8, len: u64) -> Vec<u8> {
    (0..len)
        .map(|i| seed.wrapping_add((i * 13) as u8))
        .collect()
}

fn padded(len: u64) -> u64 {
    len.div_ceil(BEAT) * BEAT
}

/// What the writer reports: frames counted, error responses counted, the write pointer.
type Report = (u64, u64, u64);

fn run(job: &Job, choices: &SlaveChoices) -> Result<MasterRun<RandomAxiSlave, Report>> {
    let mut env = Env::new(Model::new(Top::CaptureWriter)?);
    let clk = env.add_clock("clk", AXI_HZ)?;
    env.add_reset(clk, "rst", ResetPolarity::ActiveHigh)?;
    let src = AxisSource::attach(&mut env, "s_axis", clk)?;
    let slave = RandomAxiSlave::attach(&mut env, "m_axi", clk, choices.clone())?;
    env.reset(clk, 4)?;
    let m = env.model_mut();
    let input = |m: &Model, n: &str| m.input(n);
    let (base, size, fb, rr) = (
        input(m, "ring_base")?,
        input(m, "ring_size")?,
        input(m, "frame_bytes")?,
        input(m, "ring_reset")?,
    );
    m.set(base, BASE);
    m.set(size, RING);
    m.set(fb, job.len);
    m.set(rr, 1);
    m.eval()?;
    env.tick(clk)?;
    env.model_mut().set(rr, 0);
    env.model_mut().eval()?;
    for s in &job.frames {
        src.start_send(AxisFrame::new(frame(*s, job.len)))?;
    }
    let m = env.model();
    let (fc, errs, wptr) = (
        m.port("frame_count")?,
        m.port("bresp_error_count")?,
        m.port("wptr")?,
    );
    let want = job.frames.len() as u64;
    let mut waited = 0;
    loop {
        let quiet = slave.monitor().is_none_or(|mon| mon.outstanding() == 0);
        if src.idle() && env.model().get(fc) == want && quiet {
            break;
        }
        if waited == LIMIT {
            return Err(BfmError::Timeout {
                clock: "clk".into(),
                cycles: LIMIT,
                time_ps: 0,
                what: format!("{want} frame(s) counted by the capture writer"),
            });
        }
        env.tick(clk)?;
        waited += 1;
    }
    env.run(clk, 20)?;
    let m = env.model();
    let reported = (m.get(fc), m.get(errs), m.get(wptr));
    Ok(MasterRun {
        env,
        slave,
        reported,
    })
}

/// Where each frame lies in the ring, then the bytes of every burst answered with an error
/// taken back out: the writer does not retry, so those bytes stay as they were (zero).
fn reference(job: &Job, log: &SlaveLog) -> Expected<Report> {
    let p = padded(job.len);
    let mut ring = vec![0u8; RING as usize];
    for (n, s) in job.frames.iter().enumerate() {
        let at = n * p as usize;
        ring[at..at + job.len as usize].copy_from_slice(&frame(*s, job.len));
    }
    let mut errors = 0;
    for (b, r) in &log.writes {
        if !log.wrote(b, *r) {
            errors += 1;
            let Burst { addr, .. } = *b;
            let lo = (addr - BASE) as usize;
            let hi = (lo + b.beats() as usize * BEAT as usize).min(ring.len());
            ring[lo..hi].fill(0);
        }
    }
    let n = job.frames.len() as u64;
    Expected {
        memory: vec![(BASE, ring)],
        reported: (n, errors, n * p),
    }
}

#[test]
fn the_capture_writer_survives_any_legal_slave() {
    let cfg = MasterFuzz {
        cases: 24,
        ..MasterFuzz::default()
    };
    let report = check_axi_master(&cfg, jobs(), run, reference).unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(report.cases, 24);
    assert!(
        report.coverage.count(axi_bfm::Situation::Event(
            axi_bfm::monitor::Event::ErrorResponse
        )) > 0
    );
}
