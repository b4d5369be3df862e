//! The timeline of one stream: when it started, when output events arrived, when they were painted.
//! Everything is folded into running figures as it happens, so memory is O(1) in stream length.

use super::cadence::Cadence;
use super::moments::Moments;
use super::pending::{Group, Pending};
use super::sketch::Sketch;
use super::stalls::Stalls;

#[derive(Clone, Debug)]
pub struct Timeline {
    pub start: f64,
    pub headers_at: Option<f64>,
    pub first_arrival: Option<f64>,
    pub last_arrival: Option<f64>,
    /// Intervals between consecutive output events (0 between events of one chunk).
    pub arrival_gaps: Sketch,
    /// Output events arrived by each arrival.
    pub arrival_cadence: Cadence,
    arrived: u64,
    pending: Pending,
    pub first_paint: Option<f64>,
    pub last_paint: Option<f64>,
    pub first_answer_paint: Option<f64>,
    /// Intervals between consecutive frames that showed new text.
    pub render_gaps: Sketch,
    pub render_gap_moments: Moments,
    pub stalls: Stalls,
    /// `paint − arrive` of every output event.
    pub render_delays: Sketch,
    /// Output events shown by each frame.
    pub paint_cadence: Cadence,
    painted: u64,
}

impl Timeline {
    pub fn new(start: f64) -> Self {
        Timeline {
            start,
            headers_at: None,
            first_arrival: None,
            last_arrival: None,
            arrival_gaps: Sketch::new(),
            arrival_cadence: Cadence::default(),
            arrived: 0,
            pending: Pending::default(),
            first_paint: None,
            last_paint: None,
            first_answer_paint: None,
            render_gaps: Sketch::new(),
            render_gap_moments: Moments::default(),
            stalls: Stalls::default(),
            render_delays: Sketch::new(),
            paint_cadence: Cadence::default(),
            painted: 0,
        }
    }

    /// `events` output events (of which some answer text when `has_answer`) arrived at `at`.
    pub fn arrive(&mut self, at: f64, events: u64, has_answer: bool) {
        if events == 0 {
            return;
        }
        if let Some(previous) = self.last_arrival {
            self.arrival_gaps.add((at - previous).max(0.0));
        } else {
            self.first_arrival = Some(at);
        }
        self.arrival_gaps.add_n(0.0, events - 1);
        self.last_arrival = Some(at);
        self.arrived += events;
        self.arrival_cadence.add(at, self.arrived);
        self.pending.push(Group { arrived_at: at, count: events, has_answer });
    }

    /// A frame was presented at `at` showing everything that arrived so far. A frame with nothing new
    /// to show is not a render event and changes nothing.
    pub fn paint(&mut self, at: f64) {
        if self.pending.is_empty() {
            return;
        }
        for group in self.pending.groups() {
            self.render_delays.add_n((at - group.arrived_at).max(0.0), group.count);
            self.painted += group.count;
            if group.has_answer && self.first_answer_paint.is_none() {
                self.first_answer_paint = Some(at);
            }
        }
        self.pending.clear();
        match self.last_paint {
            Some(previous) => {
                let gap = (at - previous).max(0.0);
                self.render_gaps.add(gap);
                self.render_gap_moments.add(gap);
                self.stalls.add_gap(gap);
            }
            None => self.first_paint = Some(at),
        }
        self.last_paint = Some(at);
        self.paint_cadence.add(at, self.painted);
    }
}
