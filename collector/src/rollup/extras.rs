//! What a rollup counts of a stream beyond its metrics' distributions: whether users give up, the
//! figures per length band, and whether output arrived in bunches. One list, [`of`], read by [`Rollup::add`](super::Rollup::add) and
//! written by the ClickHouse store as bucket-count rows beside the metrics' own (index after theirs),
//! so the two stores count the same streams the same way.

use super::{length_band, sketch_key, Row};
use crate::dims::Metric;

/// One count a stream adds, under a sketch bucket key (0 for the plain counts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extra {
    /// The stream reached its first token.
    Reached,
    /// It reached it, then the user stopped it or left ([`super::stops`]).
    Stopped,
    /// A stream the user stopped or left: its render TTFT, when it has one (key: its bucket).
    StoppedTtft,
    /// A stopped stream's render TPOT, when it has one (key: its bucket).
    StoppedTpot,
    /// Render TPOT per length band (key: its bucket).
    BandTpot(usize),
    /// Per length band, a stream whose stall count is known, and one with a stall.
    BandStallKnown(usize),
    BandStalled(usize),
    /// A stream whose bunching is known ([`super::bunched`]), and one whose output came in bunches.
    BunchKnown,
    Bunched,
}

/// The number of [`Extra`]s.
pub const COUNT: usize = 15;

impl Extra {
    /// Every extra, in [`Extra::index`] order.
    pub const ALL: [Extra; COUNT] = [
        Extra::Reached,
        Extra::Stopped,
        Extra::StoppedTtft,
        Extra::StoppedTpot,
        Extra::BandTpot(0),
        Extra::BandTpot(1),
        Extra::BandTpot(2),
        Extra::BandStallKnown(0),
        Extra::BandStallKnown(1),
        Extra::BandStallKnown(2),
        Extra::BandStalled(0),
        Extra::BandStalled(1),
        Extra::BandStalled(2),
        Extra::BunchKnown,
        Extra::Bunched,
    ];

    /// Its number among the bucket-count series a store keeps: after the metrics' ([`Metric::index`]).
    pub fn index(self) -> usize {
        Metric::ALL.len() + Extra::ALL.iter().position(|&e| e == self).expect("every extra is in ALL")
    }

    pub fn from_index(index: usize) -> Option<Extra> {
        Extra::ALL.get(index.checked_sub(Metric::ALL.len())?).copied()
    }
}

/// The extras `row` adds, each once. O(1).
pub fn of(row: &Row) -> Vec<(Extra, i32)> {
    let mut out = Vec::with_capacity(8);
    if row.reached {
        out.push((Extra::Reached, 0));
        if row.stopped {
            out.push((Extra::Stopped, 0));
        }
    }
    // Beside the metrics' own sketches, which count every stream with the value.
    if row.stopped {
        out.extend(row.ttft_ms.map(|v| (Extra::StoppedTtft, sketch_key(Some(v)))));
        out.extend(row.tpot_ms.map(|v| (Extra::StoppedTpot, sketch_key(Some(v)))));
    }
    if let Some(band) = length_band(row.output_tokens) {
        out.extend(row.tpot_ms.map(|v| (Extra::BandTpot(band), sketch_key(Some(v)))));
        if let Some(stalls) = row.stall_count {
            out.push((Extra::BandStallKnown(band), 0));
            if stalls > 0 {
                out.push((Extra::BandStalled(band), 0));
            }
        }
    }
    if let Some(bunched) = row.bunched {
        out.push((Extra::BunchKnown, 0));
        if bunched {
            out.push((Extra::Bunched, 0));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_follow_the_metrics_and_round_trip() {
        for (i, extra) in Extra::ALL.into_iter().enumerate() {
            assert_eq!(extra.index(), Metric::ALL.len() + i);
            assert_eq!(Extra::from_index(extra.index()), Some(extra));
        }
        assert_eq!(Extra::from_index(0), None);
        assert_eq!(Extra::from_index(Metric::ALL.len() + COUNT), None);
    }

    #[test]
    fn a_stopped_long_stream_counts_everywhere() {
        let row = Row { reached: true, stopped: true, ttft_ms: Some(900.0), tpot_ms: Some(40.0), output_tokens: 600, stall_count: Some(2), ..Row::default() };
        let kinds: Vec<Extra> = of(&row).into_iter().map(|(e, _)| e).collect();
        assert_eq!(kinds, [Extra::Reached, Extra::Stopped, Extra::StoppedTtft, Extra::StoppedTpot, Extra::BandTpot(2), Extra::BandStallKnown(2), Extra::BandStalled(2)]);
        let never_started = Row { stopped: true, ..Row::default() };
        assert!(of(&never_started).is_empty(), "a stop before the first token is not a stop among reached streams");
        let unseen = Row { reached: true, stopped: true, ttft_ms: None, tpot_ms: None, ..Row::default() };
        assert_eq!(of(&unseen).len(), 2, "reached and stopped, with no value to band");
        let bunched = |b| of(&Row { bunched: b, ..Row::default() }).into_iter().map(|(e, _)| e).collect::<Vec<_>>();
        assert_eq!((bunched(Some(true)), bunched(Some(false)), bunched(None)), (vec![Extra::BunchKnown, Extra::Bunched], vec![Extra::BunchKnown], vec![]));
    }
}
