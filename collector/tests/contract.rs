//! The schema and the validator are one contract: `schema/beacon.v1.json` and `validate::envelope`
//! are put to the same envelopes, JSON Schema's verdict given by ajv (`schema_verdicts.mjs`, with the
//! repository's node_modules), and must agree on every one; where both refuse, the validator names
//! the field that was changed.
//!
//! The envelopes come from walking the schema: for every field at every level, a value of each JSON
//! type, each bound's value and the next number past it (`f64::next_up`), integers one past, strings
//! at and one character past each length (in ASCII, two-byte and four-byte characters), the pattern's
//! characters, every enum member and others, the field missing, and a field the schema does not name.
//! A bound in the validator that the schema lacks shows too: every number is also tried at ±1.7e308
//! and every string at 100,000 characters. Then random changes (`mutate`) to valid envelopes.
//!
//! Two rules are not JSON Schema's. `startedAt` and `sentAt` within 30 days before the collector's
//! clock and 1 hour after it: the walk sets the clock to each time it tries (so only the schema's own
//! range decides). And a `cadence` never decreasing: cases with a decreasing one are left out. Both
//! rules are checked on their own, against the words of the schema's descriptions.

mod common;
mod mutate;

use llm_ux_collector::validate::{envelope, Invalid, EARLIEST_EPOCH_MS, LATEST_EPOCH_MS, MAX_AGE_MS, MAX_AHEAD_MS};
use mutate::{mutate, valid_envelope, Rng};
use serde_json::{json, Map, Value};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// The clock of the cases whose changed value is not a time: 2027-01-15.
const NOW: i64 = 1_800_000_000_000;
/// The fields the clock window applies to.
const TIME_FIELDS: [&str; 2] = ["sentAt", "startedAt"];

/// One envelope for both sides: what it tries, the collector's clock, and the field the validator
/// must name if it is refused (`None`: the body as a whole).
struct Case {
    what: String,
    body: Value,
    now_ms: i64,
    field: Option<String>,
}

/// Whether the schema accepts each value, as ajv judges.
fn schema_verdicts(bodies: &[&Value]) -> Vec<bool> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schema_verdicts.mjs");
    let node = std::env::var("NODE").unwrap_or_else(|_| "node".into());
    let mut child = Command::new(&node)
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{node} {}: {e} (Node.js is needed for the schema's side, and `npm ci` for ajv)", script.display()));
    let mut input = String::new();
    for body in bodies {
        input.push_str(&body.to_string());
        input.push('\n');
    }
    let mut stdin = child.stdin.take().unwrap();
    // Written from a thread: the child's output pipe must be read meanwhile.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "{} failed ({}): {}", script.display(), out.status, String::from_utf8_lossy(&out.stderr));
    let verdicts: Vec<bool> = String::from_utf8(out.stdout).unwrap().lines().map(|l| l == "1").collect();
    assert_eq!(verdicts.len(), bodies.len(), "a verdict per envelope");
    verdicts
}

/// Puts every case to both sides; panics listing every disagreement.
fn assert_agree(cases: &[Case]) {
    let verdicts = schema_verdicts(&cases.iter().map(|c| &c.body).collect::<Vec<_>>());
    let mut disagreements = Vec::new();
    for (case, schema_accepts) in cases.iter().zip(verdicts) {
        let result = envelope(&case.body, case.now_ms);
        match (&result, schema_accepts) {
            (Ok(_), true) => {}
            (Err(Invalid { field, .. }), false) if names_within(field.as_deref(), case.field.as_deref()) => {}
            _ => disagreements.push(format!("{}: schema {}, validator {:?}", case.what, if schema_accepts { "accepts" } else { "refuses" }, result.map(|_| "accepts"))),
        }
    }
    assert!(disagreements.is_empty(), "{} of {} cases disagree:\n{}", disagreements.len(), cases.len(), disagreements.iter().take(40).cloned().collect::<Vec<_>>().join("\n"));
}

/// Whether `named` is `changed` or a field inside it (`records[1].stalls.count` when `stalls` was
/// replaced by `{}`).
fn names_within(named: Option<&str>, changed: Option<&str>) -> bool {
    match (named, changed) {
        (Some(named), Some(changed)) => named == changed || named.strip_prefix(changed).is_some_and(|rest| rest.starts_with(['.', '['])),
        (named, changed) => named == changed,
    }
}

/// Whether a record of `body` has a cadence of number pairs that decreases somewhere: the order rule
/// may then decide where the schema accepts (`the_cadence_order_is_the_one_the_schema_describes`).
fn cadence_decreases(body: &Value) -> bool {
    body["records"].as_array().into_iter().flatten().any(|r| {
        let Some(points) = r["cadence"].as_array() else { return false };
        let pair = |p: &Value| match p.as_array().map(Vec::as_slice) {
            Some([ms, tokens]) => Some([ms.as_f64()?, tokens.as_f64()?]),
            _ => None,
        };
        let pairs: Option<Vec<[f64; 2]>> = points.iter().map(pair).collect();
        pairs.is_some_and(|p| p.windows(2).any(|w| w[1][0] < w[0][0] || w[1][1] < w[0][1]))
    })
}

/// `v` as JSON, cut short for a message.
fn short(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(200) {
        Some((end, _)) => format!("{}…", &s[..end]),
        None => s,
    }
}

fn schema() -> Value {
    common::schema()
}

/// `node` with its `$ref` (`#/$defs/...`) replaced by what it points to, the node's own keywords
/// (a description, or a bound added beside the reference) kept over the target's.
fn resolved(schema: &Value, node: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    if let Some(reference) = node.get("$ref").and_then(Value::as_str) {
        let name = reference.strip_prefix("#/$defs/").unwrap_or_else(|| panic!("unexpected $ref {reference}"));
        out = resolved(schema, &schema["$defs"][name]);
    }
    for (k, v) in node.as_object().unwrap() {
        if k != "$ref" {
            out.insert(k.clone(), v.clone());
        }
    }
    out
}

/// A step into an envelope: a field or an array item.
#[derive(Clone)]
enum Step {
    Key(String),
    Item(usize),
}

/// The path as the validator names it: `records[1].stalls.count`.
fn field_name(path: &[Step]) -> String {
    let mut s = String::new();
    for step in path {
        match step {
            Step::Key(k) if s.is_empty() => s.push_str(k),
            Step::Key(k) => {
                s.push('.');
                s.push_str(k);
            }
            Step::Item(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

fn at_mut<'a>(v: &'a mut Value, path: &[Step]) -> &'a mut Value {
    path.iter().fold(v, |v, step| match step {
        Step::Key(k) => &mut v[k.as_str()],
        Step::Item(i) => &mut v[*i],
    })
}

/// The types a node allows: its `type`, or those of its `enum` or `const` values.
fn types(node: &Map<String, Value>) -> Vec<String> {
    match node.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts.iter().map(|t| t.as_str().unwrap().to_owned()).collect(),
        _ => node.get("enum").and_then(Value::as_array).into_iter().flatten().map(|v| if v.is_null() { "null".into() } else { "string".into() }).collect(),
    }
}

/// The values tried for a node: every JSON type, then what its keywords bound.
fn values_for(node: &Map<String, Value>) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = [json!(null), json!(false), json!(0), json!(0.5), json!(""), json!("x"), json!([]), json!([1]), json!({})]
        .into_iter()
        .map(|v| (format!("{v}"), v))
        .collect();
    let types = types(node);
    let is = |t: &str| types.iter().any(|x| x == t);
    if is("number") || is("integer") {
        let integer = !is("number");
        let mut numbers = vec![1.7e308, -1.7e308, f64::MAX, 1e300, -1e300, 5e-324, -0.0];
        if let Some(min) = node.get("minimum").and_then(Value::as_f64) {
            numbers.extend([min, min.next_down(), min + 0.5]);
            if integer {
                numbers.push(min - 1.0);
            }
        }
        if let Some(max) = node.get("maximum").and_then(Value::as_f64) {
            numbers.extend([max, max.next_up(), max - 0.5]);
            if integer {
                numbers.push(max + 1.0);
            }
        }
        out.extend(numbers.into_iter().map(|f| (format!("{f:e}"), json!(f))));
        // Integers as JSON integers (a float and an integer conversion differ past 2^53).
        for i in [json!(u64::MAX), json!(i64::MIN), json!((1u64 << 53) + 1), json!(-1), json!(1)] {
            out.push((format!("integer {i}"), i));
        }
        if integer {
            for bound in ["minimum", "maximum"] {
                if let Some(b) = node.get(bound).and_then(Value::as_i64) {
                    out.extend([(format!("integer {}", b - 1), json!(b - 1)), (format!("integer {b}"), json!(b)), (format!("integer {}", b + 1), json!(b + 1))]);
                }
            }
        }
    }
    // (An enum's strings are its members: no length to try.)
    if is("string") && !node.contains_key("enum") {
        let lengths: Vec<(usize, bool)> = match (node.get("minLength").and_then(Value::as_u64), node.get("maxLength").and_then(Value::as_u64)) {
            (min, Some(max)) => {
                let mut l = vec![(max as usize, true), (max as usize + 1, false)];
                if let Some(min) = min.filter(|&m| m > 0) {
                    l.extend([(min as usize, true), (min as usize - 1, false)]);
                }
                l
            }
            (_, None) => vec![(100_000, true)],
        };
        for (n, _) in lengths {
            for c in ['a', 'é', '😀'] {
                out.push((format!("{n} × {c:?}"), json!(c.to_string().repeat(n))));
            }
        }
        for s in ["/path", "a?b", "a#b", "line\nbreak?", "\u{0}", "?"] {
            out.push((format!("{s:?}"), json!(s)));
        }
    }
    if let Some(members) = node.get("enum").and_then(Value::as_array) {
        out.extend(members.iter().map(|m| (format!("member {m}"), m.clone())));
        let first = members[0].as_str().unwrap_or("x");
        out.extend([json!("not-a-member"), json!(first.to_uppercase()), json!(format!("{first} "))].map(|v| (format!("{v}"), v)));
    }
    if let Some(c) = node.get("const") {
        out.extend([c.clone(), json!(c.as_f64().unwrap_or(0.0)), json!(2), json!(c.to_string())].map(|v| (format!("{v}"), v)));
    }
    out
}

/// The clock a case runs at: for a time, the time itself (inside the schema's range), so that the
/// window around the clock holds it and only the schema's range decides.
fn clock_for(path: &[Step], value: &Value) -> i64 {
    match (path.last(), value.as_f64()) {
        (Some(Step::Key(k)), Some(at)) if TIME_FIELDS.contains(&k.as_str()) => at.clamp(EARLIEST_EPOCH_MS, LATEST_EPOCH_MS).floor() as i64,
        _ => NOW,
    }
}

/// The cases for `node` at `path` (of the second record, for record fields) and everything below it.
fn walk(schema: &Value, node: &Value, path: Vec<Step>, cases: &mut Vec<Case>) {
    let node = resolved(schema, node);
    let field = field_name(&path);
    // (The body as a whole is tried by the caller.)
    for (what, value) in values_for(&node).into_iter().filter(|_| !path.is_empty()) {
        let now_ms = clock_for(&path, &value);
        let mut body = valid_envelope(now_ms, 2);
        *at_mut(&mut body, &path) = value;
        cases.push(Case { what: format!("{field} = {what}"), body, now_ms, field: Some(field.clone()) });
    }
    if let Some(properties) = node.get("properties").and_then(Value::as_object) {
        for (name, child) in properties {
            let mut inner = path.clone();
            inner.push(Step::Key(name.clone()));
            walk(schema, child, inner, cases);
        }
        let prefix = if field.is_empty() { String::new() } else { format!("{field}.") };
        // A required field missing is refused by both; an optional one accepted by both.
        for name in properties.keys() {
            let mut body = valid_envelope(NOW, 2);
            at_mut(&mut body, &path).as_object_mut().unwrap().remove(name);
            cases.push(Case { what: format!("{prefix}{name} missing"), body, now_ms: NOW, field: Some(format!("{prefix}{name}")) });
        }
        for unknown in ["zzUnknown", "AAA", "ttftms", "__proto__"] {
            let mut body = valid_envelope(NOW, 2);
            at_mut(&mut body, &path).as_object_mut().unwrap().insert(unknown.into(), json!(1));
            cases.push(Case { what: format!("{prefix}{unknown} added"), body, now_ms: NOW, field: Some(format!("{prefix}{unknown}")) });
        }
    }
    if let Some(items) = node.get("items") {
        let mut inner = path.clone();
        inner.push(Step::Item(1));
        walk(schema, items, inner, cases);
    }
}

#[test]
fn the_validator_and_the_schema_agree_on_every_bound_type_enum_and_field() {
    let schema = schema();
    let mut cases = Vec::new();
    // The body as a whole: anything but an object.
    for body in [json!(null), json!([]), json!("x"), json!(1), json!([valid_envelope(NOW, 1)])] {
        cases.push(Case { what: format!("body {}", short(&body)), body, now_ms: NOW, field: None });
    }
    cases.push(Case { what: "body {}".into(), body: json!({}), now_ms: NOW, field: Some("v".into()) });
    cases.push(Case { what: "a valid envelope".into(), body: valid_envelope(NOW, 2), now_ms: NOW, field: None });
    walk(&schema, &schema, Vec::new(), &mut cases);
    // The walk reached every level: the nested objects of a record and their fields.
    let nested = ["records[1].stalls.totalMs", "records[1].gaps.max", "records[1].anomalies.unterminatedLast", "records[1].outputEventsByKind.tool", "records[1].cadence[1][1]"];
    for field in nested.into_iter().chain(["sampleRate"]) {
        assert!(cases.iter().any(|c| c.field.as_deref() == Some(field)), "no case for {field}");
    }
    let walked = cases.len();
    cases.retain(|c| !cadence_decreases(&c.body));
    assert!(walked - cases.len() < 40, "{} cases left to the cadence order test", walked - cases.len());
    assert!(cases.len() > 1500, "{} cases", cases.len());
    assert_agree(&cases);
}

#[test]
fn random_changes_to_valid_envelopes_get_the_same_verdict_from_both() {
    let base = valid_envelope(NOW, 3);
    let mut rng = Rng::new(20_261_203);
    let window = (NOW - MAX_AGE_MS) as f64..=(NOW + MAX_AHEAD_MS) as f64;
    let (mut cases, mut window_decides, mut order_decides) = (Vec::new(), 0, 0);
    while cases.len() < 3000 {
        let body = mutate(&base, &mut rng, NOW);
        // A time the schema allows but the clock window does not: the window test's business.
        let times = std::iter::once(&body["sentAt"]).chain(body["records"].as_array().into_iter().flatten().map(|r| &r["startedAt"]));
        if times.filter_map(Value::as_f64).any(|at| (EARLIEST_EPOCH_MS..=LATEST_EPOCH_MS).contains(&at) && !window.contains(&at)) {
            window_decides += 1;
            continue;
        }
        if cadence_decreases(&body) {
            order_decides += 1;
            continue;
        }
        let field = envelope(&body, NOW).err().and_then(|e| e.field);
        cases.push(Case { what: short(&body), body, now_ms: NOW, field });
    }
    assert!(window_decides < 300, "{window_decides} cases left to the window test");
    assert!(order_decides < 300, "{order_decides} cases left to the cadence order test");
    let refused = cases.iter().filter(|c| envelope(&c.body, NOW).is_err()).count();
    assert!((300..2900).contains(&refused), "{refused} of {} refused: the changes should give both verdicts", cases.len());
    assert_agree(&cases);
}

#[test]
fn the_clock_window_is_the_one_the_schema_describes() {
    const DAY: i64 = 86_400_000;
    const HOUR: i64 = 3_600_000;
    assert_eq!((MAX_AGE_MS, MAX_AHEAD_MS), (30 * DAY, HOUR));
    let schema = schema();
    let words = format!("within the {} days before its clock and at most {} hour after it", MAX_AGE_MS / DAY, MAX_AHEAD_MS / HOUR);
    for description in [&schema["properties"]["sentAt"]["description"], &schema["$defs"]["record"]["properties"]["startedAt"]["description"]] {
        assert!(description.as_str().unwrap().contains(&words), "{description} should say {words:?}");
    }
    let cases: [(f64, bool); 7] = [
        ((NOW - MAX_AGE_MS) as f64, true),
        ((NOW - MAX_AGE_MS) as f64 - 0.001, false),
        ((NOW - MAX_AGE_MS - 1) as f64, false),
        (NOW as f64, true),
        ((NOW + MAX_AHEAD_MS) as f64, true),
        ((NOW + MAX_AHEAD_MS) as f64 + 0.001, false),
        ((NOW + 2 * HOUR) as f64, false),
    ];
    for (at, accepted) in cases {
        for field in ["sentAt", "records[0].startedAt"] {
            let mut body = valid_envelope(NOW, 1);
            match field {
                "sentAt" => body["sentAt"] = json!(at),
                _ => body["records"][0]["startedAt"] = json!(at),
            }
            match envelope(&body, NOW) {
                Ok(_) => assert!(accepted, "{field} = {at} accepted at {NOW}"),
                Err(e) => {
                    assert!(!accepted, "{field} = {at} refused at {NOW}: {e:?}");
                    assert_eq!(e.field.as_deref(), Some(field));
                    assert!(e.problem.contains("within the 30 days before the collector's clock and at most 1 hour after it"), "{}", e.problem);
                }
            }
        }
    }
    // Any clock is safe: at the ends of i64 nothing is in the window, and nothing overflows.
    for now in [i64::MIN, -1, i64::MAX, i64::MAX - MAX_AHEAD_MS, LATEST_EPOCH_MS as i64 + 2 * DAY] {
        let err = envelope(&valid_envelope(NOW, 1), now).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("sentAt"), "clock {now}");
    }
    // At the ends of the schema's range the window is cut to it.
    assert!(envelope(&valid_envelope(0, 1), 0).is_ok());
    assert!(envelope(&valid_envelope(LATEST_EPOCH_MS as i64, 1), LATEST_EPOCH_MS as i64).is_ok());
}

#[test]
fn the_cadence_order_is_the_one_the_schema_describes() {
    let description = &schema()["$defs"]["record"]["properties"]["cadence"]["description"];
    assert!(description.as_str().unwrap().contains("never decrease from one point to the next (the collector checks that too)"), "{description}");
    let cases = [
        (json!([[420, 1], [420, 1], [900, 1], [900, 7]]), None),
        (json!([[0, 0], [3_600_000, 3_600_000]]), None),
        (json!([[420, 1], [419, 2]]), Some("records[1].cadence[1][0]")),
        (json!([[420, 2], [500, 1]]), Some("records[1].cadence[1][1]")),
        (json!([[0, 0], [10, 10], [5, 5]]), Some("records[1].cadence[2][0]")),
    ];
    let bodies: Vec<Value> = cases
        .iter()
        .map(|(cadence, _)| {
            let mut body = valid_envelope(NOW, 2);
            body["records"][1]["cadence"] = cadence.clone();
            body
        })
        .collect();
    // The schema accepts them all: the order is the collector's rule alone.
    assert!(schema_verdicts(&bodies.iter().collect::<Vec<_>>()).into_iter().all(|accepts| accepts));
    for ((cadence, refused), body) in cases.iter().zip(&bodies) {
        match envelope(body, NOW) {
            Ok(_) => assert!(refused.is_none(), "{cadence} accepted"),
            Err(e) => {
                assert_eq!(e.field.as_deref(), *refused, "{cadence}: {e:?}");
                assert!(e.problem.contains("never decrease"), "{}", e.problem);
            }
        }
    }
}

/// What the hardening asks of the contract: a length for every string, a range for every number, no
/// field beyond those named, every named field required.
#[test]
fn every_field_of_the_schema_is_bounded_and_every_object_closed() {
    fn check(schema: &Value, node: &Value, path: &str, leaves: &mut usize) {
        let node = resolved(schema, node);
        let types = types(&node);
        if let Some(properties) = node.get("properties").and_then(Value::as_object) {
            assert_eq!(node.get("additionalProperties"), Some(&json!(false)), "{path}: closed");
            let mut required: Vec<&str> = node["required"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
            let mut named: Vec<&str> = properties.keys().map(String::as_str).collect();
            // Fields added to version 1 are optional, so that records of packages before them still arrive.
            let added: &[&str] = match path {
                ".records[]" => &["clockMs", "cadence"],
                "" => &["experimentUnit"],
                _ => &[],
            };
            named.retain(|name| !added.contains(name));
            required.sort();
            named.sort();
            assert_eq!(required, named, "{path}: every field required but those added to version 1");
            for (name, child) in properties {
                check(schema, child, &format!("{path}.{name}"), leaves);
            }
        } else if let Some(items) = node.get("items") {
            check(schema, items, &format!("{path}[]"), leaves);
        } else {
            *leaves += 1;
            let has = |k: &str| node.contains_key(k);
            if types.iter().any(|t| t == "number" || t == "integer") {
                assert!(has("minimum") && has("maximum"), "{path}: a number needs a range");
            }
            if types.iter().any(|t| t == "string") && !has("enum") {
                assert!(has("maxLength"), "{path}: a string needs a maximum length");
            }
        }
    }
    let schema = schema();
    let mut leaves = 0;
    check(&schema, &schema, "", &mut leaves);
    assert!(leaves >= 60, "{leaves} fields");
}
