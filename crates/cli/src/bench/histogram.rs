//! A log-bucketed latency histogram (HDR-style: 32 linear sub-buckets per
//! power of two, so any recorded value is known to within about 3%).
//! Values are recorded in nanoseconds and reported in microseconds.

use std::fmt::Write as _;

const SUB_BITS: u32 = 5;
const SUB: usize = 1 << SUB_BITS;
const BUCKETS: usize = (64 - SUB_BITS as usize + 1) * SUB;

/// Latency histogram; cheap to record into, mergeable across threads.
#[derive(Clone)]
pub struct Histogram {
    counts: Box<[u64]>,
    count: u64,
    sum: f64,
    sum_sq: f64,
    min: u64,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Histogram")
            .field("count", &self.count)
            .field("min", &self.min)
            .field("max", &self.max)
            .finish()
    }
}

#[inline]
fn index(v: u64) -> usize {
    if v < SUB as u64 {
        v as usize
    } else {
        let e = 63 - v.leading_zeros();
        let sub = ((v >> (e - SUB_BITS)) as usize) & (SUB - 1);
        (e - SUB_BITS + 1) as usize * SUB + sub
    }
}

/// The lowest value and width of bucket `i`.
fn bounds(i: usize) -> (u64, u64) {
    if i < SUB {
        (i as u64, 1)
    } else {
        let shift = (i / SUB - 1) as u32;
        let sub = (i % SUB) as u64;
        ((SUB as u64 + sub) << shift, 1u64 << shift)
    }
}

impl Histogram {
    /// An empty histogram.
    pub fn new() -> Self {
        Histogram {
            counts: vec![0; BUCKETS].into_boxed_slice(),
            count: 0,
            sum: 0.0,
            sum_sq: 0.0,
            min: u64::MAX,
            max: 0,
        }
    }

    /// Records one value in nanoseconds.
    #[inline]
    pub fn record(&mut self, nanos: u64) {
        self.counts[index(nanos)] += 1;
        self.count += 1;
        let f = nanos as f64;
        self.sum += f;
        self.sum_sq += f * f;
        self.min = self.min.min(nanos);
        self.max = self.max.max(nanos);
    }

    /// Adds every value of `other`.
    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
        self.count += other.count;
        self.sum += other.sum;
        self.sum_sq += other.sum_sq;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Number of values recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Smallest value in microseconds (0 when empty).
    pub fn min_us(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.min as f64 / 1e3
        }
    }

    /// Largest value in microseconds.
    pub fn max_us(&self) -> f64 {
        self.max as f64 / 1e3
    }

    /// Mean in microseconds.
    pub fn mean_us(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum / self.count as f64 / 1e3
        }
    }

    /// Standard deviation in microseconds.
    pub fn stddev_us(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let n = self.count as f64;
        let var = (self.sum_sq * n - self.sum * self.sum) / (n * n);
        var.max(0.0).sqrt() / 1e3
    }

    /// The `p`-th percentile (0..=100) in microseconds, interpolated within
    /// its bucket and clamped to the observed min and max.
    pub fn percentile_us(&self, p: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let threshold = self.count as f64 * (p / 100.0);
        let mut cumulative = 0f64;
        for (i, &c) in self.counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            let before = cumulative;
            cumulative += c as f64;
            if cumulative >= threshold {
                let (low, width) = bounds(i);
                let frac = if c == 0 {
                    0.0
                } else {
                    ((threshold - before) / c as f64).clamp(0.0, 1.0)
                };
                let v = low as f64 + width as f64 * frac;
                return v.clamp(self.min as f64, self.max as f64) / 1e3;
            }
        }
        self.max_us()
    }

    /// db_bench's histogram report (`HistogramStat::ToString`), in
    /// microseconds: count, average, deviation, min/median/max, percentiles,
    /// then the non-empty buckets.
    pub fn to_db_bench_string(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "Count: {} Average: {:.4}  StdDev: {:.2}",
            self.count,
            self.mean_us(),
            self.stddev_us()
        );
        let _ = writeln!(
            s,
            "Min: {:.3}  Median: {:.4}  Max: {:.3}",
            self.min_us(),
            self.percentile_us(50.0),
            self.max_us()
        );
        let _ = writeln!(
            s,
            "Percentiles: P50: {:.2} P75: {:.2} P99: {:.2} P99.9: {:.2} P99.99: {:.2}",
            self.percentile_us(50.0),
            self.percentile_us(75.0),
            self.percentile_us(99.0),
            self.percentile_us(99.9),
            self.percentile_us(99.99)
        );
        s.push_str("------------------------------------------------------\n");
        // Coarser buckets for the listing: one line per power of two.
        let mut cumulative = 0u64;
        let mut i = 0;
        while i < BUCKETS {
            let group_end = if i < SUB { SUB } else { i + SUB };
            let c: u64 = self.counts[i..group_end.min(BUCKETS)].iter().sum();
            if c > 0 {
                cumulative += c;
                let (low, _) = bounds(i);
                let (last_low, last_w) = bounds(group_end.min(BUCKETS) - 1);
                let pct = c as f64 * 100.0 / self.count as f64;
                let cum = cumulative as f64 * 100.0 / self.count as f64;
                let _ = writeln!(
                    s,
                    "[ {:>10.3}, {:>10.3} ) {:>9} {:>7.3}% {:>7.3}% {}",
                    low as f64 / 1e3,
                    (last_low + last_w) as f64 / 1e3,
                    c,
                    pct,
                    cum,
                    "#".repeat((pct / 5.0).round() as usize)
                );
            }
            i = group_end;
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_contiguous() {
        let mut expect = 0u64;
        for i in 0..BUCKETS - 1 {
            let (low, w) = bounds(i);
            assert_eq!(low, expect, "bucket {i}");
            assert_eq!(index(low), i);
            assert_eq!(index(low + w - 1), i);
            expect = low + w;
        }
        assert_eq!(index(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn percentiles_are_close() {
        let mut h = Histogram::new();
        for v in 1..=100_000u64 {
            h.record(v * 10);
        }
        let p50 = h.percentile_us(50.0);
        assert!((p50 - 500.0).abs() / 500.0 < 0.03, "{p50}");
        let p99 = h.percentile_us(99.0);
        assert!((p99 - 990.0).abs() / 990.0 < 0.03, "{p99}");
        assert!((h.mean_us() - 500.005).abs() < 0.01);
        let mut g = Histogram::new();
        g.merge(&h);
        assert_eq!(g.count(), 100_000);
        assert!(h.to_db_bench_string().contains("Percentiles: P50:"));
    }

    #[test]
    fn empty_is_zero() {
        let h = Histogram::new();
        assert_eq!(h.percentile_us(99.0), 0.0);
        assert_eq!(h.min_us(), 0.0);
    }
}
