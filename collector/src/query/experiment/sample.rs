//! A uniform sample of units, kept whole: the units whose id hashes lowest (a bottom-k sample).
//! Reads that group records by unit keep at most what their caller allows this way, the same sample
//! for every arm or group, and the same data give the same sample. O(log units) per record.

use std::collections::{BTreeSet, HashMap};

/// Per-unit figures `T` of the units kept so far.
#[derive(Debug)]
pub struct UnitSample<T> {
    kept: HashMap<String, T>,
    /// The kept units by hash, to drop the highest.
    order: BTreeSet<(u64, String)>,
    /// The lowest hash dropped so far: a unit hashing at or above it is out of the sample.
    cutoff: u64,
}

impl<T: Default> UnitSample<T> {
    pub fn new() -> UnitSample<T> {
        UnitSample { kept: HashMap::new(), order: BTreeSet::new(), cutoff: u64::MAX }
    }

    /// The figures of unit `id` (new ones start at their default); `None` when it is out of the sample.
    pub fn unit(&mut self, id: String) -> Option<&mut T> {
        let hash = stable_hash(&id);
        if hash >= self.cutoff {
            return None;
        }
        let order = &mut self.order;
        Some(self.kept.entry(id).or_insert_with_key(|id| {
            order.insert((hash, id.clone()));
            T::default()
        }))
    }

    /// Drops the kept unit hashing highest, and every later record of it; returns its figures.
    pub fn drop_highest(&mut self) -> Option<T> {
        let (hash, id) = self.order.pop_last()?;
        self.cutoff = hash;
        self.kept.remove(&id)
    }

    pub fn len(&self) -> usize {
        self.kept.len()
    }

    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    /// Whether any unit was dropped.
    pub fn sampled(&self) -> bool {
        self.cutoff != u64::MAX
    }

    pub fn into_units(self) -> impl Iterator<Item = T> {
        self.kept.into_values()
    }
}

/// FNV-1a, then a 64-bit finalizer (splitmix64's) so that ids alike in their last bytes spread:
/// the same on every machine and release, unlike the standard library's hasher.
fn stable_hash(id: &str) -> u64 {
    let mut h = id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_lowest_hashes_whole() {
        let mut sample: UnitSample<u32> = UnitSample::new();
        for round in 0..3 {
            for i in 0..1000 {
                if let Some(n) = sample.unit(format!("session-{i}")) {
                    *n += 1;
                }
                while sample.len() > 100 {
                    sample.drop_highest();
                }
            }
            assert_eq!(sample.len(), 100, "round {round}");
        }
        // Every kept unit has all three of its records: none was dropped and let back in.
        assert!(sample.sampled());
        assert!(sample.into_units().all(|n| n == 3));
        let mut whole: UnitSample<u32> = UnitSample::new();
        *whole.unit("a".into()).unwrap() += 1;
        assert!(!whole.sampled() && whole.len() == 1);
    }
}
