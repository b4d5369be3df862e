//! A mergeable quantile sketch (DDSketch, Masson et al., VLDB 2019) with 1% relative error.
//!
//! A value `x > 0` goes to bucket `ceil(log_γ x)` with `γ = (1 + α) / (1 − α)`, α = 0.01, so any
//! quantile is returned within 1% of a true value of that rank. Values below [`MIN_POSITIVE`] (and
//! negatives, which durations never are) count as zero. Buckets are kept sparse and sorted; the bucket
//! count is bounded by [`MAX_BUCKETS`] (when passed, the lowest buckets are merged, which only blurs
//! the smallest values), so memory is O(1) whatever the number of values. Two sketches built with the
//! same parameters merge exactly: the collector merges the sketches the meter sends.

use crate::math;
use alloc::vec::Vec;
/// Relative accuracy α of every quantile.
pub const RELATIVE_ACCURACY: f64 = 0.01;
/// Smallest value kept apart from zero (milliseconds, for the meter's gaps).
pub const MIN_POSITIVE: f64 = 1e-3;
/// Bucket bound: with α = 1%, 1,024 buckets span 1 µs to about 10⁵ years in milliseconds.
pub const MAX_BUCKETS: usize = 1024;

const GAMMA: f64 = (1.0 + RELATIVE_ACCURACY) / (1.0 - RELATIVE_ACCURACY);
/// ln γ, spelled out because `ln` is not a const fn: every insert divides by it (checked by a test).
const LN_GAMMA: f64 = 0.020000666706669435;

/// A DDSketch. Insert O(log B + B) worst case (B buckets, usually well under 200), quantile O(B).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sketch {
    buckets: Vec<(i32, u64)>,
    zeros: u64,
    count: u64,
    min: f64,
    max: f64,
}

impl Sketch {
    /// An empty sketch (no allocation until the first value).
    pub const fn new() -> Self {
        Sketch { buckets: Vec::new(), zeros: 0, count: 0, min: 0.0, max: 0.0 }
    }

    /// Adds `value` once.
    pub fn add(&mut self, value: f64) {
        self.add_n(value, 1);
    }

    /// Adds `value` `n` times. NaN is ignored.
    pub fn add_n(&mut self, value: f64, n: u64) {
        if n == 0 || value.is_nan() {
            return;
        }
        // `value` is not NaN: the same as `f64::min` and `max`, which are calls in the wasm.
        if self.count == 0 || value <= self.min {
            self.min = value;
        }
        if self.count == 0 || self.max < value {
            self.max = value;
        }
        self.count = self.count.saturating_add(n);
        if value < MIN_POSITIVE {
            self.zeros = self.zeros.saturating_add(n);
        } else {
            self.add_to_bucket(key(value), n);
        }
    }

    fn add_to_bucket(&mut self, key: i32, n: u64) {
        match self.buckets.binary_search_by_key(&key, |&(k, _)| k) {
            Ok(i) => {
                if let Some(bucket) = self.buckets.get_mut(i) {
                    bucket.1 = bucket.1.saturating_add(n);
                }
            }
            Err(i) => {
                self.buckets.insert(i, (key, n));
                // The lowest merged into the next in place, then the rest moved down, as in `Pending::push`:
                // `Vec::remove`'s code and its bounds check were 61 B brotli.
                if let (true, [(_, lowest), (_, next), ..]) = (self.buckets.len() > MAX_BUCKETS, &mut self.buckets[..]) {
                    *next = next.saturating_add(*lowest);
                    self.buckets.copy_within(1.., 0);
                    self.buckets.pop();
                }
            }
        }
    }

    /// Adds every value of `other` (exact: the result is the sketch of both value sets). O(B).
    pub fn merge(&mut self, other: &Sketch) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            (self.min, self.max) = (other.min, other.max);
        } else {
            self.min = self.min.min(other.min);
            self.max = self.max.max(other.max);
        }
        self.count = self.count.saturating_add(other.count);
        self.zeros = self.zeros.saturating_add(other.zeros);
        for &(key, n) in &other.buckets {
            self.add_to_bucket(key, n);
        }
    }

    /// How many values were added.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The largest value added, exactly (`None` when empty).
    pub fn max(&self) -> Option<f64> {
        (self.count > 0).then_some(self.max)
    }

    /// The smallest value added, exactly (`None` when empty).
    pub fn min(&self) -> Option<f64> {
        (self.count > 0).then_some(self.min)
    }

    /// The `q`-quantile (`q` clamped to 0..=1) within 1% relative error; the value of rank
    /// `floor(q × (count − 1))`, as in the DDSketch paper. `None` when empty. O(B).
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        // max/min, not clamp: clamp's panic message would pull float formatting into the wasm build.
        let rank = (q.max(0.0).min(1.0) * (self.count - 1) as f64) as u64;
        if rank < self.zeros {
            return Some(self.min.max(0.0).min(MIN_POSITIVE).min(self.max));
        }
        let mut seen = self.zeros;
        for &(key, n) in &self.buckets {
            seen = seen.saturating_add(n);
            if seen > rank {
                return Some(value(key).max(self.min).min(self.max));
            }
        }
        Some(self.max)
    }

    /// The zero count and the `(key, count)` buckets, in key order: what a beacon carries.
    pub fn buckets(&self) -> (u64, &[(i32, u64)]) {
        (self.zeros, &self.buckets)
    }

    /// Rebuilds a sketch from what [`Sketch::buckets`], [`Sketch::min`] and [`Sketch::max`] gave
    /// (how the collector stores one). `None` when the keys are not strictly increasing, a count
    /// is 0, `min > max`, or there are more than [`MAX_BUCKETS`] buckets. O(B).
    pub fn from_parts(zeros: u64, buckets: Vec<(i32, u64)>, min: f64, max: f64) -> Option<Sketch> {
        let increasing = buckets.windows(2).all(|w| w[0].0 < w[1].0);
        if !increasing || buckets.len() > MAX_BUCKETS || buckets.iter().any(|&(_, n)| n == 0) || min.is_nan() || max.is_nan() {
            return None;
        }
        let count = buckets.iter().try_fold(zeros, |sum, &(_, n)| sum.checked_add(n))?;
        if count > 0 && min > max {
            return None;
        }
        let (min, max) = if count == 0 { (0.0, 0.0) } else { (min, max) };
        Some(Sketch { buckets, zeros, count, min, max })
    }
}

/// The bucket key of `value`: `None` for values the sketch counts as zero (below [`MIN_POSITIVE`]).
pub fn bucket_key(value: f64) -> Option<i32> {
    (value >= MIN_POSITIVE).then(|| key(value))
}

/// The representative value of bucket `key` (within α of every value in it).
pub fn bucket_value(key: i32) -> f64 {
    value(key)
}

fn key(value: f64) -> i32 {
    math::ceil(math::ln(value) / LN_GAMMA) as i32
}

/// The bucket's representative value: within α of every value in the bucket.
fn value(key: i32) -> f64 {
    // γ^key as exp(key · ln γ): libm's exp is a fraction of pow's size in the wasm build.
    2.0 * math::exp(f64::from(key) * LN_GAMMA) / (GAMMA + 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact_quantile(sorted: &[f64], q: f64) -> f64 {
        sorted[(q * (sorted.len() - 1) as f64) as usize]
    }

    #[test]
    fn quantiles_within_one_percent() {
        let mut values: Vec<f64> = (0..5000).map(|i| 0.5 + ((i * 7919) % 5000) as f64 * 1.37).collect();
        let mut sketch = Sketch::new();
        values.iter().for_each(|&v| sketch.add(v));
        values.sort_by(f64::total_cmp);
        for q in [0.0, 0.1, 0.5, 0.9, 0.99, 1.0] {
            let (got, want) = (sketch.quantile(q).unwrap(), exact_quantile(&values, q));
            assert!((got - want).abs() <= want * RELATIVE_ACCURACY, "q={q}: {got} vs {want}");
        }
        assert_eq!(sketch.max(), Some(values[values.len() - 1]));
    }

    #[test]
    fn merge_equals_one_sketch_of_all_values() {
        let (mut a, mut b, mut all) = (Sketch::new(), Sketch::new(), Sketch::new());
        for i in 0..300 {
            let v = (i as f64 * 3.3) % 250.0;
            if i % 3 == 0 { a.add(v) } else { b.add(v) }
            all.add(v);
        }
        a.merge(&b);
        assert_eq!(a.buckets(), all.buckets());
        assert_eq!(a.quantile(0.9), all.quantile(0.9));
    }

    #[test]
    fn ln_gamma_is_exactly_what_libm_computes() {
        assert_eq!(LN_GAMMA.to_bits(), math::ln(GAMMA).to_bits());
    }

    #[test]
    fn rebuilt_from_parts_equals_the_original() {
        let mut s = Sketch::new();
        for v in [0.0, 0.5, 3.0, 3.01, 250.0, 1e6] {
            s.add(v);
        }
        let (zeros, buckets) = s.buckets();
        let rebuilt = Sketch::from_parts(zeros, buckets.to_vec(), s.min().unwrap(), s.max().unwrap()).unwrap();
        assert_eq!(rebuilt, s);
        assert_eq!(Sketch::from_parts(0, vec![], 0.0, 0.0), Some(Sketch::new()));
        assert_eq!(Sketch::from_parts(0, vec![(5, 1), (5, 1)], 1.0, 2.0), None);
        assert_eq!(Sketch::from_parts(0, vec![(5, 0)], 1.0, 2.0), None);
        assert_eq!(Sketch::from_parts(0, vec![(5, 1)], 3.0, 2.0), None);
        assert_eq!(bucket_key(0.0), None);
        let k = bucket_key(120.0).unwrap();
        assert!((bucket_value(k) - 120.0).abs() <= 1.2);
    }

    #[test]
    fn zeros_and_empty() {
        let mut sketch = Sketch::new();
        assert_eq!(sketch.quantile(0.5), None);
        sketch.add_n(0.0, 3);
        sketch.add(10.0);
        assert_eq!(sketch.quantile(0.5), Some(0.0));
        assert_eq!(sketch.quantile(1.0), Some(10.0));
        sketch.add(f64::NAN);
        assert_eq!(sketch.count(), 4);
    }

    #[test]
    fn bucket_count_is_bounded() {
        let mut sketch = Sketch::new();
        let mut v = MIN_POSITIVE;
        while v < 1e300 {
            sketch.add(v);
            v *= 1.03;
        }
        assert!(sketch.buckets().1.len() <= MAX_BUCKETS);
        assert!((sketch.quantile(1.0).unwrap() - sketch.max().unwrap()).abs() < 1e-9);
    }
}
