//! Ratio metrics over units, by the delta method: a figure per stream (a mean, or a share) is a
//! ratio of two sums over units, `Σx / Σy` (`x` the unit's sum of values or count of streams with a
//! trait, `y` its count of streams), and its variance comes from the units, the independent
//! samples, not from the streams (Deng, Knoblich and Lu, "Applying the Delta Method in Metric
//! Analytics", KDD 2018, section 3).
//!
//! Written as `Var(Σx/Σy) ≈ Σ(x − R·y)² / (Σy)²`, which is also the cluster-robust (CR0) variance of
//! the arm's coefficient in a least-squares fit on the streams clustered by unit: the tests check
//! it against statsmodels' `OLS(...).fit(cov_type="cluster")`. O(units).

use crate::query::stats::{normal_sf, student_t_sf, Z95};

/// One arm's ratio `Σx / Σy` and the variance of that estimate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ratio {
    pub value: f64,
    pub variance: f64,
    /// How many units had a denominator above 0: those that say something of this figure.
    pub units: usize,
}

impl Ratio {
    /// The ratio of the units' `(x, y)` sums; `None` when `Σy` is 0. O(units), two passes.
    pub fn of(units: impl Iterator<Item = (f64, f64)> + Clone) -> Option<Ratio> {
        let (sx, sy, n) = units.clone().fold((0.0, 0.0, 0), |(sx, sy, n), (x, y)| (sx + x, sy + y, n + usize::from(y > 0.0)));
        if sy <= 0.0 {
            return None;
        }
        let value = sx / sy;
        let residuals: f64 = units.map(|(x, y)| (x - value * y).powi(2)).sum();
        Some(Ratio { value, variance: residuals / (sy * sy), units: n })
    }
}

/// `b − a` of two independent estimates with a normal approximation: the fixed-horizon test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Difference {
    pub estimate: f64,
    pub variance: f64,
}

impl Difference {
    pub fn between(a: (f64, f64), b: (f64, f64)) -> Difference {
        Difference { estimate: b.0 - a.0, variance: a.1 + b.1 }
    }

    pub fn of_ratios(a: &Ratio, b: &Ratio) -> Difference {
        Difference::between((a.value, a.variance), (b.value, b.variance))
    }

    pub fn standard_error(&self) -> f64 {
        self.variance.sqrt()
    }

    /// The 95% interval, valid at one look at a sample size fixed beforehand.
    pub fn ci95(&self) -> [f64; 2] {
        let half = Z95 * self.standard_error();
        [self.estimate - half, self.estimate + half]
    }

    /// Two-sided p-value of "no difference" (1 when the variance is 0 and the estimate too).
    pub fn p_value(&self) -> f64 {
        self.p_value_by(normal_sf)
    }

    /// [`Difference::p_value`] with Student's t of `df` degrees of freedom in place of the normal:
    /// for a variance estimated from few units.
    pub fn student_p_value(&self, df: f64) -> f64 {
        self.p_value_by(|t| student_t_sf(t, df))
    }

    fn p_value_by(&self, tail: impl Fn(f64) -> f64) -> f64 {
        let se = self.standard_error();
        if se > 0.0 {
            (2.0 * tail(self.estimate.abs() / se)).min(1.0)
        } else if self.estimate == 0.0 {
            1.0
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_checked() {
        // Units (x, y): (2, 1), (6, 3), (4, 2) all at R = 2: no spread, no variance.
        let even = Ratio::of([(2.0, 1.0), (6.0, 3.0), (4.0, 2.0)].into_iter()).unwrap();
        assert_eq!((even.value, even.variance, even.units), (2.0, 0.0, 3));
        // (1, 1), (3, 1): R = 2, residuals -1 and 1: variance 2 / 4.
        assert_eq!(Ratio::of([(1.0, 1.0), (3.0, 1.0), (0.0, 0.0)].into_iter()), Some(Ratio { value: 2.0, variance: 0.5, units: 2 }));
        assert_eq!(Ratio::of([(0.0, 0.0)].into_iter()), None);
        let d = Difference::between((1.0, 0.0), (1.0, 0.0));
        assert_eq!(d.p_value(), 1.0);
        let d = Difference::between((10.0, 1.0), (10.0 + Z95 * 2f64.sqrt(), 1.0));
        assert!((d.p_value() - 0.05).abs() < 1e-12 && (d.ci95()[0]).abs() < 1e-12, "{d:?}");
    }
}
