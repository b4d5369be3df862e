//! The statistics of the A/B comparison, written out so they can be checked against an independent
//! implementation (the tests compare them with SciPy's).

/// z for a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// P(Z > z) for a standard normal Z, to about 1e-16 relative (libm's erfc).
pub fn normal_sf(z: f64) -> f64 {
    0.5 * libm::erfc(z / std::f64::consts::SQRT_2)
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

/// The standard error of the median of sorted values by McKean and Schrader (1984): the distance
/// between the order statistics `c` and `n − c + 1` (1-based), `c = round((n + 1)/2 − z·√(n/4))`,
/// over `2z`. Distribution-free; `None` below 3 values.
pub fn median_standard_error(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    if n < 3 {
        return None;
    }
    let c = (((n as f64 + 1.0) / 2.0 - Z95 * (n as f64 / 4.0).sqrt()).round() as usize).max(1);
    Some((sorted[n - c] - sorted[c - 1]) / (2.0 * Z95))
}

/// Mann-Whitney U test of `a` against `b`, two-sided, normal approximation with tie correction and
/// continuity correction (SciPy's `mannwhitneyu(a, b, method="asymptotic")`). Returns `U` of `a`
/// (the number of pairs where `a`'s value is larger, ties counting ½) and the p-value; `None` when a
/// sample is empty. O((n + m) log(n + m)).
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<(f64, f64)> {
    let mut all: Vec<(f64, bool)> = a.iter().map(|&v| (v, true)).chain(b.iter().map(|&v| (v, false))).collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let groups = all.chunk_by(|x, y| x.0 == y.0).map(|tied| {
        let in_a = tied.iter().filter(|(_, in_a)| *in_a).count() as u64;
        (in_a, tied.len() as u64 - in_a)
    });
    mann_whitney_grouped(groups)
}

/// [`mann_whitney`] of values given as groups of equal values in increasing order, each as (how many
/// of `a`, how many of `b`): what a histogram or a sketch's buckets hold. O(groups).
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
        // a all above b: U = n1·n2.
        let (u, p) = mann_whitney(&[5.0, 6.0, 7.0], &[1.0, 2.0]).unwrap();
        assert_eq!(u, 6.0);
        assert!(p > 0.0 && p < 0.2);
        assert_eq!(mann_whitney(&[1.0, 1.0], &[1.0]), Some((1.0, 1.0)));
        // Grouped: a = [1, 2, 2], b = [2, 3] as counts per value.
        assert_eq!(mann_whitney_grouped([(1, 0), (2, 1), (0, 1)]), mann_whitney(&[1.0, 2.0, 2.0], &[2.0, 3.0]));
        assert_eq!(two_proportion(0, 10, 0, 10), Some(1.0));
        assert_eq!(two_proportion(1, 0, 0, 10), None);
    }
}
