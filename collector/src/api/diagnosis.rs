//! `GET /api/diagnosis`: where the experience breaks, in plain words, each finding backed by figures
//! and a test. Parameters: the window and filters of [`crate::query::params`] (`groupBy` and the SLOs are
//! refused as unknown).
//!
//! Answer: `{ "def": 1, "from", "to", "findings": [ { "kind", "severity", "text", "evidence" } ] }`,
//! the most severe first (`high`, then `medium`; by effect within), at most [`MAX_FINDINGS`].
//!
//! No fixed thresholds of good and bad: the same TPOT can be fine for one product and slow for
//! another (the seed's own warning). A finding compares streams measured the same way in the same
//! window:
//! - **by dimension**: each value of each dimension (the [`VALUES_PER_DIMENSION`] busiest; a null is
//!   a value) against all other streams: `start` when its TTFT is slower, `stream` when its TPOT is
//!   slower, its rhythm more uneven (per-stream gap p90) or it stalls more often, `page` when its
//!   render delay (arrival to paint) is longer, `network` when its output arrives in bunches more
//!   often: most output events in the same network read as the one before, though the server sent
//!   them apart ([`crate::rollup::bunched`]), as behind a buffering proxy;
//! - **by load** (`load`): the busiest quarter of the window's whole minutes (hours for windows over
//!   a day, days over 60 days; at least [`MIN_LOAD_BUCKETS`] with streams) against the quietest
//!   quarter, when the busy ones carry at least twice the streams per minute: TTFT and TPOT at peak
//!   against quiet times.
//!
//! Distributions are compared with the Mann-Whitney U test on their sketch buckets (values in one
//! bucket tie), and the shares of streams that stall or come in bunches with a two-proportion z-test,
//! then within the values of each other dimension (and, for stalls, each length band: a long answer
//! has more time to stall) with the Cochran-Mantel-Haenszel test, so that a share another dimension
//! explains is no finding (a stalling model that serves mostly one scenario makes that scenario stall
//! more often overall, not within each model); a dimension whose values the group and the others
//! hardly share (under [`MIN_STREAMS`] a side in common strata) cannot tell them apart and is passed;
//! a finding needs p below [`ALPHA`] (small, since a window is tested many times), at least
//! [`MIN_STREAMS`] streams on each side, and a material effect: a median at least [`MIN_RATIO`] times
//! the others' and some ms more for that metric, and a chance of at least [`MIN_CHANCE_SLOWER`] that a
//! stream of the group is slower than another (a median alone can jump between the modes of mixed
//! traffic: two alike halves of a mix of fast and slow models may show medians 1.6 times apart); a
//! share at least twice the others' and 5 points more, overall and within strata (the Mantel-Haenszel
//! rate ratio and difference). A finding is
//! `high` when the effect is at least [`HIGH_RATIO`] times. Values are judged by sketch bucket (within
//! 1%), as every percentile of the analytics.
//!
//! A finding by dimension must then hold over sessions: a session's streams move
//! together (one device, one network, one person), so 42 streams from 3 sessions are 3 samples, not
//! 42. The group's share of streams with the trait (for a metric: above the other streams' median)
//! is compared with the other streams' as ratios over sessions (the delta method, as the A/B
//! comparison does: [`crate::query::experiment`]) with Student's t for few sessions, needing
//! [`MIN_UNITS`] sessions on each side and p below [`ALPHA`]. The load comparison compares time buckets and is not checked so.
//!
//! Cost: one pass over the window's rollups for the dimensions (five group rankings first, in the
//! store) and one per time bucket for the load, then, when there are candidate findings, one read
//! of the window's records by session; memory O(dimensions × [`VALUES_PER_DIMENSION`] +
//! time buckets) rollups, at most [`MAX_BUCKETS`] buckets, and O((dimensions × [`VALUES_PER_DIMENSION`])²)
//! share counts for the strata (about 1 MB), and four counts per candidate per session (at most
//! [`MAX_UNITS`] sessions: about 13 MB).

use crate::dims::{Dim, Dims, Metric, Unit, DEF};
use crate::query::experiment::ratio::{Difference, Ratio};
use crate::query::experiment::sample::UnitSample;
use crate::query::params::{self, Takes, Window};
use crate::query::window::visit_window;
use crate::rollup::{Grain, Rollup, Row};
use crate::query::stats::{mann_whitney_grouped, mantel_haenszel, p_text, two_proportion};
use crate::store::{JointNeed, Needs, Selection, Store, StoreError};
use crate::validate::Invalid;
use llm_ux_meter::metrics::sketch::Sketch;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The busiest values of each dimension that are tested.
pub const VALUES_PER_DIMENSION: usize = 20;
/// The fewest streams on each side of a comparison.
pub const MIN_STREAMS: u64 = 30;
/// The largest p-value of a finding.
pub const ALPHA: f64 = 0.001;
/// The smallest ratio of medians that is a finding (1.25 for load).
pub const MIN_RATIO: f64 = 1.5;
const MIN_LOAD_RATIO: f64 = 1.25;
/// The smallest chance that a stream of a group is slower than one of the others (ties counting
/// half: U / (n·m), 0.5 when alike) that is a finding.
pub const MIN_CHANCE_SLOWER: f64 = 0.6;
/// Effects at least this many times are `high`.
pub const HIGH_RATIO: f64 = 2.0;
/// The fewest sessions on each side of a finding over sessions.
pub const MIN_UNITS: usize = 5;
/// The most sessions the check over sessions keeps (a uniform sample past that).
pub const MAX_UNITS: usize = 20_000;
/// The most candidate findings [`confirm`] checks (the largest effects).
const MAX_CANDIDATES: usize = 40;
/// The most findings an answer lists.
pub const MAX_FINDINGS: usize = 20;
/// The most time buckets the load comparison reads.
pub const MAX_BUCKETS: usize = 1440;
/// The fewest time buckets with streams the load comparison needs (one a quarter).
pub const MIN_LOAD_BUCKETS: usize = 4;

/// The metrics compared by dimension, each with its kind, the smallest difference that matters (ms)
/// and the words of its finding.
const COMPARED: [(Metric, &str, f64, &str); 4] = [
    (Metric::TtftMs, "start", 100.0, "is slow to start"),
    (Metric::TpotMs, "stream", 5.0, "streams slowly"),
    (Metric::GapP90Ms, "stream", 20.0, "streams unevenly"),
    (Metric::RenderDelayMs, "page", 10.0, "is painted late by the page"),
];

/// Parses the query string ([`params::parse`], no `groupBy`, no SLO). O(query length).
pub fn parse(raw: Option<&str>, now_ms: i64) -> Result<Window, Invalid> {
    params::parse(raw, now_ms, &[], Takes { group_by: false, slo: false }).map(|(window, _)| window)
}

/// One finding, in the answer's shape.
struct Finding {
    kind: &'static str,
    effect: f64,
    text: String,
    evidence: Value,
}

impl Finding {
    fn severity(&self) -> &'static str {
        if self.effect >= HIGH_RATIO {
            "high"
        } else {
            "medium"
        }
    }
}

/// The diagnosis of `window`. Time and memory as the module doc says.
pub fn diagnosis(store: &dyn Store, window: &Window) -> Result<Value, StoreError> {
    let mut findings = confirm(store, window, by_dimension(store, window)?)?;
    findings.extend(by_load(store, window)?);
    findings.sort_by(|a, b| (a.severity() != "high").cmp(&(b.severity() != "high")).then(b.effect.total_cmp(&a.effect)));
    findings.truncate(MAX_FINDINGS);
    let findings: Vec<Value> = findings.into_iter().map(|f| json!({ "kind": f.kind, "severity": f.severity(), "text": f.text, "evidence": f.evidence })).collect();
    Ok(json!({ "def": DEF, "from": window.from, "to": window.to, "findings": findings }))
}

/// A finding of the streams' figures about one value of a dimension, and how to check it over units.
struct Candidate {
    finding: Finding,
    dim: Dim,
    value: Option<String>,
    check: Check,
}

/// What a candidate compares per stream, as (known, has the trait).
#[derive(Debug, Clone, Copy)]
enum Check {
    /// A value of the metric above this (the other streams' median).
    Above(Metric, f64),
    /// The trait of [`SHARES`]' share of this index.
    Share(usize),
}

impl Check {
    fn of(self, row: &Row) -> Option<bool> {
        match self {
            Check::Above(metric, threshold) => row.metric(metric).map(|v| v > threshold),
            Check::Share(which) => (SHARES[which].of_stream)(row),
        }
    }
}

/// Keeps the candidates that hold over units: the streams of one session move together (one device,
/// one network, one person), so a value used by a few sessions is a few samples, however many
/// streams they made. Per candidate, the share of streams with its trait (for a metric: above the
/// other streams' median) in the group and in the other streams, each a ratio over sessions with
/// the delta method's variance ([`crate::query::experiment::ratio`], with the small-sample factor
/// `G/(G − 1)`) and Student's t with the smaller side's sessions less one as its degrees of freedom
/// (as statsmodels treats few clusters); a finding needs [`MIN_UNITS`] sessions on each side and p
/// below [`ALPHA`]. One read of the window's records, only when there are candidates: time
/// O(records), memory
/// O(candidates × [`MAX_UNITS`]) (a uniform sample of sessions past that).
fn confirm(store: &dyn Store, window: &Window, mut candidates: Vec<Candidate>) -> Result<Vec<Finding>, StoreError> {
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    candidates.sort_by(|a, b| b.finding.effect.total_cmp(&a.finding.effect));
    candidates.truncate(MAX_CANDIDATES);
    // Per unit, per candidate: the group's streams where the trait is known and those with it, then
    // the other streams'.
    let mut units: UnitSample<Vec<[u32; 4]>> = UnitSample::new();
    store.unit_rows(window.from, window.to, &window.filters, Unit::Session, &mut |id, row| {
        let Some(counts) = units.unit(id) else { return };
        counts.resize(candidates.len(), [0; 4]);
        for (c, n) in candidates.iter().zip(counts.iter_mut()) {
            if let Some(has) = c.check.of(&row) {
                let side = if row.dims[c.dim.index()] == c.value { 0 } else { 2 };
                n[side] += 1;
                n[side + 1] += u32::from(has);
            }
        }
        while units.len() > MAX_UNITS {
            units.drop_highest();
        }
    })?;
    let per_unit: Vec<Vec<[u32; 4]>> = units.into_units().collect();
    Ok(candidates
        .into_iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let side = |at: usize| Ratio::of(per_unit.iter().map(move |u| (f64::from(u[i][at + 1]), f64::from(u[i][at])))).filter(|r| r.units >= MIN_UNITS);
            let (group, other) = (side(0)?, side(2)?);
            let corrected = |r: Ratio| r.variance * r.units as f64 / (r.units - 1) as f64;
            let difference = Difference::between((other.value, corrected(other)), (group.value, corrected(group)));
            // Student's t with the smaller side's sessions less one: few sessions estimate the
            // variance poorly, and the normal's tail would be too thin for them.
            let p = difference.student_p_value((group.units.min(other.units) - 1) as f64);
            if p >= ALPHA || difference.estimate <= 0.0 {
                return None;
            }
            let mut f = c.finding;
            f.text = format!("{} Over sessions, each counted once: {} against {} ({}).", f.text, group.units, other.units, p_text(p));
            f.evidence["units"] = json!({ "sessions": group.units, "otherSessions": other.units, "test": "delta method over sessions, Student's t", "pValue": p });
            Some(f)
        })
        .collect())
}

const NEEDS: Needs = Needs { per_bucket: false, metrics: [true, true, true, true, false], extras: true, joint: JointNeed::Nothing };

/// A share's streams where its trait is known, and those with it, per length band
/// ([`crate::rollup::length_band`]; the last for the streams of none).
type BandCounts = [(u64, u64); 4];

/// Per dimension (by its index), per stratum (its tested values in order, then one for all the
/// others), each [`SHARES`]' counts.
type Strata = [Vec<[BandCounts; 2]>; Dim::ALL.len()];

/// A tested value of a dimension: its streams' rollup and their share counts by stratum of every
/// dimension.
struct Tested {
    value: Option<String>,
    rollup: Rollup,
    strata: Strata,
}

/// Each tested value of each dimension against the other streams: the findings of the streams'
/// figures, each still to be confirmed over units ([`confirm`]).
fn by_dimension(store: &dyn Store, window: &Window) -> Result<Vec<Candidate>, StoreError> {
    // Per dimension, its tested values and each one's stratum.
    let mut stratum_of: [BTreeMap<Option<String>, usize>; Dim::ALL.len()] = Default::default();
    for dim in Dim::ALL {
        let keys = store.busiest_groups(window.from, window.to, &[dim], &window.filters, VALUES_PER_DIMENSION)?.keys;
        stratum_of[dim.index()] = keys.into_iter().map(|key| key.into_iter().next().flatten()).collect::<std::collections::BTreeSet<_>>().into_iter().zip(0..).collect();
    }
    let no_strata = || -> Strata { std::array::from_fn(|d| vec![Default::default(); stratum_of[d].len() + 1]) };
    let mut tested: [Vec<Tested>; Dim::ALL.len()] =
        std::array::from_fn(|d| stratum_of[d].keys().map(|value| Tested { value: value.clone(), rollup: Rollup::default(), strata: no_strata() }).collect());
    let (mut all, mut all_strata) = (Rollup::default(), no_strata());
    visit_window(store, window.from, window.to, Grain::Day, Selection::filtered(&window.filters), NEEDS, |_, dims: &Dims, piece| {
        all.merge_without_joint(piece);
        let counts = SHARES.each_ref().map(|share| (share.by_band)(piece));
        let strata: [usize; Dim::ALL.len()] = std::array::from_fn(|d| stratum_of[d].get(&dims[d]).copied().unwrap_or(stratum_of[d].len()));
        add_counts(&mut all_strata, &strata, &counts);
        for (values, &stratum) in tested.iter_mut().zip(&strata) {
            if let Some(value) = values.get_mut(stratum) {
                value.rollup.merge_without_joint(piece);
                add_counts(&mut value.strata, &strata, &counts);
            }
        }
    })?;
    let mut findings = Vec::new();
    for (dim, group) in Dim::ALL.into_iter().flat_map(|dim| tested[dim.index()].iter().map(move |group| (dim, group))) {
        let who = format!("{} {}", dim.name(), group.value.as_deref().map_or("(none)".to_owned(), |v| format!("{v:?}")));
        let subject = json!({ "dimension": dim.name(), "value": group.value });
        for (metric, kind, min_difference, words) in COMPARED {
            let Some(c) = Comparison::of(group.rollup.metric(metric).sketch.clone(), without(&all.metric(metric).sketch, &group.rollup.metric(metric).sketch)) else { continue };
            if c.is_finding(MIN_RATIO, min_difference) {
                let text = format!("{who} {words}: its median {} is {} against {} for the other streams ({:.1}×; {}, {} vs {} streams).", metric.label(), ms(c.p50), ms(c.other_p50), c.ratio(), p_text(c.p_value), c.streams, c.other_streams);
                let finding = Finding { kind, effect: c.ratio(), text, evidence: c.evidence(&subject, metric.name()) };
                findings.push(Candidate { finding, dim, value: group.value.clone(), check: Check::Above(metric, c.other_p50) });
            }
        }
        for (which, share) in SHARES.iter().enumerate() {
            let found = share.finding(which, &who, &subject, dim, group, (&all, &all_strata));
            findings.extend(found.map(|finding| Candidate { finding, dim, value: group.value.clone(), check: Check::Share(which) }));
        }
    }
    Ok(findings)
}

/// Adds a piece's share `counts` to the stratum of each of its dimension values.
fn add_counts(to: &mut Strata, strata: &[usize; Dim::ALL.len()], counts: &[BandCounts; 2]) {
    for (by_stratum, &stratum) in to.iter_mut().zip(strata) {
        for (sum, add) in by_stratum[stratum].iter_mut().zip(counts) {
            for ((known, with), (more_known, more_with)) in sum.iter_mut().zip(add) {
                (*known, *with) = (*known + more_known, *with + more_with);
            }
        }
    }
}

/// A share of streams with some trait (of those where it is known), compared between a group and
/// the other streams.
struct Share {
    kind: &'static str,
    metric: &'static str,
    /// Its counts in a rollup, by length band where the rollup keeps them (else all in the first).
    by_band: fn(&Rollup) -> BandCounts,
    /// Whether a stream has the trait (`None`: not known).
    of_stream: fn(&Row) -> Option<bool>,
    /// Whether its strata are split by length band too.
    by_length: bool,
    /// The words of its finding, from who, its rate and the others' in percent.
    words: fn(&str, f64, f64) -> String,
}

const SHARES: [Share; 2] = [
    Share {
        kind: "stream",
        metric: "stallRate",
        by_band: |r| {
            let band = |b: usize| (r.band_stall_known[b], r.band_stalled[b]);
            let banded = (0..3).map(band).fold((0, 0), |(k, w), (bk, bw)| (k + bk, w + bw));
            [band(0), band(1), band(2), (r.stall_known.saturating_sub(banded.0), r.stalled.saturating_sub(banded.1))]
        },
        of_stream: |row| row.stall_count.map(|n| n > 0),
        by_length: true,
        words: |who, rate, other| format!("{who} stalls often: {rate:.0}% of its streams paused for 500 ms or more, against {other:.0}% of the other streams"),
    },
    Share {
        kind: "network",
        metric: "bunchedRate",
        by_band: |r| [(r.bunch_known, r.bunched), (0, 0), (0, 0), (0, 0)],
        of_stream: |row| row.bunched,
        by_length: false,
        words: |who, rate, other| {
            format!("{who} gets its tokens in bunches: in {rate:.0}% of its streams, most output events reached the page in the same network read as the one before (a buffering proxy or gateway holds them), against {other:.0}% of the other streams")
        },
    },
];

impl Share {
    /// A finding when `group`, a value of `dim`, has the trait more often than the other streams of
    /// `all` (the module doc's rules), overall and within the strata of every other dimension where
    /// the two meet; this is share number `which` of [`SHARES`]. O(dimensions × strata).
    fn finding(&self, which: usize, who: &str, subject: &Value, dim: Dim, group: &Tested, (all, all_strata): (&Rollup, &Strata)) -> Option<Finding> {
        let total = |counts: BandCounts| counts.iter().fold((0, 0), |(k, w), (bk, bw)| (k + bk, w + bw));
        let ((known, with), (all_known, all_with)) = (total((self.by_band)(&group.rollup)), total((self.by_band)(all)));
        let (other_known, other_with) = (all_known.saturating_sub(known), all_with.saturating_sub(with));
        if known < MIN_STREAMS || other_known < MIN_STREAMS {
            return None;
        }
        let (rate, other_rate) = (with as f64 / known as f64, other_with as f64 / other_known as f64);
        let p = two_proportion(with, known, other_with, other_known)?;
        if p >= ALPHA || rate < 2.0 * other_rate || rate - other_rate < 0.05 {
            return None;
        }
        // Not where another dimension explains it: a model that stalls, most of whose streams are of
        // one scenario, makes that scenario stall more often too, though not within each model.
        let (mut by, mut worst_p, mut least_ratio) = (Vec::new(), 0.0f64, f64::INFINITY);
        for other in Dim::ALL.into_iter().filter(|&d| d != dim) {
            let (mine, theirs) = (&group.strata[other.index()], &all_strata[other.index()]);
            let tables = mine.iter().zip(theirs).flat_map(|(mine, theirs)| {
                mine[which].iter().zip(&theirs[which]).map(|(&(n1, x1), &(n, x))| (x1, n1, x.saturating_sub(x1), n.saturating_sub(n1)))
            });
            let within = mantel_haenszel(tables);
            if within.streams < MIN_STREAMS || within.other_streams < MIN_STREAMS {
                continue; // the two hardly meet in its strata: it cannot tell them apart
            }
            if within.p_value >= ALPHA || within.rate_ratio < 2.0 || within.rate_difference < 0.05 {
                return None;
            }
            by.push(other.name());
            (worst_p, least_ratio) = (worst_p.max(within.p_value), least_ratio.min(within.rate_ratio));
        }
        let effect = if other_rate > 0.0 { rate / other_rate } else { f64::INFINITY }.min(least_ratio);
        let strata = if self.by_length { by.iter().copied().chain(["length band"]).collect() } else { by.clone() };
        let mut evidence = json!({ "metric": self.metric, "streams": known, "rate": rate, "otherStreams": other_known, "otherRate": other_rate, "test": "two-proportion z-test", "pValue": p });
        let mut text = format!("{} ({}, {known} vs {other_known} streams", (self.words)(who, rate * 100.0, other_rate * 100.0), p_text(p));
        if !by.is_empty() {
            evidence["within"] = json!({ "strata": strata, "test": "Cochran-Mantel-Haenszel test", "pValue": worst_p, "rateRatio": least_ratio });
            text += "; so too within each ";
            text += &match strata.split_last() {
                Some((last, [])) => (*last).to_owned(),
                Some((last, rest)) => rest.join(", ") + " and " + last,
                None => String::new(),
            };
        }
        text += ").";
        Some(Finding { kind: self.kind, effect, text, evidence: with_fields(subject, evidence) })
    }
}

/// The window's busiest quarter of time buckets against its quietest quarter.
fn by_load(store: &dyn Store, window: &Window) -> Result<Vec<Finding>, StoreError> {
    let span = window.to - window.from;
    let Some(grain) = [Grain::Minute, Grain::Hour, Grain::Day].into_iter().find(|g| span / g.ms() <= MAX_BUCKETS as i64) else { return Ok(Vec::new()) };
    let needs = Needs { per_bucket: true, metrics: [true, true, false, false, false], extras: false, joint: JointNeed::Nothing };
    let mut buckets: BTreeMap<i64, Rollup> = BTreeMap::new();
    // Whole buckets only: a window's partial first and last ones would look quiet.
    let whole = |bucket: i64| bucket >= window.from && bucket + grain.ms() <= window.to;
    visit_window(store, window.from, window.to, grain, Selection::filtered(&window.filters), needs, |start, _, piece| {
        let bucket = grain.bucket_of(start as f64);
        if whole(bucket) {
            buckets.entry(bucket).or_default().merge_without_joint(piece);
        }
    })?;
    let mut by_count: Vec<&Rollup> = buckets.values().collect();
    if by_count.len() < MIN_LOAD_BUCKETS {
        return Ok(Vec::new());
    }
    by_count.sort_by_key(|r| r.count);
    let quarter = by_count.len() / 4;
    let merged = |rs: &[&Rollup]| rs.iter().fold(Rollup::default(), |mut all, r| {
        all.merge_without_joint(r);
        all
    });
    let (quiet, busy) = (merged(&by_count[..quarter]), merged(&by_count[by_count.len() - quarter..]));
    let per_minute = |r: &Rollup| r.count as f64 * 60_000.0 / (quarter as i64 * grain.ms()) as f64;
    let (busy_rpm, quiet_rpm) = (per_minute(&busy), per_minute(&quiet));
    if busy_rpm < 2.0 * quiet_rpm {
        return Ok(Vec::new());
    }
    let mut findings = Vec::new();
    for (metric, _, min_difference, _) in &COMPARED[..2] {
        let Some(c) = Comparison::of(busy.metric(*metric).sketch.clone(), quiet.metric(*metric).sketch.clone()) else { continue };
        if c.is_finding(MIN_LOAD_RATIO, *min_difference) {
            let text = format!(
                "Slower at peak: when traffic is highest ({busy_rpm:.1} streams a minute against {quiet_rpm:.1}), the median {} is {} against {} at quiet times ({:.1}×; {}).",
                metric.label(), ms(c.p50), ms(c.other_p50), c.ratio(), p_text(c.p_value)
            );
            let subject = json!({ "bucketMs": grain.ms(), "buckets": quarter, "rpm": busy_rpm, "otherRpm": quiet_rpm });
            findings.push(Finding { kind: "load", effect: c.ratio(), text, evidence: c.evidence(&subject, metric.name()) });
        }
    }
    Ok(findings)
}

/// One metric's distribution in a group against another's, with the Mann-Whitney U test.
struct Comparison {
    streams: u64,
    other_streams: u64,
    p50: f64,
    other_p50: f64,
    /// The chance that a value of the group is larger than one of the other side, ties counting half.
    chance_slower: f64,
    p_value: f64,
}

impl Comparison {
    /// `None` when a side has fewer than [`MIN_STREAMS`] values.
    fn of(group: Sketch, other: Sketch) -> Option<Comparison> {
        let (streams, other_streams) = (group.count(), other.count());
        if streams < MIN_STREAMS || other_streams < MIN_STREAMS {
            return None;
        }
        let (u, p_value) = mann_whitney_grouped(tied_counts(&group, &other))?;
        let chance_slower = u / (streams as f64 * other_streams as f64);
        Some(Comparison { streams, other_streams, p50: group.quantile(0.5)?, other_p50: other.quantile(0.5)?, chance_slower, p_value })
    }

    fn ratio(&self) -> f64 {
        if self.other_p50 > 0.0 {
            self.p50 / self.other_p50
        } else {
            f64::INFINITY
        }
    }

    fn is_finding(&self, min_ratio: f64, min_difference: f64) -> bool {
        self.p_value < ALPHA && self.ratio() >= min_ratio && self.p50 - self.other_p50 >= min_difference && self.chance_slower >= MIN_CHANCE_SLOWER
    }

    /// `subject`'s fields, then the metric, both sides and the test.
    fn evidence(&self, subject: &Value, metric: &str) -> Value {
        with_fields(subject, json!({
            "metric": metric, "streams": self.streams, "p50": self.p50, "otherStreams": self.other_streams, "otherP50": self.other_p50,
            "ratio": self.ratio(), "chanceSlower": self.chance_slower, "test": "Mann-Whitney U test", "pValue": self.p_value,
        }))
    }
}

/// `subject`'s fields (an object: where the finding lies), then `fields`'.
fn with_fields(subject: &Value, fields: Value) -> Value {
    let mut evidence = subject.clone();
    if let (Some(evidence), Value::Object(fields)) = (evidence.as_object_mut(), fields) {
        evidence.extend(fields);
    }
    evidence
}

/// Two sketches' counts per bucket, in increasing order of value (zeros first), as (`a`'s, `b`'s).
/// O(buckets).
fn tied_counts<'a>(a: &'a Sketch, b: &'a Sketch) -> impl Iterator<Item = (u64, u64)> + 'a {
    let ((a_zeros, a_buckets), (b_zeros, b_buckets)) = (a.buckets(), b.buckets());
    let (mut a_rest, mut b_rest) = (a_buckets.iter().peekable(), b_buckets.iter().peekable());
    std::iter::once((a_zeros, b_zeros)).chain(std::iter::from_fn(move || {
        let key = match (a_rest.peek(), b_rest.peek()) {
            (None, None) => return None,
            (Some(&&(k, _)), None) | (None, Some(&&(k, _))) => k,
            (Some(&&(k, _)), Some(&&(l, _))) => k.min(l),
        };
        let count = |rest: &mut std::iter::Peekable<std::slice::Iter<'_, (i32, u64)>>| rest.next_if(|&&(k, _)| k == key).map_or(0, |&(_, n)| n);
        Some((count(&mut a_rest), count(&mut b_rest)))
    }))
}

/// `all` less `part`, a sketch of some of its values (bucket counts subtracted; the extremes stay
/// `all`'s, which bound the rest's too). O(buckets).
fn without(all: &Sketch, part: &Sketch) -> Sketch {
    let ((zeros, buckets), (part_zeros, part_buckets)) = (all.buckets(), part.buckets());
    let mut remaining: Vec<(i32, u64)> = Vec::with_capacity(buckets.len());
    let mut theirs = part_buckets.iter().peekable();
    for &(key, n) in buckets {
        while theirs.next_if(|&&(k, _)| k < key).is_some() {}
        let taken = theirs.next_if(|&&(k, _)| k == key).map_or(0, |&(_, m)| m);
        if n > taken {
            remaining.push((key, n - taken));
        }
    }
    let (min, max) = (all.min().unwrap_or(0.0), all.max().unwrap_or(0.0));
    Sketch::from_parts(zeros.saturating_sub(part_zeros), remaining, min, max).unwrap_or_default()
}

/// A duration as people read it: whole ms below a second, else seconds to one decimal (two below 10 s).
fn ms(value: f64) -> String {
    if value < 1000.0 {
        format!("{value:.0} ms")
    } else {
        format!("{:.2} s", value / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_takes_a_part_away() {
        let (mut all, mut part, mut rest) = (Sketch::new(), Sketch::new(), Sketch::new());
        for i in 0..300 {
            let v = (i * 7 % 400) as f64;
            all.add(v);
            if i % 3 == 0 { part.add(v) } else { rest.add(v) }
        }
        assert_eq!(without(&all, &part).buckets(), rest.buckets());
        assert_eq!(without(&all, &all).count(), 0);
    }

    #[test]
    fn mann_whitney_sees_a_shift_and_not_noise() {
        let sketch = |values: &mut dyn Iterator<Item = f64>| {
            let mut s = Sketch::new();
            values.for_each(|v| s.add(v));
            s
        };
        let slow = Comparison::of(sketch(&mut (0..200).map(|i| 900.0 + (i % 50) as f64 * 10.0)), sketch(&mut (0..400).map(|i| 300.0 + (i % 50) as f64 * 10.0))).unwrap();
        assert!(slow.p_value < 1e-6 && slow.ratio() > 2.0 && slow.chance_slower == 1.0 && slow.is_finding(MIN_RATIO, 100.0));
        let same = Comparison::of(sketch(&mut (0..200).map(|i| 300.0 + (i % 50) as f64 * 10.0)), sketch(&mut (0..400).map(|i| 300.0 + (i % 50) as f64 * 10.0))).unwrap();
        assert!(same.p_value > 0.5 && !same.is_finding(MIN_RATIO, 100.0));
        assert!(Comparison::of(Sketch::new(), sketch(&mut (0..400).map(f64::from))).is_none(), "too few streams");
    }

    #[test]
    fn a_median_jumping_between_modes_is_no_finding() {
        // Fast (20-25 ms) and slow (80-85 ms) streams, 48:52 in the group and 52:48 in the others:
        // the medians fall in different modes, significantly so at this size, yet the two are alike.
        let mix = |fast_percent: usize| {
            let mut s = Sketch::new();
            (0..10_000).for_each(|i| s.add(if i % 100 < fast_percent { 20.0 } else { 80.0 } + (i % 7) as f64 * 0.7));
            s
        };
        let jump = Comparison::of(mix(48), mix(52)).unwrap();
        assert!(jump.p_value < ALPHA && jump.ratio() > 3.0, "the median rule alone would call it");
        assert!((jump.chance_slower - 0.52).abs() < 0.01 && !jump.is_finding(MIN_RATIO, 5.0), "{}", jump.chance_slower);
    }
}

