//! Writing the counts: the Prometheus text format 0.0.4, or OpenMetrics 1.0 text, chosen by the
//! request's `Accept` header ([`negotiate`]).
//!
//! Both write the same samples, so a series is the same whichever format a scrape got: bucket
//! bounds as Python's `prometheus_client` (vLLM's exporter) writes them (`le="1.0"`, `le="0.005"`,
//! `le="+Inf"`), counts as integers. OpenMetrics differs in its metadata (a counter family is named
//! without `_total`, seconds families carry `# UNIT`) and ends with `# EOF`.

use crate::prometheus::labels::{self, LabelSet};
use crate::prometheus::series::{Histogram, Series};
use crate::prometheus::table::Table;
use crate::validate::STATUSES;
use std::fmt::Write;

/// An exposition format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    OpenMetrics,
}

impl Format {
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Text => "text/plain; version=0.0.4; charset=utf-8",
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

/// OpenMetrics when the `Accept` header gives `application/openmetrics-text` a quality above 0 and
/// at least that of `text/plain` (or `text/*`, `*/*`); otherwise text, the format every scraper reads
/// (never 406). Prometheus asks for OpenMetrics first. O(header length); never panics.
pub fn negotiate(accept: Option<&str>) -> Format {
    let (mut open_metrics, mut text) = (0.0_f64, 0.0_f64);
    for range in accept.unwrap_or("").split(',') {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let quality = parts.filter_map(|p| p.split_once('=')).find(|(name, _)| name.trim().eq_ignore_ascii_case("q")).map_or(Some(1.0), |(_, q)| q.trim().parse::<f64>().ok());
        let Some(quality) = quality.filter(|q| (0.0..=1.0).contains(q)) else { continue };
        match media.as_str() {
            "application/openmetrics-text" => open_metrics = open_metrics.max(quality),
            "text/plain" | "text/*" | "*/*" => text = text.max(quality),
            _ => {}
        }
    }
    if open_metrics > 0.0 && open_metrics >= text {
        Format::OpenMetrics
    } else {
        Format::Text
    }
}

/// What a family holds per label set.
enum Values {
    Histogram(fn(&Series) -> &Histogram),
    Counter(fn(&Series) -> u64),
    /// `llm_ux_streams_total`, one sample per status.
    Streams,
}

struct Family {
    /// Without `_total`.
    name: &'static str,
    help: &'static str,
    values: Values,
}

const FAMILIES: [Family; 10] = [
    Family {
        name: "llm_ux_time_to_first_token_seconds",
        help: "Time to first token as users saw it: from the request to the first frame that painted output (ttftMs), per stream.",
        values: Values::Histogram(|s| &s.ttft),
    },
    Family {
        name: "llm_ux_time_to_first_token_arrival_seconds",
        help: "Time to first token on the network: from the request to the arrival of the first output in the page (ttftArrivalMs), per stream.",
        values: Values::Histogram(|s| &s.ttft_arrival),
    },
    Family {
        name: "llm_ux_time_per_output_token_seconds",
        help: "Time per output token after the first as users saw it: (last paint - first paint) / (tokens - 1) (tpotMs), per stream.",
        values: Values::Histogram(|s| &s.tpot),
    },
    Family {
        name: "llm_ux_time_per_output_token_arrival_seconds",
        help: "Time per output token after the first on the network: (last arrival - first arrival) / (tokens - 1) (tpotArrivalMs), per stream.",
        values: Values::Histogram(|s| &s.tpot_arrival),
    },
    Family {
        name: "llm_ux_render_delay_seconds",
        help: "Median delay from an output's arrival to the frame that painted it (renderDelay.p50), per stream.",
        values: Values::Histogram(|s| &s.render_delay),
    },
    Family {
        name: "llm_ux_stall_seconds",
        help: "Time stalled: the sum of the render gaps of 500 ms or more (stalls.totalMs), per stream whose stalls are known.",
        values: Values::Histogram(|s| &s.stall),
    },
    Family { name: "llm_ux_streams", help: "Streams accepted, by how they ended (status).", values: Values::Streams },
    Family { name: "llm_ux_output_tokens", help: "Output tokens users were shown (outputTokens).", values: Values::Counter(|s| s.output_tokens) },
    Family { name: "llm_ux_stalls", help: "Stalls: render gaps of 500 ms or more (stalls.count).", values: Values::Counter(|s| s.stalls) },
    Family { name: "llm_ux_stalled_streams", help: "Streams with at least one stall (of llm_ux_stall_seconds_count).", values: Values::Counter(|s| s.stalled_streams) },
];

const FOLDED: &str = "llm_ux_folded_records";
const FOLDED_HELP: &str = "Records counted under model, scenario and variant other because the label sets allowed (--metrics-label-sets) were taken.";

/// The exposition of `table` in `format`. O(label sets × bounds) time and output: 168 lines per
/// label set.
pub fn write(table: &Table, format: Format) -> String {
    let mut out = String::with_capacity(1024 + table.rows.len() * 168 * 120);
    for family in &FAMILIES {
        let counter = !matches!(family.values, Values::Histogram(_));
        header(&mut out, format, family.name, family.help, counter);
        for (labels, series) in &table.rows {
            match family.values {
                Values::Histogram(histogram) => write_histogram(&mut out, family.name, labels, histogram(series)),
                Values::Counter(value) => sample(&mut out, family.name, "_total", labels, None, value(series)),
                Values::Streams => {
                    for (status, &n) in STATUSES.iter().zip(&series.streams) {
                        sample(&mut out, family.name, "_total", labels, Some(("status", status)), n);
                    }
                }
            }
        }
    }
    header(&mut out, format, FOLDED, FOLDED_HELP, true);
    let _ = writeln!(out, "{FOLDED}_total {}", table.folded);
    if format == Format::OpenMetrics {
        out.push_str("# EOF\n");
    }
    out
}

/// `# HELP` and `# TYPE` (and OpenMetrics' `# UNIT`): text names a counter with its `_total`,
/// OpenMetrics names the family without it.
fn header(out: &mut String, format: Format, name: &str, help: &str, counter: bool) {
    let kind = if counter { "counter" } else { "histogram" };
    match format {
        Format::Text => {
            let total = if counter { "_total" } else { "" };
            let _ = write!(out, "# HELP {name}{total} {help}\n# TYPE {name}{total} {kind}\n");
        }
        Format::OpenMetrics => {
            let _ = write!(out, "# TYPE {name} {kind}\n# HELP {name} {help}\n");
            if name.ends_with("_seconds") {
                let _ = writeln!(out, "# UNIT {name} seconds");
            }
        }
    }
}

/// The cumulative buckets, `_sum` (seconds) and `_count`.
fn write_histogram(out: &mut String, name: &str, labels: &LabelSet, h: &Histogram) {
    let mut cumulative = 0;
    for (i, &n) in h.counts.iter().enumerate() {
        cumulative += n;
        // `{:?}` writes 1.0 as "1.0" and 0.005 as "0.005", as Python does.
        let le = h.bounds.get(i).map_or_else(|| "+Inf".to_owned(), |bound| format!("{bound:?}"));
        sample(out, name, "_bucket", labels, Some(("le", &le)), cumulative);
    }
    start_sample(out, name, "_sum", labels, None);
    let _ = writeln!(out, " {}", h.sum_ms / 1000.0);
    sample(out, name, "_count", labels, None, cumulative);
}

fn sample(out: &mut String, name: &str, suffix: &str, labels: &LabelSet, extra: Option<(&str, &str)>, value: u64) {
    start_sample(out, name, suffix, labels, extra);
    let _ = writeln!(out, " {value}");
}

/// `name_suffix{model="...",scenario="...",variant="...",extra="..."}`, values escaped.
fn start_sample(out: &mut String, name: &str, suffix: &str, labels: &LabelSet, extra: Option<(&str, &str)>) {
    out.push_str(name);
    out.push_str(suffix);
    let mut separator = '{';
    for (label, value) in labels::NAMES.iter().zip(labels).map(|(n, v)| (*n, v.as_str())).chain(extra) {
        out.push(separator);
        out.push_str(label);
        out.push_str("=\"");
        labels::escape_into(out, value);
        out.push('"');
        separator = ',';
    }
    out.push('}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prometheus::test_record;
    use serde_json::json;

    fn table() -> Table {
        let mut table = Table::new(5);
        for fields in [json!({ "model": "a\"b\\c\nd", "ttftMs": 100, "stalls": { "count": 2, "count1000": 1, "longestMs": 1200, "totalMs": 1700 } }), json!({ "model": null, "status": "aborted", "ttftMs": null })] {
            let r = test_record(fields);
            table.add(labels::of(&r), &r);
        }
        table
    }

    #[test]
    fn accept_headers() {
        let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(negotiate(Some(prometheus)), Format::OpenMetrics);
        assert_eq!(negotiate(Some("Application/OpenMetrics-Text; version=1.0.0; q=0.9")), Format::OpenMetrics);
        for text in [None, Some(""), Some("*/*"), Some("text/plain;version=0.0.4"), Some("text/plain, application/openmetrics-text;q=0.5"), Some("application/openmetrics-text;q=0"), Some("application/openmetrics-text;q=nan"), Some("application/json"), Some(",;=;q=2,")] {
            assert_eq!(negotiate(text), Format::Text, "{text:?}");
        }
    }

    #[test]
    fn the_formats_differ_in_metadata_only() {
        let table = table();
        let (text, open) = (write(&table, Format::Text), write(&table, Format::OpenMetrics));
        let samples = |s: &str| s.lines().filter(|l| !l.starts_with('#')).map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(samples(&text), samples(&open));
        assert!(text.contains("# TYPE llm_ux_streams_total counter\n") && open.contains("# TYPE llm_ux_streams counter\n"));
        assert!(open.contains("# UNIT llm_ux_stall_seconds seconds\n") && !text.contains("# UNIT"));
        assert!(open.ends_with("\nllm_ux_folded_records_total 0\n# EOF\n") && text.ends_with("\nllm_ux_folded_records_total 0\n"));
    }

    #[test]
    fn samples_escape_labels_and_add_up() {
        let text = write(&table(), Format::Text);
        let labels = r#"model="a\"b\\c\nd",scenario="chat",variant="A""#;
        for line in [
            format!(r#"llm_ux_time_to_first_token_seconds_bucket{{{labels},le="0.08"}} 0"#),
            format!(r#"llm_ux_time_to_first_token_seconds_bucket{{{labels},le="0.1"}} 1"#),
            format!(r#"llm_ux_time_to_first_token_seconds_bucket{{{labels},le="+Inf"}} 1"#),
            format!(r#"llm_ux_time_to_first_token_seconds_sum{{{labels}}} 0.1"#),
            format!(r#"llm_ux_stall_seconds_bucket{{{labels},le="1.5"}} 0"#),
            format!(r#"llm_ux_stall_seconds_bucket{{{labels},le="2.0"}} 1"#),
            format!(r#"llm_ux_stall_seconds_sum{{{labels}}} 1.7"#),
            format!(r#"llm_ux_stalls_total{{{labels}}} 2"#),
            format!(r#"llm_ux_stalled_streams_total{{{labels}}} 1"#),
            format!(r#"llm_ux_streams_total{{{labels},status="ok"}} 1"#),
            r#"llm_ux_streams_total{model="",scenario="chat",variant="A",status="aborted"} 1"#.to_owned(),
            r#"llm_ux_time_to_first_token_seconds_count{model="",scenario="chat",variant="A"} 0"#.to_owned(),
            r#"llm_ux_time_to_first_token_arrival_seconds_count{model="",scenario="chat",variant="A"} 1"#.to_owned(),
        ] {
            assert!(text.lines().any(|l| l == line), "{line}\nnot in\n{text}");
        }
        let per_label_set = text.lines().filter(|l| l.contains(r#"model="""#)).count();
        assert_eq!(per_label_set, 168, "the line count the docs give");
        assert_eq!(text.lines().count(), 2 * 168 + 11 * 2 + 1);
    }

    #[test]
    fn help_needs_no_escaping() {
        for help in FAMILIES.iter().map(|f| f.help).chain([FOLDED_HELP]) {
            assert!(!help.contains(['\\', '"', '\n']), "{help}");
        }
    }
}
