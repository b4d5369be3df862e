//! Goodput's thresholds ([`Slo`]) and the sketch-bucket keys streams are judged by: a value's key
//! ([`sketch_key`], with [`NULL_KEY`] and [`ZERO_KEY`] apart), and the largest key meeting a
//! threshold ([`key_bound`]).

use llm_ux_meter::metrics::sketch::{bucket_key, bucket_value};

/// Joint-bucket key of a value that was null.
pub const NULL_KEY: i32 = i32::MIN;
/// Joint-bucket key of a value the sketch counts as zero.
pub const ZERO_KEY: i32 = i32::MIN + 1;

/// SLO thresholds for goodput (ms).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Slo {
    pub ttft_ms: Option<f64>,
    pub tpot_ms: Option<f64>,
}

impl Slo {
    pub fn is_empty(&self) -> bool {
        self.ttft_ms.is_none() && self.tpot_ms.is_none()
    }

    /// `joint` reduced to what this SLO tells apart, in key order: the streams meeting it under
    /// [`Slo::MET`], the others under [`Slo::MISSED`]. [`Rollup::good`](super::Rollup::good) counts the same for this SLO
    /// (and stores may read joint counts so reduced). O(entries).
    pub fn reduce(&self, joint: &[((i32, i32), u64)]) -> Vec<((i32, i32), u64)> {
        let met = self.met_in(joint);
        let missed = joint.iter().map(|&(_, n)| n).sum::<u64>() - met;
        [(Slo::MISSED, missed), (Slo::MET, met)].into_iter().filter(|&(_, n)| n > 0).collect()
    }

    /// The streams of `joint` counts meeting every threshold (a null value meets none). O(entries).
    pub fn met_in(&self, joint: &[((i32, i32), u64)]) -> u64 {
        let meets = |key: i32, max: Option<f64>| match (key, max) {
            (_, None) => true,
            (NULL_KEY, Some(_)) => false,
            (ZERO_KEY, Some(_)) => true,
            (key, Some(max)) => bucket_value(key) <= max,
        };
        joint.iter().filter(|&&((ttft, tpot), _)| meets(ttft, self.ttft_ms) && meets(tpot, self.tpot_ms)).map(|&(_, n)| n).sum()
    }

    /// The joint key of [`Slo::reduce`]'s streams that meet any SLO (both values counted as zero).
    pub const MET: (i32, i32) = (ZERO_KEY, ZERO_KEY);
    /// The joint key of [`Slo::reduce`]'s streams that miss (both values null: they meet no threshold).
    pub const MISSED: (i32, i32) = (NULL_KEY, NULL_KEY);
}

/// The largest sketch key that meets a threshold of `max` ms: a key other than [`NULL_KEY`] meets
/// it, as [`Rollup::good`](super::Rollup::good) reads it, exactly when it is at most this ([`ZERO_KEY`] when no positive
/// value's key does). For a store that counts good streams itself. O(1).
pub fn key_bound(max: f64) -> i32 {
    let Some(mut key) = bucket_key(max) else { return ZERO_KEY };
    while key > ZERO_KEY + 1 && bucket_value(key) > max {
        key -= 1;
    }
    while key < i32::MAX && bucket_value(key + 1) <= max {
        key += 1;
    }
    if bucket_value(key) <= max {
        key
    } else {
        ZERO_KEY
    }
}

/// The key of `value` in sketch-bucket counts: [`NULL_KEY`], [`ZERO_KEY`] or its bucket's key.
pub fn sketch_key(value: Option<f64>) -> i32 {
    match value {
        None => NULL_KEY,
        Some(v) => bucket_key(v).unwrap_or(ZERO_KEY),
    }
}
