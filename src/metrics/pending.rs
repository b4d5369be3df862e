//! Output events that arrived but are not painted yet, grouped by arrival time.
//!
//! Events of one chunk share an arrival time, so a group is (time, count). The number of groups is
//! bounded: past [`MAX_GROUPS`] the two oldest merge at their weighted mean time, so a page that never
//! paints (a background tab) costs O(1) memory, at the price of approximate render delays.

use alloc::vec::Vec;

/// Most groups kept between two paints.
pub const MAX_GROUPS: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Group {
    pub arrived_at: f64,
    pub count: u64,
    pub has_answer: bool,
}

/// Once full, the groups are a ring, the oldest at `first`: an arrival merges the two oldest in O(1),
/// where moving the other 63 down was a 1.5 KB copy per chunk for as long as nothing paints (a
/// background tab, a manual stream that never calls `rendered`). Until then `first` is 0.
#[derive(Clone, Debug, Default)]
pub struct Pending {
    groups: Vec<Group>,
    first: usize,
}

impl Pending {
    /// O(1) (amortized, while the groups grow to their bound).
    pub fn push(&mut self, group: Group) {
        if self.groups.len() < MAX_GROUPS {
            return self.groups.push(group);
        }
        // The oldest's slot takes the new group, after the oldest is merged into the next, now the oldest.
        let slot = self.first % MAX_GROUPS;
        self.first = (slot + 1) % MAX_GROUPS;
        let oldest = core::mem::replace(&mut self.groups[slot], group);
        let next = &mut self.groups[self.first];
        let total = (oldest.count + next.count) as f64;
        next.arrived_at = (oldest.arrived_at * oldest.count as f64 + next.arrived_at * next.count as f64) / total;
        next.count += oldest.count;
        next.has_answer |= oldest.has_answer;
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Every group, oldest first.
    pub fn groups(&self) -> impl Iterator<Item = &Group> {
        let groups = &self.groups;
        (0..groups.len()).filter_map(move |i| groups.get((self.first + i) % MAX_GROUPS))
    }

    /// Removes every group.
    pub fn clear(&mut self) {
        self.groups.clear();
        self.first = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_bound_the_two_oldest_merge_at_their_weighted_mean() {
        let mut pending = Pending::default();
        // Twice, the second time after a clear while the ring had turned part way.
        for round in 0..2 {
            // The same merge done plainly: remove the oldest, fold it into the next.
            let mut expected: Vec<Group> = Vec::new();
            for i in 0..3 * MAX_GROUPS as u64 + 17 * round {
                let group = Group { arrived_at: (i * i % 97) as f64 + i as f64 * 3.5, count: 1 + i % 5, has_answer: i % 7 == 3 };
                if expected.len() == MAX_GROUPS {
                    let oldest = expected.remove(0);
                    let next = &mut expected[0];
                    let total = (oldest.count + next.count) as f64;
                    next.arrived_at = (oldest.arrived_at * oldest.count as f64 + next.arrived_at * next.count as f64) / total;
                    next.count += oldest.count;
                    next.has_answer |= oldest.has_answer;
                }
                expected.push(group);
                pending.push(group);
                assert_eq!(pending.groups().copied().collect::<Vec<_>>(), expected, "after {} groups", i + 1);
            }
            pending.clear();
            assert!(pending.is_empty() && pending.groups().next().is_none());
        }
    }
}
