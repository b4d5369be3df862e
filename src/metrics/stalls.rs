//! Stalls: render gaps long enough for a reader to notice the stream stopped.

/// Gaps of at least this many milliseconds are stalls.
pub const STALL_MS: f64 = 500.0;
/// Gaps of at least this many milliseconds are also counted apart.
pub const LONG_STALL_MS: f64 = 1000.0;

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stalls {
    /// Gaps of 500 ms or more.
    pub count: u32,
    /// Gaps of 1000 ms or more.
    pub count_1000: u32,
    /// The longest stall (0 when none).
    pub longest_ms: f64,
    /// The summed time of all stalls.
    pub total_ms: f64,
}

impl Stalls {
    pub fn add_gap(&mut self, gap_ms: f64) {
        if gap_ms >= STALL_MS {
            self.count = self.count.saturating_add(1);
            self.count_1000 = self.count_1000.saturating_add(u32::from(gap_ms >= LONG_STALL_MS));
            self.longest_ms = self.longest_ms.max(gap_ms);
            self.total_ms += gap_ms;
        }
    }
}
