//! The label sets `/metrics` exposes, bounded: the first `max` distinct label sets get series of
//! their own, in the order they came; a record of any other is counted under `model="other",
//! scenario="other", variant="other"` and in the folded count.
//!
//! First come rather than the busiest: a label set never loses its series, so every series is a
//! counter that only grows, and sums over label sets stay exact in PromQL (moving a series' past into
//! "other" would count it twice in `sum(increase(...))`). Whoever sends the first label sets after a
//! start can fill the table; `llm_ux_folded_records_total` shows that it happened.

use crate::prometheus::labels::{self, LabelSet};
use crate::prometheus::series::Series;
use crate::validate::Record;
use std::collections::HashMap;

#[derive(Debug, Clone)]
pub struct Table {
    max: usize,
    index: HashMap<LabelSet, usize>,
    /// In the order they came; at most `max` plus the "other" label set.
    pub rows: Vec<(LabelSet, Series)>,
    /// Records counted under "other" because the table was full.
    pub folded: u64,
}

impl Table {
    /// A table of at most `max` label sets (at least 1), plus the one folded records go to.
    pub fn new(max: usize) -> Table {
        Table { max: max.max(1), index: HashMap::new(), rows: Vec::new(), folded: 0 }
    }

    /// Counts `record` under `labels` ([`labels::of`] it), or under "other" when the table is full.
    /// O(label lengths) for the lookup, O(log bounds) to count.
    pub fn add(&mut self, labels: LabelSet, record: &Record) {
        let key = if self.index.contains_key(&labels) || self.index.len() < self.max {
            labels
        } else {
            self.folded += 1;
            labels::other()
        };
        // "other" may also come as a record's own labels: one series either way.
        let rows = &mut self.rows;
        let at = *self.index.entry(key).or_insert_with_key(|key| {
            rows.push((key.clone(), Series::default()));
            rows.len() - 1
        });
        rows[at].1.add(record);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prometheus::test_record;
    use serde_json::json;

    #[test]
    fn the_first_label_sets_stay_the_rest_fold_into_other() {
        let mut table = Table::new(2);
        let all_other = json!({ "model": "other", "scenario": "other", "variant": "other" });
        for fields in ["a", "b", "c", "a", "d", "other", "b"].map(|m| json!({ "model": m })).into_iter().chain([all_other]) {
            let r = test_record(fields);
            table.add(labels::of(&r), &r);
        }
        let models: Vec<&str> = table.rows.iter().map(|(l, _)| l[0].as_str()).collect();
        assert_eq!(models, ["a", "b", "other"]);
        assert_eq!(table.rows[2].0, labels::other());
        assert_eq!(table.folded, 3, "c, d and other/chat/A; a record labelled other/other/other is not folded");
        let count = |i: usize| table.rows[i].1.streams.iter().sum::<u64>();
        assert_eq!((count(0), count(1), count(2)), (2, 2, 4));
    }
}
