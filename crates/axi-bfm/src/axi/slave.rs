//! The AXI4 slave: a sparse memory that answers FIXED, INCR and WRAP bursts.

use std::cell::RefCell;
use std::collections::{HashSet, VecDeque};
use std::rc::Rc;

use sim_runtime::{ClockId, Model};

use super::{AxBeat, RBeat, SlavePorts, WBeat};
use crate::bind::{load_lanes, store_lanes, Bind, MAX_WORDS};
use crate::burst::Burst;
use crate::channel::Turn;
use crate::env::{Agent, Cx, Env};
use crate::error::{Resp, Result};
use crate::handle::Handle;
use crate::mem::Memory;
use crate::monitor::AxiMonitor;
use crate::pause::{BusPauses, ChannelPauses, PauseSpec};
use crate::protocol::Channel;

/// How an AXI4 slave memory answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AxiSlaveConfig {
    /// Cycles from the last write beat to the write response, at least.
    pub write_latency: u64,
    /// Cycles from the read address to the first read beat, at least.
    pub read_latency: u64,
    /// Accepted address requests held at most per direction; AxREADY is low when full.
    pub max_queued: usize,
}

impl Default for AxiSlaveConfig {
    fn default() -> Self {
        AxiSlaveConfig {
            write_latency: 1,
            read_latency: 1,
            max_queued: 8,
        }
    }
}

/// Deliberate protocol errors an AXI4 slave can make, to prove the monitors catch them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SlaveFaults {
    /// Answer every access with EXOKAY.
    pub exokay_always: bool,
    /// Send one write response with no write outstanding.
    pub spurious_b: bool,
    /// Send one read beat with no read outstanding.
    pub spurious_r: bool,
    /// Raise RLAST one beat early on bursts of two or more beats.
    pub rlast_early: bool,
    /// Answer the second of two queued write responses first (once), whatever their IDs.
    pub swap_b: bool,
    /// Answer the second of two queued reads of one ID first.
    pub reorder_reads: bool,
    /// Never answer (accepts requests, sends no response).
    pub hang: bool,
}

struct SReq {
    b: Burst,
    beat: u32,
    ready_at: u64,
    resp: Resp,
}

struct SlaveCore {
    cfg: AxiSlaveConfig,
    faults: SlaveFaults,
    mem: Rc<RefCell<Memory>>,
    p: SlavePorts,
    /// The read channels; `None` on a write-only bus (no `araddr`).
    aw_q: VecDeque<SReq>,
    b_q: VecDeque<(u32, Resp, u64)>,
    r_q: VecDeque<SReq>,
    excl: HashSet<(u32, u64)>,
    /// The R beat on the bus ends its burst.
    r_last_shown: bool,
    /// The R beat on the bus answers nothing (a fault).
    r_spurious_shown: bool,
}

/// The AR and R channels of a slave, bound only when the bus has read channels.
impl BusPauses for SlaveCore {
    fn pauses(&mut self) -> ChannelPauses<'_> {
        ChannelPauses {
            write: [
                &mut self.p.aw.pause,
                &mut self.p.w.pause,
                &mut self.p.b.pause,
            ],
            read: self
                .p
                .rd
                .as_mut()
                .map(|r| [&mut r.ar.pause, &mut r.r.pause]),
        }
    }
}

/// An AXI4 slave bus model backed by a sparse memory with 64-bit addresses.
///
/// It accepts FIXED, INCR and WRAP bursts of any size, applies write strobes, answers writes
/// and reads after the configured latencies and in order, and grants exclusive accesses with
/// a simple per-ID reservation. A bus without `araddr` is write-only: only its write channels
/// are bound.
#[derive(Clone, Debug)]
pub struct AxiSlave {
    h: Handle<SlaveCore, AxiMonitor>,
    mem: Rc<RefCell<Memory>>,
}

impl AxiSlave {
    /// Attaches to the AXI4 master port `<prefix>_*` of the model on `clock`, with a
    /// protocol monitor unless the environment's default monitors are off.
    pub fn attach(env: &mut Env, prefix: &str, clock: ClockId) -> Result<AxiSlave> {
        Self::attach_with(env, prefix, clock, AxiSlaveConfig::default())
    }

    /// As [`AxiSlave::attach`], with a configuration.
    pub fn attach_with(
        env: &mut Env,
        prefix: &str,
        clock: ClockId,
        cfg: AxiSlaveConfig,
    ) -> Result<AxiSlave> {
        let ports = SlavePorts::bind(&Bind::new(env, prefix))?;
        let mem = Rc::new(RefCell::new(Memory::new()));
        let core = SlaveCore {
            cfg,
            faults: SlaveFaults::default(),
            mem: mem.clone(),
            p: ports,
            aw_q: VecDeque::new(),
            b_q: VecDeque::new(),
            r_q: VecDeque::new(),
            excl: HashSet::new(),
            r_last_shown: false,
            r_spurious_shown: false,
        };
        let h = Handle::attach(env, prefix, clock, core, AxiMonitor::attach)?;
        Ok(AxiSlave { h, mem })
    }

    /// The protocol monitor attached with this slave, if any.
    pub fn monitor(&self) -> Option<&AxiMonitor> {
        self.h.monitor()
    }

    /// Installs pause generators from `spec` on AWREADY, WREADY and ARREADY (backpressure)
    /// and on B and R (idle cycles).
    pub fn set_pauses(&self, spec: &PauseSpec) {
        self.h.edit().set_pauses(spec, 0);
    }

    /// Installs a pause generator on one channel only (the others keep theirs).
    pub fn set_channel_pauses(&self, channel: Channel, spec: &PauseSpec) {
        self.h.edit().set_channel_pauses(channel, spec);
    }

    /// Makes the slave break the protocol on purpose.
    pub fn set_faults(&self, faults: SlaveFaults) {
        self.h.edit().faults = faults;
    }

    /// Changes the latencies and queue depth.
    pub fn set_config(&self, cfg: AxiSlaveConfig) {
        self.h.edit().cfg = cfg;
    }

    /// The memory behind the slave, shared: read or preload it between runs.
    pub fn mem(&self) -> Rc<RefCell<Memory>> {
        self.mem.clone()
    }

    /// Reads `len` bytes of the memory.
    pub fn mem_read(&self, addr: u64, len: usize) -> Vec<u8> {
        self.mem.borrow().read_vec(addr, len)
    }

    /// Writes bytes into the memory directly.
    pub fn mem_write(&self, addr: u64, data: &[u8]) {
        self.mem.borrow_mut().write(addr, data);
    }
}

impl SlaveCore {
    fn on_w(&mut self, w: &WBeat, cycle: u64) {
        let bus_bytes = self.p.bus_bytes;
        let Some(req) = self.aw_q.front_mut() else {
            return;
        };
        if req.beat == 0 && req.b.lock {
            // An exclusive write succeeds only on a live reservation; a failed one must not
            // change memory.
            req.resp = if self.excl.remove(&(req.b.id, req.b.addr)) {
                Resp::ExOkay
            } else {
                Resp::Okay
            };
        }
        let write = !(req.b.lock && req.resp == Resp::Okay);
        if write {
            let base = req.b.beat_line(req.beat, bus_bytes);
            let (lo, hi) = req.b.beat_lanes(req.beat, bus_bytes);
            store_lanes(&mut self.mem.borrow_mut(), base, lo..hi, &w.words, w.strb);
        }
        req.beat += 1;
        if w.last || req.beat > u32::from(req.b.len) {
            let ready_at = cycle + self.cfg.write_latency;
            if let Some(r) = self.aw_q.pop_front() {
                self.b_q.push_back((r.b.id, r.resp, ready_at));
            }
        }
    }

    /// The next beat of the oldest read.
    fn fill_r(&self) -> Option<RBeat> {
        let bus_bytes = self.p.bus_bytes;
        let req = self.r_q.front()?;
        let base = req.b.beat_line(req.beat, bus_bytes);
        let (lo, hi) = req.b.beat_lanes(req.beat, bus_bytes);
        let mut words = [0; MAX_WORDS];
        load_lanes(&self.mem.borrow(), base, lo..hi, &mut words);
        let last_beat = if self.faults.rlast_early && req.b.len >= 1 {
            u32::from(req.b.len) - 1
        } else {
            u32::from(req.b.len)
        };
        Some(RBeat {
            id: req.b.id,
            resp: req.resp,
            last: req.beat >= last_beat,
            words,
        })
    }
}

fn sreq(a: AxBeat, ready_at: u64) -> SReq {
    SReq {
        b: a.b,
        beat: 0,
        ready_at,
        resp: Resp::Okay,
    }
}

impl Agent for SlaveCore {
    fn sample(&mut self, m: &Model, cx: &Cx) -> Result<()> {
        self.p.b.sample(m);
        let r_taken = self
            .p
            .rd
            .as_mut()
            .is_some_and(|rd| rd.r.sample(m).is_some());
        if r_taken {
            if self.r_spurious_shown {
                self.r_spurious_shown = false;
            } else if let Some(req) = self.r_q.front_mut() {
                req.beat += 1;
                if self.r_last_shown {
                    self.r_q.pop_front();
                }
            }
        }
        if let Some(a) = self.p.aw.sample(m) {
            self.aw_q.push_back(sreq(a, 0));
        }
        if let Some(w) = self.p.w.sample(m) {
            self.on_w(&w, cx.cycle);
        }
        if let Some(a) = self.p.rd.as_ref().and_then(|rd| rd.ar.sample(m)) {
            let mut r = sreq(a, cx.cycle + self.cfg.read_latency);
            if r.b.lock {
                self.excl.insert((r.b.id, r.b.addr));
                r.resp = Resp::ExOkay;
            }
            self.r_q.push_back(r);
        }
        Ok(())
    }

    fn drive(&mut self, m: &mut Model, cx: &Cx) -> Result<()> {
        if cx.in_reset {
            self.p.off(m);
            self.aw_q.clear();
            self.b_q.clear();
            self.r_q.clear();
            self.excl.clear();
            return Ok(());
        }
        let f = self.faults;
        let q = self.cfg.max_queued.max(1);
        let aw_room = self.aw_q.len() < q;
        self.p.aw.drive(m, aw_room);
        let w_want = !self.aw_q.is_empty();
        self.p.w.drive(m, w_want);

        // The swap fault holds the first response until a second one is due, then answers
        // the second first.
        if let Turn::Free { go } = self.p.b.turn() {
            let mut hold = false;
            if f.swap_b {
                if self.b_q.len() >= 2 && self.b_q[1].2 <= cx.cycle {
                    self.b_q.swap(0, 1);
                    self.faults.swap_b = false;
                } else {
                    hold = true;
                }
            }
            let due = self.b_q.front().is_some_and(|b| b.2 <= cx.cycle);
            let next = if f.spurious_b && self.b_q.is_empty() {
                self.faults.spurious_b = false;
                Some((0, Resp::Okay, 0))
            } else if due && go && !f.hang && !hold {
                self.b_q.pop_front()
            } else {
                None
            };
            let exokay = |resp| if f.exokay_always { Resp::ExOkay } else { resp };
            self.p
                .b
                .show(m, next.map(|(id, resp, _)| (id, exokay(resp))));
        }

        let Some(mut rd) = self.p.rd.take() else {
            // A write-only bus: the write channels of this edge are all there is.
            return Ok(());
        };
        rd.ar.drive(m, self.r_q.len() < q);
        if let Turn::Free { go } = rd.r.turn() {
            // The reorder fault holds the first read until a second of the same ID is due,
            // then answers the second first.
            let mut hold = false;
            if f.reorder_reads {
                let pair = self.r_q.len() >= 2
                    && self.r_q[0].b.id == self.r_q[1].b.id
                    && self.r_q[0].beat == 0
                    && self.r_q[1].ready_at <= cx.cycle;
                if pair {
                    self.r_q.swap(0, 1);
                    self.faults.reorder_reads = false;
                } else {
                    hold = true;
                }
            }
            let due = !hold && self.r_q.front().is_some_and(|r| r.ready_at <= cx.cycle);
            let beat = if f.spurious_r && self.r_q.is_empty() {
                self.faults.spurious_r = false;
                self.r_spurious_shown = true;
                Some(RBeat {
                    id: 0,
                    resp: Resp::Okay,
                    last: true,
                    words: [0; MAX_WORDS],
                })
            } else if due && go && !f.hang {
                self.fill_r()
            } else {
                None
            };
            let beat = beat.map(|mut b| {
                if f.exokay_always {
                    b.resp = Resp::ExOkay;
                }
                self.r_last_shown = b.last;
                b
            });
            rd.r.show(m, beat);
        }
        self.p.rd = Some(rd);
        Ok(())
    }

    fn set_pauses(&mut self, spec: &PauseSpec, salt: u64) {
        self.set_bus_pauses(spec, salt.wrapping_mul(16) + 8);
    }
}
