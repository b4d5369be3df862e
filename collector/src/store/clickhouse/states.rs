//! Rollups in ClickHouse: the SQL that folds records into them (the materialized views of
//! [`super::sql::schema`]) and the Rust that reads them back as [`Rollup`]s.
//!
//! A rollup lives in two tables, each merged by ClickHouse on its own (in background merges and in
//! `GROUP BY`), so any number of collectors insert records and none reads or rewrites a rollup:
//! - `rollup_states` (`AggregatingMergeTree`), one row per grain, bucket and dimensions, with a
//!   `sum` state per count (streams, output tokens, stall known, stalled, 3 length bands) and `sum`,
//!   `min` and `max` states per metric (a null adds 0, +inf and −inf);
//! - `sketch_buckets` (`SummingMergeTree`), one row per grain, bucket, dimensions and bucket key
//!   with its count `n`: the DDSketch bucket counts and the [`Extra`]s' counts (`joint` 0, key
//!   `metric or extra index << 32 | bucket key`) and the joint TTFT×TPOT stream counts of goodput
//!   (`joint` 1, key `TTFT key << 32 | TPOT key`).
//!
//! The bucket counts are rows, not `sumMap` states in `rollup_states`: ClickHouse sums plain
//! columns in vectorized code, where 18.16 merges `sumMap` states a key at a time (a 30-day summary
//! over a million records spent 1.4 s there). Their rows name the dimensions by [`dims_key`], a
//! 64-bit hash, because grouping by five nullable strings per bucket count cost twice as much.
//!
//! The bucket keys come from the collector ([`sketch_keys`], [`joint_key`]), written with each
//! record, not from SQL: they are the meter's own `bucket_key`, so ClickHouse's `log` can never put
//! a value near a bucket boundary into the neighbouring bucket, and quantiles keep the sketch's 1%
//! bound. Everything else is SQL over the record's columns ([`COUNTS`], [`EXTREMES`]), used both
//! as states by the views and as plain aggregates over the duplicate copies a read subtracts.

use super::rowbinary::{ReadError, Reader};
use crate::dims::{Dim, Metric};
use crate::rollup::extras::{self, Extra};
use crate::rollup::{key_bound, sketch_key, Distribution, Grain, Rollup, Row, Slo, NULL_KEY, ZERO_KEY};
use crate::store::{JointNeed, StoreError};
use llm_ux_meter::metrics::sketch::{Sketch, MAX_BUCKETS};
use std::collections::BTreeMap;
use std::io::BufRead;

/// What [`Rollup::add`] counts per stream, as `rollup_states` columns `n_NAME`: (NAME, expression).
const COUNTS: [(&str, &str); 7] = [
    ("streams", "1"),
    ("output_tokens", "greatest(output_tokens, 0)"),
    ("stall_known", "isNotNull(stall_count)"),
    ("stalled", "ifNull(stall_count, 0) > 0"),
    ("tokens_1_50", "output_tokens >= 1 AND output_tokens <= 50"),
    ("tokens_51_500", "output_tokens >= 51 AND output_tokens <= 500"),
    ("tokens_over_500", "output_tokens > 500"),
];

/// Per metric, `rollup_states` columns `FUNCTION_METRIC` of its values, a null counting as the fill:
/// (FUNCTION, fill).
const EXTREMES: [(&str, &str); 3] = [("sum", "0."), ("min", "inf"), ("max", "-inf")];

/// The aggregates of `rollup_states`, in [`Parts::read_states`]'s order: (column, function,
/// argument type, argument over a `records` row). One plain state each: ClickHouse 18.16 merged
/// `sumForEach` array states about 20 µs a row, these in about a microsecond.
fn aggregates() -> Vec<(String, &'static str, &'static str, String)> {
    let mut out: Vec<_> = COUNTS.iter().map(|(name, count)| (format!("n_{name}"), "sum", "UInt64", format!("toUInt64({count})"))).collect();
    for m in Metric::ALL {
        out.extend(EXTREMES.iter().map(|(function, fill)| (format!("{function}_{}", m.column()), *function, "Float64", format!("ifNull({}, {fill})", m.column()))));
    }
    out
}

/// The aggregate-state columns of `rollup_states`, for its `CREATE TABLE`.
pub fn state_columns() -> String {
    aggregates().iter().map(|(column, function, ty, _)| format!("{column} AggregateFunction({function}, {ty})")).collect::<Vec<_>>().join(", ")
}

/// The state expressions the view selects from `records` rows, named as [`state_columns`].
pub fn states() -> String {
    aggregates().iter().map(|(column, function, _, argument)| format!("{function}State({argument}) AS {column}")).collect::<Vec<_>>().join(", ")
}

/// The merged states of the `rollup_states` rows grouped, in [`Parts::read_states`]'s order.
pub fn merged() -> String {
    aggregates().iter().map(|(column, function, _, _)| format!("{function}Merge({column})")).collect::<Vec<_>>().join(", ")
}

/// The merged stream count of the `rollup_states` rows grouped.
pub const MERGED_STREAMS: &str = "sumMerge(n_streams)";

/// A whole rollup computed directly over record rows (the duplicate copies), in [`Parts::read`]'s
/// order: [`merged`]'s figures, then the bucket counts as maps.
pub fn plain() -> String {
    let figures: Vec<String> = aggregates().iter().map(|(_, function, _, argument)| format!("{function}({argument})")).collect();
    format!("{}, sumMap(sketch_keys, arrayMap(k -> toUInt64(1), sketch_keys)), sumMap([joint_key], [toUInt64(1)])", figures.join(", "))
}

/// The dimensions' key in `rollup_states` and `sketch_buckets`: SipHash-2-4 of the values, each
/// length-prefixed (a null as `-`), so no two sets of values share the input. ClickHouse's
/// `sipHash64` of one string gives the same number in 18.16 and 26. Two sets of dimensions that
/// share a key would share bucket counts: between ones a reader chose, about one chance in 2^64
/// (SipHash with a known key still takes about 2^64 tries to match given dimensions).
pub fn dims_key() -> String {
    let parts: Vec<String> = Dim::ALL.iter().map(|d| format!("if(isNull({0}), '-', concat(toString(length(ifNull({0}, ''))), ':', ifNull({0}, '')))", d.column())).collect();
    format!("sipHash64(concat({}))", parts.join(", "))
}

/// The start of `grain`'s bucket holding `started_at`: [`Grain::bucket_of`]'s arithmetic, in SQL.
pub fn bucket(grain: Grain) -> String {
    bucket_of(&grain.ms().to_string())
}

/// The start of the bucket of `ms` (an SQL expression) holding `started_at`.
pub fn bucket_of(ms: &str) -> String {
    format!("toInt64(floor(started_at / {ms}) * {ms})")
}

/// The condition on `sketch_buckets` rows that keeps the bucket counts of the metrics `metrics`
/// marks (by [`Metric::index`]), the [`Extra`]s' when `extras`, and the joint counts when `joint`;
/// `None` when none are wanted.
pub fn bucket_counts_wanted(metrics: [bool; 5], extras: bool, joint: bool) -> Option<String> {
    let mut indexes: Vec<usize> = Metric::ALL.iter().filter(|m| metrics[m.index()]).map(|m| m.index()).collect();
    if extras {
        indexes.extend(Extra::ALL.map(Extra::index));
    }
    let mut wanted = Vec::new();
    match indexes.len() {
        0 => {}
        n if n == Metric::ALL.len() + Extra::ALL.len() => wanted.push("joint = 0".to_owned()),
        _ => wanted.push(format!("joint = 0 AND bitShiftRight(key, 32) IN ({})", indexes.iter().map(usize::to_string).collect::<Vec<_>>().join(", "))),
    }
    if joint {
        wanted.push("joint = 1".to_owned());
    }
    (!wanted.is_empty()).then(|| wanted.join(" OR "))
}

/// The key a read of `sketch_buckets` groups its rows by: `key`, or for `GoodFor` reads, each joint
/// key reduced as [`Slo::reduce`] does (ClickHouse then returns two joint rows per rollup, not a
/// row per TTFT and TPOT bucket pair).
pub fn key_read(joint: JointNeed) -> String {
    let JointNeed::GoodFor(slo) = joint else { return "key".to_owned() };
    let meets = |part: &str, max: Option<f64>| match max {
        None => "1".to_owned(),
        Some(max) => format!("({part} > {NULL_KEY} AND {part} <= {})", key_bound(max)),
    };
    let (met, missed) = (pack(Slo::MET.0, Slo::MET.1), pack(Slo::MISSED.0, Slo::MISSED.1));
    format!(
        "if(joint = 1, if({} AND {}, {met}, {missed}), key)",
        meets("bitShiftRight(key, 32)", slo.ttft_ms),
        meets("toInt32(bitAnd(key, 4294967295))", slo.tpot_ms)
    )
}

/// A record's sketch keys: `metric index << 32 | key` per metric it has (the key of a value the
/// sketch counts as zero is [`ZERO_KEY`]), then `extra index << 32 | key` per [`Extra`] it adds.
pub fn sketch_keys(row: &Row) -> Vec<i64> {
    let metrics = Metric::ALL.iter().filter_map(|&m| row.metric(m).map(|v| pack(m.index() as i32, sketch_key(Some(v)))));
    metrics.chain(extras::of(row).into_iter().map(|(extra, key)| pack(extra.index() as i32, key))).collect()
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

/// A rollup as read back: subtractable (the duplicate copies), then made a [`Rollup`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parts {
    counts: [u64; COUNTS.len()],
    sums: [f64; Metric::ALL.len()],
    mins: [f64; Metric::ALL.len()],
    maxs: [f64; Metric::ALL.len()],
    sketches: BTreeMap<i64, u64>,
    joint: BTreeMap<i64, u64>,
}

impl Parts {
    /// Reads the columns of [`merged`], without bucket counts (see [`Parts::add_bucket_count`]).
    pub fn read_states<R: BufRead>(r: &mut Reader<R>) -> Result<Parts, ReadError> {
        let mut parts = Parts::default();
        for count in &mut parts.counts {
            *count = r.u64()?;
        }
        for i in 0..Metric::ALL.len() {
            (parts.sums[i], parts.mins[i], parts.maxs[i]) = (r.f64()?, r.f64()?, r.f64()?);
        }
        Ok(parts)
    }

    /// Reads the columns of [`plain`]. O(size).
    pub fn read<R: BufRead>(r: &mut Reader<R>) -> Result<Parts, ReadError> {
        let mut parts = Parts::read_states(r)?;
        parts.sketches = read_map(r)?;
        parts.joint = read_map(r)?;
        Ok(parts)
    }

    /// Adds a row of `sketch_buckets`. O(log keys).
    pub fn add_bucket_count(&mut self, joint: bool, key: i64, n: u64) {
        *(if joint { &mut self.joint } else { &mut self.sketches }).entry(key).or_default() += n;
    }

    /// Reduces the joint counts as [`Slo::reduce`] does (as [`key_read`] reads them). O(entries).
    pub fn reduce_joint(&mut self, slo: &Slo) {
        let joint: Vec<((i32, i32), u64)> = self.joint.iter().map(|(&key, &n)| (unpack(key), n)).collect();
        self.joint = slo.reduce(&joint).into_iter().map(|((ttft, tpot), n)| (pack(ttft, tpot), n)).collect();
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

    /// The rollup these parts hold, with the distributions of the metrics `metrics` marks (by
    /// [`Metric::index`]) and the others empty, and the [`Extra`]s' counts when `extras` (else
    /// empty). Fails when a bucket key names no metric and no extra or a sketch's counts and
    /// extremes disagree (a damaged answer).
    pub fn into_rollup(self, metrics: [bool; 5], extras: bool) -> Result<Rollup, StoreError> {
        let malformed = || StoreError("clickhouse: a rollup's states have the wrong shape".into());
        let [count, output_tokens, stall_known, stalled, b1, b2, b3] = self.counts;
        let mut buckets: Vec<Vec<(i32, u64)>> = vec![Vec::new(); Metric::ALL.len()];
        let mut zeros = vec![0u64; Metric::ALL.len()];
        let mut rollup = Rollup::default();
        for (key, n) in self.sketches {
            let (index, key) = unpack(key);
            let index = usize::try_from(index).map_err(|_| malformed())?;
            if index >= Metric::ALL.len() {
                let extra = Extra::from_index(index).ok_or_else(malformed)?;
                if extras {
                    rollup.count_extra(extra, key, n);
                }
                continue;
            }
            let metric = index;
            if key == ZERO_KEY {
                zeros[metric] += n;
            } else {
                buckets[metric].push((key, n));
            }
        }
        let mut distributions: [Distribution; 5] = Default::default();
        for (i, distribution) in distributions.iter_mut().enumerate().filter(|&(i, _)| metrics[i]) {
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
        Ok(Rollup { count, output_tokens, stall_known, stalled, bands: [b1, b2, b3], metrics: distributions, joint, ..rollup })
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
