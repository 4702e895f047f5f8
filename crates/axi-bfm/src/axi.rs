//! AXI4 bus models: a master that turns reads and writes of any length and alignment into
//! legal bursts, and a slave backed by sparse memory.

use std::cell::RefCell;
use std::collections::{HashSet, VecDeque};
use std::rc::Rc;

use sim_runtime::{ClockId, Model, Port};

use crate::bind::{get_mask, lane, set_lane, set_mask, Bind, IdMap, Words, MAX_WORDS};
use crate::burst::{split, Burst, Piece, INCR};
use crate::env::{Agent, Cx, Env, DEFAULT_TIMEOUT_CYCLES};
use crate::error::{BfmError, Resp, Result};
use crate::mem::Memory;
use crate::monitor::{AxiMonitor, Channel};
use crate::pause::{BusPauses, PauseSpec};

/// A handle on a transaction issued by a bus model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TxnId(pub u64);

/// How an AXI4 master splits and paces its transactions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AxiMasterConfig {
    /// Longest burst in beats (1 to 256).
    pub max_burst_len: u32,
    /// Write bursts in flight (AW issued, B not yet received) at most.
    pub max_outstanding_writes: usize,
    /// Read bursts in flight at most.
    pub max_outstanding_reads: usize,
    /// Cycle limit of the blocking calls: cycles in a row without any handshake on the bus
    /// (a bound on a stall, so that a long transfer needs no larger limit).
    pub timeout_cycles: u64,
    /// AxCACHE driven when the bus has it.
    pub cache: u8,
    /// AxPROT driven when the bus has it.
    pub prot: u8,
    /// AxQOS driven on AW when the bus has it (0 to 15), e.g. to ask a memory controller's
    /// arbiter to end the other direction's hold.
    pub aw_qos: u8,
    /// AxQOS driven on AR when the bus has it (0 to 15).
    pub ar_qos: u8,
    /// Drive changing garbage on the payload of AW, W and AR whenever their VALID is low, so
    /// that a slave that uses a payload without its VALID reads nonsense and fails its test.
    pub idle_garbage: bool,
}

impl Default for AxiMasterConfig {
    fn default() -> Self {
        AxiMasterConfig {
            max_burst_len: 256,
            max_outstanding_writes: 8,
            max_outstanding_reads: 8,
            timeout_cycles: DEFAULT_TIMEOUT_CYCLES,
            cache: 0b0011,
            prot: 0,
            aw_qos: 0,
            ar_qos: 0,
            idle_garbage: false,
        }
    }
}

/// Deliberate protocol errors an AXI4 master can make, to prove the monitors catch them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MasterFaults {
    /// Raise AWVALID while reset is asserted.
    pub valid_in_reset: bool,
    /// Raise AWVALID in the cycle right after reset is released.
    pub valid_right_after_reset: bool,
    /// Drop AWVALID after one stalled cycle, before the handshake.
    pub drop_valid_on_stall: bool,
    /// Change AWADDR while AWVALID is stalled.
    pub change_payload_on_stall: bool,
    /// Raise WLAST one beat early on bursts of two or more beats.
    pub wlast_early: bool,
}

struct WOp {
    bursts_left: usize,
    resp: Resp,
}

struct ROp {
    data: Vec<u8>,
    bursts_left: usize,
    resp: Resp,
}

#[derive(Clone)]
struct WBurst {
    op: u64,
    b: Burst,
    data: Rc<[u8]>,
    /// Per byte of `data`, whether its strobe is raised; `None` raises every strobe.
    keep: Option<Rc<[bool]>>,
    off: usize,
    nbytes: usize,
}

#[derive(Clone)]
struct RBurst {
    op: u64,
    b: Burst,
    off: usize,
    nbytes: usize,
    beat: u32,
    done: usize,
}

struct AwPorts {
    id: Option<Port>,
    addr: Port,
    len: Port,
    size: Option<Port>,
    burst: Option<Port>,
    lock: Option<Port>,
    cache: Option<Port>,
    prot: Option<Port>,
    qos: Option<Port>,
    valid: Port,
    ready: Port,
}

fn ax_drive(b: &Bind<'_>, p: &str) -> Result<AwPorts> {
    Ok(AwPorts {
        id: b.opt_drive(&format!("{p}id"))?,
        addr: b.drive(&format!("{p}addr"))?,
        len: b.drive(&format!("{p}len"))?,
        size: b.opt_drive(&format!("{p}size"))?,
        burst: b.opt_drive(&format!("{p}burst"))?,
        lock: b.opt_drive(&format!("{p}lock"))?,
        cache: b.opt_drive(&format!("{p}cache"))?,
        prot: b.opt_drive(&format!("{p}prot"))?,
        qos: b.opt_drive(&format!("{p}qos"))?,
        valid: b.drive(&format!("{p}valid"))?,
        ready: b.read(&format!("{p}ready"))?,
    })
}

fn ax_set(m: &mut Model, p: &AwPorts, b: &Burst, cache: u8, prot: u8, qos: u8) {
    if let Some(x) = p.id {
        m.set(x, u64::from(b.id));
    }
    m.set(p.addr, b.addr);
    m.set(p.len, u64::from(b.len));
    if let Some(x) = p.size {
        m.set(x, u64::from(b.size));
    }
    if let Some(x) = p.burst {
        m.set(x, u64::from(b.burst));
    }
    if let Some(x) = p.lock {
        m.set_bool(x, b.lock);
    }
    if let Some(x) = p.cache {
        m.set(x, u64::from(cache));
    }
    if let Some(x) = p.prot {
        m.set(x, u64::from(prot));
    }
    if let Some(x) = p.qos {
        m.set(x, u64::from(qos & 0xf));
    }
}

/// The AR and R signals of a master, bound only when the bus has read channels.
struct MasterRead {
    ar: AwPorts,
    rid: Option<Port>,
    rdata: Port,
    rresp: Port,
    rlast: Port,
    rvalid: Port,
    rready: Port,
}

/// Whether the bus has read channels: write-only ports (a capture engine's) have no `araddr`.
fn has_reads(b: &Bind<'_>) -> bool {
    b.has("araddr")
}

struct MasterCore {
    bus: String,
    cfg: AxiMasterConfig,
    faults: MasterFaults,
    bus_bytes: usize,
    nwords: usize,
    addr_bits: u32,
    id_bits: u32,
    aw: AwPorts,
    /// The read channels; `None` on a write-only bus (no `araddr`).
    rd: Option<MasterRead>,
    wdata: Port,
    wstrb: Port,
    wlast: Port,
    wvalid: Port,
    wready: Port,
    bid: Option<Port>,
    bresp: Port,
    bvalid: Port,
    bready: Port,
    words: Words,
    next: u64,
    wops: IdMap<u64, WOp>,
    rops: IdMap<u64, ROp>,
    w_admit: VecDeque<WBurst>,
    r_admit: VecDeque<RBurst>,
    aw_q: VecDeque<Burst>,
    w_q: VecDeque<WBurst>,
    ar_q: VecDeque<Burst>,
    aw_cur: Option<Burst>,
    aw_shown: bool,
    aw_stalled: bool,
    w_cur: Option<(WBurst, u32, usize)>,
    w_shown: bool,
    w_stalled: bool,
    w_last_shown: bool,
    w_next_done: usize,
    ar_cur: Option<Burst>,
    ar_shown: bool,
    ar_stalled: bool,
    b_shown: bool,
    r_shown: bool,
    b_wait: IdMap<u32, VecDeque<u64>>,
    r_wait: IdMap<u32, VecDeque<RBurst>>,
    writes_out: usize,
    reads_out: usize,
    /// Handshakes on any channel so far: the progress the timeout watches.
    handshakes: u64,
    /// The state of the idle-garbage generator.
    garbage: u64,
    p: BusPauses,
}

/// An AXI4 master bus model.
///
/// Reads and writes of any length and byte alignment are split at 4 KiB boundaries and at the
/// maximum burst length into INCR bursts of full-width beats; partial first and last beats
/// use write strobes. Transactions carry an ID; several may be in flight, up to the
/// configured limits, and reads of different IDs may complete in any order. A bus without
/// `araddr` is write-only (a capture engine's port): only its write channels are bound, and
/// reads on it are refused.
#[derive(Clone)]
pub struct AxiMaster {
    inner: Rc<RefCell<MasterCore>>,
    clock: ClockId,
    bus: String,
    monitor: Option<AxiMonitor>,
}

impl std::fmt::Debug for AxiMaster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AxiMaster")
            .field("bus", &self.bus)
            .field("clock", &self.clock)
            .finish_non_exhaustive()
    }
}

impl AxiMaster {
    /// Attaches to the AXI4 slave port `<prefix>_*` of the model (the master drives
    /// `<prefix>_awvalid`, reads `<prefix>_awready`, ...) on `clock`, with a protocol monitor
    /// unless the environment's default monitors are off.
    pub fn attach(env: &mut Env, prefix: &str, clock: ClockId) -> Result<AxiMaster> {
        Self::attach_with(env, prefix, clock, AxiMasterConfig::default())
    }

    /// As [`AxiMaster::attach`], with a configuration.
    pub fn attach_with(
        env: &mut Env,
        prefix: &str,
        clock: ClockId,
        cfg: AxiMasterConfig,
    ) -> Result<AxiMaster> {
        if cfg.max_burst_len == 0 || cfg.max_burst_len > 256 {
            return Err(BfmError::BadRequest {
                bus: prefix.to_string(),
                problem: format!("max_burst_len {} is outside 1..=256", cfg.max_burst_len),
            });
        }
        let b = Bind::new(env, prefix);
        let wdata = b.drive("wdata")?;
        let bus_bytes = b.data_bytes(wdata, "wdata")?;
        let aw = ax_drive(&b, "aw")?;
        let rd = if has_reads(&b) {
            Some(MasterRead {
                ar: ax_drive(&b, "ar")?,
                rid: b.opt_read("rid")?,
                rdata: b.read("rdata")?,
                rresp: b.read("rresp")?,
                rlast: b.read("rlast")?,
                rvalid: b.read("rvalid")?,
                rready: b.drive("rready")?,
            })
        } else {
            None
        };
        let core = MasterCore {
            bus: prefix.to_string(),
            cfg,
            faults: MasterFaults::default(),
            bus_bytes,
            nwords: wdata.words(),
            addr_bits: aw.addr.width(),
            id_bits: aw.id.map_or(0, Port::width),
            aw,
            rd,
            wdata,
            wstrb: b.drive("wstrb")?,
            wlast: b.drive("wlast")?,
            wvalid: b.drive("wvalid")?,
            wready: b.read("wready")?,
            bid: b.opt_read("bid")?,
            bresp: b.read("bresp")?,
            bvalid: b.read("bvalid")?,
            bready: b.drive("bready")?,
            words: [0; MAX_WORDS],
            next: 1,
            wops: IdMap::default(),
            rops: IdMap::default(),
            w_admit: VecDeque::new(),
            r_admit: VecDeque::new(),
            aw_q: VecDeque::new(),
            w_q: VecDeque::new(),
            ar_q: VecDeque::new(),
            aw_cur: None,
            aw_shown: false,
            aw_stalled: false,
            w_cur: None,
            w_shown: false,
            w_stalled: false,
            w_last_shown: false,
            w_next_done: 0,
            ar_cur: None,
            ar_shown: false,
            ar_stalled: false,
            b_shown: false,
            r_shown: false,
            b_wait: IdMap::default(),
            r_wait: IdMap::default(),
            writes_out: 0,
            reads_out: 0,
            handshakes: 0,
            garbage: 0x9e37_79b9_7f4a_7c15,
            p: BusPauses::default(),
        };
        let inner = Rc::new(RefCell::new(core));
        env.add_agent(clock, inner.clone());
        let monitor = if env.monitors_enabled() {
            Some(AxiMonitor::attach(env, prefix, clock)?)
        } else {
            None
        };
        Ok(AxiMaster {
            inner,
            clock,
            bus: prefix.to_string(),
            monitor,
        })
    }

    /// The protocol monitor attached with this master, if any.
    pub fn monitor(&self) -> Option<&AxiMonitor> {
        self.monitor.as_ref()
    }

    /// Installs pause generators from `spec` on AW, W and AR (idle cycles) and B and R
    /// (backpressure).
    pub fn set_pauses(&self, spec: &PauseSpec) {
        self.inner.borrow_mut().set_pauses(spec, 0);
    }

    /// Installs a pause generator on one channel only (the others keep theirs).
    pub fn set_channel_pauses(&self, channel: Channel, spec: &PauseSpec) {
        self.inner.borrow_mut().p.set_channel(channel, spec);
    }

    /// Makes the master break the protocol on purpose.
    pub fn set_faults(&self, faults: MasterFaults) {
        self.inner.borrow_mut().faults = faults;
    }

    /// The configuration in force.
    pub fn config(&self) -> AxiMasterConfig {
        self.inner.borrow().cfg
    }

    /// Changes the configuration (limits apply to bursts admitted from now on).
    pub fn set_config(&self, cfg: AxiMasterConfig) {
        self.inner.borrow_mut().cfg = cfg;
    }

    /// The data bus width in bytes.
    pub fn bus_bytes(&self) -> usize {
        self.inner.borrow().bus_bytes
    }

    /// Queues a write of `data` at `addr` with ID `id`; returns at once.
    pub fn start_write(&self, id: u32, addr: u64, data: &[u8]) -> Result<TxnId> {
        self.inner.borrow_mut().start_write(id, addr, data)
    }

    /// Queues a read of `len` bytes at `addr` with ID `id`; returns at once.
    pub fn start_read(&self, id: u32, addr: u64, len: usize) -> Result<TxnId> {
        self.inner.borrow_mut().start_read(id, addr, len)
    }

    /// Queues one burst exactly as given, without splitting or checking it (to drive FIXED,
    /// WRAP, narrow or deliberately illegal bursts). `data` fills the lanes each beat uses, in
    /// order; missing bytes are sent with their strobes low.
    pub fn start_write_burst(&self, burst: Burst, data: &[u8]) -> Result<TxnId> {
        self.inner.borrow_mut().start_write_burst(burst, data)
    }

    /// Queues one write burst exactly as given with a strobe per byte: `data` and `keep` hold
    /// one entry for each lane each beat uses, in order, and a byte whose `keep` is false goes
    /// out with its strobe low (to drive sparse strobe patterns).
    pub fn start_write_burst_strobed(
        &self,
        burst: Burst,
        data: &[u8],
        keep: &[bool],
    ) -> Result<TxnId> {
        self.inner
            .borrow_mut()
            .start_write_burst_strobed(burst, data, keep)
    }

    /// Queues one read burst exactly as given; the result holds the bytes of the lanes each
    /// beat used, in order.
    pub fn start_read_burst(&self, burst: Burst) -> Result<TxnId> {
        self.inner.borrow_mut().start_read_burst(burst)
    }

    /// True once the transaction has completed.
    pub fn is_done(&self, t: TxnId) -> bool {
        let c = self.inner.borrow();
        c.wops.get(&t.0).is_some_and(|o| o.bursts_left == 0)
            || c.rops.get(&t.0).is_some_and(|o| o.bursts_left == 0)
    }

    /// True when nothing is queued or in flight.
    pub fn idle(&self) -> bool {
        let c = self.inner.borrow();
        c.wops.values().all(|o| o.bursts_left == 0) && c.rops.values().all(|o| o.bursts_left == 0)
    }

    /// Runs the environment until `t` completes, within the configured cycle limit.
    pub fn wait(&self, env: &mut Env, t: TxnId) -> Result<()> {
        let limit = self.inner.borrow().cfg.timeout_cycles;
        let what = format!("AXI4 transaction #{} on `{}`", t.0, self.bus);
        env.run_while_progressing(
            self.clock,
            limit,
            &what,
            || self.is_done(t),
            || self.inner.borrow().handshakes,
        )?;
        Ok(())
    }

    /// Runs the environment until every queued transaction has completed.
    pub fn wait_idle(&self, env: &mut Env) -> Result<()> {
        let limit = self.inner.borrow().cfg.timeout_cycles;
        let what = format!("all transactions on `{}`", self.bus);
        env.run_while_progressing(
            self.clock,
            limit,
            &what,
            || self.idle(),
            || self.inner.borrow().handshakes,
        )?;
        Ok(())
    }

    /// The response of a completed write (the worst over its bursts); each result is taken
    /// once.
    pub fn take_write(&self, t: TxnId) -> Result<Resp> {
        let mut c = self.inner.borrow_mut();
        match c.wops.get(&t.0) {
            Some(o) if o.bursts_left == 0 => {
                let r = o.resp;
                c.wops.remove(&t.0);
                Ok(r)
            }
            _ => Err(BfmError::NoSuchTxn {
                bus: self.bus.clone(),
                id: t.0,
            }),
        }
    }

    /// The data and response of a completed read; each result is taken once.
    pub fn take_read(&self, t: TxnId) -> Result<(Vec<u8>, Resp)> {
        let mut c = self.inner.borrow_mut();
        match c.rops.get(&t.0) {
            Some(o) if o.bursts_left == 0 => {
                let o = c.rops.remove(&t.0);
                Ok(o.map(|o| (o.data, o.resp)).unwrap_or_default())
            }
            _ => Err(BfmError::NoSuchTxn {
                bus: self.bus.clone(),
                id: t.0,
            }),
        }
    }

    /// Writes `data` at `addr` (ID 0) and waits for the response; a response other than
    /// OKAY is an error.
    pub fn write(&self, env: &mut Env, addr: u64, data: &[u8]) -> Result<()> {
        let t = self.start_write(0, addr, data)?;
        self.wait(env, t)?;
        match self.take_write(t)? {
            r if r.is_ok() => Ok(()),
            resp => Err(BfmError::Response {
                bus: self.bus.clone(),
                what: "write",
                addr,
                resp,
            }),
        }
    }

    /// Reads `len` bytes at `addr` (ID 0) and waits for the data; a response other than OKAY
    /// is an error.
    pub fn read(&self, env: &mut Env, addr: u64, len: usize) -> Result<Vec<u8>> {
        let t = self.start_read(0, addr, len)?;
        self.wait(env, t)?;
        match self.take_read(t)? {
            (d, r) if r.is_ok() => Ok(d),
            (_, resp) => Err(BfmError::Response {
                bus: self.bus.clone(),
                what: "read",
                addr,
                resp,
            }),
        }
    }
}

impl MasterCore {
    fn bad(&self, problem: String) -> BfmError {
        BfmError::BadRequest {
            bus: self.bus.clone(),
            problem,
        }
    }

    fn check_range(&self, id: u32, addr: u64, len: usize) -> Result<()> {
        if len == 0 {
            return Err(self.bad("a transfer of zero bytes; AXI has no empty bursts".into()));
        }
        let last = addr.checked_add(len as u64 - 1);
        let limit = if self.addr_bits >= 64 {
            u64::MAX
        } else {
            (1u64 << self.addr_bits) - 1
        };
        if last.is_none_or(|l| l > limit) {
            return Err(self.bad(format!(
                "{len} bytes at {addr:#x} run past the {}-bit address space",
                self.addr_bits
            )));
        }
        if self.id_bits < 32 && u64::from(id) >= (1u64 << self.id_bits) {
            return Err(self.bad(format!(
                "ID {id} does not fit the {}-bit ID signals",
                self.id_bits
            )));
        }
        Ok(())
    }

    /// Splits `[addr, addr+len)` into INCR bursts of full-width beats: none crosses 4 KiB or
    /// exceeds the maximum burst length.
    fn split(&self, id: u32, addr: u64, len: usize) -> Vec<Piece> {
        split(id, addr, len, self.bus_bytes, self.cfg.max_burst_len)
    }

    fn start_write(&mut self, id: u32, addr: u64, data: &[u8]) -> Result<TxnId> {
        self.check_range(id, addr, data.len())?;
        let bursts = self.split(id, addr, data.len());
        Ok(self.queue_write(bursts, data, None))
    }

    fn queue_write(&mut self, bursts: Vec<Piece>, data: &[u8], keep: Option<&[bool]>) -> TxnId {
        let t = self.next;
        self.next += 1;
        let data: Rc<[u8]> = Rc::from(data);
        let keep: Option<Rc<[bool]>> = keep.map(Rc::from);
        self.wops.insert(
            t,
            WOp {
                bursts_left: bursts.len(),
                resp: Resp::Okay,
            },
        );
        for p in bursts {
            self.w_admit.push_back(WBurst {
                op: t,
                b: p.burst,
                data: data.clone(),
                keep: keep.clone(),
                off: p.offset,
                nbytes: p.bytes,
            });
        }
        TxnId(t)
    }

    fn check_reads(&self) -> Result<()> {
        if self.rd.is_none() {
            return Err(self.bad(
                "a read on a write-only bus (it has no AR or R channel); write instead".into(),
            ));
        }
        Ok(())
    }

    fn start_read(&mut self, id: u32, addr: u64, len: usize) -> Result<TxnId> {
        self.check_reads()?;
        self.check_range(id, addr, len)?;
        let bursts = self.split(id, addr, len);
        Ok(self.queue_read(bursts, len))
    }

    fn queue_read(&mut self, bursts: Vec<Piece>, len: usize) -> TxnId {
        let t = self.next;
        self.next += 1;
        self.rops.insert(
            t,
            ROp {
                data: vec![0; len],
                bursts_left: bursts.len(),
                resp: Resp::Okay,
            },
        );
        for p in bursts {
            self.r_admit.push_back(RBurst {
                op: t,
                b: p.burst,
                off: p.offset,
                nbytes: p.bytes,
                beat: 0,
                done: 0,
            });
        }
        TxnId(t)
    }

    fn raw_bytes(&self, b: &Burst) -> usize {
        b.lane_bytes(self.bus_bytes)
    }

    fn start_write_burst(&mut self, b: Burst, data: &[u8]) -> Result<TxnId> {
        let n = self.raw_bytes(&b);
        let mut d = data.to_vec();
        d.resize(n, 0);
        let valid = data.len().min(n);
        // Bytes beyond `data` go out with their strobes low: the burst carries `valid` bytes.
        let piece = Piece {
            burst: b,
            offset: 0,
            bytes: valid,
        };
        Ok(self.queue_write(vec![piece], &d, None))
    }

    fn start_write_burst_strobed(&mut self, b: Burst, data: &[u8], keep: &[bool]) -> Result<TxnId> {
        let n = self.raw_bytes(&b);
        if data.len() != n || keep.len() != n {
            return Err(self.bad(format!(
                "a strobed burst of {} beats of size {} carries {n} bytes, but {} data bytes and {} strobes were given; pass one of each per lane the burst uses",
                u32::from(b.len) + 1,
                b.size,
                data.len(),
                keep.len()
            )));
        }
        let piece = Piece {
            burst: b,
            offset: 0,
            bytes: n,
        };
        Ok(self.queue_write(vec![piece], data, Some(keep)))
    }

    fn start_read_burst(&mut self, b: Burst) -> Result<TxnId> {
        self.check_reads()?;
        let n = self.raw_bytes(&b);
        let piece = Piece {
            burst: b,
            offset: 0,
            bytes: n,
        };
        Ok(self.queue_read(vec![piece], n))
    }

    /// Fills the word buffer and strobe for beat `k` of a write burst; returns the strobe
    /// and the bytes consumed.
    fn w_beat(&mut self, wb: &WBurst, k: u32, done: usize) -> (u128, usize) {
        let (lo, hi) = wb.b.beat_lanes(k, self.bus_bytes);
        let n = self.nwords;
        if lo == 0 && hi == self.bus_bytes && wb.keep.is_none() && done + hi <= wb.nbytes && hi >= 4
        {
            // A full beat with every strobe up: whole words at a time.
            let src = &wb.data[wb.off + done..wb.off + done + hi];
            for (w, c) in self.words[..n].iter_mut().zip(src.chunks_exact(4)) {
                *w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            }
            let strb = if hi >= 128 {
                u128::MAX
            } else {
                (1u128 << hi) - 1
            };
            return (strb, done + hi);
        }
        for w in &mut self.words[..n] {
            *w = 0;
        }
        let mut strb = 0u128;
        let mut used = done;
        for i in lo..hi {
            if used >= wb.nbytes {
                break;
            }
            set_lane(&mut self.words, i, wb.data[wb.off + used]);
            if wb.keep.as_ref().is_none_or(|k| k[wb.off + used]) {
                strb |= 1 << i;
            }
            used += 1;
        }
        (strb, used)
    }

    fn on_b(&mut self, id: u32, resp: Resp) {
        let Some(op) = self.b_wait.get_mut(&id).and_then(VecDeque::pop_front) else {
            // A response nobody asked for; the monitor reports it.
            return;
        };
        self.writes_out = self.writes_out.saturating_sub(1);
        if let Some(o) = self.wops.get_mut(&op) {
            o.bursts_left = o.bursts_left.saturating_sub(1);
            o.resp = o.resp.worst(resp);
        }
    }

    fn on_r(&mut self, m: &Model, id: u32, resp: Resp, last: bool) {
        let bus_bytes = self.bus_bytes;
        let Some(q) = self.r_wait.get_mut(&id) else {
            return;
        };
        let Some(rb) = q.front_mut() else {
            return;
        };
        let n = self.nwords;
        if let Some(rd) = &self.rd {
            m.get_words(rd.rdata, &mut self.words[..n]);
        }
        let (lo, hi) = rb.b.beat_lanes(rb.beat, bus_bytes);
        if let Some(o) = self.rops.get_mut(&rb.op) {
            let start = rb.off + rb.done;
            if lo == 0
                && hi == bus_bytes
                && hi >= 4
                && rb.done + hi <= rb.nbytes
                && start + hi <= o.data.len()
            {
                // A full beat: whole words at a time.
                for (c, w) in o.data[start..start + hi]
                    .chunks_exact_mut(4)
                    .zip(&self.words[..n])
                {
                    c.copy_from_slice(&w.to_le_bytes());
                }
                rb.done += hi;
            } else {
                for i in lo..hi {
                    if rb.done >= rb.nbytes {
                        break;
                    }
                    if let Some(d) = o.data.get_mut(rb.off + rb.done) {
                        *d = lane(&self.words, i);
                    }
                    rb.done += 1;
                }
            }
            o.resp = o.resp.worst(resp);
        }
        rb.beat += 1;
        if last || rb.beat > u32::from(rb.b.len) {
            let op = rb.op;
            q.pop_front();
            self.reads_out = self.reads_out.saturating_sub(1);
            if let Some(o) = self.rops.get_mut(&op) {
                o.bursts_left = o.bursts_left.saturating_sub(1);
            }
        }
    }
}

impl MasterCore {
    fn next_garbage(&mut self) -> u64 {
        // xorshift64: cheap, and a different value every cycle.
        let mut x = self.garbage;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.garbage = x;
        x
    }

    /// Fills the payload of every channel whose VALID is low with fresh garbage.
    fn drive_garbage(&mut self, m: &mut Model) {
        if !self.aw_shown {
            let g = self.next_garbage();
            garbage_ax(m, &self.aw, g);
        }
        if !self.w_shown {
            for i in 0..self.nwords {
                self.words[i] = self.next_garbage() as u32;
            }
            let g = self.next_garbage();
            m.set_words(self.wdata, &self.words[..self.nwords]);
            set_mask(m, self.wstrb, u128::from(g));
            m.set_bool(self.wlast, g >> 63 == 1);
        }
        if !self.ar_shown {
            let g = self.next_garbage();
            if let Some(rd) = &self.rd {
                garbage_ax(m, &rd.ar, g);
            }
        }
    }
}

fn garbage_ax(m: &mut Model, p: &AwPorts, g: u64) {
    m.set(p.addr, g);
    m.set(p.len, g >> 8);
    for x in [p.id, p.size, p.burst, p.cache, p.prot, p.qos]
        .into_iter()
        .flatten()
    {
        m.set(x, g >> 17);
    }
    if let Some(x) = p.lock {
        m.set_bool(x, g >> 40 & 1 == 1);
    }
}

impl Agent for MasterCore {
    fn sample(&mut self, m: &Model, _cx: &Cx) -> Result<()> {
        let aw_fire = self.aw_shown && m.get_bool(self.aw.ready);
        self.handshakes += u64::from(aw_fire);
        self.aw_stalled = self.aw_shown && !aw_fire;
        if aw_fire {
            self.aw_cur = None;
        }
        let w_fire = self.w_shown && m.get_bool(self.wready);
        self.handshakes += u64::from(w_fire);
        self.w_stalled = self.w_shown && !w_fire;
        if w_fire {
            if let Some((wb, k, _)) = self.w_cur.take() {
                if !self.w_last_shown {
                    self.w_cur = Some((wb, k + 1, self.w_next_done));
                }
            }
        }
        let ar_fire = self.ar_shown && self.rd.as_ref().is_some_and(|r| m.get_bool(r.ar.ready));
        self.handshakes += u64::from(ar_fire);
        self.ar_stalled = self.ar_shown && !ar_fire;
        if ar_fire {
            self.ar_cur = None;
        }
        if self.b_shown && m.get_bool(self.bvalid) {
            self.handshakes += 1;
            let id = self.bid.map_or(0, |p| m.get(p)) as u32;
            let resp = Resp::from_bits(m.get(self.bresp));
            self.on_b(id, resp);
        }
        let r_beat = self
            .rd
            .as_ref()
            .filter(|r| self.r_shown && m.get_bool(r.rvalid))
            .map(|r| {
                (
                    r.rid.map_or(0, |p| m.get(p)) as u32,
                    Resp::from_bits(m.get(r.rresp)),
                    m.get_bool(r.rlast),
                )
            });
        if let Some((id, resp, last)) = r_beat {
            self.handshakes += 1;
            self.on_r(m, id, resp, last);
        }
        Ok(())
    }

    fn drive(&mut self, m: &mut Model, cx: &Cx) -> Result<()> {
        let (cache, prot) = (self.cfg.cache, self.cfg.prot);
        let (aw_qos, ar_qos) = (self.cfg.aw_qos, self.cfg.ar_qos);
        let f = self.faults;
        let in_reset = if f.valid_right_after_reset {
            cx.reset_now
        } else {
            cx.in_reset
        };
        if in_reset {
            for p in [self.aw.valid, self.wvalid, self.bready] {
                m.set_bool(p, false);
            }
            if let Some(rd) = &self.rd {
                m.set_bool(rd.ar.valid, false);
                m.set_bool(rd.rready, false);
            }
            self.aw_shown = false;
            self.aw_stalled = false;
            self.w_shown = false;
            self.w_stalled = false;
            self.ar_shown = false;
            self.ar_stalled = false;
            self.b_shown = false;
            self.r_shown = false;
            if f.valid_in_reset {
                m.set_bool(self.aw.valid, true);
            }
            return Ok(());
        }
        while self.writes_out < self.cfg.max_outstanding_writes.max(1) {
            let Some(wb) = self.w_admit.pop_front() else {
                break;
            };
            self.aw_q.push_back(wb.b);
            self.b_wait.entry(wb.b.id).or_default().push_back(wb.op);
            self.w_q.push_back(wb);
            self.writes_out += 1;
        }
        while self.reads_out < self.cfg.max_outstanding_reads.max(1) {
            let Some(rb) = self.r_admit.pop_front() else {
                break;
            };
            self.ar_q.push_back(rb.b);
            self.r_wait.entry(rb.b.id).or_default().push_back(rb);
            self.reads_out += 1;
        }

        // AW: a stalled burst stays up (unless a fault says otherwise); a new one goes up
        // when the pause generator allows.
        let aw_go = !self.p.aw.pause_now();
        if self.aw_stalled {
            if f.drop_valid_on_stall {
                m.set_bool(self.aw.valid, false);
                self.aw_shown = false;
            } else if f.change_payload_on_stall {
                if let Some(b) = self.aw_cur.as_mut() {
                    b.addr ^= 0x40;
                    m.set(self.aw.addr, b.addr);
                }
            }
        } else {
            if self.aw_cur.is_none() && aw_go {
                self.aw_cur = self.aw_q.pop_front();
            }
            self.aw_shown = self.aw_cur.is_some();
            if let Some(b) = self.aw_cur {
                ax_set(m, &self.aw, &b, cache, prot, aw_qos);
            }
            m.set_bool(self.aw.valid, self.aw_shown);
        }

        // W: beats of admitted bursts in order, independent of AW.
        let w_go = !self.p.w.pause_now();
        if !self.w_stalled {
            if self.w_cur.is_none() {
                self.w_cur = self.w_q.pop_front().map(|wb| (wb, 0, 0));
            }
            self.w_shown = false;
            if w_go {
                if let Some((wb, k, done)) = self.w_cur.take() {
                    let (strb, used) = self.w_beat(&wb, k, done);
                    let last = k >= u32::from(wb.b.len)
                        || (f.wlast_early && wb.b.len >= 1 && k + 1 == u32::from(wb.b.len));
                    m.set_words(self.wdata, &self.words[..self.nwords]);
                    set_mask(m, self.wstrb, strb);
                    m.set_bool(self.wlast, last);
                    self.w_shown = true;
                    self.w_last_shown = last;
                    self.w_next_done = used;
                    self.w_cur = Some((wb, k, done));
                }
            }
            m.set_bool(self.wvalid, self.w_shown);
        }

        let ar_go = !self.p.ar.pause_now();
        if let Some(rd) = &self.rd {
            if !self.ar_stalled {
                if self.ar_cur.is_none() && ar_go {
                    self.ar_cur = self.ar_q.pop_front();
                }
                self.ar_shown = self.ar_cur.is_some();
                if let Some(b) = self.ar_cur {
                    ax_set(m, &rd.ar, &b, cache, prot, ar_qos);
                }
                m.set_bool(rd.ar.valid, self.ar_shown);
            }
        }

        if self.cfg.idle_garbage {
            self.drive_garbage(m);
        }
        self.b_shown = !self.p.b.pause_now();
        m.set_bool(self.bready, self.b_shown);
        let r_go = !self.p.r.pause_now();
        if let Some(rd) = &self.rd {
            self.r_shown = r_go;
            m.set_bool(rd.rready, self.r_shown);
        }
        Ok(())
    }

    fn set_pauses(&mut self, spec: &PauseSpec, salt: u64) {
        self.p = BusPauses::from_spec(spec, salt.wrapping_mul(16));
    }
}

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
    bus_bytes: usize,
    nwords: usize,
    aw: SlavePorts,
    /// The read channels; `None` on a write-only bus (no `araddr`).
    rd: Option<SlaveRead>,
    wdata: Port,
    wstrb: Port,
    wlast: Port,
    wvalid: Port,
    wready: Port,
    bid: Option<Port>,
    bresp: Port,
    bvalid: Port,
    bready: Port,
    words: Words,
    aw_q: VecDeque<SReq>,
    b_q: VecDeque<(u32, Resp, u64)>,
    r_q: VecDeque<SReq>,
    excl: HashSet<(u32, u64)>,
    aw_shown: bool,
    w_shown: bool,
    ar_shown: bool,
    b_shown: bool,
    r_shown: bool,
    r_last_shown: bool,
    r_spurious_shown: bool,
    p: BusPauses,
}

/// The AR and R signals of a slave, bound only when the bus has read channels.
#[derive(Clone, Copy)]
struct SlaveRead {
    ar: SlavePorts,
    rid: Option<Port>,
    rdata: Port,
    rresp: Port,
    rlast: Port,
    rvalid: Port,
    rready: Port,
}

#[derive(Clone, Copy)]
struct SlavePorts {
    id: Option<Port>,
    addr: Port,
    len: Port,
    size: Option<Port>,
    burst: Option<Port>,
    lock: Option<Port>,
    valid: Port,
    ready: Port,
}

fn ax_read(b: &Bind<'_>, p: &str) -> Result<SlavePorts> {
    Ok(SlavePorts {
        id: b.opt_read(&format!("{p}id"))?,
        addr: b.read(&format!("{p}addr"))?,
        len: b.read(&format!("{p}len"))?,
        size: b.opt_read(&format!("{p}size"))?,
        burst: b.opt_read(&format!("{p}burst"))?,
        lock: b.opt_read(&format!("{p}lock"))?,
        valid: b.read(&format!("{p}valid"))?,
        ready: b.drive(&format!("{p}ready"))?,
    })
}

/// An AXI4 slave bus model backed by a sparse memory with 64-bit addresses.
///
/// It accepts FIXED, INCR and WRAP bursts of any size, applies write strobes, answers writes
/// and reads after the configured latencies and in order, and grants exclusive accesses with
/// a simple per-ID reservation. A bus without `araddr` is write-only: only its write channels
/// are bound.
#[derive(Clone)]
pub struct AxiSlave {
    inner: Rc<RefCell<SlaveCore>>,
    mem: Rc<RefCell<Memory>>,
    monitor: Option<AxiMonitor>,
}

impl std::fmt::Debug for AxiSlave {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AxiSlave").finish_non_exhaustive()
    }
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
        let b = Bind::new(env, prefix);
        let wdata = b.read("wdata")?;
        let bus_bytes = b.data_bytes(wdata, "wdata")?;
        let mem = Rc::new(RefCell::new(Memory::new()));
        let core = SlaveCore {
            cfg,
            faults: SlaveFaults::default(),
            mem: mem.clone(),
            bus_bytes,
            nwords: wdata.words(),
            aw: ax_read(&b, "aw")?,
            rd: if has_reads(&b) {
                Some(SlaveRead {
                    ar: ax_read(&b, "ar")?,
                    rid: b.opt_drive("rid")?,
                    rdata: b.drive("rdata")?,
                    rresp: b.drive("rresp")?,
                    rlast: b.drive("rlast")?,
                    rvalid: b.drive("rvalid")?,
                    rready: b.read("rready")?,
                })
            } else {
                None
            },
            wdata,
            wstrb: b.read("wstrb")?,
            wlast: b.read("wlast")?,
            wvalid: b.read("wvalid")?,
            wready: b.drive("wready")?,
            bid: b.opt_drive("bid")?,
            bresp: b.drive("bresp")?,
            bvalid: b.drive("bvalid")?,
            bready: b.read("bready")?,
            words: [0; MAX_WORDS],
            aw_q: VecDeque::new(),
            b_q: VecDeque::new(),
            r_q: VecDeque::new(),
            excl: HashSet::new(),
            aw_shown: false,
            w_shown: false,
            ar_shown: false,
            b_shown: false,
            r_shown: false,
            r_last_shown: false,
            r_spurious_shown: false,
            p: BusPauses::default(),
        };
        let inner = Rc::new(RefCell::new(core));
        env.add_agent(clock, inner.clone());
        let monitor = if env.monitors_enabled() {
            Some(AxiMonitor::attach(env, prefix, clock)?)
        } else {
            None
        };
        Ok(AxiSlave {
            inner,
            mem,
            monitor,
        })
    }

    /// The protocol monitor attached with this slave, if any.
    pub fn monitor(&self) -> Option<&AxiMonitor> {
        self.monitor.as_ref()
    }

    /// Installs pause generators from `spec` on AWREADY, WREADY and ARREADY (backpressure)
    /// and on B and R (idle cycles).
    pub fn set_pauses(&self, spec: &PauseSpec) {
        self.inner.borrow_mut().set_pauses(spec, 0);
    }

    /// Installs a pause generator on one channel only (the others keep theirs).
    pub fn set_channel_pauses(&self, channel: Channel, spec: &PauseSpec) {
        self.inner.borrow_mut().p.set_channel(channel, spec);
    }

    /// Makes the slave break the protocol on purpose.
    pub fn set_faults(&self, faults: SlaveFaults) {
        self.inner.borrow_mut().faults = faults;
    }

    /// Changes the latencies and queue depth.
    pub fn set_config(&self, cfg: AxiSlaveConfig) {
        self.inner.borrow_mut().cfg = cfg;
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
    fn req(&self, m: &Model, p: &SlavePorts, ready_at: u64) -> SReq {
        let b = Burst {
            id: p.id.map_or(0, |x| m.get(x)) as u32,
            addr: m.get(p.addr),
            len: m.get(p.len) as u8,
            size: p
                .size
                .map_or(self.bus_bytes.trailing_zeros() as u8, |x| m.get(x) as u8),
            burst: p.burst.map_or(INCR, |x| m.get(x) as u8),
            lock: p.lock.is_some_and(|x| m.get_bool(x)),
        };
        SReq {
            b,
            beat: 0,
            ready_at,
            resp: Resp::Okay,
        }
    }

    fn on_w(&mut self, m: &Model, cycle: u64) {
        let bus_bytes = self.bus_bytes;
        let n = self.nwords;
        m.get_words(self.wdata, &mut self.words[..n]);
        let strb = get_mask(m, self.wstrb);
        let wlast = m.get_bool(self.wlast);
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
            let a = req.b.beat_addr(req.beat);
            let base = a & !(bus_bytes as u64 - 1);
            let (lo, hi) = req.b.beat_lanes(req.beat, bus_bytes);
            let mut mem = self.mem.borrow_mut();
            for i in lo..hi {
                if strb >> i & 1 == 1 {
                    mem.write_byte(base.wrapping_add(i as u64), lane(&self.words, i));
                }
            }
        }
        req.beat += 1;
        if wlast || req.beat > u32::from(req.b.len) {
            let ready_at = cycle + self.cfg.write_latency;
            if let Some(r) = self.aw_q.pop_front() {
                self.b_q.push_back((r.b.id, r.resp, ready_at));
            }
        }
    }

    fn fill_r(&mut self) -> Option<(u32, Resp, bool)> {
        let bus_bytes = self.bus_bytes;
        let n = self.nwords;
        let req = self.r_q.front()?;
        let a = req.b.beat_addr(req.beat);
        let base = a & !(bus_bytes as u64 - 1);
        let (lo, hi) = req.b.beat_lanes(req.beat, bus_bytes);
        for w in &mut self.words[..n] {
            *w = 0;
        }
        let mem = self.mem.borrow();
        for i in lo..hi {
            set_lane(
                &mut self.words,
                i,
                mem.read_byte(base.wrapping_add(i as u64)),
            );
        }
        let last_beat = if self.faults.rlast_early && req.b.len >= 1 {
            u32::from(req.b.len) - 1
        } else {
            u32::from(req.b.len)
        };
        Some((req.b.id, req.resp, req.beat >= last_beat))
    }
}

impl Agent for SlaveCore {
    fn sample(&mut self, m: &Model, cx: &Cx) -> Result<()> {
        if self.b_shown && m.get_bool(self.bready) {
            self.b_shown = false;
        }
        if self.r_shown && self.rd.is_some_and(|r| m.get_bool(r.rready)) {
            self.r_shown = false;
            if self.r_spurious_shown {
                self.r_spurious_shown = false;
            } else if let Some(req) = self.r_q.front_mut() {
                req.beat += 1;
                if self.r_last_shown {
                    self.r_q.pop_front();
                }
            }
        }
        if self.aw_shown && m.get_bool(self.aw.valid) {
            let r = self.req(m, &self.aw, 0);
            self.aw_q.push_back(r);
        }
        if self.w_shown && m.get_bool(self.wvalid) {
            self.on_w(m, cx.cycle);
        }
        let ar = self.rd.map(|r| r.ar).filter(|ar| m.get_bool(ar.valid));
        if let Some(ar) = ar.filter(|_| self.ar_shown) {
            let mut r = self.req(m, &ar, cx.cycle + self.cfg.read_latency);
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
            for p in [self.aw.ready, self.wready, self.bvalid] {
                m.set_bool(p, false);
            }
            if let Some(rd) = self.rd {
                m.set_bool(rd.ar.ready, false);
                m.set_bool(rd.rvalid, false);
            }
            self.aw_q.clear();
            self.b_q.clear();
            self.r_q.clear();
            self.excl.clear();
            self.aw_shown = false;
            self.w_shown = false;
            self.ar_shown = false;
            self.b_shown = false;
            self.r_shown = false;
            return Ok(());
        }
        let f = self.faults;
        let q = self.cfg.max_queued.max(1);
        self.aw_shown = !self.p.aw.pause_now() && self.aw_q.len() < q;
        m.set_bool(self.aw.ready, self.aw_shown);
        self.w_shown = !self.p.w.pause_now() && !self.aw_q.is_empty();
        m.set_bool(self.wready, self.w_shown);
        let ar_go = !self.p.ar.pause_now();
        let r_go = !self.p.r.pause_now();

        let b_go = !self.p.b.pause_now();
        // The swap fault holds the first response until a second one is due, then answers
        // the second first.
        let mut b_hold = false;
        if f.swap_b && !self.b_shown {
            if self.b_q.len() >= 2 && self.b_q[1].2 <= cx.cycle {
                self.b_q.swap(0, 1);
                self.faults.swap_b = false;
            } else {
                b_hold = true;
            }
        }
        if !self.b_shown {
            let due = self.b_q.front().is_some_and(|b| b.2 <= cx.cycle);
            let next = if f.spurious_b && self.b_q.is_empty() {
                self.faults.spurious_b = false;
                Some((0, Resp::Okay, 0))
            } else if due && b_go && !f.hang && !b_hold {
                self.b_q.pop_front()
            } else {
                None
            };
            match next {
                Some((id, resp, _)) => {
                    if let Some(p) = self.bid {
                        m.set(p, u64::from(id));
                    }
                    let resp = if f.exokay_always { Resp::ExOkay } else { resp };
                    m.set(self.bresp, resp.bits());
                    m.set_bool(self.bvalid, true);
                    self.b_shown = true;
                }
                None => m.set_bool(self.bvalid, false),
            }
        }

        let Some(rd) = self.rd else {
            // A write-only bus: the write channels of this edge are all there is.
            return Ok(());
        };
        self.ar_shown = ar_go && self.r_q.len() < q;
        m.set_bool(rd.ar.ready, self.ar_shown);

        if !self.r_shown {
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
                for w in &mut self.words[..self.nwords] {
                    *w = 0;
                }
                Some((0, Resp::Okay, true))
            } else if due && r_go && !f.hang {
                self.fill_r()
            } else {
                None
            };
            match beat {
                Some((id, resp, last)) => {
                    if let Some(p) = rd.rid {
                        m.set(p, u64::from(id));
                    }
                    let resp = if f.exokay_always { Resp::ExOkay } else { resp };
                    m.set_words(rd.rdata, &self.words[..self.nwords]);
                    m.set(rd.rresp, resp.bits());
                    m.set_bool(rd.rlast, last);
                    m.set_bool(rd.rvalid, true);
                    self.r_shown = true;
                    self.r_last_shown = last;
                }
                None => m.set_bool(rd.rvalid, false),
            }
        }
        Ok(())
    }

    fn set_pauses(&mut self, spec: &PauseSpec, salt: u64) {
        self.p = BusPauses::from_spec(spec, salt.wrapping_mul(16) + 8);
    }
}
