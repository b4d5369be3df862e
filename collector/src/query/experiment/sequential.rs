//! Always-valid inference for a difference, so that a result may be read at every look: the
//! mixture sequential probability ratio test (mSPRT) with a normal mixture, as in Johari, Koomen,
//! Pekelis and Walsh, "Peeking at A/B Tests" (KDD 2017) and "Always Valid Inference" (Operations
//! Research, 2022), the test behind Optimizely's results.
//!
//! With the difference's estimate `Δ` and its variance `V` (from the units: [`super::ratio`]), and
//! a mixing variance `τ²` over the effects one looks for, the mixture likelihood ratio is
//!
//! `Λ = sqrt(V / (V + τ²)) · exp(Δ²τ² / (2V(V + τ²)))`
//!
//! Under no difference `Λ` is a martingale as units arrive, so by Ville's inequality the chance
//! that it ever crosses `1/α` is at most `α`: `p = min(1, 1/Λ)` may be read at any look, any number
//! of times, and the test stopped at the first `p ≤ α`. The interval of the `Δ` not rejected is a
//! confidence sequence: `Δ ± sqrt(V(V + τ²)/τ² · (2·ln(1/α) + ln((V + τ²)/V)))`.
//!
//! `τ` is [`MIXING_SHARE`] of the pooled mean: the test is most powerful for effects of about that
//! size. `V` is estimated (the normal approximation of the units' sums), so the guarantee is
//! asymptotic; the A/A simulations in the tests check it at 8 looks, from 150 units per arm.
//! Results are stateless: the p-value of one look is not the minimum over earlier ones (nothing is
//! kept between queries), which the guarantee does not need.

use super::ratio::Difference;

/// `τ` as a share of the pooled mean: a relative effect of 10% is what A/B tests of latency look for.
pub const MIXING_SHARE: f64 = 0.1;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sequential {
    pub p_value: f64,
    pub ci: [f64; 2],
}

/// The always-valid p-value and confidence sequence (at level `alpha`) of `d`, with mixing
/// standard deviation `tau` (> 0). `None` without a variance.
pub fn msprt(d: &Difference, tau: f64, alpha: f64) -> Option<Sequential> {
    let (v, t2) = (d.variance, tau * tau);
    if !(v > 0.0 && t2 > 0.0 && v.is_finite()) {
        return None;
    }
    let log_lambda = 0.5 * (v / (v + t2)).ln() + d.estimate * d.estimate * t2 / (2.0 * v * (v + t2));
    let p_value = (-log_lambda).exp().min(1.0);
    let half = (v * (v + t2) / t2 * (2.0 * (1.0 / alpha).ln() + ((v + t2) / v).ln())).sqrt();
    Some(Sequential { p_value, ci: [d.estimate - half, d.estimate + half] })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_and_the_p_value_agree() {
        for estimate in [0.0, 0.5, 1.0, 2.0, 5.0] {
            let d = Difference { estimate, variance: 0.25 };
            let s = msprt(&d, 1.0, 0.05).unwrap();
            // 0 is outside the sequence exactly when p <= alpha.
            assert_eq!(s.ci[0] > 0.0, s.p_value <= 0.05, "{estimate}: {s:?}");
        }
        // Wider than the fixed-horizon interval, always.
        let d = Difference { estimate: 1.0, variance: 0.04 };
        let s = msprt(&d, 0.5, 0.05).unwrap();
        assert!(s.ci[0] < d.ci95()[0] && s.ci[1] > d.ci95()[1], "{s:?}");
        assert!(s.p_value > d.p_value());
        assert_eq!(msprt(&Difference { estimate: 1.0, variance: 0.0 }, 1.0, 0.05), None);
    }
}
