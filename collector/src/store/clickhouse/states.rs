//! Rollups as ClickHouse aggregate states: the SQL that folds records into them (the materialized
//! views of [`super::sql::schema`]) and the Rust that reads the merged states back as [`Rollup`]s.
//!
//! A rollup is six states, each one ClickHouse merges on its own (in background merges and in
//! `GROUP BY`), so any number of collectors insert records and none reads or rewrites a rollup:
//! - `counts`: `sumForEach` of [streams, output tokens, stall known, stalled, 3 length bands];
//! - `sums`, `mins`, `maxs`: `sumForEach`/`minForEach`/`maxForEach` of the five metrics (a null
//!   adds 0, +inf and −inf);
//! - `sketches`: `sumMap` of DDSketch bucket counts, keyed `metric index << 32 | bucket key`;
//! - `joint`: `sumMap` of stream counts keyed `TTFT key << 32 | TPOT key` (goodput).
//!
//! The bucket keys come from the collector ([`sketch_keys`], [`joint_key`]), written with each
//! record, not from SQL: they are the meter's own `bucket_key`, so ClickHouse's `log` can never put
//! a value near a bucket boundary into the neighbouring bucket, and quantiles keep the sketch's 1%
//! bound. Everything else is SQL over the record's columns ([`COUNTS`] and its siblings), used both
//! as states by the views and as plain aggregates over the duplicate copies a read subtracts.

use super::rowbinary::{ReadError, Reader};
use crate::dims::Metric;
use crate::rollup::{sketch_key, Distribution, Grain, Rollup, Row, ZERO_KEY};
use crate::store::StoreError;
use llm_ux_meter::metrics::sketch::{Sketch, MAX_BUCKETS};
use std::collections::BTreeMap;
use std::io::BufRead;

/// Per stream: [1, output tokens, stall count known, stalled, 1-50 tokens, 51-500, over 500]
/// (what [`Rollup::add`] counts).
const COUNTS: &str = "[toUInt64(1), toUInt64(greatest(output_tokens, 0)), toUInt64(isNotNull(stall_count)), toUInt64(ifNull(stall_count, 0) > 0), \
     toUInt64(output_tokens >= 1 AND output_tokens <= 50), toUInt64(output_tokens >= 51 AND output_tokens <= 500), toUInt64(output_tokens > 500)]";

/// The metrics' columns in [`Metric::ALL`] order, each null replaced by `fill`.
fn metrics(fill: &str) -> String {
    let values: Vec<String> = Metric::ALL.iter().map(|m| format!("ifNull({}, {fill})", m.column())).collect();
    format!("[{}]", values.join(", "))
}

/// The aggregate-state columns of `rollup_states`, for its `CREATE TABLE`.
pub const STATE_COLUMNS: &str = "counts AggregateFunction(sumForEach, Array(UInt64)), sums AggregateFunction(sumForEach, Array(Float64)), \
     mins AggregateFunction(minForEach, Array(Float64)), maxs AggregateFunction(maxForEach, Array(Float64)), \
     sketches AggregateFunction(sumMap, Array(Int64), Array(UInt64)), joint AggregateFunction(sumMap, Array(Int64), Array(UInt64))";

/// The six aggregates of a rollup over record rows, in [`STATE_COLUMNS`] order, each with the
/// combinator `suffix` (`State` for the views, none for the duplicate copies a read subtracts).
fn aggregates(suffix: &str) -> [String; 6] {
    [
        format!("sumForEach{suffix}({COUNTS})"),
        format!("sumForEach{suffix}({})", metrics("0.")),
        format!("minForEach{suffix}({})", metrics("inf")),
        format!("maxForEach{suffix}({})", metrics("-inf")),
        format!("sumMap{suffix}(sketch_keys, arrayMap(k -> toUInt64(1), sketch_keys))"),
        format!("sumMap{suffix}([joint_key], [toUInt64(1)])"),
    ]
}

/// The state expressions a view selects from `records` rows, named as [`STATE_COLUMNS`].
pub fn states() -> String {
    let names = ["counts", "sums", "mins", "maxs", "sketches", "joint"];
    aggregates("State").iter().zip(names).map(|(state, name)| format!("{state} AS {name}")).collect::<Vec<_>>().join(", ")
}

/// The merged states of the rows grouped, in [`Parts::read`]'s order.
pub const MERGED: &str = "sumForEachMerge(counts), sumForEachMerge(sums), minForEachMerge(mins), maxForEachMerge(maxs), sumMapMerge(sketches), sumMapMerge(joint)";

/// The same figures as [`MERGED`] computed directly over record rows (the duplicate copies).
pub fn plain() -> String {
    aggregates("").join(", ")
}

/// The start of `grain`'s bucket holding `started_at`: [`Grain::bucket_of`]'s arithmetic, in SQL.
pub fn bucket(grain: Grain) -> String {
    bucket_of(&grain.ms().to_string())
}

/// The start of the bucket of `ms` (an SQL expression) holding `started_at`.
pub fn bucket_of(ms: &str) -> String {
    format!("toInt64(floor(started_at / {ms}) * {ms})")
}

/// A record's sketch keys: `metric index << 32 | key` per metric it has (the key of a value the
/// sketch counts as zero is [`ZERO_KEY`]).
pub fn sketch_keys(row: &Row) -> Vec<i64> {
    Metric::ALL.iter().filter_map(|&m| row.metric(m).map(|v| pack(m.index() as i32, sketch_key(Some(v))))).collect()
}

/// A record's joint key: `TTFT key << 32 | TPOT key` ([`NULL_KEY`](crate::rollup::NULL_KEY) for a null).
pub fn joint_key(row: &Row) -> i64 {
    pack(sketch_key(row.ttft_ms), sketch_key(row.tpot_ms))
}

fn pack(high: i32, low: i32) -> i64 {
    (i64::from(high) << 32) | i64::from(low as u32)
}

fn unpack(key: i64) -> (i32, i32) {
    ((key >> 32) as i32, key as u32 as i32)
}

/// A rollup as the six merged states: subtractable (the duplicate copies), then made a [`Rollup`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parts {
    counts: Vec<u64>,
    sums: Vec<f64>,
    mins: Vec<f64>,
    maxs: Vec<f64>,
    sketches: BTreeMap<i64, u64>,
    joint: BTreeMap<i64, u64>,
}

impl Parts {
    /// Reads the columns of [`MERGED`] (or [`plain`]). O(size).
    pub fn read<R: BufRead>(r: &mut Reader<R>) -> Result<Parts, ReadError> {
        let counts = r.vec(Reader::u64)?;
        let sums = r.vec(Reader::f64)?;
        let mins = r.vec(Reader::f64)?;
        let maxs = r.vec(Reader::f64)?;
        let sketches = read_map(r)?;
        let joint = read_map(r)?;
        Ok(Parts { counts, sums, mins, maxs, sketches, joint })
    }

    /// Takes away `other`'s streams (a subset of these: the duplicate copies among them). Minima
    /// and maxima stay: a copy has its original's values.
    pub fn subtract(&mut self, other: &Parts) {
        for (mine, theirs) in self.counts.iter_mut().zip(&other.counts) {
            *mine = mine.saturating_sub(*theirs);
        }
        for (mine, theirs) in self.sums.iter_mut().zip(&other.sums) {
            *mine -= theirs;
        }
        for (map, theirs) in [(&mut self.sketches, &other.sketches), (&mut self.joint, &other.joint)] {
            for (key, n) in theirs {
                if let Some(count) = map.get_mut(key) {
                    *count = count.saturating_sub(*n);
                }
            }
            map.retain(|_, n| *n > 0);
        }
    }

    /// The rollup these states hold. Fails when ClickHouse answered arrays of the wrong length.
    pub fn into_rollup(self) -> Result<Rollup, StoreError> {
        let malformed = || StoreError("clickhouse: a rollup's states have the wrong shape".into());
        let [count, output_tokens, stall_known, stalled, b1, b2, b3] = self.counts[..] else { return Err(malformed()) };
        if [&self.sums, &self.mins, &self.maxs].iter().any(|v| v.len() != Metric::ALL.len()) {
            return Err(malformed());
        }
        let mut buckets: Vec<Vec<(i32, u64)>> = vec![Vec::new(); Metric::ALL.len()];
        let mut zeros = vec![0u64; Metric::ALL.len()];
        for (key, n) in self.sketches {
            let (metric, key) = unpack(key);
            let metric = usize::try_from(metric).ok().filter(|&m| m < Metric::ALL.len()).ok_or_else(malformed)?;
            if key == ZERO_KEY {
                zeros[metric] += n;
            } else {
                buckets[metric].push((key, n));
            }
        }
        let mut metrics: [Distribution; 5] = Default::default();
        for (i, distribution) in metrics.iter_mut().enumerate() {
            let mut keys = std::mem::take(&mut buckets[i]);
            keys.sort_unstable();
            // As the sketch does past its bound: the lowest buckets fold into the next.
            while keys.len() > MAX_BUCKETS {
                let (_, lowest) = keys.remove(0);
                keys[0].1 += lowest;
            }
            let sketch = Sketch::from_parts(zeros[i], keys, self.mins[i], self.maxs[i]).ok_or_else(malformed)?;
            // A metric whose every value was a subtracted copy: no rounding residue left as its sum.
            let sum = if sketch.count() == 0 { 0.0 } else { self.sums[i] };
            *distribution = Distribution { sketch, sum };
        }
        let mut joint: Vec<((i32, i32), u64)> = self.joint.into_iter().map(|(key, n)| (unpack(key), n)).collect();
        joint.sort_unstable();
        Ok(Rollup { count, output_tokens, stall_known, stalled, bands: [b1, b2, b3], metrics, joint })
    }
}

fn read_map<R: BufRead>(r: &mut Reader<R>) -> Result<BTreeMap<i64, u64>, ReadError> {
    let keys = r.vec(Reader::i64)?;
    let counts = r.vec(Reader::u64)?;
    if keys.len() != counts.len() {
        return Err(ReadError::Malformed);
    }
    Ok(keys.into_iter().zip(counts).collect())
}
