//! The query parameters the analytics endpoints share: the window (`from`, `to`), dimension filters,
//! `groupBy` and the goodput SLOs. Unknown parameters are refused, so a typo in a filter does not
//! silently widen the answer.
//!
//! - `from`, `to`: epoch ms; records with `from <= startedAt < to` count. Defaults: `to` = now,
//!   `from` = `to` − 24 h.
//! - `groupBy`: comma-separated dimensions (see [`Dim`]); without it there is one group.
//! - a filter per dimension, by its name (`model=gpt-4o`); repeated, it matches any of its values.
//! - `slo.ttftMs`, `slo.tpotMs`: goodput thresholds (ms).

use crate::dims::Dim;
use crate::rollup::Slo;
use crate::validate::Invalid;
use std::collections::BTreeMap;

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

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

pub fn bad(field: &str, problem: String) -> Invalid {
    Invalid { field: Some(field.to_owned()), problem }
}

/// Parses the query string (`None`: no parameters). `own` are the endpoint's other parameter names,
/// returned by name (each at most once); `group_by` says whether `groupBy` is accepted.
pub fn parse(raw: Option<&str>, now_ms: i64, own: &[&str], group_by: bool) -> Result<(Window, BTreeMap<String, String>), Invalid> {
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
                let ms: i64 = value.trim().parse().map_err(|_| bad(key, format!("expected epoch milliseconds (an integer), got {value:?}")))?;
                let slot = if key == "from" { &mut from } else { &mut to };
                if slot.replace(ms).is_some() {
                    return Err(bad(key, "given more than once".into()));
                }
            }
            "groupBy" if group_by => {
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
            "slo.ttftMs" | "slo.tpotMs" => {
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
                    let known: Vec<&str> = ["from", "to"].into_iter().chain(group_by.then_some("groupBy")).chain(["slo.ttftMs", "slo.tpotMs"]).chain(own.iter().copied()).collect();
                    return Err(bad(key, format!("unknown parameter; known: {} and the filters {}", known.join(", "), Dim::names())));
                };
                match filters.iter_mut().find(|(d, _)| *d == dim) {
                    Some((_, values)) => values.push(value),
                    None => filters.push((dim, vec![value])),
                }
            }
        }
    }
    let to = to.unwrap_or(now_ms);
    let from = from.unwrap_or(to.saturating_sub(DAY_MS));
    if from >= to {
        return Err(bad("from", format!("must be before to ({from} >= {to})")));
    }
    Ok((Window { from, to, group_by: groups, filters, slo }, others))
}

/// The group key of `dims` for `group_by`.
pub fn project(dims: &crate::dims::Dims, group_by: &[Dim]) -> Vec<Option<String>> {
    group_by.iter().map(|d| dims[d.index()].clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_errors() {
        let (w, _) = parse(None, 100 * DAY_MS, &[], true).unwrap();
        assert_eq!((w.from, w.to), (99 * DAY_MS, 100 * DAY_MS));
        let (w, own) = parse(Some("groupBy=variant,model&model=a&model=b%2Cc&slo.ttftMs=1000&metric=x"), 0, &["metric"], true).unwrap();
        assert_eq!(w.group_by, vec![Dim::Variant, Dim::Model]);
        assert_eq!(w.filters, vec![(Dim::Model, vec!["a".to_owned(), "b,c".to_owned()])]);
        assert_eq!(w.slo.ttft_ms, Some(1000.0));
        assert_eq!(own.get("metric").map(String::as_str), Some("x"));
        for (raw, field) in [("groupBy=region", "groupBy"), ("modle=x", "modle"), ("from=5&to=5", "from"), ("from=abc", "from"), ("slo.tpotMs=-1", "slo.tpotMs"), ("metric=a&metric=b", "metric")] {
            assert_eq!(parse(Some(raw), 0, &["metric"], true).unwrap_err().field.as_deref(), Some(field), "{raw}");
        }
        assert_eq!(parse(Some("groupBy=model"), 0, &[], false).unwrap_err().field.as_deref(), Some("groupBy"));
    }
}
