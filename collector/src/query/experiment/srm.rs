//! Sample ratio mismatch: are the units split between the arms as the assignment says? A
//! chi-square test (one degree of freedom) of the units per arm against the expected shares. A
//! mismatch means units of one arm go missing or are counted twice (a meter broken on one browser,
//! an assignment that redirects): the arms are then no longer alike, and no difference between
//! them can be trusted. Units are counted, not streams: streams per unit vary, and a fair split of
//! units gives unequal streams. O(1).

use crate::query::stats::normal_sf;

/// Below this p-value the split is a mismatch: small, since the check runs at every look.
pub const MISMATCH_P: f64 = 0.001;

/// The p-value of `observed` units per arm given the expected weights (positive); `None` with no
/// unit.
pub fn srm_p_value(observed: [u64; 2], weights: [f64; 2]) -> Option<f64> {
    let total = (observed[0] + observed[1]) as f64;
    if total == 0.0 {
        return None;
    }
    let share = weights[0] / (weights[0] + weights[1]);
    let expected = [total * share, total * (1.0 - share)];
    let chi2: f64 = (0..2).map(|i| (observed[i] as f64 - expected[i]).powi(2) / expected[i]).sum();
    // P(χ²₁ > c) = 2·P(Z > √c).
    Some((2.0 * normal_sf(chi2.sqrt())).min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_checked() {
        assert_eq!(srm_p_value([500, 500], [1.0, 1.0]), Some(1.0));
        // χ² = 2·(50²/500) = 10: p = 0.001565.
        assert!((srm_p_value([450, 550], [1.0, 1.0]).unwrap() - 0.001_565_402_258_002_549).abs() < 1e-12);
        assert_eq!(srm_p_value([450, 550], [45.0, 55.0]), Some(1.0));
        assert_eq!(srm_p_value([0, 0], [1.0, 1.0]), None);
    }
}
