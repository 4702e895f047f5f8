//! Seeded random pauses on every bus of the card, as the `[sim]` section's `bus_pauses` sets
//! them ([`RandomPauses`]).

use serde::{Deserialize, Serialize};

/// Seeded random pauses on every bus of the card (see [`super::SimConfig::bus_pauses`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RandomPauses {
    /// The generators' seed: the same seed gives the same pauses.
    pub seed: u64,
    /// Chance in percent, 0 to 90, that a channel pauses on a cycle.
    pub percent: u8,
}
