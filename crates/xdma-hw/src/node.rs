//! One device node: opened on first use and kept open, one call at a time, and what a call
//! waited behind; with the flag by which an async caller gives a call up ([`Abandon`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::sys::{os_error, Io, Opener};
use xdma_core::{Error, Result};

/// Whether the caller of a call still waits for it: an async call's future sets it when it is
/// dropped before its answer (a task aborted, a runtime dropped), so that the call, which runs
/// on a thread of its own, stops at its next chance instead of holding its node for the rest
/// of its timeout. A blocking call's is never set.
#[derive(Debug, Clone, Default)]
pub(crate) struct Abandon(pub(crate) Option<Arc<AtomicBool>>);

impl Abandon {
    pub(crate) fn given_up(&self) -> bool {
        self.0.as_ref().is_some_and(|f| f.load(Ordering::Acquire))
    }

    /// Whether the flag can ever be set: only then is a long wait cut into short ones.
    pub(crate) fn can_give_up(&self) -> bool {
        self.0.is_some()
    }

    /// The error a call given up ends with; nobody receives it.
    pub(crate) fn error(&self, op: &str, node: &Path) -> Error {
        Error::Backend(format!(
            "{op} on {}: its caller gave it up (its future was dropped), so it stopped at its next chance",
            node.display()
        ))
    }
}

/// The call that holds a node, for a call that waits behind it to say what it waited for.
#[derive(Debug, Clone)]
pub(crate) struct Holder {
    what: &'static str,
    since: Instant,
    abandon: Abandon,
}

/// The longest single poll of an event wait whose caller may give it up, in milliseconds.
pub(crate) const ABANDON_POLL_MS: libc::c_int = 50;

/// How long a call may wait for its node before its messages say what it waited behind.
pub(crate) const WAIT_WORTH_SAYING: Duration = Duration::from_millis(100);

/// One device node, opened on first use and kept open; its mutex also serialises the calls on
/// its channel.
#[derive(Debug)]
pub(crate) struct Node {
    pub(crate) path: PathBuf,
    pub(crate) flags: libc::c_int,
    pub(crate) opener: Arc<dyn Opener>,
    pub(crate) io: Mutex<Option<Box<dyn Io>>>,
    /// The call that holds `io`, if any.
    pub(crate) holder: Mutex<Option<Holder>>,
}

impl Node {
    pub(crate) fn new(opener: &Arc<dyn Opener>, path: PathBuf, flags: libc::c_int) -> Node {
        Node {
            path,
            flags,
            opener: opener.clone(),
            io: Mutex::new(None),
            holder: Mutex::new(None),
        }
    }

    /// Locks the node for a call of the backend's own (open, registers).
    pub(crate) fn lock(&self) -> Result<NodeGuard<'_>> {
        self.lock_for("call", &Abandon::default())
    }

    /// Locks the node for the call `what` and opens it if it is not open yet; the guard
    /// remembers how long the call waited and for which call before it. A thread that panicked
    /// while holding the lock leaves nothing half-done (the state is only the open file), so
    /// the lock is taken back rather than poisoned for good.
    pub(crate) fn lock_for(&self, what: &'static str, abandon: &Abandon) -> Result<NodeGuard<'_>> {
        let before = self
            .holder
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let asked = Instant::now();
        let mut g = self.io.lock().unwrap_or_else(|p| p.into_inner());
        let waited = asked.elapsed();
        *self.holder.lock().unwrap_or_else(|p| p.into_inner()) = Some(Holder {
            what,
            since: Instant::now(),
            abandon: abandon.clone(),
        });
        let behind = before.map(|h| (h, asked));
        if g.is_none() {
            match self.opener.open(&self.path, self.flags) {
                Ok(io) => *g = Some(io),
                Err(e) => {
                    *self.holder.lock().unwrap_or_else(|p| p.into_inner()) = None;
                    return Err(os_error("open", &self.path, e));
                }
            }
        }
        Ok(NodeGuard {
            guard: g,
            node: self,
            waited,
            behind,
        })
    }
}

pub(crate) struct NodeGuard<'a> {
    guard: MutexGuard<'a, Option<Box<dyn Io>>>,
    node: &'a Node,
    /// How long the call waited for the node.
    waited: Duration,
    /// The call that held the node when this one asked for it, and when it asked.
    behind: Option<(Holder, Instant)>,
}

impl NodeGuard<'_> {
    pub(crate) fn io(&self) -> Result<&dyn Io> {
        self.guard
            .as_deref()
            .ok_or_else(|| Error::Backend(format!("{} is not open", self.node.path.display())))
    }

    /// What the call waited behind before it reached the driver, when the wait was long
    /// enough to matter, for its timeout's message.
    pub(crate) fn waited_behind(&self) -> Option<String> {
        if self.waited < WAIT_WORTH_SAYING {
            return None;
        }
        let (what, running) = match &self.behind {
            Some((h, asked)) => {
                let running = asked.saturating_duration_since(h.since);
                let given_up = if h.abandon.given_up() {
                    ", whose caller gave it up: it stopped once the driver's call it was in returned"
                } else {
                    ""
                };
                (
                    format!("the {} before it on this node{given_up}", h.what),
                    running,
                )
            }
            None => ("an earlier call on this node".to_string(), Duration::ZERO),
        };
        Some(format!(
            "it first waited {:.1?} for {what} (running for {:.1?} when this call came): calls on one node run one at a time",
            self.waited, running
        ))
    }
}

impl Drop for NodeGuard<'_> {
    fn drop(&mut self) {
        *self.node.holder.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

/// The path of node `<prefix><suffix>`.
pub(crate) fn node_path(prefix: &Path, suffix: &str) -> PathBuf {
    let mut s = prefix.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}
