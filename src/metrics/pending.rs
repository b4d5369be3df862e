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

#[derive(Clone, Debug, Default)]
pub struct Pending {
    groups: Vec<Group>,
}

impl Pending {
    pub fn push(&mut self, group: Group) {
        // The oldest merged into the next in place, then the rest moved down: `Vec::remove`'s code (and
        // its bounds check's) was 219 B of wasm.
        let full = self.groups.len() == MAX_GROUPS;
        if let (true, [oldest, next, ..]) = (full, &mut self.groups[..]) {
            let total = (oldest.count + next.count) as f64;
            next.arrived_at = (oldest.arrived_at * oldest.count as f64 + next.arrived_at * next.count as f64) / total;
            next.count += oldest.count;
            next.has_answer |= oldest.has_answer;
            self.groups.copy_within(1.., 0);
            self.groups.pop();
        }
        self.groups.push(group);
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Every group, oldest first.
    pub fn groups(&self) -> &[Group] {
        &self.groups
    }

    /// Removes every group. With [`Pending::groups`], a loop and a clear, not `drain`, whose drop (moving
    /// a tail that is never there) was code in the wasm; and a plain loop, not a closure, whose captures
    /// the wasm build kept in memory.
    pub fn clear(&mut self) {
        self.groups.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_bound_the_two_oldest_merge_at_their_weighted_mean() {
        let mut pending = Pending::default();
        // The same merge done plainly: remove the oldest, fold it into the next.
        let mut expected: Vec<Group> = Vec::new();
        for i in 0..3 * MAX_GROUPS as u64 {
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
            assert_eq!(pending.groups, expected, "after {} groups", i + 1);
        }
        let taken = pending.groups().to_vec();
        pending.clear();
        assert_eq!((taken, pending.is_empty()), (expected, true));
    }
}
