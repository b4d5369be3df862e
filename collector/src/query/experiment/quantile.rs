//! Medians over streams with units as the samples: the median of an arm's streams, and its
//! standard error by the delta method for quantiles with the outer (Woodruff) interval (Deng,
//! Knoblich and Lu, KDD 2018, section 4.2): the share of streams at or below the median is a ratio
//! metric over units ([`super::ratio`]), its interval `0.5 ± z·σ` is mapped back through the
//! streams' empirical quantiles, and the interval's half width over `z` is the median's standard
//! error. No density estimate is needed, and ties (discrete values: the paper's caveat) widen the
//! interval instead of breaking it. The tests check it against a cluster bootstrap over units.
//! O(n log n) for n streams (the sort).

use super::ratio::Ratio;
use crate::query::stats::{median, Z95};

/// An arm's median and its standard error; `None` as the median without values, and as the
/// error below 2 units with values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Median {
    pub value: Option<f64>,
    pub standard_error: Option<f64>,
}

/// The median of the streams' values, given per unit. O(n log n).
pub fn median_over_units(units: &[&[f64]]) -> Median {
    let mut sorted: Vec<f64> = units.iter().flat_map(|values| values.iter().copied()).collect();
    sorted.sort_by(f64::total_cmp);
    let Some(m) = median(&sorted) else { return Median { value: None, standard_error: None } };
    if units.iter().filter(|v| !v.is_empty()).count() < 2 {
        return Median { value: Some(m), standard_error: None };
    }
    let at_or_below = units.iter().map(|values| (values.iter().filter(|&&v| v <= m).count() as f64, values.len() as f64));
    let share = Ratio::of(at_or_below).map(|r| r.variance.sqrt());
    let standard_error = share.map(|sigma| {
        let n = sorted.len();
        let quantile = |p: f64| sorted[((p * n as f64).ceil() as usize).clamp(1, n) - 1];
        (quantile(0.5 + Z95 * sigma) - quantile(0.5 - Z95 * sigma)) / (2.0 * Z95)
    });
    Median { value: Some(m), standard_error }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_grows_when_units_move_together() {
        // 100 units of 10 streams: independent values, against each unit's values all alike.
        let mut state = 1u64;
        let mut unit = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let independent: Vec<Vec<f64>> = (0..100).map(|_| (0..10).map(|_| unit()).collect()).collect();
        let together: Vec<Vec<f64>> = (0..100).map(|_| vec![unit(); 10]).collect();
        let se = |units: &Vec<Vec<f64>>| median_over_units(&units.iter().map(Vec::as_slice).collect::<Vec<_>>()).standard_error.unwrap();
        // Uniform on [0, 1): the median's error is 1/(2·sqrt(n)): 0.016 over 1,000 streams, 0.05
        // over 100 units.
        assert!((0.011..0.022).contains(&se(&independent)), "{}", se(&independent));
        assert!((0.035..0.07).contains(&se(&together)), "{}", se(&together));
        assert_eq!(median_over_units(&[&[1.0, 2.0, 3.0]]), Median { value: Some(2.0), standard_error: None });
        assert_eq!(median_over_units(&[]), Median { value: None, standard_error: None });
    }
}
