//! Calls kept in flight on one channel and answered in the order they were made.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::api::{BufResult, Transfer};

/// One async data call of [`crate::AsyncCard`], boxed so that calls of different kinds queue
/// together.
pub type CallFut<'a> = Pin<Box<dyn Future<Output = BufResult<Transfer>> + Send + 'a>>;

/// Data calls in flight on one channel, polled together (so that a backend that submits on
/// the first poll submits them all at once) and answered in the order they were pushed: the
/// order in which the channel's engine serves them. A program keeps a channel's queue full
/// by pushing a call for every answer it takes.
#[derive(Default)]
pub struct InOrder<'a> {
    q: VecDeque<(CallFut<'a>, Option<BufResult<Transfer>>)>,
}

impl std::fmt::Debug for InOrder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InOrder")
            .field("calls", &self.q.len())
            .finish()
    }
}

impl<'a> InOrder<'a> {
    /// An empty queue.
    pub fn new() -> InOrder<'a> {
        InOrder { q: VecDeque::new() }
    }

    /// Calls in the queue, answered or not.
    pub fn len(&self) -> usize {
        self.q.len()
    }

    /// Whether the queue holds no call.
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    /// Adds a call at the back.
    pub fn push(&mut self, f: CallFut<'a>) {
        self.q.push_back((f, None));
    }

    /// Polls every pending call once, so that each has been submitted.
    fn kick(&mut self, cx: &mut Context<'_>) {
        for (f, done) in self.q.iter_mut() {
            if done.is_none() {
                if let Poll::Ready(r) = f.as_mut().poll(cx) {
                    *done = Some(r);
                }
            }
        }
    }

    /// The oldest call's answer, or `None` when the queue is empty.
    pub async fn next(&mut self) -> Option<BufResult<Transfer>> {
        std::future::poll_fn(|cx| {
            self.kick(cx);
            match self.q.front_mut() {
                None => Poll::Ready(None),
                Some((_, done)) if done.is_some() => {
                    Poll::Ready(self.q.pop_front().and_then(|(_, d)| d))
                }
                Some(_) => Poll::Pending,
            }
        })
        .await
    }
}
