//! The report as [`super::close`] hands it to JavaScript: one number per field, in the order of
//! [`fields`]. That function is the one definition of the layout: `js/lib/report-fields.js`, from which
//! the JavaScript rebuilds the object, is generated from it (`tests/report_fields.rs` checks that the
//! file is current and rewrites it on request). Null is NaN, booleans are 0 or 1, a choice is the index
//! of its name, and the cadence, last, is its number of points and then [`MAX_POINTS`] `[x, y]` pairs.
//!
//! The names only reach the generated file: the wasm build ignores them, so they cost it nothing.

use crate::decode::Format;
use crate::metrics::cadence::MAX_POINTS;
use crate::metrics::report::{DelayQuantiles, GapQuantiles, RenderSource, Report, Status, TokenSource};
use crate::metrics::stalls::Stalls;

/// Number of values [`numbers`] returns: one per field, and the cadence's.
pub const LEN: usize = 41 + 2 * MAX_POINTS;

/// One field's value.
#[derive(Clone, Copy)]
pub enum Slot<'a> {
    /// A number, or null.
    Number(Option<f64>),
    Bool(bool),
    /// The index of a name among those `names` gives for 0, 1, ... (until `None`), or null.
    Choice(Option<usize>, fn(usize) -> Option<&'static str>),
    /// At most [`MAX_POINTS`] `[x, y]` pairs: their count, then `2 × MAX_POINTS` numbers.
    Points(&'a [[u32; 2]]),
}

/// The report's numbers in layout order. O(1).
pub fn numbers(r: &Report) -> [f64; LEN] {
    let mut out = [f64::NAN; LEN];
    let mut i = 0;
    let mut points: &[[u32; 2]] = &[];
    // Kept small, so that it is inlined at each field and the wasm build drops the names: the points,
    // which go last, are written after. With `fields` and `gaps` inlined too, `i` is a constant at each
    // field: a store to a known place, without a bounds check.
    // A null stays the NaN the numbers start as: a value is stored only when there is one (a NaN constant
    // at each field was 9 bytes of wasm).
    fields(r, &mut |_, slot| {
        let value = match slot {
            Slot::Number(value) => value,
            Slot::Bool(value) => Some(f64::from(u8::from(value))),
            Slot::Choice(index, _) => index.map(|i| i as f64),
            Slot::Points(all) => {
                points = all;
                None
            }
        };
        if let Some(value) = value {
            out[i] = value;
        }
        i += 1;
    });
    const AT: usize = LEN - 2 * MAX_POINTS;
    // The points are a report's `cadence::Points`, at most `MAX_POINTS` of them, so the count needs no
    // bound; the zip stops at the last pair either way.
    out[AT - 1] = points.len() as f64;
    for (to, &[x, y]) in out[AT..].chunks_exact_mut(2).zip(points) {
        to.copy_from_slice(&[f64::from(x), f64::from(y)]);
    }
    out
}

/// Hands each field of `r` to `field`, in layout order, with its name in the JavaScript report. A dotted
/// name is a member of a nested object, which is null as a whole when its first member is.
#[inline(always)] // into `numbers` (see there); its other caller is the test that generates the JavaScript
pub fn fields<'a>(r: &'a Report, field: &mut impl FnMut(&'static str, Slot<'a>)) {
    let number = |value: Option<f64>| Slot::Number(value);
    let count = |value: u64| Slot::Number(Some(value as f64));
    field("format", choice(r.format));
    field("status", choice(Some(r.status)));
    field("httpStatus", number(r.http_status.map(f64::from)));
    field("renderSource", choice(r.render_source));
    field("ttfbMs", number(r.ttfb_ms));
    field("ttftMs", number(r.ttft_ms));
    field("ttftArrivalMs", number(r.ttft_arrival_ms));
    field("ttfoMs", number(r.ttfo_ms));
    field("tpotMs", number(r.tpot_ms));
    field("tpotArrivalMs", number(r.tpot_arrival_ms));
    field("tokensPerSecond", number(r.tokens_per_second));
    field("outputTokens", count(r.output_tokens));
    field("tokenSource", choice(Some(r.token_source)));
    field("reasoningTokens", count(r.reasoning_tokens));
    field("outputEvents", count(r.output_events));
    field("outputEventsByKind.answer", count(r.output_events_by_kind.answer));
    field("outputEventsByKind.reasoning", count(r.output_events_by_kind.reasoning));
    field("outputEventsByKind.tool", count(r.output_events_by_kind.tool));
    gaps(["gaps.p50", "gaps.p90", "gaps.p99", "gaps.max"], r.gaps, field);
    gaps(["arrivalGaps.p50", "arrivalGaps.p90", "arrivalGaps.p99", "arrivalGaps.max"], r.arrival_gaps, field);
    field("jitterMs", number(r.jitter_ms));
    let stalls = |part: fn(Stalls) -> f64| number(r.stalls.map(part));
    field("stalls.count", stalls(|s| f64::from(s.count)));
    field("stalls.count1000", stalls(|s| f64::from(s.count_1000)));
    field("stalls.longestMs", stalls(|s| s.longest_ms));
    field("stalls.totalMs", stalls(|s| s.total_ms));
    let delay = |part: fn(DelayQuantiles) -> f64| number(r.render_delay.map(part));
    field("renderDelay.p50", delay(|d| d.p50));
    field("renderDelay.p90", delay(|d| d.p90));
    field("durationMs", number(r.duration_ms));
    field("hidden", Slot::Bool(r.hidden));
    field("anomalies.malformedEvents", number(Some(f64::from(r.anomalies.malformed_events))));
    field("anomalies.oversizeDropped", number(Some(f64::from(r.anomalies.oversize_dropped))));
    field("anomalies.unterminatedLast", Slot::Bool(r.anomalies.unterminated_last));
    field("def", number(Some(f64::from(r.def))));
    field("clockMs", number(Some(r.clock_ms)));
    field("cadence", Slot::Points(&r.cadence));
}

/// An enumeration laid out as the index of its name.
trait Choice: Copy + 'static {
    /// Every value, in the order of their discriminants (checked by a test).
    const ALL: &'static [Self];
    fn name(self) -> &'static str;
    /// The index in [`Choice::ALL`]: the discriminant, not a search (a loop per field in the wasm).
    fn index(self) -> usize;
}

macro_rules! choices {
    ($($kind:ty),*) => {$(
        impl Choice for $kind {
            const ALL: &'static [Self] = &<$kind>::ALL;
            fn name(self) -> &'static str {
                <$kind>::name(self)
            }
            fn index(self) -> usize {
                self as usize
            }
        }
    )*};
}

choices!(Format, Status, RenderSource, TokenSource);

/// The slot of `value`: its index among `T::ALL`, with their names for the generated table.
fn choice<T: Choice>(value: Option<T>) -> Slot<'static> {
    Slot::Choice(value.map(T::index), |i| T::ALL.get(i).map(|&t| t.name()))
}

/// The four fields of a set of gap quantiles: p50, p90, p99, max.
#[inline(always)] // as `fields`
fn gaps<'a>(names: [&'static str; 4], quantiles: Option<GapQuantiles>, field: &mut impl FnMut(&'static str, Slot<'a>)) {
    // Four calls, not a loop over the values: the loop kept them in a stack array, stored on every turn.
    let [p50, p90, p99, max] = names;
    field(p50, Slot::Number(quantiles.map(|g| g.p50)));
    field(p90, Slot::Number(quantiles.map(|g| g.p90)));
    field(p99, Slot::Number(quantiles.map(|g| g.p99)));
    field(max, Slot::Number(quantiles.map(|g| g.max)));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn in_discriminant_order<T: Choice>() {
        assert!(T::ALL.iter().enumerate().all(|(i, &value)| value.index() == i));
    }

    #[test]
    fn choices_are_listed_in_discriminant_order() {
        in_discriminant_order::<Format>();
        in_discriminant_order::<Status>();
        in_discriminant_order::<RenderSource>();
        in_discriminant_order::<TokenSource>();
    }
}
