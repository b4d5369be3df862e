//! Random changes to a valid envelope, for the tests that put many envelopes to `validate::envelope`:
//! values of every JSON type (numbers at and past the schema's bounds, strings at and past its
//! lengths, deep and wide values), fields removed, fields added (known names in the wrong place and
//! unknown ones), records repeated, and JSON text with bytes changed. A fixed seed gives the same
//! cases every run.
// Each test crate that includes this module uses a part of it.
#![allow(dead_code)]

use crate::common::{envelope, record};
use serde_json::{json, Map, Value};

/// A small deterministic generator (xorshift64*).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// A number in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A valid envelope of `records` records (at least 1) as a collector whose clock reads `now_ms`
/// accepts it: sent now, each record started now.
pub fn valid_envelope(now_ms: i64, records: usize) -> Value {
    let mut body = envelope(
        (0..records.max(1))
            .map(|i| {
                let mut r = record(&format!("r-{i}"));
                r["startedAt"] = json!(now_ms);
                r
            })
            .collect(),
    );
    body["sentAt"] = json!(now_ms);
    body
}

/// Every field name the schema uses, at any level: added where it does not belong, it is unknown.
const NAMES: &[&str] = &[
    "v", "def", "sentAt", "sessionId", "pageId", "batchId", "retry", "sampleRate", "experimentUnit", "records", "id", "startedAt", "url", "model", "scenario",
    "variant", "appVersion", "format", "status", "httpStatus", "renderSource", "ttfbMs", "ttftMs", "ttftArrivalMs", "ttfoMs", "tpotMs",
    "tpotArrivalMs", "tokensPerSecond", "outputTokens", "tokenSource", "reasoningTokens", "outputEvents", "outputEventsByKind", "gaps",
    "arrivalGaps", "jitterMs", "stalls", "renderDelay", "durationMs", "hidden", "finishReason", "anomalies", "connection", "rttMs",
    "deviceMemoryGb", "cores", "browser", "answer", "reasoning", "tool", "p50", "p90", "p99", "max", "count", "count1000", "longestMs",
    "totalMs", "malformedEvents", "oversizeDropped", "unterminatedLast",
];

/// Numbers at and around the schema's bounds, and the ones JSON can carry that a float or an
/// integer conversion could trip on.
fn interesting_number(rng: &mut Rng, now_ms: i64) -> Value {
    const DAY: f64 = 86_400_000.0;
    let now = now_ms as f64;
    let f = *rng.pick(&[
        0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 5e-324, -5e-324, 1e-9, 999.0, 1000.0, 1001.0, 1024.0, 1024.5, 4096.0, 4097.0, 3_600_000.0,
        3_600_000.000_1, -3_600_000.0, 1_000_000.0, 1_000_000.5, 10_000_000.0, 10_000_001.0, 9_007_199_254_740_992.0, 9_007_199_254_740_994.0,
        4_102_444_800_000.0, 4_102_444_800_001.0, 1e300, -1e300, 1.7e308, -1.7e308, f64::MAX, f64::MIN, f64::MIN_POSITIVE,
        now, now - 30.0 * DAY, now - 30.0 * DAY - 1.0, now + 3_600_000.0, now + 3_600_001.0, now - 1e-3,
    ]);
    match rng.below(4) {
        0 => json!(*rng.pick(&[i64::MIN, i64::MAX, -1, 0, 1, 999, 1000, 4096, 10_000_000, 10_000_001])),
        1 => json!(*rng.pick(&[u64::MAX, 1 << 53, (1 << 53) + 1, 1 << 63])),
        2 => json!(rng.unit() * 10f64.powi(rng.below(16) as i32) * if rng.below(4) == 0 { -1.0 } else { 1.0 }),
        _ => json!(f),
    }
}

/// A string of about `n` characters: ASCII, two-byte, four-byte (two UTF-16 units), control
/// characters, and the url pattern's `?` and `#`.
fn string_of(rng: &mut Rng, n: usize) -> String {
    let alphabets: [&[char]; 4] = [&['a', 'b', '-', '_', '.', '/', ':'], &['é', 'ñ', 'ß'], &['😀', '🚀', '\u{10FFFF}'], &['?', '#', '\n', '\0', '"', '\\', '\u{7f}']];
    let alphabet = if rng.below(3) == 0 { *rng.pick(&alphabets) } else { alphabets[0] };
    (0..n).map(|_| *rng.pick(alphabet)).collect()
}

fn interesting_length(rng: &mut Rng) -> usize {
    *rng.pick(&[0, 1, 2, 31, 32, 33, 64, 65, 127, 128, 129, 255, 256, 257, 2047, 2048, 2049, 5000])
}

/// A random JSON value, nested at most `depth` deep.
pub fn value(rng: &mut Rng, depth: usize, now_ms: i64) -> Value {
    let kinds = if depth == 0 { 4 } else { 6 };
    match rng.below(kinds) {
        0 => Value::Null,
        1 => json!(rng.below(2) == 0),
        2 => interesting_number(rng, now_ms),
        3 => {
            let n = interesting_length(rng);
            json!(string_of(rng, n))
        }
        4 => Value::Array((0..rng.below(4)).map(|_| value(rng, depth - 1, now_ms)).collect()),
        _ => Value::Object((0..rng.below(4)).map(|_| (key(rng), value(rng, depth - 1, now_ms))).collect()),
    }
}

/// A field name: one the schema uses, or an unknown one (never holding `.` or `[`, so the field path
/// of an error reads back unambiguously).
fn key(rng: &mut Rng) -> String {
    match rng.below(3) {
        0 => rng.pick(NAMES).to_string(),
        1 => format!("unknown{}", rng.below(100)),
        _ => {
            let n = rng.below(70);
            string_of(rng, n).replace(['.', '['], "_")
        }
    }
}

/// Every place in `v` a change can go: the path of each value, outermost first.
fn paths(v: &Value, at: &mut Vec<PathStep>, out: &mut Vec<Vec<PathStep>>) {
    out.push(at.clone());
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                at.push(PathStep::Key(k.clone()));
                paths(child, at, out);
                at.pop();
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                at.push(PathStep::Index(i));
                paths(child, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

#[derive(Clone, Debug)]
enum PathStep {
    Key(String),
    Index(usize),
}

fn at_mut<'a>(v: &'a mut Value, path: &[PathStep]) -> &'a mut Value {
    path.iter().fold(v, |v, step| match step {
        PathStep::Key(k) => &mut v[k.as_str()],
        PathStep::Index(i) => &mut v[*i],
    })
}

/// `base` with 1 to 4 random changes, each anywhere in it: the value replaced, the field removed, a
/// field added to an object, an array's item repeated or removed.
pub fn mutate(base: &Value, rng: &mut Rng, now_ms: i64) -> Value {
    let mut v = base.clone();
    for _ in 0..1 + rng.below(4) {
        let mut all = Vec::new();
        paths(&v, &mut Vec::new(), &mut all);
        let path = rng.pick(&all).clone();
        match rng.below(5) {
            0 | 1 => *at_mut(&mut v, &path) = value(rng, 3, now_ms),
            2 => match path.split_last() {
                Some((PathStep::Key(k), parent)) => {
                    if let Value::Object(map) = at_mut(&mut v, parent) {
                        map.remove(k);
                    }
                }
                Some((PathStep::Index(i), parent)) => {
                    if let Value::Array(items) = at_mut(&mut v, parent) {
                        if rng.below(2) == 0 {
                            items.remove(*i);
                        } else {
                            let copy = items[*i].clone();
                            items.push(copy);
                        }
                    }
                }
                None => {}
            },
            _ => {
                if let Value::Object(map) = at_mut(&mut v, &path) {
                    let (k, new) = (key(rng), value(rng, 2, now_ms));
                    map.insert(k, new);
                }
            }
        }
    }
    v
}

/// JSON text of `base` with a few bytes changed, inserted or removed: what parses of it is a value
/// the validator must take without panicking (most of it does not parse).
pub fn garble(base: &Value, rng: &mut Rng) -> Vec<u8> {
    let mut bytes = base.to_string().into_bytes();
    for _ in 0..1 + rng.below(3) {
        let i = rng.below(bytes.len() + 1);
        match rng.below(3) {
            0 if i < bytes.len() => bytes[i] = *rng.pick(b"0123456789-+.eE\"{}[],:nultrfase \\"),
            1 => bytes.insert(i, *rng.pick(b"0123456789-.eE\"{}[],: ")),
            _ if i < bytes.len() => {
                bytes.remove(i);
            }
            _ => {}
        }
    }
    bytes
}

/// A value nested `depth` deep (arrays and objects in turn), as a hostile body could hold: serde_json
/// parses up to 128 levels.
pub fn deep(depth: usize) -> Value {
    (0..depth).fold(json!(1), |inner, i| if i % 2 == 0 { json!([inner]) } else { Value::Object(Map::from_iter([("x".to_owned(), inner)])) })
}
