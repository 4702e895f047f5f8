//! The simulated card's deliberate faults, and the names that select a card.
//!
//! A fault is logic of `sim_top` (card_core built with its `FAULT_*` parameter, see
//! `hdl/sim/sim_top.v`) that a sim-only input turns on; the harness holds that input from
//! before reset ([`crate::HarnessConfig::fault`]). Each fault has the name its separate build
//! once had, so a configuration's `[sim] top`, `cargo xtask campaign --top` and the replay
//! example's `--top` select it as they selected that build: [`CardTop::from_name`] maps a name
//! to a top of this build and the fault to turn on. [`Fault::ALL`] is the one table of those
//! names.

use std::fmt;

use card_sim::Top;

/// A deliberate fault of the simulated card, for the tests that must catch it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fault {
    name: &'static str,
    input: &'static str,
    description: &'static str,
}

impl Fault {
    /// The read width converter (axi_rd_upsizer) repeats the first beat of a burst that
    /// starts in the last 16-byte slot of a 64-byte line in place of its second; the bursts
    /// stay legal, so only the data shows it.
    pub const RD_DROP_BEAT: Fault = Fault {
        name: "sim_top_fault_rd_beat",
        input: "sim_fault_rd_drop_beat",
        description: "the read width converter drops the second beat of a burst that starts in the last 16-byte slot of a 64-byte line",
    };

    /// The frame sources (frame_source) repeat a sequence number once in 1000 periodic frames.
    pub const SEQ_REPEAT: Fault = Fault {
        name: "sim_top_fault_seq",
        input: "sim_fault_seq_repeat",
        description: "the frame sources repeat a sequence number once in 1000 frames",
    };

    /// Every fault: the table of their names and inputs.
    pub const ALL: &'static [Fault] = &[Fault::RD_DROP_BEAT, Fault::SEQ_REPEAT];

    /// The name that selects this fault where a top is named.
    pub fn name(self) -> &'static str {
        self.name
    }

    /// The top input that turns the fault on.
    pub fn input(self) -> &'static str {
        self.input
    }

    /// What the fault does, in a sentence.
    pub fn description(self) -> &'static str {
        self.description
    }

    /// The top whose inputs the fault is: the combined card.
    pub fn top(self) -> Top {
        Top::SimTop
    }

    /// The fault of this name, if there is one.
    pub fn from_name(name: &str) -> Option<Fault> {
        Fault::ALL.iter().copied().find(|f| f.name == name)
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// A card as a name selects it: one of this build's tops, with the deliberate fault to turn
/// on, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CardTop {
    /// The verilated top.
    pub top: Top,
    /// The fault the harness turns on.
    pub fault: Option<Fault>,
}

impl CardTop {
    /// A top as built, with no fault.
    pub fn plain(top: Top) -> CardTop {
        CardTop { top, fault: None }
    }

    /// The card `name` selects: a top of this build ([`Top::ALL`]) or a fault of one
    /// ([`Fault::ALL`]).
    pub fn from_name(name: &str) -> Result<CardTop, UnknownTop> {
        if let Some(fault) = Fault::from_name(name) {
            return Ok(CardTop {
                top: fault.top(),
                fault: Some(fault),
            });
        }
        Top::ALL
            .iter()
            .copied()
            .find(|t| t.name() == name)
            .map(CardTop::plain)
            .ok_or_else(|| UnknownTop {
                name: name.to_string(),
            })
    }

    /// The name that selects this card: the fault's, or the top's.
    pub fn name(self) -> &'static str {
        self.fault.map_or_else(|| self.top.name(), Fault::name)
    }

    /// Every name [`CardTop::from_name`] takes: the tops of this build, then the faults.
    pub fn names() -> Vec<&'static str> {
        Top::ALL
            .iter()
            .map(|t| t.name())
            .chain(Fault::ALL.iter().map(|f| f.name()))
            .collect()
    }
}

/// A name that is neither a top of this build nor a fault selection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownTop {
    /// The name given.
    pub name: String,
}

impl fmt::Display for UnknownTop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tops: Vec<&str> = Top::ALL.iter().map(|t| t.name()).collect();
        let faults: Vec<&str> = Fault::ALL.iter().map(|f| f.name()).collect();
        write!(
            f,
            "no RTL top or fault selection named `{}`: the tops of this build (sim/card-sim/tops.txt) are {}; the fault selections (sim_top with a deliberate fault turned on) are {}",
            self.name,
            tops.join(", "),
            faults.join(", ")
        )
    }
}

impl std::error::Error for UnknownTop {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fault_name_selects_sim_top_with_that_fault() {
        for &f in Fault::ALL {
            let card = CardTop::from_name(f.name()).expect("a fault name is a card");
            assert_eq!(card.top, Top::SimTop);
            assert_eq!(card.fault, Some(f));
            assert_eq!(card.name(), f.name());
        }
    }

    #[test]
    fn a_top_name_selects_the_top_without_a_fault() {
        for &t in Top::ALL {
            assert_eq!(CardTop::from_name(t.name()), Ok(CardTop::plain(t)));
        }
    }

    #[test]
    fn no_fault_shares_a_name_or_an_input_with_a_top_or_another_fault() {
        let names = CardTop::names();
        for (i, n) in names.iter().enumerate() {
            assert!(!names[i + 1..].contains(n), "`{n}` names two cards");
        }
        let inputs: Vec<&str> = Fault::ALL.iter().map(|f| f.input()).collect();
        for (i, n) in inputs.iter().enumerate() {
            assert!(!inputs[i + 1..].contains(n), "`{n}` is two faults' input");
        }
    }

    #[test]
    fn an_unknown_name_lists_the_tops_and_the_fault_selections() {
        let e = CardTop::from_name("no_such_card").expect_err("not a card");
        let text = e.to_string();
        assert!(text.contains("`no_such_card`"), "{text}");
        assert!(text.contains("sim_top_stream"), "{text}");
        for f in Fault::ALL {
            assert!(text.contains(f.name()), "{text}");
        }
    }
}
