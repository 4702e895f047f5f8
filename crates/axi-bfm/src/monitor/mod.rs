//! Protocol monitors for AXI4, AXI4-Lite and AXI-Stream, and the violations they report.
//!
//! The rules themselves are listed in [`Rule`], one line each, and checked in [`rules`], one
//! function each; the monitors here read the
//! bus once per edge, keep the little state the rules need (outstanding requests per ID, beat
//! counts, the stalled payload) in fixed buffers, and call the rules.

mod axi;
mod axil;
mod axis;
mod cover;
pub mod rules;

use sim_runtime::{Model, Port};

pub use crate::protocol::{Channel, Rule, Violation};
pub use axi::{AxiMonitor, AxiMonitorConfig};
pub use axil::AxilMonitor;
pub use axis::{AxisMonitor, AxisMonitorConfig};
pub(crate) use cover::{handshakes, Events};
pub use cover::{Coverage, Event, Pace, Situation};

use crate::bind::Bind;
use crate::env::Cx;
use crate::error::{BfmError, Result};

/// Payload words a watched channel can hold: an R channel of a 1024-bit bus with its ID,
/// response and last, with room to spare.
const PAY_WORDS: usize = 48;

/// What a channel's check at one edge needs from its monitor: the bus name the violations
/// carry, the edge, whether the edge before was in reset, and the stall bound.
#[derive(Clone, Copy)]
pub(crate) struct Edge<'a> {
    pub bus: &'a str,
    pub cx: &'a Cx,
    pub was_in_reset: bool,
    pub stall_bound: u64,
}

/// The handshake rules common to every channel: reset, VALID held, payload stable, stall
/// bound. Payload words are read into fixed buffers; nothing here allocates per cycle.
pub(crate) struct Chan {
    channel: Channel,
    valid: Port,
    ready: Port,
    payload: Vec<(String, Port)>,
    /// Each payload port with the range of its words in [`Chan::cur`], worked out once: the
    /// payload is read at every edge of a stall.
    slots: Vec<(Port, usize, usize)>,
    cur: [u32; PAY_WORDS],
    prev: [u32; PAY_WORDS],
    nwords: usize,
    /// VALID sampled at this edge.
    pub v: bool,
    /// READY sampled at this edge.
    pub r: bool,
    /// Whether the payload was read at this edge.
    have_payload: bool,
    stalled_before: bool,
    stalled_for: u64,
    /// Handshakes so far, of every pace. Back-to-back ones, the common case of a busy
    /// channel, are not counted apart: they are what the other two paces leave of this.
    fires: u64,
    /// Handshakes after a stall ([`Pace::AfterStall`]), counted where the stall is
    /// checked, off the fast path.
    after_stall: u64,
    /// Handshakes after an edge without one ([`Pace::AfterIdle`]).
    after_idle: u64,
    /// The cycle of the last handshake (`u64::MAX` before the first).
    last_fire: u64,
}

impl Chan {
    /// Watches one channel of the bus `b`: its `valid` and `ready` signals, and as payload
    /// those of `sigs` the bus has. Every monitor binds its channels this way, so a channel
    /// too wide to watch is reported alike on every bus kind.
    pub(crate) fn bind(
        b: &Bind<'_>,
        channel: Channel,
        valid: &str,
        ready: &str,
        sigs: &[&str],
    ) -> Result<Chan> {
        let payload = sigs
            .iter()
            .filter_map(|s| b.opt_watch(s).map(|p| (format!("{}_{s}", b.prefix), p)))
            .collect();
        Chan::new(channel, b.watch(valid)?, b.watch(ready)?, payload).map_err(|problem| {
            BfmError::Bind {
                bus: b.prefix.to_string(),
                problem,
            }
        })
    }

    /// Watches one channel; `payload` names every signal that must hold still under a stall.
    pub(crate) fn new(
        channel: Channel,
        valid: Port,
        ready: Port,
        payload: Vec<(String, Port)>,
    ) -> std::result::Result<Chan, String> {
        let nwords: usize = payload.iter().map(|(_, p)| p.words()).sum();
        if nwords > PAY_WORDS {
            return Err(format!(
                "channel {channel} carries {} payload bits; monitors hold at most {}",
                nwords * 32,
                PAY_WORDS * 32
            ));
        }
        let mut off = 0;
        let slots = payload
            .iter()
            .map(|(_, p)| {
                let at = (*p, off, off + p.words());
                off += p.words();
                at
            })
            .collect();
        Ok(Chan {
            channel,
            valid,
            ready,
            payload,
            slots,
            cur: [0; PAY_WORDS],
            prev: [0; PAY_WORDS],
            nwords,
            v: false,
            r: false,
            have_payload: false,
            stalled_before: false,
            stalled_for: 0,
            fires: 0,
            after_stall: 0,
            after_idle: 0,
            last_fire: u64::MAX,
        })
    }

    /// Reads VALID, READY and, when VALID, the payload. Inlined into the monitors, which
    /// call it for every channel at every edge; the payload is read out of line.
    #[inline(always)]
    pub(crate) fn sample(&mut self, m: &Model) {
        self.v = m.get_bool(self.valid);
        // READY matters only with VALID up, or for the message of a VALID that dropped.
        self.r = (self.v || self.stalled_before) && m.get_bool(self.ready);
        // The payload matters only to compare it with a stalled one or to keep it for the
        // next edge's comparison; a beat that goes through at once is never read here.
        self.have_payload = self.v && (!self.r || self.stalled_before);
        if self.have_payload {
            self.read_payload(m);
        }
    }

    /// Reads the payload into [`Chan::cur`].
    #[inline(never)]
    fn read_payload(&mut self, m: &Model) {
        for &(p, from, to) in &self.slots {
            if to == from + 1 {
                // Most payload signals fit a word: read as one value, without the word loop.
                self.cur[from] = m.get(p) as u32;
            } else {
                m.get_words(p, &mut self.cur[from..to]);
            }
        }
    }

    /// True when the channel has no stall in progress and VALID was low at the last edge.
    #[inline]
    pub(crate) fn idle(&self) -> bool {
        !self.v && !self.stalled_before && self.stalled_for == 0
    }

    /// VALID as it is now, without sampling the channel.
    #[inline]
    pub(crate) fn valid_now(&self, m: &Model) -> bool {
        m.get_bool(self.valid)
    }

    /// The VALID port: what wakes an idle monitor.
    pub(crate) fn valid_port(&self) -> Port {
        self.valid
    }

    /// Forgets the stall history (a monitor switched back on).
    pub(crate) fn restart(&mut self) {
        self.stalled_before = false;
        self.stalled_for = 0;
    }

    /// The payload words as sampled, to mask bytes that do not count (AXI-Stream null bytes);
    /// `None` when this edge did not need the payload.
    pub(crate) fn payload_mut(&mut self) -> Option<&mut [u32]> {
        self.have_payload.then(|| &mut self.cur[..self.nwords])
    }

    /// Whether VALID waited for READY at the last edge: read before [`Chan::check`], it says
    /// whether a handshake at this edge comes after a stall.
    #[inline]
    pub(crate) fn stalled_before(&self) -> bool {
        self.stalled_before
    }

    /// Adds this channel's handshakes by pace to `cov`.
    pub(crate) fn add_paces(&self, cov: &mut Coverage) {
        let back_to_back = self.fires - self.after_stall - self.after_idle;
        for (p, n) in [
            (Pace::AfterStall, self.after_stall),
            (Pace::BackToBack, back_to_back),
            (Pace::AfterIdle, self.after_idle),
        ] {
            cov.add(Situation::Handshake(self.channel, p), n);
        }
    }

    /// Counts a handshake at this edge that did not follow a stall: after an idle edge
    /// unless the last handshake was at the edge before.
    #[inline]
    fn count_fire(&mut self, cycle: u64) {
        self.after_idle += u64::from(self.last_fire.wrapping_add(1) != cycle);
        self.fires += 1;
        self.last_fire = cycle;
    }

    /// The channel watched.
    pub(crate) fn channel(&self) -> Channel {
        self.channel
    }

    /// True when the handshake completes at this edge.
    #[inline]
    pub(crate) fn fire(&self) -> bool {
        self.v && self.r
    }

    /// Applies the common rules at edge `e` and moves the sample into history.
    #[inline(always)]
    pub(crate) fn check(&mut self, e: &Edge<'_>) -> Option<Violation> {
        if !self.stalled_before && !e.cx.in_reset && !e.was_in_reset && (!self.v || self.r) {
            // An idle channel, or a handshake at the first edge VALID is up: no rule can
            // break (VALID was not held for anything, no stalled payload to compare) and
            // there is no stall to remember. This is most edges of most channels, so it is
            // inlined into the monitors and the rest is not. READY is only read with VALID
            // up or a stall behind, so here it alone says that a handshake completes.
            if self.r {
                self.count_fire(e.cx.cycle);
            }
            self.stalled_for = 0;
            return None;
        }
        self.check_held(e)
    }

    /// [`Chan::sample`] and [`Chan::check`] at one edge, keeping the first violation in
    /// `found`. Inlined into the monitors, which call it for every channel at every edge.
    #[inline(always)]
    pub(crate) fn watch(&mut self, m: &Model, e: &Edge<'_>, found: &mut Option<Violation>) {
        self.sample(m);
        if let Some(v) = self.check(e) {
            found.get_or_insert(v);
        }
    }

    /// [`Chan::check`] at an edge in or just after reset, or with VALID held from before.
    #[inline(never)]
    fn check_held(&mut self, e: &Edge<'_>) -> Option<Violation> {
        let Edge {
            bus,
            cx,
            was_in_reset,
            stall_bound,
        } = *e;
        if self.v && self.r {
            // Counted before the stall history below moves on to this edge.
            if self.stalled_before {
                self.after_stall += 1;
                self.fires += 1;
                self.last_fire = cx.cycle;
            } else {
                self.count_fire(cx.cycle);
            }
        }
        let mut found = None;
        let chan = self.channel;
        let mk = |rule: Rule, note: String, values: Vec<(String, u64)>| {
            handshake_violation(rule, bus, chan, cx, note, values)
        };
        let vr = |v: bool, r: bool| {
            vec![
                ("valid".to_string(), u64::from(v)),
                ("ready".to_string(), u64::from(r)),
            ]
        };
        if let Some(n) = rules::valid_low_in_reset(cx.in_reset, self.v) {
            found = Some(mk(Rule::ValidLowInReset, n, vr(self.v, self.r)));
        } else if let Some(n) = rules::valid_low_after_reset(was_in_reset, cx.in_reset, self.v) {
            found = Some(mk(Rule::ValidLowAfterReset, n, vr(self.v, self.r)));
        } else if !cx.in_reset && !was_in_reset {
            if let Some(n) = rules::valid_held_until_handshake(self.stalled_before, self.v) {
                found = Some(mk(Rule::ValidHeldUntilHandshake, n, vr(self.v, self.r)));
            } else if let Some(n) = rules::payload_stable_while_stalled(
                self.stalled_before,
                self.v,
                &self.prev[..self.nwords],
                &self.cur[..self.nwords],
            ) {
                found = Some(mk(Rule::PayloadStableWhileStalled, n, self.changed()));
            }
        }
        if self.v && !self.r && !cx.in_reset {
            self.stalled_for += 1;
            if let Some(n) = rules::stall_bound(self.stalled_for, stall_bound) {
                found.get_or_insert_with(|| mk(Rule::StallBound, n, vr(self.v, self.r)));
                self.stalled_for = 0;
            }
        } else {
            self.stalled_for = 0;
        }
        self.stalled_before = self.v && !self.r && !cx.in_reset;
        if self.v && !self.r {
            // Kept for the next edge, which must show the same payload.
            self.prev[..self.nwords].copy_from_slice(&self.cur[..self.nwords]);
        }
        found
    }

    /// The payload signals that differ between the stalled sample and this one: name, old
    /// and new low 64 bits.
    fn changed(&self) -> Vec<(String, u64)> {
        let mut out = Vec::new();
        let mut off = 0;
        for (name, p) in &self.payload {
            let n = p.words();
            if self.prev[off..off + n] != self.cur[off..off + n] {
                let lo =
                    |w: &[u32]| u64::from(w[0]) | (w.get(1).map_or(0, |x| u64::from(*x)) << 32);
                out.push((format!("{name}@stall"), lo(&self.prev[off..off + n])));
                out.push((format!("{name}@now"), lo(&self.cur[off..off + n])));
            }
            off += n;
        }
        out
    }
}

/// Builds a violation with its values named by owned strings (the handshake rules name
/// them after the payload's signals). Cold and out of line like every violation's
/// constructor: it runs once per broken rule, and the per-edge checks stay short.
#[cold]
#[inline(never)]
fn handshake_violation(
    rule: Rule,
    bus: &str,
    channel: Channel,
    cx: &Cx,
    note: String,
    values: Vec<(String, u64)>,
) -> Violation {
    Violation {
        rule,
        bus: bus.to_string(),
        channel,
        time_ps: cx.time_ps,
        cycle: cx.cycle,
        values,
        note,
    }
}

/// The coverage of a monitor: the paces of its channels `chans` and the situations it
/// counted in `events`.
pub(crate) fn coverage<'a>(chans: impl IntoIterator<Item = &'a Chan>, events: &Events) -> Coverage {
    let mut cov = Coverage::default();
    for ch in chans {
        ch.add_paces(&mut cov);
    }
    cov.add_events(events);
    cov
}

/// Checks `response_latency_bound` for the oldest unanswered request of one direction,
/// accepted at `*start`, whose response comes on `channel`. A request found over the bound
/// restarts its wait at this cycle, so it is reported once per bound rather than at every
/// edge. `vals` names the request (its ID and address); the wait is added to them.
pub(crate) fn check_latency_of(
    bus: &str,
    channel: Channel,
    cx: &Cx,
    bound: u64,
    start: &mut u64,
    vals: &[(&str, u64)],
) -> Option<Violation> {
    let waited = cx.cycle.saturating_sub(*start);
    let note = rules::response_latency_bound(waited, bound)?;
    *start = cx.cycle;
    let mut values = vals.to_vec();
    values.push(("waited", waited));
    Some(violation(
        Rule::ResponseLatencyBound,
        bus,
        channel,
        cx,
        note,
        &values,
    ))
}

/// The violation of `every_request_answered` at the end of a run. `left` lists the requests
/// accepted but never answered, oldest first, each as its address channel (AW or AR) and a
/// description; `vals` names the oldest, whose response channel the violation is on.
pub(crate) fn unanswered_violation(
    bus: &str,
    cx: &Cx,
    left: &[(Channel, String)],
    vals: &[(&str, u64)],
) -> Option<Violation> {
    let (first, _) = left.first()?;
    let list: Vec<String> = left
        .iter()
        .map(|(ch, what)| {
            let dir = if *ch == Channel::Aw { "write" } else { "read" };
            format!("{dir} {what}")
        })
        .collect();
    let response = if *first == Channel::Aw {
        Channel::B
    } else {
        Channel::R
    };
    Some(violation(
        Rule::EveryRequestAnswered,
        bus,
        response,
        cx,
        rules::every_request_answered(&list),
        vals,
    ))
}

/// Builds a violation of a protocol-level rule (not a handshake rule).
#[cold]
#[inline(never)]
pub(crate) fn violation(
    rule: Rule,
    bus: &str,
    channel: Channel,
    cx: &Cx,
    note: String,
    values: &[(&str, u64)],
) -> Violation {
    let values = values.iter().map(|(n, v)| ((*n).to_string(), *v)).collect();
    handshake_violation(rule, bus, channel, cx, note, values)
}
