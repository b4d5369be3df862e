//! The query parameters the analytics endpoints share: the window (`from`, `to`), dimension filters,
//! `groupBy` and the goodput SLOs (the last two where the endpoint takes them: [`Takes`]). Unknown
//! parameters are refused, so a typo in a filter does not silently widen the answer.
//!
//! - `from`, `to`: epoch ms, integers from [`EARLIEST_MS`] (1970) to [`LATEST_MS`] (year 10000),
//!   `from < to`; records with `from <= startedAt < to` count. Defaults: `to` = now, `from` = `to` −
//!   24 h (not before 1970). The bounds keep every window and bucket computation far from `i64`
//!   overflow, and exact in `f64`.
//! - `groupBy`: comma-separated dimensions (see [`Dim`]); without it there is one group.
//! - a filter per dimension, by its name (`model=gpt-4o`); repeated, it matches any of its values
//!   (at most [`MAX_FILTER_VALUES`]).
//! - `slo.ttftMs`, `slo.tpotMs`: goodput thresholds (ms).
//!
//! Every refusal is an [`Invalid`] naming the parameter. Parsing is O(query length) and cannot panic.

use crate::dims::{Dim, GroupKey, EARLIEST_MS, LATEST_MS};
use crate::rollup::Slo;
use crate::validate::Invalid;
use std::collections::BTreeMap;

const DAY_MS: i64 = 24 * 60 * 60 * 1000;
/// The most values one dimension filter may list.
pub const MAX_FILTER_VALUES: usize = 100;

/// The shared parameters, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    pub from: i64,
    pub to: i64,
    pub group_by: Vec<Dim>,
    /// Each dimension at most once, with the values any of which matches.
    pub filters: Vec<(Dim, Vec<String>)>,
    pub slo: Slo,
}

/// An [`Invalid`] naming the query parameter `field`.
pub fn bad(field: &str, problem: String) -> Invalid {
    Invalid { field: Some(field.to_owned()), problem }
}

/// Which of the shared parameters besides the window and the filters an endpoint takes: the others
/// are refused as unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Takes {
    pub group_by: bool,
    pub slo: bool,
}

impl Takes {
    pub const ALL: Takes = Takes { group_by: true, slo: true };
}

/// Parses the query string (`None`: no parameters). `own` are the endpoint's other parameter names,
/// returned by name (each at most once); `takes` says whether `groupBy` and the SLOs are accepted.
/// `now_ms` is clamped to the range of `to`. O(query length); never panics.
pub fn parse(raw: Option<&str>, now_ms: i64, own: &[&str], takes: Takes) -> Result<(Window, BTreeMap<String, String>), Invalid> {
    let (mut from, mut to) = (None, None);
    let mut groups = Vec::new();
    let mut filters: Vec<(Dim, Vec<String>)> = Vec::new();
    let mut slo = Slo::default();
    let mut seen_group_by = false;
    let mut others = BTreeMap::new();
    for (key, value) in form_urlencoded::parse(raw.unwrap_or("").as_bytes()) {
        let (key, value) = (key.as_ref(), value.into_owned());
        match key {
            "from" | "to" => {
                let ms: i64 = value
                    .trim()
                    .parse()
                    .ok()
                    .filter(|ms| (EARLIEST_MS..=LATEST_MS).contains(ms))
                    .ok_or_else(|| bad(key, format!("expected epoch milliseconds, an integer from {EARLIEST_MS} (1970) to {LATEST_MS} (year 10000), got {value:?}")))?;
                let slot = if key == "from" { &mut from } else { &mut to };
                if slot.replace(ms).is_some() {
                    return Err(bad(key, "given more than once".into()));
                }
            }
            "groupBy" if takes.group_by => {
                if std::mem::replace(&mut seen_group_by, true) {
                    return Err(bad(key, "given more than once (list the dimensions separated by commas)".into()));
                }
                for name in value.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                    let dim = Dim::from_name(name).ok_or_else(|| bad(key, format!("unknown dimension {name:?}; known: {}", Dim::names())))?;
                    if !groups.contains(&dim) {
                        groups.push(dim);
                    }
                }
            }
            "slo.ttftMs" | "slo.tpotMs" if takes.slo => {
                let ms: f64 = value.trim().parse().ok().filter(|v: &f64| v.is_finite() && *v >= 0.0).ok_or_else(|| bad(key, format!("expected milliseconds (a number of at least 0), got {value:?}")))?;
                let slot = if key == "slo.ttftMs" { &mut slo.ttft_ms } else { &mut slo.tpot_ms };
                if slot.replace(ms).is_some() {
                    return Err(bad(key, "given more than once".into()));
                }
            }
            _ if own.contains(&key) => {
                if others.insert(key.to_owned(), value).is_some() {
                    return Err(bad(key, "given more than once".into()));
                }
            }
            _ => {
                let Some(dim) = Dim::from_name(key) else {
                    let slo = if takes.slo { &["slo.ttftMs", "slo.tpotMs"][..] } else { &[] };
                    let known: Vec<&str> = ["from", "to"].into_iter().chain(takes.group_by.then_some("groupBy")).chain(slo.iter().copied()).chain(own.iter().copied()).collect();
                    return Err(bad(key, format!("unknown parameter; known: {} and the filters {}", known.join(", "), Dim::names())));
                };
                match filters.iter_mut().find(|(d, _)| *d == dim) {
                    Some((_, values)) if values.len() >= MAX_FILTER_VALUES => return Err(bad(key, format!("more than {MAX_FILTER_VALUES} values"))),
                    Some((_, values)) => values.push(value),
                    None => filters.push((dim, vec![value])),
                }
            }
        }
    }
    let to = to.unwrap_or(now_ms.clamp(EARLIEST_MS, LATEST_MS));
    let from = from.unwrap_or((to - DAY_MS).max(EARLIEST_MS));
    if from >= to {
        return Err(bad("from", format!("must be before to ({from} >= {to})")));
    }
    Ok((Window { from, to, group_by: groups, filters, slo }, others))
}

/// The group key of `dims` for `group_by`.
pub fn project(dims: &crate::dims::Dims, group_by: &[Dim]) -> GroupKey {
    group_by.iter().map(|d| dims[d.index()].clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_errors() {
        let (w, _) = parse(None, 100 * DAY_MS, &[], Takes::ALL).unwrap();
        assert_eq!((w.from, w.to), (99 * DAY_MS, 100 * DAY_MS));
        let (w, own) = parse(Some("groupBy=variant,model&model=a&model=b%2Cc&slo.ttftMs=1000&metric=x"), DAY_MS, &["metric"], Takes::ALL).unwrap();
        assert_eq!(w.group_by, vec![Dim::Variant, Dim::Model]);
        assert_eq!(w.filters, vec![(Dim::Model, vec!["a".to_owned(), "b,c".to_owned()])]);
        assert_eq!(w.slo.ttft_ms, Some(1000.0));
        assert_eq!(own.get("metric").map(String::as_str), Some("x"));
        for (raw, field) in [("groupBy=region", "groupBy"), ("modle=x", "modle"), ("from=5&to=5", "from"), ("from=abc", "from"), ("slo.tpotMs=-1", "slo.tpotMs"), ("metric=a&metric=b", "metric")] {
            assert_eq!(parse(Some(raw), 0, &["metric"], Takes::ALL).unwrap_err().field.as_deref(), Some(field), "{raw}");
        }
        assert_eq!(parse(Some(&"model=m&".repeat(MAX_FILTER_VALUES + 1)), DAY_MS, &[], Takes::ALL).unwrap_err().field.as_deref(), Some("model"));
        assert!(parse(Some(&"model=m&".repeat(MAX_FILTER_VALUES)), DAY_MS, &[], Takes::ALL).is_ok());
        let window_only = Takes { group_by: false, slo: false };
        assert_eq!(parse(Some("groupBy=model"), DAY_MS, &[], window_only).unwrap_err().field.as_deref(), Some("groupBy"));
        let unknown = parse(Some("slo.tpotMs=50"), DAY_MS, &[], window_only).unwrap_err();
        assert_eq!(unknown.field.as_deref(), Some("slo.tpotMs"));
        assert!(unknown.problem.starts_with("unknown parameter") && !unknown.problem.contains("slo."), "{}", unknown.problem);
    }

    #[test]
    fn windows_stay_between_1970_and_the_year_10000() {
        // The window of issue 14: a 1 ms window at i64::MIN once read every record.
        for (raw, field) in [
            ("from=-9223372036854775808&to=-9223372036854775807", "from"),
            ("from=0&to=9223372036854775807", "to"),
            ("from=-1&to=5", "from"),
            ("to=253402300800001", "to"),
            ("from=99999999999999999999", "from"),
        ] {
            assert_eq!(parse(Some(raw), 0, &[], Takes::ALL).unwrap_err().field.as_deref(), Some(field), "{raw}");
        }
        let (w, _) = parse(Some("from=0&to=253402300800000"), 0, &[], Takes::ALL).unwrap();
        assert_eq!((w.from, w.to), (EARLIEST_MS, LATEST_MS));
        let (w, _) = parse(Some("to=1000"), 0, &[], Takes::ALL).unwrap();
        assert_eq!((w.from, w.to), (0, 1000), "the default from is not before 1970");
        let (w, _) = parse(None, i64::MAX, &[], Takes::ALL).unwrap();
        assert_eq!((w.from, w.to), (LATEST_MS - DAY_MS, LATEST_MS), "a clock past the latest time is clamped");
        assert_eq!(parse(None, i64::MIN, &[], Takes::ALL).unwrap_err().field.as_deref(), Some("from"), "a clock before 1970 leaves no window");
    }
}
