//! A window's merged figures for one group: the merged rollup, less its joint (TTFT, TPOT) counts,
//! plus how many streams met the query's SLO.
//!
//! Goodput is additive, so each piece's good streams are counted where it is read
//! ([`Rollup::good`], O(its joint entries), no allocation) instead of merging joint counts
//! ([`Rollup::merge`] builds a new list per piece: most of a summary's CPU). The result is the same
//! count, bucket for bucket.

use crate::rollup::{Rollup, Slo};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    /// Every figure but `joint`, which stays empty.
    pub rollup: Rollup,
    /// Streams meeting the SLO given to [`Tally::add`] (0 when it is empty).
    pub good: u64,
}

impl Tally {
    /// Adds one piece of the window. O(sketch buckets + joint entries when `slo` is set).
    pub fn add(&mut self, piece: &Rollup, slo: &Slo) {
        self.rollup.merge_without_joint(piece);
        if !slo.is_empty() {
            self.good += piece.good(slo);
        }
    }

    /// Share of streams meeting `slo` (the SLO every [`Tally::add`] was given); `None` when no SLO is
    /// given or there is no stream.
    pub fn goodput(&self, slo: &Slo) -> Option<f64> {
        (!slo.is_empty() && self.rollup.count > 0).then(|| self.good as f64 / self.rollup.count as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rollup::Row;

    #[test]
    fn counts_the_same_good_streams_as_merging_joint_counts() {
        let rows: Vec<Row> = (0..300)
            .map(|i| Row {
                started_at: 0.0,
                ttft_ms: (i % 7 != 0).then(|| 100.0 + (i * 37 % 1500) as f64),
                tpot_ms: (i % 11 != 0).then(|| 5.0 + (i * 13 % 90) as f64),
                output_tokens: i,
                ..Row::default()
            })
            .collect();
        let pieces: Vec<Rollup> = rows
            .chunks(40)
            .map(|chunk| {
                let mut r = Rollup::default();
                chunk.iter().for_each(|row| r.add(row));
                r
            })
            .collect();
        for slo in [
            Slo { ttft_ms: Some(800.0), tpot_ms: Some(40.0) },
            Slo { ttft_ms: Some(800.0), tpot_ms: None },
            Slo { ttft_ms: None, tpot_ms: Some(30.0) },
            Slo::default(),
        ] {
            let (mut merged, mut tally) = (Rollup::default(), Tally::default());
            for piece in &pieces {
                merged.merge(piece);
                tally.add(piece, &slo);
            }
            assert_eq!(tally.goodput(&slo), merged.goodput(&slo), "{slo:?}");
            if !slo.is_empty() {
                assert!(tally.good > 0 && tally.good < merged.count, "{slo:?}: a threshold inside the data");
            }
            assert!(tally.rollup.joint.is_empty());
            merged.joint.clear();
            assert_eq!(tally.rollup, merged);
        }
    }
}
