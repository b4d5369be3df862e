//! Reads a time window the cheap way ([`crate::rollup::plan`]): stored rollups for the whole
//! minutes, hours and days in it, records for the partial minutes at its ends.

use crate::dims::Dims;
use crate::rollup::{plan, Grain, Rollup};
use crate::store::{Filters, Store, StoreError};

/// Calls `visit(start, dims, rollup)` for every piece of `[from, to)` matching `filters`: each
/// stored rollup (at grains up to `coarsest`, `start` its bucket start) and each record of a partial
/// minute (as a one-stream rollup, `start` its start time rounded down). Merging every piece gives
/// the window's rollup. O(rollups read + records read).
pub fn visit_window(store: &dyn Store, from: i64, to: i64, coarsest: Grain, filters: &Filters, mut visit: impl FnMut(i64, &Dims, &Rollup)) -> Result<(), StoreError> {
    let plan = plan::plan(from, to, coarsest);
    for (grain, start, end) in plan.rollups {
        for (key, rollup) in store.rollups(grain, start, end, filters)? {
            visit(key.bucket, &key.dims, &rollup);
        }
    }
    for (start, end) in plan.records {
        for row in store.rows(start, end, filters)? {
            let mut single = Rollup::default();
            single.add(&row);
            visit(row.started_at.floor() as i64, &row.dims, &single);
        }
    }
    Ok(())
}
