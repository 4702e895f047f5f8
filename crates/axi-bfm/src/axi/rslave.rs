//! The randomizing AXI4 slave: the memory of [`AxiSlave`](super::AxiSlave), answered as any
//! legal slave may answer, each request as its [`ReqChoice`] says.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use sim_runtime::{ClockId, Model};

use super::{RBeat, SlavePorts};
use crate::bind::{load_lanes, store_lanes, Bind, Words, MAX_WORDS};
use crate::burst::Burst;
use crate::channel::Turn;
use crate::env::{Agent, Cx, Env};
use crate::error::{Resp, Result};
use crate::handle::Handle;
use crate::mem::Memory;
use crate::monitor::AxiMonitor;
use crate::random_slave::{Exclusives, ReqChoice, SlaveChoices, SlaveLog};

/// A write request accepted, waiting for (the rest of) its data.
struct WReq {
    b: Burst,
    /// Its place among the writes, for the log.
    k: usize,
    choice: ReqChoice,
    /// Beats applied so far.
    beat: u32,
    /// The response, decided when its first beat meets it.
    resp: Option<Resp>,
}

/// A write response owed.
struct BEnt {
    id: u32,
    resp: Resp,
    ready_at: u64,
    seq: u64,
    rank: u8,
}

/// A read request accepted and not yet answered in full.
struct RReq {
    b: Burst,
    choice: ReqChoice,
    beat: u32,
    resp: Resp,
    /// The cycle from which its next beat may go.
    ready_at: u64,
    seq: u64,
}

/// The AR and R channels, bound when the bus has read channels.
struct RandomCore {
    choices: SlaveChoices,
    mem: Rc<RefCell<Memory>>,
    log: Rc<RefCell<SlaveLog>>,
    p: SlavePorts,
    excl: Exclusives,
    aw_q: VecDeque<WReq>,
    /// Write data bursts in arrival order: their beats, and whether WLAST came.
    w_data: VecDeque<(Vec<(Words, u128)>, bool)>,
    /// Write data bursts begun so far (the next one's number).
    w_bursts: usize,
    b_q: Vec<BEnt>,
    r_q: Vec<RReq>,
    /// The read whose beat is on the bus.
    r_shown: Option<u64>,
    /// The read that sent the last beat.
    r_active: Option<u64>,
    /// Requests accepted per direction (the next one's number).
    n_aw: usize,
    n_ar: usize,
    /// Edges the waiting AW / AR VALID has been up without READY.
    aw_wait: u32,
    ar_wait: u32,
    /// Edges WREADY stays low before the next write beat.
    w_hold: u32,
    seq: u64,
}

/// A randomizing AXI4 slave with a sparse memory: it stalls, delays, reorders responses of
/// different IDs, interleaves read data, answers errors and monitors exclusive accesses as
/// its [`SlaveChoices`] say, always within the protocol. What it answered is in its
/// [`SlaveLog`].
#[derive(Clone, Debug)]
pub struct RandomAxiSlave {
    h: Handle<RandomCore, AxiMonitor>,
    mem: Rc<RefCell<Memory>>,
    log: Rc<RefCell<SlaveLog>>,
}

impl RandomAxiSlave {
    /// Attaches to the AXI4 master port `<prefix>_*` of the model on `clock`, answering as
    /// `choices` say, with a protocol monitor unless the environment's monitors are off.
    pub fn attach(
        env: &mut Env,
        prefix: &str,
        clock: ClockId,
        choices: SlaveChoices,
    ) -> Result<RandomAxiSlave> {
        let ports = SlavePorts::bind(&Bind::new(env, prefix))?;
        let mem = Rc::new(RefCell::new(Memory::new()));
        let log = Rc::new(RefCell::new(SlaveLog::new(choices.exclusive)));
        let core = RandomCore {
            choices,
            mem: mem.clone(),
            log: log.clone(),
            p: ports,
            excl: Exclusives::default(),
            aw_q: VecDeque::new(),
            w_data: VecDeque::new(),
            w_bursts: 0,
            b_q: Vec::new(),
            r_q: Vec::new(),
            r_shown: None,
            r_active: None,
            n_aw: 0,
            n_ar: 0,
            aw_wait: 0,
            ar_wait: 0,
            w_hold: 0,
            seq: 0,
        };
        let h = Handle::attach(env, prefix, clock, core, AxiMonitor::attach)?;
        Ok(RandomAxiSlave { h, mem, log })
    }

    /// The protocol monitor attached with this slave, if any.
    pub fn monitor(&self) -> Option<&AxiMonitor> {
        self.h.monitor()
    }

    /// The memory behind the slave, shared.
    pub fn mem(&self) -> Rc<RefCell<Memory>> {
        self.mem.clone()
    }

    /// What the slave answered so far.
    pub fn log(&self) -> SlaveLog {
        self.log.borrow().clone()
    }
}

/// The bytes `[lo, hi)` a burst's beats span on a bus of `bus_bytes` lanes.
fn span(b: &Burst, bus_bytes: usize) -> (u64, u64) {
    let mut lo = u64::MAX;
    let mut hi = 0;
    for k in 0..b.beats() {
        let line = b.beat_line(k, bus_bytes);
        let (l, h) = b.beat_lanes(k, bus_bytes);
        lo = lo.min(line + l as u64);
        hi = hi.max(line + h as u64);
    }
    (lo, hi.max(lo))
}

impl RandomCore {
    /// Matches write data with write addresses, in order, and applies what meets.
    fn apply_writes(&mut self, cycle: u64) {
        while let (Some(req), Some((beats, last))) =
            (self.aw_q.front_mut(), self.w_data.front_mut())
        {
            if req.resp.is_none() {
                let (lo, hi) = span(&req.b, self.p.bus_bytes);
                let resp = match self.choices.error_for(lo, hi, &req.choice) {
                    Some(e) => e,
                    None if req.b.lock && self.choices.exclusive => self.excl.write(&req.b),
                    None => Resp::Okay,
                };
                req.resp = Some(resp);
                if let Some(entry) = self.log.borrow_mut().writes.get_mut(req.k) {
                    entry.1 = resp;
                }
                // An errored write and a failed exclusive write change nothing.
                let effect = self.log.borrow().wrote(&req.b, resp);
                if effect {
                    self.excl.wrote(lo, hi);
                } else {
                    req.beat = u32::MAX / 2;
                }
            }
            for (words, strb) in beats.drain(..) {
                if req.beat <= u32::from(req.b.len) {
                    let line = req.b.beat_line(req.beat, self.p.bus_bytes);
                    let (lo, hi) = req.b.beat_lanes(req.beat, self.p.bus_bytes);
                    store_lanes(&mut self.mem.borrow_mut(), line, lo..hi, &words, strb);
                }
                req.beat = req.beat.saturating_add(1);
            }
            if !*last {
                break;
            }
            let ready_at = cycle + u64::from(req.choice.latency);
            let ent = BEnt {
                id: req.b.id,
                resp: req.resp.unwrap_or_default(),
                ready_at,
                seq: self.seq,
                rank: req.choice.rank,
            };
            self.seq += 1;
            self.b_q.push(ent);
            self.aw_q.pop_front();
            self.w_data.pop_front();
        }
    }

    /// The response to send next among those due: the oldest of each ID is a candidate, the
    /// lowest rank goes first, then the oldest.
    fn pick<T>(
        q: &[T],
        id: impl Fn(&T) -> u32,
        due: impl Fn(&T) -> bool,
        key: impl Fn(&T) -> (u8, u64),
    ) -> Option<usize> {
        let mut seen: Vec<u32> = Vec::new();
        let mut best: Option<(usize, (u8, u64))> = None;
        for (i, e) in q.iter().enumerate() {
            if seen.contains(&id(e)) {
                continue;
            }
            seen.push(id(e));
            if due(e) && best.is_none_or(|(_, k)| key(e) < k) {
                best = Some((i, key(e)));
            }
        }
        best.map(|(i, _)| i)
    }

    /// The next read beat, if one may go now.
    fn next_r(&mut self, cycle: u64) -> Option<RBeat> {
        let active = self
            .r_active
            .and_then(|s| self.r_q.iter().position(|r| r.seq == s));
        let i = match active {
            // A burst under way without interleaving goes on alone.
            Some(i) if self.r_q[i].beat > 0 && !self.r_q[i].choice.interleave => {
                (self.r_q[i].ready_at <= cycle).then_some(i)?
            }
            _ => {
                let act = self.r_active;
                Self::pick(
                    &self.r_q,
                    |r| r.b.id,
                    |r| r.ready_at <= cycle,
                    // An interleaving burst gives way to another ID's data when there is some.
                    |r| (u8::from(Some(r.seq) == act) * 8 + r.choice.rank, r.seq),
                )?
            }
        };
        let req = &self.r_q[i];
        let mut words = [0; MAX_WORDS];
        if req.resp.is_ok() {
            let line = req.b.beat_line(req.beat, self.p.bus_bytes);
            let (lo, hi) = req.b.beat_lanes(req.beat, self.p.bus_bytes);
            load_lanes(&self.mem.borrow(), line, lo..hi, &mut words);
        }
        self.r_shown = Some(req.seq);
        self.r_active = Some(req.seq);
        Some(RBeat {
            id: req.b.id,
            resp: req.resp,
            last: req.beat >= u32::from(req.b.len),
            words,
        })
    }

    fn reset(&mut self, m: &mut Model) {
        self.p.off(m);
        self.excl.clear();
        self.aw_q.clear();
        self.w_data.clear();
        self.b_q.clear();
        self.r_q.clear();
        (self.r_shown, self.r_active) = (None, None);
        (self.w_bursts, self.n_aw, self.n_ar) = (0, 0, 0);
        (self.aw_wait, self.ar_wait, self.w_hold) = (0, 0, 0);
        *self.log.borrow_mut() = SlaveLog::new(self.choices.exclusive);
    }
}

impl Agent for RandomCore {
    fn sample(&mut self, m: &Model, cx: &Cx) -> Result<()> {
        if self.p.b.sample(m).is_some() {
            // The shown response was taken: it left the queue when it went up.
        }
        let r_taken = self
            .p
            .rd
            .as_mut()
            .is_some_and(|rd| rd.r.sample(m).is_some());
        if r_taken {
            if let Some(i) = self
                .r_shown
                .take()
                .and_then(|s| self.r_q.iter().position(|r| r.seq == s))
            {
                let r = &mut self.r_q[i];
                r.beat += 1;
                r.ready_at = cx.cycle + u64::from(r.choice.gap);
                if r.beat > u32::from(r.b.len) {
                    self.r_q.remove(i);
                }
            }
        }
        match self.p.aw.sample(m) {
            Some(a) => {
                let choice = self.choices.of(true, self.n_aw);
                self.log.borrow_mut().writes.push((a.b, Resp::Okay));
                self.aw_q.push_back(WReq {
                    b: a.b,
                    k: self.n_aw,
                    choice,
                    beat: 0,
                    resp: None,
                });
                self.n_aw += 1;
                self.aw_wait = 0;
            }
            None if m.get_bool(self.p.aw.valid_port()) => self.aw_wait += 1,
            None => {}
        }
        if let Some(w) = self.p.w.sample(m) {
            if self.w_data.back().is_none_or(|(_, last)| *last) {
                self.w_data.push_back((Vec::new(), false));
                self.w_bursts += 1;
            }
            if let Some((beats, last)) = self.w_data.back_mut() {
                beats.push((w.words, w.strb));
                *last = w.last;
            }
            // The gap is between the beats of one burst: none after its last.
            self.w_hold = if w.last {
                0
            } else {
                self.choices.of(true, self.w_bursts - 1).gap
            };
        }
        if let Some(rd) = &self.p.rd {
            match rd.ar.sample(m) {
                Some(a) => {
                    let choice = self.choices.of(false, self.n_ar);
                    let (lo, hi) = span(&a.b, self.p.bus_bytes);
                    let resp = match self.choices.error_for(lo, hi, &choice) {
                        Some(e) => e,
                        None if a.b.lock && self.choices.exclusive => self.excl.read(&a.b),
                        None => Resp::Okay,
                    };
                    self.log.borrow_mut().reads.push((a.b, resp));
                    self.r_q.push(RReq {
                        b: a.b,
                        choice,
                        beat: 0,
                        resp,
                        ready_at: cx.cycle + u64::from(choice.latency),
                        seq: self.seq,
                    });
                    self.seq += 1;
                    self.n_ar += 1;
                    self.ar_wait = 0;
                }
                None if m.get_bool(rd.ar.valid_port()) => self.ar_wait += 1,
                None => {}
            }
        }
        self.apply_writes(cx.cycle);
        Ok(())
    }

    fn drive(&mut self, m: &mut Model, cx: &Cx) -> Result<()> {
        if cx.in_reset {
            self.reset(m);
            return Ok(());
        }
        let q = self.choices.max_queued.max(1);
        let aw_choice = self.choices.of(true, self.n_aw);
        self.p
            .aw
            .drive(m, self.aw_q.len() < q && self.aw_wait >= aw_choice.stall);
        // The data of write `j` (the burst W is on) goes in once its address is in, or before
        // it when its choice says so; one burst ahead of the addresses at most.
        let open = self.w_data.back().is_some_and(|(_, last)| !*last);
        let j = if open {
            self.w_bursts - 1
        } else {
            self.w_bursts
        };
        let w_ok = j < self.n_aw || (j == self.n_aw && self.choices.of(true, j).data_first);
        let hold = self.w_hold > 0;
        self.w_hold = self.w_hold.saturating_sub(1);
        self.p.w.drive(m, w_ok && !hold);

        if let Turn::Free { .. } = self.p.b.turn() {
            let cycle = cx.cycle;
            let next = Self::pick(
                &self.b_q,
                |e| e.id,
                |e| e.ready_at <= cycle,
                |e| (e.rank, e.seq),
            )
            .map(|i| self.b_q.remove(i));
            self.p.b.show(m, next.map(|e| (e.id, e.resp)));
        }

        let Some(mut rd) = self.p.rd.take() else {
            return Ok(());
        };
        let ar_choice = self.choices.of(false, self.n_ar);
        rd.ar
            .drive(m, self.r_q.len() < q && self.ar_wait >= ar_choice.stall);
        if let Turn::Free { .. } = rd.r.turn() {
            let beat = self.next_r(cx.cycle);
            rd.r.show(m, beat);
        }
        self.p.rd = Some(rd);
        Ok(())
    }

    // The slave's stalls and gaps are its choices: the environment's pauses leave it alone,
    // so that a case's choices alone say what it does.
}
