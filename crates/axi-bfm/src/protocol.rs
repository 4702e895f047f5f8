//! The words of the protocol that every layer shares: the channels of a bus, the rules the
//! monitors check (one line each), and the violation a broken rule becomes. The environment,
//! the errors and the pause generators use these; the monitors build on them, never the other
//! way round.

/// The rules come from the project's one rule table, `hdl/formal/rules.toml`, which also gives
/// the formal property modules under `hdl/formal`; `cargo xtask codegen` writes the list.
pub use crate::rule_table::Rule;

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A channel of a bus.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Channel {
    /// Write address.
    Aw,
    /// Write data.
    W,
    /// Write response.
    B,
    /// Read address.
    Ar,
    /// Read data.
    R,
    /// AXI-Stream transfer.
    T,
}

impl std::fmt::Display for Channel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Channel::Aw => "AW",
            Channel::W => "W",
            Channel::B => "B",
            Channel::Ar => "AR",
            Channel::R => "R",
            Channel::T => "T",
        })
    }
}

/// A broken protocol rule, with where and when it broke and the values that broke it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The rule.
    pub rule: Rule,
    /// The bus (its port prefix).
    pub bus: String,
    /// The channel.
    pub channel: Channel,
    /// Simulated time of the edge at which the values were sampled, in picoseconds.
    pub time_ps: u64,
    /// The edge's number on the bus's clock.
    pub cycle: u64,
    /// The offending signal values, by signal name.
    pub values: Vec<(String, u64)>,
    /// What was wrong, in words.
    pub note: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "protocol violation `{}` on bus `{}`, channel {}, at {} ps (cycle {}): {}",
            self.rule, self.bus, self.channel, self.time_ps, self.cycle, self.note
        )?;
        if !self.values.is_empty() {
            f.write_str(" [")?;
            for (i, (n, v)) in self.values.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                // Counts read best in decimal, addresses and bus values in hex.
                if is_count(n) {
                    write!(f, "{n}={v}")?;
                } else {
                    write!(f, "{n}={v:#x}")?;
                }
            }
            f.write_str("]")?;
        }
        Ok(())
    }
}

impl std::error::Error for Violation {}

/// Value names that are counts of cycles or beats, shown in decimal.
fn is_count(name: &str) -> bool {
    ["cycle", "waited", "beat", "count", "len", "frames", "bytes"]
        .iter()
        .any(|k| name.contains(k))
}
