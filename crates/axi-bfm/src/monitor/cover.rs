//! Functional coverage: the protocol situations the monitors' rules are about, counted as the
//! bus shows them, so that a run (a fuzz run above all) can say which it reached.
//!
//! The counting costs the monitors next to nothing per edge: an edge without a handshake
//! counts nothing, and a handshake adds to its channel's total and, after an idle edge, to
//! one other counter; handshakes after a stall are counted where the stall is checked, off
//! the fast path, and back-to-back ones are what the others leave of the total. The
//! situations of a request or a beat are counted when it is accepted, into fixed arrays, the
//! common ones likewise derived from totals (a full stream beat is any beat without null
//! bytes), and the checks that look at other IDs run only when another ID is in use. A
//! [`Coverage`] is put together only when asked for.

use std::collections::BTreeMap;

use crate::protocol::Channel;

/// How a handshake came about: the pause patterns a channel went through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pace {
    /// VALID waited at least one edge for READY (back-pressure).
    AfterStall,
    /// The handshake followed one on the edge before (no pause between beats).
    BackToBack,
    /// VALID rose after at least one edge without a transfer (a pause of the sender).
    AfterIdle,
}

impl Pace {
    /// Every pace, in the order of the counters.
    pub const ALL: [Pace; 3] = [Pace::AfterStall, Pace::BackToBack, Pace::AfterIdle];
}

/// A situation that is not a handshake's pace: a kind of request, beat or response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Event {
    /// A FIXED burst.
    FixedBurst,
    /// An INCR burst.
    IncrBurst,
    /// A WRAP burst.
    WrapBurst,
    /// A burst of one beat.
    SingleBeat,
    /// A burst of 2 to 16 beats.
    ShortBurst,
    /// A burst of 17 to 256 beats (INCR only).
    LongBurst,
    /// Beats narrower than the bus (AxSIZE below its width).
    Narrow,
    /// A start address not aligned to the beat size.
    Unaligned,
    /// An INCR burst whose last byte is the last of a 4 KiB page: the edge that the
    /// no-crossing rule guards.
    EndsAt4k,
    /// An exclusive access (AxLOCK).
    Exclusive,
    /// Write data before its address: AXI4 data ended by WLAST before its AW, AXI4-Lite a W
    /// accepted with no AW waiting for it.
    WriteDataFirst,
    /// AXI4-Lite: a write's address and data on one edge.
    AddressWithData,
    /// A request accepted while an unanswered one of the same direction has another ID.
    IdsInterleaved,
    /// A response while an older request of another ID is still unanswered.
    OutOfOrderResponse,
    /// Read data of one ID between the beats of another's burst.
    ReadDataInterleaved,
    /// A request accepted while another is unanswered.
    Outstanding,
    /// A SLVERR or DECERR response.
    ErrorResponse,
    /// A stream beat with every byte valid.
    FullBeat,
    /// A stream beat with null bytes (TKEEP not all ones).
    NullBytes,
    /// A frame of one beat.
    SingleBeatFrame,
    /// A frame of several beats.
    MultiBeatFrame,
    /// A TLAST beat that waited for TREADY: back-pressure at the end of a frame.
    StallAtLast,
}

impl Event {
    /// How many events there are: the length of a monitor's counter array.
    pub(crate) const COUNT: usize = Event::StallAtLast as usize + 1;

    /// Every event, in the order of the counters.
    pub(crate) const ALL: [Event; Event::COUNT] = [
        Event::FixedBurst,
        Event::IncrBurst,
        Event::WrapBurst,
        Event::SingleBeat,
        Event::ShortBurst,
        Event::LongBurst,
        Event::Narrow,
        Event::Unaligned,
        Event::EndsAt4k,
        Event::Exclusive,
        Event::WriteDataFirst,
        Event::AddressWithData,
        Event::IdsInterleaved,
        Event::OutOfOrderResponse,
        Event::ReadDataInterleaved,
        Event::Outstanding,
        Event::ErrorResponse,
        Event::FullBeat,
        Event::NullBytes,
        Event::SingleBeatFrame,
        Event::MultiBeatFrame,
        Event::StallAtLast,
    ];

    /// The events about a burst's own shape, FIXED to exclusive: the first of [`Event::ALL`],
    /// which only the AXI4 monitor counts.
    pub(crate) fn burst_shapes() -> &'static [Event] {
        &Event::ALL[..=Event::Exclusive as usize]
    }
}

/// One situation a monitor counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Situation {
    /// A handshake on a channel, by how it came about.
    Handshake(Channel, Pace),
    /// A kind of request, beat or response.
    Event(Event),
}

impl std::fmt::Display for Situation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Situation::Handshake(ch, p) => write!(f, "{ch} handshake {p:?}"),
            Situation::Event(e) => write!(f, "{e:?}"),
        }
    }
}

/// What a monitor, or a whole run, reached: a count per situation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Coverage {
    counts: BTreeMap<Situation, u64>,
}

impl Coverage {
    /// How often `s` was seen.
    pub fn count(&self, s: Situation) -> u64 {
        self.counts.get(&s).copied().unwrap_or(0)
    }

    /// Every situation seen at least once, with its count.
    pub fn reached(&self) -> impl Iterator<Item = (Situation, u64)> + '_ {
        self.counts
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(s, n)| (*s, *n))
    }

    /// The situations of `expected` never seen.
    pub fn missing(&self, expected: &[Situation]) -> Vec<Situation> {
        expected
            .iter()
            .copied()
            .filter(|s| self.count(*s) == 0)
            .collect()
    }

    /// Adds another run's counts to these.
    pub fn merge(&mut self, other: &Coverage) {
        for (s, n) in &other.counts {
            *self.counts.entry(*s).or_default() += n;
        }
    }

    pub(crate) fn add(&mut self, s: Situation, n: u64) {
        if n > 0 {
            *self.counts.entry(s).or_default() += n;
        }
    }

    /// Adds a monitor's event counters.
    pub(crate) fn add_events(&mut self, events: &Events) {
        for (e, n) in Event::ALL.iter().zip(events.0.iter()) {
            self.add(Situation::Event(*e), *n);
        }
    }
}

impl std::fmt::Display for Coverage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (s, n) in self.reached() {
            writeln!(f, "{s}: {n}")?;
        }
        Ok(())
    }
}

/// A monitor's event counters.
#[derive(Debug, Clone, Default)]
pub(crate) struct Events([u64; Event::COUNT]);

impl Events {
    #[inline]
    pub(crate) fn bump(&mut self, e: Event) {
        self.0[e as usize] += 1;
    }

    #[inline]
    pub(crate) fn bump_if(&mut self, e: Event, yes: bool) {
        self.0[e as usize] += u64::from(yes);
    }
}

/// The handshake situations of `channels`, every pace of each.
pub(crate) fn handshakes(channels: &[Channel]) -> Vec<Situation> {
    channels
        .iter()
        .flat_map(|c| Pace::ALL.map(|p| Situation::Handshake(*c, p)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_has_its_own_counter() {
        for (i, e) in Event::ALL.iter().enumerate() {
            assert_eq!(*e as usize, i, "{e:?}");
        }
    }

    #[test]
    fn merged_counts_add_up_and_missing_ones_are_named() {
        let mut a = Coverage::default();
        let mut ev = Events::default();
        ev.bump(Event::WrapBurst);
        ev.bump(Event::WrapBurst);
        ev.bump_if(Event::Narrow, false);
        a.add_events(&ev);
        let mut b = Coverage::default();
        b.add(Situation::Handshake(Channel::W, Pace::AfterStall), 3);
        b.add_events(&ev);
        a.merge(&b);
        assert_eq!(a.count(Situation::Event(Event::WrapBurst)), 4);
        assert_eq!(
            a.count(Situation::Handshake(Channel::W, Pace::AfterStall)),
            3
        );
        let want = [
            Situation::Event(Event::WrapBurst),
            Situation::Event(Event::Narrow),
        ];
        assert_eq!(a.missing(&want), vec![Situation::Event(Event::Narrow)]);
        assert_eq!(a.reached().count(), 2);
    }
}
