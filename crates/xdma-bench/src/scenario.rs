//! Scenarios beyond one direction at a time: a write thread and a read thread at once, and the
//! card's generated frames received on one or two C2H streams.

use std::time::Duration;

use serde::Serialize;
use xdma::{AsyncCard, Card, CardAddr, ChannelKind, Direction, DmaBuffer, Error, Result, Transfer};

use crate::measure::{pattern, InOrder};

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

fn mm_channel(card: &impl Card, dir: Direction) -> Result<usize> {
    card.info()
        .find(dir, ChannelKind::MemoryMapped)
        .ok_or_else(|| Error::Unsupported {
            backend: "any",
            what: format!("a memory-mapped {dir} transfer"),
            why: format!("the card has no memory-mapped {dir} channel"),
        })
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
        mm_channel(card, Direction::H2C)?,
        mm_channel(card, Direction::C2H)?,
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
    let wdata = DmaBuffer::from_slice(&pattern(block, 1))?;
    let rdata = pattern(block, 2);
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
    let streams: Vec<usize> = card
        .info()
        .c2h
        .iter()
        .filter(|c| c.kind == ChannelKind::Stream)
        .map(|c| c.index)
        .collect();
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
    if !(64..=65536).contains(&frame) {
        return Err(Error::Invalid {
            op: "the stream scenario",
            problem: format!(
                "frames of {frame} bytes: the frame sources make 64 to 65536-byte frames"
            ),
        });
    }
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
    let mut out = Vec::new();
    let results = results.into_iter().collect::<Result<Vec<_>>>()?;
    let span = span_of(results.iter().map(Vec::as_slice));
    for (ts, &ch) in results.into_iter().zip(&streams) {
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

fn check_frame(bytes: &[u8], seq: &mut Option<u32>, ch: usize) -> Result<()> {
    let parsed = frame::parse(bytes).map_err(|e| Error::Invalid {
        op: "checking a generated frame",
        problem: format!("C2H channel {ch}: {e}"),
    })?;
    let s = parsed.header.sequence;
    if let Some(prev) = seq.replace(s) {
        if s != prev.wrapping_add(1) {
            return Err(Error::Invalid {
                op: "checking a generated frame",
                problem: format!("C2H channel {ch}: sequence {s} after {prev}: frames were lost"),
            });
        }
    }
    Ok(())
}

fn receive<C: Card + AsyncCard>(
    card: &C,
    ch: usize,
    frame: usize,
    mode: StreamMode,
    frames: usize,
    progress: &(dyn Fn() + Sync),
) -> Result<Vec<Transfer>> {
    let mut out = Vec::with_capacity(frames);
    let mut seq = None;
    match mode {
        StreamMode::OneAtATime => {
            let mut buf = DmaBuffer::new(frame)?;
            for _ in 0..frames {
                let t = card.recv_stream(ch, &mut buf, FRAME_WAIT)?;
                check_frame(&buf[..t.bytes], &mut seq, ch)?;
                out.push(t);
                progress();
            }
        }
        StreamMode::Queued => {
            let rt = tokio::runtime::Builder::new_current_thread()
                .build()
                .map_err(|e| Error::Backend(format!("cannot start a tokio runtime: {e}")))?;
            rt.block_on(async {
                let mut q = InOrder::new();
                let mut posted = 0;
                while out.len() < frames {
                    while posted < frames && q.len() < 2 {
                        let buf = DmaBuffer::new(frame)?;
                        q.push(Box::pin(card.recv_stream_async(ch, buf, FRAME_WAIT)));
                        posted += 1;
                    }
                    let Some((r, buf)) = q.next().await else {
                        break;
                    };
                    let t = r?;
                    check_frame(&buf[..t.bytes], &mut seq, ch)?;
                    out.push(t);
                    progress();
                }
                Ok::<(), Error>(())
            })?;
        }
    }
    Ok(out)
}

/// The register offsets and values the scenarios use, from the card's register table.
mod card_regs_layout {
    pub const CONTROL: u64 = card_regs::CONTROL as u64;
    pub const SRC0_FRAME_LEN: u64 = card_regs::SRC0_FRAME_LEN as u64;
    pub const SRC1_FRAME_LEN: u64 = card_regs::SRC1_FRAME_LEN as u64;
    pub const MODE_GEN: u32 = card_regs::control::MODE_GEN as u32;
    pub const CH0_EN: u32 = card_regs::control::CH0_EN_MASK as u32;
    pub const CH1_EN: u32 = card_regs::control::CH1_EN_MASK as u32;
}
