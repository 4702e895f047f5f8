//! Scenarios beyond one direction at a time: a write thread and a read thread at once, and the
//! card's generated frames received on one or two C2H streams.

use std::time::Duration;

use serde::Serialize;
use xdma::{
    AsyncCard, Card, CardAddr, ChannelKind, Direction, DmaBuffer, Error, InOrder, Result, Transfer,
};

use crate::measure::pattern;

/// Throughput of one write thread and one read thread running at once.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Concurrent {
    /// Bytes per transfer.
    pub block: u64,
    /// Transfers each thread made.
    pub h2c_transfers: usize,
    /// Transfers the read thread made.
    pub c2h_transfers: usize,
    /// The write thread's throughput in MB/s.
    pub h2c_mb_s: f64,
    /// The read thread's throughput in MB/s.
    pub c2h_mb_s: f64,
    /// Both together.
    pub total_mb_s: f64,
    /// The span of the backend's clock from the first transfer's start to the last one's end,
    /// in microseconds.
    pub span_us: f64,
}

/// The span from the first start to the last end of several threads' transfers, in ps.
fn span_of<'a>(all: impl IntoIterator<Item = &'a [Transfer]>) -> u64 {
    let (mut a, mut b) = (u64::MAX, 0);
    for ts in all {
        for t in ts {
            a = a.min(t.start_ps);
            b = b.max(t.end_ps);
        }
    }
    b.saturating_sub(a)
}

/// MB/s of `n` transfers of `bytes` from the first one's start to the last one's end.
fn rate(ts: &[Transfer], bytes: u64) -> f64 {
    match (ts.first(), ts.last()) {
        (Some(a), Some(b)) if b.end_ps > a.start_ps => {
            (ts.len() as u64 * bytes) as f64 / (b.end_ps - a.start_ps) as f64 * 1e6
        }
        _ => 0.0,
    }
}

/// One thread writing blocks of `block` bytes and one thread reading blocks from another card
/// region, each with a handle of its own and each call made after its previous one returned,
/// for `span` of the backend's clock. Both regions' data is checked afterwards. `progress`
/// hears the fraction of the span the write thread has done.
pub fn concurrent<C: Card + Clone + Send>(
    card: &C,
    block: usize,
    span: Duration,
    progress: &(dyn Fn(f64) + Sync),
) -> Result<Concurrent> {
    let (h2c, c2h) = (
        card.info().mm_channel(Direction::H2C)?,
        card.info().mm_channel(Direction::C2H)?,
    );
    let size = card.info().memory_size;
    if (2 * block) as u64 > size {
        return Err(Error::Invalid {
            op: "the concurrent scenario",
            problem: format!(
                "two regions of {block} bytes do not fit the card's {size} bytes of memory; use a smaller block"
            ),
        });
    }
    let (waddr, raddr) = (CardAddr(0), CardAddr(size / 2));
    // Both blocks go out from page-aligned buffers: the driver cuts a buffer into
    // descriptors at its pages, so a `Vec`'s address, which depends on the allocator's
    // history, would move every later transfer's simulated time with it.
    let wdata = DmaBuffer::from_slice(&pattern(block, 1))?;
    let rdata = DmaBuffer::from_slice(&pattern(block, 2))?;
    card.write_mm(h2c, raddr, &rdata)?;
    let span_ps = u64::try_from(span.as_nanos().saturating_mul(1000)).unwrap_or(u64::MAX);
    let (w, r) = std::thread::scope(|s| {
        let (wc, rc) = (card.clone(), card.clone());
        let wdata = &wdata;
        let writer = s.spawn(move || -> Result<Vec<Transfer>> {
            let mut out: Vec<Transfer> = Vec::new();
            loop {
                let t = wc.write_mm(h2c, waddr, wdata)?;
                out.push(t);
                let done = t.end_ps.saturating_sub(out[0].start_ps);
                progress(done as f64 / span_ps.max(1) as f64);
                if done >= span_ps {
                    return Ok(out);
                }
            }
        });
        let reader = s.spawn(move || -> Result<Vec<Transfer>> {
            let mut out: Vec<Transfer> = Vec::new();
            let mut buf = DmaBuffer::new(block)?;
            loop {
                let t = rc.read_mm(c2h, raddr, &mut buf)?;
                out.push(t);
                if buf[..] != rdata[..] {
                    return Err(Error::Invalid {
                        op: "the concurrent scenario",
                        problem: format!("a read of {block} bytes at {raddr} came back different from what was written"),
                    });
                }
                if t.end_ps.saturating_sub(out[0].start_ps) >= span_ps {
                    return Ok(out);
                }
            }
        });
        let join = |h: std::thread::ScopedJoinHandle<'_, Result<Vec<Transfer>>>| {
            h.join()
                .unwrap_or_else(|_| Err(Error::Backend("a measuring thread panicked".into())))
        };
        (join(writer), join(reader))
    });
    let (w, r) = (w?, r?);
    let mut back = DmaBuffer::new(block)?;
    card.read_mm(c2h, waddr, &mut back)?;
    if back[..] != wdata[..] {
        return Err(Error::Invalid {
            op: "the concurrent scenario",
            problem: format!("the written block at {waddr} reads back different"),
        });
    }
    let (hw, hr) = (rate(&w, block as u64), rate(&r, block as u64));
    Ok(Concurrent {
        block: block as u64,
        h2c_transfers: w.len(),
        c2h_transfers: r.len(),
        h2c_mb_s: hw,
        c2h_mb_s: hr,
        total_mb_s: hw + hr,
        span_us: span_of([&w[..], &r[..]]) as f64 / 1e6,
    })
}

/// How stream receives are posted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StreamMode {
    /// Post one receive, wait for it, then the next.
    OneAtATime,
    /// Keep two receives posted, so the next is ready when a frame ends.
    Queued,
}

/// One C2H stream's result.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StreamChannel {
    /// The C2H channel.
    pub channel: usize,
    /// Frames received and checked.
    pub frames: usize,
    /// Throughput in MB/s.
    pub mb_s: f64,
    /// Time per frame in microseconds.
    pub us_per_frame: f64,
}

/// The result of the stream scenario.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Streams {
    /// Frame length in bytes.
    pub frame: u64,
    /// Each channel.
    pub channels: Vec<StreamChannel>,
    /// All channels together, in MB/s.
    pub total_mb_s: f64,
    /// The span of the backend's clock from the first frame's start to the last one's end
    /// over all channels, in microseconds.
    pub span_us: f64,
}

/// The card's frame sources in GEN mode, each on a C2H stream of its own: `frames` frames of
/// `frame` bytes received on each of the first `channels` stream channels at once (a thread
/// and a handle per channel), every frame checked against the frame format and its sequence.
/// `progress` hears each frame received.
pub fn streams<C: Card + AsyncCard + Clone + Send>(
    card: &C,
    frame: usize,
    channels: usize,
    mode: StreamMode,
    frames: usize,
    progress: &(dyn Fn() + Sync),
) -> Result<Streams> {
    use card_regs_layout::*;
    let streams: Vec<usize> = card.info().all_of(Direction::C2H, ChannelKind::Stream);
    if channels == 0 || channels > 2 || streams.len() < channels {
        return Err(Error::Unsupported {
            backend: "any",
            what: format!("receiving generated frames on {channels} C2H stream(s)"),
            why: format!(
                "the card's frame sources feed up to two C2H streams and this card has {} stream channel(s)",
                streams.len()
            ),
        });
    }
    if frames == 0 {
        return Err(Error::Invalid {
            op: "the stream scenario",
            problem: "0 frames per channel measure nothing: give 1 or more".into(),
        });
    }
    if !(64..=65536).contains(&frame) {
        return Err(Error::Invalid {
            op: "the stream scenario",
            problem: format!(
                "frames of {frame} bytes: the frame sources make 64 to 65536-byte frames"
            ),
        });
    }
    // The card may still hold frames of an earlier run (a board or a mounted card outlives
    // the program): stop the sources and restart their sequence numbers, so that this run's
    // frames are told apart (see `receive`).
    quiesce(card)?;
    card.write_reg(SRC0_FRAME_LEN, frame as u32)?;
    card.write_reg(SRC1_FRAME_LEN, frame as u32)?;
    let enable = if channels == 2 {
        CH0_EN | CH1_EN
    } else {
        CH0_EN
    };
    card.write_reg(CONTROL, MODE_GEN | enable)?;
    let results = std::thread::scope(|s| {
        let handles: Vec<_> = streams[..channels]
            .iter()
            .map(|&ch| {
                let c = card.clone();
                s.spawn(move || receive(&c, ch, frame, mode, frames, progress))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::Backend("a receiving thread panicked".into())))
            })
            .collect::<Vec<_>>()
    });
    card.write_reg(CONTROL, 0)?;
    let results = results.into_iter().collect::<Result<Vec<_>>>()?;
    // Leave the card as clean as the registers allow: the frames the sources sent past the
    // last one taken are still on their way; take them until the count the source reports
    // stops moving. A frame a source started just before it was disabled may still wait in
    // its queue; the next run's `quiesce` lets it finish whole (SRC_STATUS shows it waiting),
    // so what an earlier run leaves on a stream is always whole frames, which `check_frame`
    // and the round-trip loop skip.
    let wait = receive_wait(card, FRAME_WAIT);
    for (k, ((_, taken), &ch)) in results.iter().zip(&streams).enumerate() {
        let sent_reg = if k == 0 { SRC0_SENT } else { SRC1_SENT };
        let sent = || -> Result<u64> {
            Ok(u64::from(card.read_reg(sent_reg)?) | u64::from(card.read_reg(sent_reg + 4)?) << 32)
        };
        let mut buf = DmaBuffer::new(frame)?;
        let mut taken = *taken;
        let mut settled = false;
        for _ in 0..DRAIN_ROUNDS {
            let now = sent()?;
            if now == taken {
                // A frame the source was finishing may still be counted: look again after
                // the time it takes.
                settle(card)?;
                if sent()? == taken {
                    settled = true;
                    break;
                }
                continue;
            }
            while taken < now {
                card.recv_stream(ch, &mut buf, wait)?;
                taken += 1;
            }
        }
        if !settled {
            return Err(Error::Invalid {
                op: "draining a stream after the run",
                problem: format!(
                    "C2H channel {ch}: frame source {k} kept sending after it was disabled"
                ),
            });
        }
    }
    let mut out = Vec::new();
    let span = span_of(results.iter().map(|(ts, _)| ts.as_slice()));
    for ((ts, _), &ch) in results.into_iter().zip(&streams) {
        let mb_s = rate(&ts, frame as u64);
        out.push(StreamChannel {
            channel: ch,
            frames: ts.len(),
            mb_s,
            us_per_frame: if mb_s > 0.0 { frame as f64 / mb_s } else { 0.0 },
        });
    }
    let total = out.iter().map(|c| c.mb_s).sum();
    Ok(Streams {
        frame: frame as u64,
        channels: out,
        total_mb_s: total,
        span_us: span as f64 / 1e6,
    })
}

/// How long one receive may wait for a frame, in the backend's clock.
const FRAME_WAIT: Duration = Duration::from_millis(10);

/// How long a receive waits on `card`: [`FRAME_WAIT`], or the shortest wait the backend can
/// honour when that is longer (a driver's `c2h_timeout`).
pub(crate) fn receive_wait(card: &impl Card, wait: Duration) -> Duration {
    wait.max(card.info().min_stream_timeout)
}

/// Stops the frame sources and the stream modes and zeroes the counters, so that sequence
/// numbers restart at 0 and nothing of an earlier run is left in a source.
pub(crate) fn quiesce(card: &impl Card) -> Result<()> {
    card_regs::host::stop_sources(card).map(|_| ())
}

/// How many whole frames an earlier run may have left on a stream: the stream path holds a
/// few, and the frame a source had begun finishes after the clear.
const STALE_MAX: usize = 256;

/// Waits [`SETTLE_CYCLES`] of the card's clock, read from its timestamp register.
fn settle(card: &impl Card) -> Result<()> {
    use card_regs_layout::TIMESTAMP;
    let start = card.read_reg(TIMESTAMP)?;
    for _ in 0..SETTLE_READS {
        if card.read_reg(TIMESTAMP)?.wrapping_sub(start) >= SETTLE_CYCLES {
            return Ok(());
        }
    }
    Err(Error::Invalid {
        op: "draining a stream after the run",
        problem: format!(
            "the card's timestamp did not advance {SETTLE_CYCLES} cycles in {SETTLE_READS} reads"
        ),
    })
}

/// How long a frame source may take to finish the frame in progress once it has room: a
/// 64 KiB frame is 4,096 beats; 25,000 cycles is 100 us at 250 MHz.
const SETTLE_CYCLES: u32 = 25_000;

/// A bound on the timestamp reads of [`settle`], which cost at least a register read's time.
const SETTLE_READS: usize = 100_000;

/// How many times the drain after a run reads the sent count: once for the frames queued, once
/// for the frame the source finished after it was disabled, once to see it settled.
const DRAIN_ROUNDS: usize = 4;

/// Where a stream's check stands.
#[derive(Debug, Default)]
struct SeqCheck {
    /// The last sequence number, once this run's first frame (number 0) has come.
    last: Option<u32>,
    /// Frames skipped before it: what an earlier run left on the card.
    stale: usize,
}

impl SeqCheck {
    /// How many of this run's frames have been taken from the card: the next sequence number.
    fn taken(&self) -> u64 {
        self.last.map_or(0, |s| u64::from(s) + 1)
    }
}

/// What a received frame is to the run.
#[derive(Debug, PartialEq, Eq)]
enum Seen {
    /// The next frame of this run.
    Next,
    /// The run starts (again) with this frame: everything taken before it was stale.
    Restart,
    /// A whole frame left by an earlier run: skipped.
    Stale,
}

/// Checks a generated frame and its place in the sequence. Until this run's first frame (a
/// valid frame numbered 0, since the counters were cleared) has come, whatever arrives was left
/// on the card by an earlier run; after it, every frame must be valid and follow its
/// predecessor, except that a frame numbered 0 starts the run again. The card's clear ends
/// every source at a frame boundary, so an earlier run leaves only whole frames: a piece of
/// one is an error at any point.
fn check_frame(bytes: &[u8], seq: &mut SeqCheck, ch: usize) -> Result<Seen> {
    let head = frame::parse(bytes)
        .map(|p| p.header.sequence)
        .map_err(|e| e.to_string());
    check_header(head, seq, ch)
}

/// [`check_frame`] on a frame already parsed: its sequence number or why it is not a frame.
fn check_header(
    head: std::result::Result<u32, String>,
    seq: &mut SeqCheck,
    ch: usize,
) -> Result<Seen> {
    let Some(prev) = seq.last else {
        return match head {
            Ok(0) => {
                seq.last = Some(0);
                Ok(Seen::Restart)
            }
            Err(e) => Err(Error::Invalid {
                op: "checking a generated frame",
                problem: format!(
                    "C2H channel {ch}: before this run's first frame, a receive that is not a whole frame ({e}): the card's CLEAR should have ended the earlier run at a frame boundary"
                ),
            }),
            Ok(_) if seq.stale < STALE_MAX => {
                seq.stale += 1;
                Ok(Seen::Stale)
            }
            Ok(_) => Err(Error::Invalid {
                op: "checking a generated frame",
                problem: format!(
                    "C2H channel {ch}: {STALE_MAX} frames came without this run's first one (sequence 0 after the counters were cleared)"
                ),
            }),
        };
    };
    let s = head.map_err(|e| Error::Invalid {
        op: "checking a generated frame",
        problem: format!("C2H channel {ch}: {e}"),
    })?;
    seq.last = Some(s);
    if s == 0 {
        return Ok(Seen::Restart);
    }
    if s != prev.wrapping_add(1) {
        return Err(Error::Invalid {
            op: "checking a generated frame",
            problem: format!("C2H channel {ch}: sequence {s} after {prev}: frames were lost"),
        });
    }
    Ok(Seen::Next)
}

/// Adds a received frame to the run's transfers as [`check_frame`] judges it.
fn take(out: &mut Vec<Transfer>, t: Transfer, seen: Seen) {
    match seen {
        Seen::Next => out.push(t),
        Seen::Restart => {
            out.clear();
            out.push(t);
        }
        Seen::Stale => {}
    }
}

fn receive<C: Card + AsyncCard>(
    card: &C,
    ch: usize,
    frame: usize,
    mode: StreamMode,
    frames: usize,
    progress: &(dyn Fn() + Sync),
) -> Result<(Vec<Transfer>, u64)> {
    // Grown as frames come: a count asked for is not memory to take up front.
    let mut out = Vec::with_capacity(frames.min(1 << 16));
    let mut seq = SeqCheck::default();
    let wait = receive_wait(card, FRAME_WAIT);
    match mode {
        StreamMode::OneAtATime => {
            let mut buf = DmaBuffer::new(frame)?;
            while out.len() < frames {
                let t = card.recv_stream(ch, &mut buf, wait)?;
                take(&mut out, t, check_frame(&buf[..t.bytes], &mut seq, ch)?);
                progress();
            }
        }
        StreamMode::Queued => {
            let rt = tokio::runtime::Builder::new_current_thread()
                .build()
                .map_err(|e| Error::Backend(format!("cannot start a tokio runtime: {e}")))?;
            // Two receives posted at once may be served in either order by a backend whose
            // calls run on threads of their own, so the frames are checked in the order they
            // completed, once all are in; only their headers are kept meanwhile.
            let mut got: Vec<(Transfer, std::result::Result<u32, String>)> = Vec::new();
            rt.block_on(async {
                let mut q = InOrder::new();
                let (mut fresh, mut probe) = (0, SeqCheck::default());
                while fresh < frames {
                    while fresh + q.len() < frames && q.len() < 2 {
                        let buf = DmaBuffer::new(frame)?;
                        q.push(Box::pin(card.recv_stream_async(ch, buf, wait)));
                    }
                    let Some((r, buf)) = q.next().await else {
                        break;
                    };
                    let t = r?;
                    let head = frame::parse(&buf[..t.bytes])
                        .map(|p| p.header.sequence)
                        .map_err(|e| e.to_string());
                    // Count this run's frames as they come, by the same rule as the check
                    // below but in completion order; the check settles the order.
                    match check_header(head.clone(), &mut probe, ch) {
                        Ok(Seen::Restart) => fresh = 1,
                        Ok(Seen::Stale) => {}
                        Ok(Seen::Next) | Err(_) => fresh += 1,
                    }
                    got.push((t, head));
                    progress();
                }
                Ok::<(), Error>(())
            })?;
            got.sort_by_key(|g| g.0.end_ps);
            for (t, head) in got {
                let seen = check_header(head, &mut seq, ch)?;
                take(&mut out, t, seen);
            }
            // Counting in completion order may take a frame for stale that the order of
            // ends shows to be this run's, and so post a receive more than needed: its frame
            // was checked and taken from the card, but the run reports the frames it asked for.
            out.truncate(frames);
        }
    }
    Ok((out, seq.taken()))
}

/// The register offsets and values the scenarios use, from the card's register table.
mod card_regs_layout {
    pub const CONTROL: u64 = card_regs::CONTROL as u64;
    pub const SRC0_FRAME_LEN: u64 = card_regs::SRC0_FRAME_LEN as u64;
    pub const SRC1_FRAME_LEN: u64 = card_regs::SRC1_FRAME_LEN as u64;
    pub const SRC0_SENT: u64 = card_regs::SRC0_SENT as u64;
    pub const SRC1_SENT: u64 = card_regs::SRC1_SENT as u64;
    pub const TIMESTAMP: u64 = card_regs::TIMESTAMP as u64;
    pub const MODE_GEN: u32 = card_regs::control::MODE_GEN as u32;
    pub const CH0_EN: u32 = card_regs::control::CH0_EN_MASK as u32;
    pub const CH1_EN: u32 = card_regs::control::CH1_EN_MASK as u32;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(heads: &[std::result::Result<u32, &str>]) -> Result<Vec<Seen>> {
        let mut seq = SeqCheck::default();
        heads
            .iter()
            .map(|h| check_header(h.map_err(str::to_string), &mut seq, 0))
            .collect()
    }

    #[test]
    fn frames_left_by_an_earlier_run_are_skipped_until_the_first_frame() {
        let seen = feed(&[Ok(17), Ok(18), Ok(0), Ok(1), Ok(2)]).expect("the check must pass");
        assert_eq!(
            seen,
            [
                Seen::Stale,
                Seen::Stale,
                Seen::Restart,
                Seen::Next,
                Seen::Next
            ]
        );
    }

    #[test]
    fn a_cut_piece_before_the_first_frame_is_an_error() {
        let err = feed(&[Ok(9), Err("bad crc"), Ok(1)]).expect_err("the check must fail");
        assert!(
            err.to_string().contains("not a whole frame (bad crc)"),
            "{err}"
        );
        assert!(feed(&[Ok(9), Ok(1)]).is_ok_and(|s| s == [Seen::Stale, Seen::Stale]));
    }

    #[test]
    fn a_gap_after_the_first_frame_is_a_loss() {
        let err = feed(&[Ok(0), Ok(1), Ok(3)]).expect_err("the check must fail");
        assert!(err.to_string().contains("sequence 3 after 1"), "{err}");
    }

    #[test]
    fn a_broken_frame_after_the_first_is_an_error() {
        assert!(feed(&[Ok(0), Err("bad crc")]).is_err());
    }

    #[test]
    fn the_stale_frames_are_bounded() {
        let heads = vec![Ok(5); STALE_MAX + 1];
        let err = feed(&heads).expect_err("the check must fail");
        assert!(
            err.to_string().contains("without this run's first one"),
            "{err}"
        );
    }

    #[test]
    fn taking_a_restart_drops_what_came_before() {
        let t = |end_ps| Transfer {
            bytes: 1,
            end_of_packet: true,
            start_ps: 0,
            end_ps,
        };
        let mut out = Vec::new();
        take(&mut out, t(1), Seen::Restart);
        take(&mut out, t(2), Seen::Next);
        take(&mut out, t(3), Seen::Stale);
        take(&mut out, t(4), Seen::Restart);
        assert_eq!(out.iter().map(|t| t.end_ps).collect::<Vec<_>>(), [4]);
    }
}
