//! Streams on either backend: a frame received whole, a stream drained, and the waits.
//!
//! A receive returns at most what the backend reads in one go (the driver backend reads one
//! descriptor, a page, at a time) and cannot always tell that a packet ended exactly where
//! the buffer did, so frames are received by their known length, piece after piece. And a
//! backend may be unable to wait as briefly as asked (the driver's stream reads block for its
//! `c2h_timeout`, and the driver backend refuses a shorter wait up front, saying so): a wait
//! for "anything more?" then takes the shortest wait the card says it honours
//! (`CardInfo::min_stream_timeout`, one `c2h_timeout` on the driver backend).

use std::time::Duration;

use xdma::{AsyncCard, Card, DmaBuffer, Error, ErrorKind, Result};

/// The wait for "is there anything more?" when the backend can honour it.
pub const QUICK: Duration = Duration::from_micros(200);

/// How long stream receives wait.
#[derive(Debug, Clone, Copy)]
pub struct Waits {
    data: Duration,
    quick: Duration,
}

impl Waits {
    /// Waits of at most `data` for what should come, on a card whose stream receives cannot
    /// wait less than `shortest` (`CardInfo::min_stream_timeout`).
    pub fn new(data: Duration, shortest: Duration) -> Waits {
        Waits {
            data,
            // A card that cannot wait even the long wait is refused that too, saying why.
            quick: QUICK.max(shortest).min(data),
        }
    }

    /// The longest wait for data or an interrupt that should come.
    pub fn data(&self) -> Duration {
        self.data
    }

    /// The wait for data that may not come: [`QUICK`], or the shortest wait the card honours
    /// when that is longer.
    pub fn quick(&self) -> Duration {
        self.quick
    }
}

/// One receive into `buf` waiting `wait`.
fn recv(card: &impl Card, ch: usize, buf: &mut [u8], wait: Duration) -> Result<usize> {
    card.recv_stream(ch, buf, wait).map(|t| t.bytes)
}

/// Receives one packet of exactly `len` bytes on C2H stream `ch`. The first bytes may take
/// `first` (a timeout then gives `Ok(None)`: nothing came); the rest of a packet that has begun
/// must follow within the long wait. A packet that ends early is an error that says where.
pub fn recv_exact(
    card: &impl Card,
    ch: usize,
    len: usize,
    first: Duration,
    waits: &Waits,
) -> Result<Option<Vec<u8>>> {
    let mut out = Vec::with_capacity(len);
    let mut buf = DmaBuffer::new(len)?;
    while out.len() < len {
        let want = len - out.len();
        let wait = if out.is_empty() { first } else { waits.data };
        let part = &mut buf[..want];
        match card.recv_stream(ch, part, wait) {
            Ok(t) => {
                out.extend_from_slice(&part[..t.bytes]);
                if t.end_of_packet && out.len() < len {
                    return Err(Error::Backend(format!(
                        "C2H stream {ch}: the packet ended after {} of the {len} bytes expected",
                        out.len()
                    )));
                }
            }
            Err(e) if e.kind() == ErrorKind::Timeout && out.is_empty() => return Ok(None),
            Err(e) => return Err(e),
        }
    }
    Ok(Some(out))
}

/// Receives a packet of `len` bytes that must come.
pub fn recv_frame(card: &impl Card, ch: usize, len: usize, waits: &Waits) -> Result<Vec<u8>> {
    recv_exact(card, ch, len, waits.data(), waits)?.ok_or_else(|| Error::Timeout {
        what: format!("a {len}-byte packet on C2H stream {ch}"),
        after: waits.data(),
    })
}

/// Sends `frame` on H2C stream `ch` from a page-aligned buffer (which meets any engine
/// alignment).
pub fn send(card: &impl Card, ch: usize, frame: &[u8]) -> Result<()> {
    let b = DmaBuffer::from_slice(frame)?;
    card.send_stream(ch, &b).map(|_| ())
}

/// Sends `frame` on H2C stream `h2c` while receiving a packet of `back` bytes on C2H stream
/// `c2h`, as a card that passes H2C data through to C2H (LOOP) needs: the card holds the H2C
/// data back while nothing takes the C2H side. Both calls go out together on the one handle
/// (the async API), and the packet's later pieces are taken while the send still runs.
pub async fn send_and_receive<C: AsyncCard>(
    card: &C,
    h2c: usize,
    frame: &[u8],
    c2h: usize,
    back: usize,
    waits: &Waits,
) -> Result<Vec<u8>> {
    let data = DmaBuffer::from_slice(frame)?;
    let rx = async {
        let mut out = Vec::with_capacity(back);
        while out.len() < back {
            let (r, buf) = card
                .recv_stream_async(c2h, DmaBuffer::new(back - out.len())?, waits.data())
                .await;
            let t = r?;
            out.extend_from_slice(&buf[..t.bytes]);
            if t.end_of_packet && out.len() < back {
                return Err(Error::Backend(format!(
                    "C2H stream {c2h}: the packet ended after {} of the {back} bytes expected",
                    out.len()
                )));
            }
        }
        Ok(out)
    };
    let tx = card.send_stream_async(h2c, data);
    let (got, (sent, _)) = tokio::join!(rx, tx);
    sent?;
    got
}

/// Receives packets of `len` bytes on `ch` until none comes within the quick wait, handing
/// each to `each`; returns how many came. A stream stopped at its source is drained this way.
pub fn drain(
    card: &impl Card,
    ch: usize,
    len: usize,
    waits: &Waits,
    mut each: impl FnMut(Vec<u8>) -> std::result::Result<(), String>,
) -> std::result::Result<u64, String> {
    let mut n = 0;
    loop {
        match recv_exact(card, ch, len, waits.quick(), waits) {
            Ok(Some(p)) => {
                n += 1;
                each(p)?;
            }
            Ok(None) => return Ok(n),
            Err(e) => return Err(format!("draining C2H stream {ch} after {n} packets: {e}")),
        }
    }
}

/// Receives whatever is left on `ch` in pieces of up to a page, until nothing comes within the
/// quick wait; returns the bytes. For a test that failed midway and leaves its stream busy.
pub fn discard(card: &impl Card, ch: usize, waits: &Waits) -> u64 {
    let mut total = 0u64;
    let Ok(mut buf) = DmaBuffer::new(4096) else {
        return 0;
    };
    while let Ok(n) = recv(card, ch, &mut buf, waits.quick()) {
        total += n as u64;
        if total > 1 << 30 {
            break;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quick_wait_is_the_shortest_the_card_honours() {
        let long = Duration::from_secs(10);
        // The simulated card honours any wait.
        assert_eq!(Waits::new(long, Duration::ZERO).quick(), QUICK);
        // The driver with c2h_timeout = 5 s: one of its waits, not the long wait's two.
        assert_eq!(
            Waits::new(long, Duration::from_secs(5)).quick(),
            Duration::from_secs(5)
        );
        // c2h_timeout = 0 (reads wait forever): the long wait, which the card then refuses.
        assert_eq!(Waits::new(long, Duration::MAX).quick(), long);
        assert_eq!(Waits::new(long, Duration::MAX).data(), long);
    }
}
