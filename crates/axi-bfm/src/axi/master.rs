//! The AXI4 master: reads and writes of any length and alignment as legal bursts.

use std::collections::VecDeque;
use std::rc::Rc;

use sim_runtime::{ClockId, Model, Port};

use super::{has_reads, AxBeat, AxPorts, BPorts, RBeat, RPorts, TxnId, WBeat, WPorts};
use crate::bind::{lane, set_lane, Bind, IdMap, MAX_WORDS};
use crate::burst::{split, Burst, Piece};
use crate::channel::{Sink, Source, Turn};
use crate::env::{Agent, Cx, Env, DEFAULT_TIMEOUT_CYCLES};
use crate::error::{BfmError, Resp, Result};
use crate::handle::Handle;
use crate::monitor::AxiMonitor;
use crate::pause::{BusPauses, ChannelPauses, PauseSpec};
use crate::protocol::Channel;

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

/// The AR and R channels of a master, bound only when the bus has read channels.
struct MasterRead {
    ar: Source<AxPorts>,
    r: Sink<RPorts>,
}

struct MasterCore {
    bus: String,
    cfg: AxiMasterConfig,
    faults: MasterFaults,
    bus_bytes: usize,
    addr_bits: u32,
    id_bits: u32,
    aw: Source<AxPorts>,
    w: Source<WPorts>,
    b: Sink<BPorts>,
    /// The read channels; `None` on a write-only bus (no `araddr`).
    rd: Option<MasterRead>,
    next: u64,
    wops: IdMap<u64, WOp>,
    rops: IdMap<u64, ROp>,
    w_admit: VecDeque<WBurst>,
    r_admit: VecDeque<RBurst>,
    aw_q: VecDeque<Burst>,
    w_q: VecDeque<WBurst>,
    ar_q: VecDeque<Burst>,
    /// The write burst whose beats W sends, the next beat's number and the bytes sent.
    w_cur: Option<(WBurst, u32, usize)>,
    /// Bytes of `w_cur` sent once the beat on the bus is taken.
    w_next_done: usize,
    b_wait: IdMap<u32, VecDeque<u64>>,
    r_wait: IdMap<u32, VecDeque<RBurst>>,
    writes_out: usize,
    reads_out: usize,
    /// Handshakes on any channel so far: the progress the timeout watches.
    handshakes: u64,
}

impl BusPauses for MasterCore {
    fn pauses(&mut self) -> ChannelPauses<'_> {
        ChannelPauses {
            write: [&mut self.aw.pause, &mut self.w.pause, &mut self.b.pause],
            read: self.rd.as_mut().map(|r| [&mut r.ar.pause, &mut r.r.pause]),
        }
    }
}

/// An AXI4 master bus model.
///
/// Reads and writes of any length and byte alignment are split at 4 KiB boundaries and at the
/// maximum burst length into INCR bursts of full-width beats; partial first and last beats
/// use write strobes. Transactions carry an ID; several may be in flight, up to the
/// configured limits, and reads of different IDs may complete in any order. A bus without
/// `araddr` is write-only (a capture engine's port): only its write channels are bound, and
/// reads on it are refused.
#[derive(Clone, Debug)]
pub struct AxiMaster {
    h: Handle<MasterCore, AxiMonitor>,
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
        // Bound in this order so that a bus missing several signals names the same first.
        let bus_bytes = b.data_bytes(b.port("wdata", true)?, "wdata")?;
        let aw = AxPorts::bind(&b, "aw", true, bus_bytes)?;
        let (addr_bits, id_bits) = (aw.addr.width(), aw.id.map_or(0, Port::width));
        let aw = Source::bind(&b, "aw", aw)?;
        let rd = if has_reads(&b) {
            Some(MasterRead {
                ar: Source::bind(&b, "ar", AxPorts::bind(&b, "ar", true, bus_bytes)?)?,
                r: Sink::bind(&b, "r", RPorts::bind(&b, true)?)?,
            })
        } else {
            None
        };
        let (wports, _) = WPorts::bind(&b, true)?;
        let mut core = MasterCore {
            bus: prefix.to_string(),
            cfg,
            faults: MasterFaults::default(),
            bus_bytes,
            addr_bits,
            id_bits,
            aw,
            w: Source::bind(&b, "w", wports)?,
            b: Sink::bind(&b, "b", BPorts::bind(&b, true)?)?,
            rd,
            next: 1,
            wops: IdMap::default(),
            rops: IdMap::default(),
            w_admit: VecDeque::new(),
            r_admit: VecDeque::new(),
            aw_q: VecDeque::new(),
            w_q: VecDeque::new(),
            ar_q: VecDeque::new(),
            w_cur: None,
            w_next_done: 0,
            b_wait: IdMap::default(),
            r_wait: IdMap::default(),
            writes_out: 0,
            reads_out: 0,
            handshakes: 0,
        };
        core.set_garbage(cfg.idle_garbage);
        let h = Handle::attach(env, prefix, clock, core, AxiMonitor::attach)?;
        Ok(AxiMaster { h })
    }

    /// The protocol monitor attached with this master, if any.
    pub fn monitor(&self) -> Option<&AxiMonitor> {
        self.h.monitor()
    }

    /// Installs pause generators from `spec` on AW, W and AR (idle cycles) and B and R
    /// (backpressure).
    pub fn set_pauses(&self, spec: &PauseSpec) {
        self.h.edit().set_pauses(spec, 0);
    }

    /// Installs a pause generator on one channel only (the others keep theirs).
    pub fn set_channel_pauses(&self, channel: Channel, spec: &PauseSpec) {
        self.h.edit().set_channel_pauses(channel, spec);
    }

    /// Makes the master break the protocol on purpose.
    pub fn set_faults(&self, faults: MasterFaults) {
        self.h.edit().faults = faults;
    }

    /// The configuration in force.
    pub fn config(&self) -> AxiMasterConfig {
        self.h.core().cfg
    }

    /// Changes the configuration (limits apply to bursts admitted from now on).
    pub fn set_config(&self, cfg: AxiMasterConfig) {
        let mut c = self.h.edit();
        c.set_garbage(cfg.idle_garbage);
        c.cfg = cfg;
    }

    /// The data bus width in bytes.
    pub fn bus_bytes(&self) -> usize {
        self.h.core().bus_bytes
    }

    /// The width of the port's ID signals in bits (0 when the port has none): IDs from 0 to
    /// `2^id_bits - 1` reach the DUT as given.
    pub fn id_bits(&self) -> u32 {
        self.h.core().id_bits
    }

    /// The port prefix this master is bound to.
    pub fn bus(&self) -> &str {
        &self.h.bus
    }

    /// Queues a write of `data` at `addr` with ID `id`; returns at once.
    pub fn start_write(&self, id: u32, addr: u64, data: &[u8]) -> Result<TxnId> {
        self.h.edit().start_write(id, addr, data)
    }

    /// Queues a read of `len` bytes at `addr` with ID `id`; returns at once.
    pub fn start_read(&self, id: u32, addr: u64, len: usize) -> Result<TxnId> {
        self.h.edit().start_read(id, addr, len)
    }

    /// Queues one burst exactly as given, without splitting or checking it (to drive FIXED,
    /// WRAP, narrow or deliberately illegal bursts). `data` fills the lanes each beat uses, in
    /// order; missing bytes are sent with their strobes low.
    pub fn start_write_burst(&self, burst: Burst, data: &[u8]) -> Result<TxnId> {
        self.h.edit().start_write_burst(burst, data)
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
        self.h.edit().start_write_burst_strobed(burst, data, keep)
    }

    /// Queues one read burst exactly as given; the result holds the bytes of the lanes each
    /// beat used, in order.
    pub fn start_read_burst(&self, burst: Burst) -> Result<TxnId> {
        self.h.edit().start_read_burst(burst)
    }

    /// True once the transaction has completed.
    pub fn is_done(&self, t: TxnId) -> bool {
        let c = self.h.core();
        c.wops.get(&t.0).is_some_and(|o| o.bursts_left == 0)
            || c.rops.get(&t.0).is_some_and(|o| o.bursts_left == 0)
    }

    /// True when nothing is queued or in flight.
    pub fn idle(&self) -> bool {
        let c = self.h.core();
        c.wops.values().all(|o| o.bursts_left == 0) && c.rops.values().all(|o| o.bursts_left == 0)
    }

    /// Runs the environment until `t` completes, within the configured cycle limit.
    pub fn wait(&self, env: &mut Env, t: TxnId) -> Result<()> {
        let limit = self.h.core().cfg.timeout_cycles;
        let what = format!("AXI4 transaction #{} on `{}`", t.0, self.h.bus);
        env.run_while_progressing(
            self.h.clock,
            limit,
            &what,
            || self.is_done(t),
            || self.h.core().handshakes,
        )?;
        Ok(())
    }

    /// Runs the environment until every queued transaction has completed.
    pub fn wait_idle(&self, env: &mut Env) -> Result<()> {
        let limit = self.h.core().cfg.timeout_cycles;
        let what = format!("all transactions on `{}`", self.h.bus);
        env.run_while_progressing(
            self.h.clock,
            limit,
            &what,
            || self.idle(),
            || self.h.core().handshakes,
        )?;
        Ok(())
    }

    /// The response of a completed write (the worst over its bursts); each result is taken
    /// once.
    pub fn take_write(&self, t: TxnId) -> Result<Resp> {
        let mut c = self.h.edit();
        match c.wops.get(&t.0) {
            Some(o) if o.bursts_left == 0 => {
                let r = o.resp;
                c.wops.remove(&t.0);
                Ok(r)
            }
            _ => Err(BfmError::NoSuchTxn {
                bus: self.h.bus.clone(),
                id: t.0,
            }),
        }
    }

    /// The data and response of a completed read; each result is taken once.
    pub fn take_read(&self, t: TxnId) -> Result<(Vec<u8>, Resp)> {
        let mut c = self.h.edit();
        match c.rops.get(&t.0) {
            Some(o) if o.bursts_left == 0 => {
                let o = c.rops.remove(&t.0);
                Ok(o.map(|o| (o.data, o.resp)).unwrap_or_default())
            }
            _ => Err(BfmError::NoSuchTxn {
                bus: self.h.bus.clone(),
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
                bus: self.h.bus.clone(),
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
                bus: self.h.bus.clone(),
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
        self.check_id(id)
    }

    /// An ID the port cannot carry would reach the DUT cut short, and its answer would never
    /// match: refused here rather than left to time out.
    fn check_id(&self, id: u32) -> Result<()> {
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
        self.check_id(b.id)?;
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
        self.check_id(b.id)?;
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
        self.check_id(b.id)?;
        let n = self.raw_bytes(&b);
        let piece = Piece {
            burst: b,
            offset: 0,
            bytes: n,
        };
        Ok(self.queue_read(vec![piece], n))
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

    fn on_r(&mut self, r: &RBeat, n: usize) {
        let bus_bytes = self.bus_bytes;
        let Some(q) = self.r_wait.get_mut(&r.id) else {
            return;
        };
        let Some(rb) = q.front_mut() else {
            return;
        };
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
                    .zip(&r.words[..n])
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
                        *d = lane(&r.words, i);
                    }
                    rb.done += 1;
                }
            }
            o.resp = o.resp.worst(r.resp);
        }
        rb.beat += 1;
        if r.last || rb.beat > u32::from(rb.b.len) {
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
    /// Idle garbage on AW, W and AR on or off.
    fn set_garbage(&mut self, on: bool) {
        self.aw.set_garbage(on.then_some(0x9e37_79b9_7f4a_7c15));
        self.w.set_garbage(on.then_some(0x9e37_79b9_7f4a_7c16));
        if let Some(rd) = &mut self.rd {
            rd.ar.set_garbage(on.then_some(0x9e37_79b9_7f4a_7c17));
        }
    }
}

/// Beat `k` of a write burst whose first `done` bytes are sent: its data and strobes into
/// `beat`, which comes cleared, and the bytes sent with it. A free function of the bus width,
/// so that the beat can be built in the W source's own slot ([`Source::show_in_place`]).
fn w_beat(bus_bytes: usize, wb: &WBurst, k: u32, done: usize, beat: &mut WBeat) -> usize {
    let (lo, hi) = wb.b.beat_lanes(k, bus_bytes);
    if lo == 0 && hi == bus_bytes && wb.keep.is_none() && done + hi <= wb.nbytes && hi >= 4 {
        // A full beat with every strobe up: whole words at a time.
        let src = &wb.data[wb.off + done..wb.off + done + hi];
        for (w, c) in beat.words.iter_mut().zip(src.chunks_exact(4)) {
            *w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
        beat.strb = if hi >= 128 {
            u128::MAX
        } else {
            (1u128 << hi) - 1
        };
        return done + hi;
    }
    let mut used = done;
    for i in lo..hi {
        if used >= wb.nbytes {
            break;
        }
        set_lane(&mut beat.words, i, wb.data[wb.off + used]);
        if wb.keep.as_ref().is_none_or(|k| k[wb.off + used]) {
            beat.strb |= 1 << i;
        }
        used += 1;
    }
    used
}

impl Agent for MasterCore {
    fn sample(&mut self, m: &Model, _cx: &Cx) -> Result<()> {
        if self.aw.sample(m).is_some() {
            self.handshakes += 1;
        }
        if let Some(beat) = self.w.sample(m) {
            self.handshakes += 1;
            if let Some((wb, k, _)) = self.w_cur.take() {
                if !beat.last {
                    self.w_cur = Some((wb, k + 1, self.w_next_done));
                }
            }
        }
        if let Some(rd) = &mut self.rd {
            if rd.ar.sample(m).is_some() {
                self.handshakes += 1;
            }
        }
        if let Some((id, resp)) = self.b.sample(m) {
            self.handshakes += 1;
            self.on_b(id, resp);
        }
        let r = self
            .rd
            .as_ref()
            .and_then(|rd| rd.r.sample(m).map(|b| (b, rd.r.ports.nwords)));
        if let Some((beat, n)) = r {
            self.handshakes += 1;
            self.on_r(&beat, n);
        }
        Ok(())
    }

    fn drive(&mut self, m: &mut Model, cx: &Cx) -> Result<()> {
        let (cache, prot) = (self.cfg.cache, self.cfg.prot);
        let (aw_qos, ar_qos) = (self.cfg.aw_qos, self.cfg.ar_qos);
        let f = self.faults;
        if cx.holds_in_reset(f.valid_right_after_reset) {
            self.aw.reset(m, f.valid_in_reset);
            self.w.reset(m, false);
            self.b.off(m);
            if let Some(rd) = &mut self.rd {
                rd.ar.reset(m, false);
                rd.r.off(m);
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
        let ax = |b: Burst, qos: u8| AxBeat {
            b,
            cache,
            prot,
            qos,
        };
        match self.aw.turn() {
            Turn::Free { go } => {
                let b = if go { self.aw_q.pop_front() } else { None };
                self.aw.show(m, b.map(|b| ax(b, aw_qos)));
            }
            Turn::Stalled if f.drop_valid_on_stall => {
                // The dropped burst goes up again later.
                if let Some(a) = self.aw.drop_valid(m) {
                    self.aw_q.push_front(a.b);
                }
            }
            Turn::Stalled if f.change_payload_on_stall => {
                self.aw.change_shown(m, |a| a.b.addr ^= 0x40);
            }
            Turn::Stalled => {}
        }

        // W: beats of admitted bursts in order, independent of AW.
        if let Turn::Free { go } = self.w.turn() {
            if self.w_cur.is_none() {
                self.w_cur = self.w_q.pop_front().map(|wb| (wb, 0, 0));
            }
            let (bus_bytes, cur) = (self.bus_bytes, if go { self.w_cur.as_ref() } else { None });
            let mut used = None;
            self.w.show_in_place(m, |_, slot| {
                let Some((wb, k, done)) = cur else {
                    *slot = None;
                    return;
                };
                let b = slot.insert(WBeat {
                    words: [0; MAX_WORDS],
                    strb: 0,
                    last: false,
                });
                used = Some(w_beat(bus_bytes, wb, *k, *done, b));
                b.last = *k >= u32::from(wb.b.len)
                    || (f.wlast_early && wb.b.len >= 1 && *k + 1 == u32::from(wb.b.len));
            });
            if let Some(u) = used {
                self.w_next_done = u;
            }
        }

        if let Some(rd) = &mut self.rd {
            if let Turn::Free { go } = rd.ar.turn() {
                let b = if go { self.ar_q.pop_front() } else { None };
                rd.ar.show(m, b.map(|b| ax(b, ar_qos)));
            }
        }

        self.b.drive(m, true);
        if let Some(rd) = &mut self.rd {
            rd.r.drive(m, true);
        }
        Ok(())
    }

    fn set_pauses(&mut self, spec: &PauseSpec, salt: u64) {
        self.set_bus_pauses(spec, salt.wrapping_mul(16));
    }
}
