//! The user interrupt nodes `_events_<k>` (cdev_events.c): the latch of each line, blocking
//! reads and poll wake-ups.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use fuser::{Errno, PollNotifier};
use xdma_core::Card;

use super::state::{lock, spawn, Handle, Shared};

impl Shared {
    /// Starts the thread that runs the simulated card while someone waits for interrupt `k`.
    pub(super) fn watch(self: &Arc<Self>, k: usize) {
        let line = &self.lines[k];
        {
            let mut st = lock(&line.state);
            if st.watching || k >= self.info.events {
                return;
            }
            st.watching = true;
        }
        let me = self.clone();
        spawn("xdma-fuse-irq", move || {
            let line = me.lines[k].clone();
            loop {
                {
                    let mut st = lock(&line.state);
                    if st.readers == 0 && st.polls.is_empty() {
                        st.watching = false;
                        return;
                    }
                }
                let idle = || {
                    let st = lock(&line.state);
                    st.readers == 0 && st.polls.is_empty()
                };
                match me.card.node_wait_event(k, &idle) {
                    Ok(Some(_)) => me.latch(k),
                    Ok(None) => {}
                    Err(_) => std::thread::sleep(Duration::from_millis(100)),
                }
            }
        });
    }

    /// Latches interrupt `k` as the driver's handler does (events_irq = 1) and wakes its
    /// readers and pollers.
    fn latch(&self, k: usize) {
        let polls = {
            let mut st = lock(&self.lines[k].state);
            st.latched = 1;
            std::mem::take(&mut st.polls)
        };
        self.wake(k, polls);
    }

    /// Wakes the readers and the pollers of line `k` once it is latched.
    fn wake(&self, k: usize, polls: Vec<(u64, PollNotifier)>) {
        self.lines[k].cv.notify_all();
        for (_, p) in polls {
            let _ = p.notify();
        }
    }

    /// Fetches an interrupt that the simulated card raised since the last look, without
    /// letting simulated time run. An event node's calls go one at a time, so a look must not
    /// meet a watcher's wait on the line (it would queue behind a wait that may not end):
    /// while the line is watched, the watcher latches whatever comes and there is nothing to
    /// look for; otherwise the look is made holding the line's lock, under which no watcher
    /// can start.
    pub(super) fn peek(&self, k: usize) {
        if k >= self.info.events {
            return;
        }
        let polls = {
            let mut st = lock(&self.lines[k].state);
            if st.latched != 0 || st.watching {
                return;
            }
            match self.card.wait_event(k, Duration::ZERO) {
                Ok(n) if n > 0 => {
                    st.latched = 1;
                    std::mem::take(&mut st.polls)
                }
                _ => return,
            }
        };
        self.wake(k, polls);
    }

    /// A blocking event read: waits until the line is latched, then takes it.
    pub(super) fn read_event(self: &Arc<Self>, h: &Handle, k: usize) -> Result<u32, Errno> {
        self.peek(k);
        let line = self.lines[k].clone();
        lock(&line.state).readers += 1;
        self.watch(k);
        let mut st = lock(&line.state);
        let r = loop {
            if st.latched != 0 {
                break Ok(std::mem::take(&mut st.latched));
            }
            if h.closed.load(Ordering::SeqCst) {
                break Err(Errno::EINTR);
            }
            st = line
                .cv
                .wait_timeout(st, Duration::from_millis(100))
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        };
        st.readers -= 1;
        r
    }

    // ---------------------------------------------------------------- ioctls
}
