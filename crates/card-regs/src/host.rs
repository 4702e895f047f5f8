//! Stopping the card's frame sources from the host, over any backend of the host API: the one
//! place that knows how a run ends cleanly, so that every tool starts its next run the same way.

use std::time::Duration;

use xdma_core::{Card, ChannelKind, Direction, DmaBuffer, Error, Result};

use crate::{clear, control, src_status, CLEAR, CONTROL, SRC_STATUS, TIMESTAMP};

/// The frame lengths a source makes: its FRAME_LEN register is clamped to these.
const FRAME_MIN: usize = 64;
const FRAME_MAX: usize = 65536;

/// Receives (or, without a stream, status reads) per source before a clear that does not end
/// is an error: a frame in flight needs one receive, and the few whole frames the stream path
/// may hold ahead of it one each.
const DRAIN_MAX: usize = 64;

/// Status reads before a source that does not restart is taken to be stuck: its FIFO drops a
/// word a cycle and the capture writer takes a frame in flight at a beat a cycle.
const POLL_MAX: usize = 100_000;

/// Cycles of the card's clock a source takes at most to drop what its FIFO still holds after a
/// frame in flight has gone (a word a cycle, 4,096 words) and to restart: CLEARING that lasts
/// longer after a receive means another frame is waiting on the stream.
const QUIET_CYCLES: u32 = 16_384;

/// How long one receive of the drain may wait for the rest of a frame in flight.
const DRAIN_WAIT: Duration = Duration::from_millis(10);

/// What [`stop_sources`] found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stopped {
    /// Per source: whether it was in the middle of a frame, which finished and was taken.
    pub tail: [bool; 2],
    /// Per source: receives the drain took (the frame in flight, and any whole frames the
    /// stream path held before it).
    pub drained: [usize; 2],
    /// Status reads while a source dropped what it held and restarted.
    pub polls: usize,
}

/// Stops both frame sources and zeroes the counters, so that the next run's sequence numbers
/// start at 0 and nothing of an earlier run is left in a source.
///
/// The sources are disabled with their outputs still routed to the C2H streams (GEN mode, or
/// CAPTURE on a card without streams), then CLEAR.COUNTERS is written: every whole frame a
/// source still held is discarded, and a frame already begun on its stream finishes (the card
/// never cuts one). When SRC_STATUS.TAIL says a source had begun a frame, its stream is
/// received once, the length in the source's FRAME_LEN (the length of the run that made the
/// frame: a driver's stream read waits for its whole buffer, so a larger one would wait for the
/// next frame); then SRC_STATUS.CLEARING is polled until the source restarts, with another
/// receive only if it lasts longer than the source needs to drop what its FIFO holds
/// ([`QUIET_CYCLES`]: whole frames were ahead of the one in flight on the stream). Then the
/// mode goes off. A source that does not finish within [`DRAIN_MAX`] receives or
/// [`POLL_MAX`] status reads is an error naming it.
pub fn stop_sources(card: &impl Card) -> Result<Stopped> {
    let info = card.info();
    let streams = info.all_of(Direction::C2H, ChannelKind::Stream);
    let route = if streams.is_empty() {
        control::MODE_CAPTURE
    } else {
        control::MODE_GEN
    };
    card.write_reg(u64::from(CONTROL), (route << control::MODE_LSB) as u32)?;
    card.write_reg(u64::from(CLEAR), clear::COUNTERS_MASK as u32)?;
    let clearing = [
        src_status::SRC0_CLEARING_MASK,
        src_status::SRC1_CLEARING_MASK,
    ];
    let tails = [src_status::SRC0_TAIL_MASK, src_status::SRC1_TAIL_MASK];
    let status = u64::from(card.read_reg(u64::from(SRC_STATUS))?);
    let mut out = Stopped {
        tail: [status & tails[0] != 0, status & tails[1] != 0],
        ..Stopped::default()
    };
    let wait = DRAIN_WAIT.max(info.min_stream_timeout);
    let frame_len = [crate::SRC0_FRAME_LEN, crate::SRC1_FRAME_LEN];
    for (k, &mask) in clearing.iter().enumerate() {
        // A source whose output reaches no consumer of this card (source 1 without a second
        // stream; source 1 on a card without streams, whose CAPTURE takes source 0 only)
        // can hold a frame only if it never had one; it cannot finish it, and no run reads it.
        let stream = streams.get(k).copied();
        let routed = if route == control::MODE_GEN {
            stream.is_some()
        } else {
            k == 0
        };
        if !routed {
            continue;
        }
        // The timestamp when the last receive of this source's stream ended: a receive is
        // made only for a frame in flight, and again only once the source has had the time to
        // drop the rest of its FIFO, which CLEARING also covers.
        let mut received: Option<u32> = None;
        loop {
            let now = u64::from(card.read_reg(u64::from(SRC_STATUS))?);
            if now & mask == 0 {
                break;
            }
            let due = match received {
                None => out.tail[k],
                Some(t) => card.read_reg(u64::from(TIMESTAMP))?.wrapping_sub(t) >= QUIET_CYCLES,
            };
            match stream {
                Some(ch) if due => {
                    if out.drained[k] >= DRAIN_MAX {
                        return Err(Error::Invalid {
                            op: "stopping the frame sources",
                            problem: format!(
                                "frame source {k} still finishes the frame it had begun after {DRAIN_MAX} receives: its stream does not take it; reset the card"
                            ),
                        });
                    }
                    let len = card.read_reg(u64::from(frame_len[k]))? as usize;
                    let mut b = DmaBuffer::new(len.clamp(FRAME_MIN, FRAME_MAX))?;
                    card.recv_stream(ch, &mut b, wait)?;
                    out.drained[k] += 1;
                    received = Some(card.read_reg(u64::from(TIMESTAMP))?);
                }
                _ => {
                    out.polls += 1;
                    if out.polls >= POLL_MAX {
                        return Err(Error::Invalid {
                            op: "stopping the frame sources",
                            problem: format!(
                                "frame source {k} still restarting after {POLL_MAX} status reads: its consumer does not take the frame it had begun; reset the card"
                            ),
                        });
                    }
                }
            }
        }
    }
    card.write_reg(u64::from(CONTROL), 0)?;
    Ok(out)
}
