//! Simple drivers for the card's top in the integration tests: an AXI4-Lite master, an
//! AXI-Stream source on H2C0, AXI-Stream sinks on C2H0/C2H1 and the interrupt acknowledge.
//!
//! Everything advances through [`Card::cycle`], so the streams keep moving while registers are
//! accessed. The pattern of a cycle: inputs are settled; handshakes are sampled before the
//! rising edge; the edge is applied; then the inputs are updated and evaluated.

#![allow(dead_code)]

use std::collections::VecDeque;

use card_sim::{ClockId, Model, Port, Result, Top};

/// Beat width of every stream in bytes.
pub const BEAT: usize = 16;

/// A received frame and the axi_aclk cycles of its first and last beat.
#[derive(Debug, Clone)]
pub struct Frame {
    pub bytes: Vec<u8>,
    pub first_cycle: u64,
    pub last_cycle: u64,
}

/// The ports of one AXI-Stream sink (a C2H channel).
struct Sink {
    tdata: Port,
    tkeep: Port,
    tlast: Port,
    tvalid: Port,
    tready: Port,
    ready: bool,
    current: Vec<u8>,
    first_cycle: u64,
    frames: VecDeque<Frame>,
    beats: u64,
}

impl Sink {
    fn attach(m: &Model, ch: u32) -> Result<Sink> {
        let p = |s: &str| format!("m_axis_c2h{ch}_{s}");
        Ok(Sink {
            tdata: m.port(&p("tdata"))?,
            tkeep: m.port(&p("tkeep"))?,
            tlast: m.port(&p("tlast"))?,
            tvalid: m.port(&p("tvalid"))?,
            tready: m.input(&p("tready"))?,
            ready: false,
            current: Vec::new(),
            first_cycle: 0,
            frames: VecDeque::new(),
            beats: 0,
        })
    }

    /// Takes the beat that the coming edge transfers, if any; returns whether one moved.
    fn sample(&mut self, m: &Model, cycle: u64) -> bool {
        if !(m.get_bool(self.tvalid) && m.get_bool(self.tready)) {
            return false;
        }
        let mut data = [0u8; BEAT];
        m.get_bytes(self.tdata, &mut data);
        let keep = m.get(self.tkeep);
        if self.current.is_empty() {
            self.first_cycle = cycle;
        }
        for (i, b) in data.iter().enumerate() {
            if keep & (1 << i) != 0 {
                self.current.push(*b);
            }
        }
        self.beats += 1;
        if m.get_bool(self.tlast) {
            self.frames.push_back(Frame {
                bytes: std::mem::take(&mut self.current),
                first_cycle: self.first_cycle,
                last_cycle: cycle,
            });
        }
        true
    }
}

/// One beat for the H2C source.
struct Beat {
    data: [u8; BEAT],
    keep: u64,
    last: bool,
}

/// The card's top with simple drivers on every interface but the DMA's AXI4 master.
pub struct Card {
    pub m: Model,
    pub clk: ClockId,
    pub ddr_clk: Option<ClockId>,
    cycle: u64,
    // AXI4-Lite master
    awaddr: Port,
    awvalid: Port,
    awready: Port,
    wdata: Port,
    wstrb: Port,
    wvalid: Port,
    wready: Port,
    bvalid: Port,
    bready: Port,
    bresp: Port,
    araddr: Port,
    arvalid: Port,
    arready: Port,
    rdata: Port,
    rvalid: Port,
    rready: Port,
    rresp: Port,
    // H2C0 source
    h2c_tdata: Port,
    h2c_tkeep: Port,
    h2c_tlast: Port,
    h2c_tvalid: Port,
    h2c_tready: Port,
    h2c_queue: VecDeque<Beat>,
    pub h2c_beats: u64,
    /// Cycles (since the card came out of reset) at which H2C0 was offered a beat but not ready.
    pub h2c_stalls: u64,
    // C2H sinks
    c2h: [Sink; 2],
    // Interrupt
    irq_req: Port,
    irq_ack: Port,
    /// Acknowledge a raised request automatically this many cycles after it rises.
    pub irq_auto_ack: Option<u64>,
    irq_high_for: u64,
    pub irq_acks: u64,
}

/// Longest wait for any single bus handshake.
const LIMIT: u64 = 2_000;

impl Card {
    /// Builds `top` (card_core or sim_top), starts axi_aclk and, with `ddr_clock`, the DDR
    /// controller's 200 MHz clock (a test that never touches DDR leaves it off and runs faster),
    /// and resets it.
    pub fn new(top: Top, ddr_clock: bool) -> Result<Card> {
        let mut m = Model::new(top)?;
        let clk = m.add_clock("axi_aclk", 250_000_000)?;
        let ddr_clk = if ddr_clock {
            Some(m.add_clock("ddr_clk", 200_000_000)?)
        } else {
            None
        };
        let rstn = m.input("axi_aresetn")?;
        let ddr_rst = m.input("ddr_rst")?;
        m.set_bool(rstn, false);
        m.set_bool(ddr_rst, true);
        m.ticks(clk, 8)?;
        m.set_bool(rstn, true);
        m.set_bool(ddr_rst, false);
        m.eval()?;
        let c2h = [Sink::attach(&m, 0)?, Sink::attach(&m, 1)?];
        let mut card = Card {
            clk,
            ddr_clk,
            cycle: 0,
            awaddr: m.input("s_axil_awaddr")?,
            awvalid: m.input("s_axil_awvalid")?,
            awready: m.port("s_axil_awready")?,
            wdata: m.input("s_axil_wdata")?,
            wstrb: m.input("s_axil_wstrb")?,
            wvalid: m.input("s_axil_wvalid")?,
            wready: m.port("s_axil_wready")?,
            bvalid: m.port("s_axil_bvalid")?,
            bready: m.input("s_axil_bready")?,
            bresp: m.port("s_axil_bresp")?,
            araddr: m.input("s_axil_araddr")?,
            arvalid: m.input("s_axil_arvalid")?,
            arready: m.port("s_axil_arready")?,
            rdata: m.port("s_axil_rdata")?,
            rvalid: m.port("s_axil_rvalid")?,
            rready: m.input("s_axil_rready")?,
            rresp: m.port("s_axil_rresp")?,
            h2c_tdata: m.input("s_axis_h2c0_tdata")?,
            h2c_tkeep: m.input("s_axis_h2c0_tkeep")?,
            h2c_tlast: m.input("s_axis_h2c0_tlast")?,
            h2c_tvalid: m.input("s_axis_h2c0_tvalid")?,
            h2c_tready: m.port("s_axis_h2c0_tready")?,
            h2c_queue: VecDeque::new(),
            h2c_beats: 0,
            h2c_stalls: 0,
            c2h,
            irq_req: m.port("usr_irq_req")?,
            irq_ack: m.input("usr_irq_ack")?,
            irq_auto_ack: None,
            irq_high_for: 0,
            irq_acks: 0,
            m,
        };
        card.ticks(4)?;
        Ok(card)
    }

    /// axi_aclk cycles since reset.
    pub fn cycle_count(&self) -> u64 {
        self.cycle
    }

    /// One axi_aclk cycle: sample every handshake, apply the edge, drive the next inputs.
    pub fn cycle(&mut self) -> Result<()> {
        let m = &self.m;
        let h2c_valid = m.get_bool(self.h2c_tvalid);
        let h2c_fire = h2c_valid && m.get_bool(self.h2c_tready);
        let cycle = self.cycle;
        for s in &mut self.c2h {
            s.sample(m, cycle);
        }
        let irq = m.get_bool(self.irq_req);
        let acking = m.get_bool(self.irq_ack);
        self.m.tick(self.clk)?;
        self.cycle += 1;

        if h2c_fire {
            self.h2c_queue.pop_front();
            self.h2c_beats += 1;
        } else if h2c_valid {
            self.h2c_stalls += 1;
        }
        self.drive_h2c();
        for s in &self.c2h {
            self.m.set_bool(s.tready, s.ready);
        }

        // The acknowledge is a one-cycle pulse, as the XDMA IP gives it.
        if acking {
            self.m.set_bool(self.irq_ack, false);
            self.irq_acks += 1;
            self.irq_high_for = 0;
        } else if irq {
            self.irq_high_for += 1;
            if self.irq_auto_ack.is_some_and(|n| self.irq_high_for >= n) {
                self.m.set_bool(self.irq_ack, true);
            }
        }
        self.m.eval()
    }

    /// `n` cycles.
    pub fn ticks(&mut self, n: u64) -> Result<()> {
        for _ in 0..n {
            self.cycle()?;
        }
        Ok(())
    }

    /// Cycles until `done` holds, at most `limit`; panics naming `what` on timeout.
    pub fn run_until(
        &mut self,
        limit: u64,
        what: &str,
        mut done: impl FnMut(&mut Card) -> bool,
    ) -> Result<u64> {
        for n in 0..limit {
            if done(self) {
                return Ok(n);
            }
            self.cycle()?;
        }
        panic!("timed out after {limit} cycles waiting for {what}");
    }

    fn drive_h2c(&mut self) {
        match self.h2c_queue.front() {
            Some(b) => {
                let (data, keep, last) = (b.data, b.keep, b.last);
                self.m.set_bytes(self.h2c_tdata, &data);
                self.m.set(self.h2c_tkeep, keep);
                self.m.set_bool(self.h2c_tlast, last);
                self.m.set_bool(self.h2c_tvalid, true);
            }
            None => self.m.set_bool(self.h2c_tvalid, false),
        }
    }

    /// Queues a frame on H2C0; it is sent back to back with what is queued before it.
    pub fn send_h2c(&mut self, frame: &[u8]) -> Result<()> {
        assert!(!frame.is_empty(), "a frame has at least one byte");
        let n = frame.len().div_ceil(BEAT);
        for (i, chunk) in frame.chunks(BEAT).enumerate() {
            let mut data = [0u8; BEAT];
            data[..chunk.len()].copy_from_slice(chunk);
            self.h2c_queue.push_back(Beat {
                data,
                keep: (1u64 << chunk.len()) - 1,
                last: i + 1 == n,
            });
        }
        self.drive_h2c();
        self.m.eval()
    }

    /// Beats still waiting to be sent on H2C0.
    pub fn h2c_pending(&self) -> usize {
        self.h2c_queue.len()
    }

    /// Sets whether the host takes beats on C2H channel `ch`.
    pub fn set_c2h_ready(&mut self, ch: usize, ready: bool) -> Result<()> {
        self.c2h[ch].ready = ready;
        self.m.set_bool(self.c2h[ch].tready, ready);
        self.m.eval()
    }

    /// Frames received on C2H channel `ch` so far (taken out of the sink).
    pub fn take_c2h(&mut self, ch: usize) -> Vec<Frame> {
        self.c2h[ch].frames.drain(..).collect()
    }

    /// Frames waiting in the sink of channel `ch`.
    pub fn c2h_frames(&self, ch: usize) -> usize {
        self.c2h[ch].frames.len()
    }

    /// Beats received on channel `ch`.
    pub fn c2h_beats(&self, ch: usize) -> u64 {
        self.c2h[ch].beats
    }

    /// Whether the card requests an interrupt now.
    pub fn irq_req(&self) -> bool {
        self.m.get_bool(self.irq_req)
    }

    /// Pulses usr_irq_ack for one cycle.
    pub fn ack_irq(&mut self) -> Result<()> {
        self.m.set_bool(self.irq_ack, true);
        self.m.eval()?;
        self.cycle()
    }

    /// AXI4-Lite write of a whole word; panics unless the response is OKAY in time.
    pub fn write(&mut self, addr: u32, data: u32) -> Result<()> {
        self.write_strb(addr, data, 0xf)
    }

    /// AXI4-Lite write with byte strobes.
    pub fn write_strb(&mut self, addr: u32, data: u32, strb: u8) -> Result<()> {
        self.m.set(self.awaddr, u64::from(addr));
        self.m.set_bool(self.awvalid, true);
        self.m.set(self.wdata, u64::from(data));
        self.m.set(self.wstrb, u64::from(strb));
        self.m.set_bool(self.wvalid, true);
        self.m.set_bool(self.bready, true);
        self.m.eval()?;
        for _ in 0..LIMIT {
            let aw_fire = self.m.get_bool(self.awvalid) && self.m.get_bool(self.awready);
            let w_fire = self.m.get_bool(self.wvalid) && self.m.get_bool(self.wready);
            let b_fire = self.m.get_bool(self.bvalid) && self.m.get_bool(self.bready);
            let bresp = self.m.get(self.bresp);
            self.cycle()?;
            if aw_fire {
                self.m.set_bool(self.awvalid, false);
            }
            if w_fire {
                self.m.set_bool(self.wvalid, false);
            }
            if b_fire {
                assert_eq!(bresp, 0, "write of {addr:#x} must answer OKAY");
                self.m.set_bool(self.bready, false);
                return self.m.eval();
            }
            self.m.eval()?;
        }
        panic!("AXI-Lite write of {addr:#x} not answered in {LIMIT} cycles");
    }

    /// AXI4-Lite read; panics unless the response is OKAY in time.
    pub fn read(&mut self, addr: u32) -> Result<u32> {
        self.m.set(self.araddr, u64::from(addr));
        self.m.set_bool(self.arvalid, true);
        self.m.set_bool(self.rready, true);
        self.m.eval()?;
        for _ in 0..LIMIT {
            let ar_fire = self.m.get_bool(self.arvalid) && self.m.get_bool(self.arready);
            let r_fire = self.m.get_bool(self.rvalid) && self.m.get_bool(self.rready);
            let (data, resp) = (self.m.get(self.rdata) as u32, self.m.get(self.rresp));
            self.cycle()?;
            if ar_fire {
                self.m.set_bool(self.arvalid, false);
            }
            if r_fire {
                assert_eq!(resp, 0, "read of {addr:#x} must answer OKAY");
                self.m.set_bool(self.rready, false);
                self.m.eval()?;
                return Ok(data);
            }
            self.m.eval()?;
        }
        panic!("AXI-Lite read of {addr:#x} not answered in {LIMIT} cycles");
    }

    /// A 64-bit counter: the low word, then the (latched) high word.
    pub fn read64(&mut self, lo_addr: u32) -> Result<u64> {
        let lo = self.read(lo_addr)?;
        let hi = self.read(lo_addr + 4)?;
        Ok(u64::from(lo) | (u64::from(hi) << 32))
    }
}
