//! The statistics of the measurement method: reservoir sampling and percentiles, discrete
//! tier detection, the two-point fit of t(N) = t0 + N / B, the marginal bandwidth between
//! neighbouring sizes and the model's error at every size.

use rand::{RngExt, SeedableRng};
use rand_xorshift::XorShiftRng;
use serde::Serialize;

/// A uniform sample of fixed size over a stream of unknown length (Vitter's Algorithm R):
/// the first `capacity` values fill it; value number `i` (1-based) after that replaces a
/// random slot with probability `capacity / i`. Every value of the stream ends up in the
/// sample with the same probability, so percentiles of the sample estimate those of the
/// whole stream at a fixed memory cost. The slots are drawn from a seeded generator, so the
/// sample of a run is reproducible.
#[derive(Debug, Clone)]
pub struct Reservoir {
    capacity: usize,
    seen: u64,
    sample: Vec<f64>,
    rng: XorShiftRng,
}

impl Reservoir {
    /// An empty reservoir of `capacity` values (at least one), with a fixed seed.
    pub fn new(capacity: usize, seed: u64) -> Reservoir {
        let capacity = capacity.max(1);
        Reservoir {
            capacity,
            seen: 0,
            sample: Vec::with_capacity(capacity),
            rng: XorShiftRng::seed_from_u64(seed),
        }
    }

    /// Offers one value of the stream.
    pub fn push(&mut self, value: f64) {
        self.seen += 1;
        if self.sample.len() < self.capacity {
            self.sample.push(value);
        } else {
            let j = self.rng.random_range(0..self.seen);
            if let Some(slot) = usize::try_from(j).ok().and_then(|j| self.sample.get_mut(j)) {
                *slot = value;
            }
        }
    }

    /// Values offered so far.
    pub fn seen(&self) -> u64 {
        self.seen
    }

    /// The sample (at most `capacity` values, in no particular order).
    pub fn sample(&self) -> &[f64] {
        &self.sample
    }

    /// Percentile `p` (0 to 100) of the sample, nearest rank; `None` when empty.
    pub fn percentile(&self, p: f64) -> Option<f64> {
        percentile(&self.sample, p)
    }
}

/// Percentile `p` (0 to 100) of `values` by the nearest-rank method: the smallest value that
/// at least `p` % of the values do not exceed. `None` for no values or a `p` out of range.
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    if values.is_empty() || !(0.0..=100.0).contains(&p) {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v.get(rank.max(1) - 1).copied()
}

/// The median of `values` (the mean of the two middle ones for an even count).
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The fraction within which segments belong to one tier.
pub const TIER_TOLERANCE: f64 = 0.03;

/// One tier of segments whose periods lie within [`TIER_TOLERANCE`] of the tier's fastest.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tier {
    /// The segments in the tier, by index, in order.
    pub segments: Vec<usize>,
    /// The tier's fastest (smallest) period.
    pub fastest: f64,
    /// The mean period of the tier's segments.
    pub mean: f64,
}

/// Discrete tiers of `periods` (smaller is faster): the segments within 3 % of the fastest
/// form the fast tier (the first); of the rest, those within 3 % of their fastest form the
/// next, and so on. A loop whose speed is set by discrete CPU frequencies shows one tier per
/// frequency; a loop disturbed at random shows a spread that makes many small tiers.
pub fn tiers(periods: &[f64]) -> Vec<Tier> {
    let mut order: Vec<usize> = (0..periods.len())
        .filter(|&i| periods[i].is_finite())
        .collect();
    order.sort_by(|&a, &b| periods[a].total_cmp(&periods[b]));
    let mut out = Vec::new();
    let mut i = 0;
    while i < order.len() {
        let fastest = periods[order[i]];
        let mut members = Vec::new();
        while i < order.len() && periods[order[i]] <= fastest * (1.0 + TIER_TOLERANCE) {
            members.push(order[i]);
            i += 1;
        }
        members.sort_unstable();
        let mean = members.iter().map(|&m| periods[m]).sum::<f64>() / members.len() as f64;
        out.push(Tier {
            segments: members,
            fastest,
            mean,
        });
    }
    out
}

/// How far a slow tier's period ratio may differ from its frequency ratio and still be
/// explained by the frequency alone.
pub const RATIO_TOLERANCE: f64 = 0.10;

/// The frequency check of a tier: a loop bound by the CPU runs slower in proportion to the
/// clock, so `period / fast period` should equal `fast frequency / frequency`. Returns the
/// two ratios and whether they agree within [`RATIO_TOLERANCE`].
pub fn ratio_check(
    period: f64,
    fast_period: f64,
    freq: f64,
    fast_freq: f64,
) -> Option<(f64, f64, bool)> {
    if period <= 0.0 || fast_period <= 0.0 || freq <= 0.0 || fast_freq <= 0.0 {
        return None;
    }
    let p = period / fast_period;
    let f = fast_freq / freq;
    Some((p, f, (p / f - 1.0).abs() <= RATIO_TOLERANCE))
}

/// The fraction of the fastest tier's throughput that the last segment must keep.
pub const STABLE_FRACTION: f64 = 0.98;

/// The stability verdict: the last segment's throughput is at least 98 % of the fastest
/// tier's (throughput being the inverse of the period).
pub fn stable(last_period: f64, fastest_tier_period: f64) -> bool {
    last_period > 0.0 && fastest_tier_period / last_period >= STABLE_FRACTION
}

/// A linear model of a transfer's duration: t(N) = t0 + N / B.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Fit {
    /// The fixed cost per transfer in microseconds.
    pub t0_us: f64,
    /// The cost per byte in nanoseconds.
    pub ns_per_byte: f64,
    /// The bandwidth B = 1 / ns_per_byte in MB/s (10^6 bytes per second).
    pub mb_s: f64,
}

impl Fit {
    /// The line through two measured points `(bytes, us)`; `None` when the sizes are equal.
    pub fn two_point(a: (u64, f64), b: (u64, f64)) -> Option<Fit> {
        let dn = b.0 as f64 - a.0 as f64;
        if dn == 0.0 {
            return None;
        }
        let us_per_byte = (b.1 - a.1) / dn;
        let ns_per_byte = us_per_byte * 1e3;
        Some(Fit {
            t0_us: a.1 - a.0 as f64 * us_per_byte,
            ns_per_byte,
            mb_s: 1e3 / ns_per_byte,
        })
    }

    /// The model's duration of a transfer of `bytes`, in microseconds.
    pub fn us(&self, bytes: u64) -> f64 {
        self.t0_us + bytes as f64 * self.ns_per_byte / 1e3
    }

    /// The model's error at a measured point, in percent of the measurement.
    pub fn error_pct(&self, bytes: u64, measured_us: f64) -> f64 {
        (self.us(bytes) - measured_us) / measured_us * 100.0
    }
}

/// The marginal cost between neighbouring sizes: for points `(bytes, us)` sorted by size,
/// delta t / delta N of each neighbouring pair in ns per byte (one fewer than the points).
pub fn marginal_ns_per_byte(points: &[(u64, f64)]) -> Vec<f64> {
    let mut p = points.to_vec();
    p.sort_by_key(|x| x.0);
    p.windows(2)
        .filter(|w| w[1].0 > w[0].0)
        .map(|w| (w[1].1 - w[0].1) / (w[1].0 - w[0].0) as f64 * 1e3)
        .collect()
}

/// The median marginal bandwidth in MB/s: the bandwidth the data phase reaches once the
/// fixed cost is taken out, robust against one noisy size.
pub fn median_marginal_mb_s(points: &[(u64, f64)]) -> Option<f64> {
    median(&marginal_ns_per_byte(points)).map(|ns| 1e3 / ns)
}

/// Signed error of `measured` against `reference` in percent of the reference.
pub fn error_pct(measured: f64, reference: f64) -> f64 {
    (measured - reference) / reference * 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_by_nearest_rank() {
        let v: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), Some(50.0));
        assert_eq!(percentile(&v, 99.0), Some(99.0));
        assert_eq!(percentile(&v, 100.0), Some(100.0));
        assert_eq!(percentile(&v, 0.0), Some(1.0));
        // Nearest rank of 5 values: P50 is the 3rd, P90 the 5th, P20 the 1st.
        let w = [15.0, 20.0, 35.0, 40.0, 50.0];
        assert_eq!(percentile(&w, 50.0), Some(35.0));
        assert_eq!(percentile(&w, 90.0), Some(50.0));
        assert_eq!(percentile(&w, 20.0), Some(15.0));
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(percentile(&w, 101.0), None);
        assert_eq!(median(&[3.0, 1.0, 2.0, 10.0]), Some(2.5));
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
    }

    #[test]
    fn a_reservoir_keeps_everything_until_full() {
        let mut r = Reservoir::new(10, 1);
        for x in 0..10 {
            r.push(f64::from(x));
        }
        let mut s = r.sample().to_vec();
        s.sort_by(f64::total_cmp);
        assert_eq!(s, (0..10).map(f64::from).collect::<Vec<_>>());
        assert_eq!(r.seen(), 10);
        r.push(99.0);
        assert_eq!(r.sample().len(), 10, "the size stays fixed");
        assert_eq!(r.seen(), 11);
    }

    /// Algorithm R keeps every element with probability k / n: over many independent runs of
    /// a stream of 20 values into 5 slots, each value is kept in 25 % of them.
    #[test]
    fn a_reservoir_is_uniform_over_the_stream() {
        let (n, k, runs) = (20usize, 5usize, 20_000u64);
        let mut kept = vec![0u64; n];
        for seed in 0..runs {
            let mut r = Reservoir::new(k, seed);
            for x in 0..n {
                r.push(x as f64);
            }
            for &v in r.sample() {
                kept[v as usize] += 1;
            }
        }
        let expect = runs as f64 * k as f64 / n as f64;
        for (x, &c) in kept.iter().enumerate() {
            // Binomial(20000, 0.25): sd = 61; 5 sd is 6 % of the mean.
            assert!(
                (c as f64 - expect).abs() < 0.06 * expect,
                "value {x} kept {c} times, expected {expect}"
            );
        }
        // A reservoir that kept only the first k (a broken one) would fail the check above:
        // the last value would never be kept.
        assert!(kept[n - 1] > 0);
    }

    #[test]
    fn reservoir_percentiles_estimate_the_stream() {
        // 100 000 values 0..99 999 into 2000 slots: P50 near 50 000, P99 near 99 000.
        let mut r = Reservoir::new(2000, 7);
        for x in 0..100_000 {
            r.push(f64::from(x));
        }
        let p50 = r.percentile(50.0).expect("p50");
        let p99 = r.percentile(99.0).expect("p99");
        assert!((p50 - 50_000.0).abs() < 3_000.0, "{p50}");
        assert!((p99 - 99_000.0).abs() < 1_000.0, "{p99}");
    }

    #[test]
    fn tiers_are_found_within_three_percent_of_their_fastest() {
        // Two CPU frequencies: 10.0 us at the high clock, 12.5 us at 80 % of it, and one
        // segment just outside 3 % of the fastest.
        let periods = [10.0, 10.2, 12.5, 10.29, 12.6, 12.8, 10.31];
        let t = tiers(&periods);
        assert_eq!(t.len(), 3, "{t:?}");
        assert_eq!(t[0].segments, vec![0, 1, 3], "10.31 is 3.1 % above 10.0");
        assert_eq!(t[0].fastest, 10.0);
        assert!((t[0].mean - 10.163_333).abs() < 1e-5);
        assert_eq!(t[1].segments, vec![6]);
        assert_eq!(t[2].segments, vec![2, 4, 5], "12.8 is 2.4 % above 12.5");
        assert!(tiers(&[]).is_empty());
    }

    #[test]
    fn the_frequency_ratio_explains_a_cpu_bound_tier() {
        // 12.5 us at 2.4 GHz against 10 us at 3.0 GHz: both ratios 1.25.
        let (p, f, ok) = ratio_check(12.5, 10.0, 2400.0, 3000.0).expect("ratios");
        assert!((p - 1.25).abs() < 1e-12 && (f - 1.25).abs() < 1e-12 && ok);
        // A slow tier at the same frequency is not the CPU clock's doing.
        let (_, f, ok) = ratio_check(12.5, 10.0, 3000.0, 3000.0).expect("ratios");
        assert!((f - 1.0).abs() < 1e-12 && !ok);
        assert!(ratio_check(1.0, 1.0, 0.0, 1.0).is_none());
    }

    #[test]
    fn stability_is_ninety_eight_percent_of_the_fastest_tier() {
        assert!(stable(10.0, 10.0));
        assert!(stable(10.2, 10.0), "98.04 %");
        assert!(!stable(10.25, 10.0), "97.6 %");
        assert!(!stable(0.0, 10.0));
    }

    /// The reference board's fit from its table's two ends (README: 18.8 us and 0.293 ns/B
    /// for writes, 18.5 us and 0.398 ns/B for reads; 3413 and 2510 MB/s).
    #[test]
    fn the_two_point_fit_gives_the_reference_figures() {
        let w =
            Fit::two_point((4096, 4096.0 / 204.8), (8 << 20, 8_388_608.0 / 3387.0)).expect("fit");
        assert!((w.t0_us - 18.8).abs() < 0.05, "{w:?}");
        assert!((w.ns_per_byte - 0.293).abs() < 0.0005, "{w:?}");
        assert!((w.mb_s - 3413.0).abs() < 3.0, "{w:?}");
        let r =
            Fit::two_point((4096, 4096.0 / 203.8), (8 << 20, 8_388_608.0 / 2496.5)).expect("fit");
        assert!((r.t0_us - 18.5).abs() < 0.05, "{r:?}");
        assert!((r.ns_per_byte - 0.398).abs() < 0.0005, "{r:?}");
        assert!((r.mb_s - 2510.0).abs() < 3.0, "{r:?}");
        // The model reproduces its own end points exactly.
        assert!(w.error_pct(4096, 20.0).abs() < 1e-9);
        assert!(Fit::two_point((1, 1.0), (1, 2.0)).is_none());
    }

    #[test]
    fn a_line_is_its_own_marginal_bandwidth() {
        // t = 10 us + N * 0.5 ns: every marginal is 0.5 ns/B, i.e. 2000 MB/s; the middle
        // point is predicted exactly by the fit through the ends.
        let pts: Vec<(u64, f64)> = [4096u64, 65536, 1 << 20, 8 << 20]
            .iter()
            .map(|&n| (n, 10.0 + n as f64 * 0.5e-3))
            .collect();
        for m in marginal_ns_per_byte(&pts) {
            assert!((m - 0.5).abs() < 1e-9, "{m}");
        }
        let mb = median_marginal_mb_s(&pts).expect("median");
        assert!((mb - 2000.0).abs() < 1e-6, "{mb}");
        let fit = Fit::two_point(pts[0], pts[3]).expect("fit");
        assert!(fit.error_pct(pts[1].0, pts[1].1).abs() < 1e-9);
        // One noisy size moves the mean marginal but not the median: 4 marginals, 3 of them
        // 0.5 ns/B.
        let mut noisy = pts.clone();
        noisy.push((16 << 20, 10.0 + (16u64 << 20) as f64 * 0.5e-3));
        noisy[2].1 += 50.0;
        let m = marginal_ns_per_byte(&noisy);
        assert_eq!(m.len(), 4);
        let mean = m.iter().sum::<f64>() / 4.0;
        assert!((mean - 0.5).abs() > 1e-3, "{mean}");
        assert!((median(&m).expect("median") - 0.5).abs() < 1e-9, "{m:?}");
        assert!((error_pct(110.0, 100.0) - 10.0).abs() < 1e-12);
    }
}
