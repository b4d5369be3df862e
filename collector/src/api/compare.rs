//! `GET /api/compare`: an A/B judgement of streaming smoothness between two values of a dimension,
//! with the experiment's unit (the session, or the app's user) as the sample ([`crate::query::experiment`] says why and how).
//!
//! Parameters: those of [`crate::query::params`] (no `groupBy`), and
//! - `dimension` (default `variant`), `a` and `b`: the two arms, `dimension=a` and `dimension=b`;
//! - `metric`: `ttftMs`, `tpotMs` (default), `gapP90Ms`, `renderDelayMs` or `stallMs`: the primary
//!   metric, whose mean per stream the decision is about;
//! - `unit`: `session` (the default: the meter's tab session) or `user` (the app's own unit, given to
//!   `createMeter({ experimentUnit })`): the unit the app assigns arms to;
//! - `split`: the expected split of units, `a:b` weights (default `1:1`), for the sample-ratio check;
//! - `mde`: the relative difference the power figures plan for (default 0.1, from 0.001 to 10).
//!
//! The experiment is the window `[from, to)`: give its start as `from` and look as often as you
//! like with a later `to` (the default `to` is now); the sequential result stays valid at every look.
//!
//! Answer: `{ "metric", "unit", "from", "to", "a": { "value", "units", "streams", "count", "mean",
//! "median" }, "b": { ... }, "mixedUnits", "streamsWithoutUnit", "sampled", "difference": { "estimate", "relative",
//! "ci95", "pValue", "significant" }, "sequential": { "method", "estimate", "relative", "decision",
//! "noDifferenceLargerThan", "pValue", "ci95", "significant", "status" }, "srm": { "expected", "observed", "pValue", "mismatch" }, "power": {
//! "relativeDifference", "unitsPerArm", "moreUnitsPerArm", "detectableNow", "sequentialUnitsPerArm" }, "secondary": {
//! "median", "stallRate", "stopRate", "goodput" }, "verdict" }`:
//! - `units`: the arm's units (those in both arms are left out and counted in `mixedUnits`, streams
//!   without a unit in `streamsWithoutUnit`);
//!   `streams`: their streams; `count`: those with a value of the metric; `mean`, `median`: over
//!   those streams;
//! - `sampled`: more units or values than [`crate::query::experiment::units`] keeps: the figures are of a
//!   uniform sample of units;
//! - `difference`: mean(b) − mean(a), the fixed-horizon test: valid at one look at a sample size
//!   set beforehand only;
//! - `sequential`: the always-valid test of the same difference (the decision): `estimate` and
//!   `relative` as in `difference`, `ci95` the confidence sequence; `decision` is `keepCollecting`,
//!   `aBetter`, `bBetter`, `noDifference` (the sequence lies within ±`noDifferenceLargerThan` of arm
//!   a's mean, at most `mde`) or `sampleRatioMismatch`, and `status` says it in words: `keep
//!   collecting`, `a is better`, `b is better`, `no difference larger than X%`, `sample ratio
//!   mismatch`;
//! - `srm`: units per arm against `split` (chi-square); `mismatch` below p = 0.001 when both arms
//!   have units (an empty arm is said to have too few);
//! - `power`: units per arm that detect `mde` with 80% power at a fixed horizon, how many more that
//!   is than the smaller arm has (counting units with a value), the relative difference detectable
//!   now, and the units per arm the always-valid decision needs for the same (more);
//! - `secondary`: each `{ "a", "b", "difference", "ci95", "pValue" }` (fixed horizon, over units):
//!   the medians, and the shares as in the summary; goodput is null without an SLO;
//! - `verdict`: one line, in units.
//!
//! Cost: one read of the arms' records (unit, dimensions, metrics): time O(n log k) for n records
//! and k kept units, memory O(k + kept values), bounded by sampling units.

use crate::dims::{Dim, Metric, Unit};
use crate::query::experiment::power::power;
use crate::query::experiment::quantile::{median_over_units, Median};
use crate::query::experiment::ratio::{Difference, Ratio};
use crate::query::experiment::sequential::{msprt, Sequential, MIXING_SHARE};
use crate::query::experiment::srm::{srm_p_value, MISMATCH_P};
use crate::query::experiment::units::{read_arms, Arms, ArmsQuery, Limits, UnitFigures};
use crate::query::experiment::{goodput, mean, stall_rate, stop_rate, Compared, ALPHA, MIN_UNITS};
use crate::query::params::{self, bad, Takes, Window};
use crate::query::stats::p_text;
use crate::store::{Store, StoreError};
use crate::validate::Invalid;
use serde_json::{json, Value};

#[derive(Debug, Clone, PartialEq)]
pub struct CompareQuery {
    pub window: Window,
    pub dimension: Dim,
    pub a: String,
    pub b: String,
    pub metric: Metric,
    pub unit: Unit,
    /// The expected weights of the arms' units.
    pub split: [f64; 2],
    /// The relative difference the power figures plan for.
    pub mde: f64,
}

/// Parses `GET /api/compare`'s query string. O(query length); never panics.
pub fn parse(raw: Option<&str>, now_ms: i64) -> Result<CompareQuery, Invalid> {
    let (window, own) = params::parse(raw, now_ms, &["dimension", "a", "b", "metric", "unit", "split", "mde"], Takes { group_by: false, slo: true })?;
    let name = own.get("dimension").map(String::as_str).unwrap_or("variant");
    let dimension = Dim::from_name(name).ok_or_else(|| bad("dimension", format!("unknown dimension {name:?}; known: {}", Dim::names())))?;
    if window.filters.iter().any(|(d, _)| *d == dimension) {
        return Err(bad(name, format!("{name} is the compared dimension: give its two values as a and b, not as a filter")));
    }
    let arm = |key: &str| own.get(key).cloned().ok_or_else(|| bad(key, format!("missing: the {name} value of arm {key}")));
    let (a, b) = (arm("a")?, arm("b")?);
    if a == b {
        return Err(bad("b", format!("the same arm as a ({a:?}): compare two different values")));
    }
    let metric_name = own.get("metric").map(String::as_str).unwrap_or("tpotMs");
    let metric = Metric::from_name(metric_name).ok_or_else(|| bad("metric", format!("unknown metric {metric_name:?}; known: {}", Metric::names())))?;
    let unit_name = own.get("unit").map(String::as_str).unwrap_or("session");
    let unit = Unit::from_name(unit_name).ok_or_else(|| bad("unit", format!("unknown unit {unit_name:?}; known: {}", Unit::ALL.map(Unit::name).join(", "))))?;
    let split = match own.get("split") {
        None => [1.0, 1.0],
        Some(text) => parse_split(text).ok_or_else(|| bad("split", format!("expected the arms' weights as a:b, two positive numbers such as 50:50, got {text:?}")))?,
    };
    let mde = match own.get("mde") {
        None => 0.1,
        Some(text) => text.trim().parse().ok().filter(|m: &f64| (0.001..=10.0).contains(m)).ok_or_else(|| bad("mde", format!("expected a relative difference from 0.001 to 10 (0.1 is 10%), got {text:?}")))?,
    };
    Ok(CompareQuery { window, dimension, a, b, metric, unit, split, mde })
}

fn parse_split(text: &str) -> Option<[f64; 2]> {
    let (a, b) = text.split_once(':')?;
    let weight = |w: &str| w.trim().parse().ok().filter(|w: &f64| w.is_finite() && *w > 0.0 && *w <= 1e9);
    Some([weight(a)?, weight(b)?])
}

/// The comparison in the contract shape. Time and memory as the module doc says.
pub fn compare(store: &dyn Store, q: &CompareQuery) -> Result<Value, StoreError> {
    let w = &q.window;
    let arms = read_arms(store, &ArmsQuery { from: w.from, to: w.to, filters: &w.filters, dimension: q.dimension, a: &q.a, b: &q.b, metric: q.metric, slo: &w.slo, unit: q.unit, limits: Limits::COMPARE })?;
    Ok(Judged::of(q, &arms).to_json(q, &arms))
}

/// Everything the answer says, computed once.
struct Judged {
    mean: Compared,
    medians: [Median; 2],
    sequential: Option<Sequential>,
    srm_p: Option<f64>,
    /// Units per arm.
    units: [usize; 2],
    shares: [(&'static str, Compared); 3],
}

impl Judged {
    fn of(q: &CompareQuery, arms: &Arms) -> Judged {
        let mean = Compared::of(arms, mean);
        let values = |units: &[UnitFigures]| median_over_units(&units.iter().map(|u| u.values.as_slice()).collect::<Vec<_>>());
        let sequential = mean.difference.zip(pooled(&mean)).and_then(|(d, pooled)| msprt(&d, MIXING_SHARE * pooled.abs(), ALPHA));
        let srm_p = srm_p_value([arms.a.len() as u64, arms.b.len() as u64], q.split);
        let goodput = if q.window.slo.is_empty() { Compared { a: None, b: None, difference: None } } else { Compared::of(arms, goodput) };
        let shares = [("stallRate", Compared::of(arms, stall_rate)), ("stopRate", Compared::of(arms, stop_rate)), ("goodput", goodput)];
        Judged { mean, medians: [values(&arms.a), values(&arms.b)], sequential, srm_p, units: [arms.a.len(), arms.b.len()], shares }
    }

    /// A sample ratio mismatch between two arms that both have units: an empty arm is more likely
    /// a misspelt or unstarted one, which the verdict's "too few" says.
    fn mismatch(&self) -> bool {
        self.srm_p.is_some_and(|p| p < MISMATCH_P) && self.units[0] > 0 && self.units[1] > 0
    }

    /// Units with a value in each arm.
    fn units_with_values(&self) -> [usize; 2] {
        [self.mean.a.map_or(0, |r| r.units), self.mean.b.map_or(0, |r| r.units)]
    }

    /// Whether each arm has the units a decision needs.
    fn enough_units(&self) -> bool {
        self.units_with_values().iter().all(|&n| n >= MIN_UNITS)
    }

    /// The decision, and for `noDifference` the widest relative difference still possible.
    fn decision(&self, q: &CompareQuery) -> (Decision, Option<f64>) {
        match (&self.sequential, self.mean.a) {
            _ if self.mismatch() => (Decision::SampleRatioMismatch, None),
            (Some(s), Some(a)) if self.enough_units() => {
                if s.p_value <= ALPHA {
                    (if self.mean.difference.is_some_and(|d| d.estimate < 0.0) { Decision::BBetter } else { Decision::ABetter }, None)
                } else {
                    let widest = s.ci[0].abs().max(s.ci[1].abs()) / a.value.abs();
                    if widest <= q.mde {
                        (Decision::NoDifference, Some(widest))
                    } else {
                        (Decision::KeepCollecting, None)
                    }
                }
            }
            _ => (Decision::KeepCollecting, None),
        }
    }

    /// The decision as people read it.
    fn status(&self, q: &CompareQuery) -> String {
        match self.decision(q) {
            (Decision::NoDifference, Some(widest)) => format!("no difference larger than {}%", ceil_percent(widest)),
            (decision, _) => decision.words().into(),
        }
    }

    fn to_json(&self, q: &CompareQuery, arms: &Arms) -> Value {
        let [na, nb] = self.units_with_values();
        let (decision, widest) = self.decision(q);
        let decided = self.enough_units() && !self.mismatch();
        let arm_json = |value: &str, units: &[UnitFigures], ratio: Option<Ratio>, median: &Median| {
            json!({
                "value": value,
                "units": units.len(),
                "streams": units.iter().map(|u| u.streams).sum::<u64>(),
                "count": units.iter().map(|u| u.values.len()).sum::<usize>(),
                "mean": ratio.map(|r| r.value),
                "median": median.value,
            })
        };
        let d = self.mean.difference;
        let relative = d.zip(self.mean.a).filter(|(_, a)| a.value != 0.0).map(|(d, a)| d.estimate / a.value.abs());
        let power = self.mean.a.zip(self.mean.b).and_then(|(a, b)| power(&a, &b, q.mde));
        let total = q.split[0] + q.split[1];
        let secondary_json = |a: Option<f64>, b: Option<f64>, d: Option<Difference>| {
            json!({ "a": a, "b": b, "difference": d.map(|d| d.estimate), "ci95": d.map(|d| d.ci95()), "pValue": d.map(|d| d.p_value()) })
        };
        let median_difference = match self.medians {
            [Median { value: Some(ma), standard_error: Some(sa) }, Median { value: Some(mb), standard_error: Some(sb) }] => Some(Difference::between((ma, sa * sa), (mb, sb * sb))),
            _ => None,
        };
        let mut secondary = serde_json::Map::new();
        secondary.insert("median".into(), secondary_json(self.medians[0].value, self.medians[1].value, median_difference));
        for (name, c) in &self.shares {
            secondary.insert((*name).into(), secondary_json(c.a.map(|r| r.value), c.b.map(|r| r.value), c.difference));
        }
        json!({
            "metric": q.metric.name(),
            "unit": q.unit.name(),
            "from": q.window.from,
            "to": q.window.to,
            "a": arm_json(&q.a, &arms.a, self.mean.a, &self.medians[0]),
            "b": arm_json(&q.b, &arms.b, self.mean.b, &self.medians[1]),
            "mixedUnits": arms.mixed,
            "streamsWithoutUnit": arms.without_unit,
            "sampled": arms.sampled,
            "difference": {
                "estimate": d.map(|d| d.estimate),
                "relative": relative,
                "ci95": d.map(|d| d.ci95()),
                "pValue": d.map(|d| d.p_value()),
                "significant": d.is_some_and(|d| d.p_value() < ALPHA) && decided,
            },
            "sequential": {
                "method": "mSPRT",
                "estimate": d.map(|d| d.estimate),
                "relative": relative,
                "decision": decision.code(),
                "noDifferenceLargerThan": widest,
                "pValue": self.sequential.map(|s| s.p_value),
                "ci95": self.sequential.map(|s| s.ci),
                "significant": self.sequential.is_some_and(|s| s.p_value <= ALPHA) && decided,
                "status": self.status(q),
            },
            "srm": {
                "expected": [q.split[0] / total, q.split[1] / total],
                "observed": [arms.a.len(), arms.b.len()],
                "pValue": self.srm_p,
                "mismatch": self.mismatch(),
            },
            "power": {
                "relativeDifference": q.mde,
                "unitsPerArm": power.map(|p| p.units_per_arm),
                "moreUnitsPerArm": power.map(|p| (p.units_per_arm - na.min(nb) as f64).max(0.0)),
                "detectableNow": power.map(|p| p.detectable_now),
                "sequentialUnitsPerArm": power.map(|p| p.sequential_units_per_arm),
            },
            "secondary": secondary,
            "verdict": self.verdict(q, arms),
        })
    }

    fn verdict(&self, q: &CompareQuery, arms: &Arms) -> String {
        let (metric, dim, units) = (q.metric.label(), q.dimension.name(), q.unit.plural());
        let (a, b) = (&q.a, &q.b);
        if self.mismatch() {
            let total = q.split[0] + q.split[1];
            return format!(
                "Sample ratio mismatch: {} {units} in {a:?} and {} in {b:?}, where {:.0}:{:.0} was expected ({}). Units of one arm go missing or are counted twice (an assignment or a meter failing in one arm): no winner is named until that is fixed.",
                arms.a.len(),
                arms.b.len(),
                q.split[0] / total * 100.0,
                q.split[1] / total * 100.0,
                p_text(self.srm_p.unwrap_or(1.0))
            );
        }
        let [na, nb] = self.units_with_values();
        if !self.enough_units() {
            // With `unit=user`, an app that gives the meter no unit has streams but no users.
            let hint = match (q.unit, arms.without_unit) {
                (Unit::User, n) if n > 0 => format!(" {n} streams have no user unit: the app gives one with createMeter({{ experimentUnit }})."),
                _ => String::new(),
            };
            return format!("Too few {units} to judge: {dim} {a:?} has {na} and {b:?} has {nb} with a {metric} value; at least {MIN_UNITS} each are needed.{hint}");
        }
        let (Some(ra), Some(rb), Some(s)) = (self.mean.a, self.mean.b, self.sequential) else {
            return format!("No spread in {metric} within either arm: nothing to test.");
        };
        let (ma, mb) = (ra.value, rb.value);
        let secondary = self.secondary_text();
        let change = if ma != 0.0 { (mb - ma) / ma.abs() * 100.0 } else { 0.0 };
        let seen = format!("{na} and {nb} {units}");
        let (decision, widest) = self.decision(q);
        if s.p_value <= ALPHA {
            let (better, worse, mbetter, mworse) = if mb < ma { (b, a, mb, ma) } else { (a, b, ma, mb) };
            let lower = if mworse != 0.0 { (mworse - mbetter) / mworse * 100.0 } else { 0.0 };
            return format!("{better:?} is better on {metric}: mean {mbetter:.1} ms vs {mworse:.1} ms for {worse:?} ({lower:.0}% lower), always-valid {} over {seen}.{secondary}", p_text(s.p_value));
        }
        if let (Decision::NoDifference, Some(widest)) = (decision, widest) {
            return format!("No difference in {metric} larger than {}% between {a:?} and {b:?}: mean {ma:.1} vs {mb:.1} ms, always-valid {} over {seen}.{secondary}", ceil_percent(widest), p_text(s.p_value));
        }
        format!(
            "Keep collecting: no decision on {metric} yet between {a:?} and {b:?} (mean {ma:.1} vs {mb:.1} ms, {change:+.0}%, always-valid {} over {seen}).{secondary}",
            p_text(s.p_value)
        )
    }

    /// The secondary figures that differ at one look, labelled as such.
    fn secondary_text(&self) -> String {
        let differ: Vec<String> = self
            .shares
            .iter()
            .filter_map(|(name, c)| {
                let (a, b, d) = (c.a?, c.b?, c.difference?);
                let label = match *name {
                    "stallRate" => "stall rates",
                    "stopRate" => "stop rates",
                    _ => "goodput",
                };
                (d.p_value() < ALPHA).then(|| format!("{label} {:.1}% vs {:.1}% ({})", a.value * 100.0, b.value * 100.0, p_text(d.p_value())))
            })
            .collect();
        if differ.is_empty() {
            String::new()
        } else {
            format!(" Secondary, not the decision: {}.", differ.join("; "))
        }
    }
}

/// What the sequential test says to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    KeepCollecting,
    ABetter,
    BBetter,
    NoDifference,
    SampleRatioMismatch,
}

impl Decision {
    /// The answer's `decision`.
    fn code(self) -> &'static str {
        match self {
            Decision::KeepCollecting => "keepCollecting",
            Decision::ABetter => "aBetter",
            Decision::BBetter => "bBetter",
            Decision::NoDifference => "noDifference",
            Decision::SampleRatioMismatch => "sampleRatioMismatch",
        }
    }

    /// The answer's `status` (but for `noDifference`, which says how large a difference is left out).
    fn words(self) -> &'static str {
        match self {
            Decision::KeepCollecting => "keep collecting",
            Decision::ABetter => "a is better",
            Decision::BBetter => "b is better",
            Decision::NoDifference => "no difference",
            Decision::SampleRatioMismatch => "sample ratio mismatch",
        }
    }
}

/// The mean of both arms' streams together: the scale of the sequential test's mixture.
fn pooled(mean: &Compared) -> Option<f64> {
    let (a, b) = (mean.a?, mean.b?);
    Some((a.value + b.value) / 2.0)
}

/// A share as a whole percent, rounded up (so "no difference larger than" stays true).
fn ceil_percent(share: f64) -> u64 {
    (share * 100.0).ceil() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses() {
        let q = parse(Some("a=A&b=B"), 86_400_000).unwrap();
        assert_eq!((q.dimension, q.metric, q.a.as_str(), q.b.as_str(), q.unit, q.split, q.mde), (Dim::Variant, Metric::TpotMs, "A", "B", Unit::Session, [1.0, 1.0], 0.1));
        let q = parse(Some("a=A&b=B&split=45:55&mde=0.2&unit=session"), 86_400_000).unwrap();
        assert_eq!((q.split, q.mde), ([45.0, 55.0], 0.2));
        for (raw, field) in [
            ("b=B", "a"),
            ("a=A", "b"),
            ("a=A&b=A", "b"),
            ("a=A&b=B&dimension=region", "dimension"),
            ("a=A&b=B&metric=rpm", "metric"),
            ("a=A&b=B&variant=A", "variant"),
            ("a=A&b=B&groupBy=model", "groupBy"),
            ("a=A&b=B&unit=page", "unit"),
            ("a=A&b=B&split=50", "split"),
            ("a=A&b=B&split=0:1", "split"),
            ("a=A&b=B&split=1:inf", "split"),
            ("a=A&b=B&mde=0", "mde"),
            ("a=A&b=B&mde=NaN", "mde"),
        ] {
            assert_eq!(parse(Some(raw), 86_400_000).unwrap_err().field.as_deref(), Some(field), "{raw}");
        }
    }
}
