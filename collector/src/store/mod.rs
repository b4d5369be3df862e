//! Storage behind one trait, so the HTTP layer does not know which database holds the records.
//!
//! Backends:
//! - [`sqlite::SqliteStore`]: embedded, one file in WAL mode (`--db PATH`), the default.
//! - ClickHouse over its HTTP interface (`--clickhouse URL`): not written yet. It will implement
//!   [`Store`] the same way (its `summary` in SQL, or over per-minute rollups), and the integration
//!   tests in `tests/` are meant to run against both (they only use the HTTP API and [`Store`]).
//!
//! The methods are blocking; the HTTP layer calls them from `tokio::task::spawn_blocking`.

pub mod sqlite;

use crate::summary::{Summary, SummaryQuery};
use crate::validate::Batch;
use std::fmt;

/// What storing a batch did: `accepted` records were new, `duplicates` had an id already stored
/// (or repeated within the batch) and were ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Inserted {
    pub accepted: usize,
    pub duplicates: usize,
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

pub trait Store: Send + Sync + 'static {
    /// Stores every record of the batch, or none (one transaction): records whose id is already
    /// stored are skipped and counted as duplicates. `received_at` is epoch ms.
    fn insert_batch(&self, batch: &Batch, received_at: i64) -> Result<Inserted, StoreError>;

    /// The `/api/summary` answer over the records of definition version 1 (see [`crate::summary`]).
    fn summary(&self, query: &SummaryQuery) -> Result<Summary, StoreError>;

    /// Whether the store answers (for `/health`).
    fn ping(&self) -> Result<(), StoreError>;
}
