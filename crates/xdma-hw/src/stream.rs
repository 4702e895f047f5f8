//! Stream transfers: H2C frames of one descriptor each, and C2H receives of one driver read
//! at a time within the driver's `c2h_timeout`.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::card::{HwCard, Inner};
use crate::error::{count, DriverError};
use crate::node::Abandon;
use crate::sys::{os_error, SignalGuard};
use xdma_core::{check, Direction, DmaBuffer, Error, ErrorKind, Result, Transfer};

impl Inner {
    /// The receive plan for a stream read: how many driver reads of `c2h_timeout` fit in the
    /// caller's timeout (None: no bound), or the refusal when none does.
    pub(crate) fn recv_attempts(&self, node: &Path, timeout: Duration) -> Result<Option<u128>> {
        let p = &self.driver.params;
        let forever = timeout == Duration::MAX;
        match p.c2h_timeout() {
            None if forever => Ok(None),
            None => Err(Error::Unsupported {
                backend: "hw",
                what: format!("a stream receive on {} with a {timeout:?} timeout", node.display()),
                why: format!(
                    "the driver's module parameter c2h_timeout is 0 ({}), so a read blocks until data comes, and the DMA nodes have no poll and ignore O_NONBLOCK: load the driver with c2h_timeout=<seconds>, or wait forever (Duration::MAX)",
                    p.origin()
                ),
            }),
            Some(t) if timeout < t => Err(Error::Unsupported {
                backend: "hw",
                what: format!("a stream receive on {} with a {timeout:?} timeout", node.display()),
                why: format!(
                    "the driver's stream read blocks until data or its module parameter c2h_timeout = {} s ({}); the DMA nodes have no poll and ignore O_NONBLOCK, so a shorter wait cannot be honoured: pass a timeout of at least {} s, or load the driver with a smaller c2h_timeout (whole seconds)",
                    t.as_secs(),
                    p.origin(),
                    t.as_secs()
                ),
            }),
            Some(_) if forever => Ok(None),
            Some(t) => Ok(Some((timeout.as_nanos() / t.as_nanos()).max(1))),
        }
    }
}

impl HwCard {
    /// A stream H2C send of one frame, kept in one descriptor.
    pub(crate) fn send(&self, channel: usize, frame: &[u8]) -> Result<Transfer> {
        let i = &self.inner;
        let op = "stream H2C send";
        check::stream(
            &i.info,
            op,
            Direction::H2C,
            channel,
            frame.as_ptr() as usize,
            frame.len(),
        )?;
        let limit =
            i.hw.h2c_stream_max_frame
                .min(usize::try_from(i.driver.params.desc_blen_max).unwrap_or(usize::MAX));
        if frame.len() > limit {
            return Err(Error::Invalid {
                op,
                problem: format!(
                    "a {}-byte frame takes more than one descriptor (one page, desc_blen_max = {}); the driver cuts a transfer at the end of its descriptor ring, whose position carries over from earlier calls, and ends every piece with end-of-packet, so the frame could leave the card as two packets: send frames of at most {limit} bytes ([hw] h2c_stream_max_frame)",
                    frame.len(),
                    i.driver.params.desc_blen_max
                ),
            });
        }
        let node = &i.h2c[channel];
        let g = node.lock()?;
        let io = g.io()?;
        // A frame that straddles a page boundary would take two descriptors; one page of its
        // own keeps it in one.
        let page = i.page;
        let straddles = (frame.as_ptr() as usize % page) + frame.len() > page;
        let mut copy = if straddles {
            Some(DmaBuffer::from_slice(frame)?)
        } else {
            None
        };
        let start_ps = i.now_ps();
        loop {
            let data: &[u8] = copy.as_deref().unwrap_or(frame);
            let r = {
                let _signals = SignalGuard::new(i.hw.block_signals);
                io.write(data)
            };
            match r {
                Ok(r) => {
                    let n = count("write", &node.path, r, data.len())?;
                    if n != data.len() {
                        return Err(Error::ShortTransfer {
                            op: "write",
                            node: node.path.clone(),
                            done: n as u64,
                            len: data.len() as u64,
                        });
                    }
                    break;
                }
                Err(e) if e.raw_os_error() == Some(libc::EFAULT) && copy.is_none() => {
                    // The driver pins pages writable even to send them: read-only memory
                    // fails, an owned copy does not.
                    copy = Some(DmaBuffer::from_slice(frame)?);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
                    return Err(DriverError::Interrupted {
                        op: "write",
                        node: node.path.clone(),
                    }
                    .into_error())
                }
                Err(e) => return Err(os_error("write", &node.path, e)),
            }
        }
        Ok(Transfer {
            bytes: frame.len(),
            end_of_packet: true,
            start_ps,
            end_ps: i.now_ps(),
        })
    }

    /// A stream C2H receive, which stops before its next read once its caller gave it up.
    pub(crate) fn recv_for(
        &self,
        channel: usize,
        buf: &mut [u8],
        timeout: Duration,
        abandon: &Abandon,
    ) -> Result<Transfer> {
        let i = &self.inner;
        let op = "stream C2H receive";
        check::stream(
            &i.info,
            op,
            Direction::C2H,
            channel,
            buf.as_ptr() as usize,
            buf.len(),
        )?;
        let node = &i.c2h[channel];
        let attempts = i.recv_attempts(&node.path, timeout)?;
        let called = Instant::now();
        let g = node.lock_for(op, abandon)?;
        let io = g.io()?;
        // One descriptor per read: no further than the buffer's next page boundary.
        let page = i.page;
        let mut chunk = buf.len().min(i.hw.c2h_stream_read);
        if i.hw.c2h_stream_read <= page {
            chunk = chunk.min(page - buf.as_ptr() as usize % page);
        }
        let start_ps = i.now_ps();
        let mut tried: u128 = 0;
        loop {
            // A receive whose caller gave it up makes no further read: the next call on the
            // node waits at most for the driver's read in flight, not for the whole timeout.
            if abandon.given_up() {
                return Err(abandon.error(op, &node.path));
            }
            tried += 1;
            let r = {
                let _signals = SignalGuard::new(i.hw.block_signals);
                io.read(&mut buf[..chunk])
            };
            let e = match r {
                Ok(r) => {
                    let n = count("read", &node.path, r, chunk)?;
                    if n == 0 {
                        return Err(Error::ShortTransfer {
                            op: "read",
                            node: node.path.clone(),
                            done: 0,
                            len: chunk as u64,
                        });
                    }
                    return Ok(Transfer {
                        bytes: n,
                        // With O_TRUNC a read that stops short stopped at end-of-packet.
                        end_of_packet: n < chunk,
                        start_ps,
                        end_ps: i.now_ps(),
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
                    return Err(DriverError::Interrupted {
                        op: "read",
                        node: node.path.clone(),
                    }
                    .into_error())
                }
                Err(e) => os_error("read", &node.path, e),
            };
            if e.kind() != ErrorKind::Timeout || attempts.is_some_and(|a| tried >= a) {
                return Err(if e.kind() == ErrorKind::Timeout {
                    // The driver waits whole c2h_timeouts: what it waited is the reads made
                    // times the parameter, which a timeout that is not a multiple of it rounds
                    // down.
                    // A call that first waited for its node behind another call says so, and
                    // its time counts from the call, not from its first read.
                    let t = i.driver.params.c2h_timeout().unwrap_or(Duration::ZERO);
                    let behind = g
                        .waited_behind()
                        .map(|w| format!("; {w}"))
                        .unwrap_or_default();
                    Error::Timeout {
                        what: format!(
                            "data on {} ({} read(s) of c2h_timeout = {} s each, the driver's whole waits within the {:?} asked for{behind}; {})",
                            node.path.display(),
                            tried,
                            t.as_secs(),
                            timeout,
                            i.driver.describe()
                        ),
                        // The driver's whole waits, or the time since the call when that
                        // is longer (it first waited for its node behind another call).
                        after: t
                            .saturating_mul(u32::try_from(tried).unwrap_or(u32::MAX))
                            .max(called.elapsed()),
                    }
                } else {
                    e
                });
            }
        }
    }
}
