//! Reads a time window the cheap way ([`crate::rollup::plan`]): stored rollups for the whole
//! minutes, hours and days in it, records for the partial minutes at its ends; and chooses which
//! groups a query answers before it reads them, so its memory is bounded whatever was ingested.

use crate::dims::Dims;
use crate::query::params::Window;
use crate::rollup::plan::{plan, Piece};
use crate::rollup::{Grain, Rollup};
use crate::store::{Busiest, GroupSet, Needs, Selection, Store, StoreError};

/// The most groups an answer holds (`/api/summary`; `/api/timeseries` holds fewer for many buckets).
pub const MAX_GROUPS: usize = 1000;

/// Calls `visit(start, dims, rollup)` for every piece of `[from, to)` that `selection` selects, in
/// time order (`start` never decreases): each stored rollup (at grains up to `coarsest`, `start` its
/// bucket start, or that of the first bucket of its piece when `needs` merges buckets: see
/// [`Needs`]) and each record of a partial minute (as a one-stream rollup, `start` its start time
/// rounded down). Merging every piece gives the window's rollup, as far as `needs` reads it. Time
/// O(rollups read + records read); memory O(one rollup) beside what `visit` keeps.
pub fn visit_window(store: &dyn Store, from: i64, to: i64, coarsest: Grain, selection: Selection<'_>, needs: Needs, mut visit: impl FnMut(i64, &Dims, &Rollup)) -> Result<(), StoreError> {
    for piece in plan(from, to, coarsest) {
        match piece {
            Piece::Rollups(grain, start, end) => store.rollups(grain, start, end, selection, needs, &mut |key, rollup| visit(key.bucket, &key.dims, &rollup))?,
            Piece::Records(start, end) => store.rows(start, end, selection, &mut |row| {
                let mut single = Rollup::default();
                single.add(&row);
                visit(row.started_at.floor() as i64, &row.dims, &single);
            })?,
        }
    }
    Ok(())
}

/// The groups a query over a window answers, chosen by counting streams per group in the store
/// (counts only) before any rollup is read: at most `limit`, the busiest.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupChoice {
    /// `None` without `groupBy`: one group at most, nothing to choose.
    busiest: Option<Busiest>,
}

impl GroupChoice {
    /// Ranks the groups of `window` ([`Store::busiest_groups`]) and keeps the `limit` with the most
    /// streams. O(rollups and partial-minute records in the window) in the store; memory O(limit).
    pub fn choose(store: &dyn Store, window: &Window, limit: usize) -> Result<GroupChoice, StoreError> {
        if window.group_by.is_empty() {
            return Ok(GroupChoice { busiest: None });
        }
        let busiest = store.busiest_groups(window.from, window.to, &window.group_by, &window.filters, limit)?;
        Ok(GroupChoice { busiest: Some(busiest) })
    }

    /// The window's filters, restricted to the chosen groups: a read with it sees no other group.
    pub fn selection<'a>(&'a self, window: &'a Window) -> Selection<'a> {
        let groups = self.busiest.as_ref().map(|b| GroupSet { by: &window.group_by, keys: &b.keys });
        Selection { filters: &window.filters, groups }
    }

    /// How many groups the window holds, `answered` being how many the read found.
    pub fn total(&self, answered: usize) -> u64 {
        self.busiest.as_ref().map_or(answered as u64, |b| b.total)
    }

    /// Whether groups were left out (more than the limit exist).
    pub fn truncated(&self) -> bool {
        self.busiest.as_ref().is_some_and(|b| b.total > b.keys.len() as u64)
    }
}
