//! AXI-Stream bus models: a source that sends frames (with null-byte gaps when asked) and a
//! sink that collects them.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use sim_runtime::{ClockId, Model, Port};

use crate::bind::{get_mask, lane, set_lane, set_mask, Bind, Words, MAX_WORDS};
use crate::env::{Agent, Cx, Env, Idle, DEFAULT_TIMEOUT_CYCLES};
use crate::error::{BfmError, Result};
use crate::monitor::AxisMonitor;
use crate::pause::{Pause, PauseSpec};

/// One AXI-Stream frame: the bytes TKEEP marks, in order, and the side-band values (taken
/// from the first beat by a sink; driven on every beat by a source).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AxisFrame {
    /// The frame's bytes.
    pub data: Vec<u8>,
    /// TID.
    pub tid: u64,
    /// TDEST.
    pub tdest: u64,
    /// TUSER.
    pub tuser: u64,
}

impl AxisFrame {
    /// A frame of `data` with zero side-band values.
    pub fn new(data: impl Into<Vec<u8>>) -> AxisFrame {
        AxisFrame {
            data: data.into(),
            ..AxisFrame::default()
        }
    }
}

/// A frame as a monitor saw it pass, with when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedFrame {
    /// The frame.
    pub frame: AxisFrame,
    /// Time of the edge that took its first beat, in picoseconds.
    pub start_ps: u64,
    /// Time of the edge that took its last beat.
    pub end_ps: u64,
    /// Cycle of the first beat.
    pub start_cycle: u64,
    /// Cycle of the last beat.
    pub end_cycle: u64,
}

/// Deliberate protocol errors an AXI-Stream source can make.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamFaults {
    /// Raise TVALID while reset is asserted.
    pub valid_in_reset: bool,
    /// Raise TVALID in the cycle right after reset is released.
    pub valid_right_after_reset: bool,
    /// Drop TVALID after one stalled cycle.
    pub drop_valid_on_stall: bool,
    /// Change a kept byte of TDATA while TVALID is stalled.
    pub change_payload_on_stall: bool,
    /// Change a null byte (TKEEP low) of TDATA while stalled, which is legal.
    pub change_null_byte_on_stall: bool,
    /// Start the bytes of a partial last beat at lane 1 instead of lane 0.
    pub misalign_last: bool,
}

struct Beat {
    keep: u128,
    last: bool,
    next_pos: usize,
}

struct SourceCore {
    bytes: usize,
    nwords: usize,
    faults: StreamFaults,
    tdata: Port,
    tkeep: Option<Port>,
    tvalid: Port,
    tready: Port,
    tlast: Option<Port>,
    tid: Option<Port>,
    tdest: Option<Port>,
    tuser: Option<Port>,
    words: Words,
    queue: VecDeque<AxisFrame>,
    pos: usize,
    shown: Option<Beat>,
    stalled: bool,
    sent: u64,
    p_valid: Pause,
    gaps: Pause,
    /// Bytes of the head frame that may be put on the bus; `None` is no limit.
    credit: Option<usize>,
    /// Beats taken so far: the progress the timeout watches.
    beats: u64,
    /// The idle-garbage generator's state; 0 is off.
    garbage: u64,
    /// Raised while nothing is queued that could go on the bus (see [`Agent::idle`]).
    idle: Idle,
}

/// An AXI-Stream source bus model.
#[derive(Clone)]
pub struct AxisSource {
    inner: Rc<RefCell<SourceCore>>,
    clock: ClockId,
    bus: String,
    timeout: u64,
    monitor: Option<AxisMonitor>,
}

impl std::fmt::Debug for AxisSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AxisSource")
            .field("bus", &self.bus)
            .finish_non_exhaustive()
    }
}

fn check_width(b: &Bind<'_>, tdata: Port) -> Result<usize> {
    let bytes = b.data_bytes(tdata, "tdata")?;
    if bytes > 128 {
        return Err(BfmError::Bind {
            bus: b.prefix.to_string(),
            problem: "AXI-Stream buses of up to 1024 bits are supported".into(),
        });
    }
    Ok(bytes)
}

impl AxisSource {
    /// Attaches to the AXI-Stream input `<prefix>_*` of the model (the source drives
    /// `<prefix>_tvalid`, `_tdata` and, when present, `_tkeep`, `_tlast`, `_tid`, `_tdest`,
    /// `_tuser`) on `clock`, with a protocol monitor unless the defaults are off.
    pub fn attach(env: &mut Env, prefix: &str, clock: ClockId) -> Result<AxisSource> {
        let b = Bind::new(env, prefix);
        let tdata = b.drive("tdata")?;
        let bytes = check_width(&b, tdata)?;
        let core = SourceCore {
            bytes,
            nwords: tdata.words(),
            faults: StreamFaults::default(),
            tdata,
            tkeep: b.opt_drive("tkeep")?,
            tvalid: b.drive("tvalid")?,
            tready: b.read("tready")?,
            tlast: b.opt_drive("tlast")?,
            tid: b.opt_drive("tid")?,
            tdest: b.opt_drive("tdest")?,
            tuser: b.opt_drive("tuser")?,
            words: [0; MAX_WORDS],
            queue: VecDeque::new(),
            pos: 0,
            shown: None,
            stalled: false,
            sent: 0,
            p_valid: Pause::default(),
            gaps: Pause::default(),
            credit: None,
            beats: 0,
            garbage: 0,
            idle: Idle::new(),
        };
        let inner = Rc::new(RefCell::new(core));
        env.add_agent(clock, inner.clone());
        let monitor = if env.monitors_enabled() {
            Some(AxisMonitor::attach(env, prefix, clock)?)
        } else {
            None
        };
        Ok(AxisSource {
            inner,
            clock,
            bus: prefix.to_string(),
            timeout: DEFAULT_TIMEOUT_CYCLES,
            monitor,
        })
    }

    /// The protocol monitor attached with this source, if any.
    pub fn monitor(&self) -> Option<&AxisMonitor> {
        self.monitor.as_ref()
    }

    /// The core, for a change that may give it work: the environment runs it again.
    fn edit(&self) -> std::cell::RefMut<'_, SourceCore> {
        let c = self.inner.borrow_mut();
        c.idle.set(false);
        c
    }

    /// Installs a pause generator on TVALID (idle cycles between beats).
    pub fn set_pauses(&self, spec: &PauseSpec) {
        self.edit().set_pauses(spec, 0);
    }

    /// Leaves byte lanes empty (TKEEP low) where `spec` pauses: null bytes inside frames.
    /// Requires a TKEEP signal.
    pub fn set_gaps(&self, spec: &PauseSpec) -> Result<()> {
        let mut c = self.edit();
        if c.tkeep.is_none() && *spec != PauseSpec::Never {
            return Err(BfmError::BadRequest {
                bus: self.bus.clone(),
                problem: "null-byte gaps need a tkeep signal, which this bus lacks".into(),
            });
        }
        c.gaps = spec.generator(0x6a9);
        Ok(())
    }

    /// Makes the source break the protocol on purpose.
    pub fn set_faults(&self, faults: StreamFaults) {
        self.edit().faults = faults;
    }

    /// Limits the head frame to its first `bytes` bytes: a beat goes on the bus only once
    /// every byte it carries is within the limit, so a model of an upstream link can release
    /// data as it arrives. `None` lifts the limit. The limit counts from the head frame's
    /// start and applies to every frame that becomes the head while it is set.
    pub fn set_credit(&self, bytes: Option<usize>) {
        self.edit().credit = bytes;
    }

    /// Changes the cycle limit of the blocking calls: cycles in a row without a beat taken.
    pub fn set_timeout(&mut self, cycles: u64) {
        self.timeout = cycles;
    }

    /// Drives changing garbage on TDATA, TKEEP, TLAST and the side-band signals whenever
    /// TVALID is low, so that a sink that uses them without TVALID fails its test.
    pub fn set_idle_garbage(&self, on: bool) {
        self.edit().garbage = if on { 0x2545_f491_4f6c_dd1d } else { 0 };
    }

    /// Queues every frame and waits until all are sent.
    pub fn send_all(
        &self,
        env: &mut Env,
        frames: impl IntoIterator<Item = AxisFrame>,
    ) -> Result<()> {
        for f in frames {
            self.start_send(f)?;
        }
        self.wait_idle(env)
    }

    /// Queues a frame; returns at once. Empty frames cannot be sent (AXI-Stream has no empty
    /// transfer that ends a frame).
    pub fn start_send(&self, frame: AxisFrame) -> Result<()> {
        let mut c = self.edit();
        if frame.data.is_empty() {
            return Err(BfmError::BadRequest {
                bus: self.bus.clone(),
                problem: "an empty frame; a frame needs at least one byte".into(),
            });
        }
        if c.tlast.is_none() && !frame.data.len().is_multiple_of(c.bytes) {
            return Err(BfmError::BadRequest {
                bus: self.bus.clone(),
                problem: "without tlast, frames must fill whole beats".into(),
            });
        }
        c.queue.push_back(frame);
        Ok(())
    }

    /// Frames completely sent so far.
    pub fn sent(&self) -> u64 {
        self.inner.borrow().sent
    }

    /// Bytes of the head frame that the sink has taken so far (0 between frames).
    pub fn progress(&self) -> usize {
        self.inner.borrow().pos
    }

    /// Drops every queued frame that has not put a beat on the bus yet, and says whether the
    /// head frame had started (a started frame must finish: AXI-Stream cannot take back a
    /// beat, so it stays queued).
    pub fn cancel_unstarted(&self) -> bool {
        let mut c = self.edit();
        let started = c.pos > 0 || c.shown.is_some();
        let keep = usize::from(started);
        c.queue.truncate(keep);
        started
    }

    /// True when every queued frame is sent.
    pub fn idle(&self) -> bool {
        let c = self.inner.borrow();
        c.queue.is_empty() && c.shown.is_none()
    }

    /// Sends a frame and waits until its last beat is taken.
    pub fn send(&self, env: &mut Env, frame: AxisFrame) -> Result<()> {
        self.start_send(frame)?;
        self.wait_idle(env)
    }

    /// Runs until every queued frame is sent.
    pub fn wait_idle(&self, env: &mut Env) -> Result<()> {
        let what = format!("frames to leave the source on `{}`", self.bus);
        env.run_while_progressing(
            self.clock,
            self.timeout,
            &what,
            || self.idle(),
            || self.inner.borrow().beats,
        )?;
        Ok(())
    }
}

impl SourceCore {
    /// Whether the credit covers the whole next beat of the head frame.
    fn has_credit(&self) -> bool {
        let Some(limit) = self.credit else {
            return true;
        };
        self.queue.front().is_some_and(|f| {
            let beat_end = (self.pos + self.bytes).min(f.data.len());
            beat_end <= limit
        })
    }

    /// Builds the next beat of the head frame into the word buffer.
    fn build(&mut self) -> Option<Beat> {
        let frame = self.queue.front()?;
        let n = self.nwords;
        for w in &mut self.words[..n] {
            *w = 0;
        }
        let remaining = frame.data.len() - self.pos;
        let mut lane0 = 0;
        if self.faults.misalign_last && remaining < self.bytes {
            lane0 = 1;
        }
        let mut keep = 0u128;
        let mut pos = self.pos;
        if lane0 == 0 && self.gaps.is_never() {
            // Whole words at a time when no lane is left empty (the common case).
            let take = remaining.min(self.bytes);
            let src = &frame.data[pos..pos + take];
            let mut whole = src.chunks_exact(4);
            for (w, chunk) in self.words.iter_mut().zip(whole.by_ref()) {
                *w = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
            }
            let tail = whole.remainder();
            if !tail.is_empty() {
                let mut b = [0u8; 4];
                b[..tail.len()].copy_from_slice(tail);
                self.words[take / 4] = u32::from_le_bytes(b);
            }
            keep = if take >= 128 {
                u128::MAX
            } else {
                (1u128 << take) - 1
            };
            pos += take;
            return Some(Beat {
                keep,
                last: pos >= frame.data.len(),
                next_pos: pos,
            });
        }
        for i in lane0..self.bytes {
            if pos >= frame.data.len() {
                break;
            }
            if self.gaps.pause_now() {
                continue;
            }
            set_lane(&mut self.words, i, frame.data[pos]);
            keep |= 1 << i;
            pos += 1;
        }
        Some(Beat {
            keep,
            last: pos >= frame.data.len(),
            next_pos: pos,
        })
    }

    fn show(&mut self, m: &mut Model, beat: &Beat) {
        m.set_words(self.tdata, &self.words[..self.nwords]);
        if let Some(p) = self.tkeep {
            set_mask(m, p, beat.keep);
        }
        if let Some(p) = self.tlast {
            m.set_bool(p, beat.last);
        }
        if let Some(f) = self.queue.front() {
            let (id, dest, user) = (f.tid, f.tdest, f.tuser);
            if let Some(p) = self.tid {
                m.set(p, id);
            }
            if let Some(p) = self.tdest {
                m.set(p, dest);
            }
            if let Some(p) = self.tuser {
                m.set(p, user);
            }
        }
        m.set_bool(self.tvalid, true);
    }
}

impl Agent for SourceCore {
    fn sample(&mut self, m: &Model, _cx: &Cx) -> Result<()> {
        let fire = self.shown.is_some() && m.get_bool(self.tready) && m.get_bool(self.tvalid);
        self.stalled = self.shown.is_some() && !fire;
        if fire {
            self.beats += 1;
            if let Some(b) = self.shown.take() {
                self.pos = b.next_pos;
                if b.last {
                    self.queue.pop_front();
                    self.pos = 0;
                    self.sent += 1;
                }
            }
        }
        Ok(())
    }

    fn drive(&mut self, m: &mut Model, cx: &Cx) -> Result<()> {
        self.idle.set(false);
        let f = self.faults;
        let in_reset = if f.valid_right_after_reset {
            cx.reset_now
        } else {
            cx.in_reset
        };
        if in_reset {
            m.set_bool(self.tvalid, f.valid_in_reset);
            self.shown = None;
            self.stalled = false;
            return Ok(());
        }
        let go = !self.p_valid.pause_now();
        if self.stalled {
            if f.drop_valid_on_stall {
                // Drop the beat; it is rebuilt from the same position next time.
                m.set_bool(self.tvalid, false);
                self.shown = None;
            } else if f.change_payload_on_stall || f.change_null_byte_on_stall {
                if let Some(b) = &self.shown {
                    let want_kept = f.change_payload_on_stall;
                    if let Some(i) = (0..self.bytes).find(|i| (b.keep >> i & 1 == 1) == want_kept) {
                        let v = lane(&self.words, i) ^ 0xff;
                        set_lane(&mut self.words, i, v);
                        m.set_words(self.tdata, &self.words[..self.nwords]);
                    }
                }
            }
            return Ok(());
        }
        if go && self.has_credit() {
            if let Some(b) = self.build() {
                self.show(m, &b);
                self.shown = Some(b);
                return Ok(());
            }
        }
        m.set_bool(self.tvalid, false);
        if self.garbage != 0 {
            self.drive_garbage(m);
        } else if self.p_valid.is_never() && (self.queue.is_empty() || !self.has_credit()) {
            // TVALID low, nothing that could go up before a call on the handle: the next
            // edges would sample nothing and drive the same.
            self.idle.set(true);
        }
        Ok(())
    }

    fn set_pauses(&mut self, spec: &PauseSpec, salt: u64) {
        self.p_valid = spec.generator(salt.wrapping_mul(16) + 5);
        self.idle.set(false);
    }

    fn idle(&self) -> Option<(Idle, Vec<Port>)> {
        Some((self.idle.clone(), Vec::new()))
    }
}

impl SourceCore {
    /// Fresh garbage on every payload signal while TVALID is low.
    fn drive_garbage(&mut self, m: &mut Model) {
        let mut next = || {
            // xorshift64: a different value every call.
            let mut x = self.garbage;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.garbage = x;
            x
        };
        let mut words = [0u32; MAX_WORDS];
        for w in words.iter_mut().take(self.nwords) {
            *w = next() as u32;
        }
        let g = next();
        m.set_words(self.tdata, &words[..self.nwords]);
        if let Some(p) = self.tkeep {
            set_mask(m, p, u128::from(g));
        }
        if let Some(p) = self.tlast {
            m.set_bool(p, g >> 63 == 1);
        }
        for p in [self.tid, self.tdest, self.tuser].into_iter().flatten() {
            m.set(p, g >> 7);
        }
    }
}

struct SinkCore {
    bytes: usize,
    nwords: usize,
    tdata: Port,
    tkeep: Option<Port>,
    tvalid: Port,
    tready: Port,
    tlast: Option<Port>,
    tid: Option<Port>,
    tdest: Option<Port>,
    tuser: Option<Port>,
    words: Words,
    cur: Option<AxisFrame>,
    frames: VecDeque<AxisFrame>,
    shown: bool,
    p_ready: Pause,
    /// False holds TREADY low whatever the pause generator says.
    enabled: bool,
    /// Raised while TREADY would stay as it is; TVALID wakes the sink (see [`Agent::idle`]).
    idle: Idle,
}

/// An AXI-Stream sink bus model: collects frames, with backpressure on TREADY.
#[derive(Clone)]
pub struct AxisSink {
    inner: Rc<RefCell<SinkCore>>,
    clock: ClockId,
    bus: String,
    timeout: u64,
    monitor: Option<AxisMonitor>,
}

impl std::fmt::Debug for AxisSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AxisSink")
            .field("bus", &self.bus)
            .finish_non_exhaustive()
    }
}

impl AxisSink {
    /// Attaches to the AXI-Stream output `<prefix>_*` of the model on `clock`, with a
    /// protocol monitor unless the defaults are off.
    pub fn attach(env: &mut Env, prefix: &str, clock: ClockId) -> Result<AxisSink> {
        let b = Bind::new(env, prefix);
        let tdata = b.read("tdata")?;
        let bytes = check_width(&b, tdata)?;
        let core = SinkCore {
            bytes,
            nwords: tdata.words(),
            tdata,
            tkeep: b.opt_read("tkeep")?,
            tvalid: b.read("tvalid")?,
            tready: b.drive("tready")?,
            tlast: b.opt_read("tlast")?,
            tid: b.opt_read("tid")?,
            tdest: b.opt_read("tdest")?,
            tuser: b.opt_read("tuser")?,
            words: [0; MAX_WORDS],
            cur: None,
            frames: VecDeque::new(),
            shown: false,
            p_ready: Pause::default(),
            enabled: true,
            idle: Idle::new(),
        };
        let inner = Rc::new(RefCell::new(core));
        env.add_agent(clock, inner.clone());
        let monitor = if env.monitors_enabled() {
            Some(AxisMonitor::attach(env, prefix, clock)?)
        } else {
            None
        };
        Ok(AxisSink {
            inner,
            clock,
            bus: prefix.to_string(),
            timeout: DEFAULT_TIMEOUT_CYCLES,
            monitor,
        })
    }

    /// The protocol monitor attached with this sink, if any.
    pub fn monitor(&self) -> Option<&AxisMonitor> {
        self.monitor.as_ref()
    }

    /// The core, for a change to how it drives: the environment runs it again.
    fn edit(&self) -> std::cell::RefMut<'_, SinkCore> {
        let c = self.inner.borrow_mut();
        c.idle.set(false);
        c
    }

    /// Installs a pause generator on TREADY (backpressure).
    pub fn set_pauses(&self, spec: &PauseSpec) {
        self.edit().set_pauses(spec, 0);
    }

    /// Changes the cycle limit of the blocking calls.
    pub fn set_timeout(&mut self, cycles: u64) {
        self.timeout = cycles;
    }

    /// Turns the sink on or off: while off, TREADY stays low from the next edge on, as with a
    /// DMA engine that has no buffer posted. A sink starts on.
    pub fn set_enabled(&self, on: bool) {
        self.edit().enabled = on;
    }

    /// Complete frames received and not yet taken.
    pub fn pending(&self) -> usize {
        self.inner.borrow().frames.len()
    }

    /// Bytes of the frame being received, whose last beat has not come yet.
    pub fn partial(&self) -> usize {
        self.inner.borrow().cur.as_ref().map_or(0, |f| f.data.len())
    }

    /// Takes the oldest complete frame, if any, without running.
    pub fn try_recv(&self) -> Option<AxisFrame> {
        self.inner.borrow_mut().frames.pop_front()
    }

    /// Runs until a complete frame is there and takes it.
    pub fn recv(&self, env: &mut Env) -> Result<AxisFrame> {
        let what = format!("a frame on `{}`", self.bus);
        env.run_until_agents(self.clock, self.timeout, &what, || self.pending() > 0)?;
        self.try_recv()
            .ok_or_else(|| env.timeout(self.clock, self.timeout, &what))
    }

    /// Runs until `n` complete frames are there and takes them, oldest first. The cycle
    /// limit bounds the wait for each next frame, not the whole run.
    pub fn recv_n(&self, env: &mut Env, n: usize) -> Result<Vec<AxisFrame>> {
        let what = format!("{n} frames on `{}`", self.bus);
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            if let Some(f) = self.try_recv() {
                out.push(f);
                continue;
            }
            env.run_while_progressing(
                self.clock,
                self.timeout,
                &format!("{what} ({} received)", out.len()),
                || self.pending() > 0,
                || self.pending() as u64,
            )?;
        }
        Ok(out)
    }
}

impl Agent for SinkCore {
    fn sample(&mut self, m: &Model, _cx: &Cx) -> Result<()> {
        if !(self.shown && m.get_bool(self.tvalid)) {
            return Ok(());
        }
        let full = if self.bytes >= 128 {
            u128::MAX
        } else {
            (1u128 << self.bytes) - 1
        };
        let keep = self.tkeep.map_or(full, |p| get_mask(m, p));
        let n = self.nwords;
        m.get_words(self.tdata, &mut self.words[..n]);
        let f = self.cur.get_or_insert_with(|| AxisFrame {
            data: Vec::new(),
            tid: self.tid.map_or(0, |p| m.get(p)),
            tdest: self.tdest.map_or(0, |p| m.get(p)),
            tuser: self.tuser.map_or(0, |p| m.get(p)),
        });
        if keep == full {
            // Every lane kept: the beat's bytes in one copy.
            let mut bytes = [0u8; 4 * MAX_WORDS];
            for (b, w) in bytes.chunks_exact_mut(4).zip(&self.words[..n]) {
                b.copy_from_slice(&w.to_le_bytes());
            }
            f.data.extend_from_slice(&bytes[..self.bytes]);
        } else {
            for i in 0..self.bytes {
                if keep >> i & 1 == 1 {
                    f.data.push(lane(&self.words, i));
                }
            }
        }
        if self.tlast.is_none_or(|p| m.get_bool(p)) {
            if let Some(f) = self.cur.take() {
                self.frames.push_back(f);
            }
        }
        Ok(())
    }

    fn drive(&mut self, m: &mut Model, cx: &Cx) -> Result<()> {
        self.shown = !cx.in_reset && self.enabled && !self.p_ready.pause_now();
        if cx.in_reset {
            self.cur = None;
        }
        m.set_bool(self.tready, self.shown);
        // Without pauses TREADY stays as it is until a call on the handle; only TVALID gives
        // the sink something to do.
        self.idle.set(!cx.in_reset && self.p_ready.is_never());
        Ok(())
    }

    fn set_pauses(&mut self, spec: &PauseSpec, salt: u64) {
        self.p_ready = spec.generator(salt.wrapping_mul(16) + 13);
        self.idle.set(false);
    }

    fn idle(&self) -> Option<(Idle, Vec<Port>)> {
        Some((self.idle.clone(), vec![self.tvalid]))
    }
}
