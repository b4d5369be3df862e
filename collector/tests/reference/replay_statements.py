"""Replays a captured log of the ClickHouse backend's statements on a current ClickHouse engine.

The backend is tested against ClickHouse 18.16; users run current releases. This script takes what
the collector sent (DDL incl. materialized views, `INSERT ... FORMAT RowBinary` with their binary
bodies, SELECTs) and runs it, in order, in one chDB session (PyPI `chdb-core`: ClickHouse 26.x
in process) on a fresh temporary data path, so the DDL makes the tables that later statements use
and materialized views fire on the inserts. It checks that:
- every statement runs without error (the SELECTs' answers are read whole);
- every INSERT with a body stored as many rows in its target table as the body holds: the body's
  rows are counted by the engine reading the body file with the target columns' types
  (`file(path, format, structure)`), the table's `count()` is taken before and after;
- the URL settings the collector passed exist on this engine (a server refuses an unknown one).
An empty or missing log fails: a check that checks nothing must not pass.

How a body is sent: over HTTP the server parses the `query` parameter, a line break, then the POST
body. chDB's `Session.query` takes bytes, so the replay runs exactly that: `sql + b"\n" + body`, the
logged statement and the logged bytes. One exception: chDB's client (like clickhouse-client in
multi-query mode) ends inline INSERT data at the first empty line and drops the rest, without an
error when the cut falls between rows. A body holding b"\n\n" (a RowBinary UInt64 2570, say) is
therefore run as the one rewrite: `<statement up to FORMAT> SELECT * FROM file(body, <format>,
<the target columns' types from system.columns>)`, the same bytes through the same input format
into the same table and materialized views. (chDB's streaming insert, `Session.send_insert`, takes
a body whole, but it swallows errors raised while writing: an insert over too many partitions or a
materialized view that throws reports its rows written and stores nothing. Not used.)

Settings: each statement's known settings are `SET` before it, and put back to their default
before a statement that lacks them (the HTTP interface scopes them to one request). Ignored, as
they only shape the HTTP exchange, not what the statement does: see HTTP_ONLY. The replay itself
sets optimize_on_insert = 0 (ClickHouse 18.16 never collapsed rows within an insert; with it, a
Replacing/Aggregating table may store fewer rows than its body holds) and stops merges on
the non-plain MergeTree tables it inserts into (merges collapse their rows): both keep the row
count check exact; neither changes whether a statement runs.

Run (LOG_DIR holds statements.jsonl, one {"sql", "body", "settings"} object a line, and the bodies):
    target/pyenv/bin/python collector/tests/reference/replay_statements.py LOG_DIR
Needs `target/pyenv/bin/pip install chdb-core==26.9.0`. Exits 0 when all passed, 1 otherwise.
"""
import json
import os
import re
import sys
import tempfile
import time

from chdb.session import Session

# URL parameters that only shape the HTTP exchange. wait_end_of_query and buffer_size (the server
# buffers its answer) are HTTP handler parameters, not settings; send_progress_in_http_headers,
# http_headers_progress_interval_ms, enable_http_compression and http_zlib_compression_level are
# settings that act on HTTP response headers and encoding only; the rest are the handler's request
# parameters (identity, compression of the request, session). None of them has an in-process meaning.
HTTP_ONLY = {
    "wait_end_of_query", "buffer_size", "send_progress_in_http_headers", "http_headers_progress_interval_ms",
    "enable_http_compression", "http_zlib_compression_level", "query_id", "session_id", "session_timeout",
    "session_check", "close_session", "compress", "decompress", "user", "password", "quota_key", "stacktrace",
    "client_protocol_version",
}
# Set by the replay itself (see the header); a setting in the log takes precedence.
REPLAY_SETTINGS = {"optimize_on_insert": "0"}
# A trailing `FORMAT name` or `VALUES`, after which a body's data goes; `head` is what precedes it.
INSERT_TAIL = re.compile(r"^(?P<head>\s*INSERT\s.*?)\s+(?:FORMAT\s+(?P<fmt>\w+)|(?P<values>VALUES))\s*;?\s*$", re.I | re.S)
INSERT_TARGET = re.compile(r"^\s*INSERT\s+INTO\s+(?:TABLE\s+)?(?P<table>[\w`\".]+)\s*(?:\((?P<columns>[^)]*)\))?", re.I)
QUERY_WORDS = ("SELECT", "WITH", "SHOW", "DESCRIBE", "DESC", "EXISTS", "EXPLAIN", "(")


class Failed(Exception):
    pass


def literal(s):
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def ident(s):
    return "`" + s.replace("\\", "\\\\").replace("`", "\\`") + "`"


def kind_of(sql):
    word = sql.lstrip().upper()
    if word.startswith("INSERT"):
        return "insert"
    return "query" if word.startswith(QUERY_WORDS) else "ddl"


def load(log_dir):
    path = os.path.join(log_dir, "statements.jsonl")
    if not os.path.isfile(path):
        raise Failed(f"no statement log: {path} is missing")
    entries = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                sql, body, settings = entry["sql"], entry.get("body"), entry.get("settings") or {}
            except (ValueError, KeyError, TypeError) as e:
                raise Failed(f"{path}:{number}: not a statement object ({e})")
            if body is not None and not os.path.isfile(os.path.join(log_dir, body)):
                raise Failed(f"{path}:{number}: body file {body!r} is missing")
            entries.append((sql, body, {str(k): str(v) for k, v in settings.items()}))
    if not entries:
        raise Failed(f"the statement log {path} is empty: nothing would be checked")
    return entries


class Replay:
    def __init__(self, session, log_dir):
        self.s, self.log_dir = session, log_dir
        self.known = set(self.text("SELECT name FROM system.settings").split("\n"))
        self.applied = {}
        self.stopped = set()  # tables whose merges are stopped
        self.inserted_rows = self.checked = self.rewritten = 0

    def text(self, sql):
        return self.s.query(sql, "TabSeparated").bytes().decode().strip()

    def apply(self, settings):
        wanted = dict(REPLAY_SETTINGS)
        for name, value in settings.items():
            if name in HTTP_ONLY:
                continue
            if name not in self.known:
                raise Failed(f"unknown setting {name} (a server answers UNKNOWN_SETTING)")
            wanted[name] = value
        for name in [n for n in self.applied if n not in wanted]:
            self.s.query(f"SET {name} = DEFAULT")
            del self.applied[name]
        for name, value in wanted.items():
            if self.applied.get(name) != value:
                self.s.query(f"SET {name} = {literal(value)}")
                self.applied[name] = value

    def target(self, head):
        """(database, table, engine, structure of the inserted columns), or None when unknown."""
        m = INSERT_TARGET.match(head)
        if not m:
            return None
        parts = [p.strip('`"') for p in m["table"].split(".")]
        db, table = parts if len(parts) == 2 else [self.text("SELECT currentDatabase()"), parts[0]]
        where = f"database = {literal(db)} AND {{}} = {literal(table)}"
        engine = self.text(f"SELECT engine FROM system.tables WHERE {where.format('name')}")
        columns = dict(line.split("\t") for line in self.text(
            f"SELECT name, type FROM system.columns WHERE {where.format('table')} "
            "AND default_kind NOT IN ('MATERIALIZED', 'ALIAS') ORDER BY position").split("\n") if line)
        names = [c.strip().strip('`"') for c in m["columns"].split(",")] if m["columns"] else list(columns)
        if not engine or not all(n in columns for n in names):
            return None  # the statement itself will say what is wrong
        return db, table, engine, ", ".join(f"{ident(n)} {columns[n]}" for n in names)

    def count(self, db, table):
        return int(self.text(f"SELECT count() FROM {ident(db)}.{ident(table)}"))

    def insert(self, sql, body):
        path = os.path.abspath(os.path.join(self.log_dir, body))
        with open(path, "rb") as f:
            data = f.read()
        m = INSERT_TAIL.match(sql)
        fmt = (m["fmt"] or "Values") if m else None
        target = self.target(m["head"]) if m else None
        counted = target is not None and target[2].endswith("MergeTree")
        if counted:
            db, table, engine, structure = target
            if engine != "MergeTree" and (db, table) not in self.stopped:
                self.s.query(f"SYSTEM STOP MERGES {ident(db)}.{ident(table)}")
                self.stopped.add((db, table))
            before = self.count(db, table)
        after_format = sql[m.end("fmt") if m["fmt"] else m.end("values"):] if m else ""
        if b"\n\n" not in after_format.encode() + b"\n" + data:
            self.s.query(sql.encode() + b"\n" + data)  # what the HTTP interface parses
        elif target is not None:
            self.s.query(f"{m['head']} SELECT * FROM file({literal(path)}, {literal(fmt)}, {literal(target[3])})")
            self.rewritten += 1
        else:
            raise Failed("the body holds an empty line (chDB would cut it there) and the target's columns are unknown")
        if counted:
            rows = int(self.text(f"SELECT count() FROM file({literal(path)}, {literal(fmt)}, {literal(structure)})"))
            stored = self.count(db, table) - before
            if stored != rows:
                raise Failed(f"the body holds {rows} rows, {db}.{table} got {stored}")
            self.checked += 1
            self.inserted_rows += rows

    def run(self, sql, body):
        if body is not None:
            self.insert(sql, body)
        else:
            # TabSeparated: the HTTP interface's format for a statement without FORMAT.
            self.s.query(sql.encode(), "TabSeparated").bytes()


def main(argv):
    if len(argv) != 2:
        print(__doc__.split("\n\n")[-1].strip(), file=sys.stderr)
        return 1
    log_dir = argv[1]
    try:
        entries = load(log_dir)
    except Failed as e:
        print(f"FAILED: {e}")
        return 1
    counts = {"ddl": 0, "insert": 0, "query": 0}
    seconds = dict.fromkeys(counts, 0.0)
    with tempfile.TemporaryDirectory(prefix="chdb-replay-") as data_path:
        started = time.monotonic()
        session = Session(data_path)
        try:
            replay = Replay(session, log_dir)
            version = replay.text("SELECT version()")
            print(f"chDB session on ClickHouse {version} started in {time.monotonic() - started:.2f} s")
            for number, (sql, body, settings) in enumerate(entries, 1):
                kind = kind_of(sql)
                started = time.monotonic()
                try:
                    replay.apply(settings)
                    replay.run(sql, body)
                except Exception as e:  # chDB raises ChdbError / RuntimeError
                    print(f"FAILED at statement {number} of {len(entries)} ({kind}, body {body}, settings {settings}):")
                    print(f"  {sql[:300]}")
                    print(f"  error: {str(e).strip()}")
                    return 1
                seconds[kind] += time.monotonic() - started
                counts[kind] += 1
        finally:
            session.close()
    print(f"DDL:     {counts['ddl']} ran in {seconds['ddl']:.2f} s")
    print(f"inserts: {counts['insert']} ran in {seconds['insert']:.2f} s, {replay.rewritten} of them rewritten to INSERT ... SELECT "
          f"FROM file() (an empty line in the body); {replay.checked} stored exactly the {replay.inserted_rows} rows "
          f"of their bodies, {counts['insert'] - replay.checked} not counted (no body, or not a MergeTree table)")
    print(f"queries: {counts['query']} ran in {seconds['query']:.2f} s")
    print(f"replayed {len(entries)} statements ({counts['ddl']} DDL, {counts['insert']} inserts, {counts['query']} queries) on ClickHouse {version}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
