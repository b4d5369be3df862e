//! How many units a test needs to detect a relative difference, and what the data can detect now.
//! Fixed horizon: the normal approximation for two arms, `n = (z(1 − α/2) + z(power))² · (σa² +
//! σb²) / δ²` units per arm, with `σ²` each arm's variance per unit (the delta method's variance
//! times its units). Sequential: the units per arm at which the always-valid test of
//! [`super::sequential`] decides with 80% power when it is read once, at that size (stopping at an
//! earlier look only helps): the variance `V` at which `δ − z(power)·√V` reaches the mSPRT's
//! threshold, found by bisection. The figures plan a test, they do not judge one. O(1).

use super::ratio::Ratio;
use super::sequential::MIXING_SHARE;
use crate::query::experiment::ALPHA;
use crate::query::stats::Z95;

/// z for 80% power.
const Z80: f64 = 0.841_621_233_572_914_3;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Power {
    /// Units per arm to detect the relative difference with 80% power at α = 0.05.
    pub units_per_arm: f64,
    /// The smallest difference detectable so with the units at hand, relative to arm a's figure.
    pub detectable_now: f64,
    /// Units per arm for the always-valid decision to detect the difference with 80% power.
    pub sequential_units_per_arm: f64,
}

/// For a relative difference `relative` (> 0) of `a`'s figure; `None` when `a`'s figure is 0 or
/// there is no variance.
pub fn power(a: &Ratio, b: &Ratio, relative: f64) -> Option<Power> {
    let per_unit = a.variance * a.units as f64 + b.variance * b.units as f64;
    let scale = a.value.abs();
    if !(per_unit > 0.0 && scale > 0.0) {
        return None;
    }
    let z = Z95 + Z80;
    let units_per_arm = (z * z * per_unit / (relative * scale).powi(2)).ceil();
    let detectable_now = z * (a.variance + b.variance).sqrt() / scale;
    let tau = MIXING_SHARE * (a.value + b.value).abs() / 2.0;
    let sequential_units_per_arm = (per_unit / sequential_variance(relative * scale, tau)).ceil();
    Some(Power { units_per_arm, detectable_now, sequential_units_per_arm })
}

/// The variance of the difference at which the mSPRT (mixing `tau`) rejects at [`ALPHA`] with 80%
/// chance when the difference is `delta`: the largest `V` with `delta − z80·√V` at or above the
/// smallest estimate it rejects at, `sqrt(2V(V + τ²)/τ² · (ln(1/α) + ½·ln((V + τ²)/V)))`. That
/// margin shrinks as `V` grows, so bisection on a log scale finds it. O(1): 100 steps.
fn sequential_variance(delta: f64, tau: f64) -> f64 {
    let t2 = tau * tau;
    let margin = |v: f64| delta - Z80 * v.sqrt() - (2.0 * v * (v + t2) / t2 * ((1.0 / ALPHA).ln() + 0.5 * ((v + t2) / v).ln())).sqrt();
    let (mut low, mut high) = (delta * delta * 1e-12, delta * delta);
    for _ in 0..100 {
        let mid = (low * high).sqrt();
        if margin(mid) >= 0.0 {
            low = mid;
        } else {
            high = mid;
        }
    }
    low
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_textbook_case() {
        // σ = 10 per unit in each arm, mean 100, a 10% difference: 2·(2.80·10/10)² = 15.7 → 16.
        let arm = |units: usize| Ratio { value: 100.0, variance: 100.0 / units as f64, units };
        let p = power(&arm(50), &arm(50), 0.1).unwrap();
        assert_eq!(p.units_per_arm, 16.0);
        // With 50 per arm: 2.80·sqrt(2·100/50)/100.
        assert!((p.detectable_now - (Z95 + Z80) * 2.0 / 100.0).abs() < 1e-12);
        // The always-valid decision needs more: at that size its threshold lies above what a 10%
        // difference reaches at 80% power.
        assert!(p.sequential_units_per_arm > 1.5 * p.units_per_arm, "{p:?}");
        let v = sequential_variance(10.0, 10.0);
        let threshold = (2.0 * v * (v + 100.0) / 100.0 * ((1.0 / ALPHA).ln() + 0.5 * ((v + 100.0) / v).ln())).sqrt();
        assert!((10.0 - Z80 * v.sqrt() - threshold).abs() < 1e-9, "{v}");
    }
}
