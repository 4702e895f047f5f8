//! The card's variants: one XDMA IP is memory-mapped or stream for all its channels, so the
//! card is built as one of two, with a third for simulation only. Each has its RTL top and the
//! engines its IP has; the simulated card's backend, the guest's device process and the tests
//! all take them from here.

use card_sim::Top;
use serde::{Deserialize, Serialize};

use crate::{EngineKind, IpConfig};

/// A variant of the card, named in configurations by [`Variant::name`] (`[sim] variant`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// `sim_top_mm`: H2C 0 and C2H 0 memory-mapped to DDR; modes OFF and CAPTURE.
    Mm,
    /// `sim_top_stream`: H2C 0, C2H 0 and C2H 1 streams, no DDR; modes OFF, LOOP, GEN, ECHO
    /// and CHECK.
    Stream,
    /// `sim_top`: both side by side (H2C 0 and C2H 0 memory-mapped, H2C 1, C2H 1 and C2H 2
    /// streams), which no single XDMA instance has; simulation only.
    Combined,
}

impl Variant {
    /// Every variant.
    pub const ALL: [Variant; 3] = [Variant::Mm, Variant::Stream, Variant::Combined];

    /// The variant's name in configurations and on command lines.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Mm => "mm",
            Variant::Stream => "stream",
            Variant::Combined => "combined",
        }
    }

    /// The variant of this name.
    pub fn from_name(name: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == name)
    }

    /// The name of the card's RTL top.
    pub fn top_name(self) -> &'static str {
        match self {
            Variant::Mm => "sim_top_mm",
            Variant::Stream => "sim_top_stream",
            Variant::Combined => "sim_top",
        }
    }

    /// The card's RTL top, if this build has it.
    pub fn top(self) -> Option<Top> {
        Top::ALL
            .iter()
            .copied()
            .find(|t| t.name() == self.top_name())
    }

    /// The IP's H2C engines, channel 0 first.
    pub fn h2c(self) -> Vec<EngineKind> {
        use EngineKind::{MemoryMapped as Mm, Stream as St};
        match self {
            Variant::Mm => vec![Mm],
            Variant::Stream => vec![St],
            Variant::Combined => vec![Mm, St],
        }
    }

    /// The IP's C2H engines, channel 0 first.
    pub fn c2h(self) -> Vec<EngineKind> {
        use EngineKind::{MemoryMapped as Mm, Stream as St};
        match self {
            Variant::Mm => vec![Mm],
            Variant::Stream => vec![St, St],
            Variant::Combined => vec![Mm, St, St],
        }
    }

    /// The reference board's IP in front of this variant's top ([`IpConfig::new`]), if this
    /// build has the top.
    pub fn ip_config(self) -> Option<IpConfig> {
        Some(IpConfig::new(self.top()?, self.h2c(), self.c2h()))
    }
}
