//! Fuzzes the ingest body as `POST /v1/beacons` reads it once the HTTP checks pass: the bytes parsed
//! as JSON (most inputs stop there, as the collector answers 400), then `validate::envelope` at a
//! clock the first 8 bytes choose (any i64) or a fixed one. Any panic is a bug (input must get a 400, not
//! a 500); so is an object refused without naming a field.
//! Give it a valid envelope in its corpus to start from, so that it reaches the field checks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use llm_ux_collector::validate::envelope;

/// 2027-01-15, the clock when the input does not choose one.
const NOW_MS: i64 = 1_800_000_000_000;

fuzz_target!(|data: &[u8]| {
    // A leading `~` and 8 bytes give the clock; JSON never starts with `~`.
    let (now_ms, body) = match data {
        [b'~', rest @ ..] if rest.len() >= 8 => (i64::from_le_bytes(rest[..8].try_into().unwrap()), &rest[8..]),
        _ => (NOW_MS, data),
    };
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else { return };
    if let Err(invalid) = envelope(&value, now_ms) {
        assert!(invalid.field.is_some() || !value.is_object(), "an object refused without naming a field: {invalid:?}");
    }
});
