//! The two timing modes of the reference measurements, on any backend.
//!
//! - Back-to-back: transfers of one direction are kept queued on their channel, so each is
//!   submitted while the previous one runs and the driver's queue overlaps part of the fixed
//!   cost. One transfer's duration is the time between two completions.
//! - Serial: each transfer is submitted only after the previous one has returned to the
//!   caller (a write, then a read of the same block, then the next write, ...), so every
//!   transfer pays the whole round trip. One transfer's duration is the loop's period.
//!
//! Durations count in the backend's clock: simulated time on the simulated card, host time on
//! a board. Data is checked on every run.

use serde::{Deserialize, Serialize};
use xdma::{AsyncCard, CallFut, Card, CardAddr, Direction, DmaBuffer, Error, InOrder, Result};

/// How transfers are submitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// The next transfer of a direction is queued while the previous one runs.
    BackToBack,
    /// Each transfer waits for the previous one to return.
    Serial,
}

/// One measured transfer duration.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Sample {
    /// The direction.
    pub dir: Direction,
    /// Bytes of the transfer.
    pub bytes: u64,
    /// The transfer's duration in microseconds, as the mode defines it.
    pub us: f64,
}

impl Sample {
    /// Throughput in MB/s (10^6 bytes per second).
    pub fn mb_s(&self) -> f64 {
        self.bytes as f64 / self.us
    }
}

/// A deterministic test pattern for transfer `seed`.
pub fn pattern(len: usize, seed: u32) -> Vec<u8> {
    (0..len as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) ^ seed.wrapping_mul(40_503)).to_le_bytes()[2])
        .collect()
}

fn call<'a, C: AsyncCard>(
    card: &'a C,
    dir: Direction,
    channel: usize,
    addr: CardAddr,
    buf: DmaBuffer,
) -> CallFut<'a> {
    match dir {
        Direction::H2C => Box::pin(card.write_mm_async(channel, addr, buf)),
        Direction::C2H => Box::pin(card.read_mm_async(channel, addr, buf)),
    }
}

fn mismatch(dir: Direction, bytes: usize, addr: CardAddr) -> Error {
    Error::Invalid {
        op: "checking a measured transfer",
        problem: format!(
            "the {bytes} bytes {} at card address {addr} are not what was written: the card or the backend corrupted data",
            match dir {
                Direction::H2C => "written and read back",
                Direction::C2H => "read",
            }
        ),
    }
}

/// Back-to-back transfers of `bytes` at `addr` on memory-mapped channel `channel`: `count + 1`
/// transfers with `depth` of them queued at any time; the first only fills the queue, so
/// `count` durations come back, each the time between one completion and the next. Written data
/// (H2C) is read back and read data (C2H) is compared with what was written first.
pub async fn back_to_back<C: AsyncCard + Card>(
    card: &C,
    dir: Direction,
    channel: usize,
    addr: CardAddr,
    bytes: usize,
    count: usize,
    depth: usize,
) -> Result<Vec<Sample>> {
    let data = pattern(bytes, bytes as u32);
    let expect = DmaBuffer::from_slice(&data)?;
    // The block a read run reads is written first (through the first memory-mapped H2C
    // channel); a write run's block is read back at the end (through the first C2H one).
    let other = |d: Direction| card.info().mm_channel(d);
    if dir == Direction::C2H {
        card.write_mm(other(Direction::H2C)?, addr, &expect)?;
    }
    let depth = depth.max(1);
    let total = count + 1;
    let mut free: Vec<DmaBuffer> = (0..depth)
        .map(|_| DmaBuffer::from_slice(&data))
        .collect::<Result<_>>()?;
    let mut inflight = InOrder::new();
    let mut issued = 0;
    let mut ends = Vec::with_capacity(total);
    while ends.len() < total {
        while issued < total && inflight.len() < depth {
            let buf = free
                .pop()
                .ok_or_else(|| Error::Backend("no free buffer".into()))?;
            inflight.push(call(card, dir, channel, addr, buf));
            issued += 1;
        }
        let Some((r, buf)) = inflight.next().await else {
            break;
        };
        let t = r?;
        if dir == Direction::C2H && buf[..] != data[..] {
            return Err(mismatch(dir, bytes, addr));
        }
        ends.push(t.end_ps);
        free.push(buf);
    }
    // The channel serves its queue one transfer at a time, but a backend whose calls run on
    // threads of their own may take them in another order than they were made: the durations
    // are the gaps between completions in the order they happened.
    ends.sort_unstable();
    let out: Vec<Sample> = ends
        .windows(2)
        .map(|w| Sample {
            dir,
            bytes: bytes as u64,
            us: (w[1] - w[0]) as f64 / 1e6,
        })
        .collect();
    if dir == Direction::H2C {
        let mut back = DmaBuffer::new(bytes)?;
        card.read_mm(other(Direction::C2H)?, addr, &mut back)?;
        if back[..] != data[..] {
            return Err(mismatch(dir, bytes, addr));
        }
    }
    Ok(out)
}

/// Serial transfers: `count` rounds of a write of `bytes` at `addr` and a read of it back,
/// each call made after the previous one returned; returns one duration per transfer, each
/// from its call to the next call.
pub fn serial<C: Card>(
    card: &C,
    addr: CardAddr,
    bytes: usize,
    count: usize,
) -> Result<Vec<Sample>> {
    let (h2c, c2h) = (
        card.info().mm_channel(Direction::H2C)?,
        card.info().mm_channel(Direction::C2H)?,
    );
    let mut out = Vec::with_capacity(2 * count);
    let mut back = DmaBuffer::new(bytes)?;
    let mut last: Option<(Direction, u64)> = None;
    let mut close = |dir: Direction, start: u64, out: &mut Vec<Sample>| {
        if let Some((d, s)) = last.replace((dir, start)) {
            out.push(Sample {
                dir: d,
                bytes: bytes as u64,
                us: start.saturating_sub(s) as f64 / 1e6,
            });
        }
    };
    // Two patterns made before the loop, alternating, so that no buffer is built inside a
    // timed period and each read shows the latest write.
    let blocks = [
        DmaBuffer::from_slice(&pattern(bytes, 0))?,
        DmaBuffer::from_slice(&pattern(bytes, 1))?,
    ];
    for k in 0..count {
        let data = &blocks[k % 2];
        let w = card.write_mm(h2c, addr, data)?;
        close(Direction::H2C, w.start_ps, &mut out);
        let r = card.read_mm(c2h, addr, &mut back)?;
        close(Direction::C2H, r.start_ps, &mut out);
        if back[..] != data[..] {
            return Err(mismatch(Direction::C2H, bytes, addr));
        }
    }
    // The last transfer's period ends where the next call would start.
    let end = card.now_ps()?;
    close(Direction::H2C, end, &mut out);
    Ok(out)
}

/// The smallest duration of `samples` (best of N: what the hardware can reach).
pub fn best(samples: &[Sample]) -> Option<Sample> {
    samples.iter().copied().min_by(|a, b| a.us.total_cmp(&b.us))
}
