//! What the model-based property tests' operations and cases are: each operation, the frame
//! faults a check may carry, and the configuration a case runs with.

use std::fmt;

use card_regs::Register;
use frame::Pattern;
use xdma::sim::{RandomPauses, SimConfig};
use xdma::{BackendKind, Config};

use crate::caps::Mode;
use crate::model::Win;

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
    pub(super) const ALL: [Fault; 6] = [
        Fault::None,
        Fault::Magic,
        Fault::Version,
        Fault::Length,
        Fault::Short,
        Fault::Crc,
    ];

    pub(super) fn name(self) -> &'static str {
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

impl Case {
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

#[cfg(test)]
mod tests {
    use super::*;

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
