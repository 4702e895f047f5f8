//! The model-based property tests' operations: what they are, how proptest draws them, how
//! one runs on a card and on the model at once, and their replayable text form.
//!
//! A [`Case`] is the simulated card's bus pauses, the host driver's costs, and a list of
//! [`Op`]s. [`run_case`] opens a card for it, brings card and model to the same start, runs the
//! operations one by one and, after each, compares what the card returned and what its
//! counters say with the model. Every operation is valid in any state (a stream operation
//! sets the mode it needs), so any sub-list of a failing case is a case too, which is what
//! lets proptest shrink a failure to the few operations that matter. A case prints (its
//! `Debug`) as one operation per line, the form [`Case::parse`] reads back and
//! `cargo run -p card-tests --example replay -- FILE` runs.

use std::fmt;
use std::time::Duration;

use card_regs::{Register, REGISTERS};
use frame::Pattern;
use proptest::prelude::*;
use xdma::sim::{RandomPauses, SimConfig};
use xdma::{AsyncCard, BackendKind, Card, Config, DmaBuffer, ErrorKind, Xdma};

use crate::caps::{Capabilities, Mode};
use crate::model::{CardModel, Win, WINDOW};
use crate::stream::{self, Waits};

/// The simulated card's bus pauses for a case (the `[sim] bus_pauses` setting, which the driver
/// backend ignores).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pauses {
    /// The generators' seed.
    pub seed: u64,
    /// Chance in percent that a bus pauses on a cycle.
    pub percent: u8,
}

/// A corruption of a frame sent to the checker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// A good frame.
    None,
    /// Wrong magic number (CRC recomputed, so that only the magic is wrong).
    Magic,
    /// Unknown version (CRC recomputed).
    Version,
    /// The header's payload length off by 4 (CRC recomputed).
    Length,
    /// The frame cut to 48 bytes (CRC recomputed over what is left).
    Short,
    /// One payload byte flipped.
    Crc,
}

impl Fault {
    const ALL: [Fault; 6] = [
        Fault::None,
        Fault::Magic,
        Fault::Version,
        Fault::Length,
        Fault::Short,
        Fault::Crc,
    ];

    fn name(self) -> &'static str {
        match self {
            Fault::None => "none",
            Fault::Magic => "magic",
            Fault::Version => "version",
            Fault::Length => "length",
            Fault::Short => "short",
            Fault::Crc => "crc",
        }
    }

    /// A counter-pattern frame of `len` bytes with sequence number `seq`, then this fault.
    pub fn frame(self, seq: u32, len: usize) -> Vec<u8> {
        let h = frame::Header {
            channel: 7,
            pattern: Pattern::Counter,
            sequence: seq,
            timestamp: u64::from(seq) * 3,
            seed: 0,
        };
        let mut f = frame::build(&h, len.clamp(frame::MIN_FRAME_LEN, frame::MAX_FRAME_LEN))
            .unwrap_or_default();
        let reseal = |f: &mut Vec<u8>| {
            let at = f.len() - frame::TRAILER_LEN;
            let crc = frame::CRC32.checksum(&f[..at]);
            f[at..].copy_from_slice(&crc.to_le_bytes());
        };
        match self {
            Fault::None => {}
            Fault::Magic => {
                f[0] ^= 0x20;
                reseal(&mut f);
            }
            Fault::Version => {
                f[frame::offset::VERSION] = 2;
                reseal(&mut f);
            }
            Fault::Length => {
                let p = frame::offset::PAYLOAD_LEN;
                let v = u32::from_le_bytes([f[p], f[p + 1], f[p + 2], f[p + 3]]) + 4;
                f[p..p + 4].copy_from_slice(&v.to_le_bytes());
                reseal(&mut f);
            }
            Fault::Short => {
                f.truncate(48);
                reseal(&mut f);
            }
            Fault::Crc => {
                let mid = frame::HEADER_LEN + (f.len() - frame::OVERHEAD) / 2;
                f[mid] ^= 0x01;
            }
        }
        f
    }
}

/// A register the operations may set: the frame sources' settings and the scratch word (the
/// capture ring's and the interrupt registers are the CAPTURE and interrupt tests' business).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settable(pub &'static Register);

/// Registers that [`Op::RegWrite`] may write.
pub fn op_settable() -> Vec<&'static Register> {
    crate::regs::settable()
        .filter(|r| r.name == "SCRATCH" || r.name.starts_with("SRC"))
        .collect()
}

/// One step of a case.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// A memory-mapped write of `len` pattern bytes at `off` in `win`.
    Write {
        /// Window.
        win: Win,
        /// Offset in the window.
        off: u64,
        /// Bytes.
        len: u64,
        /// Pattern seed.
        seed: u32,
    },
    /// A memory-mapped write read back at once, the read checked against the model.
    WriteRead {
        /// Window.
        win: Win,
        /// Offset in the window.
        off: u64,
        /// Bytes.
        len: u64,
        /// Pattern seed.
        seed: u32,
    },
    /// A memory-mapped read, checked against the model.
    Read {
        /// Window.
        win: Win,
        /// Offset.
        off: u64,
        /// Bytes.
        len: u64,
    },
    /// A write and a read at once (H2C and C2H together), on any two ranges.
    Both {
        /// The write's window, offset, length and seed.
        write: (Win, u64, u64, u32),
        /// The read's window, offset and length.
        read: (Win, u64, u64),
    },
    /// A register write.
    RegWrite {
        /// The register.
        reg: Settable,
        /// The value written.
        value: u32,
    },
    /// A register read, checked against the model.
    RegRead {
        /// The register (any in the table).
        reg: &'static Register,
    },
    /// CONTROL.MODE set, every enable off.
    Mode(Mode),
    /// LOOP: a packet of `len` pattern bytes sent and received back.
    Loop {
        /// Bytes.
        len: usize,
        /// Pattern seed.
        seed: u32,
    },
    /// GEN: frame source `src` enabled, `frames` frames received, the source stopped and its
    /// stream drained, every frame checked.
    Gen {
        /// Source 0 or 1.
        src: usize,
        /// Frames received while it runs.
        frames: u32,
    },
    /// GEN with both sources at once.
    Gen2 {
        /// Frames received from each while they run.
        frames: u32,
    },
    /// ECHO: a request frame sent, its answer received and checked.
    Echo {
        /// The request's sequence number.
        seq: u32,
        /// The request's length.
        len: usize,
    },
    /// CHECK: a frame sent to the checker, maybe with a fault.
    Check {
        /// Its sequence number.
        seq: u32,
        /// Its length before the fault.
        len: usize,
        /// The fault.
        fault: Fault,
    },
    /// CAPTURE: source 0 writes at least `frames` frames into a ring large enough for them,
    /// which is then read back in large blocks; every frame is checked.
    Capture {
        /// Frames captured.
        frames: u32,
    },
    /// CLEAR.COUNTERS.
    Clear,
    /// A wait for an interrupt that must not come.
    Wait {
        /// Microseconds.
        us: u64,
    },
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::Write {
                win,
                off,
                len,
                seed,
            } => {
                write!(f, "write {}+{off:#x} {len} seed={seed}", win.name())
            }
            Op::WriteRead {
                win,
                off,
                len,
                seed,
            } => {
                write!(f, "write_read {}+{off:#x} {len} seed={seed}", win.name())
            }
            Op::Read { win, off, len } => write!(f, "read {}+{off:#x} {len}", win.name()),
            Op::Both {
                write: (ww, wo, wl, ws),
                read: (rw, ro, rl),
            } => write!(
                f,
                "both write {}+{wo:#x} {wl} seed={ws} read {}+{ro:#x} {rl}",
                ww.name(),
                rw.name()
            ),
            Op::RegWrite { reg, value } => write!(f, "reg_write {} {value:#x}", reg.0.name),
            Op::RegRead { reg } => write!(f, "reg_read {}", reg.name),
            Op::Mode(m) => write!(f, "mode {m}"),
            Op::Loop { len, seed } => write!(f, "loop {len} seed={seed}"),
            Op::Gen { src, frames } => write!(f, "gen {src} frames={frames}"),
            Op::Gen2 { frames } => write!(f, "gen2 frames={frames}"),
            Op::Echo { seq, len } => write!(f, "echo seq={seq} len={len}"),
            Op::Check { seq, len, fault } => {
                write!(f, "check seq={seq} len={len} fault={}", fault.name())
            }
            Op::Capture { frames } => write!(f, "capture frames={frames}"),
            Op::Clear => f.write_str("clear"),
            Op::Wait { us } => write!(f, "wait {us}us"),
        }
    }
}

/// One case: how the simulated card is set up, and the operations.
#[derive(Clone, PartialEq)]
pub struct Case {
    /// Bus pauses on the simulated card, or none.
    pub pauses: Option<Pauses>,
    /// The host driver's costs as the timing model's defaults (the reference board's host)
    /// rather than zero (only the link and the card take time), on the simulated card.
    pub reference_host: bool,
    /// The operations.
    pub ops: Vec<Op>,
}

impl fmt::Debug for Case {
    /// The replayable form: one line per setting and per operation.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f)?;
        match self.pauses {
            Some(p) => writeln!(f, "pauses seed={} percent={}", p.seed, p.percent)?,
            None => writeln!(f, "pauses none")?,
        }
        writeln!(
            f,
            "host {}",
            if self.reference_host {
                "reference"
            } else {
                "zero"
            }
        )?;
        for op in &self.ops {
            writeln!(f, "{op}")?;
        }
        Ok(())
    }
}

fn parse_num(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let r = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|_| format!("`{s}` is not a number"))
}

fn parse_at(s: &str) -> Result<(Win, u64), String> {
    let (w, off) = s
        .split_once('+')
        .ok_or_else(|| format!("`{s}`: expected low+OFFSET or high+OFFSET"))?;
    let win = match w {
        "low" => Win::Low,
        "high" => Win::High,
        _ => return Err(format!("`{w}`: the windows are low and high")),
    };
    Ok((win, parse_num(off)?))
}

fn key<'a>(s: &'a str, k: &str) -> Result<&'a str, String> {
    s.strip_prefix(k)
        .and_then(|r| r.strip_prefix('='))
        .ok_or_else(|| format!("`{s}`: expected {k}=..."))
}

impl Op {
    /// Reads one operation in the form [`Op`]'s `Display` writes.
    pub fn parse(line: &str) -> Result<Op, String> {
        let w: Vec<&str> = line.split_whitespace().collect();
        let n = |i: usize| -> Result<&str, String> {
            w.get(i)
                .copied()
                .ok_or_else(|| format!("`{line}`: too few words"))
        };
        let reg = |name: &str| {
            REGISTERS
                .iter()
                .find(|r| r.name == name)
                .ok_or_else(|| format!("`{name}` is not in the register table"))
        };
        let op = match n(0)? {
            kind @ ("write" | "write_read") => {
                let (win, off) = parse_at(n(1)?)?;
                let len = parse_num(n(2)?)?;
                let seed = parse_num(key(n(3)?, "seed")?)? as u32;
                if kind == "write" {
                    Op::Write {
                        win,
                        off,
                        len,
                        seed,
                    }
                } else {
                    Op::WriteRead {
                        win,
                        off,
                        len,
                        seed,
                    }
                }
            }
            "read" => {
                let (win, off) = parse_at(n(1)?)?;
                Op::Read {
                    win,
                    off,
                    len: parse_num(n(2)?)?,
                }
            }
            "both" => {
                let (ww, wo) = parse_at(n(2)?)?;
                let (rw, ro) = parse_at(n(6)?)?;
                Op::Both {
                    write: (
                        ww,
                        wo,
                        parse_num(n(3)?)?,
                        parse_num(key(n(4)?, "seed")?)? as u32,
                    ),
                    read: (rw, ro, parse_num(n(7)?)?),
                }
            }
            "reg_write" => {
                let r = reg(n(1)?)?;
                if !op_settable().contains(&r) {
                    return Err(format!("{} is not one of the registers cases set", r.name));
                }
                Op::RegWrite {
                    reg: Settable(r),
                    value: parse_num(n(2)?)? as u32,
                }
            }
            "reg_read" => Op::RegRead { reg: reg(n(1)?)? },
            "mode" => {
                Op::Mode(Mode::from_name(n(1)?).ok_or_else(|| format!("`{}` is not a mode", w[1]))?)
            }
            "loop" => Op::Loop {
                len: parse_num(n(1)?)? as usize,
                seed: parse_num(key(n(2)?, "seed")?)? as u32,
            },
            "gen" => Op::Gen {
                src: parse_num(n(1)?)? as usize,
                frames: parse_num(key(n(2)?, "frames")?)? as u32,
            },
            "gen2" => Op::Gen2 {
                frames: parse_num(key(n(1)?, "frames")?)? as u32,
            },
            "echo" => Op::Echo {
                seq: parse_num(key(n(1)?, "seq")?)? as u32,
                len: parse_num(key(n(2)?, "len")?)? as usize,
            },
            "check" => {
                let f = key(n(3)?, "fault")?;
                Op::Check {
                    seq: parse_num(key(n(1)?, "seq")?)? as u32,
                    len: parse_num(key(n(2)?, "len")?)? as usize,
                    fault: Fault::ALL
                        .into_iter()
                        .find(|x| x.name() == f)
                        .ok_or_else(|| format!("`{f}` is not a fault"))?,
                }
            }
            "capture" => Op::Capture {
                frames: parse_num(key(n(1)?, "frames")?)? as u32,
            },
            "clear" => Op::Clear,
            "wait" => Op::Wait {
                us: parse_num(n(1)?.trim_end_matches("us"))?,
            },
            other => return Err(format!("`{other}` is not an operation")),
        };
        Ok(op)
    }
}

impl Case {
    /// Reads a case in the form its `Debug` writes (blank lines and `#` comments skipped).
    pub fn parse(text: &str) -> Result<Case, String> {
        let mut case = Case {
            pauses: None,
            reference_host: false,
            ops: Vec::new(),
        };
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let at = |e: String| format!("line {}: {e}", i + 1);
            if let Some(rest) = line.strip_prefix("pauses ") {
                case.pauses = if rest.trim() == "none" {
                    None
                } else {
                    let w: Vec<&str> = rest.split_whitespace().collect();
                    let seed =
                        parse_num(key(w.first().copied().unwrap_or(""), "seed").map_err(at)?)
                            .map_err(at)?;
                    let percent =
                        parse_num(key(w.get(1).copied().unwrap_or(""), "percent").map_err(at)?)
                            .map_err(at)?;
                    Some(Pauses {
                        seed,
                        percent: percent.min(90) as u8,
                    })
                };
            } else if let Some(rest) = line.strip_prefix("host ") {
                case.reference_host = match rest.trim() {
                    "reference" => true,
                    "zero" => false,
                    other => return Err(at(format!("`{other}`: host is reference or zero"))),
                };
            } else {
                case.ops.push(Op::parse(line).map_err(at)?);
            }
        }
        Ok(case)
    }

    /// The case's configuration: `base` with the simulated card's pauses and host costs set.
    pub fn config(&self, base: &Config) -> Config {
        let mut cfg = base.clone();
        let pauses = self.pauses.map(|p| RandomPauses {
            seed: p.seed,
            percent: p.percent,
        });
        let reference_host = self.reference_host;
        edit_sim(&mut cfg, |s| {
            if pauses.is_some() {
                s.bus_pauses = pauses;
            }
            if !reference_host {
                zero_host_costs(s);
            }
        });
        cfg
    }
}

/// Edits the `[sim]` section of `cfg` through its typed settings and writes them back. A
/// section that does not read as [`SimConfig`] is left as it is: opening the card reports it.
/// The driver backend ignores the section.
pub fn edit_sim(cfg: &mut Config, edit: impl FnOnce(&mut SimConfig)) {
    let Ok(mut s) = cfg.section::<SimConfig>(BackendKind::Sim) else {
        return;
    };
    edit(&mut s);
    cfg.set_section(BackendKind::Sim, &s)
        .expect("the [sim] settings are written back as TOML");
}

/// Sets the simulated host driver's costs to zero (`[sim] timing.host.*`), so that a call
/// costs only the link and the card.
pub fn zero_host_costs(s: &mut SimConfig) {
    let host = &mut s.timing.host;
    host.submit_ns = 0.0;
    host.start_ns = 0.0;
    host.irq_ns = 0.0;
    host.wake_ns = 0.0;
    host.turnaround_ns = 0.0;
    host.register_ns = 0.0;
}

// ------------------------------------------------------------------------- strategies

fn win() -> impl Strategy<Value = Win> {
    prop_oneof![Just(Win::Low), Just(Win::High)]
}

fn mm_len() -> impl Strategy<Value = u64> {
    prop_oneof![3 => 1u64..=64, 3 => 1u64..=4096, 1 => 4096u64..=65536]
}

/// Offsets in a window: mostly in its first and last 2 KiB, so that the writes and reads of a
/// case overlap often enough for the reads to check bytes the case wrote.
fn offset() -> impl Strategy<Value = u64> {
    prop_oneof![
        1 => 0..WINDOW,
        2 => 0u64..2048,
        1 => (WINDOW - 2048)..WINDOW,
    ]
}

fn settable() -> impl Strategy<Value = Op> {
    let regs = op_settable();
    (0..regs.len(), any::<u32>(), 0u32..4, 0usize..5).prop_map(move |(i, v, small, pick)| {
        let reg = regs[i];
        // Lengths and gaps are drawn where the sources stay quick (a gap of 2^32 cycles is
        // 17 s of card time); every value is legal.
        let value = if reg.name.ends_with("_FRAME_LEN") {
            [0, 64, 4096, v % 0x2_0000, v % 1024][pick]
        } else if reg.name.ends_with("_GAP") {
            v % 2000
        } else if reg.name.ends_with("_PATTERN") || reg.name.ends_with("_POLICY") {
            small
        } else {
            v
        };
        Op::RegWrite {
            reg: Settable(reg),
            value,
        }
    })
}

fn op() -> impl Strategy<Value = Op> {
    let modes = prop_oneof![
        Just(Mode::Off),
        Just(Mode::Loop),
        Just(Mode::Gen),
        Just(Mode::Echo),
        Just(Mode::Check)
    ];
    let faults = proptest::sample::select(Fault::ALL.to_vec());
    prop_oneof![
        3 => (win(), offset(), mm_len(), any::<u32>())
            .prop_map(|(win, off, len, seed)| Op::Write { win, off, len, seed }),
        3 => (win(), offset(), mm_len()).prop_map(|(win, off, len)| Op::Read { win, off, len }),
        2 => (win(), offset(), mm_len(), any::<u32>())
            .prop_map(|(win, off, len, seed)| Op::WriteRead { win, off, len, seed }),
        1 => (win(), offset(), mm_len(), any::<u32>(), win(), offset(), mm_len()).prop_map(
            |(ww, wo, wl, ws, rw, ro, rl)| Op::Both {
                write: (ww, wo, wl, ws),
                read: (rw, ro, rl)
            }
        ),
        2 => settable(),
        2 => (0..REGISTERS.len()).prop_map(|i| Op::RegRead { reg: &REGISTERS[i] }),
        1 => modes.prop_map(Op::Mode),
        2 => (prop_oneof![3 => 1usize..=256, 2 => 1usize..=8192, 1 => 1usize..=65536], any::<u32>())
            .prop_map(|(len, seed)| Op::Loop { len, seed }),
        2 => (0usize..2, 0u32..=6).prop_map(|(src, frames)| Op::Gen { src, frames }),
        1 => (0u32..=4).prop_map(|frames| Op::Gen2 { frames }),
        2 => (any::<u32>(), 64usize..=2048).prop_map(|(seq, len)| Op::Echo { seq, len }),
        2 => (0u32..64, 64usize..=4096, faults)
            .prop_map(|(seq, len, fault)| Op::Check { seq, len, fault }),
        // Mostly a few frames; now and then more than a thousand, the scale at which a fault
        // that strikes once in many frames shows.
        2 => prop_oneof![4 => 1u32..=40, 1 => 1000u32..=1100]
            .prop_map(|frames| Op::Capture { frames }),
        1 => Just(Op::Clear),
        1 => (1u64..=50).prop_map(|us| Op::Wait { us }),
    ]
}

/// Cases of up to `max_ops` operations, with random pauses (0 to 40 % of cycles) on half of
/// them.
pub fn case(max_ops: usize) -> impl Strategy<Value = Case> {
    (
        proptest::option::of((0u64..1 << 62, 0u8..=40)),
        any::<bool>(),
        proptest::collection::vec(op(), 1..=max_ops),
    )
        .prop_map(|(p, reference_host, ops)| Case {
            pauses: p.map(|(seed, percent)| Pauses { seed, percent }),
            reference_host,
            ops,
        })
}

// ------------------------------------------------------------------------- the runner

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
    let waits = Waits::new(crate::bench::data_wait(), card.info().min_stream_timeout);
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
        if back != data {
            let at = back
                .iter()
                .zip(&data)
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            return Err(format!(
                "LOOP of {len} bytes came back different from byte {at} on ({:#04x}, sent {:#04x})",
                back[at], data[at]
            ));
        }
        Ok(())
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

/// The proptest configuration for the model-based tests: `PROPTEST_CASES` cases (default
/// `default_cases`), failures persisted to `regressions` (relative to the crate's folder).
pub fn proptest_config(default_cases: u32, regressions: &'static str) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default_cases);
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::Direct(regressions),
        )),
        // Shrinking re-runs whole cases on the card; a bound keeps a failing run finite.
        max_shrink_iters: 400,
        ..ProptestConfig::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::ValueTree;

    #[test]
    fn every_operation_prints_as_it_parses() {
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        for _ in 0..200 {
            let c = case(20).new_tree(&mut runner).expect("a case").current();
            let text = format!("{c:?}");
            let back = Case::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
            assert_eq!(back, c, "{text}");
        }
    }

    #[test]
    fn faults_are_the_kinds_they_name() {
        use crate::model::Faults;
        let kinds = |f: Fault| Faults::of(&f.frame(3, 200));
        assert!(!kinds(Fault::None).any());
        let only = |f: Fault, k: Faults| assert_eq!(kinds(f), k, "{f:?}");
        let n = Faults::default();
        only(Fault::Magic, Faults { magic: true, ..n });
        only(Fault::Version, Faults { version: true, ..n });
        only(Fault::Length, Faults { length: true, ..n });
        only(Fault::Short, Faults { length: true, ..n });
        only(Fault::Crc, Faults { crc: true, ..n });
    }
}
