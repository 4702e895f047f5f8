//! Pause generators: when a bus model holds back VALID (idle insertion) or READY
//! (backpressure), from a fixed pattern or a seeded random sequence.
//!
//! A generator is asked once per cycle of its channel; `true` means pause this cycle. A bus
//! model never drops a VALID it has raised because of a pause: a pause only delays the next
//! one, so any spec is protocol-legal.

use proptest::prelude::*;

use crate::protocol::Channel;

/// How a channel pauses; cheap to clone and print, so a failing test can show its spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PauseSpec {
    /// Never pause: full throughput.
    Never,
    /// Always pause: the channel never signals (useful to provoke stalls).
    Always,
    /// Repeat this pattern, one entry per cycle (`true` pauses).
    Pattern(Vec<bool>),
    /// Pause with probability `percent`/100 each cycle, from a generator seeded with `seed`.
    Random {
        /// The seed; the same seed gives the same sequence.
        seed: u64,
        /// The chance of a pause each cycle, 0 to 100.
        percent: u8,
    },
}

impl PauseSpec {
    /// A seeded random spec.
    pub fn random(seed: u64, percent: u8) -> PauseSpec {
        PauseSpec::Random {
            seed,
            percent: percent.min(100),
        }
    }

    /// A pattern from a string of `1` (pause) and `0` (go), e.g. `"0011"`; other characters
    /// are ignored.
    pub fn pattern(p: &str) -> PauseSpec {
        let v: Vec<bool> = p
            .chars()
            .filter(|c| *c == '0' || *c == '1')
            .map(|c| c == '1')
            .collect();
        if v.is_empty() {
            PauseSpec::Never
        } else {
            PauseSpec::Pattern(v)
        }
    }

    /// The generator of this spec for one channel; `salt` decorrelates channels that share a
    /// seed.
    pub fn generator(&self, salt: u64) -> Pause {
        Pause::new(self, salt)
    }
}

/// A running pause generator.
#[derive(Debug, Clone)]
pub struct Pause {
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    Never,
    Always,
    Pattern {
        bits: Vec<bool>,
        pos: usize,
    },
    /// The pause of the channel's cycle `n` is `mix64(base + n * GAMMA) < threshold`: a hash
    /// of (seed, cycle), so a seed names one sequence for good.
    Random {
        base: u64,
        threshold: u64,
    },
}

impl Default for Pause {
    fn default() -> Self {
        Pause { kind: Kind::Never }
    }
}

impl Pause {
    /// A generator for `spec`; `salt` is mixed into the seed of a random spec.
    pub fn new(spec: &PauseSpec, salt: u64) -> Pause {
        let kind = match spec {
            PauseSpec::Never => Kind::Never,
            PauseSpec::Always => Kind::Always,
            PauseSpec::Pattern(bits) if bits.is_empty() => Kind::Never,
            PauseSpec::Pattern(bits) => Kind::Pattern {
                bits: bits.clone(),
                pos: 0,
            },
            PauseSpec::Random { seed, percent } => Kind::Random {
                base: mix64(seed ^ mix64(salt.wrapping_add(0x51_7cc1_b727_220a))),
                // A 64-bit draw below this pauses: percent/100 of the range.
                threshold: ((u128::from((*percent).min(100)) << 64) / 100).min(u128::from(u64::MAX))
                    as u64,
            },
        };
        Pause { kind }
    }

    /// True for a generator that never pauses (so callers may skip asking per byte).
    #[inline]
    pub fn is_never(&self) -> bool {
        matches!(self.kind, Kind::Never)
    }

    /// Whether to pause this cycle; advances the generator by one cycle.
    #[inline]
    pub fn pause_now(&mut self) -> bool {
        match &mut self.kind {
            Kind::Never => false,
            Kind::Always => true,
            Kind::Pattern { bits, pos } => {
                let p = bits[*pos];
                *pos = (*pos + 1) % bits.len();
                p
            }
            Kind::Random { base, threshold } => {
                // The next cycle's point: `base` counts the cycles in steps of GAMMA.
                *base = base.wrapping_add(GAMMA);
                mix64(*base) < *threshold
            }
        }
    }
}

/// The step between the hash inputs of consecutive cycles (the golden ratio in 64 bits).
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// A hash of one 64-bit value (SplitMix64's finaliser), not a generator: it mixes a channel's
/// salt into the seed, and a random pause spec pauses at cycle `n` when the hash of
/// (seed, n) falls below its threshold. Being a pure function of (seed, cycle), it keeps
/// every seed's sequence as it was, so seeded tests keep their meaning.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A proptest strategy over pause specs: never, short fixed patterns, and seeded random
/// pauses of up to `max_percent` percent.
pub fn pause_strategy(max_percent: u8) -> impl Strategy<Value = PauseSpec> {
    let max = max_percent.min(99);
    prop_oneof![
        Just(PauseSpec::Never),
        proptest::collection::vec(any::<bool>(), 1..8).prop_map(|mut v| {
            // A pattern of all pauses would stall forever; keep one cycle free.
            v[0] = false;
            PauseSpec::Pattern(v)
        }),
        (any::<u64>(), 0..=max).prop_map(|(seed, percent)| PauseSpec::random(seed, percent)),
    ]
}

/// A proptest strategy over seeded random specs only, from 0 to `max_percent` percent.
pub fn random_pause_strategy(max_percent: u8) -> impl Strategy<Value = PauseSpec> {
    let max = max_percent.min(99);
    (any::<u64>(), 0..=max).prop_map(|(seed, percent)| PauseSpec::random(seed, percent))
}

/// The pause generators of an AXI4 or AXI4-Lite bus model's channels: the write channels
/// always, the read channels when the bus has them (write-only ports have no `araddr`).
pub(crate) struct ChannelPauses<'a> {
    /// AW, W and B.
    pub write: [&'a mut Pause; 3],
    /// AR and R.
    pub read: Option<[&'a mut Pause; 2]>,
}

/// A bus model of the five AXI channels, by where each channel's pause generator lives: one
/// spec installs generators on all of them, or on one.
pub(crate) trait BusPauses {
    /// The pause generators of the channels the bus model has.
    fn pauses(&mut self) -> ChannelPauses<'_>;

    /// The pause generator of `channel`, if the bus model has that channel.
    fn pause_of(&mut self, channel: Channel) -> Option<&mut Pause> {
        let ChannelPauses {
            write: [aw, w, b],
            read,
        } = self.pauses();
        match (channel, read) {
            (Channel::Aw, _) => Some(aw),
            (Channel::W, _) => Some(w),
            (Channel::B, _) => Some(b),
            (Channel::Ar, Some([ar, _])) => Some(ar),
            (Channel::R, Some([_, r])) => Some(r),
            _ => None,
        }
    }

    /// All five channels from one spec; `base` keeps the sequences of different agents (and
    /// of a master and a slave) apart.
    fn set_bus_pauses(&mut self, spec: &PauseSpec, base: u64) {
        for (k, ch) in [Channel::Aw, Channel::W, Channel::Ar, Channel::B, Channel::R]
            .into_iter()
            .enumerate()
        {
            if let Some(p) = self.pause_of(ch) {
                *p = spec.generator(base + k as u64);
            }
        }
    }

    /// Replaces one channel's generator (the others keep theirs); a stream channel is not
    /// one of these and is ignored.
    fn set_channel_pauses(&mut self, channel: Channel, spec: &PauseSpec) {
        if let Some(p) = self.pause_of(channel) {
            *p = spec.generator(0x5ca1e + channel as u64);
        }
    }

    /// True when no channel ever pauses.
    fn all_never(&mut self) -> bool {
        [Channel::Aw, Channel::W, Channel::B, Channel::Ar, Channel::R]
            .into_iter()
            .all(|ch| self.pause_of(ch).is_none_or(|p| p.is_never()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence_and_salt_changes_it() {
        let spec = PauseSpec::random(42, 50);
        let a: Vec<bool> = {
            let mut g = spec.generator(1);
            (0..200).map(|_| g.pause_now()).collect()
        };
        let b: Vec<bool> = {
            let mut g = spec.generator(1);
            (0..200).map(|_| g.pause_now()).collect()
        };
        let c: Vec<bool> = {
            let mut g = spec.generator(2);
            (0..200).map(|_| g.pause_now()).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
        let pauses = a.iter().filter(|p| **p).count();
        assert!(
            (60..140).contains(&pauses),
            "about half of 200 pause: {pauses}"
        );
    }

    #[test]
    fn patterns_repeat_and_extremes_hold() {
        let mut g = PauseSpec::pattern("110").generator(0);
        let seq: Vec<bool> = (0..6).map(|_| g.pause_now()).collect();
        assert_eq!(seq, [true, true, false, true, true, false]);
        let mut never = PauseSpec::random(1, 0).generator(0);
        let mut always = PauseSpec::random(1, 100).generator(0);
        assert!((0..1000).all(|_| !never.pause_now()));
        assert!((0..1000).all(|_| always.pause_now()));
    }
}
