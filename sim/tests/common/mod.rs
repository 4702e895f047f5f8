//! Simple cycle-level AXI4 drivers shared by the memory-path tests: a master that queues
//! bursts and plays them out with valid/ready handshakes, recording every response with the
//! cycle it arrived in. The full bus models with protocol monitors live in their own crate;
//! these are just enough to drive the RTL.

// Each test file compiles this module on its own and uses a different part of it.
#![allow(dead_code)]

use std::collections::VecDeque;

use card_sim::{ClockId, Model, Port, Result};

/// A small deterministic generator (xorshift64*), so tests need no extra dependency and every
/// run of a seed is the same.
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
        self.next_u64() % n
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

/// One write data beat: bytes of the full bus width and a strobe bit per byte.
#[derive(Debug, Clone)]
pub struct WBeat {
    pub data: Vec<u8>,
    pub strb: u64,
    pub last: bool,
}

/// A read data beat as the master received it.
#[derive(Debug, Clone)]
pub struct RBeat {
    pub id: u64,
    pub data: Vec<u8>,
    pub resp: u64,
    pub last: bool,
    /// Cycle of the master's clock at whose rising edge the beat was taken.
    pub cycle: u64,
}

/// A write response as the master received it.
#[derive(Debug, Clone, Copy)]
pub struct BResp {
    pub id: u64,
    pub resp: u64,
    pub cycle: u64,
}

#[derive(Debug, Clone, Copy)]
struct Addr {
    id: u64,
    addr: u64,
    len: u64,
    size: u64,
}

#[derive(Debug)]
struct AddrPorts {
    id: Option<Port>,
    addr: Port,
    len: Port,
    size: Port,
    burst: Port,
    valid: Port,
    ready: Port,
}

impl AddrPorts {
    fn attach(m: &mut Model, p: &str, ch: &str, with_id: bool) -> Result<AddrPorts> {
        // Lock, cache and protection are driven to zero once: the memory ignores them.
        for extra in ["lock", "cache", "prot"] {
            if let Ok(port) = m.input(&format!("{p}_{ch}{extra}")) {
                m.set(port, 0);
            }
        }
        Ok(AddrPorts {
            id: if with_id {
                Some(m.input(&format!("{p}_{ch}id"))?)
            } else {
                None
            },
            addr: m.input(&format!("{p}_{ch}addr"))?,
            len: m.input(&format!("{p}_{ch}len"))?,
            size: m.input(&format!("{p}_{ch}size"))?,
            burst: m.input(&format!("{p}_{ch}burst"))?,
            valid: m.input(&format!("{p}_{ch}valid"))?,
            ready: m.port(&format!("{p}_{ch}ready"))?,
        })
    }

    fn drive(&self, m: &mut Model, a: &Addr) {
        if let Some(id) = self.id {
            m.set(id, a.id);
        }
        m.set(self.addr, a.addr);
        m.set(self.len, a.len);
        m.set(self.size, a.size);
        m.set(self.burst, 1);
        m.set_bool(self.valid, true);
    }
}

/// Port handles of one AXI4 master interface, by prefix (`s_axi`, `s_axi_cap`, ...).
#[derive(Debug)]
struct Ports {
    aw: AddrPorts,
    wdata: Port,
    wstrb: Port,
    wlast: Port,
    wvalid: Port,
    wready: Port,
    bid: Option<Port>,
    bresp: Port,
    bvalid: Port,
    bready: Port,
    ar: Option<AddrPorts>,
    rid: Option<Port>,
    rdata: Option<Port>,
    rresp: Option<Port>,
    rlast: Option<Port>,
    rvalid: Option<Port>,
    rready: Option<Port>,
}

/// A queue-driven AXI4 master on one clock. Queue bursts with [`AxiMaster::write`] and
/// [`AxiMaster::read`]; [`run`] plays every master until a condition holds.
#[derive(Debug)]
pub struct AxiMaster {
    pub clk: ClockId,
    /// Bytes per beat of the bus.
    pub bytes: usize,
    p: Ports,
    aw_q: VecDeque<Addr>,
    w_q: VecDeque<WBeat>,
    ar_q: VecDeque<Addr>,
    aw_on: bool,
    w_on: bool,
    ar_on: bool,
    aw_fire: bool,
    w_fire: bool,
    ar_fire: bool,
    b_seen: Option<BResp>,
    r_seen: Option<RBeat>,
    rng: Rng,
    /// Percent of cycles in which a waiting VALID is raised (100: always).
    pub valid_pct: u32,
    /// Percent of cycles in which BREADY/RREADY are high (100: always).
    pub ready_pct: u32,
    /// Completed cycles of `clk` seen by this master.
    pub cycle: u64,
    /// Write responses in arrival order.
    pub b: Vec<BResp>,
    /// Read beats in arrival order.
    pub r: Vec<RBeat>,
    /// Cycles at which each AW / AR handshake happened, in order.
    pub aw_cycles: Vec<u64>,
    pub ar_cycles: Vec<u64>,
}

impl AxiMaster {
    /// Attaches to the ports `<prefix>_aw*`, `_w*`, `_b*` and, when `reads`, `_ar*`, `_r*`.
    /// `with_id` says whether the interface has ID signals.
    pub fn attach(
        m: &mut Model,
        clk: ClockId,
        prefix: &str,
        with_id: bool,
        reads: bool,
        seed: u64,
    ) -> Result<AxiMaster> {
        let p = prefix;
        let opt = |m: &Model, name: &str| -> Result<Option<Port>> {
            if reads {
                m.port(&format!("{p}_{name}")).map(Some)
            } else {
                Ok(None)
            }
        };
        let wdata = m.input(&format!("{p}_wdata"))?;
        let ports = Ports {
            aw: AddrPorts::attach(m, p, "aw", with_id)?,
            wdata,
            wstrb: m.input(&format!("{p}_wstrb"))?,
            wlast: m.input(&format!("{p}_wlast"))?,
            wvalid: m.input(&format!("{p}_wvalid"))?,
            wready: m.port(&format!("{p}_wready"))?,
            bid: if with_id {
                Some(m.port(&format!("{p}_bid"))?)
            } else {
                None
            },
            bresp: m.port(&format!("{p}_bresp"))?,
            bvalid: m.port(&format!("{p}_bvalid"))?,
            bready: m.input(&format!("{p}_bready"))?,
            ar: if reads {
                Some(AddrPorts::attach(m, p, "ar", with_id)?)
            } else {
                None
            },
            rid: if reads && with_id {
                opt(m, "rid")?
            } else {
                None
            },
            rdata: opt(m, "rdata")?,
            rresp: opt(m, "rresp")?,
            rlast: opt(m, "rlast")?,
            rvalid: opt(m, "rvalid")?,
            rready: if reads {
                Some(m.input(&format!("{p}_rready"))?)
            } else {
                None
            },
        };
        let bytes = (wdata.width() / 8) as usize;
        Ok(AxiMaster {
            clk,
            bytes,
            p: ports,
            aw_q: VecDeque::new(),
            w_q: VecDeque::new(),
            ar_q: VecDeque::new(),
            aw_on: false,
            w_on: false,
            ar_on: false,
            aw_fire: false,
            w_fire: false,
            ar_fire: false,
            b_seen: None,
            r_seen: None,
            rng: Rng::new(seed),
            valid_pct: 100,
            ready_pct: 100,
            cycle: 0,
            b: Vec::new(),
            r: Vec::new(),
            aw_cycles: Vec::new(),
            ar_cycles: Vec::new(),
        })
    }

    /// log2 of the bytes per beat: the AxSIZE of a full-width burst.
    pub fn full_size(&self) -> u64 {
        u64::from(self.bytes.trailing_zeros())
    }

    /// Queues a write burst of `beats` (full-bus data and strobes) at `addr` with `size`.
    pub fn write(&mut self, id: u64, addr: u64, size: u64, beats: Vec<(Vec<u8>, u64)>) {
        assert!(!beats.is_empty() && beats.len() <= 256, "1 to 256 beats");
        let n = beats.len();
        self.aw_q.push_back(Addr {
            id,
            addr,
            len: (n - 1) as u64,
            size,
        });
        for (i, (data, strb)) in beats.into_iter().enumerate() {
            self.w_q.push_back(WBeat {
                data,
                strb,
                last: i + 1 == n,
            });
        }
    }

    /// Queues a read burst of `beats` beats at `addr` with `size`.
    pub fn read(&mut self, id: u64, addr: u64, size: u64, beats: usize) {
        assert!((1..=256).contains(&beats), "1 to 256 beats");
        self.ar_q.push_back(Addr {
            id,
            addr,
            len: (beats - 1) as u64,
            size,
        });
    }

    /// True when every queued address and data beat has been handed over.
    pub fn sent_all(&self) -> bool {
        self.aw_q.is_empty()
            && self.w_q.is_empty()
            && self.ar_q.is_empty()
            && !self.aw_on
            && !self.w_on
            && !self.ar_on
    }

    /// Reads handshakes just before a rising edge of `clk`.
    fn sample(&mut self, m: &Model) {
        let p = &self.p;
        self.aw_fire = self.aw_on && m.get_bool(p.aw.ready);
        self.w_fire = self.w_on && m.get_bool(p.wready);
        self.ar_fire = self.ar_on && p.ar.as_ref().is_some_and(|a| m.get_bool(a.ready));
        self.b_seen = (m.get_bool(p.bvalid) && m.get_bool(p.bready)).then(|| BResp {
            id: p.bid.map_or(0, |x| m.get(x)),
            resp: m.get(p.bresp),
            cycle: self.cycle + 1,
        });
        self.r_seen = match (p.rvalid, p.rready, p.rdata) {
            (Some(v), Some(rd), Some(d)) if m.get_bool(v) && m.get_bool(rd) => {
                let mut data = vec![0u8; self.bytes];
                m.get_bytes(d, &mut data);
                Some(RBeat {
                    id: p.rid.map_or(0, |x| m.get(x)),
                    data,
                    resp: p.rresp.map_or(0, |x| m.get(x)),
                    last: p.rlast.is_some_and(|x| m.get_bool(x)),
                    cycle: self.cycle + 1,
                })
            }
            _ => None,
        };
    }

    /// Applies the handshakes of the edge and drives the next cycle's outputs.
    fn drive(&mut self, m: &mut Model) {
        self.cycle += 1;
        if self.aw_fire {
            self.aw_on = false;
            self.aw_q.pop_front();
            self.aw_cycles.push(self.cycle);
        }
        if self.w_fire {
            self.w_on = false;
            self.w_q.pop_front();
        }
        if self.ar_fire {
            self.ar_on = false;
            self.ar_q.pop_front();
            self.ar_cycles.push(self.cycle);
        }
        if let Some(b) = self.b_seen.take() {
            self.b.push(b);
        }
        if let Some(r) = self.r_seen.take() {
            self.r.push(r);
        }
        // A raised VALID stays up with the same payload until its handshake.
        if !self.aw_on {
            if let Some(a) = self.aw_q.front().copied() {
                if self.rng.chance(self.valid_pct) {
                    self.p.aw.drive(m, &a);
                    self.aw_on = true;
                }
            }
            if !self.aw_on {
                m.set_bool(self.p.aw.valid, false);
            }
        }
        if !self.w_on {
            if let Some(w) = self.w_q.front() {
                if self.rng.chance(self.valid_pct) {
                    m.set_bytes(self.p.wdata, &w.data);
                    m.set(self.p.wstrb, w.strb);
                    m.set_bool(self.p.wlast, w.last);
                    m.set_bool(self.p.wvalid, true);
                    self.w_on = true;
                }
            }
            if !self.w_on {
                m.set_bool(self.p.wvalid, false);
            }
        }
        if let Some(ar) = &self.p.ar {
            if !self.ar_on {
                if let Some(a) = self.ar_q.front().copied() {
                    if self.rng.chance(self.valid_pct) {
                        ar.drive(m, &a);
                        self.ar_on = true;
                    }
                }
                if !self.ar_on {
                    m.set_bool(ar.valid, false);
                }
            }
        }
        let bready = self.rng.chance(self.ready_pct);
        m.set_bool(self.p.bready, bready);
        if let Some(rr) = self.p.rready {
            let rready = self.rng.chance(self.ready_pct);
            m.set_bool(rr, rready);
        }
    }
}

/// Plays the masters (each on its own clock) until `done` holds after an edge, for at most
/// `limit` steps of the model's clock scheduler. Returns the steps taken.
pub fn run(
    m: &mut Model,
    masters: &mut [&mut AxiMaster],
    limit: u64,
    what: &str,
    mut done: impl FnMut(&Model, &[&mut AxiMaster]) -> bool,
) -> Result<u64> {
    for n in 1..=limit {
        let Some((_, edges)) = m.next_edges() else {
            break;
        };
        for a in masters.iter_mut() {
            if edges.rising(a.clk) {
                a.sample(m);
            }
        }
        m.step()?;
        let mut driven = false;
        for a in masters.iter_mut() {
            if edges.rising(a.clk) {
                a.drive(m);
                driven = true;
            }
        }
        if driven {
            m.eval()?;
        }
        if done(m, masters) {
            return Ok(n);
        }
    }
    Err(card_sim::SimError::Timeout {
        clock: "scheduler steps".to_string(),
        cycles: limit,
        what: what.to_string(),
    })
}

/// Holds `rst` (active high) for `cycles` cycles of `clk`, then releases it.
pub fn reset(m: &mut Model, rst: &str, clk: ClockId, cycles: u64) -> Result<()> {
    let p = m.input(rst)?;
    m.set_bool(p, true);
    m.eval()?;
    m.ticks(clk, cycles)?;
    m.set_bool(p, false);
    m.eval()?;
    Ok(())
}

/// The bytes of a memory after a write burst of full-width `beats` starting at `addr` with
/// transfer size `size` (INCR): what `mem` (covering `base..`) must hold afterwards. Narrow
/// and unaligned beats only touch the byte lanes AXI assigns them.
pub fn apply_write(
    mem: &mut [u8],
    base: u64,
    addr: u64,
    size: u64,
    bytes: usize,
    beats: &[(Vec<u8>, u64)],
) {
    let step = 1u64 << size;
    let aligned = addr & !(step - 1);
    for (n, (data, strb)) in beats.iter().enumerate() {
        let beat_addr = if n == 0 {
            addr
        } else {
            aligned + n as u64 * step
        };
        let lane_lo = (beat_addr % bytes as u64) as usize;
        let lane_hi = ((beat_addr & !(step - 1)) % bytes as u64) as usize + step as usize;
        for lane in lane_lo..lane_hi.min(bytes) {
            if strb >> lane & 1 == 1 {
                let a = (beat_addr & !(bytes as u64 - 1)) + lane as u64;
                mem[(a - base) as usize] = data[lane];
            }
        }
    }
}

/// A model of `axi_mm_path_tb` (the path with a DDR3 model behind it) after reset, with its
/// two clocks: `(model, clk, ddr_clk)`.
pub fn mm_path() -> Result<(Model, ClockId, ClockId)> {
    let mut m = Model::new(card_sim::Top::AxiMmPathTb)?;
    let clk = m.add_clock("clk", 250_000_000)?;
    let ddr_clk = m.add_clock("ddr_clk", 200_000_000)?;
    let (rst, ddr_rst) = (m.input("rst")?, m.input("ddr_rst")?);
    m.set_bool(rst, true);
    m.set_bool(ddr_rst, true);
    m.eval()?;
    m.ticks(ddr_clk, 8)?;
    m.set_bool(rst, false);
    m.set_bool(ddr_rst, false);
    m.eval()?;
    m.ticks(ddr_clk, 4)?;
    Ok((m, clk, ddr_clk))
}
