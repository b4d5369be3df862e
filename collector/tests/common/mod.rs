//! Test support: the collector's real router served on 127.0.0.1 over a temporary SQLite file (or a
//! fresh ClickHouse database when LLM_UX_TEST_CLICKHOUSE is set, see backend.rs), a
//! plain HTTP/1.1 client over a TCP socket, and valid beacon records to start from.
#![allow(dead_code)]

pub mod backend;

use clap::Parser;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A fresh directory under the target's tmp dir, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("collector-{name}-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The collector as the binary builds it (`llm_ux_collector::app` from parsed command-line
/// arguments), served on an ephemeral loopback port by its own runtime.
pub struct Server {
    pub addr: SocketAddr,
    pub db: PathBuf,
    runtime: Option<tokio::runtime::Runtime>,
    _dir: TempDir,
}

impl Server {
    /// `extra`: command-line flags beyond `--db` (e.g. `["--allow-origin", "*"]`).
    pub fn start(extra: &[&str]) -> Server {
        let dir = TempDir::new("server");
        // A nested path: the collector creates the parent directory.
        let db = dir.0.join("data").join("beacons.db");
        let mut argv = vec!["llm-ux-collector".to_owned(), "--listen".into(), "127.0.0.1:0".into()];
        argv.extend(backend::args(&db)); // --db, or ClickHouse when LLM_UX_TEST_CLICKHOUSE is set
        // Tests send bursts from one address: no rate limits unless the test sets them.
        for flag in ["--rate-limit", "--api-rate-limit"] {
            if !extra.contains(&flag) {
                argv.extend([flag.into(), "0".into()]);
            }
        }
        argv.extend(extra.iter().map(|s| s.to_string()));
        let args = llm_ux_collector::Args::try_parse_from(argv).expect("arguments");
        let app = llm_ux_collector::app(&args).expect("app");
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let listener = runtime.block_on(tokio::net::TcpListener::bind(args.listen)).unwrap();
        let addr = listener.local_addr().unwrap();
        let limits = args.limits(None).expect("limits");
        runtime.spawn(llm_ux_collector::serve(listener, app, limits, std::future::pending()));
        Server { addr, db, runtime: Some(runtime), _dir: dir }
    }

    pub fn request(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Resp {
        request(self.addr, method, path, headers, body, false)
    }

    pub fn post_json(&self, path: &str, body: &Value) -> Resp {
        self.request("POST", path, &[("content-type", "text/plain;charset=UTF-8")], body.to_string().as_bytes())
    }

    pub fn get(&self, path: &str) -> Resp {
        self.request("GET", path, &[], b"")
    }

    /// A separate connection to the database file, to check what is stored.
    pub fn db(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(&self.db).unwrap()
    }

    pub fn row_count(&self) -> i64 {
        backend::row_count(&self.db)
    }

    /// Every stored row, every column, as text, ordered by id.
    pub fn rows(&self) -> Vec<Vec<String>> {
        backend::rows(&self.db)
    }

    /// The first column of the first row of `sql` as text, from either store (see [`backend::scalar`]).
    pub fn scalar(&self, sql: &str) -> String {
        backend::scalar(&self.db, sql)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_timeout(Duration::from_secs(2));
        }
    }
}

/// A response: status, headers (names lowercase) and body.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("response is not JSON ({e}): {:?}", String::from_utf8_lossy(&self.body)))
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// One HTTP/1.1 request on a fresh connection (`Connection: close`). The body is written from
/// another thread so that a server answering before it reads the whole body (413) cannot deadlock
/// the test; `chunked` sends it with chunked transfer encoding instead of Content-Length.
pub fn request(addr: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8], chunked: bool) -> Resp {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n");
    if chunked {
        head.push_str("transfer-encoding: chunked\r\n");
    } else if !body.is_empty() || method == "POST" {
        head.push_str(&format!("content-length: {}\r\n", body.len()));
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut payload = head.into_bytes();
    if chunked {
        for chunk in body.chunks(64 * 1024) {
            payload.extend(format!("{:x}\r\n", chunk.len()).as_bytes());
            payload.extend(chunk);
            payload.extend(b"\r\n");
        }
        payload.extend(b"0\r\n\r\n");
    } else {
        payload.extend(body);
    }
    let mut writer = stream.try_clone().unwrap();
    let sender = std::thread::spawn(move || {
        // The server may close early (413): a broken pipe here is expected then.
        let _ = writer.write_all(&payload);
    });
    let mut raw = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) if raw.is_empty() => panic!("no response: {e}"),
            Err(_) => break, // a reset after the response: keep what arrived
        }
    }
    let _ = sender.join();
    parse_response(&raw)
}

pub fn parse_response(raw: &[u8]) -> Resp {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or_else(|| panic!("no header end in {:?}", String::from_utf8_lossy(raw)));
    let head = std::str::from_utf8(&raw[..end]).unwrap();
    let mut lines = head.split("\r\n");
    let status: u16 = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .map(|l| {
            let (n, v) = l.split_once(':').unwrap();
            (n.trim().to_ascii_lowercase(), v.trim().to_owned())
        })
        .collect();
    let mut body = raw[end + 4..].to_vec();
    if headers.iter().any(|(n, v)| n == "transfer-encoding" && v.eq_ignore_ascii_case("chunked")) {
        body = dechunk(&body);
    } else if let Some((_, len)) = headers.iter().find(|(n, _)| n == "content-length") {
        body.truncate(len.parse().unwrap());
    }
    Resp { status, headers, body }
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line_end = data.windows(2).position(|w| w == b"\r\n").unwrap();
        let size = usize::from_str_radix(std::str::from_utf8(&data[..line_end]).unwrap().split(';').next().unwrap().trim(), 16).unwrap();
        data = &data[line_end + 2..];
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
}

pub fn gzip(data: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(data).unwrap();
    encoder.finish().unwrap()
}

/// The clock, epoch ms.
pub fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64
}

/// `t`, an epoch ms time of the fixtures (around 1_700_000_000_000, November 2023), moved forward by
/// whole weeks to 14 to 21 days before now: inside the collector's ingest window (`startedAt` and
/// `sentAt` at most 30 days old) with room for a few days of data, on the same weekday and time of
/// day, so every minute, hour, day and week boundary of a fixture stays one. The shift is chosen once
/// per test process, so times moved by different calls stay consistent.
pub fn recent(t: f64) -> f64 {
    const WEEK: i64 = 7 * 86_400_000;
    static SHIFT: OnceLock<i64> = OnceLock::new();
    let shift = SHIFT.get_or_init(|| (now_ms() - 14 * 86_400_000 - 1_700_000_000_000).div_euclid(WEEK) * WEEK);
    t + *shift as f64
}

/// A valid record (every field the schema requires), a 120-token answer that streamed smoothly.
pub fn record(id: &str) -> Value {
    json!({
        "id": id,
        "startedAt": recent(1_700_000_000_000.0),
        "url": "https://api.example.com/v1/chat/completions",
        "model": "gpt-test",
        "scenario": "chat",
        "variant": "A",
        "appVersion": "1.2.3",
        "format": "openai",
        "status": "ok",
        "httpStatus": 200,
        "renderSource": "dom",
        "ttfbMs": 180.5,
        "ttftMs": 420.25,
        "ttftArrivalMs": 400.0,
        "ttfoMs": 420.25,
        "tpotMs": 31.5,
        "tpotArrivalMs": 30.0,
        "tokensPerSecond": 31.746,
        "outputTokens": 120,
        "tokenSource": "usage",
        "reasoningTokens": 0,
        "outputEvents": 118,
        "outputEventsByKind": { "answer": 118, "reasoning": 0, "tool": 0 },
        "gaps": { "p50": 28.0, "p90": 45.0, "p99": 80.0, "max": 120.0 },
        "arrivalGaps": { "p50": 27.0, "p90": 44.0, "p99": 79.0, "max": 110.0 },
        "jitterMs": 9.5,
        "stalls": { "count": 0, "count1000": 0, "longestMs": 0, "totalMs": 0 },
        "renderDelay": { "p50": 4.0, "p90": 9.0 },
        "durationMs": 4200.0,
        "hidden": false,
        "finishReason": "stop",
        "anomalies": { "malformedEvents": 0, "oversizeDropped": 0, "unterminatedLast": false },
        "clockMs": 0.005,
        "cadence": [[420, 1], [2100, 60], [4200, 120]],
        "def": 1,
        "connection": "4g",
        "rttMs": 50,
        "deviceMemoryGb": 8,
        "cores": 8,
        "browser": "chromium"
    })
}

pub fn envelope(records: Vec<Value>) -> Value {
    json!({
        "v": 1,
        "def": 1,
        "sentAt": recent(1_700_000_005_000.0),
        "sessionId": "s-1",
        "pageId": "p-1",
        "batchId": "b-1",
        "retry": 0,
        "sampleRate": 1,
        "records": records
    })
}

/// The contract: `schema/beacon.v1.json` at the repository root.
pub fn schema() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema/beacon.v1.json");
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}
