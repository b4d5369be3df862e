//! Storage behind one trait, so the HTTP layer and the analytics do not know which database holds
//! the records.
//!
//! Backends:
//! - [`sqlite::SqliteStore`]: embedded, one file in WAL mode (`--db PATH`), the default.
//! - [`clickhouse::ClickHouseStore`]: ClickHouse over its HTTP interface (`--clickhouse URL`), any
//!   number of collectors on one database.
//!
//! A store keeps the records and their rollups ([`crate::rollup`]) at every grain, and answers the
//! reads the analytics are built from ([`crate::query::window`]): rollups, records and records by unit, each
//! streamed to a visitor, the ranking of groups by their number of streams, and single streams
//! sorted by a figure ([`stream`]). The methods are
//! blocking; the HTTP layer calls them from `tokio::task::spawn_blocking`.

pub mod clickhouse;
pub mod sqlite;
pub mod stream;

use crate::dims::{Dim, Filters, GroupKey, Unit};
use crate::rollup::{Grain, Rollup, RollupKey, Row, Slo};
use stream::{Order, Stream};
use crate::validate::Batch;
use std::fmt;

/// What storing a batch did: the records at `accepted_at` (positions in the batch, ascending) were new
/// (what `/metrics` counts: [`crate::prometheus`]); `duplicates` had an id already stored (or repeated
/// within the batch) and were ignored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inserted {
    pub accepted_at: Vec<usize>,
    pub duplicates: usize,
}

impl Inserted {
    /// A batch of `records` records of which those at `accepted_at` were new.
    pub fn of(records: usize, accepted_at: Vec<usize>) -> Inserted {
        Inserted { duplicates: records - accepted_at.len(), accepted_at }
    }

    /// How many records were new.
    pub fn accepted(&self) -> usize {
        self.accepted_at.len()
    }
}


/// What a read covers besides its time range: the records matching `filters` and, when `groups` is
/// set, only those of the listed groups.
#[derive(Debug, Clone, Copy)]
pub struct Selection<'a> {
    pub filters: &'a Filters,
    pub groups: Option<GroupSet<'a>>,
}

/// Records whose values of `by` (in order) are one of `keys`; a null matches a null.
#[derive(Debug, Clone, Copy)]
pub struct GroupSet<'a> {
    pub by: &'a [Dim],
    pub keys: &'a [GroupKey],
}

impl<'a> Selection<'a> {
    /// Every record matching `filters`.
    pub fn filtered(filters: &'a Filters) -> Selection<'a> {
        Selection { filters, groups: None }
    }
}

/// What a caller of [`Store::rollups`] reads from the rollups, so that a store may leave the rest
/// out (ClickHouse then reads a fraction of its bucket counts; SQLite reads whole rollups anyway).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Needs {
    /// One rollup per bucket (a time series). Without it the caller merges all the buckets of the
    /// range, and the store may visit one rollup per dimensions instead, merged over the range and
    /// keyed by the range's start.
    pub per_bucket: bool,
    /// The metrics whose distributions the caller reads, by [`crate::dims::Metric::index`]; the others' may be
    /// empty.
    pub metrics: [bool; 5],
    /// The stops and the length bands' figures ([`crate::rollup::extras`]); without it they may be
    /// empty.
    pub extras: bool,
    /// The joint (TTFT, TPOT) counts, which goodput reads.
    pub joint: JointNeed,
}

/// The joint (TTFT, TPOT) counts a caller of [`Store::rollups`] reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum JointNeed {
    /// None: `joint` may be empty.
    Nothing,
    /// Only the streams meeting this SLO ([`Rollup::good`]): `joint` may be reduced to them and
    /// the others ([`Slo::reduce`]).
    GoodFor(Slo),
    /// Every count.
    All,
}

impl JointNeed {
    /// What goodput for `slo` reads: nothing when `slo` is empty.
    pub fn goodput(slo: &Slo) -> JointNeed {
        if slo.is_empty() {
            JointNeed::Nothing
        } else {
            JointNeed::GoodFor(*slo)
        }
    }
}

impl Needs {
    /// Every figure of every bucket's rollup.
    pub const ALL: Needs = Needs { per_bucket: true, metrics: [true; 5], extras: true, joint: JointNeed::All };
}

/// The result of [`Store::busiest_groups`]: at most `limit` group keys, the busiest first, and how
/// many groups there are in all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Busiest {
    pub keys: Vec<GroupKey>,
    pub total: u64,
}

/// A cadence as both stores keep it: its JSON text, `[[420,1],[2100,60]]` (at most 577 bytes),
/// not an array type, because ClickHouse cannot make an array nullable and `[]` (no output) must
/// stay apart from no cadence at all (NULL: a package before the field). The same text in both
/// stores, readable by their JSON functions. O(points).
pub fn cadence_text(points: &[[u32; 2]]) -> String {
    serde_json::to_string(points).unwrap_or_default()
}

/// The points of a stored [`cadence_text`]; an error for text that is not one.
pub fn cadence_points(text: &str) -> Result<Vec<[u32; 2]>, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError(format!("a stored cadence is not [[ms, tokens], ...]: {e}")))
}

/// A storage failure (the HTTP layer answers 500 or 503 and logs it).
#[derive(Debug)]
pub struct StoreError(pub String);

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StoreError {}

/// The reads stream: each hands rows to a visitor as they are read, so a read holds one row at a
/// time whatever the size of its answer; the visitor's own memory is the caller's concern.
pub trait Store: Send + Sync + 'static {
    /// Stores every record of the batch whose id is new, and adds the new ones of metric definition
    /// version 1 to the rollups of every grain, all visible to the reads below once this returns.
    /// Records whose id is already stored (or repeated in the batch) are skipped and counted as
    /// duplicates. After an error the sender retries, and the figures count each record once
    /// whatever part of the batch the failed write stored (SQLite stores none of it; ClickHouse
    /// may have stored it, and the retry finds the copies). `received_at` is epoch ms.
    fn insert_batch(&self, batch: &Batch, received_at: i64) -> Result<Inserted, StoreError>;

    /// Calls `visit` with each rollup of `grain` whose bucket starts in `[from, to)` and whose
    /// dimensions `selection` selects, one per key, in order of bucket start, with at least what
    /// `needs` asks for. O(rollups read).
    fn rollups(&self, grain: Grain, from: i64, to: i64, selection: Selection<'_>, needs: Needs, visit: &mut dyn FnMut(RollupKey, Rollup)) -> Result<(), StoreError>;

    /// Calls `visit` with each record of definition version 1 with `from <= startedAt < to` that
    /// `selection` selects, in order of `startedAt`. O(records read).
    fn rows(&self, from: i64, to: i64, selection: Selection<'_>, visit: &mut dyn FnMut(Row)) -> Result<(), StoreError>;

    /// Calls `visit` with each record [`Store::rows`] reads for `filters`, and the `unit` it belongs
    /// to (an experiment's unit of randomization, [`crate::query::experiment`]), in no particular order.
    /// O(records read).
    fn unit_rows(&self, from: i64, to: i64, filters: &Filters, unit: Unit, visit: &mut dyn FnMut(String, Row)) -> Result<(), StoreError>;

    /// The groups (records projected on `group_by`, which must not be empty) of the records of
    /// definition version 1 in `[from, to)` matching `filters`: the `limit` with the most records,
    /// ties in key order (a null first, then strings by their bytes), and the number of groups.
    /// Counts only, in the database: O(rollups and partial-minute records in the window) time, and
    /// memory for `limit` keys.
    fn busiest_groups(&self, from: i64, to: i64, group_by: &[Dim], filters: &Filters, limit: usize) -> Result<Busiest, StoreError>;

    /// Calls `visit` with the first `order.limit` records of definition version 1 with `from <=
    /// startedAt < to` matching `filters`, each once, in `order` (a null value of the sort column
    /// last, ties by id). Sorted in the database ([`crate::api::streams`] says what that costs).
    fn streams(&self, from: i64, to: i64, filters: &Filters, order: &Order, visit: &mut dyn FnMut(Stream)) -> Result<(), StoreError>;

    /// Whether the store answers (for `/health`), without waiting behind queries.
    fn ping(&self) -> Result<(), StoreError>;

    /// Brings the store to the state its own background upkeep keeps it in (ClickHouse: each
    /// closed day's rollups merged), for tools that fill a store and then time its reads.
    fn upkeep(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// How many [`Store::insert_batch`] calls the HTTP layer lets run at once (each holds a blocking
    /// thread while it waits). Past one, SQLite serializes them; ClickHouse gathers them into one
    /// insert, so it wants many.
    fn writes_at_once(&self) -> usize {
        16
    }
}
