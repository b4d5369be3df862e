//! The statistics of an A/B experiment over streams, with the unit of randomization as the sample.
//!
//! An experiment assigns each unit (a session, [`crate::dims::Unit`]) to one arm, and a unit's
//! streams move together: one device, one network, one person's chats. Treating streams as
//! independent samples counts each unit many times over and calls most A/A tests significant
//! (measured: 67% at α = 0.05 over sessions of 4 to 40 chats). Every figure here therefore takes
//! the unit as its sample:
//!
//! - **Means and shares** (the primary figure, and the stall, stop and goodput rates) are ratio
//!   metrics over units, with the delta method's variance ([`ratio`]): the cluster-robust
//!   variance, checked against statsmodels in the tests. The mean is the primary figure because
//!   its unit sums add up (a store can keep them as rollups), its variance is exact to check, and
//!   the sequential test below is built for it.
//! - **Medians** (secondary) by the delta method for quantiles ([`quantile`]), checked against a
//!   cluster bootstrap over units.
//! - **Looks at any time**: the primary figure's decision is the always-valid mSPRT
//!   ([`sequential`]), so a dashboard may be watched daily and the test stopped when it turns;
//!   the fixed-horizon result is given beside it for a test whose sample size was set beforehand.
//! - **Sample ratio mismatch** ([`srm`]) on units: below p = 0.001 no winner is named.
//! - **Power** ([`power`]): what a fixed-horizon test of a given relative difference needs.
//!
//! One primary figure per comparison (the mean of the `metric=` asked): the decision is about it
//! alone; the others are secondary, shown with their fixed-horizon tests but never the decision, so
//! a dozen figures do not make a dozen chances of a false winner. Lower is better for every metric
//! compared (all are latencies or stall times).
//!
//! The data come from [`units::read_arms`] (bounded by sampling units). docs/ab-testing.md says
//! how to run a test and read the answer.

pub mod power;
pub mod quantile;
pub mod ratio;
pub mod sample;
pub mod sequential;
pub mod srm;
pub mod units;

use ratio::{Difference, Ratio};
use units::{Arms, UnitFigures};

/// The significance level of every test and decision.
pub const ALPHA: f64 = 0.05;
/// Below this many units with a value in an arm, no decision is made.
pub const MIN_UNITS: usize = 30;

/// A share or mean over units, per arm, and its fixed-horizon test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Compared {
    pub a: Option<Ratio>,
    pub b: Option<Ratio>,
    pub difference: Option<Difference>,
}

impl Compared {
    /// The ratio `Σx/Σy` of `part` over each arm's units.
    pub fn of(arms: &Arms, part: impl Fn(&UnitFigures) -> (f64, f64) + Copy) -> Compared {
        let (a, b) = (Ratio::of(arms.a.iter().map(part)), Ratio::of(arms.b.iter().map(part)));
        let difference = a.zip(b).map(|(a, b)| Difference::of_ratios(&a, &b));
        Compared { a, b, difference }
    }
}

/// The mean of the metric's values per stream: the primary figure.
pub fn mean(u: &UnitFigures) -> (f64, f64) {
    (u.values.iter().sum(), u.values.len() as f64)
}

pub fn stall_rate(u: &UnitFigures) -> (f64, f64) {
    (u.stalled as f64, u.stall_known as f64)
}

pub fn stop_rate(u: &UnitFigures) -> (f64, f64) {
    (u.stopped as f64, u.reached as f64)
}

pub fn goodput(u: &UnitFigures) -> (f64, f64) {
    (u.good as f64, u.streams as f64)
}
