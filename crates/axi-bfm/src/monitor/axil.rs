//! The AXI4-Lite protocol monitor.

use std::collections::VecDeque;

use sim_runtime::{ClockId, Model, Port};

use super::rules::{self, Rule};
use super::{
    check_latency_of, coverage, handshakes, unanswered_violation, violation, AxiMonitorConfig,
    Chan, Channel, Coverage, Edge, Event, Events, Situation, Violation,
};
use crate::bind::Bind;
use crate::env::{Agent, Cx, Env, Idle};
use crate::error::Result;
use crate::handle::Bare;

pub(crate) struct AxilCheck {
    bus: String,
    cfg: AxiMonitorConfig,
    aw: Chan,
    w: Chan,
    b: Chan,
    ar: Chan,
    r: Chan,
    bresp: Port,
    rresp: Port,
    awaddr: Port,
    araddr: Port,
    was_in_reset: bool,
    /// Start cycles and addresses of accepted writes not yet answered, in order.
    aw_pending: VecDeque<(u64, u64)>,
    /// Accepted write data beats not yet answered.
    w_pending: usize,
    /// Start cycles and addresses of accepted reads not yet answered.
    ar_pending: VecDeque<(u64, u64)>,
    /// The situations counted (functional coverage).
    events: Events,
    /// Raised while [`AxilCheck::quiet`]: only a VALID going up gives the monitor work
    /// (see [`Agent::idle`]).
    idle: Idle,
}

/// A handle on an AXI4-Lite monitor attached to an environment.
#[derive(Clone)]
pub struct AxilMonitor {
    /// The bus models' one handle shape, on the monitor's checks.
    handle: Bare<AxilCheck>,
}

impl std::fmt::Debug for AxilMonitor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = self.handle.core();
        f.debug_struct("AxilMonitor")
            .field("bus", &c.bus)
            .field("cfg", &c.cfg)
            .finish()
    }
}

impl AxilMonitor {
    /// Watches the AXI4-Lite bus `<prefix>_*` on `clock` with the default bounds.
    pub fn attach(env: &mut Env, prefix: &str, clock: ClockId) -> Result<AxilMonitor> {
        Self::attach_with(env, prefix, clock, AxiMonitorConfig::default())
    }

    /// Watches the AXI4-Lite bus `<prefix>_*` on `clock`.
    pub fn attach_with(
        env: &mut Env,
        prefix: &str,
        clock: ClockId,
        cfg: AxiMonitorConfig,
    ) -> Result<AxilMonitor> {
        let b = Bind::new(env, prefix);
        let chan = |c, v, r, sigs: &[&str]| Chan::bind(&b, c, v, r, sigs);
        let check = AxilCheck {
            bus: prefix.to_string(),
            cfg,
            aw: chan(Channel::Aw, "awvalid", "awready", &["awaddr", "awprot"])?,
            w: chan(Channel::W, "wvalid", "wready", &["wdata", "wstrb"])?,
            b: chan(Channel::B, "bvalid", "bready", &["bresp"])?,
            ar: chan(Channel::Ar, "arvalid", "arready", &["araddr", "arprot"])?,
            r: chan(Channel::R, "rvalid", "rready", &["rdata", "rresp"])?,
            bresp: b.watch("bresp")?,
            rresp: b.watch("rresp")?,
            awaddr: b.watch("awaddr")?,
            araddr: b.watch("araddr")?,
            was_in_reset: false,
            aw_pending: VecDeque::new(),
            w_pending: 0,
            ar_pending: VecDeque::new(),
            events: Events::default(),
            idle: Idle::new(),
        };
        Ok(AxilMonitor {
            handle: Bare::attach_bare(env, prefix, clock, check),
        })
    }

    /// The bounds in force.
    pub fn config(&self) -> AxiMonitorConfig {
        self.handle.core().cfg
    }

    /// Changes the bounds.
    pub fn set_config(&self, cfg: AxiMonitorConfig) {
        let mut c = self.handle.edit();
        c.cfg = cfg;
    }

    /// The protocol situations this monitor has seen so far (functional coverage).
    pub fn coverage(&self) -> Coverage {
        let c = self.handle.core();
        coverage(c.chans(), &c.events)
    }

    /// The situations this monitor's rules are about: every pace of every channel, write
    /// data before its address, address and data on one edge, outstanding requests and error
    /// responses.
    pub fn situations(&self) -> Vec<Situation> {
        let mut all = handshakes(&[Channel::Aw, Channel::W, Channel::B, Channel::Ar, Channel::R]);
        all.extend(
            [
                Event::WriteDataFirst,
                Event::AddressWithData,
                Event::Outstanding,
                Event::ErrorResponse,
            ]
            .map(Situation::Event),
        );
        all
    }

    /// Requests accepted but not yet answered (writes and reads).
    pub fn outstanding(&self) -> usize {
        let c = self.handle.core();
        c.aw_pending.len() + c.ar_pending.len()
    }

    /// The requests accepted but not yet answered, oldest first per direction: channel (AW or
    /// AR), address and the cycle each was accepted.
    pub fn unanswered(&self) -> Vec<(Channel, u64, u64)> {
        self.handle.core().unanswered()
    }
}

impl AxilCheck {
    fn on_b(&mut self, m: &Model, cx: &Cx) -> Option<Violation> {
        let resp = m.get(self.bresp);
        self.events.bump_if(Event::ErrorResponse, resp >= 2);
        let vals = [("bresp", resp)];
        let outstanding = !self.aw_pending.is_empty();
        let data_done = self.w_pending > 0;
        if let Some(n) = rules::no_b_without_request(outstanding, data_done) {
            return Some(violation(
                Rule::NoBWithoutRequest,
                &self.bus,
                Channel::B,
                cx,
                n,
                &vals,
            ));
        }
        self.aw_pending.pop_front();
        self.w_pending -= 1;
        // AXI4-Lite has no exclusive access, so EXOKAY is never a valid answer.
        rules::exokay_only_for_exclusive(resp, false).map(|n| {
            violation(
                Rule::ExokayOnlyForExclusive,
                &self.bus,
                Channel::B,
                cx,
                n,
                &vals,
            )
        })
    }

    fn on_r(&mut self, m: &Model, cx: &Cx) -> Option<Violation> {
        let resp = m.get(self.rresp);
        self.events.bump_if(Event::ErrorResponse, resp >= 2);
        let vals = [("rresp", resp)];
        if let Some(n) = rules::no_r_without_request(!self.ar_pending.is_empty(), self.ar.fire()) {
            return Some(violation(
                Rule::NoRWithoutRequest,
                &self.bus,
                Channel::R,
                cx,
                n,
                &vals,
            ));
        }
        self.ar_pending.pop_front();
        rules::exokay_only_for_exclusive(resp, false).map(|n| {
            violation(
                Rule::ExokayOnlyForExclusive,
                &self.bus,
                Channel::R,
                cx,
                n,
                &vals,
            )
        })
    }

    fn unanswered(&self) -> Vec<(Channel, u64, u64)> {
        let mut v: Vec<(Channel, u64, u64)> = self
            .aw_pending
            .iter()
            .map(|&(start, addr)| (Channel::Aw, addr, start))
            .chain(
                self.ar_pending
                    .iter()
                    .map(|&(start, addr)| (Channel::Ar, addr, start)),
            )
            .collect();
        v.sort_by_key(|u| u.2);
        v
    }

    fn check_latency(&mut self, cx: &Cx) -> Option<Violation> {
        let bound = self.cfg.latency_bound;
        for (ch, q) in [
            (Channel::B, &mut self.aw_pending),
            (Channel::R, &mut self.ar_pending),
        ] {
            if let Some((start, addr)) = q.front_mut() {
                let vals = [("addr", *addr)];
                if let Some(v) = check_latency_of(&self.bus, ch, cx, bound, start, &vals) {
                    return Some(v);
                }
            }
        }
        None
    }

    /// Every channel of the bus.
    fn chans(&self) -> [&Chan; 5] {
        [&self.aw, &self.w, &self.b, &self.ar, &self.r]
    }

    /// Every channel of the bus, to sample or restart.
    fn chans_mut(&mut self) -> [&mut Chan; 5] {
        [
            &mut self.aw,
            &mut self.w,
            &mut self.b,
            &mut self.ar,
            &mut self.r,
        ]
    }
}

impl AxilCheck {
    /// True when nothing is outstanding, no channel was stalled and reset is long gone: then
    /// an edge with every VALID low breaks no rule and changes nothing.
    fn quiet(&self, cx: &Cx) -> bool {
        !cx.in_reset
            && !self.was_in_reset
            && self.aw_pending.is_empty()
            && self.ar_pending.is_empty()
            && self.w_pending == 0
            && self.chans().iter().all(|c| c.idle())
    }
}

impl Agent for AxilCheck {
    fn sample(&mut self, m: &Model, cx: &Cx) -> Result<()> {
        if self.quiet(cx) && self.chans().iter().all(|c| !c.valid_now(m)) {
            self.idle.set(true);
            return Ok(());
        }
        self.idle.set(false);
        let e = Edge {
            bus: &self.bus,
            cx,
            was_in_reset: self.was_in_reset,
            stall_bound: self.cfg.stall_bound,
        };
        let mut found = None;
        // The channels by field, not through `chans_mut`, which would borrow the bus name too.
        for ch in [
            &mut self.aw,
            &mut self.w,
            &mut self.b,
            &mut self.ar,
            &mut self.r,
        ] {
            ch.watch(m, &e, &mut found);
        }
        self.was_in_reset = cx.in_reset;
        if cx.in_reset {
            self.aw_pending.clear();
            self.w_pending = 0;
            self.ar_pending.clear();
        } else {
            // Responses first: one may not coincide with its own request.
            if self.b.fire() {
                if let Some(v) = self.on_b(m, cx) {
                    found.get_or_insert(v);
                }
            }
            if self.r.fire() {
                if let Some(v) = self.on_r(m, cx) {
                    found.get_or_insert(v);
                }
            }
            let (aw_now, w_now, ar_now) = (self.aw.fire(), self.w.fire(), self.ar.fire());
            let busy = !self.aw_pending.is_empty() || !self.ar_pending.is_empty();
            let e = &mut self.events;
            e.bump_if(Event::Outstanding, (aw_now || ar_now) && busy);
            e.bump_if(Event::AddressWithData, aw_now && w_now);
            // No address waits for data (every pending AW has its W): this W is early.
            e.bump_if(
                Event::WriteDataFirst,
                w_now && !aw_now && self.aw_pending.len() <= self.w_pending,
            );
            if aw_now {
                self.aw_pending.push_back((cx.cycle, m.get(self.awaddr)));
            }
            if w_now {
                self.w_pending += 1;
            }
            if ar_now {
                self.ar_pending.push_back((cx.cycle, m.get(self.araddr)));
            }
            if let Some(v) = self.check_latency(cx) {
                found.get_or_insert(v);
            }
        }
        match found {
            Some(v) => Err(v.into()),
            None => Ok(()),
        }
    }

    fn drive(&mut self, _m: &mut Model, _cx: &Cx) -> Result<()> {
        Ok(())
    }

    fn is_monitor(&self) -> bool {
        true
    }

    fn idle(&self) -> Option<(Idle, Vec<Port>)> {
        let wake = self.chans().iter().map(|c| c.valid_port()).collect();
        Some((self.idle.clone(), wake))
    }

    fn restart(&mut self) {
        self.idle.set(false);
        self.aw_pending.clear();
        self.w_pending = 0;
        self.ar_pending.clear();
        self.was_in_reset = false;
        for ch in self.chans_mut() {
            ch.restart();
        }
    }

    fn finish(&mut self, _m: &Model, cx: &Cx) -> Result<()> {
        let left = self.unanswered();
        let Some(&(_, addr, start)) = left.first() else {
            return Ok(());
        };
        let list: Vec<(Channel, String)> = left
            .iter()
            .map(|(ch, addr, start)| (*ch, format!("at {addr:#x} accepted at cycle {start}")))
            .collect();
        let vals = [("addr", addr), ("accepted_cycle", start)];
        match unanswered_violation(&self.bus, cx, &list, &vals) {
            Some(v) => Err(v.into()),
            None => Ok(()),
        }
    }
}
