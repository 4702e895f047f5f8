//! What a card has, decided in one place ([`Capabilities::discover`]), so that a test that
//! needs what the card lacks is skipped with a reason instead of failing or passing silently.

use std::fmt;

use card_regs::control;
use xdma::{Card, CardInfo, ChannelKind, Direction};

/// A stream mode of CONTROL.MODE, with its value from the register table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// No stream path.
    Off,
    /// H2C0 frames leave on C2H0 unchanged.
    Loop,
    /// The frame sources feed the C2H streams.
    Gen,
    /// One frame of source 0 per H2C0 frame, with its sequence number.
    Echo,
    /// H2C0 frames go to the checker.
    Check,
    /// Source 0 writes frames into the ring in DDR.
    Capture,
}

impl Mode {
    /// Every mode, in the table's order.
    pub const ALL: [Mode; 6] = [
        Mode::Off,
        Mode::Loop,
        Mode::Gen,
        Mode::Echo,
        Mode::Check,
        Mode::Capture,
    ];

    /// CONTROL.MODE's value for this mode.
    pub fn value(self) -> u32 {
        (match self {
            Mode::Off => control::MODE_OFF,
            Mode::Loop => control::MODE_LOOP,
            Mode::Gen => control::MODE_GEN,
            Mode::Echo => control::MODE_ECHO,
            Mode::Check => control::MODE_CHECK,
            Mode::Capture => control::MODE_CAPTURE,
        } as u32)
            << control::MODE_LSB
    }

    /// The name the register map gives the mode.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Off => "OFF",
            Mode::Loop => "LOOP",
            Mode::Gen => "GEN",
            Mode::Echo => "ECHO",
            Mode::Check => "CHECK",
            Mode::Capture => "CAPTURE",
        }
    }

    /// The mode of a name, as [`Mode::name`] spells it (any case).
    pub fn from_name(s: &str) -> Option<Mode> {
        Mode::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(s))
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where the capabilities came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The card's CAPS register (read-only, in the register table).
    CapsRegister,
    /// Inferred from the channels discovery found and the identifier and version registers,
    /// for a register map without CAPS.
    Inferred,
}

/// What the card has, as far as the suite's tests need to know.
#[derive(Debug, Clone)]
pub struct Capabilities {
    /// Where this came from.
    pub source: Source,
    /// The identifier register is the register table's: the card's registers are this map's.
    pub known_card: bool,
    /// The register map's major version equals the table's: its registers mean what the
    /// table says.
    pub same_map: bool,
    /// Memory-mapped H2C channels, by API channel number.
    pub h2c_mm: Vec<usize>,
    /// Memory-mapped C2H channels.
    pub c2h_mm: Vec<usize>,
    /// H2C stream channels, in port order (the first is the card's H2C0).
    pub h2c_stream: Vec<usize>,
    /// C2H stream channels, in port order (C2H0, fed by frame source 0, then C2H1).
    pub c2h_stream: Vec<usize>,
    /// Bytes of card memory behind the memory-mapped channels.
    pub memory_size: u64,
    /// User interrupt events.
    pub events: usize,
    /// Bit m set: CONTROL.MODE value m is available.
    modes: u32,
}

impl Capabilities {
    /// Finds what `card` has. This is the one function that decides; every skip follows from
    /// its answer.
    ///
    /// When the register table has a CAPS register (a read-only word whose fields say which
    /// paths and modes a build has), the card is asked. Until then it is inferred: the card's
    /// registers are the table's when the identifier and the version's major number match;
    /// LOOP, ECHO and CHECK need an H2C stream (and, but for CHECK, a C2H stream), GEN a C2H
    /// stream per source, CAPTURE card memory and a memory-mapped C2H channel to read the ring.
    pub fn discover(card: &impl Card) -> Capabilities {
        let info = card.info();
        let id_reset = card_regs::id::RESET as u32;
        let map_major = (card_regs::version::RESET >> card_regs::version::MAJOR_LSB) as u32;
        let known_card = info.card_id == id_reset;
        let same_map =
            known_card && info.card_version >> card_regs::version::MAJOR_LSB == map_major;
        let mut caps = Capabilities {
            source: Source::Inferred,
            known_card,
            same_map,
            h2c_mm: channels(info, Direction::H2C, ChannelKind::MemoryMapped),
            c2h_mm: channels(info, Direction::C2H, ChannelKind::MemoryMapped),
            h2c_stream: channels(info, Direction::H2C, ChannelKind::Stream),
            c2h_stream: channels(info, Direction::C2H, ChannelKind::Stream),
            memory_size: info.memory_size,
            events: info.events,
            modes: 0,
        };
        if !same_map {
            return caps;
        }
        caps.modes = caps.inferred_modes();
        // The CAPS register, read as the table describes it: when the table has it, its MODES
        // field narrows the modes (a build offers only what its XDMA configuration serves).
        if let Some(reg) = card_regs::REGISTERS.iter().find(|r| r.name == "CAPS") {
            if let (Ok(value), Some(modes)) = (
                card.read_reg(u64::from(reg.offset)),
                reg.fields.iter().find(|f| f.name == "MODES"),
            ) {
                let m = (value >> modes.lsb) & ((1u32 << modes.bits) - 1);
                caps.modes &= m | 1;
                caps.source = Source::CapsRegister;
            }
        }
        caps
    }

    fn inferred_modes(&self) -> u32 {
        let mut m = 1 << control::MODE_OFF;
        let h2c = !self.h2c_stream.is_empty();
        let c2h = !self.c2h_stream.is_empty();
        if h2c && c2h {
            m |= (1 << control::MODE_LOOP) | (1 << control::MODE_ECHO);
        }
        if h2c {
            m |= 1 << control::MODE_CHECK;
        }
        if c2h {
            m |= 1 << control::MODE_GEN;
        }
        if self.memory_size > 0 && !self.c2h_mm.is_empty() {
            m |= 1 << control::MODE_CAPTURE;
        }
        m
    }

    /// True when the card has `mode`.
    pub fn has_mode(&self, mode: Mode) -> bool {
        self.modes & (1 << (mode.value() >> control::MODE_LSB)) != 0
    }

    /// Why a test of `mode` cannot run on this card, or None when it can.
    pub fn lacks_mode(&self, mode: Mode) -> Option<String> {
        if let Some(why) = self.lacks_registers() {
            return Some(why);
        }
        (!self.has_mode(mode)).then(|| {
            format!(
                "the card has no {mode} mode ({}; channels: H2C streams {:?}, C2H streams {:?}, memory-mapped C2H {:?})",
                match self.source {
                    Source::CapsRegister => "CAPS.MODES says so",
                    Source::Inferred => "inferred from the channels it has",
                },
                self.h2c_stream,
                self.c2h_stream,
                self.c2h_mm
            )
        })
    }

    /// Why the register map's tests cannot run on this card, or None when they can.
    pub fn lacks_registers(&self) -> Option<String> {
        if !self.known_card {
            return Some(format!(
                "the card's identifier is not the register table's {:#010x}: its registers are not this map's",
                card_regs::id::RESET
            ));
        }
        (!self.same_map).then(|| {
            format!(
                "the card's register map has another major version than the table's {:#x}",
                card_regs::version::RESET
            )
        })
    }

    /// The memory-mapped channel pair (H2C, C2H), or why there is none.
    pub fn mm(&self) -> Result<(usize, usize), String> {
        match (self.h2c_mm.first(), self.c2h_mm.first()) {
            (Some(&h), Some(&c)) if self.memory_size > 0 => Ok((h, c)),
            _ => Err(format!(
                "the card has no memory-mapped channel pair to card memory (H2C {:?}, C2H {:?}, {} bytes)",
                self.h2c_mm, self.c2h_mm, self.memory_size
            )),
        }
    }

    /// The C2H stream channel fed by frame source `source`, or why there is none.
    pub fn source_channel(&self, source: usize) -> Result<usize, String> {
        if let Some(why) = self.lacks_mode(Mode::Gen) {
            return Err(why);
        }
        self.c2h_stream.get(source).copied().ok_or_else(|| {
            format!(
                "the card has no C2H stream for frame source {source} (C2H streams {:?})",
                self.c2h_stream
            )
        })
    }
}

fn channels(info: &CardInfo, dir: Direction, kind: ChannelKind) -> Vec<usize> {
    info.channels(dir)
        .iter()
        .filter(|c| c.kind == kind)
        .map(|c| c.index)
        .collect()
}
