//! Fills a collector store with realistic stream records, fast: straight through the public
//! `Store::insert_batch` (no HTTP), for the query timings of `bench/collector.mjs`.
//!
//!   cargo run --release -p llm-ux-collector --example populate -- --db PATH --records 1000000 --days 30 --seed 1
//!   cargo run --release -p llm-ux-collector --example populate -- --clickhouse http://127.0.0.1:8123 \
//!       --clickhouse-database bench --records 1000000 --days 30 --seed 1
//!
//! The records depend only on (records, days, seed, end, batch): the same arguments build the same
//! data. A batch is one envelope and so one session, which keeps one A/B variant, as apps assign them
//! (`/api/compare` counts sessions); the rest of each record does not depend on the batch size.
//! They start over `--days` days ending at `--end` (not a round hour, as "now" would not be), in
//! time order, with a daily and weekly traffic rhythm; several models (each its own TTFT, TPOT and
//! stall profile), scenarios (their own answer lengths), A/B variants (B streams a little smoother),
//! an app version rolled out partway, browsers and connections as `navigator.connection` reports them
//! (none on Safari and Firefox), aborted and failed streams, hidden tabs. Every record goes through
//! the collector's own validation (`validate::envelope`), so it is one the HTTP ingest would accept.
//!
//! With `--envelopes FILE` it stores the given envelopes instead (one body per line, as POSTed to
//! `/v1/beacons`), `--group N` envelopes per `insert_batch` (default 1), timing JSON parsing,
//! validation and the store apart: the ingest's stages without HTTP.
//!
//! Then it runs the store's upkeep (`Store::upkeep`), leaving the store as a running collector would.
//!
//! Progress goes to stderr; at the end one JSON line goes to stdout: `{ "records", "accepted",
//! "seconds", "from", "to", "batches", "storeSeconds", "parseSeconds", "validateSeconds",
//! "upkeepSeconds" }` (`from`, `to`: the generated span in epoch ms; `seconds`: the whole run
//! before the upkeep; `storeSeconds`: the time in `insert_batch`; the parse and validate times only
//! with `--envelopes`).

use clap::Parser;
use llm_ux_collector::store::clickhouse::ClickHouseStore;
use llm_ux_collector::store::sqlite::SqliteStore;
use llm_ux_collector::store::Store;
use llm_ux_collector::validate::{envelope, Batch};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::mpsc::sync_channel;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

#[derive(Parser, Debug)]
#[command(about = "Fills a collector store with realistic records through Store::insert_batch.")]
struct Args {
    /// SQLite database file (created if missing).
    #[arg(long, value_name = "PATH", required_unless_present = "clickhouse")]
    db: Option<PathBuf>,
    /// ClickHouse HTTP URL, instead of --db.
    #[arg(long, value_name = "URL", conflicts_with = "db")]
    clickhouse: Option<String>,
    #[arg(long, value_name = "NAME", default_value = "llm_ux")]
    clickhouse_database: String,
    #[arg(long, default_value_t = 1_000_000)]
    records: u64,
    #[arg(long, default_value_t = 30.0)]
    days: f64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The span's end, epoch ms (default 2026-11-30 13:37:21.5 UTC).
    #[arg(long, default_value_t = 1_796_045_841_500)]
    end: i64,
    /// Store the envelopes of this file (one JSON body per line, as POSTed to /v1/beacons) instead
    /// of generated records: parsing, validation and the store are timed apart.
    #[arg(long, value_name = "FILE")]
    envelopes: Option<PathBuf>,
    /// With --envelopes: store this many envelopes per insert_batch, their records in one batch (as a
    /// group commit would).
    #[arg(long, default_value_t = 1, requires = "envelopes")]
    group: usize,
    /// Records per insert_batch call (each is a transaction on SQLite, a few inserts on ClickHouse:
    /// larger batches build faster).
    #[arg(long, default_value_t = 10_000)]
    batch: usize,
}

fn main() {
    let args = Args::parse();
    let store = open(&args).unwrap_or_else(|e| fail(&e));
    let from = args.end - (args.days * 86_400_000.0) as i64;
    let started = Instant::now();
    let mut timing = Timing::default();
    let (batches, total) = match &args.envelopes {
        Some(path) => given(path, args.group.max(1), &mut timing),
        None => (generated(&args, from), args.records),
    };
    let (mut stored, mut accepted) = (0u64, 0u64);
    let mut next_report = Instant::now() + Duration::from_secs(10);
    for batch in batches {
        let t = Instant::now();
        let inserted = store.insert_batch(&batch, args.end).unwrap_or_else(|e| fail(&format!("insert_batch failed after {stored} records: {e}")));
        timing.store += t.elapsed().as_secs_f64();
        timing.batches += 1;
        stored += batch.records.len() as u64;
        accepted += inserted.accepted() as u64;
        if Instant::now() >= next_report {
            let rate = stored as f64 / started.elapsed().as_secs_f64();
            let left = total.saturating_sub(stored) as f64 / rate;
            eprintln!("populate: {stored} of {total} records, {rate:.0} records/s, {left:.0} s to go");
            next_report = Instant::now() + Duration::from_secs(10);
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    // As a running collector leaves its store (ClickHouse: each closed day's rollups merged).
    let t = Instant::now();
    store.upkeep().unwrap_or_else(|e| fail(&format!("the store's upkeep failed: {e}")));
    println!(
        "{}",
        json!({
            "records": stored, "accepted": accepted, "seconds": seconds, "from": from, "to": args.end,
            "batches": timing.batches, "storeSeconds": timing.store, "parseSeconds": timing.parse, "validateSeconds": timing.validate,
            "upkeepSeconds": t.elapsed().as_secs_f64(),
        })
    );
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

fn fail(message: &str) -> ! {
    eprintln!("populate: {message}");
    std::process::exit(1)
}

/// Seconds spent per stage, summed over the batches.
#[derive(Default)]
struct Timing {
    batches: u64,
    parse: f64,
    validate: f64,
    store: f64,
}

/// The envelopes of a file, one JSON body per line, parsed and validated here (timed, as the HTTP
/// ingest does it), `group` envelopes per batch; and their record count.
fn given(path: &PathBuf, group: usize, timing: &mut Timing) -> (Box<dyn Iterator<Item = Batch>>, u64) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| fail(&format!("cannot read {}: {e}", path.display())));
    let mut batches: Vec<Batch> = Vec::new();
    for (n, line) in text.lines().filter(|l| !l.is_empty()).enumerate() {
        let t = Instant::now();
        let value: Value = serde_json::from_slice(line.as_bytes()).unwrap_or_else(|e| fail(&format!("an envelope is not JSON: {e}")));
        timing.parse += t.elapsed().as_secs_f64();
        let t = Instant::now();
        // Checked against the clock, as the HTTP ingest checks them.
        let batch = envelope(&value, now_ms()).unwrap_or_else(|e| fail(&format!("an envelope is invalid: {e:?}")));
        timing.validate += t.elapsed().as_secs_f64();
        match batches.last_mut() {
            Some(last) if n % group != 0 => last.records.extend(batch.records),
            _ => batches.push(batch),
        }
    }
    let total = batches.iter().map(|b| b.records.len() as u64).sum();
    (Box::new(batches.into_iter()), total)
}

/// Generated batches of `--batch` records. Building and validating the records takes about as long
/// as storing them: a thread builds the next batch while the caller stores one.
fn generated(args: &Args, from: i64) -> Box<dyn Iterator<Item = Batch>> {
    let (send, batches) = sync_channel::<Batch>(1);
    let (n, batch, seed, days, end) = (args.records, args.batch, args.seed, args.days, args.end);
    std::thread::spawn(move || {
        let mut traffic = Traffic::new(n, days, from);
        let mut rng = Rng::new(seed);
        // Batch ids and variants (one per batch: a session's) from their own sequence: the records' other
        // fields do not depend on the batch size.
        let mut batch_ids = Rng::new(!seed);
        let mut i = 0;
        while i < n {
            let size = (n - i).min(batch as u64);
            let variant_b = batch_ids.chance(0.5);
            let records: Vec<Value> = (i..i + size)
                .map(|k| {
                    let at = traffic.started_at(k, &mut rng);
                    record(&mut rng, at, from, variant_b)
                })
                .collect();
            let body = json!({
                "v": 1, "def": 1, "sentAt": end, "sessionId": batch_ids.id(), "pageId": batch_ids.id(), "batchId": batch_ids.id(),
                "retry": 0, "sampleRate": 1, "records": records,
            });
            // As a collector whose clock reads the span's end would check them.
            let batch = envelope(&body, end).unwrap_or_else(|e| panic!("populate built an invalid record: {e:?}"));
            if send.send(batch).is_err() {
                return;
            }
            i += size;
        }
    });
    Box::new(batches.into_iter())
}

fn open(args: &Args) -> Result<Box<dyn Store>, String> {
    match (&args.db, &args.clickhouse) {
        (Some(db), None) => SqliteStore::open(db).map(|s| Box::new(s) as Box<dyn Store>).map_err(|e| e.to_string()),
        (None, Some(url)) => ClickHouseStore::open(url, &args.clickhouse_database).map(|s| Box::new(s) as Box<dyn Store>).map_err(|e| e.to_string()),
        _ => Err("give --db PATH or --clickhouse URL".into()),
    }
}

/// When records start: minutes weighted by a daily rhythm (busiest mid-afternoon UTC, about a
/// quarter of that at night) and quieter weekends, record `k` of `n` at the `(k + ½) / n` point of
/// the cumulative weight, so the `n` records come out in time order, each at a random second of its
/// minute.
struct Traffic {
    from: i64,
    n: u64,
    cumulative: Vec<f64>,
    minute: usize,
}

impl Traffic {
    fn new(n: u64, days: f64, from: i64) -> Traffic {
        let mut total = 0.0;
        let cumulative = (0..(days * 1440.0).ceil() as i64)
            .map(|m| {
                let at = from + m * 60_000;
                let hour = (at.rem_euclid(86_400_000)) as f64 / 3_600_000.0;
                let daily = 0.625 + 0.375 * ((hour - 15.0) / 24.0 * std::f64::consts::TAU).cos();
                // 1970-01-01 was a Thursday: day 2 and 3 of each week are Saturday and Sunday.
                let weekend = matches!(at.div_euclid(86_400_000).rem_euclid(7), 2 | 3);
                total += daily * if weekend { 0.7 } else { 1.0 };
                total
            })
            .collect();
        Traffic { from, n, cumulative, minute: 0 }
    }

    fn started_at(&mut self, k: u64, rng: &mut Rng) -> f64 {
        let target = (k as f64 + 0.5) / self.n as f64 * self.cumulative.last().copied().unwrap_or(0.0);
        while self.minute + 1 < self.cumulative.len() && self.cumulative[self.minute] < target {
            self.minute += 1;
        }
        // Whole milliseconds plus a fraction, as performance.timeOrigin + now() gives.
        (self.from + self.minute as i64 * 60_000) as f64 + rng.unit() * 60_000.0
    }
}

/// A model's profile: median TTFT and TPOT (ms) with their log-normal spreads, and how often a
/// stream stalls.
struct Model {
    name: &'static str,
    share: f64,
    format: &'static str,
    url: &'static str,
    ttft: (f64, f64),
    tpot: (f64, f64),
    stall_chance: f64,
}

const MODELS: [Model; 4] = [
    Model { name: "gpt-4o", share: 0.35, format: "openai", url: "https://api.openai.com/v1/chat/completions", ttft: (550.0, 0.5), tpot: (22.0, 0.35), stall_chance: 0.04 },
    Model { name: "gpt-4o-mini", share: 0.30, format: "openai", url: "https://api.openai.com/v1/chat/completions", ttft: (380.0, 0.45), tpot: (11.0, 0.3), stall_chance: 0.02 },
    Model { name: "claude-sonnet-4", share: 0.20, format: "anthropic", url: "https://api.anthropic.com/v1/messages", ttft: (900.0, 0.5), tpot: (28.0, 0.3), stall_chance: 0.03 },
    Model { name: "llama-3.1-70b", share: 0.15, format: "openai", url: "https://llm.internal.example.com/v1/chat/completions", ttft: (450.0, 0.7), tpot: (38.0, 0.5), stall_chance: 0.10 },
];

/// A scenario: its share, median answer length (tokens) and how much longer its prompts make TTFT.
const SCENARIOS: [(&str, f64, f64, f64); 3] = [("chat", 0.60, 220.0, 1.0), ("code", 0.25, 520.0, 1.3), ("summarize", 0.15, 140.0, 1.9)];

/// Browsers: share, and whether they report `navigator.connection` and `deviceMemory`.
const BROWSERS: [(&str, f64, bool); 4] = [("chromium", 0.62, true), ("safari", 0.20, false), ("firefox", 0.10, false), ("edge", 0.08, true)];

/// Effective connection types: share, typical RTT (ms) and how much they slow the stream down.
const CONNECTIONS: [(&str, f64, f64, f64); 4] = [("4g", 0.88, 70.0, 1.0), ("3g", 0.09, 320.0, 1.4), ("2g", 0.02, 1400.0, 2.5), ("slow-2g", 0.01, 2000.0, 3.5)];

/// One record's JSON, as the meter would send it, of variant B or A.
fn record(rng: &mut Rng, started_at: f64, from: i64, variant_b: bool) -> Value {
    let model = rng.pick(&MODELS, |m| m.share);
    let &(scenario, _, median_tokens, prompt_factor) = rng.pick(&SCENARIOS, |s| s.1);
    // 2.4.0 rolls out from day 18 to day 22 of the span.
    let day = (started_at - from as f64) / 86_400_000.0;
    let app_version = if rng.chance(((day - 18.0) / 4.0).clamp(0.0, 1.0)) { "2.4.0" } else { "2.3.1" };
    let &(browser, _, reports_network) = rng.pick(&BROWSERS, |b| b.1);
    let (connection, rtt, slowdown) = if reports_network {
        let &(name, _, rtt, slowdown) = rng.pick(&CONNECTIONS, |c| c.1);
        // Chromium rounds rtt to 25 ms.
        (Some(name), Some((rtt * rng.log_normal(0.4) / 25.0).round() * 25.0), slowdown)
    } else {
        (None, None, 1.0)
    };

    let roll = rng.unit();
    let status = match roll {
        r if r < 0.955 => "ok",
        r if r < 0.985 => "aborted",
        r if r < 0.990 => "incomplete",
        r if r < 0.996 => "http_error",
        _ => "error",
    };
    let http_status = match status {
        "http_error" => json!(*rng.pick(&[429, 500, 503], |_| 1.0)),
        "error" => Value::Null,
        _ => json!(200),
    };
    let ttfb = model.ttft.0 * 0.35 * prompt_factor * rng.log_normal(model.ttft.1) + rtt.unwrap_or(80.0);
    let mut record = json!({
        "id": rng.id(), "startedAt": started_at, "url": model.url, "model": model.name, "scenario": scenario,
        "variant": if variant_b { "B" } else { "A" }, "appVersion": app_version, "format": model.format, "status": status,
        "httpStatus": http_status, "ttfbMs": ttfb, "def": 1, "connection": connection, "rttMs": rtt, "browser": browser,
        "cores": *rng.pick(&[4, 8, 8, 10, 12, 16], |_| 1.0),
        "deviceMemoryGb": if reports_network { json!(*rng.pick(&[4, 8, 8, 8, 16], |_| 1.0)) } else { Value::Null },
    });
    let stream = if status == "http_error" { refused(ttfb) } else { streamed(rng, model, status, prompt_factor, median_tokens, variant_b, slowdown, ttfb) };
    if let (Value::Object(all), Value::Object(rest)) = (&mut record, stream) {
        all.extend(rest);
    }
    record
}

/// What a stream that rendered tokens measured.
#[allow(clippy::too_many_arguments)]
fn streamed(rng: &mut Rng, model: &Model, status: &str, prompt_factor: f64, median_tokens: f64, variant_b: bool, slowdown: f64, ttfb: f64) -> Value {
    let mut tokens = (median_tokens * rng.log_normal(0.7)).round().clamp(1.0, 8000.0);
    if status != "ok" {
        tokens = (tokens * rng.unit()).floor().max(1.0);
    }
    let tokens = tokens as i64;
    let hidden = rng.chance(0.04);
    let ttft_arrival = ttfb + model.ttft.0 * 0.65 * prompt_factor * slowdown * rng.log_normal(model.ttft.1);
    let tpot_arrival = model.tpot.0 * if variant_b { 0.94 } else { 1.0 } * slowdown.sqrt() * rng.log_normal(model.tpot.1);
    let render_delay = 3.0 + 5.0 * rng.log_normal(0.6);
    let stall_chance = model.stall_chance * if variant_b { 0.8 } else { 1.0 } * slowdown;
    let stall_count = if rng.chance(stall_chance) { 1 + (rng.unit().ln() / 0.5f64.ln()).floor() as i64 } else { 0 };
    let stall_lengths: Vec<f64> = (0..stall_count).map(|_| 400.0 + 900.0 * rng.log_normal(0.8)).collect();
    let stall_total: f64 = stall_lengths.iter().sum();
    let stall_longest = stall_lengths.iter().copied().fold(0.0, f64::max);
    let duration = ttft_arrival + tpot_arrival * (tokens - 1) as f64 + stall_total + render_delay;
    let events = (tokens as f64 * (0.85 + 0.15 * rng.unit())).round().max(1.0) as i64;
    let gaps = |tpot: f64| json!({ "p50": tpot * 0.85, "p90": tpot * 1.7 + stall_longest * 0.1, "p99": tpot * 3.5 + stall_longest * 0.8, "max": tpot * 5.0 + stall_longest });
    // TPOT and gaps need two tokens at least.
    let multi = |v: Value| if tokens >= 2 { v } else { Value::Null };
    // A hidden tab paints nothing: the render values are null, the arrival ones remain.
    let render = |v: Value| if hidden { Value::Null } else { v };
    // First and last output and the halfway token, on the render timeline (arrival when hidden).
    let first = if hidden { ttft_arrival } else { ttft_arrival + render_delay };
    let ms = |at: f64| at.round().min(3_600_000.0) as u32;
    let cadence = json!([[ms(first), 1], [ms((first + duration) / 2.0), (tokens + 1) / 2], [ms(duration), tokens]]);
    json!({
        "renderSource": render(json!("dom")),
        "ttftMs": render(json!(ttft_arrival + render_delay)), "ttftArrivalMs": ttft_arrival, "ttfoMs": ttft_arrival,
        "tpotMs": multi(render(json!(tpot_arrival * (1.0 + 0.05 * rng.unit())))), "tpotArrivalMs": multi(json!(tpot_arrival)),
        "tokensPerSecond": multi(json!(1000.0 / tpot_arrival)),
        "outputTokens": tokens, "tokenSource": if rng.chance(0.8) { "usage" } else { "estimate" }, "reasoningTokens": 0,
        "outputEvents": events, "outputEventsByKind": { "answer": events, "reasoning": 0, "tool": 0 },
        "gaps": multi(render(gaps(tpot_arrival * 1.03))), "arrivalGaps": multi(gaps(tpot_arrival)),
        "jitterMs": multi(json!(tpot_arrival * 0.3 * rng.log_normal(0.5))),
        "stalls": render(json!({ "count": stall_count, "count1000": stall_lengths.iter().filter(|&&l| l >= 1000.0).count(), "longestMs": stall_longest, "totalMs": stall_total })),
        "renderDelay": render(json!({ "p50": render_delay, "p90": render_delay * 2.2 })),
        "durationMs": duration, "hidden": hidden,
        "finishReason": if status == "ok" { json!(if tokens >= 4000 { "length" } else { "stop" }) } else { Value::Null },
        "anomalies": { "malformedEvents": 0, "oversizeDropped": 0, "unterminatedLast": status == "incomplete" },
        "cadence": cadence,
    })
}

/// A stream the API refused (HTTP 429 or 5xx): no token, no render value.
fn refused(ttfb: f64) -> Value {
    json!({
        "renderSource": null, "ttftMs": null, "ttftArrivalMs": null, "ttfoMs": null, "tpotMs": null, "tpotArrivalMs": null,
        "tokensPerSecond": null, "outputTokens": 0, "tokenSource": "estimate", "reasoningTokens": 0, "outputEvents": 0,
        "outputEventsByKind": { "answer": 0, "reasoning": 0, "tool": 0 }, "gaps": null, "arrivalGaps": null, "jitterMs": null,
        "stalls": null, "renderDelay": null, "durationMs": ttfb, "hidden": false, "finishReason": null,
        "anomalies": { "malformedEvents": 0, "oversizeDropped": 0, "unterminatedLast": false }, "cadence": [],
    })
}

/// splitmix64: small, fast and seedable (the crate has no random-number dependency).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5851_f42d_4c95_7f2d)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// A log-normal factor with median 1 (Box-Muller).
    fn log_normal(&mut self, sigma: f64) -> f64 {
        let (u, v) = (1.0 - self.unit(), self.unit());
        let normal = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
        (sigma * normal).exp()
    }

    /// One item, chosen with probability proportional to its weight.
    fn pick<'a, T>(&mut self, items: &'a [T], weight: impl Fn(&T) -> f64) -> &'a T {
        let total: f64 = items.iter().map(&weight).sum();
        let mut left = self.unit() * total;
        for item in items {
            left -= weight(item);
            if left < 0.0 {
                return item;
            }
        }
        &items[items.len() - 1]
    }

    /// 128 random bits as 32 hex characters, like the meter's ids.
    fn id(&mut self) -> String {
        format!("{:016x}{:016x}", self.next(), self.next())
    }
}
