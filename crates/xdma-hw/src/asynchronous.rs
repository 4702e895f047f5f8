//! The async API ([`AsyncCard`]): each call on a thread of its own, given up when its future
//! is dropped.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::card::HwCard;
use crate::node::Abandon;
use xdma_core::{AsyncCard, BufResult, Card, CardAddr, DmaBuffer, Error, Result, Transfer};

/// Runs a blocking driver call on a thread of its own and awaits its end. Not tokio's
/// blocking pool: a runtime that is dropped joins its blocking threads, so a receive in flight
/// would hold the drop (and a program's exit) for the receive's whole timeout. A thread of its
/// own is not joined: the future's runtime drops at once, and the call ends in the driver at
/// its timeout with nobody waiting for it.
///
/// A future dropped before its answer sets the call's [`Abandon`] flag, so that the call makes
/// no further driver call (no next read of a receive, no next chunk of a transfer, no next
/// poll of an event wait) and the node is free for the next call once the driver's call in
/// flight returns.
async fn on_own_thread<T, F>(what: &'static str, f: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce(Abandon) -> T + Send + 'static,
{
    /// Sets the flag when the future is dropped before the answer came.
    struct GiveUpOnDrop(Arc<AtomicBool>, bool);
    impl Drop for GiveUpOnDrop {
        fn drop(&mut self) {
            if !self.1 {
                self.0.store(true, Ordering::Release);
            }
        }
    }
    let flag = Arc::new(AtomicBool::new(false));
    let mut guard = GiveUpOnDrop(flag.clone(), false);
    let abandon = Abandon(Some(flag));
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name(format!("xdma-hw {what}"))
        .spawn(move || {
            // The receiver is gone when the caller gave up the call: nothing to hand back.
            let _ = tx.send(f(abandon));
        })
        .map_err(|e| Error::Backend(format!("cannot start a thread for the {what}: {e}")))?;
    let r = rx
        .await
        .map_err(|_| Error::Backend(format!("the {what} thread ended without an answer")));
    guard.1 = true;
    r
}

/// Runs a blocking call with an owned buffer, handing the buffer back.
async fn blocking_buf<F>(card: &HwCard, buf: DmaBuffer, f: F) -> BufResult<Transfer>
where
    F: FnOnce(&HwCard, &mut DmaBuffer, &Abandon) -> Result<Transfer> + Send + 'static,
{
    let c = card.clone();
    match on_own_thread("transfer", move |abandon| {
        let mut buf = buf;
        let r = f(&c, &mut buf, &abandon);
        (r, buf)
    })
    .await
    {
        Ok(done) => done,
        Err(e) => (Err(e), DmaBuffer::empty()),
    }
}

async fn blocking<T, F>(card: &HwCard, what: &'static str, f: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce(&HwCard, &Abandon) -> Result<T> + Send + 'static,
{
    let c = card.clone();
    on_own_thread(what, move |abandon| f(&c, &abandon)).await?
}

impl AsyncCard for HwCard {
    async fn write_mm_async(
        &self,
        channel: usize,
        addr: CardAddr,
        data: DmaBuffer,
    ) -> BufResult<Transfer> {
        blocking_buf(self, data, move |c, b, a| {
            c.write_mm_for(channel, addr, b, a)
        })
        .await
    }

    async fn read_mm_async(
        &self,
        channel: usize,
        addr: CardAddr,
        buf: DmaBuffer,
    ) -> BufResult<Transfer> {
        blocking_buf(self, buf, move |c, b, a| c.read_mm_for(channel, addr, b, a)).await
    }

    async fn send_stream_async(&self, channel: usize, frame: DmaBuffer) -> BufResult<Transfer> {
        blocking_buf(self, frame, move |c, b, _| c.send_stream(channel, b)).await
    }

    async fn recv_stream_async(
        &self,
        channel: usize,
        buf: DmaBuffer,
        timeout: Duration,
    ) -> BufResult<Transfer> {
        blocking_buf(self, buf, move |c, b, a| c.recv_for(channel, b, timeout, a)).await
    }

    async fn read_reg_async(&self, offset: u64) -> Result<u32> {
        blocking(self, "register access", move |c, _| c.read_reg(offset)).await
    }

    async fn write_reg_async(&self, offset: u64, value: u32) -> Result<()> {
        blocking(self, "register access", move |c, _| {
            c.write_reg(offset, value)
        })
        .await
    }

    async fn wait_event_async(&self, event: usize, timeout: Duration) -> Result<u32> {
        blocking(self, "user interrupt wait", move |c, a| {
            c.wait_for(event, timeout, a)
        })
        .await
    }
}
