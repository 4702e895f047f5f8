//! The clock scheduler: places every edge of every clock at its exact time in picoseconds.
//!
//! Edge `k` (counting from 1) of a clock of frequency `f` falls at `k * 10^12 / (2 f)` ps,
//! rounded to the nearest picosecond. Each time is computed from `k` directly rather than by
//! adding a rounded half-period, so no rounding error accumulates: a 333 MHz clock is still
//! exactly on time after a billion cycles. Odd edges rise, even edges fall; all clocks start
//! low at time zero.

/// Picoseconds per second.
const PS_PER_S: u128 = 1_000_000_000_000;

/// The highest frequency whose half period is still at least one picosecond.
pub const MAX_FREQ_HZ: u64 = 500_000_000_000;

/// Identifies a clock within one model's scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClockId(pub(crate) u8);

impl ClockId {
    /// The clock's index in the order clocks were added.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

/// The set of clock edges applied at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Edges {
    rising: u32,
    falling: u32,
}

impl Edges {
    /// True when `clock` rose at this instant.
    pub fn rising(self, clock: ClockId) -> bool {
        self.rising & (1 << clock.0) != 0
    }
    /// True when `clock` fell at this instant.
    pub fn falling(self, clock: ClockId) -> bool {
        self.falling & (1 << clock.0) != 0
    }
    /// True when no clock changed.
    pub fn is_empty(self) -> bool {
        self.rising == 0 && self.falling == 0
    }
    /// The clocks that rose, one bit per clock index.
    pub fn rising_mask(self) -> u32 {
        self.rising
    }
    /// The clocks that fell, one bit per clock index.
    pub fn falling_mask(self) -> u32 {
        self.falling
    }
}

/// One clock's place in time.
#[derive(Debug, Clone)]
pub(crate) struct Clock {
    pub(crate) name: String,
    pub(crate) freq_hz: u64,
    /// Edges applied so far.
    pub(crate) edges: u64,
    /// Time of the next edge.
    pub(crate) next_ps: u64,
    /// The half period when it is a whole number of picoseconds (250 MHz: 2,000 ps).
    pub(crate) half_ps: Option<u64>,
}

impl Clock {
    pub(crate) fn new(name: &str, freq_hz: u64) -> Clock {
        let two_f = u128::from(freq_hz) * 2;
        let half_ps = PS_PER_S
            .is_multiple_of(two_f)
            .then(|| (PS_PER_S / two_f) as u64);
        Clock {
            name: name.to_string(),
            freq_hz,
            edges: 0,
            next_ps: edge_time_ps(1, freq_hz),
            half_ps,
        }
    }

    /// Rising edges so far, which is the number of completed cycles.
    pub(crate) fn cycles(&self) -> u64 {
        self.edges.div_ceil(2)
    }

    /// The level after the last applied edge.
    pub(crate) fn level(&self) -> bool {
        self.edges % 2 == 1
    }
}

/// Time of edge `k` (1-based) of a clock at `freq_hz`, rounded to the nearest picosecond.
pub fn edge_time_ps(k: u64, freq_hz: u64) -> u64 {
    let f = u128::from(freq_hz);
    let t = (u128::from(k) * PS_PER_S + f) / (2 * f);
    u64::try_from(t).unwrap_or(u64::MAX)
}

/// All clocks of one model.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scheduler {
    pub(crate) clocks: Vec<Clock>,
    /// The next instant and its edges, kept up to date by `add` and `apply` so that looking
    /// ahead (once per instant, before the edges) costs nothing.
    next: Option<(u64, Edges)>,
}

impl Scheduler {
    /// Adds a clock.
    pub(crate) fn add(&mut self, c: Clock) {
        self.clocks.push(c);
        self.next = self.find_next();
    }

    /// The time of the next edge of any clock, if there is a clock.
    #[inline]
    pub(crate) fn next_time(&self) -> Option<u64> {
        self.next.map(|(t, _)| t)
    }

    /// The edges due at the next instant, without applying them.
    #[inline]
    pub(crate) fn peek(&self) -> Option<(u64, Edges)> {
        self.next
    }

    /// The earliest edge time over all clocks and the edges due then, in one pass.
    #[inline]
    fn find_next(&self) -> Option<(u64, Edges)> {
        let mut t = u64::MAX;
        let mut edges = Edges::default();
        for (i, c) in self.clocks.iter().enumerate() {
            if c.next_ps < t {
                t = c.next_ps;
                edges = Edges::default();
            }
            if c.next_ps == t {
                if c.level() {
                    edges.falling |= 1 << i;
                } else {
                    edges.rising |= 1 << i;
                }
            }
        }
        (!self.clocks.is_empty()).then_some((t, edges))
    }

    /// Applies the next instant's edges; returns the time, the edges and, per clock that moved,
    /// its index and new level.
    #[cfg(test)]
    pub(crate) fn advance(&mut self) -> Option<(u64, Edges)> {
        let (t, edges) = self.peek()?;
        self.apply(t);
        Some((t, edges))
    }

    /// Applies the edges due at `t`, the time `peek` returned.
    #[inline]
    pub(crate) fn apply(&mut self, t: u64) {
        // One pass: advance the clocks due at `t` and find the instant after it.
        let mut next_t = u64::MAX;
        let mut edges = Edges::default();
        for (i, c) in self.clocks.iter_mut().enumerate() {
            if c.next_ps == t {
                c.edges += 1;
                c.next_ps = match c.half_ps {
                    // A half period of whole picoseconds: the same time as the formula,
                    // without a 128-bit division per edge.
                    Some(h) => (c.edges + 1) * h,
                    None => edge_time_ps(c.edges + 1, c.freq_hz),
                };
            }
            if c.next_ps < next_t {
                next_t = c.next_ps;
                edges = Edges::default();
            }
            if c.next_ps == next_t {
                if c.level() {
                    edges.falling |= 1 << i;
                } else {
                    edges.rising |= 1 << i;
                }
            }
        }
        if !self.clocks.is_empty() {
            self.next = Some((next_t, edges));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_board_clocks_have_exact_periods() {
        assert_eq!(edge_time_ps(1, 250_000_000), 2_000);
        assert_eq!(edge_time_ps(2, 250_000_000), 4_000);
        assert_eq!(edge_time_ps(2, 200_000_000), 5_000);
    }

    #[test]
    fn whole_half_periods_take_the_short_path_to_the_same_times() {
        for f in [250_000_000u64, 200_000_000, 100_000_000, 1] {
            let mut s = Scheduler::default();
            s.add(Clock::new("c", f));
            assert!(s.clocks[0].half_ps.is_some(), "{f} Hz");
            for k in 1..=1000u64 {
                let (t, _) = s.advance().expect("a clock");
                assert_eq!(t, edge_time_ps(k, f), "edge {k} of {f} Hz");
            }
        }
        assert!(Clock::new("c", 333_333_000).half_ps.is_none());
    }

    #[test]
    fn odd_frequencies_do_not_drift() {
        // 333.333 MHz: half period 1500.0015 ps. After 10^9 cycles the edge is still placed to
        // the picosecond, which a summed rounded half-period (1500 ps) would miss by 1.5 us.
        let f = 333_333_000;
        let k = 2_000_000_000u64;
        let exact = (k as f64) * 1e12 / (2.0 * f as f64);
        assert!((edge_time_ps(k, f) as f64 - exact).abs() <= 0.5 + exact * 1e-15);
    }

    #[test]
    fn two_clocks_interleave_in_time_order() {
        let mut s = Scheduler::default();
        s.add(Clock::new("a", 250_000_000));
        s.add(Clock::new("b", 200_000_000));
        let mut last = 0;
        let mut together = 0;
        for _ in 0..2_000 {
            let (t, e) = s.advance().expect("clocks exist");
            assert!(t > last, "time must increase: {t} after {last}");
            last = t;
            let a = ClockId(0);
            let b = ClockId(1);
            if (e.rising(a) || e.falling(a)) && (e.rising(b) || e.falling(b)) {
                together += 1;
            }
        }
        // Both clocks share an edge every 20 ns (lcm of 4 ns and 5 ns).
        assert!(together > 0);
        assert_eq!(s.clocks[0].edges + s.clocks[1].edges, 2_000 + together);
    }
}
