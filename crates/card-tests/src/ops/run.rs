//! The runner: a case run on the card and on the model at once, with what the card returned
//! and its counters compared with the model after each operation.

use std::fmt;
use std::time::Duration;

use card_regs::Register;
use xdma::{AsyncCard, Card, Config, DmaBuffer, ErrorKind, Xdma};

use super::op::{Case, Fault, Op};
use crate::caps::{Capabilities, Mode};
use crate::model::{CardModel, Win, WINDOW};
use crate::stream::{self, Waits};

/// Where and why a case failed.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The operation's index, or None for the set-up.
    pub step: Option<usize>,
    /// What differed.
    pub what: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.step {
            Some(i) => write!(f, "operation {} failed: {}", i + 1, self.what),
            None => write!(f, "setting up the case failed: {}", self.what),
        }
    }
}

/// The ring [`Op::Capture`] uses: 8 MiB at 64 MiB, clear of both memory windows.
const CAPTURE_RING: crate::capture::Ring = crate::capture::Ring {
    base: 64 << 20,
    size: 8 << 20,
};

/// The longest [`Op::Capture`] waits for its frames, in wall time.
const CAPTURE_WAIT: Duration = Duration::from_secs(300);

/// A card, the model and what the run needs, while a case runs.
struct Run<'a> {
    card: &'a Xdma,
    rt: tokio::runtime::Runtime,
    caps: &'a Capabilities,
    waits: &'a Waits,
    model: CardModel,
    mm: Option<(usize, usize)>,
}

/// Environment variable that makes [`run_case`] print every operation as it ends, with its
/// wall time and the card's clock.
pub const TRACE_ENV: &str = "CARD_TESTS_TRACE";

/// Opens the card for `case` with `base` (see [`Case::config`]), and runs it.
pub fn run_case(case: &Case, base: &Config) -> Result<(), Failure> {
    let setup = |what: String| Failure { step: None, what };
    let card = Xdma::open(&case.config(base)).map_err(|e| setup(format!("open: {e}")))?;
    let caps = Capabilities::discover(&card);
    if let Some(why) = caps.lacks_registers() {
        return Err(setup(why));
    }
    let waits = Waits::new(crate::fixture::data_wait(), card.info().min_stream_timeout);
    crate::regs::restore(&card).map_err(|e| setup(format!("rest state: {e}")))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| setup(format!("tokio runtime: {e}")))?;
    let mut run = Run {
        card: &card,
        rt,
        caps: &caps,
        waits: &waits,
        model: CardModel::new(caps.memory_size),
        mm: caps.mm().ok().filter(|_| caps.memory_size >= 2 * WINDOW),
    };
    let trace = std::env::var_os(TRACE_ENV).is_some();
    let result = (|| {
        run.counters().map_err(setup)?;
        for (i, op) in case.ops.iter().enumerate() {
            let fail = |what: String| Failure {
                step: Some(i),
                what: format!("`{op}`: {what}"),
            };
            let started = std::time::Instant::now();
            run.op(op).map_err(fail)?;
            run.counters().map_err(fail)?;
            if trace {
                eprintln!(
                    "{op}  ({:.3} s, card clock {:.3} ms)",
                    started.elapsed().as_secs_f64(),
                    card.now_ps().unwrap_or(0) as f64 / 1e9
                );
            }
        }
        Ok(())
    })();
    // A failed case may leave frames in a stream; the next case on a shared board must not
    // find them.
    if result.is_err() {
        run.quiesce();
    }
    let _ = crate::regs::restore(&card);
    result
}

fn err(what: &str, e: xdma::Error) -> String {
    format!("{what}: {e}")
}

/// A buffer for `len` bytes at card address `addr` (see [`crate::mm::buffer_for`]).
fn aligned(addr: u64, len: usize) -> Result<(DmaBuffer, usize), String> {
    crate::mm::buffer_for(addr, len).map_err(|e| err("buffer", e))
}

/// Keeps a window range inside its window.
fn fit(off: u64, len: u64) -> (u64, u64) {
    let len = len.clamp(1, WINDOW);
    (off.min(WINDOW - len), len)
}

impl Run<'_> {
    fn reg_write(&mut self, reg: &Register, value: u32) -> Result<(), String> {
        crate::regs::write(self.card, reg.offset, value)
            .map_err(|e| err(&format!("write {}", reg.name), e))?;
        self.model.write_reg(reg, value);
        Ok(())
    }

    fn control(&mut self, value: u32) -> Result<(), String> {
        crate::regs::write(self.card, card_regs::CONTROL, value)
            .map_err(|e| err("write CONTROL", e))?;
        self.model.write_reg(crate::regs::by_name("CONTROL"), value);
        Ok(())
    }

    /// Sets the mode (enables off) unless the card is in it already.
    fn mode(&mut self, m: Mode) -> Result<bool, String> {
        if !self.caps.has_mode(m) {
            return Ok(false);
        }
        if self.model.mode != m {
            self.control(m.value())?;
            self.model.mode = m;
        }
        Ok(true)
    }

    /// Reads every counter the model keeps and the clock, and compares.
    fn counters(&mut self) -> Result<(), String> {
        for reg in CardModel::counters() {
            let v = crate::regs::read(self.card, reg).map_err(|e| err(reg.name, e))?;
            self.model.expected(reg).check(reg.name, v)?;
        }
        let ts = crate::regs::by_name("TIMESTAMP");
        let t = crate::regs::read(self.card, ts).map_err(|e| err("TIMESTAMP", e))?;
        self.model.expected(ts).check("TIMESTAMP", t)?;
        self.model.timestamp = t;
        Ok(())
    }

    fn write(&mut self, win: Win, off: u64, len: u64, seed: u32) -> Result<(), String> {
        let Some((h2c, _)) = self.mm else {
            return Ok(());
        };
        let (off, len) = fit(off, len);
        let addr = self.model.mem.addr(win, off);
        let (mut b, pad) = aligned(addr, len as usize)?;
        crate::pattern(seed, &mut b[pad..]);
        self.card
            .write_mm(h2c, xdma::CardAddr(addr), &b[pad..])
            .map_err(|e| err(&format!("write of {len} bytes at {addr:#x}"), e))?;
        self.model.mem.write(win, off, &b[pad..]);
        Ok(())
    }

    fn read(&mut self, win: Win, off: u64, len: u64) -> Result<(), String> {
        let Some((_, c2h)) = self.mm else {
            return Ok(());
        };
        let (off, len) = fit(off, len);
        let addr = self.model.mem.addr(win, off);
        let (mut b, pad) = aligned(addr, len as usize)?;
        self.card
            .read_mm(c2h, xdma::CardAddr(addr), &mut b[pad..])
            .map_err(|e| err(&format!("read of {len} bytes at {addr:#x}"), e))?;
        self.model.mem.check_read(win, off, &b[pad..], None)
    }

    fn both(&mut self, w: (Win, u64, u64, u32), r: (Win, u64, u64)) -> Result<(), String> {
        let Some((h2c, c2h)) = self.mm else {
            return Ok(());
        };
        // The async API takes whole page-aligned buffers, so with an engine alignment rule of
        // up to 64 bytes the write starts on a multiple of 64 and the read is widened to one.
        let (wo, wl) = fit(w.1 & !63, w.2);
        let (ro, rl) = fit(r.1, r.2);
        let (ro, rl) = (ro & !63, rl + (ro & 63));
        let (wo, ro) = (wo & !63, ro & !63);
        let (waddr, raddr) = (self.model.mem.addr(w.0, wo), self.model.mem.addr(r.0, ro));
        let mut data = DmaBuffer::new(wl as usize).map_err(|e| err("buffer", e))?;
        crate::pattern(w.3, &mut data);
        let written = data.to_vec();
        let rb = DmaBuffer::new(rl as usize).map_err(|e| err("buffer", e))?;
        let card = self.card;
        let ((wr, _), (rr, rb)) = self.rt.block_on(async {
            // Both are submitted as they are made, so they run at once.
            let w = card.write_mm_async(h2c, xdma::CardAddr(waddr), data);
            let r = card.read_mm_async(c2h, xdma::CardAddr(raddr), rb);
            tokio::join!(w, r)
        });
        wr.map_err(|e| err(&format!("write of {wl} bytes at {waddr:#x}"), e))?;
        rr.map_err(|e| err(&format!("read of {rl} bytes at {raddr:#x}"), e))?;
        self.model
            .mem
            .check_read(r.0, ro, &rb, Some((w.0, wo, &written)))?;
        self.model.mem.write(w.0, wo, &written);
        Ok(())
    }

    fn looped(&mut self, len: usize, seed: u32) -> Result<(), String> {
        if !self.mode(Mode::Loop)? {
            return Ok(());
        }
        let (h2c, c2h) = (self.caps.h2c_stream[0], self.caps.c2h_stream[0]);
        let mut data = vec![0u8; len.max(1)];
        crate::pattern(seed, &mut data);
        let (card, waits) = (self.card, self.waits);
        let back = self
            .rt
            .block_on(stream::send_and_receive(
                card,
                h2c,
                &data,
                c2h,
                data.len(),
                waits,
            ))
            .map_err(|e| err(&format!("LOOP of {len} bytes"), e))?;
        match crate::mm::first_difference(&back, &data) {
            Some(diff) => Err(format!("LOOP of {len} bytes came back different: {diff}")),
            None => Ok(()),
        }
    }

    /// Runs the given sources, receives `frames` from each, stops them and drains their
    /// streams, checking every frame; then the sent counters must equal the frames received.
    fn gen(&mut self, sources: &[usize], frames: u32) -> Result<(), String> {
        let mut chans = Vec::new();
        for &s in sources {
            match self.caps.source_channel(s) {
                Ok(c) => chans.push((s, c)),
                Err(_) => return Ok(()),
            }
        }
        if !self.mode(Mode::Gen)? {
            return Ok(());
        }
        let enables = sources.iter().fold(0u32, |a, &s| {
            a | if s == 0 {
                card_regs::control::CH0_EN_MASK as u32
            } else {
                card_regs::control::CH1_EN_MASK as u32
            }
        });
        self.control(Mode::Gen.value() | enables)?;
        let mut prev = [None, None];
        for _ in 0..frames {
            for &(s, ch) in &chans {
                let len = self.model.source_settings(s).len;
                let f = stream::recv_frame(self.card, ch, len, self.waits)
                    .map_err(|e| err(&format!("frame of source {s}"), e))?;
                self.model.check_periodic(s, &f, &mut prev[s])?;
            }
        }
        self.control(Mode::Gen.value())?;
        for &(s, ch) in &chans {
            let len = self.model.source_settings(s).len;
            let model = &mut self.model;
            let p = &mut prev[s];
            stream::drain(self.card, ch, len, self.waits, |f| {
                model.check_periodic(s, &f, p)
            })?;
            // Drops after the last frame received show only in the counter.
            if self.model.source_settings(s).drop {
                let name = if s == 0 {
                    "SRC0_DROPPED"
                } else {
                    "SRC1_DROPPED"
                };
                let d = crate::regs::read_named(self.card, name).map_err(|e| err(name, e))?;
                if d < self.model.src[s].dropped {
                    return Err(format!(
                        "{name} is {d}, but the sequence numbers received show {} dropped",
                        self.model.src[s].dropped
                    ));
                }
                let tail = d - self.model.src[s].dropped;
                self.model.src[s].dropped = d;
                self.model.src[s].seq = self.model.src[s].seq.wrapping_add(tail as u32);
            }
        }
        Ok(())
    }

    fn echo(&mut self, seq: u32, len: usize) -> Result<(), String> {
        if !self.mode(Mode::Echo)? {
            return Ok(());
        }
        let (h2c, c2h) = (self.caps.h2c_stream[0], self.caps.c2h_stream[0]);
        let req = Fault::None.frame(seq, len);
        stream::send(self.card, h2c, &req).map_err(|e| err("ECHO request", e))?;
        self.model.chk.observe(&req);
        let back_len = self.model.source_settings(0).len;
        let back = stream::recv_frame(self.card, c2h, back_len, self.waits)
            .map_err(|e| err("ECHO answer", e))?;
        self.model.check_echo(seq, &back)
    }

    fn check(&mut self, seq: u32, len: usize, fault: Fault) -> Result<(), String> {
        if !self.mode(Mode::Check)? {
            return Ok(());
        }
        let f = fault.frame(seq, len);
        stream::send(self.card, self.caps.h2c_stream[0], &f).map_err(|e| err("CHECK frame", e))?;
        self.model.chk.observe(&f);
        Ok(())
    }

    /// Runs CAPTURE until the ring holds `frames` frames (at most what it can hold), stops,
    /// takes every frame and checks it as a periodic frame of source 0; then the ring's
    /// registers go back to their reset values (which empties it).
    fn capture(&mut self, frames: u32) -> Result<(), String> {
        let Some((_, c2h)) = self.mm else {
            return Ok(());
        };
        if self.caps.memory_size < u64::from(CAPTURE_RING.base + CAPTURE_RING.size) + WINDOW
            || !self.mode(Mode::Capture)?
        {
            return Ok(());
        }
        let ring = CAPTURE_RING;
        let card = self.card;
        ring.set_up(card, 0).map_err(|e| err("capture ring", e))?;
        let len = self.model.source_settings(0).len;
        // Room for what arrives while capture stops, so that the ring never overflows.
        let fit = (ring.size as usize - 1) / crate::capture::padded(len);
        let want = u64::from(frames).min(fit.saturating_sub(4).max(1) as u64);
        let start = self.model.cap_frames;
        let cap_frames = |card: &Xdma| {
            crate::regs::read_named(card, "CAP_FRAMES").map_err(|e| err("CAP_FRAMES", e))
        };
        self.control(Mode::Capture.value() | card_regs::control::CH0_EN_MASK as u32)?;
        let deadline = std::time::Instant::now() + CAPTURE_WAIT;
        loop {
            let n = cap_frames(card)?.wrapping_sub(start);
            if n >= want {
                break;
            }
            if std::time::Instant::now() > deadline {
                return Err(format!(
                    "capture: {n} of {want} frames in the ring after {CAPTURE_WAIT:?}"
                ));
            }
        }
        self.control(Mode::Capture.value())?;
        let mut prev = None;
        let mut taken = 0u64;
        let deadline = std::time::Instant::now() + CAPTURE_WAIT;
        loop {
            let got = ring.take(card, c2h).map_err(|e| err("capture ring", e))?;
            for f in &got {
                self.model.check_periodic(0, f, &mut prev)?;
            }
            taken += got.len() as u64;
            if got.is_empty() {
                let n = cap_frames(card)?.wrapping_sub(start);
                if n == taken {
                    break;
                }
                if std::time::Instant::now() > deadline {
                    return Err(format!(
                        "capture: CAP_FRAMES counts {n} frames, the ring gave {taken}"
                    ));
                }
            }
        }
        self.model.cap_frames += taken;
        if self.model.source_settings(0).drop {
            let d = crate::regs::read_named(card, "SRC0_DROPPED")
                .map_err(|e| err("SRC0_DROPPED", e))?;
            let tail = d.saturating_sub(self.model.src[0].dropped);
            self.model.src[0].dropped = d;
            self.model.src[0].seq = self.model.src[0].seq.wrapping_add(tail as u32);
        }
        for name in ["CAP_BASE", "CAP_SIZE", "CAP_IRQ_LEVEL"] {
            let r = crate::regs::by_name(name);
            crate::regs::write(card, r.offset, r.reset as u32).map_err(|e| err(name, e))?;
        }
        Ok(())
    }

    fn op(&mut self, op: &Op) -> Result<(), String> {
        match *op {
            Op::Write {
                win,
                off,
                len,
                seed,
            } => self.write(win, off, len, seed),
            Op::WriteRead {
                win,
                off,
                len,
                seed,
            } => {
                self.write(win, off, len, seed)?;
                self.read(win, off, len)
            }
            Op::Read { win, off, len } => self.read(win, off, len),
            Op::Both { write, read } => self.both(write, read),
            Op::RegWrite { reg, value } => self.reg_write(reg.0, value),
            Op::RegRead { reg } => {
                let v = crate::regs::read(self.card, reg).map_err(|e| err(reg.name, e))?;
                self.model.expected(reg).check(reg.name, v)?;
                if reg.name == "TIMESTAMP" {
                    self.model.timestamp = v;
                }
                Ok(())
            }
            Op::Mode(m) => self.mode(m).map(|_| ()),
            Op::Loop { len, seed } => self.looped(len, seed),
            Op::Gen { src, frames } => self.gen(&[src.min(1)], frames),
            Op::Gen2 { frames } => self.gen(&[0, 1], frames),
            Op::Echo { seq, len } => self.echo(seq, len),
            Op::Check { seq, len, fault } => self.check(seq, len, fault),
            Op::Capture { frames } => self.capture(frames),
            Op::Clear => {
                crate::regs::write(
                    self.card,
                    card_regs::CLEAR,
                    card_regs::clear::COUNTERS_MASK as u32,
                )
                .map_err(|e| err("CLEAR", e))?;
                self.model.clear();
                Ok(())
            }
            Op::Wait { us } => {
                if self.caps.events == 0 {
                    return Ok(());
                }
                match self.card.wait_event(0, Duration::from_micros(us)) {
                    Err(e) if e.kind() == ErrorKind::Timeout => Ok(()),
                    Err(e) => Err(err("wait", e)),
                    Ok(v) => Err(format!(
                        "an interrupt ({v}) came though no interrupt is enabled"
                    )),
                }
            }
        }
    }

    /// After a failure: stops the sources and takes whatever is left on the C2H streams.
    fn quiesce(&mut self) {
        if self.caps.has_mode(Mode::Gen) {
            let _ = self.control(Mode::Gen.value());
        }
        for &ch in &self.caps.c2h_stream {
            stream::discard(self.card, ch, self.waits);
        }
    }
}
