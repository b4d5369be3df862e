//! What `/metrics` counts for one label set: the histograms and counters of its accepted records.

use crate::prometheus::buckets;
use crate::validate::{Record, STATUSES};

/// A histogram over fixed boundaries (seconds): a count per bucket, not cumulative (the last is
/// `+Inf`), and the sum of the values in ms.
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    pub bounds: &'static [f64],
    pub counts: Vec<u64>,
    pub sum_ms: f64,
}

impl Histogram {
    pub fn new(bounds: &'static [f64]) -> Histogram {
        Histogram { bounds, counts: vec![0; bounds.len() + 1], sum_ms: 0.0 }
    }

    /// Adds a value in ms (nothing for `None`). The bucket is the first whose bound is at least the
    /// value in seconds (`le`, inclusive). O(log bounds).
    pub fn observe_ms(&mut self, ms: Option<f64>) {
        let Some(ms) = ms else { return };
        let seconds = ms / 1000.0;
        self.counts[self.bounds.partition_point(|&bound| bound < seconds)] += 1;
        self.sum_ms += ms;
    }
}

/// One label set's figures, each over the records that have the value (render figures are null for
/// a hidden stream; `stalls` is null without render).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub ttft: Histogram,
    pub ttft_arrival: Histogram,
    pub tpot: Histogram,
    pub tpot_arrival: Histogram,
    /// Each stream's median render delay (`renderDelay.p50`).
    pub render_delay: Histogram,
    /// Each stream's time stalled (`stalls.totalMs`).
    pub stall: Histogram,
    /// Streams by status, in [`STATUSES`] order.
    pub streams: [u64; STATUSES.len()],
    pub output_tokens: u64,
    /// Stalls (`stalls.count`) summed.
    pub stalls: u64,
    /// Streams with at least one stall.
    pub stalled_streams: u64,
}

impl Default for Series {
    fn default() -> Series {
        Series {
            ttft: Histogram::new(&buckets::TTFT),
            ttft_arrival: Histogram::new(&buckets::TTFT),
            tpot: Histogram::new(&buckets::TPOT),
            tpot_arrival: Histogram::new(&buckets::TPOT),
            render_delay: Histogram::new(&buckets::RENDER_DELAY),
            stall: Histogram::new(&buckets::STALL),
            streams: [0; STATUSES.len()],
            output_tokens: 0,
            stalls: 0,
            stalled_streams: 0,
        }
    }
}

impl Series {
    /// Counts one record (validated: its status is one of [`STATUSES`], its counts not negative).
    /// O(log bounds).
    pub fn add(&mut self, r: &Record) {
        if let Some(i) = STATUSES.iter().position(|s| *s == r.status) {
            self.streams[i] += 1;
        }
        self.output_tokens += u64::try_from(r.output_tokens).unwrap_or(0);
        self.ttft.observe_ms(r.ttft_ms);
        self.ttft_arrival.observe_ms(r.ttft_arrival_ms);
        self.tpot.observe_ms(r.tpot_ms);
        self.tpot_arrival.observe_ms(r.tpot_arrival_ms);
        self.render_delay.observe_ms(r.render_delay_p50_ms);
        self.stall.observe_ms(r.stall_total_ms);
        if let Some(count) = r.stall_count {
            self.stalls += u64::try_from(count).unwrap_or(0);
            self.stalled_streams += u64::from(count > 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_on_a_bound_is_in_that_bound_s_bucket() {
        let mut h = Histogram::new(&buckets::TPOT);
        for ms in [Some(0.5), Some(1.0), Some(1.0001), Some(80_000.0), Some(80_000.5), None] {
            h.observe_ms(ms);
        }
        assert_eq!(h.counts[0], 2, "0.5 ms and 1 ms are in le=0.001");
        assert_eq!(h.counts[1], 1);
        assert_eq!(h.counts[buckets::TPOT.len() - 1], 1, "80 s is in le=80");
        assert_eq!(h.counts[buckets::TPOT.len()], 1, "over the last bound: +Inf");
        assert_eq!(h.counts.iter().sum::<u64>(), 5);
        assert_eq!(h.sum_ms, 0.5 + 1.0 + 1.0001 + 80_000.0 + 80_000.5);
    }
}
