//! The tests the diagnosis and the A/B comparison share, written out so they can be checked against
//! an independent implementation (the tests compare them with SciPy's).

/// z for a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// P(Z > z) for a standard normal Z, to about 1e-16 relative (libm's erfc).
pub fn normal_sf(z: f64) -> f64 {
    0.5 * libm::erfc(z / std::f64::consts::SQRT_2)
}

/// P(T > t) for Student's t with `df` degrees of freedom (> 0): `½·I(df/(df + t²); df/2, ½)` for
/// t ≥ 0, the regularized incomplete beta by its continued fraction (Lentz's method), to about 1e-14.
/// For a test whose variance comes from few samples, where the normal's tail would be too thin.
pub fn student_t_sf(t: f64, df: f64) -> f64 {
    if t.is_nan() {
        return f64::NAN;
    }
    let tail = 0.5 * incomplete_beta(df / (df + t * t), df / 2.0, 0.5);
    if t >= 0.0 {
        tail
    } else {
        1.0 - tail
    }
}

/// The regularized incomplete beta function I(x; a, b), 0 ≤ x ≤ 1.
fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (libm::lgamma(a + b) - libm::lgamma(a) - libm::lgamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    // The continued fraction converges fast for x < (a + 1)/(a + b + 2); else by I(x; a, b) = 1 − I(1 − x; b, a).
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(x, a, b) / a
    } else {
        1.0 - front * beta_fraction(1.0 - x, b, a) / b
    }
}

/// The continued fraction of the incomplete beta (modified Lentz), at most 300 terms.
fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (mut c, mut d) = (1.0, 1.0 - (a + b) * x / (a + 1.0));
    d = 1.0 / if d.abs() < TINY { TINY } else { d };
    let mut h = d;
    for m in 1..=300 {
        let m = m as f64;
        for numerator in [m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m)), -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0))] {
            d = 1.0 + numerator * d;
            d = 1.0 / if d.abs() < TINY { TINY } else { d };
            c = 1.0 + numerator / c;
            c = if c.abs() < TINY { TINY } else { c };
            h *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// The median of sorted values (the mean of the middle two when the count is even); `None` when empty.
pub fn median(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

/// Mann-Whitney U test of `a` against `b`, two-sided, normal approximation with tie correction and
/// continuity correction (SciPy's `mannwhitneyu(a, b, method="asymptotic")`), of values given as
/// groups of equal values in increasing order, each as (how many of `a`, how many of `b`): what a
/// histogram or a sketch's buckets hold. Returns `U` of `a` (the number of pairs where `a`'s value
/// is larger, ties counting ½) and the p-value; `None` when a sample is empty. O(groups).
pub fn mann_whitney_grouped(groups: impl IntoIterator<Item = (u64, u64)>) -> Option<(f64, f64)> {
    let (mut below, mut n1, mut n2, mut rank_sum_a, mut ties) = (0u64, 0u64, 0u64, 0.0, 0.0);
    for (in_a, in_b) in groups {
        let t = in_a + in_b;
        // Ranks below+1 ..= below+t share their mean.
        rank_sum_a += (2 * below + 1 + t) as f64 / 2.0 * in_a as f64;
        ties += (t as f64).powi(3) - t as f64;
        (below, n1, n2) = (below + t, n1 + in_a, n2 + in_b);
    }
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let (n1, n2, n) = (n1 as f64, n2 as f64, below as f64);
    let u = rank_sum_a - n1 * (n1 + 1.0) / 2.0;
    let mean = n1 * n2 / 2.0;
    let variance = n1 * n2 / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)));
    if variance <= 0.0 {
        // Every value equal: no evidence of a difference.
        return Some((u, 1.0));
    }
    let z = ((u - mean).abs() - 0.5) / variance.sqrt();
    Some((u, (2.0 * normal_sf(z)).min(1.0)))
}

/// Two-proportion z-test (pooled), two-sided: `x1` of `n1` against `x2` of `n2` (the same p-value as
/// a chi-square test of the 2×2 table without continuity correction). `None` when a sample is empty;
/// 1 when every outcome is the same.
pub fn two_proportion(x1: u64, n1: u64, x2: u64, n2: u64) -> Option<f64> {
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let (n1, n2) = (n1 as f64, n2 as f64);
    let pooled = (x1 + x2) as f64 / (n1 + n2);
    let se = (pooled * (1.0 - pooled) * (1.0 / n1 + 1.0 / n2)).sqrt();
    if se == 0.0 {
        return Some(1.0);
    }
    let z = (x1 as f64 / n1 - x2 as f64 / n2) / se;
    Some(2.0 * normal_sf(z.abs()))
}

/// A share compared within strata: the Cochran-Mantel-Haenszel test and the Mantel-Haenszel rate
/// ratio and difference of a group against the other streams, from a 2×2 table per stratum.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stratified {
    /// Two-sided, without continuity correction (with one stratum, the pooled z-test's chi-square
    /// times (N − 1)/N); 1 when no stratum varies.
    pub p_value: f64,
    /// How many times as often the group has the trait as the others of its stratum (infinite when
    /// they never have it).
    pub rate_ratio: f64,
    /// How much more often, as a share.
    pub rate_difference: f64,
    /// The streams of each side in the strata that hold both sides: only those are compared.
    pub streams: u64,
    pub other_streams: u64,
}

/// [`Stratified`] of tables given as (`x1` of `n1`, `x2` of `n2`) per stratum: the group's streams
/// with the trait of those where it is known, then the other streams'. Strata with one side only say
/// nothing and are left out. O(strata).
pub fn mantel_haenszel(strata: impl IntoIterator<Item = (u64, u64, u64, u64)>) -> Stratified {
    let (mut observed, mut expected, mut variance) = (0.0, 0.0, 0.0);
    let (mut ratio_up, mut ratio_down, mut difference_up, mut weights) = (0.0, 0.0, 0.0, 0.0);
    let (mut streams, mut other_streams) = (0, 0);
    for (x1, n1, x2, n2) in strata.into_iter().filter(|&(_, n1, _, n2)| n1 > 0 && n2 > 0) {
        (streams, other_streams) = (streams + n1, other_streams + n2);
        let (x1, n1, x2, n2) = (x1 as f64, n1 as f64, x2 as f64, n2 as f64);
        let (n, with) = (n1 + n2, x1 + x2);
        observed += x1;
        expected += n1 * with / n;
        if n > 1.0 {
            variance += n1 * n2 * with * (n - with) / (n * n * (n - 1.0));
        }
        ratio_up += x1 * n2 / n;
        ratio_down += x2 * n1 / n;
        difference_up += (x1 * n2 - x2 * n1) / n;
        weights += n1 * n2 / n;
    }
    let p_value = if variance > 0.0 { (2.0 * normal_sf((observed - expected).abs() / variance.sqrt())).min(1.0) } else { 1.0 };
    let rate_ratio = match (ratio_up > 0.0, ratio_down > 0.0) {
        (_, true) => ratio_up / ratio_down,
        (true, false) => f64::INFINITY,
        (false, false) => 1.0,
    };
    let rate_difference = if weights > 0.0 { difference_up / weights } else { 0.0 };
    Stratified { p_value, rate_ratio, rate_difference, streams, other_streams }
}

/// A p-value as a verdict's sentence gives it: `p < 0.001`, else `p = ` to three decimals.
pub fn p_text(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".into()
    } else {
        format!("p = {p:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_checked_cases() {
        assert_eq!(median(&[1.0, 2.0, 10.0]), Some(2.0));
        assert_eq!(median(&[1.0, 2.0, 4.0, 10.0]), Some(3.0));
        assert!((normal_sf(Z95) - 0.025).abs() < 1e-12);
        // a all above b (b = [1, 2], a = [5, 6, 7]): U = n1·n2.
        let (u, p) = mann_whitney_grouped([(0, 1), (0, 1), (1, 0), (1, 0), (1, 0)]).unwrap();
        assert_eq!(u, 6.0);
        assert!(p > 0.0 && p < 0.2);
        assert_eq!(mann_whitney_grouped([(2, 1)]), Some((1.0, 1.0)));
        // a = [1, 2, 2], b = [2, 3]: U = 0 + 2·½ = 1 against a mean of 3, a tie of three values:
        // z = (|1 − 3| − ½) / √(6/12 · (6 − 24/20)).
        let (u, p) = mann_whitney_grouped([(1, 0), (2, 1), (0, 1)]).unwrap();
        assert_eq!(u, 1.0);
        assert!((p - 2.0 * normal_sf(1.5 / (0.5f64 * (6.0 - 24.0 / 20.0)).sqrt())).abs() < 1e-12, "{p}");
        assert_eq!(two_proportion(0, 10, 0, 10), Some(1.0));
        assert_eq!(two_proportion(1, 0, 0, 10), None);
    }

    #[test]
    fn student_t_against_its_tables() {
        // Two-sided 5% and 0.1% points (SciPy's t.ppf): 12.706 (1), 2.776 (4), 4.604 at 1% (4), 2.228 (10).
        for (t, df, two_sided) in [(12.706_204_736, 1.0, 0.05), (2.776_445_105, 4.0, 0.05), (4.604_094_871, 4.0, 0.01), (2.228_138_852, 10.0, 0.05), (8.610_301_581, 4.0, 0.001)] {
            let p = 2.0 * student_t_sf(t, df);
            assert!((p - two_sided).abs() < 1e-8 * two_sided.max(1e-3), "t = {t}, df = {df}: {p}");
        }
        assert!((student_t_sf(0.0, 3.0) - 0.5).abs() < 1e-14);
        assert!((student_t_sf(-2.776_445_105, 4.0) - 0.975).abs() < 1e-8);
        // Many degrees of freedom: the normal.
        assert!((student_t_sf(3.0, 1e7) - normal_sf(3.0)).abs() < 1e-8);
    }

    #[test]
    fn mantel_haenszel_within_strata() {
        // One stratum: the pooled z-test's chi-square times (N - 1)/N.
        let (z, n): (f64, f64) = ((0.3 - 0.2) / (0.25f64 * 0.75 * (1.0 / 100.0 + 1.0 / 100.0)).sqrt(), 200.0);
        let one = mantel_haenszel([(30, 100, 20, 100)]);
        assert!((one.p_value - 2.0 * normal_sf(z * ((n - 1.0) / n).sqrt())).abs() < 1e-12, "{one:?}");
        assert!((one.rate_ratio - 1.5).abs() < 1e-12 && (one.rate_difference - 0.1).abs() < 1e-12);
        // Twice as often in each stratum, at different base rates: a ratio of 2 and a difference of
        // 0.2 (the strata weigh alike).
        let twice = mantel_haenszel([(20, 100, 10, 100), (60, 100, 30, 100)]);
        assert!((twice.rate_ratio - 2.0).abs() < 1e-12 && (twice.rate_difference - 0.2).abs() < 1e-12 && twice.p_value < 1e-5, "{twice:?}");
        // Simpson's paradox: 39% against 12% overall (a plain test calls it), but as often as the
        // others within each stratum, where the group is mostly in the stratum that has the trait.
        let strata = [(54, 90, 6, 10), (2, 50, 17, 425)];
        let (x1, n1, x2, n2) = strata.iter().fold((0, 0, 0, 0), |t, s| (t.0 + s.0, t.1 + s.1, t.2 + s.2, t.3 + s.3));
        assert!(two_proportion(x1, n1, x2, n2).unwrap() < 1e-12);
        let alike = mantel_haenszel(strata);
        assert!(alike.p_value > 0.999 && (alike.rate_ratio - 1.0).abs() < 1e-12 && alike.rate_difference.abs() < 1e-12, "{alike:?}");
        assert_eq!((alike.streams, alike.other_streams), (140, 435));
        // A stratum of one side only is left out; nothing left: nothing to say.
        let apart = mantel_haenszel([(30, 30, 0, 0), (0, 0, 3, 100)]);
        assert_eq!(apart, Stratified { p_value: 1.0, rate_ratio: 1.0, rate_difference: 0.0, streams: 0, other_streams: 0 });
        assert_eq!(mantel_haenszel([(5, 10, 0, 10)]).rate_ratio, f64::INFINITY);
    }
}
