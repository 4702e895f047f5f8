//! User interrupt waits on the driver's event nodes: a poll, then a 4-byte read.

use std::time::{Duration, Instant};

use crate::card::HwCard;
use crate::error::count;
use crate::node::{Abandon, ABANDON_POLL_MS};
use crate::sys::os_error;
use xdma_core::{check, Error, Result};

impl HwCard {
    /// A wait for user interrupt `event`, which polls in short steps when its caller may give
    /// it up.
    pub(crate) fn wait_for(
        &self,
        event: usize,
        timeout: Duration,
        abandon: &Abandon,
    ) -> Result<u32> {
        let i = &self.inner;
        check::event(&i.info, event)?;
        let node = &i.events[event];
        let called = Instant::now();
        let g = node.lock_for("user interrupt wait", abandon)?;
        let io = g.io()?;
        // No deadline when the caller waits longer than the clock can count.
        let deadline = Instant::now().checked_add(timeout);
        loop {
            if abandon.given_up() {
                return Err(abandon.error("user interrupt wait", &node.path));
            }
            let mut ms = match deadline {
                None => -1,
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    // Round up so that a sub-millisecond timeout still waits rather than spins.
                    left.as_micros().div_ceil(1000).min(i32::MAX as u128) as libc::c_int
                }
            };
            // A wait its caller may give up polls in short steps, so that it notices.
            if abandon.can_give_up() && !(0..=ABANDON_POLL_MS).contains(&ms) {
                ms = ABANDON_POLL_MS;
            }
            let ready = match io.poll_in(ms) {
                Ok(r) => r,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(os_error("poll", &node.path, e)),
            };
            if !ready {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    let behind = g
                        .waited_behind()
                        .map(|w| format!(" ({w})"))
                        .unwrap_or_default();
                    return Err(Error::Timeout {
                        what: format!("user interrupt on {}{behind}", node.path.display()),
                        after: called.elapsed().max(timeout),
                    });
                }
                continue;
            }
            let mut b = [0u8; 4];
            match io.read(&mut b) {
                Ok(r) => {
                    let n = count("read", &node.path, r, 4)?;
                    if n != 4 {
                        return Err(Error::ShortTransfer {
                            op: "read",
                            node: node.path.clone(),
                            done: n as u64,
                            len: 4,
                        });
                    }
                    return Ok(u32::from_le_bytes(b));
                }
                Err(e)
                    if e.kind() == std::io::ErrorKind::Interrupted
                        || e.raw_os_error() == Some(libc::EAGAIN) =>
                {
                    continue
                }
                Err(e) => return Err(os_error("read", &node.path, e)),
            }
        }
    }
}
