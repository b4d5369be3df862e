//! The step of the clock a stream was timed with, read off the stream's own times. Browsers coarsen
//! `performance.now()` against timing attacks (Firefox and Safari to 1 ms, Chromium to 0.1 ms; finer
//! when the page is cross-origin isolated), and a figure is only as fine as its clock: at 1 ms, a
//! render gap of 16.7 ms reads 16 or 17.
//!
//! The step is the coarsest of [`STEPS_MS`] that every time is a whole multiple of. A finer clock
//! passes a coarser step only if all its times happen to fall on it: for the 0.1 ms clock to read as
//! 1 ms, each of a stream's four or more times must (odds 1 in 10 each).

/// The steps browsers coarsen their clocks to, coarsest first (ms): 100 ms (privacy modes), 1 ms,
/// 0.1 ms, 20 µs and 5 µs (cross-origin isolated), and 1 µs, which also stands for any finer clock.
pub const STEPS_MS: [f64; 6] = [100.0, 1.0, 0.1, 0.02, 0.005, 0.001];

/// The coarsest step that every time seen so far is a multiple of. O(1) memory; each time costs
/// O(1) (at most [`STEPS_MS`]'s length divisions over a stream's life).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClockStep {
    /// Index into [`STEPS_MS`]; only ever grows.
    rung: usize,
}

impl ClockStep {
    /// Takes one time (ms). A time that is not finite says nothing about the clock and is skipped.
    pub fn observe(&mut self, at: f64) {
        if !at.is_finite() {
            return;
        }
        while self.rung + 1 < STEPS_MS.len() && !is_multiple(at, STEPS_MS[self.rung]) {
            self.rung += 1;
        }
    }

    /// The step in ms: one of [`STEPS_MS`]; 100 until a time says otherwise.
    pub fn ms(&self) -> f64 {
        // `observe` keeps `rung` below the length: `min` says so without a bounds check and its panic path.
        STEPS_MS[self.rung.min(STEPS_MS.len() - 1)]
    }
}

/// Whether `at` is a whole multiple of `step`, within a thousandth of a step: `f64` cannot hold
/// 0.1-steps exactly, and the error of `at / step` stays far below that for any page's lifetime.
fn is_multiple(at: f64, step: f64) -> bool {
    let steps = at / step;
    let off = steps - crate::math::round(steps);
    -1e-3 < off && off < 1e-3
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step_of(times: &[f64]) -> f64 {
        let mut clock = ClockStep::default();
        times.iter().for_each(|&t| clock.observe(t));
        clock.ms()
    }

    #[test]
    fn reads_each_browser_step() {
        assert_eq!(step_of(&[1200.0, 1450.0, 1466.0, 1483.0]), 1.0);
        assert_eq!(step_of(&[1200.1, 1450.0, 1466.7, 1483.3]), 0.1);
        assert_eq!(step_of(&[1200.12, 1450.04, 1466.7, 1483.36]), 0.02);
        assert_eq!(step_of(&[1200.125, 1450.005, 1466.7, 1483.36]), 0.005);
        assert_eq!(step_of(&[1200.1234, 1450.0, 1466.7]), 0.001);
        assert_eq!(step_of(&[100.0, 2300.0, 1_000_000.0]), 100.0);
    }

    #[test]
    fn holds_over_a_long_page_life() {
        // A page open for 30 days: 2.6e9 ms, still read to the 5 µs step.
        let day = 86_400_000.0;
        assert_eq!(step_of(&[30.0 * day + 0.005, 30.0 * day + 17.115]), 0.005);
        assert_eq!(step_of(&[30.0 * day + 0.1, 30.0 * day + 16.7]), 0.1);
    }

    #[test]
    fn skips_times_that_are_not_finite() {
        assert_eq!(step_of(&[f64::NAN, 12.0, f64::INFINITY, 13.0]), 1.0);
    }
}
