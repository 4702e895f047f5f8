//! AXI4-Lite bus models: a master of single-word reads and writes, and a slave backed by
//! sparse memory, each built of five channels (a [`Source`] or [`Sink`] each).

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

use sim_runtime::{ClockId, Model, Port};

use crate::axi::TxnId;
use crate::bind::Bind;
use crate::channel::{Garbage, Payload, Sink, Source, Turn};
use crate::env::{Agent, Cx, Env, Idle, DEFAULT_TIMEOUT_CYCLES};
use crate::error::{BfmError, Resp, Result};
use crate::handle::Handle;
use crate::mem::Memory;
use crate::monitor::AxilMonitor;
use crate::pause::{BusPauses, ChannelPauses, PauseSpec};
use crate::protocol::Channel;

mod rslave;
pub use rslave::RandomAxilSlave;

/// How an AXI4-Lite master paces its accesses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AxilMasterConfig {
    /// Writes in flight at most, and likewise reads.
    pub max_outstanding: usize,
    /// Cycle limit of the blocking calls.
    pub timeout_cycles: u64,
    /// AxPROT driven when the bus has it.
    pub prot: u8,
    /// Cycles an access may wait for its response once the slave has accepted it whole (the
    /// address, and the data of a write); past them it fails as
    /// [`BfmError::MissingResponse`], naming the access. Below the monitors' latency bound,
    /// so that a lost response is reported as one. 0 turns the check off.
    pub response_timeout_cycles: u64,
}

/// The default of [`AxilMasterConfig::response_timeout_cycles`].
pub const DEFAULT_RESPONSE_TIMEOUT_CYCLES: u64 = 1_000;

impl Default for AxilMasterConfig {
    fn default() -> Self {
        AxilMasterConfig {
            max_outstanding: 4,
            timeout_cycles: DEFAULT_TIMEOUT_CYCLES,
            prot: 0,
            response_timeout_cycles: DEFAULT_RESPONSE_TIMEOUT_CYCLES,
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
    /// Slave: raise RVALID at the same edge as the AR handshake of a read (once), answering
    /// it before it is accepted.
    pub r_with_request: bool,
}

/// The payload of AW or AR: the address, and AxPROT when the bus has it.
struct AddrPorts {
    addr: Port,
    prot: Option<Port>,
}

impl AddrPorts {
    fn bind(b: &Bind<'_>, ch: &str, out: bool) -> Result<AddrPorts> {
        Ok(AddrPorts {
            addr: b.port(&format!("{ch}addr"), out)?,
            // The slave ignores AxPROT: it binds no port for it.
            prot: if out {
                b.opt_port(&format!("{ch}prot"), out)?
            } else {
                None
            },
        })
    }
}

impl Payload for AddrPorts {
    /// The address and AxPROT.
    type Beat = (u64, u8);
    #[inline]
    fn drive(&self, m: &mut Model, &(addr, prot): &(u64, u8)) {
        m.set(self.addr, addr);
        if let Some(p) = self.prot {
            m.set(p, u64::from(prot));
        }
    }
    #[inline]
    fn sample(&self, m: &Model) -> (u64, u8) {
        (m.get(self.addr), self.prot.map_or(0, |p| m.get(p) as u8))
    }
    fn garbage(&self, m: &mut Model, g: &mut Garbage) {
        let g = g.next();
        m.set(self.addr, g);
        if let Some(p) = self.prot {
            m.set(p, g >> 61);
        }
    }
}

/// The payload of W: data and strobes.
struct WPorts {
    data: Port,
    strb: Port,
}

impl Payload for WPorts {
    /// Data and strobes.
    type Beat = (u64, u64);
    #[inline]
    fn drive(&self, m: &mut Model, &(data, strb): &(u64, u64)) {
        m.set(self.data, data);
        m.set(self.strb, strb);
    }
    #[inline]
    fn sample(&self, m: &Model) -> (u64, u64) {
        (m.get(self.data), m.get(self.strb))
    }
    fn garbage(&self, m: &mut Model, g: &mut Garbage) {
        m.set(self.data, g.next());
        m.set(self.strb, g.next());
    }
}

/// The payload of B: the response.
struct BPorts {
    resp: Port,
}

impl Payload for BPorts {
    type Beat = Resp;
    #[inline]
    fn drive(&self, m: &mut Model, resp: &Resp) {
        m.set(self.resp, resp.bits());
    }
    #[inline]
    fn sample(&self, m: &Model) -> Resp {
        Resp::from_bits(m.get(self.resp))
    }
    fn garbage(&self, _: &mut Model, _: &mut Garbage) {}
}

/// The payload of R: data and response.
struct RPorts {
    data: Port,
    resp: Port,
}

impl Payload for RPorts {
    type Beat = (u64, Resp);
    #[inline]
    fn drive(&self, m: &mut Model, &(data, resp): &(u64, Resp)) {
        m.set(self.data, data);
        m.set(self.resp, resp.bits());
    }
    #[inline]
    fn sample(&self, m: &Model) -> (u64, Resp) {
        (m.get(self.data), Resp::from_bits(m.get(self.resp)))
    }
    fn garbage(&self, _: &mut Model, _: &mut Garbage) {}
}

/// The five channels of an AXI4-Lite bus as its master sees them (`out`) or its slave.
fn bind_w(b: &Bind<'_>, out: bool) -> Result<WPorts> {
    Ok(WPorts {
        data: b.port("wdata", out)?,
        strb: b.port("wstrb", out)?,
    })
}

fn bind_b(b: &Bind<'_>, out: bool) -> Result<BPorts> {
    Ok(BPorts {
        resp: b.port("bresp", !out)?,
    })
}

fn bind_r(b: &Bind<'_>, out: bool) -> Result<RPorts> {
    Ok(RPorts {
        data: b.port("rdata", !out)?,
        resp: b.port("rresp", !out)?,
    })
}

/// The data width of an AXI4-Lite bus, checked.
fn lite_bytes(b: &Bind<'_>, out: bool) -> Result<usize> {
    let wdata = b.port("wdata", out)?;
    let bytes = b.data_bytes(wdata, "wdata")?;
    if bytes > 8 {
        return Err(BfmError::Bind {
            bus: b.prefix.to_string(),
            problem: "AXI4-Lite data is 32 or 64 bits wide".into(),
        });
    }
    Ok(bytes)
}

struct LOp {
    done: bool,
    data: u64,
    resp: Resp,
    /// Its address, to name it when its response goes missing.
    addr: u64,
}

struct MasterCore {
    /// The port prefix, for errors.
    bus: String,
    cfg: AxilMasterConfig,
    faults: LiteFaults,
    aw: Source<AddrPorts>,
    w: Source<WPorts>,
    b: Sink<BPorts>,
    ar: Source<AddrPorts>,
    r: Sink<RPorts>,
    next: u64,
    ops: HashMap<u64, LOp>,
    w_admit: VecDeque<(u64, u64, u64, u64)>,
    r_admit: VecDeque<(u64, u64)>,
    aw_q: VecDeque<u64>,
    w_q: VecDeque<(u64, u64)>,
    ar_q: VecDeque<u64>,
    b_wait: VecDeque<u64>,
    r_wait: VecDeque<u64>,
    /// AW and W handshakes of the writes in `b_wait`, oldest first: the write `b_wait[i]` is
    /// accepted whole once both counts exceed `i`.
    aw_taken: usize,
    w_taken: usize,
    /// The cycles at which the oldest writes of `b_wait`, and the oldest reads of `r_wait`,
    /// were accepted whole: when each began to wait for its response.
    writes_accepted: VecDeque<u64>,
    reads_accepted: VecDeque<u64>,
    /// The last drive left the bus idle (no VALID, READYs up) with nothing queued.
    idle_driven: bool,
    /// Raised while idle with no response owed (see [`Agent::idle`]).
    idle: Idle,
}

impl BusPauses for MasterCore {
    fn pauses(&mut self) -> ChannelPauses<'_> {
        ChannelPauses {
            write: [&mut self.aw.pause, &mut self.w.pause, &mut self.b.pause],
            read: Some([&mut self.ar.pause, &mut self.r.pause]),
        }
    }
}

/// An AXI4-Lite master bus model: single-beat reads and writes, several in flight, answered
/// in order.
#[derive(Clone, Debug)]
pub struct AxilMaster {
    h: Handle<MasterCore, AxilMonitor>,
    data_bytes: usize,
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
        let data_bytes = lite_bytes(&b, true)?;
        let core = MasterCore {
            bus: prefix.to_string(),
            cfg,
            faults: LiteFaults::default(),
            aw: Source::bind(&b, "aw", AddrPorts::bind(&b, "aw", true)?)?,
            w: Source::bind(&b, "w", bind_w(&b, true)?)?,
            b: Sink::bind(&b, "b", bind_b(&b, true)?)?,
            ar: Source::bind(&b, "ar", AddrPorts::bind(&b, "ar", true)?)?,
            r: Sink::bind(&b, "r", bind_r(&b, true)?)?,
            next: 1,
            ops: HashMap::new(),
            w_admit: VecDeque::new(),
            r_admit: VecDeque::new(),
            aw_q: VecDeque::new(),
            w_q: VecDeque::new(),
            ar_q: VecDeque::new(),
            b_wait: VecDeque::new(),
            r_wait: VecDeque::new(),
            aw_taken: 0,
            w_taken: 0,
            writes_accepted: VecDeque::new(),
            reads_accepted: VecDeque::new(),
            idle_driven: false,
            idle: Idle::new(),
        };
        let h = Handle::attach(env, prefix, clock, core, AxilMonitor::attach)?;
        Ok(AxilMaster { h, data_bytes })
    }

    /// The protocol monitor attached with this master, if any.
    pub fn monitor(&self) -> Option<&AxilMonitor> {
        self.h.monitor()
    }

    /// The data bus width in bytes.
    pub fn bus_bytes(&self) -> usize {
        self.data_bytes
    }

    /// Installs pause generators from `spec` on AW, W, AR (idle) and B, R (backpressure).
    pub fn set_pauses(&self, spec: &PauseSpec) {
        self.h.edit().set_pauses(spec, 0);
    }

    /// Installs a pause generator on one channel only (the others keep theirs).
    pub fn set_channel_pauses(&self, channel: Channel, spec: &PauseSpec) {
        self.h.edit().set_channel_pauses(channel, spec);
    }

    /// Makes the master break the protocol on purpose.
    pub fn set_faults(&self, faults: LiteFaults) {
        self.h.edit().faults = faults;
    }

    /// The configuration in force.
    pub fn config(&self) -> AxilMasterConfig {
        self.h.core().cfg
    }

    /// Changes the configuration; it applies from the next edge.
    pub fn set_config(&self, cfg: AxilMasterConfig) {
        self.h.edit().cfg = cfg;
    }

    /// Drives changing garbage on the payload of AW, W and AR whenever their VALID is low, so
    /// that a slave that uses an address or data word without its VALID reads nonsense.
    pub fn set_idle_garbage(&self, on: bool) {
        let mut c = self.h.edit();
        c.aw.set_garbage(on.then_some(0x9e37_79b9_7f4a_7c25));
        c.w.set_garbage(on.then_some(0x9e37_79b9_7f4a_7c26));
        c.ar.set_garbage(on.then_some(0x9e37_79b9_7f4a_7c27));
        c.idle.set(false);
    }

    fn full_strb(&self) -> u64 {
        (1u64 << self.data_bytes) - 1
    }

    /// A new access's number and its entry.
    fn new_op(c: &mut MasterCore, addr: u64) -> u64 {
        let t = c.next;
        c.next += 1;
        c.ops.insert(
            t,
            LOp {
                done: false,
                data: 0,
                resp: Resp::Okay,
                addr,
            },
        );
        t
    }

    /// Queues a write of one data word with byte strobes `strb`.
    pub fn start_write(&self, addr: u64, data: u64, strb: u64) -> Result<TxnId> {
        let mut c = self.h.edit();
        let t = Self::new_op(&mut c, addr);
        c.w_admit
            .push_back((t, addr, data, strb & self.full_strb()));
        Ok(TxnId(t))
    }

    /// Queues a read of one data word.
    pub fn start_read(&self, addr: u64) -> Result<TxnId> {
        let mut c = self.h.edit();
        let t = Self::new_op(&mut c, addr);
        c.r_admit.push_back((t, addr));
        Ok(TxnId(t))
    }

    /// True once the access has completed.
    pub fn is_done(&self, t: TxnId) -> bool {
        self.h.core().ops.get(&t.0).is_some_and(|o| o.done)
    }

    /// Runs the environment until `t` completes, within the configured cycle limit.
    pub fn wait(&self, env: &mut Env, t: TxnId) -> Result<()> {
        let limit = self.h.core().cfg.timeout_cycles;
        let what = format!("AXI4-Lite access #{} on `{}`", t.0, self.h.bus);
        env.run_until_agents(self.h.clock, limit, &what, || self.is_done(t))?;
        Ok(())
    }

    /// The data (zero for a write) and response of a completed access, taken once.
    pub fn take(&self, t: TxnId) -> Result<(u64, Resp)> {
        let mut c = self.h.edit();
        match c.ops.get(&t.0) {
            Some(o) if o.done => {
                let r = (o.data, o.resp);
                c.ops.remove(&t.0);
                Ok(r)
            }
            _ => Err(BfmError::NoSuchTxn {
                bus: self.h.bus.clone(),
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
                bus: self.h.bus.clone(),
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
                bus: self.h.bus.clone(),
                what: "read",
                addr,
                resp,
            }),
        }
    }
}

impl MasterCore {
    /// The oldest access of `waiting`, accepted at `accepted`, if it has waited for its
    /// response longer than the configured bound.
    fn missing(
        &self,
        what: &'static str,
        waiting: &VecDeque<u64>,
        accepted: &VecDeque<u64>,
        cycle: u64,
    ) -> Option<BfmError> {
        let bound = self.cfg.response_timeout_cycles;
        let (&t, &at) = (waiting.front()?, accepted.front()?);
        let waited = cycle.saturating_sub(at);
        (bound > 0 && waited > bound).then(|| BfmError::MissingResponse {
            bus: self.bus.clone(),
            what,
            txn: t,
            addr: self.ops.get(&t).map_or(0, |o| o.addr),
            accepted_cycle: at,
            waited,
        })
    }
}

impl Agent for MasterCore {
    fn sample(&mut self, m: &Model, cx: &Cx) -> Result<()> {
        let aw_now = self.aw.sample(m).is_some();
        let w_now = self.w.sample(m).is_some();
        let ar_now = self.ar.sample(m).is_some();
        // Responses first: one never answers a request accepted at the same edge.
        if let Some(resp) = self.b.sample(m) {
            self.writes_accepted.pop_front();
            self.aw_taken = self.aw_taken.saturating_sub(1);
            self.w_taken = self.w_taken.saturating_sub(1);
            if let Some(o) = self.b_wait.pop_front().and_then(|t| self.ops.get_mut(&t)) {
                o.done = true;
                o.resp = resp;
            }
        }
        if let Some((data, resp)) = self.r.sample(m) {
            self.reads_accepted.pop_front();
            if let Some(o) = self.r_wait.pop_front().and_then(|t| self.ops.get_mut(&t)) {
                o.done = true;
                o.resp = resp;
                o.data = data;
            }
        }
        if cx.in_reset {
            (self.aw_taken, self.w_taken) = (0, 0);
            self.writes_accepted.clear();
            self.reads_accepted.clear();
            return Ok(());
        }
        self.aw_taken += usize::from(aw_now);
        self.w_taken += usize::from(w_now);
        while self.writes_accepted.len() < self.aw_taken.min(self.w_taken) {
            self.writes_accepted.push_back(cx.cycle);
        }
        if ar_now {
            self.reads_accepted.push_back(cx.cycle);
        }
        let lost = self
            .missing("write", &self.b_wait, &self.writes_accepted, cx.cycle)
            .or_else(|| self.missing("read", &self.r_wait, &self.reads_accepted, cx.cycle));
        match lost {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn drive(&mut self, m: &mut Model, cx: &Cx) -> Result<()> {
        let f = self.faults;
        if cx.holds_in_reset(f.valid_right_after_reset) {
            self.aw.reset(m, f.valid_in_reset);
            self.w.reset(m, false);
            self.ar.reset(m, false);
            self.b.off(m);
            self.r.off(m);
            self.idle_driven = false;
            return Ok(());
        }
        let nothing_to_do = self.w_admit.is_empty()
            && self.r_admit.is_empty()
            && self.aw_q.is_empty()
            && self.w_q.is_empty()
            && self.ar_q.is_empty()
            && !self.aw.is_shown()
            && !self.w.is_shown()
            && !self.ar.is_shown();
        // Garbage changes every edge, so a master that drives it is never idle.
        if nothing_to_do && self.idle_driven && self.all_never() && !self.aw.garbage_on() {
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

        let prot = self.cfg.prot;
        match self.aw.turn() {
            Turn::Free { go } => {
                let a = if go { self.aw_q.pop_front() } else { None };
                self.aw.show(m, a.map(|a| (a, prot)));
            }
            Turn::Stalled if f.drop_valid_on_stall => {
                // The dropped address goes up again later.
                if let Some((a, _)) = self.aw.drop_valid(m) {
                    self.aw_q.push_front(a);
                }
            }
            Turn::Stalled => {}
        }
        match self.w.turn() {
            Turn::Free { go } => {
                let d = if go { self.w_q.pop_front() } else { None };
                self.w.show(m, d);
            }
            Turn::Stalled if f.change_payload_on_stall => {
                self.w.change_shown(m, |(d, _)| *d ^= 1);
            }
            Turn::Stalled => {}
        }
        if let Turn::Free { go } = self.ar.turn() {
            let a = if go { self.ar_q.pop_front() } else { None };
            self.ar.show(m, a.map(|a| (a, prot)));
        }
        self.b.drive(m, true);
        self.r.drive(m, true);
        self.idle_driven =
            nothing_to_do && !self.aw.is_shown() && !self.w.is_shown() && !self.ar.is_shown();
        Ok(())
    }

    fn set_pauses(&mut self, spec: &PauseSpec, salt: u64) {
        self.set_bus_pauses(spec, salt.wrapping_mul(16));
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

/// A slave's five channels and its bus width, bound once for every AXI-Lite slave model.
struct SlavePorts {
    bytes: usize,
    aw: Sink<AddrPorts>,
    w: Sink<WPorts>,
    b: Source<BPorts>,
    ar: Sink<AddrPorts>,
    r: Source<RPorts>,
}

impl SlavePorts {
    fn bind(b: &Bind<'_>) -> Result<SlavePorts> {
        Ok(SlavePorts {
            bytes: lite_bytes(b, false)?,
            aw: Sink::bind(b, "aw", AddrPorts::bind(b, "aw", false)?)?,
            w: Sink::bind(b, "w", bind_w(b, false)?)?,
            b: Source::bind(b, "b", bind_b(b, false)?)?,
            ar: Sink::bind(b, "ar", AddrPorts::bind(b, "ar", false)?)?,
            r: Source::bind(b, "r", bind_r(b, false)?)?,
        })
    }

    /// The address of the bus word that holds `addr`: an AXI-Lite access moves one whole word.
    fn line(&self, addr: u64) -> u64 {
        addr & !(self.bytes as u64 - 1)
    }

    /// The bus word of `mem` that holds `addr`.
    fn load(&self, mem: &Memory, addr: u64) -> u64 {
        mem.read_word(self.line(addr), self.bytes)
    }

    /// Stores the lanes of `data` that `strb` enables into the bus word of `mem` holding `addr`.
    fn store(&self, mem: &mut Memory, addr: u64, data: u64, strb: u64) {
        mem.write_word(self.line(addr), self.bytes, data, strb);
    }

    /// Every channel quiet, as in reset.
    fn off(&mut self, m: &mut Model) {
        self.aw.off(m);
        self.w.off(m);
        self.ar.off(m);
        self.b.reset(m, false);
        self.r.reset(m, false);
    }

    /// The channels' pause generators, for [`BusPauses`].
    fn pauses(&mut self) -> ChannelPauses<'_> {
        ChannelPauses {
            write: [&mut self.aw.pause, &mut self.w.pause, &mut self.b.pause],
            read: Some([&mut self.ar.pause, &mut self.r.pause]),
        }
    }
}

struct SlaveCore {
    cfg: AxilSlaveConfig,
    faults: LiteFaults,
    mem: Rc<RefCell<Memory>>,
    p: SlavePorts,
    aw_q: VecDeque<u64>,
    w_q: VecDeque<(u64, u64)>,
    b_q: VecDeque<u64>,
    r_q: VecDeque<(u64, u64)>,
}

impl BusPauses for SlaveCore {
    fn pauses(&mut self) -> ChannelPauses<'_> {
        self.p.pauses()
    }
}

/// An AXI4-Lite slave bus model backed by a sparse memory.
#[derive(Clone, Debug)]
pub struct AxilSlave {
    h: Handle<SlaveCore, AxilMonitor>,
    mem: Rc<RefCell<Memory>>,
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
        let p = SlavePorts::bind(&Bind::new(env, prefix))?;
        let mem = Rc::new(RefCell::new(Memory::new()));
        let core = SlaveCore {
            cfg,
            faults: LiteFaults::default(),
            mem: mem.clone(),
            p,
            aw_q: VecDeque::new(),
            w_q: VecDeque::new(),
            b_q: VecDeque::new(),
            r_q: VecDeque::new(),
        };
        let h = Handle::attach(env, prefix, clock, core, AxilMonitor::attach)?;
        Ok(AxilSlave { h, mem })
    }

    /// The protocol monitor attached with this slave, if any.
    pub fn monitor(&self) -> Option<&AxilMonitor> {
        self.h.monitor()
    }

    /// Installs pause generators from `spec` on AWREADY, WREADY, ARREADY (backpressure) and
    /// B, R (idle).
    pub fn set_pauses(&self, spec: &PauseSpec) {
        self.h.edit().set_pauses(spec, 0);
    }

    /// Installs a pause generator on one channel only (the others keep theirs).
    pub fn set_channel_pauses(&self, channel: Channel, spec: &PauseSpec) {
        self.h.edit().set_channel_pauses(channel, spec);
    }

    /// Makes the slave break the protocol on purpose.
    pub fn set_faults(&self, faults: LiteFaults) {
        self.h.edit().faults = faults;
    }

    /// The memory behind the slave, shared.
    pub fn mem(&self) -> Rc<RefCell<Memory>> {
        self.mem.clone()
    }
}

impl Agent for SlaveCore {
    fn sample(&mut self, m: &Model, cx: &Cx) -> Result<()> {
        self.p.b.sample(m);
        self.p.r.sample(m);
        if let Some((addr, _)) = self.p.aw.sample(m) {
            self.aw_q.push_back(addr);
        }
        if let Some(d) = self.p.w.sample(m) {
            self.w_q.push_back(d);
        }
        if let Some((a, _)) = self.p.ar.sample(m) {
            self.r_q.push_back((a, cx.cycle + self.cfg.read_latency));
        }
        while !self.aw_q.is_empty() && !self.w_q.is_empty() {
            let (Some(addr), Some((data, strb))) = (self.aw_q.pop_front(), self.w_q.pop_front())
            else {
                break;
            };
            self.p.store(&mut self.mem.borrow_mut(), addr, data, strb);
            self.b_q.push_back(cx.cycle + self.cfg.write_latency);
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
            return Ok(());
        }
        let f = self.faults;
        let q = self.cfg.max_queued.max(1);
        let (aw_room, w_room) = (
            self.aw_q.len() + self.b_q.len() < q,
            self.w_q.len() + self.b_q.len() < q,
        );
        self.p.aw.drive(m, aw_room);
        self.p.w.drive(m, w_room);
        self.p.ar.drive(m, self.r_q.len() < q);
        let resp = if f.exokay_always {
            Resp::ExOkay
        } else {
            Resp::Okay
        };

        if let Turn::Free { go } = self.p.b.turn() {
            let due = self.b_q.front().is_some_and(|t| *t <= cx.cycle);
            let send = if f.spurious_b && self.b_q.is_empty() {
                self.faults.spurious_b = false;
                true
            } else if due && go && !f.hang {
                self.b_q.pop_front();
                true
            } else {
                false
            };
            self.p.b.show(m, send.then_some(resp));
        }

        if let Turn::Free { go } = self.p.r.turn() {
            let due = self.r_q.front().is_some_and(|r| r.1 <= cx.cycle);
            let data = if f.spurious_r && self.r_q.is_empty() {
                self.faults.spurious_r = false;
                Some(0)
            } else if f.r_with_request && self.r_q.is_empty() && self.p.ar.fires(m) {
                self.faults.r_with_request = false;
                Some(0)
            } else if due && go && !f.hang {
                self.r_q
                    .pop_front()
                    .map(|(a, _)| self.p.load(&self.mem.borrow(), a))
            } else {
                None
            };
            self.p.r.show(m, data.map(|d| (d, resp)));
        }
        Ok(())
    }

    fn set_pauses(&mut self, spec: &PauseSpec, salt: u64) {
        self.set_bus_pauses(spec, salt.wrapping_mul(16) + 8);
    }
}
