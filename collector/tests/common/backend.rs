//! Which store the test servers use, and reading what they stored whichever it is.
//!
//! SQLite (a file in the server's directory) by default. With `LLM_UX_TEST_CLICKHOUSE` set to a
//! ClickHouse HTTP URL (`scripts/test.sh` starts one with `scripts/clickhouse.sh`), every server gets
//! a database of its own on that ClickHouse instead, named after its directory (unique per process and
//! server) and dropped first, so a name reused by a later run starts empty.

use super::{request, Resp};
use std::net::SocketAddr;
use std::path::Path;

pub const ENV: &str = "LLM_UX_TEST_CLICKHOUSE";

/// The ClickHouse URL the tests run against, if any.
pub fn clickhouse_url() -> Option<String> {
    std::env::var(ENV).ok().filter(|url| !url.is_empty())
}

pub fn is_clickhouse() -> bool {
    clickhouse_url().is_some()
}

/// The store flags of a test server whose SQLite file would be `db`.
pub fn args(db: &Path) -> Vec<String> {
    match clickhouse_url() {
        None => vec!["--db".into(), db.display().to_string()],
        Some(url) => {
            let database = database_of(db);
            clickhouse(&format!("DROP DATABASE IF EXISTS {database}"), None);
            vec!["--clickhouse".into(), url, "--clickhouse-database".into(), database]
        }
    }
}

/// The number of stored records.
pub fn row_count(db: &Path) -> i64 {
    scalar(db, "SELECT count(*) FROM records").parse().unwrap()
}

/// Every stored record (on ClickHouse each once: `unique_records`), every column, as text, ordered by id.
pub fn rows(db: &Path) -> Vec<Vec<String>> {
    if is_clickhouse() {
        let text = clickhouse("SELECT * FROM unique_records ORDER BY id FORMAT TabSeparated", Some(&database_of(db)));
        return text.lines().map(|line| line.split('\t').map(unescape).collect()).collect();
    }
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn.prepare("SELECT * FROM records ORDER BY id").unwrap();
    let n = stmt.column_count();
    let rows = stmt
        .query_map([], |r| (0..n).map(|i| r.get::<_, rusqlite::types::Value>(i).map(|v| format!("{v:?}"))).collect::<Result<Vec<_>, _>>())
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    rows
}

/// The first column of the first row of `sql` (plain SQL both stores accept, tables unqualified) as
/// text: numbers in their shortest form (`4`, `420.25`, `1700000000000`), strings as stored, `NULL`.
/// On ClickHouse, `records` is read as `unique_records` (each record once, as the store reads it).
pub fn scalar(db: &Path, sql: &str) -> String {
    if is_clickhouse() {
        let sql = sql.replace(" FROM records", " FROM unique_records");
        let text = clickhouse(&format!("{sql} FORMAT TabSeparated"), Some(&database_of(db)));
        let first = text.lines().next().unwrap_or_else(|| panic!("no row for {sql}"));
        let value = first.split('\t').next().unwrap();
        return if value == "\\N" { "NULL".into() } else { unescape(value) };
    }
    use rusqlite::types::Value;
    let conn = rusqlite::Connection::open(db).unwrap();
    match conn.query_row(sql, [], |r| r.get::<_, Value>(0)).unwrap() {
        Value::Null => "NULL".into(),
        Value::Integer(i) => i.to_string(),
        Value::Real(f) => f.to_string(),
        Value::Text(s) => s,
        Value::Blob(b) => panic!("{sql}: a blob of {} bytes", b.len()),
    }
}

/// Makes every insert of a batch holding a record `id` fail, in the store itself: SQLite, a trigger
/// that aborts the transaction; ClickHouse, a column computed on insert that throws for that id
/// (the records insert is the first write of a batch there, so nothing is stored either).
pub fn fail_inserts_of(db: &Path, id: &str) {
    assert!(id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'), "a plain id");
    if is_clickhouse() {
        clickhouse(&format!("ALTER TABLE records ADD COLUMN fail_inserts UInt8 MATERIALIZED throwIf(id = '{id}')"), Some(&database_of(db)));
    } else {
        let conn = rusqlite::Connection::open(db).unwrap();
        conn.execute_batch(&format!("CREATE TRIGGER fail_inserts BEFORE INSERT ON records WHEN NEW.id = '{id}' BEGIN SELECT RAISE(ABORT, 'boom'); END;")).unwrap();
    }
}

/// Undoes [`fail_inserts_of`].
pub fn repair_inserts(db: &Path) {
    if is_clickhouse() {
        clickhouse("ALTER TABLE records DROP COLUMN fail_inserts", Some(&database_of(db)));
    } else {
        rusqlite::Connection::open(db).unwrap().execute_batch("DROP TRIGGER fail_inserts;").unwrap();
    }
}

/// The ClickHouse database of the server whose SQLite file would be `db`: `t_` and the name of the
/// server's directory (`collector-server-<pid>-<n>`), as an identifier.
fn database_of(db: &Path) -> String {
    let dir = db.ancestors().find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("collector-"))).expect("a test server directory");
    let name = dir.file_name().unwrap().to_string_lossy();
    format!("t_{}", name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect::<String>())
}

/// Runs `sql` on the test ClickHouse (in `database`) and returns the answer, panicking on an error.
pub fn clickhouse(sql: &str, database: Option<&str>) -> String {
    let url = clickhouse_url().expect("LLM_UX_TEST_CLICKHOUSE");
    let addr: SocketAddr = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .parse()
        .unwrap_or_else(|e| panic!("{ENV}={url}: expected http://127.0.0.1:PORT ({e})"));
    let path = match database {
        Some(db) => format!("/?database={db}"),
        None => "/".into(),
    };
    let resp: Resp = request(addr, "POST", &path, &[], sql.as_bytes(), false);
    assert_eq!(resp.status, 200, "{sql}: {}", resp.text());
    resp.text()
}

/// A TabSeparated value as the text it stands for.
fn unescape(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('0') => out.push('\0'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}
