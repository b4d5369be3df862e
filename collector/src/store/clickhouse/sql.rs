//! The SQL text: the schema, string literals, and the `WHERE` pieces the reads share.
//!
//! Values reach SQL only as literals written by [`quote`] (ClickHouse 18 has no query parameters);
//! inserted values never do (they travel as `RowBinary`). Identifiers are constants, except the
//! database name, which [`database_name`] limits to `[A-Za-z_][A-Za-z0-9_]*`.
//!
//! Only what ClickHouse 18.16 already had: `MergeTree()`/`ReplacingMergeTree(version)` with
//! `PARTITION BY` and `ORDER BY` expressions, `Nullable` columns (kept out of sorting keys through
//! `ifNull`/`isNull`), `argMax`, tuple `IN`. No `LowCardinality` (experimental in 18.16), no
//! `DateTime64`, no `SimpleAggregateFunction`, no query parameters, no `FINAL` reads.

use crate::dims::{Dim, Dims};
use crate::rollup::RollupKey;
use crate::store::{Filters, Selection, StoreError};

/// The database name, checked: it is written into SQL unquoted.
pub fn database_name(name: &str) -> Result<&str, StoreError> {
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if first_ok && chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        Ok(name)
    } else {
        Err(StoreError(format!("clickhouse: database name {name:?} must be letters, digits and '_' (not starting with a digit)")))
    }
}

/// `s` as a ClickHouse string literal. Backslash and quote are escaped as the grammar requires; the
/// control characters too, so a literal never spans lines of a log.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            c if c.is_ascii_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// The records, with the columns of the SQLite store's `records` (same names and meaning), plus `ts`:
/// `started_at` in whole seconds, clamped to `DateTime`'s range, by which the table is partitioned
/// (one partition per day) and sorted (after model and scenario).
pub const RECORD_COLUMNS: &[(&str, &str)] = &[
    ("id", "String"),
    ("started_at", "Float64"),
    ("ts", "DateTime"),
    ("def", "Int64"),
    ("model", "Nullable(String)"),
    ("scenario", "Nullable(String)"),
    ("variant", "Nullable(String)"),
    ("app_version", "Nullable(String)"),
    ("connection", "Nullable(String)"),
    ("url", "Nullable(String)"),
    ("format", "Nullable(String)"),
    ("status", "String"),
    ("http_status", "Nullable(Int64)"),
    ("render_source", "Nullable(String)"),
    ("browser", "String"),
    ("ttfb_ms", "Nullable(Float64)"),
    ("ttft_ms", "Nullable(Float64)"),
    ("ttft_arrival_ms", "Nullable(Float64)"),
    ("ttfo_ms", "Nullable(Float64)"),
    ("tpot_ms", "Nullable(Float64)"),
    ("tpot_arrival_ms", "Nullable(Float64)"),
    ("tokens_per_second", "Nullable(Float64)"),
    ("output_tokens", "Int64"),
    ("token_source", "String"),
    ("reasoning_tokens", "Int64"),
    ("output_events", "Int64"),
    ("gap_p50_ms", "Nullable(Float64)"),
    ("gap_p90_ms", "Nullable(Float64)"),
    ("gap_p99_ms", "Nullable(Float64)"),
    ("gap_max_ms", "Nullable(Float64)"),
    ("arrival_gap_p90_ms", "Nullable(Float64)"),
    ("jitter_ms", "Nullable(Float64)"),
    ("stall_count", "Nullable(Int64)"),
    ("stall_count_1000", "Nullable(Int64)"),
    ("stall_longest_ms", "Nullable(Float64)"),
    ("stall_total_ms", "Nullable(Float64)"),
    ("render_delay_p50_ms", "Nullable(Float64)"),
    ("render_delay_p90_ms", "Nullable(Float64)"),
    ("duration_ms", "Nullable(Float64)"),
    ("hidden", "UInt8"),
    ("finish_reason", "Nullable(String)"),
    ("rtt_ms", "Nullable(Float64)"),
    ("device_memory_gb", "Nullable(Float64)"),
    ("cores", "Nullable(Int64)"),
    ("session_id", "String"),
    ("page_id", "String"),
    ("batch_id", "String"),
    ("sample_rate", "Float64"),
    ("received_at", "Int64"),
    ("raw", "String"),
];

/// The statements that create the database and its tables when missing.
pub fn schema(db: &str) -> Vec<String> {
    let columns: Vec<String> = RECORD_COLUMNS.iter().map(|(name, ty)| format!("{name} {ty}")).collect();
    vec![
        format!("CREATE DATABASE IF NOT EXISTS {db}"),
        format!(
            "CREATE TABLE IF NOT EXISTS {db}.records ({}) ENGINE = MergeTree() PARTITION BY toDate(ts) ORDER BY (ifNull(model, ''), ifNull(scenario, ''), ts)",
            columns.join(", ")
        ),
        // One row per write of a rollup; the highest version is the current value. Background merges
        // drop older versions (ReplacingMergeTree), reads take argMax(data, version) per key, so they
        // never depend on when merges run. The key sorts null apart from '' (isNull). `streams` is the
        // rollup's stream count, so groups are ranked without decoding `data`.
        format!(
            "CREATE TABLE IF NOT EXISTS {db}.rollups (grain String, bucket Int64, {}, version UInt64, {STREAMS_COLUMN}, data String) \
             ENGINE = ReplacingMergeTree(version) PARTITION BY intDiv(bucket, 86400000) \
             ORDER BY (ifNull(model, ''), isNull(model), ifNull(scenario, ''), isNull(scenario), grain, bucket, \
             ifNull(variant, ''), isNull(variant), ifNull(app_version, ''), isNull(app_version), ifNull(connection, ''), isNull(connection))",
            Dim::ALL.map(|d| format!("{} Nullable(String)", d.column())).join(", ")
        ),
        // The ids of the committed records, sorted by id so a lookup reads a few small granules
        // instead of the id column of every record.
        format!("CREATE TABLE IF NOT EXISTS {db}.record_ids (id String) ENGINE = MergeTree() ORDER BY id SETTINGS index_granularity = 1024"),
    ]
}

/// The stream-count column of `rollups`: a database made before it lacks it, and gets it on open.
pub const STREAMS_COLUMN: &str = "streams UInt64";

/// `model, scenario, variant, app_version, connection`.
pub fn dim_columns() -> String {
    Dim::ALL.map(Dim::column).join(", ")
}

/// The dimensions as a tuple that tells null from '' (for `IN` against [`dims_literal`]).
pub fn dims_key() -> String {
    format!("({})", dims_parts())
}

fn dims_parts() -> String {
    Dim::ALL.map(|d| format!("ifNull({0}, ''), isNull({0})", d.column())).join(", ")
}

/// One record's dimensions in the shape of [`dims_key`].
pub fn dims_literal(dims: &Dims) -> String {
    format!("({})", dims_literal_parts(dims))
}

fn dims_literal_parts(dims: &Dims) -> String {
    let parts: Vec<String> = dims.iter().map(|v| format!("{}, {}", quote(v.as_deref().unwrap_or("")), u8::from(v.is_none()))).collect();
    parts.join(", ")
}

/// A rollup's whole key as a tuple (for `IN` against [`rollup_key_literal`]).
pub fn rollup_key() -> String {
    format!("(grain, bucket, {})", dims_parts())
}

pub fn rollup_key_literal(key: &RollupKey) -> String {
    format!("({}, {}, {})", quote(key.grain.code()), key.bucket, dims_literal_parts(&key.dims))
}

/// ` AND column IN (...)` per filter: a filter matches any of its values, never a null.
pub fn filters(filters: &Filters) -> String {
    let mut sql = String::new();
    for (dim, values) in filters {
        if values.is_empty() {
            sql.push_str(" AND 0");
        } else {
            let list: Vec<String> = values.iter().map(|v| quote(v)).collect();
            sql.push_str(&format!(" AND {} IN ({})", dim.column(), list.join(", ")));
        }
    }
    sql
}

/// [`filters`], and for a group set ` AND (ifNull(c, ''), isNull(c), ...) IN ((...), ...)`: a null
/// matches only a null, '' only ''.
pub fn selection(selection: Selection<'_>) -> String {
    let mut sql = filters(selection.filters);
    let Some(groups) = selection.groups else { return sql };
    if groups.keys.is_empty() {
        sql.push_str(" AND 0");
        return sql;
    }
    let columns: Vec<String> = groups.by.iter().map(|d| format!("ifNull({0}, ''), isNull({0})", d.column())).collect();
    let keys: Vec<String> = groups
        .keys
        .iter()
        .map(|key| format!("({})", key.iter().map(|v| format!("{}, {}", quote(v.as_deref().unwrap_or("")), u8::from(v.is_none()))).collect::<Vec<_>>().join(", ")))
        .collect();
    sql.push_str(&format!(" AND ({}) IN ({})", columns.join(", "), keys.join(", ")));
    sql
}

/// `started_at` (epoch ms) as `ts`: whole seconds, clamped to `DateTime`'s range (1970 to 2106).
pub fn ts_of(started_at: f64) -> u32 {
    (started_at / 1000.0).floor().clamp(0.0, f64::from(u32::MAX)) as u32
}

/// ` AND ts BETWEEN ...` covering `[from, to)` ms: lets ClickHouse skip the other days' partitions.
/// Exact as a superset because [`ts_of`] never decreases.
pub fn ts_range(from: f64, to: f64) -> String {
    format!(" AND ts >= {} AND ts <= {}", ts_of(from), ts_of(to))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_escapes_what_the_grammar_needs() {
        assert_eq!(quote("plain"), "'plain'");
        assert_eq!(quote("it's"), "'it\\'s'");
        assert_eq!(quote("a\\'; DROP TABLE records; --"), "'a\\\\\\'; DROP TABLE records; --'");
        assert_eq!(quote("l1\nl2\r\tx\0"), "'l1\\nl2\\r\\tx\\0'");
        assert_eq!(quote("\u{7}bell\u{85}"), "'\\x07bell\u{85}'", "ASCII controls as \\xHH, others as they are");
        assert_eq!(quote("<script>alert(1)</script> 🚀 é"), "'<script>alert(1)</script> 🚀 é'");
        // No quote is left unescaped: between the outer quotes, every ' follows an odd run of \.
        let q = quote("\\'\\\\''");
        let inner = &q[1..q.len() - 1];
        for (i, c) in inner.char_indices() {
            if c == '\'' {
                let backslashes = inner[..i].chars().rev().take_while(|&c| c == '\\').count();
                assert_eq!(backslashes % 2, 1, "{q}");
            }
        }
    }

    #[test]
    fn database_names_are_plain_identifiers() {
        for good in ["llm_ux", "t_123_4", "_x", "A9"] {
            assert!(database_name(good).is_ok(), "{good}");
        }
        for bad in ["", "9x", "a-b", "a.b", "a b", "x`", "é", "db;DROP"] {
            assert!(database_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn filters_and_keys() {
        let f = vec![(Dim::Model, vec!["a'b".to_owned(), "".to_owned()]), (Dim::Connection, vec![])];
        assert_eq!(filters(&f), " AND model IN ('a\\'b', '') AND 0");
        let dims: Dims = [Some("m".into()), None, Some("".into()), None, Some("4g".into())];
        assert_eq!(dims_literal(&dims), "('m', 0, '', 1, '', 0, '', 1, '4g', 0)");
        assert!(dims_key().starts_with("(ifNull(model, ''), isNull(model), ifNull(scenario, '')"));
        let keys = [vec![Some("a'".to_owned()), None], vec![Some(String::new()), Some("4g".to_owned())]];
        let groups = crate::store::GroupSet { by: &[Dim::Model, Dim::Connection], keys: &keys };
        assert_eq!(
            selection(Selection { filters: &f[..1], groups: Some(groups) }),
            " AND model IN ('a\\'b', '') AND (ifNull(model, ''), isNull(model), ifNull(connection, ''), isNull(connection)) IN (('a\\'', 0, '', 1), ('', 0, '4g', 0))"
        );
        assert_eq!(selection(Selection { filters: &[], groups: Some(crate::store::GroupSet { by: &[Dim::Model], keys: &[] }) }), " AND 0");
        let key = RollupKey { grain: crate::rollup::Grain::Hour, bucket: -3_600_000, dims };
        assert_eq!(rollup_key_literal(&key), "('h', -3600000, 'm', 0, '', 1, '', 0, '', 1, '4g', 0)");
        assert!(rollup_key().starts_with("(grain, bucket, ifNull(model, ''), isNull(model),"));
    }

    #[test]
    fn ts_is_whole_seconds_clamped() {
        assert_eq!(ts_of(1_700_000_000_999.0), 1_700_000_000);
        assert_eq!(ts_of(-1.0), 0);
        assert_eq!(ts_of(1e20), u32::MAX);
        assert_eq!(ts_range(1_000.0, 2_500.0), " AND ts >= 1 AND ts <= 2");
    }
}
