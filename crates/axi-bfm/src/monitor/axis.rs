//! The AXI-Stream protocol monitor, which also records frames when asked.

use sim_runtime::{ClockId, Model, Port};

use super::rules::{self, Rule};
use super::{
    coverage, handshakes, violation, Chan, Channel, Coverage, Edge, Event, Events, Situation,
    Violation,
};
use crate::axis_frame::{AxisFrame, RecordedFrame};
use crate::bind::{get_mask, lane, Bind, Words, MAX_WORDS};
use crate::env::{Agent, Cx, Env, Idle};
use crate::error::{BfmError, Result};
use crate::handle::Bare;

/// Rules of an AXI-Stream bus that depend on its sink, and the stall bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AxisMonitorConfig {
    /// Check the XDMA rule: TKEEP all ones except on the TLAST beat, where it is packed from
    /// lane 0 (tkeep_full_except_last, tkeep_last_packed). Off by default: AXI-Stream itself
    /// allows null bytes anywhere.
    pub tkeep_packed: bool,
    /// Smallest frame in bytes (0: no limit).
    pub min_frame: u64,
    /// Largest frame in bytes (0: no limit).
    pub max_frame: u64,
    /// Cycles TVALID may wait for TREADY (0: no bound).
    pub stall_bound: u64,
    /// Keep every frame with its start and end times (see [`AxisMonitor::frames`]).
    pub record: bool,
}

impl Default for AxisMonitorConfig {
    fn default() -> Self {
        AxisMonitorConfig {
            tkeep_packed: false,
            min_frame: 0,
            max_frame: 0,
            stall_bound: 1_000,
            record: false,
        }
    }
}

/// True when `cfg` asks for no frame rule and no recording.
fn plain(cfg: &AxisMonitorConfig) -> bool {
    !cfg.tkeep_packed && cfg.min_frame == 0 && cfg.max_frame == 0 && !cfg.record
}

pub(crate) struct AxisCheck {
    bus: String,
    cfg: AxisMonitorConfig,
    t: Chan,
    tdata: Port,
    tkeep: Option<Port>,
    tlast: Option<Port>,
    tid: Option<Port>,
    tdest: Option<Port>,
    tuser: Option<Port>,
    bytes: usize,
    full: u128,
    data_words: usize,
    words: Words,
    was_in_reset: bool,
    frame_bytes: u64,
    cur: Option<RecordedFrame>,
    frames: Vec<RecordedFrame>,
    /// Beats accepted out of reset. Full beats are what null-byte ones leave of these, and a
    /// frame's length is the difference at its TLAST, so a beat costs one increment here.
    beats: u64,
    /// [`AxisCheck::beats`] at the last TLAST (or reset): where the frame in progress began.
    frame_start: u64,
    /// No frame rule and no recording: a beat only counts its bytes.
    plain: bool,
    /// The situations counted (functional coverage).
    events: Events,
    /// Raised while TVALID is low with no stall in progress, clear of reset: an edge then
    /// breaks no rule and changes nothing (see [`Agent::idle`]).
    idle: Idle,
}

/// A handle on an AXI-Stream monitor attached to an environment.
#[derive(Clone)]
pub struct AxisMonitor {
    /// The bus models' one handle shape, on the monitor's checks.
    handle: Bare<AxisCheck>,
}

impl std::fmt::Debug for AxisMonitor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = self.handle.core();
        f.debug_struct("AxisMonitor")
            .field("bus", &c.bus)
            .field("cfg", &c.cfg)
            .field("frames", &c.frames.len())
            .finish()
    }
}

impl AxisMonitor {
    /// Watches the AXI-Stream bus `<prefix>_*` on `clock` with the default rules.
    pub fn attach(env: &mut Env, prefix: &str, clock: ClockId) -> Result<AxisMonitor> {
        Self::attach_with(env, prefix, clock, AxisMonitorConfig::default())
    }

    /// Watches the AXI-Stream bus `<prefix>_*` on `clock`.
    pub fn attach_with(
        env: &mut Env,
        prefix: &str,
        clock: ClockId,
        cfg: AxisMonitorConfig,
    ) -> Result<AxisMonitor> {
        let b = Bind::new(env, prefix);
        let tdata = b.watch("tdata")?;
        let bytes = b.data_bytes(tdata, "tdata")?;
        if bytes > 128 {
            return Err(BfmError::Bind {
                bus: prefix.to_string(),
                problem: "AXI-Stream buses of up to 1024 bits are supported".into(),
            });
        }
        let payload = ["tdata", "tkeep", "tstrb", "tlast", "tid", "tdest", "tuser"];
        let t = Chan::bind(&b, Channel::T, "tvalid", "tready", &payload)?;
        let check = AxisCheck {
            bus: prefix.to_string(),
            cfg,
            t,
            tdata,
            tkeep: b.opt_watch("tkeep"),
            tlast: b.opt_watch("tlast"),
            tid: b.opt_watch("tid"),
            tdest: b.opt_watch("tdest"),
            tuser: b.opt_watch("tuser"),
            bytes,
            full: if bytes >= 128 {
                u128::MAX
            } else {
                (1u128 << bytes) - 1
            },
            data_words: bytes.div_ceil(4).min(MAX_WORDS),
            words: [0; MAX_WORDS],
            was_in_reset: false,
            frame_bytes: 0,
            beats: 0,
            frame_start: 0,
            plain: plain(&cfg),
            events: Events::default(),
            cur: None,
            frames: Vec::new(),
            idle: Idle::new(),
        };
        Ok(AxisMonitor {
            handle: Bare::attach_bare(env, prefix, clock, check),
        })
    }

    /// The rules in force.
    pub fn config(&self) -> AxisMonitorConfig {
        self.handle.core().cfg
    }

    /// Changes the rules.
    pub fn set_config(&self, cfg: AxisMonitorConfig) {
        let mut c = self.handle.edit();
        c.cfg = cfg;
        c.plain = plain(&cfg);
    }

    /// The frames recorded so far (with `record` on).
    pub fn frames(&self) -> Vec<RecordedFrame> {
        self.handle.core().frames.clone()
    }

    /// The protocol situations this monitor has seen so far (functional coverage).
    pub fn coverage(&self) -> Coverage {
        let c = self.handle.core();
        let mut cov = coverage([&c.t], &c.events);
        let null = cov.count(Situation::Event(Event::NullBytes));
        cov.add(Situation::Event(Event::FullBeat), c.beats - null);
        cov
    }

    /// The situations this monitor's rules are about on this bus: every pace of the stream,
    /// full beats, null bytes (with TKEEP), frames of one and of several beats (with TLAST)
    /// and back-pressure on a TLAST beat.
    pub fn situations(&self) -> Vec<Situation> {
        let c = self.handle.core();
        let mut all = handshakes(&[Channel::T]);
        all.push(Situation::Event(Event::FullBeat));
        if c.tkeep.is_some() {
            all.push(Situation::Event(Event::NullBytes));
        }
        all.push(Situation::Event(Event::SingleBeatFrame));
        if c.tlast.is_some() {
            all.push(Situation::Event(Event::MultiBeatFrame));
        }
        all.push(Situation::Event(Event::StallAtLast));
        all
    }

    /// Takes the frames recorded so far.
    pub fn take_frames(&self) -> Vec<RecordedFrame> {
        std::mem::take(&mut self.handle.edit().frames)
    }
}

impl AxisCheck {
    /// Counts the situations of an accepted beat; `after_stall` says whether it waited for
    /// TREADY.
    #[inline]
    fn count_beat(&mut self, keep: u128, tlast: bool, after_stall: bool) {
        self.beats += 1;
        self.events.bump_if(Event::NullBytes, keep != self.full);
        if tlast {
            self.count_frame(after_stall);
        }
    }

    /// Counts the situations of a frame, at its TLAST beat (counted already).
    fn count_frame(&mut self, after_stall: bool) {
        let e = &mut self.events;
        let len = self.beats - self.frame_start;
        e.bump_if(Event::SingleBeatFrame, len == 1);
        e.bump_if(Event::MultiBeatFrame, len > 1);
        e.bump_if(Event::StallAtLast, after_stall);
        self.frame_start = self.beats;
    }

    /// The bytes a beat with `keep` carries: a full beat's are known, so the population
    /// count (a loop on a u128 without a POPCNT instruction) runs only for null bytes.
    #[inline]
    fn beat_bytes(&self, keep: u128) -> u64 {
        if keep == self.full {
            self.bytes as u64
        } else {
            u64::from(keep.count_ones())
        }
    }

    fn on_beat(&mut self, m: &Model, cx: &Cx, keep: u128, after_stall: bool) -> Option<Violation> {
        let tlast = self.tlast.is_none_or(|p| m.get_bool(p));
        self.count_beat(keep, tlast, after_stall);
        if self.plain {
            // No frame rule and no recording: only the byte count is kept, which the rules
            // would need if they were switched on mid-frame.
            self.frame_bytes = if tlast {
                0
            } else {
                self.frame_bytes + self.beat_bytes(keep)
            };
            return None;
        }
        let vals = [("tkeep", keep as u64), ("tlast", u64::from(tlast))];
        let mut found = None;
        if self.cfg.tkeep_packed {
            if let Some(n) = rules::tkeep_full_except_last(keep, self.full, tlast) {
                found = Some(violation(
                    Rule::TkeepFullExceptLast,
                    &self.bus,
                    Channel::T,
                    cx,
                    n,
                    &vals,
                ));
            } else if let Some(n) = rules::tkeep_last_packed(keep, tlast) {
                found = Some(violation(
                    Rule::TkeepLastPacked,
                    &self.bus,
                    Channel::T,
                    cx,
                    n,
                    &vals,
                ));
            }
        }
        let before = self.frame_bytes;
        self.frame_bytes += self.beat_bytes(keep);
        let (min, max) = (self.cfg.min_frame, self.cfg.max_frame);
        let len_vals = [("bytes", self.frame_bytes)];
        // The maximum is reported once, on the beat that first exceeds it; the minimum on the
        // last beat.
        let too_long = (max > 0 && before <= max)
            .then(|| rules::frame_length_limits(self.frame_bytes, false, 0, max))
            .flatten();
        let too_short = tlast
            .then(|| rules::frame_length_limits(self.frame_bytes, true, min, 0))
            .flatten();
        if let Some(n) = too_long.or(too_short) {
            found.get_or_insert_with(|| {
                violation(
                    Rule::FrameLengthLimits,
                    &self.bus,
                    Channel::T,
                    cx,
                    n,
                    &len_vals,
                )
            });
        }
        if self.cfg.record {
            m.get_words(self.tdata, &mut self.words[..self.data_words]);
            let f = self.cur.get_or_insert_with(|| RecordedFrame {
                frame: AxisFrame {
                    data: Vec::new(),
                    tid: self.tid.map_or(0, |p| m.get(p)),
                    tdest: self.tdest.map_or(0, |p| m.get(p)),
                    tuser: self.tuser.map_or(0, |p| m.get(p)),
                },
                start_ps: cx.time_ps,
                end_ps: cx.time_ps,
                start_cycle: cx.cycle,
                end_cycle: cx.cycle,
            });
            for i in 0..self.bytes {
                if keep >> i & 1 == 1 {
                    f.frame.data.push(lane(&self.words, i));
                }
            }
            f.end_ps = cx.time_ps;
            f.end_cycle = cx.cycle;
        }
        if tlast {
            self.frame_bytes = 0;
            if let Some(f) = self.cur.take() {
                self.frames.push(f);
            }
        }
        found
    }
}

impl Agent for AxisCheck {
    fn sample(&mut self, m: &Model, cx: &Cx) -> Result<()> {
        // Read before the check moves the stall history on to this edge.
        let after_stall = self.t.stalled_before();
        self.t.sample(m);
        let keep = if self.t.v {
            self.tkeep.map_or(self.full, |p| get_mask(m, p))
        } else {
            0
        };
        if self.t.v && keep != self.full {
            // Null bytes (TKEEP low) carry nothing, so they may change under a stall.
            let bytes = self.bytes;
            if let Some(words) = self.t.payload_mut() {
                for i in 0..bytes {
                    if keep >> i & 1 == 0 {
                        crate::bind::set_lane(words, i, 0);
                    }
                }
            }
        }
        let mut found = self.t.check(&Edge {
            bus: &self.bus,
            cx,
            was_in_reset: self.was_in_reset,
            stall_bound: self.cfg.stall_bound,
        });
        self.was_in_reset = cx.in_reset;
        if cx.in_reset {
            self.frame_bytes = 0;
            self.frame_start = self.beats;
            self.cur = None;
        } else if self.t.fire() {
            if let Some(v) = self.on_beat(m, cx, keep, after_stall) {
                found.get_or_insert(v);
            }
        }
        self.idle.set(!cx.in_reset && self.t.idle());
        match found {
            Some(v) => Err(v.into()),
            None => Ok(()),
        }
    }

    fn is_monitor(&self) -> bool {
        true
    }

    fn drive(&mut self, _m: &mut Model, _cx: &Cx) -> Result<()> {
        Ok(())
    }

    fn restart(&mut self) {
        self.idle.set(false);
    }

    fn idle(&self) -> Option<(Idle, Vec<Port>)> {
        Some((self.idle.clone(), vec![self.t.valid_port()]))
    }
}
