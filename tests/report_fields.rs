//! `js/lib/report-fields.js`, the layout the JavaScript rebuilds the report object from, is generated from
//! the one definition in `src/web/report_layout.rs`, each number with its bounds from the one definition
//! of the beacon contract, `schema/beacon.v1.json` (the beacons keep records within them). This test
//! fails when the file is not what the two give; `LLM_UX_REPORT_FIELDS=write cargo test --test report_fields`
//! rewrites it.

use llm_ux_meter::stream::{Ending, Stream};
use llm_ux_meter::metrics::cadence::MAX_POINTS;
use llm_ux_meter::web::report_layout::{self, Slot, LEN};
use serde_json::Value;

const GENERATED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/js/lib/report-fields.js");
const SCHEMA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/schema/beacon.v1.json");

/// `minimum, maximum` of the record field at the dotted `path` in the beacon schema (of each number in
/// it, for an array); panics when the schema does not bound it.
fn bounds(schema: &Value, path: &str) -> String {
    let resolve = |node: &Value| match node["$ref"].as_str() {
        Some(reference) => schema["$defs"][reference.rsplit('/').next().unwrap()].clone(),
        None => node.clone(),
    };
    let mut node = resolve(&schema["$defs"]["record"]);
    for name in path.split('.') {
        node = resolve(&node["properties"][name]);
    }
    while node["items"].is_object() {
        node = resolve(&node["items"]);
    }
    match (&node["minimum"], &node["maximum"]) {
        (Value::Number(min), Value::Number(max)) => format!("{min}, {max}"),
        _ => panic!("schema/beacon.v1.json has no bounds for the number {path}"),
    }
}

/// The JavaScript module for the layout: one entry per field, in the order of their numbers.
fn module() -> String {
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(SCHEMA).expect("read the schema")).expect("the schema is JSON");
    let report = Stream::new(None, 0.0).end(1.0, Ending::Complete);
    let mut entries = Vec::new();
    report_layout::fields(&report, &mut |name, slot| {
        entries.push(match slot {
            Slot::Number(_) => format!("  ['{name}', {}],", bounds(&schema, name)),
            Slot::Bool(_) => format!("  ['{name}', 'bool'],"),
            Slot::Points(_) => format!("  ['{name}', 'points', {}],", bounds(&schema, name)),
            Slot::Choice(_, names) => {
                let names: Vec<String> = (0..).map_while(names).map(|n| format!("'{n}'")).collect();
                format!("  ['{name}', [{}]],", names.join(", "))
            }
        })
    });
    format!(
        "// Generated from src/web/report_layout.rs and schema/beacon.v1.json by tests/report_fields.rs; do not edit.\n\
         // After changing the layout or the schema's bounds:\n\
         // LLM_UX_REPORT_FIELDS=write cargo test --test report_fields\n\
         //\n\
         // The report's fields in the order of the wasm core's numbers: [name, kind]. A dotted name is a member of\n\
         // a nested object (null when its first member is); kind: the names a number indexes, 'bool' (0 or 1),\n\
         // 'points' (last: the number of [x, y] pairs, then POINTS pairs) or, for a number (NaN for null), its\n\
         // minimum and maximum. These and the points' (of each of their numbers, after 'points') are the\n\
         // beacon contract's (schema/beacon.v1.json), which js/lib/beacons/record-bounds.js keeps records within.\n\
         export const FIELDS = [\n{}\n];\n\n\
         export const POINTS = {MAX_POINTS};\n",
        entries.join("\n")
    )
}

#[test]
fn the_javascript_layout_is_generated_from_the_rust_one() {
    let want = module();
    if std::env::var("LLM_UX_REPORT_FIELDS").as_deref() == Ok("write") {
        std::fs::write(GENERATED, &want).expect("write js/lib/report-fields.js");
    }
    let have = std::fs::read_to_string(GENERATED).unwrap_or_default();
    assert!(have == want, "js/lib/report-fields.js is not the layout of src/web/report_layout.rs with the bounds of schema/beacon.v1.json: run\n  LLM_UX_REPORT_FIELDS=write cargo test --test report_fields\nit would be:\n{want}");
}

#[test]
fn every_field_has_its_numbers() {
    let report = Stream::new(None, 0.0).end(1.0, Ending::Complete);
    let mut names = Vec::new();
    let mut numbers = 0;
    report_layout::fields(&report, &mut |name, slot| {
        names.push(name);
        numbers += if matches!(slot, Slot::Points(_)) { 1 + 2 * MAX_POINTS } else { 1 };
    });
    assert_eq!(report_layout::numbers(&report).len(), LEN);
    assert_eq!(numbers, LEN);
    assert_eq!(names.last(), Some(&"cadence"), "the points go last");
    let fields = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), fields, "a field named twice");
}
