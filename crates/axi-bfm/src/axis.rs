//! AXI-Stream bus models: a source that sends frames (with null-byte gaps when asked) and a
//! sink that collects them, each one [`Source`] or [`Sink`] of the T channel.

use std::collections::VecDeque;

use sim_runtime::{ClockId, Model, Port};

use crate::bind::{get_mask, lane, set_lane, set_mask, Bind, Words, MAX_WORDS};
use crate::channel::{Garbage, Payload, Sink, Source, Turn};
use crate::env::{Agent, Cx, Env, Idle};
use crate::error::{BfmError, Result};
use crate::handle::Handle;
use crate::monitor::AxisMonitor;
use crate::pause::PauseSpec;

// The frame types live in a leaf that the stream monitor imports too, so that this module and
// the monitor do not import each other in a circle.
pub use crate::axis_frame::{AxisFrame, RecordedFrame};

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

/// The T channel's payload ports.
struct TPorts {
    bytes: usize,
    nwords: usize,
    data: Port,
    keep: Option<Port>,
    /// TSTRB, read by a sink only: a byte kept with its strobe low is a position byte.
    strb: Option<Port>,
    last: Option<Port>,
    id: Option<Port>,
    dest: Option<Port>,
    user: Option<Port>,
}

/// One T beat.
struct TBeat {
    words: Words,
    keep: u128,
    last: bool,
    id: u64,
    dest: u64,
    user: u64,
}

impl TPorts {
    fn bind(b: &Bind<'_>, drive: bool) -> Result<TPorts> {
        let opt = |s: &str| if drive { b.opt_drive(s) } else { b.opt_read(s) };
        let data = if drive {
            b.drive("tdata")?
        } else {
            b.read("tdata")?
        };
        let bytes = b.data_bytes(data, "tdata")?;
        if bytes > 128 {
            return Err(BfmError::Bind {
                bus: b.prefix.to_string(),
                problem: "AXI-Stream buses of up to 1024 bits are supported".into(),
            });
        }
        Ok(TPorts {
            bytes,
            nwords: data.words(),
            data,
            keep: opt("tkeep")?,
            strb: if drive { None } else { b.opt_read("tstrb")? },
            last: opt("tlast")?,
            id: opt("tid")?,
            dest: opt("tdest")?,
            user: opt("tuser")?,
        })
    }

    /// TID, TDEST and TUSER as the bus shows them.
    fn side_band(&self, m: &Model) -> (u64, u64, u64) {
        (
            self.id.map_or(0, |p| m.get(p)),
            self.dest.map_or(0, |p| m.get(p)),
            self.user.map_or(0, |p| m.get(p)),
        )
    }

    /// TKEEP with every lane kept.
    fn full(&self) -> u128 {
        if self.bytes >= 128 {
            u128::MAX
        } else {
            (1u128 << self.bytes) - 1
        }
    }
}

impl Payload for TPorts {
    type Beat = TBeat;

    #[inline]
    fn drive(&self, m: &mut Model, b: &TBeat) {
        m.set_words(self.data, &b.words[..self.nwords]);
        if let Some(p) = self.keep {
            set_mask(m, p, b.keep);
        }
        if let Some(p) = self.last {
            m.set_bool(p, b.last);
        }
        for (p, v) in [(self.id, b.id), (self.dest, b.dest), (self.user, b.user)] {
            if let Some(p) = p {
                m.set(p, v);
            }
        }
    }

    /// The side-band values are left zero: a sink reads them from the ports at the first
    /// beat of a frame only ([`TPorts::side_band`]).
    #[inline]
    fn sample(&self, m: &Model) -> TBeat {
        let mut words = [0u32; MAX_WORDS];
        m.get_words(self.data, &mut words[..self.nwords]);
        TBeat {
            words,
            keep: self.keep.map_or(self.full(), |p| get_mask(m, p)),
            last: self.last.is_none_or(|p| m.get_bool(p)),
            id: 0,
            dest: 0,
            user: 0,
        }
    }

    fn garbage(&self, m: &mut Model, g: &mut Garbage) {
        let words = g.words(self.nwords);
        let x = g.next();
        m.set_words(self.data, &words[..self.nwords]);
        if let Some(p) = self.keep {
            set_mask(m, p, u128::from(x));
        }
        if let Some(p) = self.last {
            m.set_bool(p, x >> 63 == 1);
        }
        for p in [self.id, self.dest, self.user].into_iter().flatten() {
            m.set(p, x >> 7);
        }
    }
}

struct SourceCore {
    faults: StreamFaults,
    t: Source<TPorts>,
    queue: VecDeque<AxisFrame>,
    /// Bytes of the head frame the sink has taken.
    pos: usize,
    /// Where the head frame continues once the beat on the bus is taken.
    next_pos: usize,
    sent: u64,
    gaps: crate::pause::Pause,
    /// Bytes of the head frame that may be put on the bus; `None` is no limit.
    credit: Option<usize>,
    /// Beats taken so far: the progress the timeout watches.
    beats: u64,
    /// Raised while nothing is queued that could go on the bus (see [`Agent::idle`]).
    idle: Idle,
}

/// An AXI-Stream source bus model.
#[derive(Clone, Debug)]
pub struct AxisSource {
    h: Handle<SourceCore, AxisMonitor>,
}

impl AxisSource {
    /// Attaches to the AXI-Stream input `<prefix>_*` of the model (the source drives
    /// `<prefix>_tvalid`, `_tdata` and, when present, `_tkeep`, `_tlast`, `_tid`, `_tdest`,
    /// `_tuser`) on `clock`, with a protocol monitor unless the defaults are off.
    pub fn attach(env: &mut Env, prefix: &str, clock: ClockId) -> Result<AxisSource> {
        let b = Bind::new(env, prefix);
        let core = SourceCore {
            faults: StreamFaults::default(),
            t: Source::bind(&b, "t", TPorts::bind(&b, true)?)?,
            queue: VecDeque::new(),
            pos: 0,
            next_pos: 0,
            sent: 0,
            gaps: crate::pause::Pause::default(),
            credit: None,
            beats: 0,
            idle: Idle::new(),
        };
        let h = Handle::attach(env, prefix, clock, core, AxisMonitor::attach)?;
        Ok(AxisSource { h })
    }

    /// The protocol monitor attached with this source, if any.
    pub fn monitor(&self) -> Option<&AxisMonitor> {
        self.h.monitor()
    }

    /// Installs a pause generator on TVALID (idle cycles between beats).
    pub fn set_pauses(&self, spec: &PauseSpec) {
        self.h.edit().set_pauses(spec, 0);
    }

    /// Leaves byte lanes empty (TKEEP low) where `spec` pauses: null bytes inside frames.
    /// Requires a TKEEP signal.
    pub fn set_gaps(&self, spec: &PauseSpec) -> Result<()> {
        let mut c = self.h.edit();
        if c.t.ports.keep.is_none() && *spec != PauseSpec::Never {
            return Err(BfmError::BadRequest {
                bus: self.h.bus.clone(),
                problem: "null-byte gaps need a tkeep signal, which this bus lacks".into(),
            });
        }
        c.gaps = spec.generator(0x6a9);
        Ok(())
    }

    /// Makes the source break the protocol on purpose.
    pub fn set_faults(&self, faults: StreamFaults) {
        self.h.edit().faults = faults;
    }

    /// Limits the head frame to its first `bytes` bytes: a beat goes on the bus only once
    /// every byte it carries is within the limit, so a model of an upstream link can release
    /// data as it arrives. `None` lifts the limit. The limit counts from the head frame's
    /// start and applies to every frame that becomes the head while it is set.
    pub fn set_credit(&self, bytes: Option<usize>) {
        self.h.edit().credit = bytes;
    }

    /// Changes the cycle limit of the blocking calls: cycles in a row without a beat taken.
    pub fn set_timeout(&mut self, cycles: u64) {
        self.h.timeout = cycles;
    }

    /// Drives changing garbage on TDATA, TKEEP, TLAST and the side-band signals whenever
    /// TVALID is low, so that a sink that uses them without TVALID fails its test.
    pub fn set_idle_garbage(&self, on: bool) {
        self.h
            .edit()
            .t
            .set_garbage(on.then_some(0x2545_f491_4f6c_dd1d));
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
        let mut c = self.h.edit();
        if frame.data.is_empty() {
            return Err(BfmError::BadRequest {
                bus: self.h.bus.clone(),
                problem: "an empty frame; a frame needs at least one byte".into(),
            });
        }
        if c.t.ports.last.is_none() && !frame.data.len().is_multiple_of(c.t.ports.bytes) {
            return Err(BfmError::BadRequest {
                bus: self.h.bus.clone(),
                problem: "without tlast, frames must fill whole beats".into(),
            });
        }
        c.queue.push_back(frame);
        Ok(())
    }

    /// Frames completely sent so far.
    pub fn sent(&self) -> u64 {
        self.h.core().sent
    }

    /// Bytes of the head frame that the sink has taken so far (0 between frames).
    pub fn progress(&self) -> usize {
        self.h.core().pos
    }

    /// Drops every queued frame that has not put a beat on the bus yet, and says whether the
    /// head frame had started (a started frame must finish: AXI-Stream cannot take back a
    /// beat, so it stays queued).
    pub fn cancel_unstarted(&self) -> bool {
        let mut c = self.h.edit();
        let started = c.pos > 0 || c.t.is_shown();
        let keep = usize::from(started);
        c.queue.truncate(keep);
        started
    }

    /// True when every queued frame is sent.
    pub fn idle(&self) -> bool {
        let c = self.h.core();
        c.queue.is_empty() && !c.t.is_shown()
    }

    /// Sends a frame and waits until its last beat is taken.
    pub fn send(&self, env: &mut Env, frame: AxisFrame) -> Result<()> {
        self.start_send(frame)?;
        self.wait_idle(env)
    }

    /// Runs until every queued frame is sent.
    pub fn wait_idle(&self, env: &mut Env) -> Result<()> {
        let what = format!("frames to leave the source on `{}`", self.h.bus);
        env.run_while_progressing(
            self.h.clock,
            self.h.timeout,
            &what,
            || self.idle(),
            || self.h.core().beats,
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
            let beat_end = (self.pos + self.t.ports.bytes).min(f.data.len());
            beat_end <= limit
        })
    }
}

/// Puts the next beat of the head frame of `queue`, which `pos` bytes of have been taken, into
/// `slot` (emptied when no frame is queued), and returns where the frame continues after it.
/// A free function of the fields it needs, so that the beat can be built in the source's own
/// slot ([`Source::show_in_place`]) while the queue is read.
fn build(
    ports: &TPorts,
    queue: &VecDeque<AxisFrame>,
    pos: usize,
    faults: StreamFaults,
    gaps: &mut crate::pause::Pause,
    slot: &mut Option<TBeat>,
) -> Option<usize> {
    let Some(frame) = queue.front() else {
        *slot = None;
        return None;
    };
    let bytes = ports.bytes;
    let beat = slot.insert(TBeat {
        words: [0; MAX_WORDS],
        keep: 0,
        last: false,
        id: frame.tid,
        dest: frame.tdest,
        user: frame.tuser,
    });
    let remaining = frame.data.len() - pos;
    let lane0 = usize::from(faults.misalign_last && remaining < bytes);
    let mut pos = pos;
    if lane0 == 0 && gaps.is_never() {
        // Whole words at a time when no lane is left empty (the common case).
        let take = remaining.min(bytes);
        let src = &frame.data[pos..pos + take];
        let mut whole = src.chunks_exact(4);
        for (w, chunk) in beat.words.iter_mut().zip(whole.by_ref()) {
            *w = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        }
        let tail = whole.remainder();
        if !tail.is_empty() {
            let mut b = [0u8; 4];
            b[..tail.len()].copy_from_slice(tail);
            beat.words[take / 4] = u32::from_le_bytes(b);
        }
        beat.keep = if take >= 128 {
            u128::MAX
        } else {
            (1u128 << take) - 1
        };
        pos += take;
    } else {
        for i in lane0..bytes {
            if pos >= frame.data.len() {
                break;
            }
            if gaps.pause_now() {
                continue;
            }
            set_lane(&mut beat.words, i, frame.data[pos]);
            beat.keep |= 1 << i;
            pos += 1;
        }
    }
    beat.last = pos >= frame.data.len();
    Some(pos)
}

impl Agent for SourceCore {
    fn sample(&mut self, m: &Model, _cx: &Cx) -> Result<()> {
        if let Some(b) = self.t.sample(m) {
            self.beats += 1;
            self.pos = self.next_pos;
            if b.last {
                self.queue.pop_front();
                self.pos = 0;
                self.sent += 1;
            }
        }
        Ok(())
    }

    fn drive(&mut self, m: &mut Model, cx: &Cx) -> Result<()> {
        self.idle.set(false);
        let f = self.faults;
        if cx.holds_in_reset(f.valid_right_after_reset) {
            self.t.reset(m, f.valid_in_reset);
            return Ok(());
        }
        if let Turn::Free { go } = self.t.turn() {
            let ready = go && self.has_credit();
            let (queue, pos, faults, gaps) = (&self.queue, self.pos, self.faults, &mut self.gaps);
            let mut next = None;
            self.t.show_in_place(m, |ports, slot| {
                if ready {
                    next = build(ports, queue, pos, faults, gaps, slot);
                } else {
                    *slot = None;
                }
            });
            if let Some(n) = next {
                self.next_pos = n;
            }
        } else {
            if f.drop_valid_on_stall {
                // Drop the beat; it is rebuilt from the same position next time.
                self.t.drop_valid(m);
            } else if f.change_payload_on_stall || f.change_null_byte_on_stall {
                let bytes = self.t.ports.bytes;
                self.t.change_shown(m, |b| {
                    let want_kept = f.change_payload_on_stall;
                    if let Some(i) = (0..bytes).find(|i| (b.keep >> i & 1 == 1) == want_kept) {
                        let v = lane(&b.words, i) ^ 0xff;
                        set_lane(&mut b.words, i, v);
                    }
                });
            }
            return Ok(());
        }
        if !self.t.is_shown()
            && !self.t.garbage_on()
            && self.t.pause.is_never()
            && (self.queue.is_empty() || !self.has_credit())
        {
            // TVALID low, nothing that could go up before a call on the handle: the next
            // edges would sample nothing and drive the same.
            self.idle.set(true);
        }
        Ok(())
    }

    fn set_pauses(&mut self, spec: &PauseSpec, salt: u64) {
        self.t.pause = spec.generator(salt.wrapping_mul(16) + 5);
        self.idle.set(false);
    }

    fn idle(&self) -> Option<(Idle, Vec<Port>)> {
        Some((self.idle.clone(), Vec::new()))
    }
}

struct SinkCore {
    /// The port prefix, for errors.
    bus: String,
    t: Sink<TPorts>,
    cur: Option<AxisFrame>,
    frames: VecDeque<AxisFrame>,
    /// False holds TREADY low whatever the pause generator says.
    enabled: bool,
    /// Raised while TREADY would stay as it is; TVALID wakes the sink (see [`Agent::idle`]).
    idle: Idle,
}

/// An AXI-Stream sink bus model: collects frames, with backpressure on TREADY.
#[derive(Clone, Debug)]
pub struct AxisSink {
    h: Handle<SinkCore, AxisMonitor>,
}

impl AxisSink {
    /// Attaches to the AXI-Stream output `<prefix>_*` of the model on `clock`, with a
    /// protocol monitor unless the defaults are off.
    pub fn attach(env: &mut Env, prefix: &str, clock: ClockId) -> Result<AxisSink> {
        let b = Bind::new(env, prefix);
        let core = SinkCore {
            bus: prefix.to_string(),
            t: Sink::bind(&b, "t", TPorts::bind(&b, false)?)?,
            cur: None,
            frames: VecDeque::new(),
            enabled: true,
            idle: Idle::new(),
        };
        let h = Handle::attach(env, prefix, clock, core, AxisMonitor::attach)?;
        Ok(AxisSink { h })
    }

    /// The protocol monitor attached with this sink, if any.
    pub fn monitor(&self) -> Option<&AxisMonitor> {
        self.h.monitor()
    }

    /// Installs a pause generator on TREADY (backpressure).
    pub fn set_pauses(&self, spec: &PauseSpec) {
        self.h.edit().set_pauses(spec, 0);
    }

    /// Changes the cycle limit of the blocking calls.
    pub fn set_timeout(&mut self, cycles: u64) {
        self.h.timeout = cycles;
    }

    /// Turns the sink on or off: while off, TREADY stays low from the next edge on, as with a
    /// DMA engine that has no buffer posted. A sink starts on.
    pub fn set_enabled(&self, on: bool) {
        self.h.edit().enabled = on;
    }

    /// Complete frames received and not yet taken.
    pub fn pending(&self) -> usize {
        self.h.core().frames.len()
    }

    /// Bytes of the frame being received, whose last beat has not come yet.
    pub fn partial(&self) -> usize {
        self.h.core().cur.as_ref().map_or(0, |f| f.data.len())
    }

    /// Takes the oldest complete frame, if any, without running.
    pub fn try_recv(&self) -> Option<AxisFrame> {
        self.h.edit().frames.pop_front()
    }

    /// Runs until a complete frame is there and takes it.
    pub fn recv(&self, env: &mut Env) -> Result<AxisFrame> {
        let (clock, timeout) = (self.h.clock, self.h.timeout);
        let what = format!("a frame on `{}`", self.h.bus);
        env.run_until_agents(clock, timeout, &what, || self.pending() > 0)?;
        self.try_recv()
            .ok_or_else(|| env.timeout(clock, timeout, &what))
    }

    /// Runs until `n` complete frames are there and takes them, oldest first. The cycle
    /// limit bounds the wait for each next frame, not the whole run.
    pub fn recv_n(&self, env: &mut Env, n: usize) -> Result<Vec<AxisFrame>> {
        let what = format!("{n} frames on `{}`", self.h.bus);
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            if let Some(f) = self.try_recv() {
                out.push(f);
                continue;
            }
            env.run_while_progressing(
                self.h.clock,
                self.h.timeout,
                &format!("{what} ({} received)", out.len()),
                || self.pending() > 0,
                || self.pending() as u64,
            )?;
        }
        Ok(out)
    }
}

impl Agent for SinkCore {
    fn sample(&mut self, m: &Model, cx: &Cx) -> Result<()> {
        let Some(b) = self.t.sample(m) else {
            return Ok(());
        };
        let p = &self.t.ports;
        if let Some(strb) = p.strb {
            // AXI-Stream: a byte with TKEEP high and TSTRB low is a position byte, whose value
            // means nothing (on a bus without TKEEP every byte is kept). A frame has no place
            // for one, and taking it as data would fail a check for the wrong reason.
            let position = b.keep & !get_mask(m, strb);
            if position != 0 {
                let how = if p.keep.is_some() {
                    "a master that sends only data and null bytes holds TSTRB equal to TKEEP"
                        .to_string()
                } else {
                    format!(
                        "if the master means TSTRB as TKEEP (low for null bytes, as the Vivado AXI-Stream master template's TSTRB), bind it as TKEEP before attaching: Env::map_signal(\"{}\", \"tkeep\", \"<its TSTRB port>\")",
                        self.bus
                    )
                };
                return Err(BfmError::Unsupported {
                    bus: self.bus.clone(),
                    problem: format!(
                        "a beat at cycle {} has position bytes (kept, TSTRB low) in lanes {position:#x}, which a frame has no place for; {how}",
                        cx.cycle
                    ),
                });
            }
        }
        let f = self.cur.get_or_insert_with(|| {
            let (tid, tdest, tuser) = p.side_band(m);
            AxisFrame {
                data: Vec::new(),
                tid,
                tdest,
                tuser,
            }
        });
        if b.keep == p.full() {
            // Every lane kept: the beat's bytes in one copy.
            let mut bytes = [0u8; 4 * MAX_WORDS];
            for (c, w) in bytes.chunks_exact_mut(4).zip(&b.words[..p.nwords]) {
                c.copy_from_slice(&w.to_le_bytes());
            }
            f.data.extend_from_slice(&bytes[..p.bytes]);
        } else {
            for i in 0..p.bytes {
                if b.keep >> i & 1 == 1 {
                    f.data.push(lane(&b.words, i));
                }
            }
        }
        if b.last {
            if let Some(f) = self.cur.take() {
                self.frames.push_back(f);
            }
        }
        Ok(())
    }

    fn drive(&mut self, m: &mut Model, cx: &Cx) -> Result<()> {
        if cx.in_reset {
            self.cur = None;
            self.t.off(m);
        } else if self.enabled {
            self.t.drive(m, true);
        } else {
            self.t.off(m);
        }
        // Without pauses TREADY stays as it is until a call on the handle; only TVALID gives
        // the sink something to do.
        self.idle.set(!cx.in_reset && self.t.pause.is_never());
        Ok(())
    }

    fn set_pauses(&mut self, spec: &PauseSpec, salt: u64) {
        self.t.pause = spec.generator(salt.wrapping_mul(16) + 13);
        self.idle.set(false);
    }

    fn idle(&self) -> Option<(Idle, Vec<Port>)> {
        Some((self.idle.clone(), vec![self.t.valid_port()]))
    }
}
