//! Rollups: per group and time bucket, the mergeable summary of the streams that started in it, so
//! a summary over 30 days merges a few thousand rollups instead of reading millions of records.
//!
//! A [`Rollup`] holds, per [`Metric`], the meter's own DDSketch (1% relative error, exact merge) and
//! the exact sum; exact counts (streams, output tokens, stall knowledge, length bands); the joint
//! (TTFT, TPOT) sketch-bucket counts that answer goodput for any SLO; and [`extras`]: the stops
//! (streams that reached their first token, those the user stopped or left, and the stopped ones'
//! TTFT and TPOT buckets) and per length band TPOT's buckets and the stall counts. Rollups are kept at
//! three [`Grain`]s (minute, hour, day) per [`RollupKey`]; [`plan`] says which to read for a window.
//!
//! Every figure built from rollups is exact except quantiles (within 1%, the sketch's guarantee) and
//! goodput and band shares (a stream is judged by its sketch bucket's value, so only values within
//! 1% of a threshold can be misjudged).

mod buckets;
mod codec;
pub mod extras;
mod grain;
pub mod plan;
mod row;
mod slo;

use crate::dims::Metric;
use llm_ux_meter::metrics::sketch::Sketch;
use std::cmp::Ordering;
use std::collections::BTreeMap;

pub use buckets::{sketch_count_in, BucketCounts};
pub use codec::DecodeError;
pub use grain::{Grain, RollupKey};
pub use row::{bunched, length_band, stops, Row, BUNCH_MIN_EVENTS};
pub use slo::{key_bound, sketch_key, Slo, NULL_KEY, ZERO_KEY};

/// One metric's values: the sketch (quantiles within 1%) and the exact sum (for the mean).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Distribution {
    pub sketch: Sketch,
    pub sum: f64,
}

impl Distribution {
    fn add(&mut self, value: f64) {
        self.sketch.add(value);
        self.sum += value;
    }

    fn merge(&mut self, other: &Distribution) {
        self.sketch.merge(&other.sketch);
        self.sum += other.sum;
    }

    pub fn count(&self) -> u64 {
        self.sketch.count()
    }

    pub fn mean(&self) -> Option<f64> {
        (self.count() > 0).then(|| self.sum / self.count() as f64)
    }
}

/// The mergeable summary of a set of streams. Adding a stream or merging is O(B) (B sketch buckets).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rollup {
    pub count: u64,
    pub output_tokens: u64,
    /// Streams whose stall count is known, and those with at least one stall.
    pub stall_known: u64,
    pub stalled: u64,
    /// Streams with 1-50, 51-500 and over 500 output tokens.
    pub bands: [u64; 3],
    /// Indexed by [`Metric::index`].
    pub metrics: [Distribution; 5],
    /// Stream counts by (TTFT, TPOT) sketch bucket key ([`NULL_KEY`], [`ZERO_KEY`] apart), sorted by
    /// key, each key once: merged in one linear pass (summaries merge thousands of rollups).
    pub joint: Vec<((i32, i32), u64)>,
    /// Streams that reached their first token, and those of them that the user stopped or left.
    pub reached: u64,
    pub stopped: u64,
    /// The stopped streams' TTFT and TPOT: against the metrics' own sketches, the stop rate of any
    /// TTFT or TPOT band.
    pub stopped_ttft: BucketCounts,
    pub stopped_tpot: BucketCounts,
    /// Per length band (as `bands`): TPOT, the streams whose stall count is known, those stalled.
    pub band_tpot: [BucketCounts; 3],
    pub band_stall_known: [u64; 3],
    pub band_stalled: [u64; 3],
    /// Streams whose bunching is known ([`bunched`]), and those whose output arrived in bunches.
    pub bunch_known: u64,
    pub bunched: u64,
}

impl Rollup {
    pub fn add(&mut self, row: &Row) {
        self.count += 1;
        self.output_tokens = self.output_tokens.saturating_add(row.output_tokens.max(0) as u64);
        if let Some(stalls) = row.stall_count {
            self.stall_known += 1;
            self.stalled += u64::from(stalls > 0);
        }
        if let Some(band) = length_band(row.output_tokens) {
            self.bands[band] += 1;
        }
        for (extra, key) in extras::of(row) {
            self.count_extra(extra, key, 1);
        }
        for metric in Metric::ALL {
            if let Some(value) = row.metric(metric) {
                self.metrics[metric.index()].add(value);
            }
        }
        let key = (sketch_key(row.ttft_ms), sketch_key(row.tpot_ms));
        match self.joint.binary_search_by_key(&key, |&(k, _)| k) {
            Ok(i) => self.joint[i].1 += 1,
            Err(i) => self.joint.insert(i, (key, 1)),
        }
    }

    pub fn merge(&mut self, other: &Rollup) {
        self.merge_without_joint(other);
        self.joint = merge_sorted(&self.joint, &other.joint);
    }

    /// [`Rollup::merge`] but for the joint counts, which only goodput reads, and which are the costly
    /// part to merge: queries sum [`Rollup::good`] per piece instead ([`crate::query::tally`]). Leaves
    /// `joint` as it was.
    pub fn merge_without_joint(&mut self, other: &Rollup) {
        self.count += other.count;
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.stall_known += other.stall_known;
        self.stalled += other.stalled;
        for (band, n) in self.bands.iter_mut().zip(other.bands) {
            *band += n;
        }
        for (mine, theirs) in self.metrics.iter_mut().zip(&other.metrics) {
            mine.merge(theirs);
        }
        self.reached += other.reached;
        self.stopped += other.stopped;
        self.stopped_ttft.merge(&other.stopped_ttft);
        self.stopped_tpot.merge(&other.stopped_tpot);
        for band in 0..3 {
            self.band_tpot[band].merge(&other.band_tpot[band]);
            self.band_stall_known[band] += other.band_stall_known[band];
            self.band_stalled[band] += other.band_stalled[band];
        }
        self.bunch_known += other.bunch_known;
        self.bunched += other.bunched;
    }

    /// Adds `n` streams' `extra` of sketch bucket `key` (0 for a plain count). O(B).
    pub fn count_extra(&mut self, extra: extras::Extra, key: i32, n: u64) {
        use extras::Extra;
        match extra {
            Extra::Reached => self.reached += n,
            Extra::Stopped => self.stopped += n,
            Extra::StoppedTtft => self.stopped_ttft.add(key, n),
            Extra::StoppedTpot => self.stopped_tpot.add(key, n),
            Extra::BandTpot(band) => self.band_tpot[band].add(key, n),
            Extra::BandStallKnown(band) => self.band_stall_known[band] += n,
            Extra::BandStalled(band) => self.band_stalled[band] += n,
            Extra::BunchKnown => self.bunch_known += n,
            Extra::Bunched => self.bunched += n,
        }
    }

    pub fn metric(&self, metric: Metric) -> &Distribution {
        &self.metrics[metric.index()]
    }

    /// Share of streams with a stall among those whose stalls are known; `None` when none is.
    pub fn stall_rate(&self) -> Option<f64> {
        (self.stall_known > 0).then(|| self.stalled as f64 / self.stall_known as f64)
    }

    /// Share of the streams that reached their first token which the user stopped or left; `None`
    /// when none reached it.
    pub fn stop_rate(&self) -> Option<f64> {
        (self.reached > 0).then(|| self.stopped as f64 / self.reached as f64)
    }

    /// Streams meeting every threshold of `slo` (a null value meets none). O(joint entries).
    pub fn good(&self, slo: &Slo) -> u64 {
        slo.met_in(&self.joint)
    }

    /// Share of streams meeting `slo`; `None` when no SLO is given or there is no stream.
    pub fn goodput(&self, slo: &Slo) -> Option<f64> {
        (!slo.is_empty() && self.count > 0).then(|| self.good(slo) as f64 / self.count as f64)
    }

    /// The store's bytes for this rollup (see [`codec`]).
    pub fn encode(&self) -> Vec<u8> {
        codec::encode(self)
    }

    pub fn decode(bytes: &[u8]) -> Result<Rollup, DecodeError> {
        codec::decode(bytes)
    }
}

/// The union of two key-sorted count lists, counts of equal keys added. O(a + b).
fn merge_sorted<K: Ord + Copy>(a: &[(K, u64)], b: &[(K, u64)]) -> Vec<(K, u64)> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            Ordering::Equal => {
                out.push((a[i].0, a[i].1 + b[j].1));
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// The rollups, at every grain, of `rows` (what a batch adds to the stored ones).
pub fn rollups_of<'a>(rows: impl IntoIterator<Item = &'a Row>) -> BTreeMap<RollupKey, Rollup> {
    let mut out: BTreeMap<RollupKey, Rollup> = BTreeMap::new();
    for row in rows {
        for grain in Grain::ALL {
            let key = RollupKey { grain, bucket: grain.bucket_of(row.started_at), dims: row.dims.clone() };
            out.entry(key).or_default().add(row);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(ttft: Option<f64>, tpot: Option<f64>, tokens: i64, stalls: Option<i64>) -> Row {
        Row { started_at: 90_000.0, ttft_ms: ttft, tpot_ms: tpot, output_tokens: tokens, stall_count: stalls, ..Row::default() }
    }

    #[test]
    fn merge_equals_adding_everything_to_one() {
        let rows: Vec<Row> = (0..200).map(|i| row(Some(100.0 + i as f64 * 7.0), (i % 5 != 0).then(|| 5.0 + i as f64 / 3.0), i, (i % 3 != 0).then_some(i % 2))).collect();
        let mut whole = Rollup::default();
        rows.iter().for_each(|r| whole.add(r));
        let (mut a, mut b) = (Rollup::default(), Rollup::default());
        rows[..77].iter().for_each(|r| a.add(r));
        rows[77..].iter().for_each(|r| b.add(r));
        a.merge(&b);
        // Sums are added in another order: compare them apart, within rounding.
        for m in Metric::ALL {
            assert!((a.metric(m).sum - whole.metric(m).sum).abs() < 1e-6);
            a.metrics[m.index()].sum = whole.metrics[m.index()].sum;
        }
        assert_eq!(a, whole);
        assert_eq!(whole.count, 200);
        assert_eq!(whole.bands, [50, 149, 0]);
    }

    #[test]
    fn merge_without_joint_is_merge_but_for_the_joint_counts() {
        let rows: Vec<Row> = (0..60).map(|i| row(Some(50.0 + i as f64 * 11.0), Some(8.0 + i as f64), i * 20, Some(i % 2))).collect();
        let (mut a, mut b) = (Rollup::default(), Rollup::default());
        rows[..25].iter().for_each(|r| a.add(r));
        rows[25..].iter().for_each(|r| b.add(r));
        let mut full = a.clone();
        full.merge(&b);
        let joint_before = a.joint.clone();
        a.merge_without_joint(&b);
        assert_eq!(a.joint, joint_before);
        a.joint = full.joint.clone();
        assert_eq!(a, full);
    }

    #[test]
    fn goodput_counts_streams_meeting_every_threshold() {
        let mut r = Rollup::default();
        r.add(&row(Some(500.0), Some(20.0), 10, None));
        r.add(&row(Some(1500.0), Some(20.0), 10, None));
        r.add(&row(Some(500.0), Some(80.0), 10, None));
        r.add(&row(None, Some(20.0), 10, None));
        r.add(&row(Some(0.0), None, 10, None));
        let slo = |ttft, tpot| Slo { ttft_ms: ttft, tpot_ms: tpot };
        assert_eq!(r.good(&slo(Some(1000.0), None)), 3);
        assert_eq!(r.good(&slo(None, Some(50.0))), 3);
        assert_eq!(r.good(&slo(Some(1000.0), Some(50.0))), 1);
        assert_eq!(r.goodput(&slo(None, None)), None);
        assert_eq!(r.goodput(&slo(Some(1000.0), Some(50.0))), Some(0.2));
    }

    #[test]
    fn rollups_of_a_row_cover_every_grain() {
        let rows = [row(Some(1.0), None, 1, None)];
        let keys: Vec<(Grain, i64)> = rollups_of(&rows).keys().map(|k| (k.grain, k.bucket)).collect();
        assert_eq!(keys, vec![(Grain::Minute, 60_000), (Grain::Hour, 0), (Grain::Day, 0)]);
        assert_eq!(Grain::Minute.bucket_of(-1.0), -60_000);
        assert_eq!(Grain::Day.bucket_of(4_102_444_799_999.5), 4_102_358_400_000);
        assert_eq!(Grain::Minute.bucket_of(1e300), i64::MAX);
    }

    #[test]
    fn key_bound_splits_the_keys_as_good_reads_them() {
        use llm_ux_meter::metrics::sketch::MIN_POSITIVE;
        let meets = |key: i32, max: f64| Rollup { count: 1, joint: vec![((key, ZERO_KEY), 1)], ..Rollup::default() }.good(&Slo { ttft_ms: Some(max), tpot_ms: None }) == 1;
        for max in [0.0, 1e-12, 1e-6, 0.5, 1.0, 49.999, 50.0, 1000.0, 1e9, f64::MAX, f64::INFINITY, f64::NAN] {
            let bound = key_bound(max);
            let near = if bound == ZERO_KEY { 0 } else { bound };
            // Every key a value can have lies between those of the smallest and largest values.
            let extremes = [sketch_key(Some(MIN_POSITIVE)), sketch_key(Some(f64::MAX))];
            for key in (near.saturating_sub(3)..=near.saturating_add(3)).filter(|k| (extremes[0]..=extremes[1]).contains(k)).chain(extremes).chain([ZERO_KEY, NULL_KEY]) {
                assert_eq!(meets(key, max), key != NULL_KEY && key <= bound, "max {max}, key {key}, bound {bound}");
            }
        }
        assert!(key_bound(1000.0) > key_bound(50.0), "a real split");
    }

    #[test]
    fn a_reduced_joint_counts_the_same_good_streams() {
        let rows: Vec<Row> = (0..200).map(|i| row(Some(100.0 + i as f64 * 7.0), (i % 5 != 0).then(|| 5.0 + i as f64 / 3.0), i, None)).collect();
        let mut r = Rollup::default();
        for row in &rows {
            r.add(row);
        }
        for slo in [Slo { ttft_ms: Some(800.0), tpot_ms: Some(40.0) }, Slo { ttft_ms: Some(800.0), tpot_ms: None }, Slo { ttft_ms: None, tpot_ms: Some(30.0) }] {
            let reduced = Rollup { joint: slo.reduce(&r.joint), ..r.clone() };
            assert!(reduced.joint.len() <= 2 && reduced.joint.windows(2).all(|w| w[0].0 < w[1].0));
            assert_eq!(reduced.good(&slo), r.good(&slo), "{slo:?}");
            assert!(r.good(&slo) > 0 && r.good(&slo) < r.count, "{slo:?}: some meet it, some do not");
            assert_eq!(reduced.joint.iter().map(|&(_, n)| n).sum::<u64>(), r.count);
        }
    }
}
