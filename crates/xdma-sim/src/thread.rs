//! The simulation thread: the card harness and the simulated IP, serving the calls of every
//! handle in simulated time.
//!
//! Simulated time is deterministic because the card's clock advances only through the model,
//! never through the host's scheduling. Each handle of the card is one host thread of the
//! model with a clock of its own: a call starts at the handle's clock, which is the end of its
//! previous call plus the modelled turnaround (`host.turnaround_ns`). The simulation steps the
//! RTL past a time only once no handle can still make a call that starts before it: a handle
//! holds the simulation at its clock from its last answer until it calls again (or, for async
//! calls, until it waits on one), is dropped, or has not called for `host_grace_ms` of wall
//! time (a thread that waits on something else, such as joining other threads, is then no
//! longer waited for; its next call starts at the card's time when it arrives).

use std::collections::{BTreeMap, HashMap};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TryRecvError};
use std::time::{Duration, Instant};

use card_harness::{CardBus, CardBuses};
use xdma_core::{CardAddr, Error, ProgressReport, ProgressTracker, Result};
use xdma_driver::{Driver, DriverError};
use xdma_ip::IpError;

use crate::config::timing::Ps;
use crate::error::bfm;
use crate::job::{Answer, Host, Job, Kind, Op, Poll, Ports};
use xdma_ip::LatencyStats;

/// A handle of the card: one host thread of the model.
pub(crate) type ClientId = u64;
/// One call.
pub(crate) type JobId = u64;

/// Where an answer goes.
#[derive(Debug)]
pub(crate) enum Reply {
    Blocking(SyncSender<Result<Answer>>),
    Async(tokio::sync::oneshot::Sender<Result<Answer>>),
}

impl Reply {
    fn send(self, a: Result<Answer>) {
        // A caller that gave up no longer listens; nothing to do then.
        match self {
            Reply::Blocking(s) => {
                let _ = s.send(a);
            }
            Reply::Async(s) => {
                let _ = s.send(a);
            }
        }
    }
}

/// The queues calls wait in: the register path, each interrupt line, each channel. Calls on
/// one lane start in the order of their start times; on the register path and an interrupt
/// line one at a time, on a channel as they come (the driver queues them for its engine).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Lane {
    Reg,
    Event(usize),
    H2c(usize),
    C2h(usize),
}

/// What a handle sends the thread.
#[derive(Debug)]
pub(crate) enum Msg {
    /// A new handle, a clone of `parent`: its clock starts at the parent's.
    Register { client: ClientId, parent: ClientId },
    /// A handle dropped.
    Unregister { client: ClientId },
    /// A call. `waits` says the caller blocks on it at once (a blocking call).
    Submit {
        client: ClientId,
        job: JobId,
        lane: Lane,
        op: Op,
        reply: Reply,
        waits: bool,
    },
    /// An async caller waits on its calls (a poll returned Pending).
    Release { client: ClientId },
    /// A call whose caller gave up.
    Cancel { client: ClientId, job: JobId },
    /// The handle's clock.
    Now {
        client: ClientId,
        reply: SyncSender<Ps>,
    },
    /// The card-side latencies measured so far.
    Latency { reply: SyncSender<LatencyStats> },
    /// Where the progress of memory-mapped transfers started from now on goes.
    Progress(ProgressReport),
}

#[derive(Debug)]
struct Client {
    clock: Ps,
    outstanding: usize,
    /// The thread waits for this handle before passing its clock.
    bounded: bool,
    /// Not heard from for longer than the grace: no longer waited for.
    stale: bool,
    since: Instant,
    seq: u64,
}

type Key = (Ps, ClientId, u64);

#[derive(Debug)]
struct Queued {
    job: JobId,
    client: ClientId,
    op: Op,
    reply: Reply,
    wall: Instant,
}

#[derive(Debug, Default)]
struct LaneState {
    queue: BTreeMap<Key, Queued>,
    busy: bool,
    free_at: Ps,
}

#[derive(Debug)]
struct Running {
    id: JobId,
    client: ClientId,
    lane: Lane,
    job: Job,
    /// `None` once the caller no longer waits (cancelled or timed out).
    reply: Option<Reply>,
    wall: Instant,
    /// The progress reports of a memory-mapped transfer.
    tracker: Option<ProgressTracker>,
}

/// The state the simulation thread owns.
pub(crate) struct SimThread {
    /// The driver model with the IP and the card behind it.
    pub(crate) driver: Driver,
    host: Host,
    turnaround: Ps,
    ports: Ports,
    /// The card's buses, to tell which one a protocol violation is on.
    buses: CardBuses,
    clients: BTreeMap<ClientId, Client>,
    lanes: BTreeMap<Lane, LaneState>,
    where_queued: HashMap<JobId, (Lane, Key)>,
    running: Vec<Running>,
    grace: Duration,
    reply_timeout: Duration,
    /// Set once the model has failed for good: every call after fails with this.
    poisoned: Option<String>,
    /// Where the progress of memory-mapped transfers goes.
    progress: ProgressReport,
}

impl std::fmt::Debug for SimThread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimThread")
            .field("clients", &self.clients.len())
            .field("running", &self.running.len())
            .finish_non_exhaustive()
    }
}

/// How long shutdown may simulate to let aborted transfers drain, in simulated time.
const DRAIN_PS: Ps = 1_000_000_000; // 1 ms

/// Whether a protocol violation on the card's bus `violation` fails a call that drives `call`:
/// only a call on that same bus. A violation on a bus that is none of the card's, or a call
/// that drives no bus, fails no call by this rule.
fn fails_with(call: Option<CardBus>, violation: Option<CardBus>) -> bool {
    violation.is_some() && call == violation
}

impl SimThread {
    pub(crate) fn new(
        mut driver: Driver,
        host: Host,
        turnaround: Ps,
        ports: Ports,
        grace: Duration,
        reply_timeout: Duration,
    ) -> SimThread {
        let now = driver.now();
        let buses = driver.ip().card_setup().buses();
        let mut clients = BTreeMap::new();
        clients.insert(
            0,
            Client {
                clock: now,
                outstanding: 0,
                bounded: true,
                stale: false,
                since: Instant::now(),
                seq: 0,
            },
        );
        SimThread {
            driver,
            host,
            turnaround,
            ports,
            buses,
            clients,
            lanes: BTreeMap::new(),
            where_queued: HashMap::new(),
            running: Vec::new(),
            grace,
            reply_timeout,
            poisoned: None,
            progress: ProgressReport::default(),
        }
    }

    fn now(&self) -> Ps {
        self.driver.now()
    }

    /// Serves messages until every handle is gone, then drains what is in flight.
    pub(crate) fn run(mut self, rx: Receiver<Msg>) {
        let mut edges: u64 = 0;
        loop {
            loop {
                match rx.try_recv() {
                    Ok(m) => self.handle(m),
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => return self.shutdown(),
                }
            }
            edges += 1;
            if edges.is_multiple_of(1024) {
                self.wall_deadlines();
                self.report_progress();
            }
            self.settle();
            let work = !self.running.is_empty() || self.lanes.values().any(|l| !l.queue.is_empty());
            if !work {
                match rx.recv() {
                    Ok(m) => self.handle(m),
                    Err(_) => return self.shutdown(),
                }
                continue;
            }
            // The model runs a whole cycle of axi_aclk at a time: it may run one only when no
            // handle can still make a call that starts before the cycle ends.
            let next = self.driver.ip().next_cycle_ps();
            if next < self.horizon() {
                self.step();
                continue;
            }
            // A handle may still call before the next edge: wait for it, as long as the grace.
            let wait = self.grace_left();
            match rx.recv_timeout(wait) {
                Ok(m) => self.handle(m),
                Err(RecvTimeoutError::Timeout) => self.expire(),
                Err(RecvTimeoutError::Disconnected) => return self.shutdown(),
            }
            self.wall_deadlines();
        }
    }

    /// The earliest time a handle could still start a call at.
    fn horizon(&self) -> Ps {
        self.clients
            .values()
            .filter(|c| c.bounded && !c.stale)
            .map(|c| c.clock)
            .min()
            .unwrap_or(Ps::MAX)
    }

    fn grace_left(&self) -> Duration {
        let h = self.horizon();
        self.clients
            .values()
            .filter(|c| c.bounded && !c.stale && c.clock == h)
            .map(|c| self.grace.saturating_sub(c.since.elapsed()))
            .min()
            .unwrap_or(Duration::ZERO)
            .max(Duration::from_micros(100))
    }

    /// Handles that held the simulation longer than the grace are no longer waited for.
    fn expire(&mut self) {
        let grace = self.grace;
        for c in self.clients.values_mut() {
            if c.bounded && !c.stale && c.since.elapsed() >= grace {
                c.stale = true;
            }
        }
    }

    fn handle(&mut self, m: Msg) {
        let now = self.now();
        match m {
            Msg::Register { client, parent } => {
                let clock = self.clients.get(&parent).map_or(now, |p| p.clock);
                self.clients.insert(
                    client,
                    Client {
                        clock,
                        outstanding: 0,
                        bounded: true,
                        stale: false,
                        since: Instant::now(),
                        seq: 0,
                    },
                );
            }
            Msg::Unregister { client } => {
                self.clients.remove(&client);
            }
            Msg::Submit {
                client,
                job,
                lane,
                op,
                reply,
                waits,
            } => {
                if let Some(p) = &self.poisoned {
                    reply.send(Err(Error::Backend(p.clone())));
                    return;
                }
                let c = self.clients.entry(client).or_insert(Client {
                    clock: now,
                    outstanding: 0,
                    bounded: false,
                    stale: true,
                    since: Instant::now(),
                    seq: 0,
                });
                let stamp = if c.stale { c.clock.max(now) } else { c.clock };
                c.clock = stamp;
                c.outstanding += 1;
                c.seq += 1;
                c.bounded = !waits;
                c.stale = false;
                c.since = Instant::now();
                let key = (stamp, client, c.seq);
                self.where_queued.insert(job, (lane, key));
                self.lanes.entry(lane).or_default().queue.insert(
                    key,
                    Queued {
                        job,
                        client,
                        op,
                        reply,
                        wall: Instant::now(),
                    },
                );
            }
            Msg::Release { client } => {
                if let Some(c) = self.clients.get_mut(&client) {
                    if c.outstanding > 0 {
                        c.bounded = false;
                    }
                }
            }
            Msg::Cancel { client, job } => self.cancel(client, job),
            Msg::Now { client, reply } => {
                let t = self.clients.get(&client).map_or(now, |c| c.clock);
                let _ = reply.send(t);
            }
            Msg::Latency { reply } => {
                let _ = reply.send(self.driver.ip().latency());
            }
            Msg::Progress(report) => self.progress = report,
        }
    }

    /// A call whose caller gave up: a queued one is dropped, a running one is aborted at the
    /// caller's time (its own clock while the thread still waits for it, so that the abort
    /// lands at the same simulated time in every run), and the caller may call again.
    fn cancel(&mut self, client: ClientId, job: JobId) {
        let now = self.now();
        let at = match self.clients.get_mut(&client) {
            Some(c) => {
                c.outstanding = c.outstanding.saturating_sub(1);
                let at = if c.stale { now.max(c.clock) } else { c.clock };
                c.bounded = true;
                c.since = Instant::now();
                at
            }
            None => now,
        };
        if let Some((lane, key)) = self.where_queued.remove(&job) {
            if let Some(l) = self.lanes.get_mut(&lane) {
                l.queue.remove(&key);
            }
            return;
        }
        if let Some(r) = self.running.iter_mut().find(|r| r.id == job) {
            r.reply = None;
            r.job.abort(at);
        }
    }

    /// Tells the progress of every memory-mapped transfer that runs (each report decides
    /// whether it is due).
    fn report_progress(&mut self) {
        for r in &mut self.running {
            let Some(t) = r.tracker.as_mut() else {
                continue;
            };
            if let Some(done) = r.job.progress(&self.driver) {
                t.update(done as u64, r.wall.elapsed());
            }
        }
    }

    /// Calls that have run longer than the wall-clock bound fail with a timeout that says so,
    /// and their transfers are aborted on the card.
    fn wall_deadlines(&mut self) {
        let now = self.now();
        let limit = self.reply_timeout;
        for r in &mut self.running {
            if r.reply.is_some() && r.wall.elapsed() > limit {
                if let Some(reply) = r.reply.take() {
                    reply.send(Err(Error::Timeout {
                        what: format!(
                            "the simulated card to finish this call in wall-clock time (sim.reply_timeout_s; the card had simulated up to {:.3} ms of its time); the call was cancelled and its transfer aborted on the card, so the next call finds the buses idle; raise sim.reply_timeout_s for calls that need longer",
                            now as f64 / 1e9
                        ),
                        after: limit,
                    }));
                }
                r.job.abort(now);
            }
        }
        for l in self.lanes.values_mut() {
            let late: Vec<Key> = l
                .queue
                .iter()
                .filter(|(_, q)| q.wall.elapsed() > limit)
                .map(|(k, _)| *k)
                .collect();
            for k in late {
                if let Some(q) = l.queue.remove(&k) {
                    self.where_queued.remove(&q.job);
                    q.reply.send(Err(Error::Timeout {
                        what: "the simulated card to start this call in wall-clock time (sim.reply_timeout_s): the calls ahead of it on its channel did not finish; it was dropped before it started".into(),
                        after: limit,
                    }));
                }
            }
        }
    }

    /// Starts what may start and polls what runs at the present instant, until nothing more
    /// changes.
    fn settle(&mut self) {
        let now = self.now();
        loop {
            let mut changed = self.start_jobs(now);
            let mut i = 0;
            while i < self.running.len() {
                let p = self.running[i].job.poll(&mut self.driver, now, self.host);
                match p {
                    Poll::Pending => i += 1,
                    Poll::Done {
                        end,
                        free_at,
                        answer,
                    } => {
                        let r = self.running.remove(i);
                        self.finish(r, end, free_at, answer);
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// Starts the head of every lane whose engine is free, once its start time has come.
    fn start_jobs(&mut self, now: Ps) -> bool {
        let mut started = false;
        let mut refused = Vec::new();
        for (&lane, l) in self.lanes.iter_mut() {
            // A channel's calls go to the driver as they come, which queues them for its
            // engine; a register access or an event read waits for the one before it.
            let exclusive = matches!(lane, Lane::Reg | Lane::Event(_));
            loop {
                if exclusive && l.busy {
                    break;
                }
                let Some((&key, _)) = l.queue.first_key_value() else {
                    break;
                };
                if key.0 > now {
                    break;
                }
                let Some((_, q)) = l.queue.pop_first() else {
                    break;
                };
                self.where_queued.remove(&q.job);
                let tracker = match &q.op {
                    Op::Transfer {
                        kind: kind @ (Kind::WriteMm | Kind::ReadMm),
                        channel,
                        addr,
                        len,
                        ..
                    } => Some(ProgressTracker::new(
                        &self.progress,
                        kind.op(),
                        *channel,
                        CardAddr(*addr),
                        *len as u64,
                    )),
                    _ => None,
                };
                let stamp = if exclusive {
                    key.0.max(l.free_at)
                } else {
                    key.0
                };
                match Job::new(&mut self.driver, self.host, q.op, stamp) {
                    Ok(job) => {
                        l.busy = true;
                        self.running.push(Running {
                            id: q.job,
                            client: q.client,
                            lane,
                            job,
                            reply: Some(q.reply),
                            wall: q.wall,
                            tracker,
                        });
                    }
                    Err(e) => refused.push((q.client, q.reply, e)),
                }
                started = true;
            }
        }
        for (client, reply, e) in refused {
            self.answer(client, now, reply, Err(e));
        }
        started
    }

    /// Sends a call's answer, which reaches its caller at `end`.
    fn answer(&mut self, client: ClientId, end: Ps, reply: Reply, answer: Result<Answer>) {
        let turnaround = self.turnaround;
        if let Some(c) = self.clients.get_mut(&client) {
            c.outstanding = c.outstanding.saturating_sub(1);
            c.clock = c.clock.max(end.saturating_add(turnaround));
            c.bounded = true;
            c.stale = false;
            c.since = Instant::now();
        }
        reply.send(answer);
    }

    fn finish(&mut self, mut r: Running, end: Ps, free_at: Ps, answer: Result<Answer>) {
        if let Some(t) = r.tracker.as_mut() {
            let done = match &answer {
                Ok(Answer::Moved(moved, _)) => moved.bytes as u64,
                _ => t.done(),
            };
            t.finish(done, r.wall.elapsed());
        }
        let lane = r.lane;
        let still = self.running.iter().any(|o| o.lane == lane);
        if let Some(l) = self.lanes.get_mut(&lane) {
            l.busy = still;
            l.free_at = l.free_at.max(free_at);
        }
        let Some(reply) = r.reply else {
            return;
        };
        self.answer(r.client, end, reply, answer);
    }

    /// Advances the model one edge instant. A protocol violation fails the calls on that
    /// bus; the environment finished the instant, so the others go on. Any other error (the
    /// RTL stopped) fails every call, now and later.
    fn step(&mut self) {
        let e = match self.driver.run(1) {
            Ok(()) => return,
            Err(DriverError::Ip(IpError::Card(e))) => e,
            Err(other) => {
                return self.poison(Error::Backend(format!(
                    "simulated card: the driver model failed: {other}"
                )))
            }
        };
        let now = self.now();
        if let Some(v) = e.violation() {
            let bus = v.bus.clone();
            let on_bus = self.buses.of(v);
            let mut first = Some(bfm(e));
            let mut i = 0;
            while i < self.running.len() {
                let on = fails_with(self.running[i].job.bus(&self.ports), on_bus);
                if on {
                    let mut r = self.running.remove(i);
                    r.job.quiet(&mut self.driver);
                    let err = first.take().unwrap_or_else(|| {
                        Error::Backend(format!(
                            "simulated card: an earlier protocol violation on `{bus}` failed this transfer too"
                        ))
                    });
                    self.finish(r, now, now, Err(err));
                } else {
                    i += 1;
                }
            }
            return;
        }
        self.poison(bfm(e));
    }

    /// The model failed for good: every call fails, now and later.
    fn poison(&mut self, e: Error) {
        let now = self.now();
        let text = format!("the simulated card stopped: {e}; open a new card");
        self.poisoned = Some(text.clone());
        let mut first = Some(e);
        for mut r in std::mem::take(&mut self.running) {
            r.job.quiet(&mut self.driver);
            let err = first.take().unwrap_or_else(|| Error::Backend(text.clone()));
            self.finish(r, now, now, Err(err));
        }
        for l in self.lanes.values_mut() {
            for (_, q) in std::mem::take(&mut l.queue) {
                q.reply.send(Err(Error::Backend(text.clone())));
            }
        }
        self.where_queued.clear();
    }

    /// Every handle is gone: queued calls are dropped, running ones aborted and given a
    /// bounded stretch of simulated time to leave the buses idle.
    fn shutdown(mut self) {
        for l in self.lanes.values_mut() {
            for (_, q) in std::mem::take(&mut l.queue) {
                q.reply
                    .send(Err(Error::Backend("the simulated card was closed".into())));
            }
        }
        let now = self.now();
        for r in &mut self.running {
            if let Some(reply) = r.reply.take() {
                reply.send(Err(Error::Backend(
                    "the simulated card was closed while this call ran".into(),
                )));
            }
            r.job.abort(now);
        }
        // Nobody calls any more: nothing holds the simulation back.
        self.clients.clear();
        let until = now.saturating_add(DRAIN_PS);
        let started = Instant::now();
        while !self.running.is_empty()
            && self.poisoned.is_none()
            && self.now() < until
            && started.elapsed() < Duration::from_secs(5)
        {
            self.settle();
            if self.running.is_empty() {
                break;
            }
            self.step();
        }
        for mut r in std::mem::take(&mut self.running) {
            r.job.quiet(&mut self.driver);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_violation_fails_only_the_calls_on_its_bus() {
        assert!(fails_with(Some(CardBus::Dma), Some(CardBus::Dma)));
        assert!(fails_with(Some(CardBus::C2h(1)), Some(CardBus::C2h(1))));
        assert!(!fails_with(Some(CardBus::C2h(0)), Some(CardBus::C2h(1))));
        assert!(!fails_with(Some(CardBus::Registers), Some(CardBus::Dma)));
        // Neither a call on no bus nor a violation on a bus the card lacks matches anything.
        assert!(!fails_with(None, None));
        assert!(!fails_with(Some(CardBus::UserIrq), None));
        assert!(!fails_with(None, Some(CardBus::Dma)));
    }
}
