//! Which rollups and which raw records answer a time window: the whole days in it from day rollups,
//! the whole hours left from hour rollups, the whole minutes left from minute rollups, and only the
//! partial minutes at the two ends from records. A window of any length reads O(days + 48 hours +
//! 120 minutes) rollups per group and at most two minutes of records.

use super::Grain;
use crate::dims::{EARLIEST_MS, LATEST_MS};

/// One part of a window, a half-open `[start, end)` epoch-ms range, and how it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece {
    /// From the stored rollups of this grain whose buckets start in the range.
    Rollups(Grain, i64, i64),
    /// From the records that start in the range.
    Records(i64, i64),
}

/// The pieces of `[from, to)`, in time order, using grains no coarser than `coarsest`. `from` and
/// `to` are first clamped to [`EARLIEST_MS`]..=[`LATEST_MS`] (the query parameters' range, holding
/// every record), so no bucket arithmetic can overflow whatever they are. O(1): at most 7 pieces.
pub fn plan(from: i64, to: i64, coarsest: Grain) -> Vec<Piece> {
    let mut out = Vec::new();
    let grains: Vec<Grain> = Grain::ALL.into_iter().rev().filter(|g| *g <= coarsest).collect();
    cover(from.clamp(EARLIEST_MS, LATEST_MS), to.clamp(EARLIEST_MS, LATEST_MS), &grains, &mut out);
    out
}

fn cover(from: i64, to: i64, grains: &[Grain], out: &mut Vec<Piece>) {
    if from >= to {
        return;
    }
    let Some((&grain, finer)) = grains.split_first() else {
        out.push(Piece::Records(from, to));
        return;
    };
    let ms = grain.ms();
    let (start, end) = (from.div_euclid(ms) * ms + if from.rem_euclid(ms) == 0 { 0 } else { ms }, to.div_euclid(ms) * ms);
    if start >= end {
        return cover(from, to, finer, out);
    }
    cover(from, start, finer, out);
    out.push(Piece::Rollups(grain, start, end));
    cover(end, to, finer, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use Piece::{Records, Rollups};
    const M: i64 = 60_000;
    const H: i64 = 3_600_000;
    const D: i64 = 86_400_000;

    #[test]
    fn whole_units_from_rollups_and_partial_minutes_from_records_in_time_order() {
        let p = plan(5 * D - H - 90_001, 7 * D + 2 * H + 3 * M + 7, Grain::Day);
        assert_eq!(
            p,
            vec![
                Records(5 * D - H - 90_001, 5 * D - H - M),
                Rollups(Grain::Minute, 5 * D - H - M, 5 * D - H),
                Rollups(Grain::Hour, 5 * D - H, 5 * D),
                Rollups(Grain::Day, 5 * D, 7 * D),
                Rollups(Grain::Hour, 7 * D, 7 * D + 2 * H),
                Rollups(Grain::Minute, 7 * D + 2 * H, 7 * D + 2 * H + 3 * M),
                Records(7 * D + 2 * H + 3 * M, 7 * D + 2 * H + 3 * M + 7),
            ]
        );
    }

    #[test]
    fn short_capped_or_out_of_range_windows() {
        assert_eq!(plan(10, 20, Grain::Day), vec![Records(10, 20)]);
        assert_eq!(plan(0, 2 * H, Grain::Minute), vec![Rollups(Grain::Minute, 0, 2 * H)]);
        assert_eq!(plan(0, D, Grain::Day), vec![Rollups(Grain::Day, 0, D)]);
        assert_eq!(plan(5, 5, Grain::Day), vec![]);
        // Clamped to the range the parameters allow: nothing overflows, nothing before 1970 is read.
        assert_eq!(plan(i64::MIN, i64::MIN + 1, Grain::Day), vec![]);
        assert_eq!(plan(i64::MAX - 1, i64::MAX, Grain::Day), vec![]);
        assert_eq!(plan(-M, M, Grain::Hour), vec![Rollups(Grain::Minute, 0, M)]);
        let whole = plan(i64::MIN, i64::MAX, Grain::Day);
        assert_eq!(whole.first(), Some(&Rollups(Grain::Day, 0, LATEST_MS)));
        assert_eq!(whole.len(), 1, "10000-01-01 is a day boundary");
    }
}
