//! AXI4-Lite bus models: a master of single-word reads and writes, and a slave backed by
//! sparse memory.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

use sim_runtime::{ClockId, Model, Port};

use crate::axi::TxnId;
use crate::bind::Bind;
use crate::env::{Agent, Cx, Env, Idle, DEFAULT_TIMEOUT_CYCLES};
use crate::error::{BfmError, Resp, Result};
use crate::mem::Memory;
use crate::monitor::{AxilMonitor, Channel};
use crate::pause::{BusPauses, PauseSpec};

/// How an AXI4-Lite master paces its accesses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AxilMasterConfig {
    /// Writes in flight at most, and likewise reads.
    pub max_outstanding: usize,
    /// Cycle limit of the blocking calls.
    pub timeout_cycles: u64,
    /// AxPROT driven when the bus has it.
    pub prot: u8,
}

impl Default for AxilMasterConfig {
    fn default() -> Self {
        AxilMasterConfig {
            max_outstanding: 4,
            timeout_cycles: DEFAULT_TIMEOUT_CYCLES,
            prot: 0,
        }
    }
}

/// Deliberate protocol errors of the AXI4-Lite models (the master uses the first four, the
/// slave the rest), to prove the monitors catch them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LiteFaults {
    /// Master: raise AWVALID while reset is asserted.
    pub valid_in_reset: bool,
    /// Master: raise AWVALID in the cycle right after reset is released.
    pub valid_right_after_reset: bool,
    /// Master: drop AWVALID after one stalled cycle.
    pub drop_valid_on_stall: bool,
    /// Master: change WDATA while WVALID is stalled.
    pub change_payload_on_stall: bool,
    /// Slave: send one write response with no write outstanding.
    pub spurious_b: bool,
    /// Slave: send one read response with no read outstanding.
    pub spurious_r: bool,
    /// Slave: answer with EXOKAY.
    pub exokay_always: bool,
    /// Slave: never answer.
    pub hang: bool,
}

struct LOp {
    done: bool,
    data: u64,
    resp: Resp,
}

struct MasterCore {
    cfg: AxilMasterConfig,
    faults: LiteFaults,
    awaddr: Port,
    awprot: Option<Port>,
    awvalid: Port,
    awready: Port,
    wdata: Port,
    wstrb: Port,
    wvalid: Port,
    wready: Port,
    bresp: Port,
    bvalid: Port,
    bready: Port,
    araddr: Port,
    arprot: Option<Port>,
    arvalid: Port,
    arready: Port,
    rdata: Port,
    rresp: Port,
    rvalid: Port,
    rready: Port,
    next: u64,
    ops: HashMap<u64, LOp>,
    w_admit: VecDeque<(u64, u64, u64, u64)>,
    r_admit: VecDeque<(u64, u64)>,
    aw_q: VecDeque<u64>,
    w_q: VecDeque<(u64, u64)>,
    ar_q: VecDeque<u64>,
    b_wait: VecDeque<u64>,
    r_wait: VecDeque<u64>,
    aw_cur: Option<u64>,
    w_cur: Option<(u64, u64)>,
    ar_cur: Option<u64>,
    aw_shown: bool,
    w_shown: bool,
    ar_shown: bool,
    aw_stalled: bool,
    w_stalled: bool,
    ar_stalled: bool,
    b_shown: bool,
    r_shown: bool,
    p: BusPauses,
    /// The last drive left the bus idle (no VALID, READYs up) with nothing queued.
    idle_driven: bool,
    /// Raised while idle with no response owed (see [`Agent::idle`]).
    idle: Idle,
}

/// An AXI4-Lite master bus model: single-beat reads and writes, several in flight, answered
/// in order.
#[derive(Clone)]
pub struct AxilMaster {
    inner: Rc<RefCell<MasterCore>>,
    clock: ClockId,
    bus: String,
    data_bytes: usize,
    monitor: Option<AxilMonitor>,
}

impl std::fmt::Debug for AxilMaster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AxilMaster")
            .field("bus", &self.bus)
            .finish_non_exhaustive()
    }
}

impl AxilMaster {
    /// Attaches to the AXI4-Lite slave port `<prefix>_*` of the model on `clock`, with a
    /// protocol monitor unless the environment's default monitors are off.
    pub fn attach(env: &mut Env, prefix: &str, clock: ClockId) -> Result<AxilMaster> {
        Self::attach_with(env, prefix, clock, AxilMasterConfig::default())
    }

    /// As [`AxilMaster::attach`], with a configuration.
    pub fn attach_with(
        env: &mut Env,
        prefix: &str,
        clock: ClockId,
        cfg: AxilMasterConfig,
    ) -> Result<AxilMaster> {
        let b = Bind::new(env, prefix);
        let wdata = b.drive("wdata")?;
        let data_bytes = b.data_bytes(wdata, "wdata")?;
        if data_bytes > 8 {
            return Err(BfmError::Bind {
                bus: prefix.to_string(),
                problem: "AXI4-Lite data is 32 or 64 bits wide".into(),
            });
        }
        let core = MasterCore {
            cfg,
            faults: LiteFaults::default(),
            awaddr: b.drive("awaddr")?,
            awprot: b.opt_drive("awprot")?,
            awvalid: b.drive("awvalid")?,
            awready: b.read("awready")?,
            wdata,
            wstrb: b.drive("wstrb")?,
            wvalid: b.drive("wvalid")?,
            wready: b.read("wready")?,
            bresp: b.read("bresp")?,
            bvalid: b.read("bvalid")?,
            bready: b.drive("bready")?,
            araddr: b.drive("araddr")?,
            arprot: b.opt_drive("arprot")?,
            arvalid: b.drive("arvalid")?,
            arready: b.read("arready")?,
            rdata: b.read("rdata")?,
            rresp: b.read("rresp")?,
            rvalid: b.read("rvalid")?,
            rready: b.drive("rready")?,
            next: 1,
            ops: HashMap::new(),
            w_admit: VecDeque::new(),
            r_admit: VecDeque::new(),
            aw_q: VecDeque::new(),
            w_q: VecDeque::new(),
            ar_q: VecDeque::new(),
            b_wait: VecDeque::new(),
            r_wait: VecDeque::new(),
            aw_cur: None,
            w_cur: None,
            ar_cur: None,
            aw_shown: false,
            w_shown: false,
            ar_shown: false,
            aw_stalled: false,
            w_stalled: false,
            ar_stalled: false,
            b_shown: false,
            r_shown: false,
            p: BusPauses::default(),
            idle_driven: false,
            idle: Idle::new(),
        };
        let inner = Rc::new(RefCell::new(core));
        env.add_agent(clock, inner.clone());
        let monitor = if env.monitors_enabled() {
            Some(AxilMonitor::attach(env, prefix, clock)?)
        } else {
            None
        };
        Ok(AxilMaster {
            inner,
            clock,
            bus: prefix.to_string(),
            data_bytes,
            monitor,
        })
    }

    /// The protocol monitor attached with this master, if any.
    pub fn monitor(&self) -> Option<&AxilMonitor> {
        self.monitor.as_ref()
    }

    /// The core, for a change that may give it work: the environment runs it again.
    fn edit(&self) -> std::cell::RefMut<'_, MasterCore> {
        let c = self.inner.borrow_mut();
        c.idle.set(false);
        c
    }

    /// Installs pause generators from `spec` on AW, W, AR (idle) and B, R (backpressure).
    pub fn set_pauses(&self, spec: &PauseSpec) {
        self.edit().set_pauses(spec, 0);
    }

    /// Installs a pause generator on one channel only (the others keep theirs).
    pub fn set_channel_pauses(&self, channel: Channel, spec: &PauseSpec) {
        self.edit().p.set_channel(channel, spec);
    }

    /// Makes the master break the protocol on purpose.
    pub fn set_faults(&self, faults: LiteFaults) {
        self.edit().faults = faults;
    }

    fn full_strb(&self) -> u64 {
        (1u64 << self.data_bytes) - 1
    }

    /// Queues a write of one data word with byte strobes `strb`.
    pub fn start_write(&self, addr: u64, data: u64, strb: u64) -> Result<TxnId> {
        let mut c = self.edit();
        let t = c.next;
        c.next += 1;
        c.ops.insert(
            t,
            LOp {
                done: false,
                data: 0,
                resp: Resp::Okay,
            },
        );
        c.w_admit
            .push_back((t, addr, data, strb & self.full_strb()));
        Ok(TxnId(t))
    }

    /// Queues a read of one data word.
    pub fn start_read(&self, addr: u64) -> Result<TxnId> {
        let mut c = self.edit();
        let t = c.next;
        c.next += 1;
        c.ops.insert(
            t,
            LOp {
                done: false,
                data: 0,
                resp: Resp::Okay,
            },
        );
        c.r_admit.push_back((t, addr));
        Ok(TxnId(t))
    }

    /// True once the access has completed.
    pub fn is_done(&self, t: TxnId) -> bool {
        self.inner.borrow().ops.get(&t.0).is_some_and(|o| o.done)
    }

    /// Runs the environment until `t` completes, within the configured cycle limit.
    pub fn wait(&self, env: &mut Env, t: TxnId) -> Result<()> {
        let limit = self.inner.borrow().cfg.timeout_cycles;
        let what = format!("AXI4-Lite access #{} on `{}`", t.0, self.bus);
        env.run_until_agents(self.clock, limit, &what, || self.is_done(t))?;
        Ok(())
    }

    /// The data (zero for a write) and response of a completed access, taken once.
    pub fn take(&self, t: TxnId) -> Result<(u64, Resp)> {
        let mut c = self.inner.borrow_mut();
        match c.ops.get(&t.0) {
            Some(o) if o.done => {
                let r = (o.data, o.resp);
                c.ops.remove(&t.0);
                Ok(r)
            }
            _ => Err(BfmError::NoSuchTxn {
                bus: self.bus.clone(),
                id: t.0,
            }),
        }
    }

    /// Writes a word with the given strobes and waits; returns the response.
    pub fn write_resp(&self, env: &mut Env, addr: u64, data: u64, strb: u64) -> Result<Resp> {
        let t = self.start_write(addr, data, strb)?;
        self.wait(env, t)?;
        Ok(self.take(t)?.1)
    }

    /// Writes a whole word and waits; a response other than OKAY is an error.
    pub fn write(&self, env: &mut Env, addr: u64, data: u64) -> Result<()> {
        self.write_strb(env, addr, data, self.full_strb())
    }

    /// Writes the bytes of a word that `strb` selects and waits; a response other than OKAY
    /// is an error.
    pub fn write_strb(&self, env: &mut Env, addr: u64, data: u64, strb: u64) -> Result<()> {
        match self.write_resp(env, addr, data, strb)? {
            Resp::Okay => Ok(()),
            resp => Err(BfmError::Response {
                bus: self.bus.clone(),
                what: "write",
                addr,
                resp,
            }),
        }
    }

    /// Reads a word and waits; returns data and response.
    pub fn read_resp(&self, env: &mut Env, addr: u64) -> Result<(u64, Resp)> {
        let t = self.start_read(addr)?;
        self.wait(env, t)?;
        self.take(t)
    }

    /// Reads a word and waits; a response other than OKAY is an error.
    pub fn read(&self, env: &mut Env, addr: u64) -> Result<u64> {
        match self.read_resp(env, addr)? {
            (d, Resp::Okay) => Ok(d),
            (_, resp) => Err(BfmError::Response {
                bus: self.bus.clone(),
                what: "read",
                addr,
                resp,
            }),
        }
    }
}

impl Agent for MasterCore {
    fn sample(&mut self, m: &Model, _cx: &Cx) -> Result<()> {
        let aw_fire = self.aw_shown && m.get_bool(self.awready);
        self.aw_stalled = self.aw_shown && !aw_fire;
        if aw_fire {
            self.aw_cur = None;
        }
        let w_fire = self.w_shown && m.get_bool(self.wready);
        self.w_stalled = self.w_shown && !w_fire;
        if w_fire {
            self.w_cur = None;
        }
        let ar_fire = self.ar_shown && m.get_bool(self.arready);
        self.ar_stalled = self.ar_shown && !ar_fire;
        if ar_fire {
            self.ar_cur = None;
        }
        if self.b_shown && m.get_bool(self.bvalid) {
            let resp = Resp::from_bits(m.get(self.bresp));
            if let Some(o) = self.b_wait.pop_front().and_then(|t| self.ops.get_mut(&t)) {
                o.done = true;
                o.resp = resp;
            }
        }
        if self.r_shown && m.get_bool(self.rvalid) {
            let resp = Resp::from_bits(m.get(self.rresp));
            let data = m.get(self.rdata);
            if let Some(o) = self.r_wait.pop_front().and_then(|t| self.ops.get_mut(&t)) {
                o.done = true;
                o.resp = resp;
                o.data = data;
            }
        }
        Ok(())
    }

    fn drive(&mut self, m: &mut Model, cx: &Cx) -> Result<()> {
        let f = self.faults;
        let in_reset = if f.valid_right_after_reset {
            cx.reset_now
        } else {
            cx.in_reset
        };
        if in_reset {
            for p in [
                self.awvalid,
                self.wvalid,
                self.arvalid,
                self.bready,
                self.rready,
            ] {
                m.set_bool(p, false);
            }
            self.aw_shown = false;
            self.w_shown = false;
            self.ar_shown = false;
            self.aw_stalled = false;
            self.w_stalled = false;
            self.ar_stalled = false;
            self.b_shown = false;
            self.r_shown = false;
            self.idle_driven = false;
            if f.valid_in_reset {
                m.set_bool(self.awvalid, true);
            }
            return Ok(());
        }
        let nothing_to_do = self.w_admit.is_empty()
            && self.r_admit.is_empty()
            && self.aw_q.is_empty()
            && self.w_q.is_empty()
            && self.ar_q.is_empty()
            && self.aw_cur.is_none()
            && self.w_cur.is_none()
            && self.ar_cur.is_none()
            && !self.aw_stalled
            && !self.w_stalled
            && !self.ar_stalled;
        if nothing_to_do && self.idle_driven && self.p.all_never() {
            // The bus already shows an idle master and nothing would change it; with no
            // response owed either, the next edges need not run it at all.
            self.idle
                .set(self.b_wait.is_empty() && self.r_wait.is_empty());
            return Ok(());
        }
        self.idle.set(false);
        self.idle_driven = false;
        let limit = self.cfg.max_outstanding.max(1);
        while self.b_wait.len() < limit {
            let Some((t, addr, data, strb)) = self.w_admit.pop_front() else {
                break;
            };
            self.aw_q.push_back(addr);
            self.w_q.push_back((data, strb));
            self.b_wait.push_back(t);
        }
        while self.r_wait.len() < limit {
            let Some((t, addr)) = self.r_admit.pop_front() else {
                break;
            };
            self.ar_q.push_back(addr);
            self.r_wait.push_back(t);
        }

        let aw_go = !self.p.aw.pause_now();
        if self.aw_stalled {
            if f.drop_valid_on_stall {
                m.set_bool(self.awvalid, false);
                self.aw_shown = false;
            }
        } else {
            if self.aw_cur.is_none() && aw_go {
                self.aw_cur = self.aw_q.pop_front();
            }
            self.aw_shown = self.aw_cur.is_some();
            if let Some(a) = self.aw_cur {
                m.set(self.awaddr, a);
                if let Some(p) = self.awprot {
                    m.set(p, u64::from(self.cfg.prot));
                }
            }
            m.set_bool(self.awvalid, self.aw_shown);
        }

        let w_go = !self.p.w.pause_now();
        if self.w_stalled {
            if f.change_payload_on_stall {
                if let Some((d, _)) = self.w_cur.as_mut() {
                    *d ^= 1;
                    m.set(self.wdata, *d);
                }
            }
        } else {
            if self.w_cur.is_none() && w_go {
                self.w_cur = self.w_q.pop_front();
            }
            self.w_shown = self.w_cur.is_some();
            if let Some((d, s)) = self.w_cur {
                m.set(self.wdata, d);
                m.set(self.wstrb, s);
            }
            m.set_bool(self.wvalid, self.w_shown);
        }

        let ar_go = !self.p.ar.pause_now();
        if !self.ar_stalled {
            if self.ar_cur.is_none() && ar_go {
                self.ar_cur = self.ar_q.pop_front();
            }
            self.ar_shown = self.ar_cur.is_some();
            if let Some(a) = self.ar_cur {
                m.set(self.araddr, a);
                if let Some(p) = self.arprot {
                    m.set(p, u64::from(self.cfg.prot));
                }
            }
            m.set_bool(self.arvalid, self.ar_shown);
        }

        self.b_shown = !self.p.b.pause_now();
        m.set_bool(self.bready, self.b_shown);
        self.r_shown = !self.p.r.pause_now();
        m.set_bool(self.rready, self.r_shown);
        self.idle_driven = nothing_to_do && !self.aw_shown && !self.w_shown && !self.ar_shown;
        Ok(())
    }

    fn set_pauses(&mut self, spec: &PauseSpec, salt: u64) {
        self.p = BusPauses::from_spec(spec, salt.wrapping_mul(16));
        self.idle.set(false);
    }

    fn idle(&self) -> Option<(Idle, Vec<Port>)> {
        Some((self.idle.clone(), Vec::new()))
    }
}

/// How an AXI4-Lite slave memory answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AxilSlaveConfig {
    /// Cycles from a complete write to its response, at least.
    pub write_latency: u64,
    /// Cycles from a read address to its data, at least.
    pub read_latency: u64,
    /// Requests held at most per channel; READY is low when full.
    pub max_queued: usize,
}

impl Default for AxilSlaveConfig {
    fn default() -> Self {
        AxilSlaveConfig {
            write_latency: 1,
            read_latency: 1,
            max_queued: 4,
        }
    }
}

struct SlaveCore {
    cfg: AxilSlaveConfig,
    faults: LiteFaults,
    mem: Rc<RefCell<Memory>>,
    bytes: usize,
    awaddr: Port,
    awvalid: Port,
    awready: Port,
    wdata: Port,
    wstrb: Port,
    wvalid: Port,
    wready: Port,
    bresp: Port,
    bvalid: Port,
    bready: Port,
    araddr: Port,
    arvalid: Port,
    arready: Port,
    rdata: Port,
    rresp: Port,
    rvalid: Port,
    rready: Port,
    aw_q: VecDeque<u64>,
    w_q: VecDeque<(u64, u64)>,
    b_q: VecDeque<u64>,
    r_q: VecDeque<(u64, u64)>,
    aw_shown: bool,
    w_shown: bool,
    ar_shown: bool,
    b_shown: bool,
    r_shown: bool,
    p: BusPauses,
}

/// An AXI4-Lite slave bus model backed by a sparse memory.
#[derive(Clone)]
pub struct AxilSlave {
    inner: Rc<RefCell<SlaveCore>>,
    mem: Rc<RefCell<Memory>>,
    monitor: Option<AxilMonitor>,
}

impl std::fmt::Debug for AxilSlave {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AxilSlave").finish_non_exhaustive()
    }
}

impl AxilSlave {
    /// Attaches to the AXI4-Lite master port `<prefix>_*` of the model on `clock`, with a
    /// protocol monitor unless the environment's default monitors are off.
    pub fn attach(env: &mut Env, prefix: &str, clock: ClockId) -> Result<AxilSlave> {
        Self::attach_with(env, prefix, clock, AxilSlaveConfig::default())
    }

    /// As [`AxilSlave::attach`], with a configuration.
    pub fn attach_with(
        env: &mut Env,
        prefix: &str,
        clock: ClockId,
        cfg: AxilSlaveConfig,
    ) -> Result<AxilSlave> {
        let b = Bind::new(env, prefix);
        let wdata = b.read("wdata")?;
        let bytes = b.data_bytes(wdata, "wdata")?;
        if bytes > 8 {
            return Err(BfmError::Bind {
                bus: prefix.to_string(),
                problem: "AXI4-Lite data is 32 or 64 bits wide".into(),
            });
        }
        let mem = Rc::new(RefCell::new(Memory::new()));
        let core = SlaveCore {
            cfg,
            faults: LiteFaults::default(),
            mem: mem.clone(),
            bytes,
            awaddr: b.read("awaddr")?,
            awvalid: b.read("awvalid")?,
            awready: b.drive("awready")?,
            wdata,
            wstrb: b.read("wstrb")?,
            wvalid: b.read("wvalid")?,
            wready: b.drive("wready")?,
            bresp: b.drive("bresp")?,
            bvalid: b.drive("bvalid")?,
            bready: b.read("bready")?,
            araddr: b.read("araddr")?,
            arvalid: b.read("arvalid")?,
            arready: b.drive("arready")?,
            rdata: b.drive("rdata")?,
            rresp: b.drive("rresp")?,
            rvalid: b.drive("rvalid")?,
            rready: b.read("rready")?,
            aw_q: VecDeque::new(),
            w_q: VecDeque::new(),
            b_q: VecDeque::new(),
            r_q: VecDeque::new(),
            aw_shown: false,
            w_shown: false,
            ar_shown: false,
            b_shown: false,
            r_shown: false,
            p: BusPauses::default(),
        };
        let inner = Rc::new(RefCell::new(core));
        env.add_agent(clock, inner.clone());
        let monitor = if env.monitors_enabled() {
            Some(AxilMonitor::attach(env, prefix, clock)?)
        } else {
            None
        };
        Ok(AxilSlave {
            inner,
            mem,
            monitor,
        })
    }

    /// The protocol monitor attached with this slave, if any.
    pub fn monitor(&self) -> Option<&AxilMonitor> {
        self.monitor.as_ref()
    }

    /// Installs pause generators from `spec` on AWREADY, WREADY, ARREADY (backpressure) and
    /// B, R (idle).
    pub fn set_pauses(&self, spec: &PauseSpec) {
        self.inner.borrow_mut().set_pauses(spec, 0);
    }

    /// Installs a pause generator on one channel only (the others keep theirs).
    pub fn set_channel_pauses(&self, channel: Channel, spec: &PauseSpec) {
        self.inner.borrow_mut().p.set_channel(channel, spec);
    }

    /// Makes the slave break the protocol on purpose.
    pub fn set_faults(&self, faults: LiteFaults) {
        self.inner.borrow_mut().faults = faults;
    }

    /// The memory behind the slave, shared.
    pub fn mem(&self) -> Rc<RefCell<Memory>> {
        self.mem.clone()
    }
}

impl SlaveCore {
    fn word(&self, addr: u64) -> u64 {
        let base = addr & !(self.bytes as u64 - 1);
        let mem = self.mem.borrow();
        (0..self.bytes).fold(0, |acc, i| {
            acc | u64::from(mem.read_byte(base + i as u64)) << (8 * i)
        })
    }
}

impl Agent for SlaveCore {
    fn sample(&mut self, m: &Model, cx: &Cx) -> Result<()> {
        if self.b_shown && m.get_bool(self.bready) {
            self.b_shown = false;
        }
        if self.r_shown && m.get_bool(self.rready) {
            self.r_shown = false;
        }
        if self.aw_shown && m.get_bool(self.awvalid) {
            self.aw_q.push_back(m.get(self.awaddr));
        }
        if self.w_shown && m.get_bool(self.wvalid) {
            self.w_q.push_back((m.get(self.wdata), m.get(self.wstrb)));
        }
        if self.ar_shown && m.get_bool(self.arvalid) {
            let a = m.get(self.araddr);
            self.r_q.push_back((a, cx.cycle + self.cfg.read_latency));
        }
        while !self.aw_q.is_empty() && !self.w_q.is_empty() {
            let (Some(addr), Some((data, strb))) = (self.aw_q.pop_front(), self.w_q.pop_front())
            else {
                break;
            };
            let base = addr & !(self.bytes as u64 - 1);
            let mut mem = self.mem.borrow_mut();
            for i in 0..self.bytes {
                if strb >> i & 1 == 1 {
                    mem.write_byte(base + i as u64, (data >> (8 * i)) as u8);
                }
            }
            self.b_q.push_back(cx.cycle + self.cfg.write_latency);
        }
        Ok(())
    }

    fn drive(&mut self, m: &mut Model, cx: &Cx) -> Result<()> {
        if cx.in_reset {
            for p in [
                self.awready,
                self.wready,
                self.arready,
                self.bvalid,
                self.rvalid,
            ] {
                m.set_bool(p, false);
            }
            self.aw_q.clear();
            self.w_q.clear();
            self.b_q.clear();
            self.r_q.clear();
            self.aw_shown = false;
            self.w_shown = false;
            self.ar_shown = false;
            self.b_shown = false;
            self.r_shown = false;
            return Ok(());
        }
        let f = self.faults;
        let q = self.cfg.max_queued.max(1);
        self.aw_shown = !self.p.aw.pause_now() && self.aw_q.len() + self.b_q.len() < q;
        m.set_bool(self.awready, self.aw_shown);
        self.w_shown = !self.p.w.pause_now() && self.w_q.len() + self.b_q.len() < q;
        m.set_bool(self.wready, self.w_shown);
        self.ar_shown = !self.p.ar.pause_now() && self.r_q.len() < q;
        m.set_bool(self.arready, self.ar_shown);
        let resp = if f.exokay_always {
            Resp::ExOkay
        } else {
            Resp::Okay
        };

        let b_go = !self.p.b.pause_now();
        if !self.b_shown {
            let due = self.b_q.front().is_some_and(|t| *t <= cx.cycle);
            let go = if f.spurious_b && self.b_q.is_empty() {
                self.faults.spurious_b = false;
                true
            } else if due && b_go && !f.hang {
                self.b_q.pop_front();
                true
            } else {
                false
            };
            if go {
                m.set(self.bresp, resp.bits());
            }
            m.set_bool(self.bvalid, go);
            self.b_shown = go;
        }

        let r_go = !self.p.r.pause_now();
        if !self.r_shown {
            let due = self.r_q.front().is_some_and(|r| r.1 <= cx.cycle);
            let data = if f.spurious_r && self.r_q.is_empty() {
                self.faults.spurious_r = false;
                Some(0)
            } else if due && r_go && !f.hang {
                self.r_q.pop_front().map(|(a, _)| self.word(a))
            } else {
                None
            };
            if let Some(d) = data {
                m.set(self.rdata, d);
                m.set(self.rresp, resp.bits());
            }
            m.set_bool(self.rvalid, data.is_some());
            self.r_shown = data.is_some();
        }
        Ok(())
    }

    fn set_pauses(&mut self, spec: &PauseSpec, salt: u64) {
        self.p = BusPauses::from_spec(spec, salt.wrapping_mul(16) + 8);
    }
}
