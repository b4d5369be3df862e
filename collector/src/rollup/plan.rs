//! Which rollups and which raw records answer a time window: the whole days in it from day rollups,
//! the whole hours left from hour rollups, the whole minutes left from minute rollups, and only the
//! partial minutes at the two ends from records. A window of any length reads O(days + 48 hours +
//! 120 minutes) rollups per group and at most two minutes of records.

use super::Grain;

/// Half-open `[from, to)` epoch-ms ranges to read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    pub rollups: Vec<(Grain, i64, i64)>,
    pub records: Vec<(i64, i64)>,
}

/// The plan for `[from, to)`, using grains no coarser than `coarsest`.
pub fn plan(from: i64, to: i64, coarsest: Grain) -> Plan {
    let mut out = Plan::default();
    let grains: Vec<Grain> = Grain::ALL.into_iter().rev().filter(|g| *g <= coarsest).collect();
    cover(from, to, &grains, &mut out);
    out
}

fn cover(from: i64, to: i64, grains: &[Grain], out: &mut Plan) {
    if from >= to {
        return;
    }
    let Some((&grain, finer)) = grains.split_first() else {
        out.records.push((from, to));
        return;
    };
    let ms = grain.ms();
    let (start, end) = (from.div_euclid(ms) * ms + if from.rem_euclid(ms) == 0 { 0 } else { ms }, to.div_euclid(ms) * ms);
    if start >= end {
        return cover(from, to, finer, out);
    }
    cover(from, start, finer, out);
    out.rollups.push((grain, start, end));
    cover(end, to, finer, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    const M: i64 = 60_000;
    const H: i64 = 3_600_000;
    const D: i64 = 86_400_000;

    #[test]
    fn whole_units_from_rollups_and_partial_minutes_from_records() {
        let p = plan(5 * D - H - 90_001, 7 * D + 2 * H + 3 * M + 7, Grain::Day);
        assert_eq!(
            p.rollups,
            vec![
                (Grain::Minute, 5 * D - H - M, 5 * D - H),
                (Grain::Hour, 5 * D - H, 5 * D),
                (Grain::Day, 5 * D, 7 * D),
                (Grain::Hour, 7 * D, 7 * D + 2 * H),
                (Grain::Minute, 7 * D + 2 * H, 7 * D + 2 * H + 3 * M),
            ]
        );
        assert_eq!(p.records, vec![(5 * D - H - 90_001, 5 * D - H - M), (7 * D + 2 * H + 3 * M, 7 * D + 2 * H + 3 * M + 7)]);
    }

    #[test]
    fn short_or_capped_windows() {
        assert_eq!(plan(10, 20, Grain::Day), Plan { rollups: vec![], records: vec![(10, 20)] });
        assert_eq!(plan(0, 2 * H, Grain::Minute).rollups, vec![(Grain::Minute, 0, 2 * H)]);
        assert_eq!(plan(0, D, Grain::Day).rollups, vec![(Grain::Day, 0, D)]);
        assert_eq!(plan(-M, 0, Grain::Hour).rollups, vec![(Grain::Minute, -M, 0)]);
        assert_eq!(plan(5, 5, Grain::Day), Plan::default());
    }
}
