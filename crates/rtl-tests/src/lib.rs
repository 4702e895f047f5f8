//! rtl-tests: the card's RTL tests, driven through axi-bfm bus models with protocol monitors on.
//!
//! The tests live in `tests/`; this library holds what several of them share: an agent made
//! of two closures (to record handshakes or drive side-band inputs at the right point of each
//! edge), byte-lane arithmetic for AXI4 bursts, a small deterministic random generator for
//! test data, and [`Card`], the card's top (`card_core` or `sim_top`) with a bus model on
//! every interface.

use std::cell::RefCell;
use std::rc::Rc;

use axi_bfm::{
    Agent, AxiMaster, AxilMaster, AxisMonitorConfig, AxisSink, AxisSource, BfmError, Burst, Cx,
    Env, PauseSpec, ResetPolarity, Result,
};
use card_sim::{ClockId, Model, Port, Top};

/// The reference board's AXI clock (axi_aclk).
pub const AXI_HZ: u64 = 250_000_000;
/// The reference board's DDR controller clock (ddr_clk).
pub const DDR_HZ: u64 = 200_000_000;

/// An agent made of two closures: `sample` runs before each rising edge of its clock and sees
/// the values the edge registers, `drive` runs after the edge. Tests use it to record
/// handshakes and to drive inputs that no bus model owns.
struct Hook<S, D> {
    sample: S,
    drive: D,
}

impl<S, D> Agent for Hook<S, D>
where
    S: FnMut(&Model, &Cx),
    D: FnMut(&mut Model, &Cx),
{
    fn sample(&mut self, model: &Model, cx: &Cx) -> Result<()> {
        (self.sample)(model, cx);
        Ok(())
    }

    fn drive(&mut self, model: &mut Model, cx: &Cx) -> Result<()> {
        (self.drive)(model, cx);
        Ok(())
    }
}

/// Adds an agent of two closures on `clock` to the environment: `sample` runs before each
/// rising edge, `drive` after it.
pub fn hook<S, D>(env: &mut Env, clock: ClockId, sample: S, drive: D)
where
    S: FnMut(&Model, &Cx) + 'static,
    D: FnMut(&mut Model, &Cx) + 'static,
{
    env.add_agent(clock, Rc::new(RefCell::new(Hook { sample, drive })));
}

/// Adds a hook that only samples.
pub fn on_sample<S>(env: &mut Env, clock: ClockId, sample: S)
where
    S: FnMut(&Model, &Cx) + 'static,
{
    hook(env, clock, sample, |_: &mut Model, _: &Cx| {});
}

/// Whether a valid/ready pair completes a handshake at the coming edge.
pub fn fires(m: &Model, valid: Port, ready: Port) -> bool {
    m.get_bool(valid) && m.get_bool(ready)
}

/// A small deterministic generator (xorshift64*) for test data: every run of a seed is the
/// same, so a failure reproduces from the seed the test names.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (any value; zero is remapped).
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15 | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A value in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < u64::from(percent)
    }

    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

/// INCR, the only burst type the card's RTL issues and the tests drive.
pub const INCR: u8 = 1;

/// An INCR burst of `beats` beats of `1 << size` bytes at `addr`.
pub fn incr(id: u32, addr: u64, size: u8, beats: usize) -> Burst {
    Burst {
        id,
        addr,
        len: (beats - 1) as u8,
        size,
        burst: INCR,
        lock: false,
    }
}

/// The byte lanes `[lo, hi)` that beat `k` of an INCR burst at `addr` with transfer size
/// `size` uses on a bus of `bus` bytes, as the AXI specification assigns them, and the
/// address of lane 0 of that beat.
pub fn beat_lanes(addr: u64, size: u8, k: u64, bus: usize) -> (usize, usize, u64) {
    let step = 1u64 << size;
    let beat_addr = if k == 0 {
        addr
    } else {
        (addr & !(step - 1)) + k * step
    };
    let lo = (beat_addr % bus as u64) as usize;
    let hi = (((beat_addr & !(step - 1)) % bus as u64) as usize + step as usize).min(bus);
    (lo, hi, beat_addr & !(bus as u64 - 1))
}

/// Turns full-width beats with per-lane strobes (`(bytes of the bus width, strobe bits)`)
/// into the lane bytes and strobes of [`AxiMaster::start_write_burst_strobed`]: only the lanes
/// each beat of the burst uses, in order.
pub fn strobed_lanes(burst: &Burst, bus: usize, beats: &[(Vec<u8>, u128)]) -> (Vec<u8>, Vec<bool>) {
    let mut data = Vec::new();
    let mut keep = Vec::new();
    for (k, (bytes, strb)) in beats.iter().enumerate() {
        let (lo, hi, _) = beat_lanes(burst.addr, burst.size, k as u64, bus);
        for (lane, &b) in bytes.iter().enumerate().take(hi).skip(lo) {
            data.push(b);
            keep.push(strb >> lane & 1 == 1);
        }
    }
    (data, keep)
}

/// What `mem` (covering `base..`) must hold after a write burst of full-width `beats` at
/// `addr` with transfer size `size`: narrow and unaligned beats only touch the byte lanes AXI
/// assigns them, and only where their strobe is set.
pub fn apply_write(
    mem: &mut [u8],
    base: u64,
    addr: u64,
    size: u8,
    bus: usize,
    beats: &[(Vec<u8>, u128)],
) {
    for (k, (bytes, strb)) in beats.iter().enumerate() {
        let (lo, hi, line) = beat_lanes(addr, size, k as u64, bus);
        for lane in lo..hi {
            if strb >> lane & 1 == 1 {
                mem[(line + lane as u64 - base) as usize] = bytes[lane];
            }
        }
    }
}

/// A response beat (B or R) as recorded from the bus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RespBeat {
    /// BID or RID (0 when the bus has no IDs).
    pub id: u64,
    /// BRESP or RRESP.
    pub resp: u64,
    /// RLAST (always true for B).
    pub last: bool,
    /// Edge number of the handshake on the bus's clock.
    pub cycle: u64,
}

/// Every handshake of an AXI4 bus's address and response channels, in order, recorded
/// before each edge: what the bus models do not keep (per-beat IDs, RLAST, timing).
#[derive(Debug, Clone, Default)]
pub struct AxiLog {
    /// Edges of the AW handshakes.
    pub aw: Vec<u64>,
    /// Edges of the AR handshakes.
    pub ar: Vec<u64>,
    /// Write responses.
    pub b: Vec<RespBeat>,
    /// Read data beats.
    pub r: Vec<RespBeat>,
}

/// Records the handshakes of the AXI4 bus `<prefix>_*` on `clock` (write-only buses too).
pub fn record_axi(env: &mut Env, prefix: &str, clock: ClockId) -> Result<Rc<RefCell<AxiLog>>> {
    let m = env.model();
    let p = |s: &str| m.port(&format!("{prefix}_{s}"));
    let opt = |s: &str| m.port(&format!("{prefix}_{s}")).ok();
    let aw = (p("awvalid")?, p("awready")?);
    let b = (p("bvalid")?, p("bready")?, opt("bid"), p("bresp")?);
    let ar = match (opt("arvalid"), opt("arready")) {
        (Some(v), Some(r)) => Some((v, r)),
        _ => None,
    };
    let r = match (opt("rvalid"), opt("rready"), opt("rresp"), opt("rlast")) {
        (Some(v), Some(rd), Some(resp), Some(last)) => Some((v, rd, opt("rid"), resp, last)),
        _ => None,
    };
    let log = Rc::new(RefCell::new(AxiLog::default()));
    let l = log.clone();
    on_sample(env, clock, move |m, cx| {
        if cx.in_reset {
            return;
        }
        let mut l = l.borrow_mut();
        if fires(m, aw.0, aw.1) {
            l.aw.push(cx.cycle);
        }
        if ar.is_some_and(|(v, r)| fires(m, v, r)) {
            l.ar.push(cx.cycle);
        }
        if fires(m, b.0, b.1) {
            l.b.push(RespBeat {
                id: b.2.map_or(0, |x| m.get(x)),
                resp: m.get(b.3),
                last: true,
                cycle: cx.cycle,
            });
        }
        if let Some((v, rd, id, resp, last)) = r {
            if fires(m, v, rd) {
                l.r.push(RespBeat {
                    id: id.map_or(0, |x| m.get(x)),
                    resp: m.get(resp),
                    last: m.get_bool(last),
                    cycle: cx.cycle,
                });
            }
        }
    });
    Ok(log)
}

/// Runs two edges of `clock` with its resets asserted before any bus model is attached. A
/// synchronous reset needs an edge to act, and in the randomized build (`CARD_SIM_X`) the
/// registers start from random values; the monitors then check the reset rules from an edge
/// at which the reset has acted.
pub fn settle_in_reset(env: &mut Env, clock: ClockId) -> Result<()> {
    env.reset(clock, 2)
}

/// `axi_mm_path_tb` (the memory-mapped path with a DDR3 model behind it) in an environment
/// with its two clocks, after reset: `(env, clk, ddr_clk)`. Both resets are held together
/// and released together, as the board's reset tree does.
pub fn mm_path() -> Result<(Env, ClockId, ClockId)> {
    let mut env = Env::new(Model::new(Top::AxiMmPathTb)?);
    let clk = env.add_clock("clk", AXI_HZ)?;
    let ddr_clk = env.add_clock("ddr_clk", DDR_HZ)?;
    env.add_reset(clk, "rst", ResetPolarity::ActiveHigh)?;
    env.add_reset(clk, "ddr_rst", ResetPolarity::ActiveHigh)?;
    settle_in_reset(&mut env, clk)?;
    env.reset(clk, 10)?;
    env.run(clk, 5)?;
    Ok((env, clk, ddr_clk))
}

/// A frame received on a C2H channel, with the axi_aclk edges of its first and last beat.
#[derive(Debug, Clone)]
pub struct Frame {
    /// The frame's bytes (TKEEP applied).
    pub bytes: Vec<u8>,
    /// Edge number of the first beat's handshake.
    pub first_cycle: u64,
    /// Edge number of the last beat's handshake.
    pub last_cycle: u64,
}

/// Counts the card's stream handshakes, sampled before every axi_aclk edge.
#[derive(Debug, Default)]
struct StreamCounts {
    h2c_beats: u64,
    h2c_stalls: u64,
    c2h_beats: [u64; 2],
}

/// Interrupt acknowledge state: usr_irq_req/ack have no bus model, so this agent samples the
/// request and pulses the acknowledge for one cycle, as the XDMA IP does.
#[derive(Debug, Default)]
struct Irq {
    auto_ack: Option<u64>,
    high_for: u64,
    acks: u64,
}

/// Longest wait for a register access, in axi_aclk cycles.
const REG_TIMEOUT: u64 = 2_000;

/// The card's top (`card_core` or `sim_top`) in an environment, with a bus model and its
/// protocol monitor on every interface: an AXI4-Lite master on the register BAR (`s_axil`),
/// an AXI4 master on the DMA port (`s_axi`), an AXI-Stream source on H2C0 and sinks on C2H0
/// and C2H1. The user interrupt is acknowledged through the model directly.
#[derive(Debug)]
pub struct Card {
    /// The environment: the model and every agent.
    pub env: Env,
    /// axi_aclk.
    pub clk: ClockId,
    /// ddr_clk, when the card was built with it.
    pub ddr_clk: Option<ClockId>,
    /// The register BAR's master.
    pub regs: AxilMaster,
    /// The DMA port's master.
    pub dma: AxiMaster,
    /// The H2C0 stream source.
    pub h2c: AxisSource,
    /// The C2H0 and C2H1 stream sinks (ready on every cycle unless paused).
    pub c2h: [AxisSink; 2],
    counts: Rc<RefCell<StreamCounts>>,
    irq: Rc<RefCell<Irq>>,
    irq_req: Port,
    irq_ack: Port,
    reset_cycles: u64,
}

impl Card {
    /// Builds `top`, starts axi_aclk and, with `ddr_clock`, the DDR controller's clock (a test
    /// that never touches DDR leaves it off and runs faster), attaches the bus models and
    /// resets the card for 8 cycles.
    pub fn new(top: Top, ddr_clock: bool) -> Result<Card> {
        // In the randomized build a DDR side without a clock would never take its reset and
        // keep its random state: the clock runs whenever that build is asked for.
        let randomized = std::env::var(card_sim::X_ENV).is_ok_and(|v| !v.is_empty() && v != "0");
        let ddr_clock = ddr_clock || randomized;
        let mut env = Env::new(Model::new(top)?);
        let clk = env.add_clock("axi_aclk", AXI_HZ)?;
        let ddr_clk = if ddr_clock {
            Some(env.add_clock("ddr_clk", DDR_HZ)?)
        } else {
            None
        };
        env.add_reset(clk, "axi_aresetn", ResetPolarity::ActiveLow)?;
        // The DDR side's reset is released with the AXI reset, as the board's reset tree does.
        env.add_reset(clk, "ddr_rst", ResetPolarity::ActiveHigh)?;
        settle_in_reset(&mut env, clk)?;
        let regs = AxilMaster::attach(&mut env, "s_axil", clk)?;
        let dma = AxiMaster::attach(&mut env, "s_axi", clk)?;
        let h2c = AxisSource::attach(&mut env, "s_axis_h2c0", clk)?;
        let c2h = [
            AxisSink::attach(&mut env, "m_axis_c2h0", clk)?,
            AxisSink::attach(&mut env, "m_axis_c2h1", clk)?,
        ];
        for s in &c2h {
            if let Some(mon) = s.monitor() {
                // The C2H streams go to the XDMA engine, which requires packed TKEEP; the
                // monitor also records each frame's first and last edge.
                mon.set_config(AxisMonitorConfig {
                    tkeep_packed: true,
                    record: true,
                    ..mon.config()
                });
            }
        }
        let counts = Rc::new(RefCell::new(StreamCounts::default()));
        {
            let m = env.model();
            let p = |n: &str| m.port(n);
            let h2c_v = p("s_axis_h2c0_tvalid")?;
            let h2c_r = p("s_axis_h2c0_tready")?;
            let c2h_v = [p("m_axis_c2h0_tvalid")?, p("m_axis_c2h1_tvalid")?];
            let c2h_r = [p("m_axis_c2h0_tready")?, p("m_axis_c2h1_tready")?];
            let c = counts.clone();
            on_sample(&mut env, clk, move |m, cx| {
                if cx.in_reset {
                    return;
                }
                let mut c = c.borrow_mut();
                if m.get_bool(h2c_v) {
                    if m.get_bool(h2c_r) {
                        c.h2c_beats += 1;
                    } else {
                        c.h2c_stalls += 1;
                    }
                }
                for ch in 0..2 {
                    if fires(m, c2h_v[ch], c2h_r[ch]) {
                        c.c2h_beats[ch] += 1;
                    }
                }
            });
        }
        let irq_req = env.model().port("usr_irq_req")?;
        let irq_ack = env.model_mut().input("usr_irq_ack")?;
        let irq = Rc::new(RefCell::new(Irq::default()));
        {
            let state = irq.clone();
            let seen = Rc::new(RefCell::new((false, false)));
            let seen_d = seen.clone();
            hook(
                &mut env,
                clk,
                move |m, _| *seen.borrow_mut() = (m.get_bool(irq_req), m.get_bool(irq_ack)),
                move |m, _| {
                    let (req, acking) = *seen_d.borrow();
                    let mut s = state.borrow_mut();
                    // The acknowledge is a one-cycle pulse.
                    if acking {
                        m.set_bool(irq_ack, false);
                        s.acks += 1;
                        s.high_for = 0;
                    } else if req {
                        s.high_for += 1;
                        if s.auto_ack.is_some_and(|n| s.high_for >= n) {
                            m.set_bool(irq_ack, true);
                        }
                    }
                },
            );
        }
        env.reset(clk, 8)?;
        let mut card = Card {
            env,
            clk,
            ddr_clk,
            regs,
            dma,
            h2c,
            c2h,
            counts,
            irq,
            irq_req,
            irq_ack,
            reset_cycles: 0,
        };
        card.ticks(4)?;
        card.reset_cycles = card.env.cycles(clk);
        Ok(card)
    }

    /// axi_aclk cycles since the card came out of reset.
    pub fn cycle_count(&self) -> u64 {
        self.env.cycles(self.clk) - self.reset_cycles
    }

    /// One axi_aclk cycle.
    pub fn cycle(&mut self) -> Result<()> {
        self.env.tick(self.clk)
    }

    /// `n` axi_aclk cycles.
    pub fn ticks(&mut self, n: u64) -> Result<()> {
        self.env.run(self.clk, n)
    }

    /// Runs axi_aclk cycles until `done` holds, at most `limit`; returns the cycles taken.
    /// `done` may access registers (which runs cycles of its own).
    pub fn run_until(
        &mut self,
        limit: u64,
        what: &str,
        mut done: impl FnMut(&mut Card) -> Result<bool>,
    ) -> Result<u64> {
        for n in 0..limit {
            if done(self)? {
                return Ok(n);
            }
            self.cycle()?;
        }
        Err(BfmError::Timeout {
            clock: self.clk.index(),
            cycles: limit,
            time_ps: self.env.time_ps(),
            what: what.to_string(),
        })
    }

    /// A register read over the BAR; a response other than OKAY is an error.
    pub fn read(&mut self, addr: u32) -> Result<u32> {
        let t = self.regs.start_read(u64::from(addr))?;
        self.wait_reg(t, "register read")?;
        let (data, resp) = self.regs.take(t)?;
        if !resp.is_ok() {
            return Err(BfmError::Response {
                bus: "s_axil".into(),
                what: "read",
                addr: u64::from(addr),
                resp,
            });
        }
        Ok(data as u32)
    }

    /// A 64-bit counter: the low word, then the (latched) high word.
    pub fn read64(&mut self, lo_addr: u32) -> Result<u64> {
        let lo = self.read(lo_addr)?;
        let hi = self.read(lo_addr + 4)?;
        Ok(u64::from(lo) | (u64::from(hi) << 32))
    }

    /// A register write of a whole word; a response other than OKAY is an error.
    pub fn write(&mut self, addr: u32, data: u32) -> Result<()> {
        self.write_strb(addr, data, 0xf)
    }

    /// A register write with byte strobes.
    pub fn write_strb(&mut self, addr: u32, data: u32, strb: u8) -> Result<()> {
        let t = self
            .regs
            .start_write(u64::from(addr), u64::from(data), u64::from(strb))?;
        self.wait_reg(t, "register write")?;
        let (_, resp) = self.regs.take(t)?;
        if !resp.is_ok() {
            return Err(BfmError::Response {
                bus: "s_axil".into(),
                what: "write",
                addr: u64::from(addr),
                resp,
            });
        }
        Ok(())
    }

    fn wait_reg(&mut self, t: axi_bfm::TxnId, what: &str) -> Result<()> {
        let regs = self.regs.clone();
        self.env
            .run_until(self.clk, REG_TIMEOUT, what, |_| regs.is_done(t))?;
        Ok(())
    }

    /// Queues a frame on H2C0; it follows what is queued before it back to back.
    pub fn send_h2c(&mut self, frame: &[u8]) -> Result<()> {
        self.h2c.start_send(axi_bfm::AxisFrame::new(frame.to_vec()))
    }

    /// Whether H2C0 still has frames to send.
    pub fn h2c_busy(&self) -> bool {
        !self.h2c.idle()
    }

    /// Beats H2C0 took since the card was built.
    pub fn h2c_beats(&self) -> u64 {
        self.counts.borrow().h2c_beats
    }

    /// Cycles on which H2C0 offered a beat that the card did not take.
    pub fn h2c_stalls(&self) -> u64 {
        self.counts.borrow().h2c_stalls
    }

    /// Sets whether the host takes beats on C2H channel `ch`: always, or never.
    pub fn set_c2h_ready(&mut self, ch: usize, ready: bool) {
        let spec = if ready {
            PauseSpec::Never
        } else {
            PauseSpec::Always
        };
        self.c2h[ch].set_pauses(&spec);
    }

    /// Complete frames received on C2H channel `ch` and not yet taken.
    pub fn c2h_frames(&self, ch: usize) -> usize {
        self.c2h[ch].pending()
    }

    /// Beats received on C2H channel `ch` since the card was built.
    pub fn c2h_beats(&self, ch: usize) -> u64 {
        self.counts.borrow().c2h_beats[ch]
    }

    /// Takes the frames received on C2H channel `ch`, with the edges of their first and last
    /// beats from the channel's monitor.
    pub fn take_c2h(&mut self, ch: usize) -> Vec<Frame> {
        let sink = &self.c2h[ch];
        let times = sink
            .monitor()
            .map(axi_bfm::AxisMonitor::take_frames)
            .unwrap_or_default();
        let mut out = Vec::new();
        let mut times = times.into_iter();
        while let Some(f) = sink.try_recv() {
            let t = times.next();
            out.push(Frame {
                bytes: f.data,
                first_cycle: t.as_ref().map_or(0, |t| t.start_cycle),
                last_cycle: t.as_ref().map_or(0, |t| t.end_cycle),
            });
        }
        out
    }

    /// Whether the card requests an interrupt now.
    pub fn irq_req(&self) -> bool {
        self.env.model().get_bool(self.irq_req)
    }

    /// Pulses usr_irq_ack for one cycle.
    pub fn ack_irq(&mut self) -> Result<()> {
        let m = self.env.model_mut();
        m.set_bool(self.irq_ack, true);
        m.eval()?;
        self.cycle()
    }

    /// Acknowledges a raised request automatically this many cycles after it rises.
    pub fn set_irq_auto_ack(&mut self, after: Option<u64>) {
        self.irq.borrow_mut().auto_ack = after;
    }

    /// Acknowledge pulses given so far.
    pub fn irq_acks(&self) -> u64 {
        self.irq.borrow().acks
    }

    /// Reads DDR through the backdoor of the DDR3 model (sim_top only).
    pub fn ddr_read(&self, addr: u64, out: &mut [u8]) -> Result<()> {
        Ok(self.env.model().ddr_read(addr, out)?)
    }

    /// Writes DDR through the backdoor of the DDR3 model (sim_top only).
    pub fn ddr_write(&mut self, addr: u64, data: &[u8]) -> Result<()> {
        Ok(self.env.model_mut().ddr_write(addr, data)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_of_narrow_and_unaligned_beats() {
        // A 2-byte burst starting at byte 3 of a 16-byte bus: the first beat uses lane 3
        // only, then lanes 4..6 and 6..8.
        assert_eq!(beat_lanes(0x1003, 1, 0, 16), (3, 4, 0x1000));
        assert_eq!(beat_lanes(0x1003, 1, 1, 16), (4, 6, 0x1000));
        assert_eq!(beat_lanes(0x1003, 1, 2, 16), (6, 8, 0x1000));
        // A full-width burst crossing into the next line.
        assert_eq!(beat_lanes(0x1008, 4, 1, 16), (0, 16, 0x1010));
        let b = incr(0, 0x1003, 1, 3);
        let beats: Vec<(Vec<u8>, u128)> = (0..3u8)
            .map(|k| ((0..16).map(|i| k * 16 + i).collect(), 0xffff))
            .collect();
        let (data, keep) = strobed_lanes(&b, 16, &beats);
        assert_eq!(data, [3, 20, 21, 38, 39]);
        assert!(keep.iter().all(|&k| k));
        let mut mem = vec![0u8; 16];
        apply_write(&mut mem, 0x1000, 0x1003, 1, 16, &beats);
        assert_eq!(&mem[3..8], &[3, 20, 21, 38, 39]);
        assert_eq!(mem.iter().filter(|&&b| b != 0).count(), 5);
    }
}
