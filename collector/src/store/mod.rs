//! Storage behind one trait, so the HTTP layer and the analytics do not know which database holds
//! the records.
//!
//! Backends:
//! - [`sqlite::SqliteStore`]: embedded, one file in WAL mode (`--db PATH`), the default.
//! - [`clickhouse::ClickHouseStore`]: ClickHouse over its HTTP interface (`--clickhouse URL`).
//!
//! A store keeps the records and their rollups ([`crate::rollup`]) at every grain, and answers the
//! three reads the analytics are built from ([`crate::query`]). The methods are blocking; the HTTP
//! layer calls them from `tokio::task::spawn_blocking`.

pub mod clickhouse;
pub mod sqlite;

use crate::dims::{Dim, Metric};
use crate::rollup::{Grain, Rollup, RollupKey, Row};
use crate::validate::Batch;
use std::fmt;

/// What storing a batch did: `accepted` records were new, `duplicates` had an id already stored
/// (or repeated within the batch) and were ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Inserted {
    pub accepted: usize,
    pub duplicates: usize,
}

/// Dimension filters: each dimension at most once, matching any of its values (never a null).
pub type Filters = [(Dim, Vec<String>)];

/// A storage failure (the HTTP layer answers 500 or 503 and logs it).
#[derive(Debug)]
pub struct StoreError(pub String);

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StoreError {}

pub trait Store: Send + Sync + 'static {
    /// Stores every record of the batch whose id is new, and adds the new ones of metric definition
    /// version 1 to the rollups of every grain, all visible to the reads below once this returns.
    /// Records whose id is already stored (or repeated in the batch) are skipped and counted as
    /// duplicates. Nothing of the batch is stored when an error is returned (see each backend for
    /// how). `received_at` is epoch ms.
    fn insert_batch(&self, batch: &Batch, received_at: i64) -> Result<Inserted, StoreError>;

    /// The rollups of `grain` whose bucket starts in `[from, to)` and whose dimensions match
    /// `filters`, one per key.
    fn rollups(&self, grain: Grain, from: i64, to: i64, filters: &Filters) -> Result<Vec<(RollupKey, Rollup)>, StoreError>;

    /// The records of definition version 1 with `from <= startedAt < to` matching `filters`.
    fn rows(&self, from: i64, to: i64, filters: &Filters) -> Result<Vec<Row>, StoreError>;

    /// The non-null values of `metric` over the same records as [`Store::rows`].
    fn values(&self, metric: Metric, from: i64, to: i64, filters: &Filters) -> Result<Vec<f64>, StoreError>;

    /// Whether the store answers (for `/health`).
    fn ping(&self) -> Result<(), StoreError>;
}
