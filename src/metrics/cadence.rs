//! A stream's cadence: how much output was shown by when, downsampled as it happens so that stalls and
//! bursts survive. Kept first: the first and last points, then both edges of every stall (the longest
//! stalls first when there are too many), then the points whose removal would bend the curve most
//! (Visvalingam–Whyatt: the area of the triangle a point makes with its neighbours, an order that does
//! not depend on the scale of either axis).
//!
//! Points are thinned in passes that remove the local minima of that order: as the stream runs, when
//! twice [`MAX_POINTS`] are kept, and at the end, to [`MAX_POINTS`] at most.
//! Memory is O([`MAX_POINTS`]); [`Cadence::add`] is amortized O(1).

use super::stalls::STALL_MS;
use alloc::vec::Vec;

/// Most points a report carries.
pub const MAX_POINTS: usize = 32;
/// Most bytes the points take in the beacon's JSON, `[ms,tokens]` each with its separating comma.
pub const MAX_JSON_BYTES: usize = 384;
/// Points kept between thinnings.
const CAPACITY: usize = 2 * MAX_POINTS;

#[derive(Clone, Copy, Debug)]
struct Point {
    at: f64,
    /// Output events shown by `at`, in all.
    count: f64,
    /// What removing it would lose: [`STALL_RANK`] plus the longest stall it borders in the full
    /// series, for good; else its triangle's area ([`area`]) once it has two neighbours. The ends
    /// always stay.
    rank: f64,
}

#[derive(Clone, Debug, Default)]
pub struct Cadence {
    points: Vec<Point>,
}

impl Cadence {
    /// `count` output events in all were shown by `at`. Times never go back; a second point at the same
    /// time replaces the first.
    pub fn add(&mut self, at: f64, count: u64) {
        let count = count as f64;
        let mut rank = 0.0;
        if let Some(last) = self.points.last_mut() {
            let gap = at - last.at;
            if gap <= 0.0 {
                last.count = count;
                let before = self.points.len().wrapping_sub(2);
                rerank(&mut self.points, before);
                return;
            }
            if gap >= STALL_MS {
                rank = STALL_RANK + gap;
                last.rank = last.rank.max(rank);
            }
        }
        if self.points.len() == CAPACITY {
            thin(&mut self.points, MAX_POINTS);
        }
        self.points.push(Point { at, count, rank });
        let before = self.points.len().wrapping_sub(2);
        rerank(&mut self.points, before);
    }

    /// Reduces the points to at most [`MAX_POINTS`], taking at most [`MAX_JSON_BYTES`] as JSON (as many
    /// as fit when every point is as long as the last), and
    /// writes them into `points` (empty until then) as `[ms since start, output shown]`, the output scaled
    /// from events to `tokens / events` tokens each, both rounded; it stays empty when nothing was shown.
    /// O([`MAX_POINTS`]) a pass. Written in place (the report's), not returned: returned points were made on
    /// the stack and then copied into the report (45 B of wasm).
    pub fn write_points(&mut self, start: f64, tokens: u64, events: u64, points: &mut Points) {
        // Without events there are no points to scale. The cast saturates: below 0 is 0.
        let per_event = tokens as f64 / events as f64;
        let round = |x: f64| (x + 0.5) as u32;
        let shown = |p: &Point| [round(p.at - start), round(p.count * per_event)];
        // The last point has the longest numbers: at most this many points fit the JSON bytes.
        let longest = self.points.last().map_or(1, |p| {
            let [ms, n] = shown(p);
            digits(ms) + digits(n) + 4
        });
        thin(&mut self.points, MAX_POINTS.min(MAX_JSON_BYTES / longest));
        for (to, from) in points.all.iter_mut().zip(&self.points) {
            *to = shown(from);
            points.len += 1;
        }
    }
}

/// At most [`MAX_POINTS`] `[ms, output]` points, held in place: the report's are copied into the wasm's
/// numbers as soon as they are made, so a `Vec` would be code to allocate and free for nothing.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct Points {
    all: [[u32; 2]; MAX_POINTS],
    len: usize,
}

impl core::ops::Deref for Points {
    type Target = [[u32; 2]];

    fn deref(&self) -> &[[u32; 2]] {
        self.all.get(..self.len).unwrap_or_default()
    }
}

/// As a list, the way a `Vec` of them prints.
impl core::fmt::Debug for Points {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Thins the points to at most `most` (at least 2) in passes that each remove every inner point
/// ranked no higher than either neighbour (a local minimum: never two neighbours in one pass), stall
/// edges only when nothing else is left to remove, ranking the rest again after each pass. O(len) a
/// pass; a pass removes at least one point, and about a third of them in a steady stream.
fn thin(points: &mut Vec<Point>, most: usize) {
    let mut floor = STALL_RANK;
    while points.len() > most.max(2) {
        let (len, mut kept, mut before, mut removed) = (points.len(), 1, f64::INFINITY, false);
        for i in 1..len {
            let point = points[i];
            // The ends stay, and the least inner point is always a local minimum. The next point's rank by a
            // pattern, not an index (`i + 2 < len` left a bounds check in the wasm).
            let after = match points.get(i + 1..) {
                Some([next, _, ..]) => next.rank,
                _ => f64::INFINITY,
            };
            removed = !removed && i + 1 < len && point.rank < floor && point.rank <= before && point.rank <= after;
            if !removed {
                points[kept] = point;
                kept += 1;
            }
            before = point.rank;
        }
        if kept == len {
            floor = f64::INFINITY;
        }
        points.truncate(kept);
        for i in 1..kept {
            rerank(points, i);
        }
    }
}

/// Ranks the point at `i` again from its neighbours, if it has two and borders no stall (any `i` is
/// safe).
fn rerank(points: &mut [Point], i: usize) {
    if let Some([a, b, c]) = points.get_mut(i.wrapping_sub(1)..i.wrapping_add(2)) {
        if b.rank < STALL_RANK {
            b.rank = area(*a, *b, *c);
        }
    }
}

/// Ranks above any triangle's area (an hour of ms times 10 million events is 3.6e13): stall edges.
const STALL_RANK: f64 = 1e15;

/// The (doubled) area of the triangle `b` makes with its neighbours: what removing it would lose.
fn area(a: Point, b: Point, c: Point) -> f64 {
    ((b.at - a.at) * (c.count - a.count) - (c.at - a.at) * (b.count - a.count)).abs()
}

/// Decimal digits of `n`.
fn digits(mut n: u32) -> usize {
    let mut digits = 1;
    while n >= 10 {
        n /= 10;
        digits += 1;
    }
    digits
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(cadence: &Cadence, tokens: u64, events: u64) -> Points {
        let mut points = Points::default();
        cadence.clone().write_points(0.0, tokens, events, &mut points);
        points
    }

    fn shown(cadence: &Cadence) -> Vec<[u32; 2]> {
        points(cadence, 1, 1).to_vec()
    }

    #[test]
    fn short_series_are_kept_whole() {
        let mut c = Cadence::default();
        for i in 1..=10u64 {
            c.add(100.0 + 20.0 * i as f64, i);
        }
        assert_eq!(shown(&c).len(), 10);
        assert_eq!(shown(&c)[0], [120, 1]);
        assert_eq!(shown(&c)[9], [300, 10]);
    }

    #[test]
    fn same_time_replaces() {
        let mut c = Cadence::default();
        c.add(5.0, 1);
        c.add(5.0, 3);
        assert_eq!(shown(&c), [[5, 3]]);
    }

    #[test]
    fn stalls_and_ends_survive_a_long_steady_stream() {
        let mut c = Cadence::default();
        let mut at = 300.0;
        let mut stalls = Vec::new();
        for i in 1..=2000u64 {
            at += if i % 400 == 0 { 700.0 + i as f64 } else { 20.0 };
            if i % 400 == 0 {
                stalls.push((at, i));
            }
            c.add(at, i);
        }
        let points = shown(&c);
        assert!(points.len() <= MAX_POINTS);
        assert_eq!(points[0], [320, 1]);
        assert_eq!(*points.last().unwrap(), [at as u32, 2000]);
        for (end, i) in stalls {
            let before = points.iter().position(|&p| p == [(end - 700.0 - i as f64) as u32, i as u32 - 1]);
            assert!(before.is_some_and(|b| points[b + 1] == [end as u32, i as u32]), "stall before event {i} lost: {points:?}");
        }
    }

    #[test]
    fn a_burst_is_kept_before_steady_points() {
        let mut c = Cadence::default();
        for i in 1..=200u64 {
            // Steady, except 50 events at once at event 100.
            let n = if i < 100 { i } else { i + 50 };
            c.add(20.0 * i as f64, n);
        }
        let points = shown(&c);
        assert!(points.contains(&[1980, 99]) && points.contains(&[2000, 150]), "{points:?}");
    }

    #[test]
    fn the_longest_stalls_win_when_there_are_too_many() {
        let mut c = Cadence::default();
        let mut at = 0.0;
        for i in 1..=100u64 {
            at += 500.0 + i as f64;
            c.add(at, i);
        }
        let points = shown(&c);
        assert_eq!(points.len(), MAX_POINTS);
        // The last gaps are the longest: the kept points are the last ones, and the first.
        assert_eq!(points[1][1], 100 - (MAX_POINTS as u32 - 2));
    }

    #[test]
    fn json_bytes_are_bounded() {
        let mut c = Cadence::default();
        for i in 1..=1000u64 {
            c.add(1_000_000.0 + 3000.0 * i as f64, 1_000_000 + i);
        }
        let points = shown(&c);
        let json: usize = points.iter().map(|&[ms, n]| digits(ms) + digits(n) + 4).sum();
        assert!(json <= MAX_JSON_BYTES && points.len() < MAX_POINTS, "{json} bytes in {} points", points.len());
    }

    proptest::proptest! {
        /// Any stream with at most 10 stalls (22 points fit the JSON bytes at these sizes): every stall
        /// keeps both edges, the ends are kept, and the points stay in order within the bounds.
        #[test]
        fn stalls_survive_any_stream(gaps in proptest::collection::vec((0u32..400, 1u64..4), 1..3000), stalls in proptest::collection::vec((0usize..3000, 500u32..5000), 0..11)) {
            let mut c = Cadence::default();
            let (mut at, mut count) = (250u32, 0u64);
            let mut all: Vec<[u32; 2]> = Vec::new();
            let mut edges = Vec::new();
            for (i, &(gap, events)) in gaps.iter().enumerate() {
                let stall = stalls.iter().find(|s| s.0 == i).map(|s| s.1);
                if let Some(stall) = stall {
                    if let Some(&before) = all.last() {
                        edges.push((before, [at + stall, (count + events) as u32]));
                    }
                }
                at += stall.unwrap_or(1 + gap % 99);
                count += events;
                c.add(f64::from(at), count);
                all.push([at, count as u32]);
            }
            let points = shown(&c);
            proptest::prop_assert!(points.len() <= MAX_POINTS);
            proptest::prop_assert!(points.iter().map(|&[ms, n]| digits(ms) + digits(n) + 4).sum::<usize>() <= MAX_JSON_BYTES);
            proptest::prop_assert_eq!(points[0], all[0]);
            proptest::prop_assert_eq!(points.last(), all.last());
            proptest::prop_assert!(points.windows(2).all(|w| w[0][0] < w[1][0] && w[0][1] <= w[1][1]));
            for (before, after) in edges {
                let kept = points.windows(2).any(|w| w[0] == before && w[1] == after);
                proptest::prop_assert!(kept, "stall {:?} -> {:?} lost: {:?}", before, after, points);
            }
        }
    }

    #[test]
    fn events_scale_to_tokens() {
        let mut c = Cadence::default();
        c.add(10.0, 1);
        c.add(30.4, 4);
        assert_eq!(*points(&c, 12, 4), [[10, 3], [30, 12]]);
    }
}
