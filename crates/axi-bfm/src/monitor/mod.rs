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

use crate::env::Cx;

/// Payload words a watched channel can hold: an R channel of a 1024-bit bus with its ID,
/// response and last, with room to spare.
const PAY_WORDS: usize = 48;

/// The handshake rules common to every channel: reset, VALID held, payload stable, stall
/// bound. Payload words are read into fixed buffers; nothing here allocates per cycle.
pub(crate) struct Chan {
    channel: Channel,
    valid: Port,
    ready: Port,
    payload: Vec<(String, Port)>,
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
    /// Handshakes by [`Pace`], in the order of [`Pace::ALL`].
    paces: [u64; 3],
    /// The cycle of the last handshake (`u64::MAX` before the first).
    last_fire: u64,
    /// How the last handshake came about.
    last_pace: Pace,
}

impl Chan {
    /// Watches one channel; `payload` names every signal that must hold still under a stall.
    pub(crate) fn new(
        channel: Channel,
        valid: Port,
        ready: Port,
        payload: Vec<(String, Port)>,
    ) -> Result<Chan, String> {
        let nwords: usize = payload.iter().map(|(_, p)| p.words()).sum();
        if nwords > PAY_WORDS {
            return Err(format!(
                "channel {channel} carries {} payload bits; monitors hold at most {}",
                nwords * 32,
                PAY_WORDS * 32
            ));
        }
        Ok(Chan {
            channel,
            valid,
            ready,
            payload,
            cur: [0; PAY_WORDS],
            prev: [0; PAY_WORDS],
            nwords,
            v: false,
            r: false,
            have_payload: false,
            stalled_before: false,
            stalled_for: 0,
            paces: [0; 3],
            last_fire: u64::MAX,
            last_pace: Pace::AfterIdle,
        })
    }

    /// Reads VALID, READY and, when VALID, the payload.
    #[inline]
    pub(crate) fn sample(&mut self, m: &Model) {
        self.v = m.get_bool(self.valid);
        // READY matters only with VALID up, or for the message of a VALID that dropped.
        self.r = (self.v || self.stalled_before) && m.get_bool(self.ready);
        // The payload matters only to compare it with a stalled one or to keep it for the
        // next edge's comparison; a beat that goes through at once is never read here.
        self.have_payload = self.v && (!self.r || self.stalled_before);
        if self.have_payload {
            let mut off = 0;
            for (_, p) in &self.payload {
                let n = p.words();
                m.get_words(*p, &mut self.cur[off..off + n]);
                off += n;
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

    /// How this channel's last handshake came about (at its edge, after [`Chan::check`]).
    pub(crate) fn last_pace(&self) -> Pace {
        self.last_pace
    }

    /// Adds this channel's handshakes by pace to `cov`.
    pub(crate) fn add_paces(&self, cov: &mut Coverage) {
        for (p, n) in Pace::ALL.iter().zip(self.paces) {
            cov.add(Situation::Handshake(self.channel, *p), n);
        }
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

    /// Applies the common rules at this edge and moves the sample into history.
    #[inline]
    pub(crate) fn check(
        &mut self,
        bus: &str,
        cx: &Cx,
        was_in_reset: bool,
        stall_bound: u64,
    ) -> Option<Violation> {
        if self.v && self.r {
            // Counted before the stall history below moves on to this edge.
            self.last_pace = if self.stalled_before {
                Pace::AfterStall
            } else if self.last_fire.wrapping_add(1) == cx.cycle {
                Pace::BackToBack
            } else {
                Pace::AfterIdle
            };
            self.paces[self.last_pace as usize] += 1;
            self.last_fire = cx.cycle;
        }
        if !self.stalled_before && !cx.in_reset && !was_in_reset && (!self.v || self.r) {
            // An idle channel, or a handshake at the first edge VALID is up: no rule can
            // break (VALID was not held for anything, no stalled payload to compare) and
            // there is no stall to remember. This is most edges of most channels, so it is
            // inlined into the monitors and the rest is not.
            self.stalled_for = 0;
            return None;
        }
        self.check_held(bus, cx, was_in_reset, stall_bound)
    }

    /// [`Chan::check`] at an edge in or just after reset, or with VALID held from before.
    #[inline(never)]
    fn check_held(
        &mut self,
        bus: &str,
        cx: &Cx,
        was_in_reset: bool,
        stall_bound: u64,
    ) -> Option<Violation> {
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
