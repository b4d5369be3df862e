//! [`BucketCounts`]: stream counts by sketch bucket, for the distributions a rollup keeps beyond its
//! metrics' own (a length band's TPOT, the stopped streams' TTFT and TPOT), which need no sum and no
//! extremes: ClickHouse keeps them as plain bucket rows, so both stores hold exactly the same counts.

use super::{merge_sorted, ZERO_KEY};
use llm_ux_meter::metrics::sketch::{bucket_value, Sketch};

/// Counts by sketch bucket key ([`ZERO_KEY`] for values the sketch counts as zero), sorted by key,
/// each key once. Adding is O(log B + B) (an insert), merging O(B₁ + B₂).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BucketCounts(Vec<(i32, u64)>);

impl BucketCounts {
    /// Adds `n` values of bucket `key`.
    pub fn add(&mut self, key: i32, n: u64) {
        match self.0.binary_search_by_key(&key, |&(k, _)| k) {
            Ok(i) => self.0[i].1 += n,
            Err(i) => self.0.insert(i, (key, n)),
        }
    }

    pub fn merge(&mut self, other: &BucketCounts) {
        if !other.0.is_empty() {
            self.0 = merge_sorted(&self.0, &other.0);
        }
    }

    /// The counts of `entries`; `None` unless their keys strictly increase and no count is 0.
    pub fn from_entries(entries: Vec<(i32, u64)>) -> Option<BucketCounts> {
        let valid = entries.windows(2).all(|w| w[0].0 < w[1].0) && entries.iter().all(|&(_, n)| n > 0);
        valid.then_some(BucketCounts(entries))
    }

    /// The `(key, count)` pairs in key order.
    pub fn entries(&self) -> &[(i32, u64)] {
        &self.0
    }

    pub fn count(&self) -> u64 {
        self.0.iter().map(|&(_, n)| n).sum()
    }

    /// The value of rank `floor(q × (n − 1))` as its bucket's value (within 1%, 0 in the zero
    /// bucket); `None` when empty. O(B).
    pub fn quantile(&self, q: f64) -> Option<f64> {
        let rank = (q.clamp(0.0, 1.0) * self.count().checked_sub(1)? as f64) as u64;
        let mut seen = 0;
        let &(key, _) = self.0.iter().find(|&&(_, n)| {
            seen += n;
            seen > rank
        })?;
        Some(value_of(key))
    }

    /// The values counted in `[from, to)` ms, each judged by its bucket's value. O(B).
    pub fn count_in(&self, from: f64, to: f64) -> u64 {
        count_in(self.0.iter().copied(), from, to)
    }
}

/// The values of `sketch` in `[from, to)` ms, each judged by its bucket's value, as
/// [`BucketCounts::count_in`] judges them. O(B).
pub fn sketch_count_in(sketch: &Sketch, from: f64, to: f64) -> u64 {
    let (zeros, buckets) = sketch.buckets();
    count_in(std::iter::once((ZERO_KEY, zeros)).chain(buckets.iter().copied()), from, to)
}

fn count_in(entries: impl Iterator<Item = (i32, u64)>, from: f64, to: f64) -> u64 {
    entries
        .filter(|&(key, _)| (from..to).contains(&value_of(key)))
        .map(|(_, n)| n)
        .sum()
}

fn value_of(key: i32) -> f64 {
    if key == ZERO_KEY {
        0.0
    } else {
        bucket_value(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rollup::sketch_key;

    #[test]
    fn quantiles_and_bands_judge_by_bucket_value() {
        let values = [0.0, 12.0, 25.0, 25.0, 40.0, 90.0, 300.0];
        let mut counts = BucketCounts::default();
        let mut sketch = Sketch::new();
        for v in values {
            counts.add(sketch_key(Some(v)), 1);
            sketch.add(v);
        }
        assert_eq!(counts.count(), 7);
        assert_eq!(counts.quantile(0.0), Some(0.0));
        let median = counts.quantile(0.5).unwrap();
        assert!((median - 25.0).abs() <= 0.25, "{median}");
        assert!((counts.quantile(1.0).unwrap() - 300.0).abs() <= 3.0);
        assert_eq!(counts.count_in(0.0, 30.0), 4);
        assert_eq!(counts.count_in(30.0, f64::INFINITY), 3);
        assert_eq!(sketch_count_in(&sketch, 0.0, 30.0), 4);
        assert_eq!(BucketCounts::default().quantile(0.5), None);
    }

    #[test]
    fn merge_is_adding_everything_to_one() {
        let (mut a, mut b, mut all) = (BucketCounts::default(), BucketCounts::default(), BucketCounts::default());
        for i in 0..200 {
            let key = sketch_key(Some((i * 37 % 500) as f64));
            if i % 3 == 0 { a.add(key, 1) } else { b.add(key, 1) }
            all.add(key, 1);
        }
        a.merge(&b);
        assert_eq!(a, all);
    }
}
