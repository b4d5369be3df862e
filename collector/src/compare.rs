//! `GET /api/compare`: an A/B judgement of streaming smoothness between two values of a dimension.
//!
//! Parameters: those of [`crate::params`] (no `groupBy`), and
//! - `dimension` (default `variant`), `a` and `b`: the two arms, `dimension=a` and `dimension=b`;
//! - `metric`: `ttftMs`, `tpotMs` (default), `gapP90Ms`, `renderDelayMs` or `stallMs`.
//!
//! Answer: `{ "metric", "a": { "value", "count", "sampled", "median" }, "b": { ... }, "difference":
//! { "estimate", "ci95": [lo, hi] }, "mannWhitney": { "u", "pValue" }, "stallRate": { "a", "b",
//! "pValue" }, "stopRate": { "a", "b", "pValue" }, "goodput": { "a", "b", "pValue" }, "verdict" }`:
//! - `count`: the arm's streams with a value of the metric; `median`: their exact median;
//! - `sampled`: whether the arm has more than [`MAX_ARM_VALUES`] values, in which case its median,
//!   the difference and the Mann-Whitney test use a uniform random sample of that many of them
//!   (reservoir sampling with a fixed seed; `count` stays the arm's total);
//! - `difference`: median(b) − median(a), with a 95% interval from the two medians' McKean-Schrader
//!   standard errors (null below 3 values in an arm);
//! - `mannWhitney`: U of arm a and the two-sided p-value ([`crate::stats::mann_whitney`]);
//! - `stallRate`, `stopRate`, `goodput`: each arm's share (as in the summary) and a two-proportion
//!   z-test; goodput is null without an SLO;
//! - `verdict`: one line; says so when an arm has fewer than [`MIN_PER_ARM`] values.
//!
//! Cost: the arms' metric values are read from the records (exact tests): time O(n) to read them
//! plus O(m log m) for the tests, memory O(m), m = min(n, [`MAX_ARM_VALUES`]) per arm; the shares
//! come from rollups, as in the summary (one group per arm).

use crate::dims::{Dim, Metric};
use crate::params::{self, bad, Takes, Window};
use crate::query::visit_window;
use crate::rollup::Grain;
use crate::tally::Tally;
use crate::stats::{mann_whitney, median, median_standard_error, p_text, two_proportion, Z95};
use crate::store::{JointNeed, Needs, Selection, Store, StoreError};
use crate::validate::Invalid;
use serde_json::{json, Value};

/// Below this many values in an arm, the verdict declines to judge.
pub const MIN_PER_ARM: usize = 30;
/// The significance level of the verdict.
pub const ALPHA: f64 = 0.05;
/// The most values of an arm the tests use: beyond, a uniform random sample of this many.
pub const MAX_ARM_VALUES: usize = 100_000;

#[derive(Debug, Clone, PartialEq)]
pub struct CompareQuery {
    pub window: Window,
    pub dimension: Dim,
    pub a: String,
    pub b: String,
    pub metric: Metric,
}

/// Parses `GET /api/compare`'s query string. O(query length); never panics.
pub fn parse(raw: Option<&str>, now_ms: i64) -> Result<CompareQuery, Invalid> {
    let (window, own) = params::parse(raw, now_ms, &["dimension", "a", "b", "metric"], Takes { group_by: false, slo: true })?;
    let name = own.get("dimension").map(String::as_str).unwrap_or("variant");
    let dimension = Dim::from_name(name).ok_or_else(|| bad("dimension", format!("unknown dimension {name:?}; known: {}", Dim::names())))?;
    if window.filters.iter().any(|(d, _)| *d == dimension) {
        return Err(bad(name, format!("{name} is the compared dimension: give its two values as a and b, not as a filter")));
    }
    let arm = |key: &str| own.get(key).cloned().ok_or_else(|| bad(key, format!("missing: the {name} value of arm {key}")));
    let (a, b) = (arm("a")?, arm("b")?);
    let metric_name = own.get("metric").map(String::as_str).unwrap_or("tpotMs");
    let metric = Metric::from_name(metric_name).ok_or_else(|| bad("metric", format!("unknown metric {metric_name:?}; known: {}", Metric::names())))?;
    Ok(CompareQuery { window, dimension, a, b, metric })
}

struct Arm {
    value: String,
    /// How many values the arm has.
    count: u64,
    /// Those values, or a uniform sample of [`MAX_ARM_VALUES`] of them, sorted.
    sorted: Vec<f64>,
    tally: Tally,
}

impl Arm {
    fn sampled(&self) -> bool {
        self.count > self.sorted.len() as u64
    }
}

/// A uniform random sample of at most `capacity` of the values offered one by one (Vitter's
/// algorithm R), from a fixed seed: the same values in the same order give the same sample.
/// O(1) per value, memory O(capacity).
struct Reservoir {
    capacity: usize,
    seen: u64,
    kept: Vec<f64>,
    rng: u64,
}

impl Reservoir {
    fn new(capacity: usize) -> Reservoir {
        Reservoir { capacity, seen: 0, kept: Vec::new(), rng: 0x9e37_79b9_7f4a_7c15 }
    }

    fn offer(&mut self, value: f64) {
        self.seen += 1;
        if self.kept.len() < self.capacity {
            self.kept.push(value);
            return;
        }
        // xorshift64*; the modulo bias is at most seen / 2^64.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let slot = self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d) % self.seen;
        if let Some(kept) = self.kept.get_mut(slot as usize) {
            *kept = value;
        }
    }
}

fn read_arm(store: &dyn Store, q: &CompareQuery, value: &str) -> Result<Arm, StoreError> {
    let w = &q.window;
    let mut filters = w.filters.clone();
    filters.push((q.dimension, vec![value.to_owned()]));
    let mut sample = Reservoir::new(MAX_ARM_VALUES);
    store.values(q.metric, w.from, w.to, &filters, &mut |v| sample.offer(v))?;
    let mut sorted = sample.kept;
    sorted.sort_by(f64::total_cmp);
    let mut tally = Tally::default();
    // The arm's counts only: its distribution comes from the sampled values.
    let needs = Needs { per_bucket: false, metrics: [false; 5], extras: true, joint: JointNeed::goodput(&w.slo) };
    visit_window(store, w.from, w.to, Grain::Day, Selection::filtered(&filters), needs, |_, _, r| tally.add(r, &w.slo))?;
    Ok(Arm { value: value.to_owned(), count: sample.seen, sorted, tally })
}

/// The comparison in the contract shape. Memory O([`MAX_ARM_VALUES`]); time as the module doc says.
pub fn compare(store: &dyn Store, q: &CompareQuery) -> Result<Value, StoreError> {
    let (a, b) = (read_arm(store, q, &q.a)?, read_arm(store, q, &q.b)?);
    let slo = &q.window.slo;
    let (median_a, median_b) = (median(&a.sorted), median(&b.sorted));
    let estimate = median_a.zip(median_b).map(|(ma, mb)| mb - ma);
    let ci95 = median_standard_error(&a.sorted).zip(median_standard_error(&b.sorted)).zip(estimate).map(|((se_a, se_b), d)| {
        let half = Z95 * (se_a * se_a + se_b * se_b).sqrt();
        [d - half, d + half]
    });
    let mw = mann_whitney(&a.sorted, &b.sorted);
    let stall_p = two_proportion(a.tally.rollup.stalled, a.tally.rollup.stall_known, b.tally.rollup.stalled, b.tally.rollup.stall_known);
    let stop_p = two_proportion(a.tally.rollup.stopped, a.tally.rollup.reached, b.tally.rollup.stopped, b.tally.rollup.reached);
    let goodput_p = if slo.is_empty() { None } else { two_proportion(a.tally.good, a.tally.rollup.count, b.tally.good, b.tally.rollup.count) };
    let verdict = verdict(q, &a, &b, mw.map(|(_, p)| p), stall_p, stop_p);
    let arm_json = |arm: &Arm, m: Option<f64>| json!({ "value": arm.value, "count": arm.count, "sampled": arm.sampled(), "median": m });
    Ok(json!({
        "metric": q.metric.name(),
        "a": arm_json(&a, median_a),
        "b": arm_json(&b, median_b),
        "difference": { "estimate": estimate, "ci95": ci95 },
        "mannWhitney": { "u": mw.map(|(u, _)| u), "pValue": mw.map(|(_, p)| p) },
        "stallRate": { "a": a.tally.rollup.stall_rate(), "b": b.tally.rollup.stall_rate(), "pValue": stall_p },
        "stopRate": { "a": a.tally.rollup.stop_rate(), "b": b.tally.rollup.stop_rate(), "pValue": stop_p },
        "goodput": { "a": a.tally.goodput(slo), "b": b.tally.goodput(slo), "pValue": goodput_p },
        "verdict": verdict,
    }))
}

fn verdict(q: &CompareQuery, a: &Arm, b: &Arm, p: Option<f64>, stall_p: Option<f64>, stop_p: Option<f64>) -> String {
    let (metric, dim) = (q.metric.label(), q.dimension.name());
    let (na, nb) = (a.count, b.count);
    if na < MIN_PER_ARM as u64 || nb < MIN_PER_ARM as u64 {
        return format!("Too few streams to judge: {dim} {:?} has {na} and {:?} has {nb} with a {metric} value; at least {MIN_PER_ARM} each are needed.", a.value, b.value);
    }
    let (Some(ma), Some(mb), Some(p)) = (median(&a.sorted), median(&b.sorted), p) else {
        return "Not enough data to compare.".into();
    };
    let differ = |what: &str, p: Option<f64>, ra: Option<f64>, rb: Option<f64>| match (p, ra, rb) {
        (Some(p), Some(ra), Some(rb)) if p < ALPHA => format!(" {what} differ: {:.1}% vs {:.1}% ({}).", ra * 100.0, rb * 100.0, p_text(p)),
        _ => String::new(),
    };
    let (ra, rb) = (&a.tally.rollup, &b.tally.rollup);
    let shares = differ("Stall rates", stall_p, ra.stall_rate(), rb.stall_rate()) + &differ("Stop rates", stop_p, ra.stop_rate(), rb.stop_rate());
    if p >= ALPHA {
        return format!("No significant difference in {metric} between {:?} and {:?} ({}, medians {ma:.1} vs {mb:.1} ms).{shares}", a.value, b.value, p_text(p));
    }
    let (better, worse, mb_, mw_) = if mb < ma { (&b.value, &a.value, mb, ma) } else { (&a.value, &b.value, ma, mb) };
    let change = if mw_ > 0.0 { (mw_ - mb_) / mw_ * 100.0 } else { 0.0 };
    format!("{better:?} is better on {metric}: median {mb_:.1} ms vs {mw_:.1} ms for {worse:?} ({change:.0}% lower), {} (Mann-Whitney).{shares}", p_text(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses() {
        let q = parse(Some("a=A&b=B"), 86_400_000).unwrap();
        assert_eq!((q.dimension, q.metric, q.a.as_str(), q.b.as_str()), (Dim::Variant, Metric::TpotMs, "A", "B"));
        for (raw, field) in [("b=B", "a"), ("a=A", "b"), ("a=A&b=B&dimension=region", "dimension"), ("a=A&b=B&metric=rpm", "metric"), ("a=A&b=B&variant=A", "variant"), ("a=A&b=B&groupBy=model", "groupBy")] {
            assert_eq!(parse(Some(raw), 86_400_000).unwrap_err().field.as_deref(), Some(field), "{raw}");
        }
    }

    /// A store holding only metric values: arm "A" has `a` values 0, 1, ..., arm "B" has `b`
    /// values 10, 11, ...; no rollups, no records.
    struct ValuesOnly {
        a: usize,
        b: usize,
    }

    impl Store for ValuesOnly {
        fn insert_batch(&self, _: &crate::validate::Batch, _: i64) -> Result<crate::store::Inserted, StoreError> {
            unimplemented!("a read-only test store")
        }
        fn rollups(&self, _: Grain, _: i64, _: i64, _: Selection<'_>, _: Needs, _: &mut dyn FnMut(crate::rollup::RollupKey, crate::rollup::Rollup)) -> Result<(), StoreError> {
            Ok(())
        }
        fn rows(&self, _: i64, _: i64, _: Selection<'_>, _: &mut dyn FnMut(crate::rollup::Row)) -> Result<(), StoreError> {
            Ok(())
        }
        fn values(&self, _: Metric, _: i64, _: i64, filters: &crate::store::Filters, visit: &mut dyn FnMut(f64)) -> Result<(), StoreError> {
            let arm = filters.iter().find(|(d, _)| *d == Dim::Variant).map(|(_, v)| v[0].as_str());
            let (n, offset) = if arm == Some("A") { (self.a, 0.0) } else { (self.b, 10.0) };
            (0..n).for_each(|i| visit(offset + i as f64));
            Ok(())
        }
        fn busiest_groups(&self, _: i64, _: i64, _: &[Dim], _: &crate::store::Filters, _: usize) -> Result<crate::store::Busiest, StoreError> {
            unimplemented!("compare ranks no groups")
        }
        fn streams(&self, _: i64, _: i64, _: &crate::store::Filters, _: &crate::streams::Order, _: &mut dyn FnMut(crate::streams::Stream)) -> Result<(), StoreError> {
            unimplemented!("compare lists no streams")
        }
        fn ping(&self) -> Result<(), StoreError> {
            Ok(())
        }
    }

    #[test]
    fn an_arm_over_the_cap_is_tested_on_a_uniform_sample_and_counted_whole() {
        let q = parse(Some("a=A&b=B"), 86_400_000).unwrap();
        let got = compare(&ValuesOnly { a: 250_000, b: 1_000 }, &q).unwrap();
        assert_eq!((got["a"]["count"].clone(), got["a"]["sampled"].clone()), (json!(250_000), json!(true)));
        assert_eq!((got["b"]["count"].clone(), got["b"]["sampled"].clone(), got["b"]["median"].clone()), (json!(1_000), json!(false), json!(509.5)));
        // The sample's median is near the whole arm's (124,999.5): its standard error is about 400.
        let median = got["a"]["median"].as_f64().unwrap();
        assert!((median - 124_999.5).abs() < 2_000.0, "{median}");
        assert!(got["mannWhitney"]["pValue"].as_f64().unwrap() < 1e-6, "B is far below most of A");
        assert!(got["verdict"].as_str().unwrap().starts_with("\"B\" is better"), "{}", got["verdict"]);
    }

    #[test]
    fn a_reservoir_keeps_everything_up_to_its_capacity_then_a_uniform_sample() {
        let mut small = Reservoir::new(10);
        (0..7).for_each(|i| small.offer(i as f64));
        assert_eq!((small.seen, small.kept), (7, (0..7).map(|i| i as f64).collect::<Vec<_>>()));
        // 100 values into 10 slots, 20,000 times over (a different stream each time): each value
        // should be kept 2,000 times; a 4-sigma band (sd ≈ 42) holds them all.
        let mut kept = vec![0u32; 100];
        for round in 0..20_000u64 {
            let mut r = Reservoir::new(10);
            r.rng = (round + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            (0..100).for_each(|i| r.offer(i as f64));
            assert_eq!((r.seen, r.kept.len()), (100, 10));
            r.kept.iter().for_each(|&v| kept[v as usize] += 1);
        }
        assert!(kept.iter().all(|&n| (1830..=2170).contains(&n)), "{kept:?}");
    }
}
