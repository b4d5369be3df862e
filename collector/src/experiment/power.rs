//! How many units a fixed-horizon test needs to detect a relative difference, and what the data
//! can detect now: the normal approximation for two arms, `n = (z(1 − α/2) + z(power))² · (σa² +
//! σb²) / δ²` units per arm, with `σ²` each arm's variance per unit (the delta method's variance
//! times its units). The always-valid test of [`super::sequential`] needs more than this; the
//! figures plan a test, they do not judge one. O(1).

use super::ratio::Ratio;
use crate::stats::Z95;

/// z for 80% power.
const Z80: f64 = 0.841_621_233_572_914_3;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Power {
    /// Units per arm to detect the relative difference with 80% power at α = 0.05.
    pub units_per_arm: f64,
    /// The smallest difference detectable so with the units at hand, relative to arm a's figure.
    pub detectable_now: f64,
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
    Some(Power { units_per_arm, detectable_now })
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
    }
}
