//! The beacon envelope, version 1 (`schema/beacon.v1.json`, the contract), checked field by field.
//!
//! Everything the schema requires is checked: required fields, types (`integer` means a JSON number
//! without a fractional part), `null` where allowed, enums, `const`, minimums and maximums, string
//! lengths (in characters) and the url pattern. The first problem found is reported with the path of
//! the field (`records[3].status`) so a sender can fix it. Fields the schema does not know are
//! ignored at every level, so a newer meter that adds a field is still accepted; they stay in the raw
//! record JSON that is stored.

use serde_json::{Map, Value};

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
    pub records: Vec<Record>,
}

/// One stream record, with the fields the collector keeps as columns; `raw` is the record's JSON as
/// received (unknown fields included).
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

const ID_MAX: usize = 128;
/// 2100-01-01T00:00:00Z in epoch ms.
pub const MAX_STARTED_AT: f64 = 4_102_444_800_000.0;
const NAME_MAX: usize = 256;

/// Checks a parsed JSON value as an envelope.
pub fn envelope(value: &Value) -> Result<Batch, Invalid> {
    let Some(obj) = value.as_object() else {
        return Err(Invalid { field: None, problem: format!("expected a JSON object (the envelope), got {}", kind(value)) });
    };
    let o = Obj { map: obj, path: String::new() };
    let v = o.get("v")?;
    if v.as_f64() != Some(1.0) {
        return Err(o.invalid("v", format!("expected 1 (envelope version), got {}", show(v))));
    }
    let def = o.integer_min("def", 1)?;
    let sent_at = o.number("sentAt")?;
    let session_id = o.id("sessionId")?;
    let page_id = o.id("pageId")?;
    let batch_id = o.id("batchId")?;
    let retry = o.integer_min("retry", 0)?;
    let sample_rate = o.number("sampleRate")?;
    if !(0.0..=1.0).contains(&sample_rate) {
        return Err(o.invalid("sampleRate", format!("must be between 0 and 1, got {sample_rate}")));
    }
    let records_value = o.get("records")?;
    let Some(items) = records_value.as_array() else {
        return Err(o.invalid("records", format!("expected an array, got {}", kind(records_value))));
    };
    if items.is_empty() {
        return Err(o.invalid("records", "must hold at least one record".into()));
    }
    let mut records = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        records.push(record(item, &format!("records[{i}]"))?);
    }
    Ok(Batch { def, sent_at, session_id, page_id, batch_id, retry, sample_rate, records })
}

fn record(value: &Value, path: &str) -> Result<Record, Invalid> {
    let Some(map) = value.as_object() else {
        return Err(Invalid { field: Some(path.into()), problem: format!("expected an object (a stream record), got {}", kind(value)) });
    };
    let o = Obj { map, path: format!("{path}.") };
    // Checked in the order of the schema's `required` list, so the first problem named is the first
    // field a reader of the schema would look at.
    let id = o.id("id")?;
    let started_at = o.number("startedAt")?;
    // Epoch ms between 1970 and 2100: a wider value is a broken clock, and would overflow time buckets.
    if !(0.0..=MAX_STARTED_AT).contains(&started_at) {
        return Err(o.invalid("startedAt", format!("must be epoch milliseconds between 0 and {MAX_STARTED_AT} (year 2100), got {started_at}")));
    }
    let url = o.nullable_string("url", None)?;
    if let Some(u) = &url {
        if u.contains(['?', '#']) {
            return Err(o.invalid("url", "must not contain a query or fragment ('?' or '#'): the meter strips them".into()));
        }
    }
    let model = o.nullable_string("model", Some(NAME_MAX))?;
    let scenario = o.nullable_string("scenario", Some(NAME_MAX))?;
    let variant = o.nullable_string("variant", Some(NAME_MAX))?;
    let app_version = o.nullable_string("appVersion", Some(NAME_MAX))?;
    let format = o.one_of("format", FORMATS, true)?;
    let status = o.one_of("status", STATUSES, false)?.unwrap_or_default();
    let http_status = o.nullable_integer("httpStatus")?;
    let render_source = o.one_of("renderSource", RENDER_SOURCES, true)?;
    let ttfb_ms = o.nullable_number("ttfbMs")?;
    let ttft_ms = o.nullable_number("ttftMs")?;
    let ttft_arrival_ms = o.nullable_number("ttftArrivalMs")?;
    let ttfo_ms = o.nullable_number("ttfoMs")?;
    let tpot_ms = o.nullable_number("tpotMs")?;
    let tpot_arrival_ms = o.nullable_number("tpotArrivalMs")?;
    let tokens_per_second = o.nullable_number("tokensPerSecond")?;
    let output_tokens = o.count("outputTokens")?;
    let token_source = o.one_of("tokenSource", TOKEN_SOURCES, false)?.unwrap_or_default();
    let reasoning_tokens = o.count("reasoningTokens")?;
    let output_events = o.count("outputEvents")?;
    let by_kind = o.object("outputEventsByKind")?;
    for k in ["answer", "reasoning", "tool"] {
        by_kind.count(k)?;
    }
    let gaps = o.quantiles("gaps")?;
    let arrival_gaps = o.quantiles("arrivalGaps")?;
    let jitter_ms = o.nullable_number("jitterMs")?;
    let (stall_count, stall_count_1000, stall_longest_ms, stall_total_ms) = match o.nullable_object("stalls")? {
        None => (None, None, None, None),
        Some(s) => (Some(s.count("count")?), Some(s.count("count1000")?), Some(s.number("longestMs")?), Some(s.number("totalMs")?)),
    };
    let (render_delay_p50_ms, render_delay_p90_ms) = match o.nullable_object("renderDelay")? {
        None => (None, None),
        Some(r) => (Some(r.number("p50")?), Some(r.number("p90")?)),
    };
    let duration_ms = o.nullable_number("durationMs")?;
    let hidden = o.boolean("hidden")?;
    let finish_reason = o.nullable_string("finishReason", Some(NAME_MAX))?;
    let anomalies = o.object("anomalies")?;
    anomalies.count("malformedEvents")?;
    anomalies.count("oversizeDropped")?;
    anomalies.boolean("unterminatedLast")?;
    let def = o.integer_min("def", 1)?;
    let connection = o.nullable_string("connection", None)?;
    let rtt_ms = o.nullable_number("rttMs")?;
    let device_memory_gb = o.nullable_number("deviceMemoryGb")?;
    let cores = o.nullable_integer("cores")?;
    let browser = o.one_of("browser", BROWSERS, false)?.unwrap_or_default();
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
        def,
        connection,
        rtt_ms,
        device_memory_gb,
        cores,
        browser,
        raw: value.to_string(),
    })
}

/// An object being checked, with the path prefix of its fields.
struct Obj<'a> {
    map: &'a Map<String, Value>,
    path: String,
}

impl<'a> Obj<'a> {
    fn invalid(&self, key: &str, problem: String) -> Invalid {
        Invalid { field: Some(format!("{}{key}", self.path)), problem }
    }

    fn get(&self, key: &str) -> Result<&'a Value, Invalid> {
        self.map.get(key).ok_or_else(|| self.invalid(key, "required field is missing".into()))
    }

    fn wrong(&self, key: &str, expected: &str, got: &Value) -> Invalid {
        self.invalid(key, format!("expected {expected}, got {}", kind(got)))
    }

    fn number(&self, key: &str) -> Result<f64, Invalid> {
        let v = self.get(key)?;
        v.as_f64().filter(|_| v.is_number()).ok_or_else(|| self.wrong(key, "a number", v))
    }

    fn nullable_number(&self, key: &str) -> Result<Option<f64>, Invalid> {
        let v = self.get(key)?;
        if v.is_null() {
            return Ok(None);
        }
        v.as_f64().filter(|_| v.is_number()).map(Some).ok_or_else(|| self.wrong(key, "a number or null", v))
    }

    fn integer_value(&self, key: &str, v: &Value, expected: &str) -> Result<i64, Invalid> {
        if let Some(i) = v.as_i64() {
            return Ok(i);
        }
        if v.is_u64() {
            return Err(self.invalid(key, format!("{} is out of range", show(v))));
        }
        match v.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 => Ok(f as i64),
            Some(_) => Err(self.invalid(key, format!("expected an integer, got {}", show(v)))),
            None => Err(self.wrong(key, expected, v)),
        }
    }

    fn integer_min(&self, key: &str, min: i64) -> Result<i64, Invalid> {
        let v = self.get(key)?;
        let i = self.integer_value(key, v, "an integer")?;
        if i < min {
            return Err(self.invalid(key, format!("must be at least {min}, got {i}")));
        }
        Ok(i)
    }

    /// A `count`: an integer of at least 0.
    fn count(&self, key: &str) -> Result<i64, Invalid> {
        self.integer_min(key, 0)
    }

    fn nullable_integer(&self, key: &str) -> Result<Option<i64>, Invalid> {
        let v = self.get(key)?;
        if v.is_null() {
            return Ok(None);
        }
        self.integer_value(key, v, "an integer or null").map(Some)
    }

    fn boolean(&self, key: &str) -> Result<bool, Invalid> {
        let v = self.get(key)?;
        v.as_bool().ok_or_else(|| self.wrong(key, "true or false", v))
    }

    fn id(&self, key: &str) -> Result<String, Invalid> {
        let v = self.get(key)?;
        let s = v.as_str().ok_or_else(|| self.wrong(key, "a string", v))?;
        let n = s.chars().count();
        if n == 0 || n > ID_MAX {
            return Err(self.invalid(key, format!("must be 1 to {ID_MAX} characters long, got {n}")));
        }
        Ok(s.to_owned())
    }

    fn nullable_string(&self, key: &str, max: Option<usize>) -> Result<Option<String>, Invalid> {
        let v = self.get(key)?;
        if v.is_null() {
            return Ok(None);
        }
        let s = v.as_str().ok_or_else(|| self.wrong(key, "a string or null", v))?;
        if let Some(max) = max {
            let n = s.chars().count();
            if n > max {
                return Err(self.invalid(key, format!("must be at most {max} characters long, got {n}")));
            }
        }
        Ok(Some(s.to_owned()))
    }

    fn one_of(&self, key: &str, allowed: &[&str], nullable: bool) -> Result<Option<String>, Invalid> {
        let v = self.get(key)?;
        if v.is_null() && nullable {
            return Ok(None);
        }
        match v.as_str() {
            Some(s) if allowed.contains(&s) => Ok(Some(s.to_owned())),
            _ => {
                let list: Vec<String> = allowed.iter().map(|a| format!("\"{a}\"")).collect();
                let null = if nullable { " or null" } else { "" };
                Err(self.invalid(key, format!("expected one of {}{null}, got {}", list.join(", "), show(v))))
            }
        }
    }

    fn object(&self, key: &str) -> Result<Obj<'a>, Invalid> {
        let v = self.get(key)?;
        let map = v.as_object().ok_or_else(|| self.wrong(key, "an object", v))?;
        Ok(Obj { map, path: format!("{}{key}.", self.path) })
    }

    fn nullable_object(&self, key: &str) -> Result<Option<Obj<'a>>, Invalid> {
        let v = self.get(key)?;
        if v.is_null() {
            return Ok(None);
        }
        let map = v.as_object().ok_or_else(|| self.wrong(key, "an object or null", v))?;
        Ok(Some(Obj { map, path: format!("{}{key}.", self.path) }))
    }

    /// `{ p50, p90, p99, max }` or null.
    fn quantiles(&self, key: &str) -> Result<Option<[f64; 4]>, Invalid> {
        let Some(q) = self.nullable_object(key)? else { return Ok(None) };
        Ok(Some([q.number("p50")?, q.number("p90")?, q.number("p99")?, q.number("max")?]))
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A value for an error message, cut short.
fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 80 {
        format!("{}…", s.chars().take(80).collect::<String>())
    } else {
        s
    }
}
