//! The window of accesses a replay keeps in flight, and when a new access must wait.

use std::collections::VecDeque;

use crate::axi::TxnId;
use crate::error::Result;

/// An access a replay has issued and not yet checked.
pub(super) struct Issued<C> {
    pub(super) txn: TxnId,
    /// Its place in the sequence, for the error.
    pub(super) index: usize,
    pub(super) write: bool,
    /// The bytes it touches, `[lo, hi)`.
    pub(super) span: (u64, u64),
    /// What its answer is checked against.
    pub(super) check: C,
}

/// The accesses in flight during a replay: the one place that decides when a new access must
/// first wait for older ones. It keeps at most `depth` in flight, and lets no access go out
/// while an older one in flight touches the same bytes with a write on either side: on AXI
/// the order of such accesses is not defined, so the reference could not say what a read
/// returns. Waiting retires the oldest first.
pub(super) struct InFlight<C> {
    pub(super) depth: usize,
    pub(super) queue: VecDeque<Issued<C>>,
}

impl<C> InFlight<C> {
    pub(super) fn new(depth: usize) -> InFlight<C> {
        InFlight {
            depth: depth.max(1),
            queue: VecDeque::new(),
        }
    }

    /// Retires accesses, oldest first, until one that `write`s or reads `span` may go out.
    pub(super) fn make_room(
        &mut self,
        write: bool,
        span: (u64, u64),
        mut retire: impl FnMut(Issued<C>) -> Result<()>,
    ) -> Result<()> {
        let clashes = |q: &VecDeque<Issued<C>>| {
            q.iter()
                .any(|p| (write || p.write) && p.span.0 < span.1 && span.0 < p.span.1)
        };
        while self.queue.len() >= self.depth || clashes(&self.queue) {
            let Some(oldest) = self.queue.pop_front() else {
                break;
            };
            retire(oldest)?;
        }
        Ok(())
    }

    pub(super) fn push(&mut self, issued: Issued<C>) {
        self.queue.push_back(issued);
    }

    /// Retires everything still in flight, oldest first.
    pub(super) fn drain(&mut self, mut retire: impl FnMut(Issued<C>) -> Result<()>) -> Result<()> {
        while let Some(oldest) = self.queue.pop_front() {
            retire(oldest)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issues (write, lo, hi) accesses through a window of `depth` and returns, for each, the
    /// accesses retired before it could go out.
    fn waits(depth: usize, accesses: &[(bool, u64, u64)]) -> Vec<Vec<usize>> {
        let mut flight = InFlight::new(depth);
        let mut out = Vec::new();
        for (index, &(write, lo, hi)) in accesses.iter().enumerate() {
            let mut retired = Vec::new();
            flight
                .make_room(write, (lo, hi), |p| {
                    retired.push(p.index);
                    Ok(())
                })
                .expect("no retire fails");
            out.push(retired);
            flight.push(Issued {
                txn: TxnId(index as u64),
                index,
                write,
                span: (lo, hi),
                check: (),
            });
        }
        out
    }

    #[test]
    fn an_access_waits_only_for_a_clash_or_for_room() {
        // Reads of the same bytes share the window; a write to them waits for both.
        assert_eq!(
            waits(4, &[(false, 0, 4), (false, 0, 4), (true, 2, 3)]),
            [vec![], vec![], vec![0, 1]]
        );
        // A read of bytes a write in flight touches waits for it; other bytes do not.
        assert_eq!(
            waits(4, &[(true, 8, 16), (false, 0, 8), (false, 15, 16)]),
            [vec![], vec![], vec![0]]
        );
        // Depth 2: the third access waits for the oldest however far apart they are.
        assert_eq!(
            waits(2, &[(true, 0, 4), (true, 64, 68), (false, 128, 132)]),
            [vec![], vec![], vec![0]]
        );
    }
}
