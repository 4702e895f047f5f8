//! The capture writer on its own: frames from a stream into a ring through AXI4 write bursts,
//! against a memory model in Rust with random backpressure and response delays.

use std::collections::VecDeque;

use card_sim::{ClockId, Model, Port, Result, Top};

const BEAT: u64 = 16;

struct Ports {
    ring_base: Port,
    ring_size: Port,
    rptr: Port,
    frame_bytes: Port,
    ring_reset: Port,
    tdata: Port,
    tkeep: Port,
    tlast: Port,
    tvalid: Port,
    tready: Port,
    awaddr: Port,
    awlen: Port,
    awsize: Port,
    awburst: Port,
    awvalid: Port,
    awready: Port,
    wdata: Port,
    wstrb: Port,
    wlast: Port,
    wvalid: Port,
    wready: Port,
    bvalid: Port,
    wptr: Port,
    fill: Port,
    overflow_count: Port,
    frame_count: Port,
}

/// A tiny xorshift generator for the random handshakes, seeded per test.
struct Rng(u32);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        self.0
    }
}

/// The writer, a stream source and an AXI4 write slave over a byte memory.
struct Bench {
    m: Model,
    clk: ClockId,
    p: Ports,
    mem: Vec<u8>,
    written: Vec<bool>,
    beats: VecDeque<([u8; 16], u64, bool)>,
    bursts: VecDeque<(u64, u64)>,
    burst_beat: u64,
    b_due: VecDeque<u64>,
    cycle: u64,
    rng: Rng,
    /// Percent of cycles on which the slave is ready.
    ready_pct: u32,
}

const MEM: usize = 0x4000;

impl Bench {
    fn new(seed: u32, ready_pct: u32) -> Result<Bench> {
        let mut m = Model::new(Top::CaptureWriter)?;
        let clk = m.add_clock("clk", 250_000_000)?;
        let p = Ports {
            ring_base: m.input("ring_base")?,
            ring_size: m.input("ring_size")?,
            rptr: m.input("rptr")?,
            frame_bytes: m.input("frame_bytes")?,
            ring_reset: m.input("ring_reset")?,
            tdata: m.input("s_axis_tdata")?,
            tkeep: m.input("s_axis_tkeep")?,
            tlast: m.input("s_axis_tlast")?,
            tvalid: m.input("s_axis_tvalid")?,
            tready: m.port("s_axis_tready")?,
            awaddr: m.port("m_axi_awaddr")?,
            awlen: m.port("m_axi_awlen")?,
            awsize: m.port("m_axi_awsize")?,
            awburst: m.port("m_axi_awburst")?,
            awvalid: m.port("m_axi_awvalid")?,
            awready: m.input("m_axi_awready")?,
            wdata: m.port("m_axi_wdata")?,
            wstrb: m.port("m_axi_wstrb")?,
            wlast: m.port("m_axi_wlast")?,
            wvalid: m.port("m_axi_wvalid")?,
            wready: m.input("m_axi_wready")?,
            bvalid: m.input("m_axi_bvalid")?,
            wptr: m.port("wptr")?,
            fill: m.port("fill")?,
            overflow_count: m.port("overflow_count")?,
            frame_count: m.port("frame_count")?,
        };
        let rst = m.input("rst")?;
        m.set_bool(rst, true);
        m.ticks(clk, 4)?;
        m.set_bool(rst, false);
        m.eval()?;
        Ok(Bench {
            m,
            clk,
            p,
            mem: vec![0; MEM],
            written: vec![false; MEM],
            beats: VecDeque::new(),
            bursts: VecDeque::new(),
            burst_beat: 0,
            b_due: VecDeque::new(),
            cycle: 0,
            rng: Rng(seed),
            ready_pct,
        })
    }

    fn configure(&mut self, base: u64, size: u64, frame_bytes: u64) -> Result<()> {
        self.m.set(self.p.ring_base, base);
        self.m.set(self.p.ring_size, size);
        self.m.set(self.p.frame_bytes, frame_bytes);
        self.m.set_bool(self.p.ring_reset, true);
        self.m.eval()?;
        self.m.tick(self.clk)?;
        self.m.set_bool(self.p.ring_reset, false);
        self.m.eval()
    }

    fn queue_frame(&mut self, bytes: &[u8]) {
        let n = bytes.len().div_ceil(16);
        for (i, c) in bytes.chunks(16).enumerate() {
            let mut d = [0u8; 16];
            d[..c.len()].copy_from_slice(c);
            self.beats.push_back((d, (1u64 << c.len()) - 1, i + 1 == n));
        }
    }

    fn cycle(&mut self) -> Result<()> {
        let m = &self.m;
        let p = &self.p;
        let t_fire = m.get_bool(p.tvalid) && m.get_bool(p.tready);
        if m.get_bool(p.awvalid) && m.get_bool(p.awready) {
            let addr = m.get(p.awaddr);
            let len = m.get(p.awlen) + 1;
            assert_eq!(m.get(p.awsize), 4, "16-byte beats");
            assert_eq!(m.get(p.awburst), 1, "INCR bursts");
            assert_eq!(addr % BEAT, 0, "beat-aligned bursts");
            assert_eq!(
                addr / 4096,
                (addr + len * BEAT - 1) / 4096,
                "a burst never crosses 4 KiB"
            );
            self.bursts.push_back((addr, len));
        }
        if m.get_bool(p.wvalid) && m.get_bool(p.wready) {
            let &(addr, len) = self
                .bursts
                .front()
                .expect("W beats only after their burst's AW handshake");
            let mut d = [0u8; 16];
            m.get_bytes(p.wdata, &mut d);
            let strb = m.get(p.wstrb);
            let at = (addr + self.burst_beat * BEAT) as usize;
            for (i, b) in d.iter().enumerate() {
                if strb & (1 << i) != 0 {
                    self.mem[at + i] = *b;
                    self.written[at + i] = true;
                }
            }
            self.burst_beat += 1;
            assert_eq!(
                m.get_bool(p.wlast),
                self.burst_beat == len,
                "WLAST on the burst's last beat"
            );
            if self.burst_beat == len {
                self.bursts.pop_front();
                self.burst_beat = 0;
                self.b_due
                    .push_back(self.cycle + 3 + u64::from(self.rng.next() % 8));
            }
        }
        let b_fire = self.m.get_bool(self.p.bvalid);
        self.m.tick(self.clk)?;
        self.cycle += 1;
        if t_fire {
            self.beats.pop_front();
        }
        if b_fire {
            self.b_due.pop_front();
        }
        match self.beats.front() {
            Some(&(d, k, l)) => {
                self.m.set_bytes(self.p.tdata, &d);
                self.m.set(self.p.tkeep, k);
                self.m.set_bool(self.p.tlast, l);
                self.m.set_bool(self.p.tvalid, true);
            }
            None => self.m.set_bool(self.p.tvalid, false),
        }
        let pct = self.ready_pct;
        let r1 = self.rng.next() % 100 < pct;
        let r2 = self.rng.next() % 100 < pct;
        self.m.set_bool(self.p.awready, r1);
        self.m.set_bool(self.p.wready, r2);
        let b = self.b_due.front().is_some_and(|&t| t <= self.cycle);
        self.m.set_bool(self.p.bvalid, b);
        self.m.eval()
    }

    fn run_until(&mut self, limit: u64, what: &str, done: impl Fn(&Bench) -> bool) -> Result<()> {
        for _ in 0..limit {
            if done(self) {
                return Ok(());
            }
            self.cycle()?;
        }
        panic!("timed out waiting for {what}");
    }

    fn get(&self, port: fn(&Ports) -> Port) -> u64 {
        self.m.get(port(&self.p))
    }

    /// The ring's bytes from `off`, wrapping at its end.
    fn ring_read(&self, base: u64, size: u64, off: u64, len: usize) -> Vec<u8> {
        (0..len as u64)
            .map(|i| self.mem[(base + (off + i) % size) as usize])
            .collect()
    }
}

fn frame_bytes(n: u32, len: usize) -> Vec<u8> {
    (0..len).map(|i| (n as usize * 7 + i * 13) as u8).collect()
}

/// Frames fill the ring, the frame that does not fit is dropped whole and counted, and after
/// the reader frees room, frames wrap around the ring's end with the right bytes.
#[test]
fn fills_drops_new_and_wraps() -> Result<()> {
    for (seed, pct) in [(1u32, 100u32), (7, 60), (99, 25)] {
        let mut b = Bench::new(seed, pct)?;
        let (base, size, len) = (0x1000u64, 0x1000u64, 600usize);
        let padded = (len as u64).div_ceil(BEAT) * BEAT;
        b.configure(base, size, len as u64)?;
        let kept = (size - 1) / padded;
        for n in 0..kept as u32 + 2 {
            b.queue_frame(&frame_bytes(n, len));
        }
        b.run_until(50_000, "the stream drained", |b| {
            b.beats.is_empty() && b.get(|p| p.frame_count) == kept
        })?;
        b.ticks_idle(50)?;
        assert_eq!(b.get(|p| p.wptr), kept * padded, "seed {seed}");
        assert_eq!(b.get(|p| p.fill), kept * padded);
        assert_eq!(b.get(|p| p.overflow_count), 2, "two frames did not fit");
        for n in 0..kept {
            let got = b.ring_read(base, size, n * padded, len);
            assert_eq!(got, frame_bytes(n as u32, len), "frame {n}");
        }
        // Padding bytes and bytes outside the ring are never written.
        for (i, w) in b.written.iter().enumerate() {
            let i = i as u64;
            let inside = i >= base && i < base + kept * padded;
            let pad = inside && (i - base) % padded >= len as u64;
            assert_eq!(
                *w,
                inside && !pad,
                "byte {i:#x} written only if it belongs to a frame"
            );
        }
        // The reader frees the ring; the next frames wrap.
        let mut rptr = kept * padded;
        b.m.set(b.p.rptr, rptr);
        for round in 0..3u32 {
            let n = 100 + round;
            b.queue_frame(&frame_bytes(n, len));
            let before = b.get(|p| p.frame_count);
            b.run_until(20_000, "a wrapped frame", |b| {
                b.get(|p| p.frame_count) == before + 1
            })?;
            let got = b.ring_read(base, size, rptr, len);
            assert_eq!(
                got,
                frame_bytes(n, len),
                "frame {n} across the wrap, seed {seed}"
            );
            rptr = (rptr + padded) % size;
            assert_eq!(b.get(|p| p.wptr), rptr);
            b.m.set(b.p.rptr, rptr);
            b.m.eval()?;
        }
        assert_eq!(
            b.get(|p| p.overflow_count),
            2,
            "no overflow while the reader keeps up"
        );
    }
    Ok(())
}

impl Bench {
    fn ticks_idle(&mut self, n: u64) -> Result<()> {
        for _ in 0..n {
            self.cycle()?;
        }
        Ok(())
    }
}
