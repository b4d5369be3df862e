//! The SQL text: the schema, string literals, and the `WHERE` pieces the reads share.
//!
//! Values reach SQL only as literals written by [`quote`] (ClickHouse 18 has no query parameters);
//! inserted values never do (they travel as `RowBinary`). Identifiers are constants, except the
//! database name, which [`database_name`] limits to `[A-Za-z_][A-Za-z0-9_]*`.
//!
//! Only what ClickHouse 18.16 already had, and current releases still run (the test suite replays
//! every statement on both): `MergeTree()`, `ReplacingMergeTree()`, `AggregatingMergeTree()` and
//! `SummingMergeTree()` with `PARTITION BY` and `ORDER BY` expressions, materialized views `TO` a
//! table (one `ARRAY JOIN` clause each, `arrayJoin` beside it), `AggregateFunction` columns of
//! `sum`/`min`/`max` states, `sumMap` in plain reads, `sipHash64`,
//! `Nullable` columns (kept out of sorting keys through `ifNull`/`isNull`: current releases refuse
//! a nullable key), tuple `IN`, `LIMIT BY`. No `LowCardinality` (experimental in 18.16), no
//! `DateTime64`, no `SimpleAggregateFunction`, no `Map` type, no query parameters, no `FINAL`
//! reads, no insert deduplication tokens.

use crate::dims::{Dim, Filters, DEF};
use super::states;
use crate::rollup::Grain;
use crate::store::{Selection, StoreError};

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
    ("arrival_gap_p50_ms", "Nullable(Float64)"),
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
    ("clock_ms", "Nullable(Float64)"),
    // JSON text, as on SQLite: an array cannot be nullable (`crate::store::cadence_text`).
    ("cadence", "Nullable(String)"),
    ("rtt_ms", "Nullable(Float64)"),
    ("device_memory_gb", "Nullable(Float64)"),
    ("cores", "Nullable(Int64)"),
    ("session_id", "String"),
    // '' when the envelope had no experimentUnit.
    ("experiment_unit", "String"),
    ("page_id", "String"),
    ("batch_id", "String"),
    ("sample_rate", "Float64"),
    ("received_at", "Int64"),
    ("raw", "String"),
    ("copy", "UInt64"),
    ("sketch_keys", "Array(Int64)"),
    ("joint_key", "Int64"),
];

/// The columns of `copies` and `duplicates`: what identifies a copy, and what a read needs to take a
/// duplicate copy out of the figures.
pub const COPY_COLUMNS: &str = "id, copy, ts, started_at, def, model, scenario, variant, app_version, connection, output_tokens, \
     ttft_ms, tpot_ms, gap_p90_ms, render_delay_p50_ms, stall_count, stall_total_ms, sketch_keys, joint_key";

/// The statements that create the database, its tables and views when missing.
pub fn schema(db: &str) -> Vec<String> {
    let columns: Vec<String> = RECORD_COLUMNS.iter().map(|(name, ty)| format!("{name} {ty}")).collect();
    let copy_columns: Vec<String> = COPY_COLUMNS.split(", ").map(|name| format!("{name} {}", column_type(name.trim()))).collect();
    let dims = dim_columns();
    let mut statements = vec![
        format!("CREATE DATABASE IF NOT EXISTS {db}"),
        format!(
            "CREATE TABLE IF NOT EXISTS {db}.records ({}) ENGINE = MergeTree() PARTITION BY toDate(ts) ORDER BY (ifNull(model, ''), ifNull(scenario, ''), ts)",
            columns.join(", ")
        ),
        // The rollups ([`states`]): aggregate states and bucket counts that ClickHouse merges by key
        // in the background and in reads; the views below add every record to them as it is
        // inserted. Sorted by grain and bucket first: every read selects those (a time window), few
        // filter by dimension. Small index granules: a part holds a day's minutes, hours and day, and
        // a read of the days must skip the rest (8,192-row granules read them all). The key sorts null apart from '' (isNull). `dims_key` follows the
        // dimensions, so it ends the key splitting nothing (current releases refuse it outside).
        format!(
            "CREATE TABLE IF NOT EXISTS {db}.rollup_states (grain String, bucket Int64, {}, dims_key UInt64, {}) \
             ENGINE = AggregatingMergeTree() PARTITION BY intDiv(bucket, 86400000) \
             ORDER BY (grain, bucket, ifNull(model, ''), isNull(model), ifNull(scenario, ''), isNull(scenario), \
             ifNull(variant, ''), isNull(variant), ifNull(app_version, ''), isNull(app_version), ifNull(connection, ''), isNull(connection), dims_key) \
             SETTINGS index_granularity = 256",
            Dim::ALL.map(|d| format!("{} Nullable(String)", d.column())).join(", "),
            states::state_columns()
        ),
        // Sorted by `joint` before `bucket`: a read of the sketches skips the joint counts.
        format!(
            "CREATE TABLE IF NOT EXISTS {db}.sketch_buckets (grain String, bucket Int64, dims_key UInt64, joint UInt8, key Int64, n UInt64) \
             ENGINE = SummingMergeTree() PARTITION BY intDiv(bucket, 86400000) ORDER BY (grain, joint, bucket, dims_key, key)"
        ),
        // Every copy of every record, sorted by id: the lookup that finds copies of one record
        // inserted through different collectors.
        format!(
            "CREATE TABLE IF NOT EXISTS {db}.copies ({}) ENGINE = MergeTree() PARTITION BY toYYYYMM(ts) ORDER BY id SETTINGS index_granularity = 1024",
            copy_columns.join(", ")
        ),
        // The copies found to duplicate an earlier one: reads take them out. Marking a copy twice
        // (two collectors found it) leaves one row per (id, copy) after merges, and reads take one.
        format!(
            "CREATE TABLE IF NOT EXISTS {db}.duplicates ({}) ENGINE = ReplacingMergeTree() PARTITION BY toYYYYMM(ts) ORDER BY (id, copy)",
            copy_columns.join(", ")
        ),
        format!("CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.copies_of_records TO {db}.copies AS SELECT {COPY_COLUMNS} FROM {db}.records"),
        unique_records(db),
    ];
    // One view per table for the three grains (ARRAY JOIN): one part per insert in each, not three.
    let codes: Vec<String> = Grain::ALL.iter().map(|g| quote(g.code())).collect();
    let lengths: Vec<String> = Grain::ALL.iter().map(|g| g.ms().to_string()).collect();
    let select = format!("grain, {} AS bucket, {} AS dims_key", states::bucket_of("grain_ms"), states::dims_key());
    let from = format!("{db}.records ARRAY JOIN [{}] AS grain, [{}] AS grain_ms WHERE def = {DEF}", codes.join(", "), lengths.join(", "));
    statements.extend([
        format!(
            "CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.rollups_of_records TO {db}.rollup_states AS \
             SELECT {select}, {dims}, {states} FROM {from} GROUP BY grain, bucket, {dims}, dims_key",
            states = states::states()
        ),
        format!(
            "CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.sketches_of_records TO {db}.sketch_buckets AS \
             SELECT {select}, toUInt8(0) AS joint, arrayJoin(sketch_keys) AS key, count() AS n FROM {from} GROUP BY grain, bucket, dims_key, key"
        ),
        format!(
            "CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.joint_of_records TO {db}.sketch_buckets AS \
             SELECT {select}, toUInt8(1) AS joint, joint_key AS key, count() AS n FROM {from} GROUP BY grain, bucket, dims_key, key"
        ),
    ]);
    statements
}

/// Columns of `records` added since the first release of this design: [`added_column`] gives each
/// to a table made before it (null in the rows it has).
pub const ADDED_RECORD_COLUMNS: &[&str] = &["clock_ms", "cadence", "arrival_gap_p50_ms", "experiment_unit"];

/// The statement adding `column` of [`RECORD_COLUMNS`] to `db.records`, in its place, so the table
/// has the columns of a new one in the same order (`INSERT ... SELECT *` between them works).
/// ClickHouse 18.16 has no `ADD COLUMN IF NOT EXISTS`: the caller checks `system.columns` first.
///
/// # Panics
/// When `column` is not one of [`RECORD_COLUMNS`] after the first.
pub fn added_column(db: &str, column: &str) -> String {
    let at = RECORD_COLUMNS.iter().position(|(name, _)| *name == column).filter(|&i| i > 0).expect("an added column of records");
    format!("ALTER TABLE {db}.records ADD COLUMN {column} {} AFTER {}", RECORD_COLUMNS[at].1, RECORD_COLUMNS[at - 1].0)
}

/// The view of the records each once, as the analytics count them, for people querying the database.
/// Its `*` is expanded when it is created: it is made again once columns are added to `records`.
pub fn unique_records(db: &str) -> String {
    format!("CREATE VIEW IF NOT EXISTS {db}.unique_records AS SELECT * FROM {db}.records WHERE (id, copy) NOT IN (SELECT id, copy FROM {db}.duplicates)")
}

/// The type of a column of `records`.
fn column_type(name: &str) -> &'static str {
    RECORD_COLUMNS.iter().find(|(n, _)| *n == name).map(|(_, ty)| *ty).unwrap_or("String")
}

/// `model, scenario, variant, app_version, connection`.
pub fn dim_columns() -> String {
    Dim::ALL.map(Dim::column).join(", ")
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
    fn added_columns_go_in_their_place() {
        assert_eq!(added_column("db", "clock_ms"), "ALTER TABLE db.records ADD COLUMN clock_ms Nullable(Float64) AFTER finish_reason");
        assert_eq!(added_column("db", "cadence"), "ALTER TABLE db.records ADD COLUMN cadence Nullable(String) AFTER clock_ms");
        assert_eq!(added_column("db", "arrival_gap_p50_ms"), "ALTER TABLE db.records ADD COLUMN arrival_gap_p50_ms Nullable(Float64) AFTER gap_max_ms");
        assert_eq!(added_column("db", "experiment_unit"), "ALTER TABLE db.records ADD COLUMN experiment_unit String AFTER session_id");
        ADDED_RECORD_COLUMNS.iter().for_each(|c| drop(added_column("db", c)));
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
        let keys = [vec![Some("a'".to_owned()), None], vec![Some(String::new()), Some("4g".to_owned())]];
        let groups = crate::store::GroupSet { by: &[Dim::Model, Dim::Connection], keys: &keys };
        assert_eq!(
            selection(Selection { filters: &f[..1], groups: Some(groups) }),
            " AND model IN ('a\\'b', '') AND (ifNull(model, ''), isNull(model), ifNull(connection, ''), isNull(connection)) IN (('a\\'', 0, '', 1), ('', 0, '4g', 0))"
        );
        assert_eq!(selection(Selection { filters: &[], groups: Some(crate::store::GroupSet { by: &[Dim::Model], keys: &[] }) }), " AND 0");
    }

    #[test]
    fn copies_have_the_records_columns() {
        for name in COPY_COLUMNS.split(", ") {
            assert!(RECORD_COLUMNS.iter().any(|(n, _)| *n == name), "{name}");
        }
        let schema = schema("db").join("\n");
        assert_eq!(schema.matches("CREATE MATERIALIZED VIEW").count(), 4);
        assert_eq!(schema.matches("CREATE VIEW").count(), 1);
        assert!(schema.contains("ARRAY JOIN ['m', 'h', 'd'] AS grain, [60000, 3600000, 86400000] AS grain_ms"));
    }

    #[test]
    fn ts_is_whole_seconds_clamped() {
        assert_eq!(ts_of(1_700_000_000_999.0), 1_700_000_000);
        assert_eq!(ts_of(-1.0), 0);
        assert_eq!(ts_of(1e20), u32::MAX);
        assert_eq!(ts_range(1_000.0, 2_500.0), " AND ts >= 1 AND ts <= 2");
    }
}
