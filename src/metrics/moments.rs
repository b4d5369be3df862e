//! Running mean and standard deviation in O(1) memory (Welford's method, numerically stable).

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Moments {
    count: u64,
    mean: f64,
    sum_sq_dev: f64,
}

impl Moments {
    pub fn add(&mut self, value: f64) {
        self.count += 1;
        let delta = value - self.mean;
        self.mean += delta / self.count as f64;
        self.sum_sq_dev += delta * (value - self.mean);
    }

    /// Population standard deviation (divides by n); `None` when empty.
    pub fn std_dev(&self) -> Option<f64> {
        (self.count > 0).then(|| crate::math::sqrt((self.sum_sq_dev / self.count as f64).max(0.0)))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn matches_the_two_pass_formula() {
        let values = [16.0, 18.0, 950.0, 17.0, 20.0];
        let mut moments = super::Moments::default();
        values.iter().for_each(|&v| moments.add(v));
        let mean = values.iter().sum::<f64>() / 5.0;
        let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / 5.0;
        assert!((moments.std_dev().unwrap() - var.sqrt()).abs() < 1e-9);
    }
}
