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
        if self.groups.len() == MAX_GROUPS {
            let oldest = self.groups.remove(0);
            if let Some(next) = self.groups.first_mut() {
                let total = (oldest.count + next.count) as f64;
                next.arrived_at = (oldest.arrived_at * oldest.count as f64 + next.arrived_at * next.count as f64) / total;
                next.count += oldest.count;
                next.has_answer |= oldest.has_answer;
            }
        }
        self.groups.push(group);
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Hands every group to `f`, oldest first, and removes them. A loop and a clear, not `drain`, whose
    /// drop (moving a tail that is never there) was code in the wasm.
    pub fn take(&mut self, f: impl FnMut(&Group)) {
        self.groups.iter().for_each(f);
        self.groups.clear();
    }
}
