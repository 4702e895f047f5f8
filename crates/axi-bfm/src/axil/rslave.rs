//! The randomizing AXI4-Lite slave: the memory of [`AxilSlave`](super::AxilSlave), answered
//! as any legal AXI4-Lite slave may answer, each request as its [`ReqChoice`] says. AXI4-Lite
//! has no IDs, so responses stay in order; what varies is stalls, latency and errors.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use sim_runtime::{ClockId, Model};

use super::SlavePorts;
use crate::bind::Bind;
use crate::burst::Burst;
use crate::channel::Turn;
use crate::env::{Agent, Cx, Env};
use crate::error::{Resp, Result};
use crate::handle::Handle;
use crate::mem::Memory;
use crate::monitor::AxilMonitor;
use crate::random_slave::{ReqChoice, SlaveChoices, SlaveLog};

struct LiteCore {
    choices: SlaveChoices,
    mem: Rc<RefCell<Memory>>,
    log: Rc<RefCell<SlaveLog>>,
    p: SlavePorts,
    /// Write addresses accepted, with their number and choice.
    aw_q: VecDeque<(u64, usize, ReqChoice)>,
    w_q: VecDeque<(u64, u64)>,
    /// Responses owed, in order: the response and the cycle it may go.
    b_q: VecDeque<(Resp, u64)>,
    r_q: VecDeque<(u64, Resp, u64)>,
    n_aw: usize,
    n_ar: usize,
    aw_wait: u32,
    ar_wait: u32,
}

/// A randomizing AXI4-Lite slave with a sparse memory: it stalls, delays and answers errors
/// as its [`SlaveChoices`] say (an errored write changes nothing), always within the
/// protocol. What it answered is in its [`SlaveLog`], one-beat bursts of the bus width.
#[derive(Clone, Debug)]
pub struct RandomAxilSlave {
    h: Handle<LiteCore, AxilMonitor>,
    mem: Rc<RefCell<Memory>>,
    log: Rc<RefCell<SlaveLog>>,
}

impl RandomAxilSlave {
    /// Attaches to the AXI4-Lite master port `<prefix>_*` of the model on `clock`, answering
    /// as `choices` say, with a protocol monitor unless the environment's monitors are off.
    pub fn attach(
        env: &mut Env,
        prefix: &str,
        clock: ClockId,
        choices: SlaveChoices,
    ) -> Result<RandomAxilSlave> {
        let p = SlavePorts::bind(&Bind::new(env, prefix))?;
        let mem = Rc::new(RefCell::new(Memory::new()));
        let log = Rc::new(RefCell::new(SlaveLog::new(choices.exclusive)));
        let core = LiteCore {
            choices,
            mem: mem.clone(),
            log: log.clone(),
            p,
            aw_q: VecDeque::new(),
            w_q: VecDeque::new(),
            b_q: VecDeque::new(),
            r_q: VecDeque::new(),
            n_aw: 0,
            n_ar: 0,
            aw_wait: 0,
            ar_wait: 0,
        };
        let h = Handle::attach(env, prefix, clock, core, AxilMonitor::attach)?;
        Ok(RandomAxilSlave { h, mem, log })
    }

    /// The protocol monitor attached with this slave, if any.
    pub fn monitor(&self) -> Option<&AxilMonitor> {
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

impl LiteCore {
    /// The one-beat burst an AXI4-Lite access is, for the log.
    fn burst(&self, addr: u64) -> Burst {
        Burst::incr(0, addr, self.p.bytes.trailing_zeros() as u8, 1)
    }

    /// The response the case's choices give an access to the bus word holding `addr`.
    fn resp_of(&self, addr: u64, c: &ReqChoice) -> Resp {
        let base = self.p.line(addr);
        self.choices
            .error_for(base, base + self.p.bytes as u64, c)
            .unwrap_or(Resp::Okay)
    }
}

impl Agent for LiteCore {
    fn sample(&mut self, m: &Model, cx: &Cx) -> Result<()> {
        self.p.b.sample(m);
        self.p.r.sample(m);
        match self.p.aw.sample(m) {
            Some((addr, _)) => {
                let c = self.choices.of(true, self.n_aw);
                self.aw_q.push_back((addr, self.n_aw, c));
                let b = self.burst(addr);
                self.log.borrow_mut().writes.push((b, Resp::Okay));
                self.n_aw += 1;
                self.aw_wait = 0;
            }
            None if m.get_bool(self.p.aw.valid_port()) => self.aw_wait += 1,
            None => {}
        }
        if let Some(d) = self.p.w.sample(m) {
            self.w_q.push_back(d);
        }
        match self.p.ar.sample(m) {
            Some((addr, _)) => {
                let c = self.choices.of(false, self.n_ar);
                let resp = self.resp_of(addr, &c);
                let b = self.burst(addr);
                self.log.borrow_mut().reads.push((b, resp));
                self.r_q
                    .push_back((addr, resp, cx.cycle + u64::from(c.latency)));
                self.n_ar += 1;
                self.ar_wait = 0;
            }
            None if m.get_bool(self.p.ar.valid_port()) => self.ar_wait += 1,
            None => {}
        }
        while !self.aw_q.is_empty() && !self.w_q.is_empty() {
            let (Some((addr, k, c)), Some((data, strb))) =
                (self.aw_q.pop_front(), self.w_q.pop_front())
            else {
                break;
            };
            let resp = self.resp_of(addr, &c);
            if let Some(e) = self.log.borrow_mut().writes.get_mut(k) {
                e.1 = resp;
            }
            // An errored write changes nothing.
            if resp.is_ok() {
                self.p.store(&mut self.mem.borrow_mut(), addr, data, strb);
            }
            self.b_q.push_back((resp, cx.cycle + u64::from(c.latency)));
        }
        Ok(())
    }

    fn drive(&mut self, m: &mut Model, cx: &Cx) -> Result<()> {
        if cx.in_reset {
            self.p.off(m);
            self.aw_q.clear();
            self.w_q.clear();
            self.b_q.clear();
            self.r_q.clear();
            (self.n_aw, self.n_ar, self.aw_wait, self.ar_wait) = (0, 0, 0, 0);
            *self.log.borrow_mut() = SlaveLog::new(self.choices.exclusive);
            return Ok(());
        }
        let q = self.choices.max_queued.max(1);
        let aw_c = self.choices.of(true, self.n_aw);
        let ar_c = self.choices.of(false, self.n_ar);
        self.p.aw.drive(
            m,
            self.aw_q.len() + self.b_q.len() < q && self.aw_wait >= aw_c.stall,
        );
        self.p.w.drive(m, self.w_q.len() + self.b_q.len() < q);
        self.p
            .ar
            .drive(m, self.r_q.len() < q && self.ar_wait >= ar_c.stall);
        if let Turn::Free { .. } = self.p.b.turn() {
            let due = self.b_q.front().is_some_and(|b| b.1 <= cx.cycle);
            let next = if due { self.b_q.pop_front() } else { None };
            self.p.b.show(m, next.map(|b| b.0));
        }
        if let Turn::Free { .. } = self.p.r.turn() {
            let due = self.r_q.front().is_some_and(|r| r.2 <= cx.cycle);
            let next = if due { self.r_q.pop_front() } else { None };
            let beat = next.map(|(a, resp, _)| {
                let data = if resp.is_ok() {
                    self.p.load(&self.mem.borrow(), a)
                } else {
                    0
                };
                (data, resp)
            });
            self.p.r.show(m, beat);
        }
        Ok(())
    }
}
