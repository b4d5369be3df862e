//! An experiment's data per unit: each unit's streams in the window, reduced to the sums the
//! statistics read, per arm. A unit counts from its first stream in the window with the streams
//! it has started by the window's end, so a unit still active at a look counts with what it has so
//! far (the A/A tests check that looks stay valid under this rule). Units seen in both arms are
//! left out (and counted): they were not assigned one arm. So are streams without a unit (counted
//! too): with `unit=user`, those of pages whose app gave the meter no `experimentUnit`.
//!
//! Bounded: at most [`Limits::COMPARE`]'s units and values are kept. Past either, a uniform
//! sample of units is kept, the same for both arms: those whose id hashes lowest (a bottom-k
//! sample), so a unit is kept or dropped whole, and the same data give the same sample. Memory
//! O(kept units + kept values); time O(records read · log kept units).

use crate::dims::{Dim, Filters, Metric, Unit};
use crate::rollup::{sketch_key, Row, Slo};
use crate::store::{Store, StoreError};
use super::sample::UnitSample;

/// The most units and metric values (both arms) one read keeps.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub units: usize,
    pub values: usize,
}

impl Limits {
    /// A comparison's: about 40 MB at most.
    pub const COMPARE: Limits = Limits { units: 100_000, values: 400_000 };
}

/// One unit's streams, reduced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UnitFigures {
    pub streams: u64,
    /// The compared metric's values of its streams (those with a value).
    pub values: Vec<f64>,
    pub stall_known: u64,
    pub stalled: u64,
    pub reached: u64,
    pub stopped: u64,
    /// Streams meeting the SLO (by sketch bucket, as the summary counts them).
    pub good: u64,
}

impl UnitFigures {
    fn add(&mut self, row: &Row, metric: Metric, slo: &Slo) {
        self.streams += 1;
        self.values.extend(row.metric(metric));
        if let Some(stalls) = row.stall_count {
            self.stall_known += 1;
            self.stalled += u64::from(stalls > 0);
        }
        self.reached += u64::from(row.reached);
        self.stopped += u64::from(row.reached && row.stopped);
        if !slo.is_empty() {
            self.good += slo.met_in(&[((sketch_key(row.ttft_ms), sketch_key(row.tpot_ms)), 1)]);
        }
    }
}

/// The units of the two arms.
#[derive(Debug, Default)]
pub struct Arms {
    pub a: Vec<UnitFigures>,
    pub b: Vec<UnitFigures>,
    /// Units seen in both arms, left out.
    pub mixed: u64,
    /// Streams without a unit, left out.
    pub without_unit: u64,
    /// Whether units were left out to stay within the [`Limits`].
    pub sampled: bool,
}

/// What to read: the window's records with `dimension` = `a` or `b` among `filters`.
pub struct ArmsQuery<'a> {
    pub from: i64,
    pub to: i64,
    pub filters: &'a Filters,
    pub dimension: Dim,
    pub a: &'a str,
    pub b: &'a str,
    pub metric: Metric,
    pub slo: &'a Slo,
    pub unit: Unit,
    pub limits: Limits,
}

/// A unit being read: its arm (`None` once seen in both) and its figures.
struct Reading {
    in_a: Option<bool>,
    figures: UnitFigures,
}

impl Default for Reading {
    fn default() -> Reading {
        Reading { in_a: Some(true), figures: UnitFigures::default() }
    }
}

/// Reads the arms' units from `store`, bounded as the module doc says.
pub fn read_arms(store: &dyn Store, q: &ArmsQuery<'_>) -> Result<Arms, StoreError> {
    let mut filters = q.filters.to_vec();
    filters.push((q.dimension, vec![q.a.to_owned(), q.b.to_owned()]));
    let mut units: UnitSample<Reading> = UnitSample::new();
    let mut values = 0usize;
    let mut without_unit = 0u64;
    store.unit_rows(q.from, q.to, &filters, q.unit, &mut |id, row| {
        if id.is_empty() {
            without_unit += 1;
            return;
        }
        let in_a = row.dims[q.dimension.index()].as_deref() == Some(q.a);
        let Some(reading) = units.unit(id) else { return };
        if reading.figures.streams == 0 {
            reading.in_a = Some(in_a);
        } else if reading.in_a.is_some_and(|was| was != in_a) {
            reading.in_a = None;
        }
        reading.figures.add(&row, q.metric, q.slo);
        values += usize::from(row.metric(q.metric).is_some());
        while units.len() > q.limits.units || values > q.limits.values {
            let Some(gone) = units.drop_highest() else { break };
            values -= gone.figures.values.len();
        }
    })?;
    let mut arms = Arms { sampled: units.sampled(), without_unit, ..Arms::default() };
    for reading in units.into_units() {
        match reading.in_a {
            Some(true) => arms.a.push(reading.figures),
            Some(false) => arms.b.push(reading.figures),
            None => arms.mixed += 1,
        }
    }
    Ok(arms)
}
