//! The AXI4 protocol monitor.

use std::collections::VecDeque;

use sim_runtime::{ClockId, Model, Port};

use super::rules::{self, Rule, BURST_FIXED, BURST_INCR, BURST_WRAP};
use super::{
    check_latency_of, coverage, handshakes, unanswered_violation, violation, Chan, Channel,
    Coverage, Edge, Event, Events, Situation, Violation,
};
use crate::bind::{Bind, IdMap};
use crate::env::{Agent, Cx, Env, Idle};
use crate::error::Result;
use crate::handle::Bare;

/// Bounds of the AXI4 and AXI4-Lite monitors; 0 turns a bound off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AxiMonitorConfig {
    /// Cycles a VALID may wait for READY (stall_bound).
    pub stall_bound: u64,
    /// Cycles a request may wait for its response (response_latency_bound).
    pub latency_bound: u64,
    /// The slave answers in the order it accepted requests, whatever their IDs (most simple
    /// slaves do): a response carrying the ID of another request than the oldest outstanding
    /// one breaks `response_id_of_oldest`. Off by default, since AXI4 lets responses of
    /// different IDs pass each other.
    pub in_order: bool,
}

impl Default for AxiMonitorConfig {
    fn default() -> Self {
        AxiMonitorConfig {
            stall_bound: 1_000,
            latency_bound: 10_000,
            in_order: false,
        }
    }
}

struct Fields {
    id: Option<Port>,
    addr: Port,
    len: Port,
    size: Option<Port>,
    burst: Option<Port>,
    lock: Option<Port>,
}

struct WReq {
    lock: bool,
    start: u64,
    data_done: bool,
    addr: u64,
    seq: u64,
}

struct RReq {
    beats: u32,
    lock: bool,
    start: u64,
    got: u32,
    addr: u64,
    seq: u64,
}

struct ReadSide {
    ar: Chan,
    r: Chan,
    arf: Fields,
    rid: Option<Port>,
    rresp: Port,
    rlast: Port,
}

pub(crate) struct AxiCheck {
    bus: String,
    cfg: AxiMonitorConfig,
    data_bytes: usize,
    aw: Chan,
    w: Chan,
    b: Chan,
    /// The read channels and their fields; `None` on a write-only bus (no `araddr`).
    rd: Option<ReadSide>,
    awf: Fields,
    wlast: Port,
    bid: Option<Port>,
    bresp: Port,
    was_in_reset: bool,
    writes: IdMap<u64, VecDeque<WReq>>,
    reads: IdMap<u64, VecDeque<RReq>>,
    outstanding: usize,
    /// Accepted AW bursts (ID, beats) whose write data has not all arrived, in AW order.
    w_order: VecDeque<(u64, u32)>,
    /// Beats of the write burst in progress.
    w_count: u32,
    /// Lengths of write bursts whose data (ended by WLAST) came before their AW.
    w_early: VecDeque<u32>,
    /// Requests accepted so far, numbering them in order.
    seq: u64,
    /// The first cycle at which a request could exceed the latency bound.
    latency_due: u64,
    /// The situations counted (functional coverage).
    events: Events,
    /// Raised while every channel is idle and nothing is outstanding, clear of reset: only a
    /// VALID going up gives the monitor work (see [`Agent::idle`]).
    idle: Idle,
}

/// A handle on an AXI4 monitor attached to an environment.
#[derive(Clone)]
pub struct AxiMonitor {
    /// The bus models' one handle shape, on the monitor's checks.
    handle: Bare<AxiCheck>,
}

impl std::fmt::Debug for AxiMonitor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = self.handle.core();
        f.debug_struct("AxiMonitor")
            .field("bus", &c.bus)
            .field("cfg", &c.cfg)
            .field("outstanding", &c.outstanding)
            .finish()
    }
}

fn fields(b: &Bind<'_>, p: &str) -> Result<Fields> {
    Ok(Fields {
        id: b.opt_watch(&format!("{p}id")),
        addr: b.watch(&format!("{p}addr"))?,
        len: b.watch(&format!("{p}len"))?,
        size: b.opt_watch(&format!("{p}size")),
        burst: b.opt_watch(&format!("{p}burst")),
        lock: b.opt_watch(&format!("{p}lock")),
    })
}

impl AxiMonitor {
    /// Watches the AXI4 bus `<prefix>_*` on `clock` with the default bounds. A bus without
    /// `araddr` is write-only and only its write channels are checked.
    pub fn attach(env: &mut Env, prefix: &str, clock: ClockId) -> Result<AxiMonitor> {
        Self::attach_with(env, prefix, clock, AxiMonitorConfig::default())
    }

    /// Watches the AXI4 bus `<prefix>_*` on `clock`.
    pub fn attach_with(
        env: &mut Env,
        prefix: &str,
        clock: ClockId,
        cfg: AxiMonitorConfig,
    ) -> Result<AxiMonitor> {
        let b = Bind::new(env, prefix);
        let wdata = b.watch("wdata")?;
        let data_bytes = b.data_bytes(wdata, "wdata")?;
        let chan = |c, v, r, sigs: &[&str]| Chan::bind(&b, c, v, r, sigs);
        let ax = [
            "id", "addr", "len", "size", "burst", "lock", "cache", "prot", "qos", "region", "user",
        ];
        let aws: Vec<String> = ax.iter().map(|s| format!("aw{s}")).collect();
        let ars: Vec<String> = ax.iter().map(|s| format!("ar{s}")).collect();
        let aws: Vec<&str> = aws.iter().map(String::as_str).collect();
        let ars: Vec<&str> = ars.iter().map(String::as_str).collect();
        let check = AxiCheck {
            bus: prefix.to_string(),
            cfg,
            data_bytes,
            aw: chan(Channel::Aw, "awvalid", "awready", &aws)?,
            w: chan(
                Channel::W,
                "wvalid",
                "wready",
                &["wdata", "wstrb", "wlast", "wuser"],
            )?,
            b: chan(Channel::B, "bvalid", "bready", &["bid", "bresp", "buser"])?,
            rd: if b.has("araddr") {
                Some(ReadSide {
                    ar: chan(Channel::Ar, "arvalid", "arready", &ars)?,
                    r: chan(
                        Channel::R,
                        "rvalid",
                        "rready",
                        &["rid", "rdata", "rresp", "rlast", "ruser"],
                    )?,
                    arf: fields(&b, "ar")?,
                    rid: b.opt_watch("rid"),
                    rresp: b.watch("rresp")?,
                    rlast: b.watch("rlast")?,
                })
            } else {
                None
            },
            awf: fields(&b, "aw")?,
            wlast: b.watch("wlast")?,
            bid: b.opt_watch("bid"),
            bresp: b.watch("bresp")?,
            was_in_reset: false,
            writes: IdMap::default(),
            reads: IdMap::default(),
            outstanding: 0,
            w_order: VecDeque::new(),
            w_count: 0,
            w_early: VecDeque::new(),
            seq: 0,
            latency_due: 0,
            events: Events::default(),
            idle: Idle::new(),
        };
        Ok(AxiMonitor {
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

    /// The situations this monitor's rules are about, on this bus: every pace of every
    /// channel it has, every burst type and length class, narrow, unaligned and 4 KiB-edge
    /// bursts, exclusive accesses, write data before its address, interleaved IDs,
    /// out-of-order responses, interleaved read data (with read channels), outstanding
    /// requests and error responses.
    pub fn situations(&self) -> Vec<Situation> {
        let c = self.handle.core();
        let channels: Vec<Channel> = c.chans().map(Chan::channel).collect();
        let mut all = handshakes(&channels);
        let mut events = Event::burst_shapes().to_vec();
        events.extend([
            Event::WriteDataFirst,
            Event::IdsInterleaved,
            Event::OutOfOrderResponse,
            Event::Outstanding,
            Event::ErrorResponse,
        ]);
        if c.rd.is_some() {
            events.push(Event::ReadDataInterleaved);
        }
        all.extend(events.into_iter().map(Situation::Event));
        all
    }

    /// Requests accepted but not yet answered.
    pub fn outstanding(&self) -> usize {
        self.handle.core().outstanding
    }

    /// The requests accepted but not yet answered, oldest first: channel (AW or AR), ID,
    /// address and the cycle each was accepted.
    pub fn unanswered(&self) -> Vec<(Channel, u64, u64, u64)> {
        self.handle
            .core()
            .unanswered()
            .into_iter()
            .map(|(c, id, a, s, _)| (c, id, a, s))
            .collect()
    }
}

struct Ax {
    id: u64,
    addr: u64,
    len: u64,
    size: u64,
    burst: u64,
    lock: bool,
}

impl AxiCheck {
    /// Every channel the bus has.
    fn chans(&self) -> impl Iterator<Item = &Chan> {
        [&self.aw, &self.w, &self.b]
            .into_iter()
            .chain(self.rd.iter().flat_map(|rd| [&rd.ar, &rd.r]))
    }

    /// Counts the situations of an accepted request, before it joins the outstanding ones.
    fn count_request(&mut self, a: &Ax, writes: bool) {
        let e = &mut self.events;
        e.bump_if(Event::FixedBurst, a.burst == BURST_FIXED);
        e.bump_if(Event::IncrBurst, a.burst == BURST_INCR);
        e.bump_if(Event::WrapBurst, a.burst == BURST_WRAP);
        e.bump_if(Event::SingleBeat, a.len == 0);
        e.bump_if(Event::ShortBurst, (1..16).contains(&a.len));
        e.bump_if(Event::LongBurst, a.len >= 16);
        e.bump_if(
            Event::Narrow,
            a.size < u64::from(self.data_bytes.trailing_zeros()),
        );
        e.bump_if(
            Event::Unaligned,
            !a.addr.is_multiple_of(1u64 << a.size.min(7)),
        );
        if a.burst == BURST_INCR {
            let last = crate::burst::incr_last_byte(a.addr, a.len + 1, a.size.min(7) as u8);
            e.bump_if(Event::EndsAt4k, last % 4096 == 4095);
        }
        e.bump_if(Event::Exclusive, a.lock);
        e.bump_if(Event::Outstanding, self.outstanding > 0);
        let other_id = if writes {
            self.writes
                .iter()
                .any(|(id, q)| *id != a.id && !q.is_empty())
        } else {
            self.reads
                .iter()
                .any(|(id, q)| *id != a.id && !q.is_empty())
        };
        self.events.bump_if(Event::IdsInterleaved, other_id);
    }

    /// Whether a request of another ID than `id`, older than request `seq`, is unanswered.
    fn older_other(&self, id: u64, seq: u64, writes: bool) -> bool {
        if writes {
            self.writes
                .iter()
                .any(|(i, q)| *i != id && q.front().is_some_and(|w| w.seq < seq))
        } else {
            self.reads
                .iter()
                .any(|(i, q)| *i != id && q.front().is_some_and(|r| r.seq < seq))
        }
    }

    fn ax(&self, m: &Model, f: &Fields) -> Ax {
        Ax {
            id: f.id.map_or(0, |p| m.get(p)),
            addr: m.get(f.addr),
            len: m.get(f.len),
            // Absent AxSIZE means full-width beats; absent AxBURST means INCR.
            size: f
                .size
                .map_or(u64::from(self.data_bytes.trailing_zeros()), |p| m.get(p)),
            burst: f.burst.map_or(BURST_INCR, |p| m.get(p)),
            lock: f.lock.is_some_and(|p| m.get_bool(p)),
        }
    }

    /// The address-channel rules, on an accepted AW or AR.
    fn check_ax(&self, a: &Ax, ch: Channel, cx: &Cx) -> Option<Violation> {
        let vals = [
            ("addr", a.addr),
            ("len", a.len),
            ("size", a.size),
            ("burst", a.burst),
        ];
        let v = |rule, note| Some(violation(rule, &self.bus, ch, cx, note, &vals));
        if let Some(n) = rules::size_within_bus_width(a.size, self.data_bytes) {
            return v(Rule::SizeWithinBusWidth, n);
        }
        if let Some(n) = rules::burst_type_not_reserved(a.burst) {
            return v(Rule::BurstTypeNotReserved, n);
        }
        if let Some(n) = rules::len_legal_for_burst(a.addr, a.len, a.size, a.burst) {
            return v(Rule::LenLegalForBurst, n);
        }
        if let Some(n) = rules::no_4k_crossing(a.addr, a.len, a.size, a.burst) {
            return v(Rule::No4kCrossing, n);
        }
        None
    }

    fn clear(&mut self) {
        self.latency_due = 0;
        self.writes.clear();
        self.reads.clear();
        self.outstanding = 0;
        self.w_order.clear();
        self.w_count = 0;
        self.w_early.clear();
    }

    fn on_aw(&mut self, m: &Model, cx: &Cx) -> Option<Violation> {
        let a = self.ax(m, &self.awf);
        let mut found = self.check_ax(&a, Channel::Aw, cx);
        self.count_request(&a, true);
        let beats = a.len as u32 + 1;
        let mut data_done = false;
        if self.w_order.is_empty() {
            if let Some(n) = self.w_early.pop_front() {
                data_done = true;
                if n != beats {
                    found.get_or_insert_with(|| {
                        violation(
                            Rule::WlastOnLastBeat,
                            &self.bus,
                            Channel::W,
                            cx,
                            format!("write data of {n} beats, ended by WLAST before its AW, belongs to a burst of AWLEN+1 = {beats} beats"),
                            &[("awid", a.id), ("awlen", a.len)],
                        )
                    });
                }
            }
        }
        if !data_done {
            self.w_order.push_back((a.id, beats));
        }
        self.seq += 1;
        self.writes.entry(a.id).or_default().push_back(WReq {
            lock: a.lock,
            start: cx.cycle,
            data_done,
            addr: a.addr,
            seq: self.seq,
        });
        self.outstanding += 1;
        found
    }

    fn on_w(&mut self, m: &Model, cx: &Cx) -> Option<Violation> {
        let wlast = m.get_bool(self.wlast);
        self.w_count += 1;
        let count = self.w_count;
        let vals = [("wlast", u64::from(wlast)), ("beat", u64::from(count))];
        if let Some(&(id, beats)) = self.w_order.front() {
            let found = rules::wlast_on_last_beat(count, beats, wlast)
                .map(|n| violation(Rule::WlastOnLastBeat, &self.bus, Channel::W, cx, n, &vals));
            if wlast || count >= beats {
                self.w_order.pop_front();
                self.w_count = 0;
                if let Some(q) = self.writes.get_mut(&id) {
                    if let Some(w) = q.iter_mut().find(|w| !w.data_done) {
                        w.data_done = true;
                    }
                }
            }
            found
        } else if wlast {
            self.events.bump(Event::WriteDataFirst);
            self.w_early.push_back(count);
            self.w_count = 0;
            None
        } else if count >= 256 {
            self.w_count = 0;
            Some(violation(
                Rule::WlastOnLastBeat,
                &self.bus,
                Channel::W,
                cx,
                "256 write beats without WLAST (no burst is longer)".into(),
                &vals,
            ))
        } else {
            None
        }
    }

    fn on_b(&mut self, m: &Model, cx: &Cx) -> Option<Violation> {
        let id = self.bid.map_or(0, |p| m.get(p));
        let resp = m.get(self.bresp);
        let vals = [("bid", id), ("bresp", resp)];
        let q = self.writes.get_mut(&id);
        let front = q.as_ref().and_then(|q| q.front());
        let outstanding = front.is_some();
        let data_done = front.is_some_and(|w| w.data_done);
        let lock = front.is_some_and(|w| w.lock);
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
        let seq = front.map_or(0, |w| w.seq);
        self.events.bump_if(Event::ErrorResponse, resp >= 2);
        // An older request of another ID needs another ID in the map: with one ID in use
        // (most benches), the scan is skipped.
        if self.writes.len() > 1 {
            let ooo = self.older_other(id, seq, true);
            self.events.bump_if(Event::OutOfOrderResponse, ooo);
        }
        let older = self.in_order_older(seq, true);
        let q = self.writes.get_mut(&id);
        if let Some(q) = q {
            q.pop_front();
        }
        self.outstanding = self.outstanding.saturating_sub(1);
        if let Some((oid, oaddr, ostart)) = older {
            let n = rules::response_id_of_oldest(id, oid, oaddr, ostart);
            return Some(violation(
                Rule::ResponseIdOfOldest,
                &self.bus,
                Channel::B,
                cx,
                n,
                &[("bid", id), ("oldest_id", oid), ("oldest_addr", oaddr)],
            ));
        }
        rules::exokay_only_for_exclusive(resp, lock).map(|n| {
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

    fn on_ar(&mut self, m: &Model, cx: &Cx) -> Option<Violation> {
        let a = self.ax(m, &self.rd.as_ref()?.arf);
        let found = self.check_ax(&a, Channel::Ar, cx);
        self.count_request(&a, false);
        self.seq += 1;
        self.reads.entry(a.id).or_default().push_back(RReq {
            beats: a.len as u32 + 1,
            lock: a.lock,
            start: cx.cycle,
            got: 0,
            addr: a.addr,
            seq: self.seq,
        });
        self.outstanding += 1;
        found
    }

    fn on_r(&mut self, m: &Model, cx: &Cx) -> Option<Violation> {
        let rd = self.rd.as_ref()?;
        let id = rd.rid.map_or(0, |p| m.get(p));
        let resp = m.get(rd.rresp);
        let rlast = m.get_bool(rd.rlast);
        // Read data interleaved or out of order needs a request of another ID, so another ID
        // in the map: with one ID in use, as in most benches, these scans of every ID at
        // every beat are skipped. The map keeps an ID's entry once it has one.
        if let Some((got, seq)) = (self.reads.len() > 1)
            .then(|| self.reads.get(&id))
            .flatten()
            .and_then(|q| q.front())
            .map(|r| (r.got, r.seq))
        {
            let mid = self
                .reads
                .iter()
                .any(|(i, q)| *i != id && q.front().is_some_and(|r| r.got > 0));
            let ooo = got == 0 && self.older_other(id, seq, false);
            self.events.bump_if(Event::ReadDataInterleaved, mid);
            self.events.bump_if(Event::OutOfOrderResponse, ooo);
        }
        self.events.bump_if(Event::ErrorResponse, resp >= 2);
        let ar_now = self.rd.as_ref().is_some_and(|rd| rd.ar.fire());
        let bus = self.bus.as_str();
        let Some(q) = self.reads.get_mut(&id).filter(|q| !q.is_empty()) else {
            let n = rules::no_r_without_request(false, ar_now)?;
            return Some(violation(
                Rule::NoRWithoutRequest,
                bus,
                Channel::R,
                cx,
                n,
                &[("rid", id), ("rresp", resp), ("rlast", u64::from(rlast))],
            ));
        };
        let mut found = None;
        let (got, beats, lock, seq) = match q.front_mut() {
            Some(f) => {
                f.got += 1;
                (f.got, f.beats, f.lock, f.seq)
            }
            None => return None,
        };
        if got == 1 {
            if let Some((oid, oaddr, ostart)) = self.in_order_older(seq, false) {
                found = Some(violation(
                    Rule::ResponseIdOfOldest,
                    bus,
                    Channel::R,
                    cx,
                    rules::response_id_of_oldest(id, oid, oaddr, ostart),
                    &[("rid", id), ("oldest_id", oid), ("oldest_addr", oaddr)],
                ));
            }
        }
        let Some(q) = self.reads.get_mut(&id) else {
            return found;
        };
        let vals = [
            ("rid", id),
            ("rresp", resp),
            ("rlast", u64::from(rlast)),
            ("beat", u64::from(got)),
        ];
        if let Some(n) = rules::exokay_only_for_exclusive(resp, lock) {
            found = Some(violation(
                Rule::ExokayOnlyForExclusive,
                bus,
                Channel::R,
                cx,
                n,
                &vals,
            ));
        }
        // Only a burst at or past its length can be missing RLAST: the scan of the later
        // requests waits until then rather than running at every beat.
        let later_max = if got >= beats {
            q.iter().skip(1).map(|r| r.beats).max().unwrap_or(0)
        } else {
            0
        };
        let mut ended = false;
        if rlast {
            ended = true;
            if got != beats {
                let later: Vec<u32> = q.iter().skip(1).map(|r| r.beats).collect();
                if let Some(n) = rules::responses_in_order_per_id(got, beats, &later) {
                    found.get_or_insert_with(|| {
                        violation(Rule::ResponsesInOrderPerId, bus, Channel::R, cx, n, &vals)
                    });
                    // The burst that was answered is the later one: retire it and keep the
                    // oldest, so the monitor follows the bus as it really went.
                    if let Some(pos) = q.iter().skip(1).position(|r| r.beats == got) {
                        if let Some(f) = q.front_mut() {
                            f.got = 0;
                        }
                        q.remove(pos + 1);
                        self.outstanding = self.outstanding.saturating_sub(1);
                        return found;
                    }
                } else if let Some(n) = rules::rlast_on_last_beat(got, beats, rlast) {
                    found.get_or_insert_with(|| {
                        violation(Rule::RlastOnLastBeat, bus, Channel::R, cx, n, &vals)
                    });
                }
            }
        } else if (got == beats && later_max <= got) || got > beats.max(later_max) {
            // A later read of this ID with more beats could still explain a missing RLAST as
            // an out-of-order answer; only when none can is the missing RLAST reported.
            ended = true;
            let n = rules::rlast_on_last_beat(got, beats, false)
                .unwrap_or_else(|| format!("no RLAST after {got} beats of a {beats}-beat burst"));
            found.get_or_insert_with(|| {
                violation(Rule::RlastOnLastBeat, bus, Channel::R, cx, n, &vals)
            });
        }
        if ended {
            q.pop_front();
            self.outstanding = self.outstanding.saturating_sub(1);
        }
        found
    }

    /// With `in_order` set: the oldest outstanding request of the same direction that is
    /// older than request `seq` (and, for writes, has all its data), as (ID, address, cycle).
    fn in_order_older(&self, seq: u64, writes: bool) -> Option<(u64, u64, u64)> {
        if !self.cfg.in_order {
            return None;
        }
        if writes {
            self.writes
                .iter()
                .filter_map(|(id, q)| q.front().map(|w| (*id, w)))
                .filter(|(_, w)| w.seq < seq && w.data_done)
                .min_by_key(|(_, w)| w.seq)
                .map(|(id, w)| (id, w.addr, w.start))
        } else {
            self.reads
                .iter()
                .filter_map(|(id, q)| q.front().map(|r| (*id, r)))
                .filter(|(_, r)| r.seq < seq && r.got == 0)
                .min_by_key(|(_, r)| r.seq)
                .map(|(id, r)| (id, r.addr, r.start))
        }
    }

    fn unanswered(&self) -> Vec<(Channel, u64, u64, u64, u64)> {
        let mut all: Vec<(Channel, u64, u64, u64, u64)> = self
            .writes
            .iter()
            .flat_map(|(id, q)| {
                q.iter()
                    .map(move |w| (Channel::Aw, *id, w.addr, w.start, w.seq))
            })
            .chain(self.reads.iter().flat_map(|(id, q)| {
                q.iter()
                    .map(move |r| (Channel::Ar, *id, r.addr, r.start, r.seq))
            }))
            .collect();
        all.sort_by_key(|u| u.4);
        all
    }

    fn check_latency(&mut self, cx: &Cx) -> Option<Violation> {
        let bound = self.cfg.latency_bound;
        if bound == 0 || self.outstanding == 0 || cx.cycle < self.latency_due {
            return None;
        }
        // The oldest start among the heads only grows (later requests start later), so no
        // request can exceed the bound before this cycle: skip the scan until then.
        let oldest = self
            .writes
            .values()
            .filter_map(|q| q.front().map(|w| w.start))
            .chain(
                self.reads
                    .values()
                    .filter_map(|q| q.front().map(|r| r.start)),
            )
            .min()
            .unwrap_or(cx.cycle);
        if cx.cycle.saturating_sub(oldest) <= bound {
            self.latency_due = oldest + bound + 1;
            return None;
        }
        let starts = self
            .writes
            .iter_mut()
            .filter_map(|(id, q)| {
                q.front_mut()
                    .map(|w| (Channel::B, *id, w.addr, &mut w.start))
            })
            .chain(self.reads.iter_mut().filter_map(|(id, q)| {
                q.front_mut()
                    .map(|r| (Channel::R, *id, r.addr, &mut r.start))
            }));
        for (ch, id, addr, start) in starts {
            let vals = [("id", id), ("addr", addr)];
            if let Some(v) = check_latency_of(&self.bus, ch, cx, bound, start, &vals) {
                return Some(v);
            }
        }
        None
    }
}

impl Agent for AxiCheck {
    fn sample(&mut self, m: &Model, cx: &Cx) -> Result<()> {
        let e = Edge {
            bus: &self.bus,
            cx,
            was_in_reset: self.was_in_reset,
            stall_bound: self.cfg.stall_bound,
        };
        let mut found = None;
        // Each channel by name rather than through an iterator of optional channels: this
        // runs at every edge, and the straight line is shorter.
        self.aw.watch(m, &e, &mut found);
        self.w.watch(m, &e, &mut found);
        self.b.watch(m, &e, &mut found);
        if let Some(rd) = self.rd.as_mut() {
            rd.ar.watch(m, &e, &mut found);
            rd.r.watch(m, &e, &mut found);
        }
        self.was_in_reset = cx.in_reset;
        if cx.in_reset {
            self.clear();
        } else {
            // Responses are matched before this edge's requests: a response must follow its
            // request's handshake, never coincide with it.
            if self.b.fire() {
                if let Some(v) = self.on_b(m, cx) {
                    found.get_or_insert(v);
                }
            }
            if self.rd.as_ref().is_some_and(|rd| rd.r.fire()) {
                if let Some(v) = self.on_r(m, cx) {
                    found.get_or_insert(v);
                }
            }
            if self.aw.fire() {
                if let Some(v) = self.on_aw(m, cx) {
                    found.get_or_insert(v);
                }
            }
            if self.rd.as_ref().is_some_and(|rd| rd.ar.fire()) {
                if let Some(v) = self.on_ar(m, cx) {
                    found.get_or_insert(v);
                }
            }
            if self.w.fire() {
                if let Some(v) = self.on_w(m, cx) {
                    found.get_or_insert(v);
                }
            }
            if let Some(v) = self.check_latency(cx) {
                found.get_or_insert(v);
            }
        }
        let chans_idle = self.aw.idle()
            && self.w.idle()
            && self.b.idle()
            && self
                .rd
                .as_ref()
                .is_none_or(|rd| rd.ar.idle() && rd.r.idle());
        self.idle
            .set(!cx.in_reset && self.outstanding == 0 && chans_idle);
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
        let mut wake = vec![
            self.aw.valid_port(),
            self.w.valid_port(),
            self.b.valid_port(),
        ];
        if let Some(rd) = &self.rd {
            wake.extend([rd.ar.valid_port(), rd.r.valid_port()]);
        }
        Some((self.idle.clone(), wake))
    }

    fn restart(&mut self) {
        self.idle.set(false);
        self.clear();
        self.was_in_reset = false;
        for ch in [&mut self.aw, &mut self.w, &mut self.b] {
            ch.restart();
        }
        if let Some(rd) = self.rd.as_mut() {
            rd.ar.restart();
            rd.r.restart();
        }
    }

    fn finish(&mut self, _m: &Model, cx: &Cx) -> Result<()> {
        let left = self.unanswered();
        let Some(&(_, id, addr, start, _)) = left.first() else {
            return Ok(());
        };
        let list: Vec<(Channel, String)> = left
            .iter()
            .map(|(ch, id, addr, start, _)| {
                let what = format!("of ID {id} at {addr:#x} accepted at cycle {start}");
                (*ch, what)
            })
            .collect();
        let vals = [("id", id), ("addr", addr), ("accepted_cycle", start)];
        match unanswered_violation(&self.bus, cx, &list, &vals) {
            Some(v) => Err(v.into()),
            None => Ok(()),
        }
    }
}
