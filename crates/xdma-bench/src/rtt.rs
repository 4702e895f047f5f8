//! The round-trip loop: the card's ECHO mode answers each request frame sent on the H2C
//! stream with one frame from source 0 on the first C2H stream, carrying the request's
//! sequence number. The card holds one request at a time, so the loop is stop-and-wait: post
//! the receive, send the request, wait for the answer, then the next.
//!
//! The loop runs in segments of the backend's clock. Per segment: the frame period (one
//! request's send to the next), the round trip (send to answer) as P50/P99 from a reservoir
//! sample over the whole segment, the host-side overhead (period minus round trip), the
//! throughput, the CPU the loop ran on (the mode of per-frame samples) and that CPU's clock.
//! Over the segments: discrete tiers of the period, the frequency-ratio check of every slower
//! tier, and the stability verdict. On the simulated card the loop runs in simulated time,
//! where the host's CPU does not set the period, so CPU tiers do not apply there.

use std::collections::HashMap;
use std::time::Duration;

use serde::Serialize;
use xdma::{AsyncCard, Card, ChannelKind, Direction, DmaBuffer, Error, Result};

use crate::host;
use crate::stats::{self, Reservoir, Tier};

/// What to run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    /// The whole run, in the backend's clock.
    pub total: Duration,
    /// One segment, in the backend's clock.
    pub segment: Duration,
    /// Request and answer length in bytes (the frame sources make 64 to 65536).
    pub frame: usize,
}

/// Round trips kept per segment for the percentiles.
pub const RESERVOIR: usize = 4096;

/// How long one answer may take, in the backend's clock, before the loop gives up.
const ANSWER_WAIT: Duration = Duration::from_millis(100);

/// Whole frames of an earlier program that may wait on the card's C2H stream before the
/// first answer: the stream path holds a few.
const STALE_MAX: usize = 64;

/// Every so many answers, the whole frame (CRC included) is checked; every answer's header
/// and sequence number are checked. A full check of every frame would put a CRC over the
/// frame inside each period.
const FULL_CHECK_EVERY: u64 = 16;

/// Requests built before the loop, reused in turn, so that nothing is built in a period.
const REQUESTS: usize = 64;

/// One segment of the loop.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Segment {
    /// The segment's number, from 0.
    pub index: usize,
    /// Round trips in the segment.
    pub frames: u64,
    /// Mean period from one request to the next, in microseconds.
    pub period_us: f64,
    /// Round trip (request sent to answer received) P50, in microseconds.
    pub rtt_p50_us: f64,
    /// Round trip P99, in microseconds.
    pub rtt_p99_us: f64,
    /// Mean period minus mean round trip: what the host spends between an answer and the
    /// next request, in microseconds.
    pub overhead_us: f64,
    /// Request bytes per period, in MB/s.
    pub mb_s: f64,
    /// The CPU the loop ran on most often (sampled at every frame), where the host tells.
    pub cpu: Option<usize>,
    /// The share of samples on that CPU.
    pub cpu_share: Option<f64>,
    /// That CPU's current clock at the segment's end (Linux cpufreq), in MHz.
    pub cpu_mhz: Option<f64>,
}

/// A tier of segments with its frequency check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TierReport {
    /// The segments and periods.
    #[serde(flatten)]
    pub tier: Tier,
    /// The mean CPU clock of the tier's segments in MHz, where known.
    pub cpu_mhz: Option<f64>,
    /// This tier's period over the fast tier's.
    pub period_ratio: f64,
    /// The fast tier's clock over this tier's, where known.
    pub freq_ratio: Option<f64>,
    /// Whether the clock explains the period (ratios within 10 %); `None` where the check
    /// does not apply.
    pub explained_by_cpu_clock: Option<bool>,
}

/// The whole loop.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Frame length in bytes.
    pub frame: u64,
    /// The CPU the loop was pinned to, if any.
    pub affinity: Option<usize>,
    /// Every segment.
    pub segments: Vec<Segment>,
    /// The tiers of the segments' periods, the fast tier first.
    pub tiers: Vec<TierReport>,
    /// Why the CPU tier check does not apply, where it does not.
    pub cpu_tiers: String,
    /// The last segment's throughput over the fast tier's, in percent.
    pub last_vs_fastest_pct: f64,
    /// The stability verdict: last segment >= fastest tier x 98 %.
    pub stable: bool,
}

fn stream(card: &impl Card, dir: Direction) -> Result<usize> {
    card.info()
        .find(dir, ChannelKind::Stream)
        .ok_or_else(|| Error::Unsupported {
            backend: "any",
            what: format!("the ECHO loop on a {dir} stream"),
            why: format!(
                "the card has no {dir} stream channel; ECHO needs the stream paths (an XDMA instance in AXI-Stream mode)"
            ),
        })
}

fn bad(problem: String) -> Error {
    Error::Invalid {
        op: "the ECHO round-trip loop",
        problem,
    }
}

impl Plan {
    /// Checks the plan: a segment no longer than the run, a frame the sources make.
    pub fn check(&self) -> Result<()> {
        if self.segment.is_zero() || self.total < self.segment {
            return Err(bad(format!(
                "segments of {:?} in a run of {:?}: the segment must be positive and no longer than the run",
                self.segment, self.total
            )));
        }
        if !(64..=65536).contains(&self.frame) {
            return Err(bad(format!(
                "frames of {} bytes: the frame sources make 64 to 65536-byte frames",
                self.frame
            )));
        }
        Ok(())
    }

    /// The number of segments: the run divided into whole segments, at least one.
    pub fn segments(&self) -> usize {
        ((self.total.as_secs_f64() / self.segment.as_secs_f64()).round() as usize).max(1)
    }
}

/// Per-segment accumulators.
struct Acc {
    frames: u64,
    rtt_sum_ps: u128,
    rtts: Reservoir,
    cpus: HashMap<usize, u64>,
    first_start: u64,
    last_start: u64,
}

/// Runs the loop on `card` in the calling thread; `progress` hears each finished segment.
pub fn run<C: Card + AsyncCard>(
    card: &C,
    plan: &Plan,
    affinity: Option<usize>,
    sim_time: bool,
    mut progress: impl FnMut(&Segment),
) -> Result<Report> {
    use card_regs::control;
    plan.check()?;
    let (h2c, c2h) = (stream(card, Direction::H2C)?, stream(card, Direction::C2H)?);
    if let Some(cpu) = affinity {
        host::pin_to(cpu)?;
    }
    crate::scenario::quiesce(card)?;
    card.write_reg(u64::from(card_regs::SRC0_FRAME_LEN), plan.frame as u32)?;
    card.write_reg(u64::from(card_regs::CONTROL), control::MODE_ECHO as u32)?;
    let mut requests: Vec<Option<DmaBuffer>> = (0..REQUESTS as u32)
        .map(|seq| {
            let h = frame::Header {
                channel: 0,
                pattern: frame::Pattern::Counter,
                sequence: seq,
                timestamp: 0,
                seed: 0,
            };
            let f = frame::build(&h, plan.frame)
                .map_err(|e| bad(format!("cannot build a request frame: {e}")))?;
            DmaBuffer::from_slice(&f).map(Some)
        })
        .collect::<Result<_>>()?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .map_err(|e| Error::Backend(format!("cannot start a tokio runtime: {e}")))?;
    let result = rt.block_on(async {
        let seg_ps = u64::try_from(plan.segment.as_nanos().saturating_mul(1000))
            .unwrap_or(u64::MAX);
        let mut segments = Vec::with_capacity(plan.segments());
        let mut spare_rx = Some(DmaBuffer::new(plan.frame)?);
        let mut count: u64 = 0;
        for index in 0..plan.segments() {
            let mut acc: Option<Acc> = None;
            loop {
                let k = (count % REQUESTS as u64) as usize;
                let req = requests[k]
                    .take()
                    .ok_or_else(|| Error::Backend("a request buffer was not handed back".into()))?;
                let rx_buf = spare_rx.take().map_or_else(|| DmaBuffer::new(plan.frame), Ok)?;
                // The receive is created (and so, on a backend that submits on creation,
                // posted) before the request is sent; both are then awaited together.
                let rx = card.recv_stream_async(c2h, rx_buf, crate::scenario::receive_wait(card, ANSWER_WAIT));
                let tx = card.send_stream_async(h2c, req);
                let ((rr, rbuf), (tr, tbuf)) = tokio::join!(rx, tx);
                requests[k] = Some(tbuf);
                let (t, mut r) = (tr?, rr?);
                let mut rbuf = rbuf;
                let cpu = host::current_cpu();
                // Frames an earlier program left on the card's C2H stream come first; before
                // the first answer, whole frames that are not it are stale and skipped. The
                // card's CLEAR ends a source at a frame boundary, so a piece of a frame is an
                // error here as anywhere.
                let mut stale = 0;
                loop {
                    let answer = &rbuf[..r.bytes];
                    let check = if count.is_multiple_of(FULL_CHECK_EVERY) {
                        frame::parse(answer).map(|p| p.header)
                    } else {
                        frame::parse_header(answer).map(|(h, _)| h)
                    };
                    match check {
                        Ok(h) if h.sequence == k as u32 => break,
                        // A whole frame left by an earlier program.
                        Ok(_) if count == 0 && stale < STALE_MAX => {}
                        Ok(h) => {
                            return Err(bad(format!(
                                "request {k} was answered with sequence {}: ECHO lost or reordered a request",
                                h.sequence
                            )))
                        }
                        Err(e) => {
                            return Err(bad(format!("answer {count} is not a valid frame: {e}")))
                        }
                    }
                    stale += 1;
                    let (again, b) = card
                        .recv_stream_async(c2h, rbuf, crate::scenario::receive_wait(card, ANSWER_WAIT))
                        .await;
                    rbuf = b;
                    r = again?;
                }
                spare_rx = Some(rbuf);
                count += 1;
                let a = acc.get_or_insert_with(|| Acc {
                    frames: 0,
                    rtt_sum_ps: 0,
                    rtts: Reservoir::new(RESERVOIR, index as u64 + 1),
                    cpus: HashMap::new(),
                    first_start: t.start_ps,
                    last_start: t.start_ps,
                });
                let rtt = r.end_ps.saturating_sub(t.start_ps);
                a.frames += 1;
                a.rtt_sum_ps += u128::from(rtt);
                a.rtts.push(rtt as f64 / 1e6);
                a.last_start = t.start_ps;
                if let Some(c) = cpu {
                    *a.cpus.entry(c).or_default() += 1;
                }
                if t.start_ps.saturating_sub(a.first_start) >= seg_ps && a.frames > 1 {
                    break;
                }
            }
            let Some(a) = acc else {
                return Err(bad("a segment made no round trip".into()));
            };
            // The period counts from the first request to the last one's start, which is
            // (frames - 1) periods.
            let periods = (a.frames - 1).max(1);
            let period_us = a.last_start.saturating_sub(a.first_start) as f64 / 1e6 / periods as f64;
            let rtt_mean_us = a.rtt_sum_ps as f64 / 1e6 / a.frames as f64;
            let (cpu, share) = match a.cpus.iter().max_by_key(|(c, n)| (**n, usize::MAX - **c)) {
                Some((&c, &n)) => (Some(c), Some(n as f64 / a.frames as f64)),
                None => (None, None),
            };
            let seg = Segment {
                index,
                frames: a.frames,
                period_us,
                rtt_p50_us: a.rtts.percentile(50.0).unwrap_or(0.0),
                rtt_p99_us: a.rtts.percentile(99.0).unwrap_or(0.0),
                overhead_us: period_us - rtt_mean_us,
                mb_s: plan.frame as f64 / period_us,
                cpu,
                cpu_share: share,
                cpu_mhz: cpu.and_then(host::cpu_mhz),
            };
            progress(&seg);
            segments.push(seg);
        }
        Ok(segments)
    });
    // Leave the stream paths idle whatever happened.
    let off = card.write_reg(u64::from(card_regs::CONTROL), 0);
    let segments = result?;
    off?;
    Ok(analyse(plan.frame as u64, affinity, segments, sim_time))
}

/// The tiers, their frequency check and the stability verdict of measured segments.
pub fn analyse(
    frame: u64,
    affinity: Option<usize>,
    segments: Vec<Segment>,
    sim_time: bool,
) -> Report {
    let periods: Vec<f64> = segments.iter().map(|s| s.period_us).collect();
    let raw = stats::tiers(&periods);
    let mhz_of = |t: &Tier| {
        let f: Vec<f64> = t
            .segments
            .iter()
            .filter_map(|&i| segments[i].cpu_mhz)
            .collect();
        (!f.is_empty()).then(|| f.iter().sum::<f64>() / f.len() as f64)
    };
    let fast = raw.first().cloned();
    let fast_mhz = fast.as_ref().and_then(mhz_of);
    let tiers: Vec<TierReport> = raw
        .iter()
        .map(|t| {
            let mhz = mhz_of(t);
            let fast_period = fast.as_ref().map_or(t.mean, |f| f.mean);
            let check = if sim_time {
                None
            } else {
                match (mhz, fast_mhz) {
                    (Some(m), Some(fm)) => stats::ratio_check(t.mean, fast_period, m, fm),
                    _ => None,
                }
            };
            TierReport {
                tier: t.clone(),
                cpu_mhz: mhz,
                period_ratio: t.mean / fast_period,
                freq_ratio: check.map(|c| c.1),
                explained_by_cpu_clock: check.map(|c| c.2),
            }
        })
        .collect();
    let cpu_tiers = if sim_time {
        "do not apply: the loop runs in the simulated card's time, where the host CPU's clock does not set the period".to_string()
    } else if fast_mhz.is_none() {
        "not checked: this host does not report CPU clocks (no Linux cpufreq)".to_string()
    } else {
        "checked: a slower tier is explained by the CPU clock when its period ratio is within 10 % of the clock ratio".to_string()
    };
    let fastest = fast.map_or(0.0, |f| f.mean);
    let last = segments.last().map_or(0.0, |s| s.period_us);
    Report {
        frame,
        affinity,
        last_vs_fastest_pct: if last > 0.0 {
            fastest / last * 100.0
        } else {
            0.0
        },
        stable: stats::stable(last, fastest),
        segments,
        tiers,
        cpu_tiers,
    }
}
