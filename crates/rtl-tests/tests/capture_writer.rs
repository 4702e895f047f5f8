//! The capture writer on its own: frames from an AXI-Stream source bus model into a ring
//! through AXI4 write bursts taken by an AXI4 slave memory bus model, with both protocol
//! monitors on and seeded random backpressure and response delays on the write port.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use axi_bfm::{
    AxiSlave, AxiSlaveConfig, AxisFrame, AxisSource, Env, PauseSpec, ResetPolarity, Result,
};
use card_sim::{ClockId, Model, Port, Top};
use rtl_tests::{fires, on_sample, AXI_HZ};

const BEAT: u64 = 16;
/// The bytes of address space whose writes are tracked byte by byte.
const MEM: usize = 0x4000;

/// What the write port did, recorded from its handshakes.
#[derive(Default)]
struct WriteLog {
    /// Accepted bursts whose data has not all arrived: (address, beats).
    bursts: VecDeque<(u64, u64)>,
    /// Beats of the burst in progress.
    beat: u64,
    /// Per byte below `MEM`, whether a strobed write reached it.
    written: Vec<bool>,
}

/// The writer, a stream source and an AXI4 slave memory.
struct Tb {
    env: Env,
    clk: ClockId,
    src: AxisSource,
    slave: AxiSlave,
    log: Rc<RefCell<WriteLog>>,
    ring_base: Port,
    ring_size: Port,
    rptr: Port,
    frame_bytes: Port,
    ring_reset: Port,
    wptr: Port,
    fill: Port,
    overflow_count: Port,
    frame_count: Port,
}

impl Tb {
    /// A reset test bench; the slave is ready on `ready_pct` percent of cycles, its pauses and
    /// response delays drawn from `seed`, and below 100 % the stream source idles at random
    /// too.
    fn new(seed: u64, ready_pct: u8) -> Result<Tb> {
        let mut env = Env::new(Model::new(Top::CaptureWriter)?);
        let clk = env.add_clock("clk", AXI_HZ)?;
        env.add_reset(clk, "rst", ResetPolarity::ActiveHigh)?;
        let src = AxisSource::attach(&mut env, "s_axis", clk)?;
        let slave = AxiSlave::attach_with(
            &mut env,
            "m_axi",
            clk,
            AxiSlaveConfig {
                write_latency: 3,
                ..AxiSlaveConfig::default()
            },
        )?;
        if ready_pct < 100 {
            slave.set_pauses(&PauseSpec::random(seed, 100 - ready_pct));
            // The stream then also has idle cycles between beats, from the next seed.
            src.set_pauses(&PauseSpec::random(seed + 1, 20));
        }
        let m = env.model();
        let p = |n: &str| m.port(n);
        let (awaddr, awlen, awsize, awburst) = (
            p("m_axi_awaddr")?,
            p("m_axi_awlen")?,
            p("m_axi_awsize")?,
            p("m_axi_awburst")?,
        );
        let (awvalid, awready) = (p("m_axi_awvalid")?, p("m_axi_awready")?);
        let (wdata, wstrb, wvalid, wready) = (
            p("m_axi_wdata")?,
            p("m_axi_wstrb")?,
            p("m_axi_wvalid")?,
            p("m_axi_wready")?,
        );
        let log = Rc::new(RefCell::new(WriteLog {
            written: vec![false; MEM],
            ..WriteLog::default()
        }));
        let l = log.clone();
        // The monitor checks the protocol; this checks what the capture writer promises
        // beyond it and records which bytes were written.
        on_sample(&mut env, clk, move |m, _| {
            let mut l = l.borrow_mut();
            if fires(m, awvalid, awready) {
                let addr = m.get(awaddr);
                let len = m.get(awlen) + 1;
                assert_eq!(m.get(awsize), 4, "16-byte beats");
                assert_eq!(m.get(awburst), 1, "INCR bursts");
                assert_eq!(addr % BEAT, 0, "beat-aligned bursts");
                l.bursts.push_back((addr, len));
            }
            if fires(m, wvalid, wready) {
                let (addr, len) = *l
                    .bursts
                    .front()
                    .expect("W beats only after their burst's AW handshake");
                let mut d = [0u8; 16];
                m.get_bytes(wdata, &mut d);
                let strb = m.get(wstrb);
                let at = (addr + l.beat * BEAT) as usize;
                for i in 0..16 {
                    if strb & (1 << i) != 0 && at + i < MEM {
                        l.written[at + i] = true;
                    }
                }
                l.beat += 1;
                if l.beat == len {
                    l.bursts.pop_front();
                    l.beat = 0;
                }
            }
        });
        let m = env.model();
        let mut b = Tb {
            ring_base: m.input("ring_base")?,
            ring_size: m.input("ring_size")?,
            rptr: m.input("rptr")?,
            frame_bytes: m.input("frame_bytes")?,
            ring_reset: m.input("ring_reset")?,
            wptr: m.port("wptr")?,
            fill: m.port("fill")?,
            overflow_count: m.port("overflow_count")?,
            frame_count: m.port("frame_count")?,
            env,
            clk,
            src,
            slave,
            log,
        };
        b.env.reset(clk, 4)?;
        Ok(b)
    }

    fn set(&mut self, p: Port, v: u64) -> Result<()> {
        let m = self.env.model_mut();
        m.set(p, v);
        Ok(m.eval()?)
    }

    fn get(&self, p: Port) -> u64 {
        self.env.model().get(p)
    }

    fn configure(&mut self, base: u64, size: u64, frame_bytes: u64) -> Result<()> {
        self.set(self.ring_base, base)?;
        self.set(self.ring_size, size)?;
        self.set(self.frame_bytes, frame_bytes)?;
        self.set(self.ring_reset, 1)?;
        self.env.tick(self.clk)?;
        self.set(self.ring_reset, 0)
    }

    fn run_until(&mut self, limit: u64, what: &str, done: impl Fn(&Tb) -> bool) -> Result<()> {
        for _ in 0..limit {
            if done(self) {
                return Ok(());
            }
            self.env.tick(self.clk)?;
        }
        panic!("timed out waiting for {what}");
    }

    /// The ring's bytes from `off`, wrapping at its end, from the slave's memory.
    fn ring_read(&self, base: u64, size: u64, off: u64, len: usize) -> Vec<u8> {
        (0..len as u64)
            .map(|i| self.slave.mem_read(base + (off + i) % size, 1)[0])
            .collect()
    }
}

fn frame_bytes(n: u32, len: usize) -> Vec<u8> {
    (0..len).map(|i| (n as usize * 7 + i * 13) as u8).collect()
}

/// Frames fill the ring, the frame that does not fit is dropped whole and counted, and after
/// the reader frees room, frames wrap around the ring's end with the right bytes. Each case
/// names the seed of the slave's random pauses and the share of cycles it is ready.
#[test]
fn fills_drops_new_and_wraps() -> Result<()> {
    for (seed, pct) in [(1u64, 100u8), (7, 60), (99, 25)] {
        let mut b = Tb::new(seed, pct)?;
        let (base, size, len) = (0x1000u64, 0x1000u64, 600usize);
        let padded = (len as u64).div_ceil(BEAT) * BEAT;
        b.configure(base, size, len as u64)?;
        let kept = (size - 1) / padded;
        for n in 0..kept as u32 + 2 {
            b.src.start_send(AxisFrame::new(frame_bytes(n, len)))?;
        }
        let fc = b.frame_count;
        b.run_until(50_000, "the stream drained", |b| {
            b.src.idle() && b.get(fc) == kept
        })?;
        b.env.run(b.clk, 50)?;
        assert_eq!(b.get(b.wptr), kept * padded, "seed {seed}");
        assert_eq!(b.get(b.fill), kept * padded);
        assert_eq!(b.get(b.overflow_count), 2, "two frames did not fit");
        for n in 0..kept {
            let got = b.ring_read(base, size, n * padded, len);
            assert_eq!(got, frame_bytes(n as u32, len), "frame {n}");
        }
        // Padding bytes and bytes outside the ring are never written.
        for (i, w) in b.log.borrow().written.iter().enumerate() {
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
        b.set(b.rptr, rptr)?;
        for round in 0..3u32 {
            let n = 100 + round;
            b.src.start_send(AxisFrame::new(frame_bytes(n, len)))?;
            let before = b.get(fc);
            b.run_until(20_000, "a wrapped frame", |b| b.get(fc) == before + 1)?;
            let got = b.ring_read(base, size, rptr, len);
            assert_eq!(
                got,
                frame_bytes(n, len),
                "frame {n} across the wrap, seed {seed}"
            );
            rptr = (rptr + padded) % size;
            assert_eq!(b.get(b.wptr), rptr);
            b.set(b.rptr, rptr)?;
        }
        assert_eq!(
            b.get(b.overflow_count),
            2,
            "no overflow while the reader keeps up"
        );
        assert!(b.env.violations().is_empty(), "{:?}", b.env.violations());
    }
    Ok(())
}
