//! The histograms' bucket boundaries (upper bounds, seconds, ascending; `+Inf` is implied).
//!
//! TTFT and TPOT hold every boundary of vLLM's own `vllm:time_to_first_token_seconds` and
//! `vllm:time_per_output_token_seconds` (also its `vllm:inter_token_latency_seconds`), as
//! `vllm/v1/metrics/loggers.py` declares them (vllm-project/vllm at 005a810b; `vllm/engine/metrics.py`
//! of v0 has the same lists), so `histogram_quantile` over ours and over vLLM's has edges in the same
//! places and the two compare on one panel. A few boundaries are added where users' figures lie and
//! vLLM's are far apart (TTFT from 0.2 to 4 s, TPOT under 10 ms); each of vLLM's stays, so a quantile
//! of ours is never coarser than theirs.

/// vLLM's TTFT boundaries.
pub const VLLM_TTFT: [f64; 22] = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0];

/// vLLM's TPOT (and inter-token latency) boundaries.
pub const VLLM_TPOT: [f64; 19] = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0];

/// TTFT, render and arrival: vLLM's, with 0.2, 0.3, 0.4, 1.5, 2, 3 and 4 s added.
pub const TTFT: [f64; 29] = [
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
];

/// TPOT, render and arrival: vLLM's, with 1, 2.5, 5, 7.5, 15, 20, 30 and 40 ms added.
pub const TPOT: [f64; 27] = [
    0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
];

/// A stream's median render delay (paint after arrival): a frame is 16.7 ms at 60 Hz.
pub const RENDER_DELAY: [f64; 16] = [0.001, 0.0025, 0.005, 0.01, 0.02, 0.035, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

/// A stream's time stalled (the sum of its render gaps of 500 ms or more): `0` holds the streams
/// that never stalled.
pub const STALL: [f64; 14] = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 7.5, 10.0, 15.0, 20.0, 30.0, 60.0, 120.0];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_vllm_boundary_is_ours_and_every_list_ascends() {
        assert!(VLLM_TTFT.iter().all(|b| TTFT.contains(b)));
        assert!(VLLM_TPOT.iter().all(|b| TPOT.contains(b)));
        for list in [&TTFT[..], &TPOT, &RENDER_DELAY, &STALL] {
            assert!(list.windows(2).all(|w| w[0] < w[1]), "{list:?}");
        }
    }
}
