//! The beacon envelope, version 1 (`schema/beacon.v1.json`, the contract), checked field by field.
//!
//! The ingest is public (its key, if any, is in every page's source), so this check is a defence:
//! every field is bounded, so that no beacon can grow a grouping dimension without limit or move a
//! stored sum out of reach (one `1.7e308` would leave a group's mean `null` for good).
//!
//! Everything the schema says is checked: required fields, no field it does not name (at every
//! level), types (`integer` means a JSON number without a fractional part), `null` where allowed,
//! enums, `const`, minimums and maximums, string lengths (in characters, as JSON Schema counts them)
//! and the url pattern. Two rules are beyond JSON Schema: `startedAt` and `sentAt` must lie within
//! [`MAX_AGE_MS`] (30 days) before `now_ms` (the collector's clock) and [`MAX_AHEAD_MS`] (1 hour)
//! after it, and neither number of a `cadence` point may be less than the point before's; the
//! schema's descriptions of those fields say so.
//!
//! The first problem found is reported with the path of the field (`records[3].ttftMs`) so a sender
//! can fix it: the fields of an object in the order of the schema's `required` list, then any field
//! the schema does not name.

mod fields;

use fields::{kind, show, Obj, Range};
use serde_json::Value;

/// Why an envelope was refused: the field (a path such as `records[3].stalls.count`; `None` for the
/// body as a whole) and what is wrong with it.
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid {
    pub field: Option<String>,
    pub problem: String,
}

/// A valid envelope: the batch-level fields and its records.
#[derive(Debug, Clone)]
pub struct Batch {
    pub def: i64,
    pub sent_at: f64,
    pub session_id: String,
    pub page_id: String,
    pub batch_id: String,
    pub retry: i64,
    pub sample_rate: f64,
    /// The app's experiment unit (a user, say) as the meter hashed it; `None` when the app gave none.
    pub experiment_unit: Option<String>,
    pub records: Vec<Record>,
}

/// One stream record, with the fields the collector keeps as columns; `raw` is the record's JSON as
/// received.
#[derive(Debug, Clone)]
pub struct Record {
    pub id: String,
    pub started_at: f64,
    pub model: Option<String>,
    pub scenario: Option<String>,
    pub variant: Option<String>,
    pub app_version: Option<String>,
    pub url: Option<String>,
    pub format: Option<String>,
    pub status: String,
    pub http_status: Option<i64>,
    pub render_source: Option<String>,
    pub ttfb_ms: Option<f64>,
    pub ttft_ms: Option<f64>,
    pub ttft_arrival_ms: Option<f64>,
    pub ttfo_ms: Option<f64>,
    pub tpot_ms: Option<f64>,
    pub tpot_arrival_ms: Option<f64>,
    pub tokens_per_second: Option<f64>,
    pub output_tokens: i64,
    pub token_source: String,
    pub reasoning_tokens: i64,
    pub output_events: i64,
    pub gap_p50_ms: Option<f64>,
    pub gap_p90_ms: Option<f64>,
    pub gap_p99_ms: Option<f64>,
    pub gap_max_ms: Option<f64>,
    pub arrival_gap_p50_ms: Option<f64>,
    pub arrival_gap_p90_ms: Option<f64>,
    pub jitter_ms: Option<f64>,
    pub stall_count: Option<i64>,
    pub stall_count_1000: Option<i64>,
    pub stall_longest_ms: Option<f64>,
    pub stall_total_ms: Option<f64>,
    pub render_delay_p50_ms: Option<f64>,
    pub render_delay_p90_ms: Option<f64>,
    pub duration_ms: Option<f64>,
    pub hidden: bool,
    pub finish_reason: Option<String>,
    /// `None` from packages that predate the field.
    pub clock_ms: Option<f64>,
    /// `[ms since start, tokens shown]` points; `None` from packages that predate the field, empty
    /// when no output arrived.
    pub cadence: Option<Vec<[u32; 2]>>,
    pub def: i64,
    pub connection: Option<String>,
    pub rtt_ms: Option<f64>,
    pub device_memory_gb: Option<f64>,
    pub cores: Option<i64>,
    pub browser: String,
    pub raw: String,
}

pub const FORMATS: &[&str] = &["openai", "openai-responses", "anthropic", "gemini", "ollama", "ai-sdk-ui", "ai-sdk-data", "tgi", "text"];
pub const STATUSES: &[&str] = &["ok", "aborted", "http_error", "error", "incomplete"];
pub const RENDER_SOURCES: &[&str] = &["dom", "explicit", "frame"];
pub const TOKEN_SOURCES: &[&str] = &["usage", "estimate"];
pub const BROWSERS: &[&str] = &["chromium", "firefox", "safari", "edge", "node", "other"];

/// How far before the collector's clock `startedAt` and `sentAt` may be: 30 days. Older records
/// would rewrite the rollups of a settled past; the meter drops unsent records before they are this
/// old (`js/lib/beacons/record-bounds.js`).
pub const MAX_AGE_MS: i64 = 30 * 24 * 3_600_000;
/// How far after the collector's clock `startedAt` and `sentAt` may be: 1 hour, room for a client's
/// clock that runs fast, not for records from the future.
pub const MAX_AHEAD_MS: i64 = 3_600_000;
/// The earliest and latest epoch ms of the schema itself (1970 to 2100-01-01T00:00:00Z), whatever
/// the clock: window and bucket arithmetic on `startedAt` then stays far from overflow.
pub const EARLIEST_EPOCH_MS: f64 = 0.0;
pub const LATEST_EPOCH_MS: f64 = 4_102_444_800_000.0;

/// Lengths in characters (Unicode scalar values, as JSON Schema's `maxLength` counts them).
const ID_CHARS: usize = 128;
/// The length of `experimentUnit`: 16 bytes of HMAC-SHA-256 in hex.
const UNIT_HASH_DIGITS: usize = 32;
const NAME_CHARS: usize = 256;
/// What the meter sends at most (`js/lib/beacons/record-url.js`).
const URL_CHARS: usize = 2048;
/// `navigator.connection.effectiveType` is a few characters (`slow-2g`); it is a grouping dimension,
/// so it is kept short.
const CONNECTION_CHARS: usize = 32;

/// A time span in ms: up to 1 hour.
const DURATION: Range = Range { min: 0.0, max: 3_600_000.0, meaning: "milliseconds, up to 1 hour" };
/// A count of tokens, events, stalls or retries.
const COUNT: Range = Range { min: 0.0, max: 10_000_000.0, meaning: "a count, up to 10 million" };
/// 1000 / TPOT. A million is far past any model; more only comes of thousands of tokens painted in
/// one frame, which the meter drops rather than have its batch refused.
const TOKENS_PER_SECOND: Range = Range { min: 0.0, max: 1_000_000.0, meaning: "tokens per second, up to a million" };
const SAMPLE_RATE: Range = Range { min: 0.0, max: 1.0, meaning: "a sampling rate" };
const DEFINITION: Range = Range { min: 1.0, max: 1000.0, meaning: "a metric definition version" };
/// 0 for an opaque response; three digits otherwise.
const HTTP_STATUS: Range = Range { min: 0.0, max: 999.0, meaning: "an HTTP status" };
const DEVICE_MEMORY_GB: Range = Range { min: 0.0, max: 1024.0, meaning: "GiB of device memory" };
const CORES: Range = Range { min: 1.0, max: 4096.0, meaning: "logical cores" };
/// From a microsecond to a second: browsers step their clocks by 100 ms at the coarsest.
const CLOCK_STEP: Range = Range { min: 0.001, max: 1000.0, meaning: "the step of a clock in ms" };
/// The two numbers of a cadence point, in order (whole numbers: they fit a `u32`).
const CADENCE_POINT: [Range; 2] = [
    Range { min: 0.0, max: 3_600_000.0, meaning: "ms since the stream's start, up to 1 hour" },
    Range { min: 0.0, max: 3_600_000.0, meaning: "tokens shown, up to 3.6 million" },
];
/// The most points a cadence holds (the meter's `MAX_POINTS`, `src/metrics/cadence.rs`).
const CADENCE_POINTS: usize = 32;

/// Checks a parsed JSON value as an envelope, `now_ms` being the collector's clock (epoch ms; any
/// value is safe). O(size of the value): each field is read once, and the search for a field the
/// schema does not name compares each key with the few known ones. Never panics.
pub fn envelope(value: &Value, now_ms: i64) -> Result<Batch, Invalid> {
    let Some(obj) = value.as_object() else {
        return Err(Invalid { field: None, problem: format!("expected a JSON object (the envelope), got {}", kind(value)) });
    };
    let window = Window::around(now_ms);
    let mut o = Obj::new(obj, String::new());
    let v = o.get("v")?;
    if v.as_f64() != Some(1.0) {
        return Err(o.invalid("v", format!("expected 1 (envelope version), got {}", show(v))));
    }
    let def = o.integer("def", &DEFINITION)?;
    let sent_at = o.epoch_ms("sentAt", &window)?;
    let session_id = o.id("sessionId")?;
    let page_id = o.id("pageId")?;
    let batch_id = o.id("batchId")?;
    let retry = o.integer("retry", &COUNT)?;
    let sample_rate = o.number("sampleRate", &SAMPLE_RATE)?;
    let experiment_unit = o.optional_unit_hash("experimentUnit")?;
    let records_value = o.get("records")?;
    let Some(items) = records_value.as_array() else {
        return Err(o.invalid("records", format!("expected an array, got {}", kind(records_value))));
    };
    if items.is_empty() {
        return Err(o.invalid("records", "must hold at least one record".into()));
    }
    o.no_other_fields()?;
    let mut records = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        records.push(record(item, &format!("records[{i}]"), &window)?);
    }
    Ok(Batch { def, sent_at, session_id, page_id, batch_id, retry, sample_rate, experiment_unit, records })
}

/// The epoch ms `startedAt` and `sentAt` may take at a given clock: the schema's range cut to the
/// window around the clock.
struct Window {
    earliest: f64,
    latest: f64,
}

impl Window {
    fn around(now_ms: i64) -> Window {
        Window {
            earliest: (now_ms.saturating_sub(MAX_AGE_MS) as f64).max(EARLIEST_EPOCH_MS),
            latest: (now_ms.saturating_add(MAX_AHEAD_MS) as f64).min(LATEST_EPOCH_MS),
        }
    }
}

fn record(value: &Value, path: &str, window: &Window) -> Result<Record, Invalid> {
    let Some(map) = value.as_object() else {
        return Err(Invalid { field: Some(path.into()), problem: format!("expected an object (a stream record), got {}", kind(value)) });
    };
    let mut o = Obj::new(map, format!("{path}."));
    // Checked in the order of the schema's `required` list, so the first problem named is the first
    // field a reader of the schema would look at.
    let id = o.id("id")?;
    let started_at = o.epoch_ms("startedAt", window)?;
    let url = o.nullable_string("url", URL_CHARS)?;
    if let Some(u) = &url {
        if u.contains(['?', '#']) {
            return Err(o.invalid("url", "must not contain a query or fragment ('?' or '#'): the meter strips them".into()));
        }
    }
    let model = o.nullable_string("model", NAME_CHARS)?;
    let scenario = o.nullable_string("scenario", NAME_CHARS)?;
    let variant = o.nullable_string("variant", NAME_CHARS)?;
    let app_version = o.nullable_string("appVersion", NAME_CHARS)?;
    let format = o.one_of("format", FORMATS, true)?;
    let status = o.one_of("status", STATUSES, false)?.unwrap_or_default();
    let http_status = o.nullable_integer("httpStatus", &HTTP_STATUS)?;
    let render_source = o.one_of("renderSource", RENDER_SOURCES, true)?;
    let ttfb_ms = o.nullable_number("ttfbMs", &DURATION)?;
    let ttft_ms = o.nullable_number("ttftMs", &DURATION)?;
    let ttft_arrival_ms = o.nullable_number("ttftArrivalMs", &DURATION)?;
    let ttfo_ms = o.nullable_number("ttfoMs", &DURATION)?;
    let tpot_ms = o.nullable_number("tpotMs", &DURATION)?;
    let tpot_arrival_ms = o.nullable_number("tpotArrivalMs", &DURATION)?;
    let tokens_per_second = o.nullable_number("tokensPerSecond", &TOKENS_PER_SECOND)?;
    let output_tokens = o.integer("outputTokens", &COUNT)?;
    let token_source = o.one_of("tokenSource", TOKEN_SOURCES, false)?.unwrap_or_default();
    let reasoning_tokens = o.integer("reasoningTokens", &COUNT)?;
    let output_events = o.integer("outputEvents", &COUNT)?;
    let mut by_kind = o.object("outputEventsByKind")?;
    for k in ["answer", "reasoning", "tool"] {
        by_kind.integer(k, &COUNT)?;
    }
    by_kind.no_other_fields()?;
    let gaps = o.quantiles("gaps")?;
    let arrival_gaps = o.quantiles("arrivalGaps")?;
    let jitter_ms = o.nullable_number("jitterMs", &DURATION)?;
    let (stall_count, stall_count_1000, stall_longest_ms, stall_total_ms) = match o.nullable_object("stalls")? {
        None => (None, None, None, None),
        Some(mut s) => {
            let stalls = (s.integer("count", &COUNT)?, s.integer("count1000", &COUNT)?, s.number("longestMs", &DURATION)?, s.number("totalMs", &DURATION)?);
            s.no_other_fields()?;
            (Some(stalls.0), Some(stalls.1), Some(stalls.2), Some(stalls.3))
        }
    };
    let (render_delay_p50_ms, render_delay_p90_ms) = match o.nullable_object("renderDelay")? {
        None => (None, None),
        Some(mut r) => {
            let delays = (r.number("p50", &DURATION)?, r.number("p90", &DURATION)?);
            r.no_other_fields()?;
            (Some(delays.0), Some(delays.1))
        }
    };
    let duration_ms = o.nullable_number("durationMs", &DURATION)?;
    let hidden = o.boolean("hidden")?;
    let finish_reason = o.nullable_string("finishReason", NAME_CHARS)?;
    let mut anomalies = o.object("anomalies")?;
    anomalies.integer("malformedEvents", &COUNT)?;
    anomalies.integer("oversizeDropped", &COUNT)?;
    anomalies.boolean("unterminatedLast")?;
    anomalies.no_other_fields()?;
    let clock_ms = o.optional_number("clockMs", &CLOCK_STEP)?;
    let cadence = o.optional_cadence("cadence")?;
    let def = o.integer("def", &DEFINITION)?;
    let connection = o.nullable_string("connection", CONNECTION_CHARS)?;
    let rtt_ms = o.nullable_number("rttMs", &DURATION)?;
    let device_memory_gb = o.nullable_number("deviceMemoryGb", &DEVICE_MEMORY_GB)?;
    let cores = o.nullable_integer("cores", &CORES)?;
    let browser = o.one_of("browser", BROWSERS, false)?.unwrap_or_default();
    o.no_other_fields()?;
    Ok(Record {
        id,
        started_at,
        model,
        scenario,
        variant,
        app_version,
        url,
        format,
        status,
        http_status,
        render_source,
        ttfb_ms,
        ttft_ms,
        ttft_arrival_ms,
        ttfo_ms,
        tpot_ms,
        tpot_arrival_ms,
        tokens_per_second,
        output_tokens,
        token_source,
        reasoning_tokens,
        output_events,
        gap_p50_ms: gaps.map(|g| g[0]),
        gap_p90_ms: gaps.map(|g| g[1]),
        gap_p99_ms: gaps.map(|g| g[2]),
        gap_max_ms: gaps.map(|g| g[3]),
        arrival_gap_p50_ms: arrival_gaps.map(|g| g[0]),
        arrival_gap_p90_ms: arrival_gaps.map(|g| g[1]),
        jitter_ms,
        stall_count,
        stall_count_1000,
        stall_longest_ms,
        stall_total_ms,
        render_delay_p50_ms,
        render_delay_p90_ms,
        duration_ms,
        hidden,
        finish_reason,
        clock_ms,
        cadence,
        def,
        connection,
        rtt_ms,
        device_memory_gb,
        cores,
        browser,
        raw: value.to_string(),
    })
}

/// The contract's own kinds of field.
impl<'a> Obj<'a> {
    /// At most [`CADENCE_POINTS`] points `[ms, tokens]` of whole numbers within [`CADENCE_POINT`],
    /// neither number less than the point before's, or `None` when the field is absent (`null` is
    /// refused: the schema allows an array only). The schema's own rules are checked on every point
    /// before the order, so a value the schema refuses is named for that. O(points), at most 32.
    fn optional_cadence(&mut self, key: &'static str) -> Result<Option<Vec<[u32; 2]>>, Invalid> {
        if !self.map.contains_key(key) {
            return Ok(None);
        }
        let v = self.get(key)?;
        let items = v.as_array().ok_or_else(|| self.wrong(key, "an array of [ms, tokens] points", v))?;
        if items.len() > CADENCE_POINTS {
            return Err(self.invalid(key, format!("must hold at most {CADENCE_POINTS} points, got {}", items.len())));
        }
        let mut points = Vec::with_capacity(items.len());
        // Paths are spelled out only for an error: a valid cadence costs no allocation but its own.
        for (i, item) in items.iter().enumerate() {
            let pair = item.as_array().filter(|pair| pair.len() == 2);
            let pair = pair.ok_or_else(|| self.invalid(&format!("{key}[{i}]"), format!("expected a point [ms, tokens] (two numbers), got {}", show(item))))?;
            let mut point = [0; 2];
            for (k, (n, range)) in pair.iter().zip(&CADENCE_POINT).enumerate() {
                point[k] = match n.as_u64() {
                    Some(whole) if whole as f64 <= range.max => whole as u32,
                    _ => self.integer_in(&format!("{key}[{i}][{k}]"), n, range, "an integer")? as u32,
                };
            }
            points.push(point);
        }
        for (i, pair) in points.windows(2).enumerate() {
            if let Some(k) = (0..2).find(|&k| pair[1][k] < pair[0][k]) {
                let (what, before, got) = (["ms", "tokens shown"][k], pair[0][k], pair[1][k]);
                let problem = format!("must not be less than the point before's ({before}): {what} never decrease, got {got}");
                return Err(self.invalid(&format!("{key}[{}][{k}]", i + 1), problem));
            }
        }
        Ok(Some(points))
    }

    /// Epoch ms within the window around the collector's clock.
    fn epoch_ms(&mut self, key: &'static str, window: &Window) -> Result<f64, Invalid> {
        let v = self.get(key)?;
        let at = v.as_f64().ok_or_else(|| self.wrong(key, "a number", v))?;
        if !(window.earliest..=window.latest).contains(&at) {
            return Err(self.invalid(
                key,
                format!(
                    "must be epoch milliseconds within the 30 days before the collector's clock and at most 1 hour after it, from {} to {} now, got {}",
                    window.earliest,
                    window.latest,
                    show(v)
                ),
            ));
        }
        Ok(at)
    }

    /// A unit hash (32 lowercase hex digits, 128 bits of HMAC-SHA-256), or `None` when absent.
    fn optional_unit_hash(&mut self, key: &'static str) -> Result<Option<String>, Invalid> {
        if !self.map.contains_key(key) {
            return Ok(None);
        }
        let v = self.get(key)?;
        let s = v.as_str().ok_or_else(|| self.wrong(key, "a string", v))?;
        if s.len() != UNIT_HASH_DIGITS || !s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return Err(self.invalid(key, format!("must be {UNIT_HASH_DIGITS} lowercase hex digits (the meter's hash of the app's unit), got {}", show(v))));
        }
        Ok(Some(s.to_owned()))
    }

    fn id(&mut self, key: &'static str) -> Result<String, Invalid> {
        let v = self.get(key)?;
        let s = v.as_str().ok_or_else(|| self.wrong(key, "a string", v))?;
        let n = s.chars().count();
        if n == 0 || n > ID_CHARS {
            return Err(self.invalid(key, format!("must be 1 to {ID_CHARS} characters long, got {n}")));
        }
        Ok(s.to_owned())
    }

    /// `{ p50, p90, p99, max }` (durations) or null.
    fn quantiles(&mut self, key: &'static str) -> Result<Option<[f64; 4]>, Invalid> {
        let Some(mut q) = self.nullable_object(key)? else { return Ok(None) };
        let quantiles = [q.number("p50", &DURATION)?, q.number("p90", &DURATION)?, q.number("p99", &DURATION)?, q.number("max", &DURATION)?];
        q.no_other_fields()?;
        Ok(Some(quantiles))
    }
}
