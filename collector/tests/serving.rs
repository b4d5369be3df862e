//! Serving over real HTTP: the rate limits, connection timeouts and caps, access to the analytics
//! (read key, CORS), the security headers, and the dashboard files.

mod common;

use common::{envelope, parse_response, record, Resp, Server, TempDir};
use serde_json::json;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[test]
fn over_the_rate_a_client_gets_429_with_retry_after_and_nothing_is_stored() {
    let server = Server::start(&["--rate-limit", "2", "--rate-burst", "3"]);
    let post = |id: &str| server.post_json("/v1/beacons", &envelope(vec![record(id)]));
    // Four at once (one at a time, a store slower than the refill rate would let the fourth in).
    let mut answers: Vec<Resp> = std::thread::scope(|s| {
        let sent: Vec<_> = ["r1", "r2", "r3", "r4"].map(|id| s.spawn(move || post(id))).into();
        sent.into_iter().map(|h| h.join().unwrap()).collect()
    });
    answers.sort_by_key(|r| r.status);
    assert_eq!(answers.iter().map(|r| r.status).collect::<Vec<_>>(), [200, 200, 200, 429], "three within the burst");
    let refused = &answers[3];
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert_eq!(refused.json()["error"], "rate limited");
    let summary = server.get("/api/summary?from=0&to=9999999999999").json();
    assert_eq!(summary["groups"][0]["count"], json!(3), "the refused batch was not stored");
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(post("r4").status, 200, "after Retry-After the client may send again");
    assert_eq!(server.get("/api/summary?from=0&to=9999999999999").status, 200, "queries are not limited");
}

#[test]
fn the_dashboard_directory_is_served_at_the_root_and_nothing_outside_it() {
    let dir = TempDir::new("dashboard");
    let root = dir.0.join("site");
    std::fs::create_dir_all(root.join("js")).unwrap();
    std::fs::write(root.join("index.html"), "<!doctype html><title>dash</title>").unwrap();
    std::fs::write(root.join("js/app.js"), "export {};").unwrap();
    std::fs::write(dir.0.join("secret.txt"), "secret").unwrap();
    let server = Server::start(&["--dashboard", root.to_str().unwrap()]);
    let index = server.get("/");
    assert_eq!((index.status, index.header("content-type")), (200, Some("text/html; charset=utf-8")));
    assert_eq!(index.text(), "<!doctype html><title>dash</title>");
    let script = server.get("/js/app.js");
    assert_eq!((script.status, script.header("content-type")), (200, Some("text/javascript; charset=utf-8")));
    for path in ["/../secret.txt", "/js/../../secret.txt", "/%2e%2e/secret.txt", "/missing.js"] {
        let resp = server.get(path);
        assert_eq!(resp.status, 404, "{path}");
        assert!(!resp.text().contains("secret"), "{path}");
    }
    assert_eq!(server.get("/api/nothing").json()["error"], "not found", "unknown API paths are JSON errors");
    let missing = Server::start(&["--dashboard", dir.0.join("none").to_str().unwrap()]);
    let hint = missing.get("/");
    assert_eq!(hint.status, 404);
    assert!(hint.text().contains("--dashboard"), "{}", hint.text());
}

// ---- Connections: timeouts and caps ----

/// A connection to `addr` from the local address `from` (any of 127/8 on Linux: a second client).
fn connect_from(from: &str, addr: SocketAddr) -> TcpStream {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_io().build().unwrap();
    runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind(SocketAddr::new(from.parse().unwrap(), 0)).unwrap();
        let stream = socket.connect(addr).await.unwrap().into_std().unwrap();
        stream.set_nonblocking(false).unwrap();
        stream
    })
}

/// One request with `Connection: close` on `stream`, and its whole answer.
fn exchange(mut stream: TcpStream, method: &str, path: &str, headers: &[(&str, &str)]) -> Resp {
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nhost: collector\r\nconnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    stream.write_all(format!("{head}\r\n").as_bytes()).unwrap();
    read_to_close(&mut stream).0
}

/// Reads until the server closes the connection: the answer, if any, and how long it took.
fn read_to_close(stream: &mut TcpStream) -> (Resp, Duration) {
    let t0 = Instant::now();
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::TimedOut => panic!("still open after {:?}", t0.elapsed()),
            Err(_) => break, // reset: closed
        }
    }
    let resp = if raw.is_empty() { Resp { status: 0, headers: vec![], body: vec![] } } else { parse_response(&raw) };
    (resp, t0.elapsed())
}

/// The one answer to a keep-alive request (read by its Content-Length, the connection left open).
fn read_one(stream: &mut TcpStream) -> Resp {
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        let n = stream.read(&mut buf).unwrap();
        assert!(n > 0, "closed before the answer ended");
        raw.extend_from_slice(&buf[..n]);
        if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            let resp = parse_response(&raw);
            let length: usize = resp.header("content-length").unwrap().parse().unwrap();
            if raw.len() >= end + 4 + length {
                return resp;
            }
        }
    }
}

fn health_from(from: &str, addr: SocketAddr) -> (u16, Duration) {
    let t0 = Instant::now();
    let resp = exchange(connect_from(from, addr), "GET", "/health", &[]);
    (resp.status, t0.elapsed())
}

#[test]
fn a_silent_connection_is_closed_after_the_idle_timeout_and_so_is_a_kept_alive_one_after_its_answer() {
    let server = Server::start(&["--idle-timeout", "0.5", "--header-timeout", "30"]);
    let mut silent = TcpStream::connect(server.addr).unwrap();
    silent.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let (resp, waited) = read_to_close(&mut silent);
    assert_eq!(resp.status, 0, "closed without an answer");
    assert!(waited >= Duration::from_millis(400) && waited < Duration::from_secs(5), "closed after {waited:?}");

    let mut kept = TcpStream::connect(server.addr).unwrap();
    kept.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    kept.write_all(b"GET /health HTTP/1.1\r\nhost: collector\r\n\r\n").unwrap();
    assert_eq!(read_one(&mut kept).status, 200);
    let (_, waited) = read_to_close(&mut kept);
    assert!(waited >= Duration::from_millis(400) && waited < Duration::from_secs(5), "kept alive for {waited:?}");
}

#[test]
fn a_trickled_header_is_cut_off_after_the_header_timeout_though_bytes_keep_coming() {
    let server = Server::start(&["--header-timeout", "0.6", "--idle-timeout", "30"]);
    let mut slow = TcpStream::connect(server.addr).unwrap();
    slow.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    let t0 = Instant::now();
    slow.write_all(b"GET /health HTTP/1.1\r\n").unwrap();
    let closed_after = loop {
        assert!(t0.elapsed() < Duration::from_secs(6), "a header trickling for 6 s was never cut off");
        // One header byte every 100 ms: never idle, never complete.
        if slow.write_all(b"x").is_err() {
            break t0.elapsed();
        }
        let mut buf = [0u8; 64];
        match slow.read(&mut buf) {
            Ok(_) => break t0.elapsed(),
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::TimedOut => {}
            Err(_) => break t0.elapsed(),
        }
    };
    assert!(closed_after >= Duration::from_millis(500), "closed after {closed_after:?}");
}

#[test]
fn a_body_that_does_not_arrive_in_time_gets_408_and_a_slow_steady_one_within_it_is_stored() {
    let server = Server::start(&["--body-timeout", "0.6", "--idle-timeout", "0.2", "--header-timeout", "0.2"]);
    let mut stalled = TcpStream::connect(server.addr).unwrap();
    stalled.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stalled.write_all(b"POST /v1/beacons HTTP/1.1\r\nhost: collector\r\ncontent-type: text/plain\r\ncontent-length: 1000\r\n\r\n{\"v\":1,").unwrap();
    let (resp, waited) = read_to_close(&mut stalled);
    assert_eq!(resp.status, 408, "{}", resp.text());
    assert_eq!(resp.json()["error"], "request timeout");
    assert!(resp.json()["problem"].as_str().unwrap().contains("--body-timeout"));
    assert!(waited >= Duration::from_millis(500) && waited < Duration::from_secs(5), "{waited:?}");

    // Slower than the idle and header timeouts, within the body's: a request being handled is not idle.
    let server = Server::start(&["--body-timeout", "10", "--idle-timeout", "0.2", "--header-timeout", "0.2"]);
    let body = envelope(vec![record("slow-body")]).to_string().into_bytes();
    let mut steady = TcpStream::connect(server.addr).unwrap();
    steady.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    steady.write_all(format!("POST /v1/beacons HTTP/1.1\r\nhost: collector\r\ncontent-type: text/plain\r\nconnection: close\r\ncontent-length: {}\r\n\r\n", body.len()).as_bytes()).unwrap();
    for piece in body.chunks(body.len() / 4 + 1) {
        std::thread::sleep(Duration::from_millis(300));
        steady.write_all(piece).unwrap();
    }
    let (resp, _) = read_to_close(&mut steady);
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(server.row_count(), 1);
}

#[test]
fn one_address_at_its_connection_cap_is_refused_503_and_another_address_is_served() {
    let server = Server::start(&["--max-connections-per-ip", "8", "--idle-timeout", "30"]);
    let flood: Vec<TcpStream> = (0..8).map(|_| TcpStream::connect(server.addr).unwrap()).collect();
    let refused = exchange(TcpStream::connect(server.addr).unwrap(), "GET", "/health", &[]);
    assert_eq!(refused.status, 503, "{}", refused.text());
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert_eq!(refused.json()["error"], "too many connections");
    assert!(refused.json()["problem"].as_str().unwrap().contains("--max-connections-per-ip"));
    let (status, took) = health_from("127.0.0.2", server.addr);
    assert_eq!(status, 200, "another address is served");
    assert!(took < Duration::from_secs(1), "{took:?}");
    drop(flood);
    let deadline = Instant::now() + Duration::from_secs(5);
    while health_from("127.0.0.1", server.addr).0 != 200 {
        assert!(Instant::now() < deadline, "the flooding address never got a slot back");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn past_the_total_connection_cap_every_address_is_refused_503() {
    let server = Server::start(&["--max-connections", "4", "--max-connections-per-ip", "2", "--idle-timeout", "30"]);
    let _open: Vec<TcpStream> = ["127.0.0.1", "127.0.0.1", "127.0.0.2", "127.0.0.2"].iter().map(|from| connect_from(from, server.addr)).collect();
    let refused = exchange(connect_from("127.0.0.3", server.addr), "GET", "/health", &[]);
    assert_eq!(refused.status, 503);
    assert!(refused.json()["problem"].as_str().unwrap().contains("too many open connections"), "{}", refused.text());
}

#[test]
fn health_answers_within_a_second_from_another_address_while_one_floods_idle_and_slow_connections() {
    let server = Server::start(&["--header-timeout", "1", "--idle-timeout", "1"]);
    let addr = server.addr;
    let stop = Arc::new(AtomicBool::new(false));
    // 150 connections from 127.0.0.1, half silent and half trickling a header, reopened when closed:
    // 64 hold their address's slots, the rest are refused over and over. Bounded: 3 s.
    let flood = std::thread::spawn({
        let stop = stop.clone();
        move || {
            let open = |trickle: bool| {
                let mut stream = TcpStream::connect(addr).ok()?;
                if trickle {
                    stream.write_all(b"GET /health HTTP/1.1\r\n").ok()?;
                }
                stream.set_nonblocking(true).ok()?;
                Some(stream)
            };
            let mut streams: Vec<Option<TcpStream>> = (0..150).map(|i| open(i % 2 == 1)).collect();
            let mut reopened = 0;
            while !stop.load(Ordering::Relaxed) {
                for (i, stream) in streams.iter_mut().enumerate() {
                    let trickle = i % 2 == 1;
                    if !stream.as_mut().is_some_and(|s| still_open(s, trickle)) {
                        *stream = open(trickle);
                        reopened += 1;
                    }
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            reopened
        }
    });
    let t0 = Instant::now();
    let mut slowest = Duration::ZERO;
    while t0.elapsed() < Duration::from_secs(3) {
        let (status, took) = health_from("127.0.0.2", addr);
        assert_eq!(status, 200);
        slowest = slowest.max(took);
        std::thread::sleep(Duration::from_millis(100));
    }
    stop.store(true, Ordering::Relaxed);
    let reopened = flood.join().unwrap();
    eprintln!("slowest /health from 127.0.0.2 during the flood: {slowest:?}; flood connections reopened {reopened} times");
    assert!(slowest < Duration::from_secs(1), "{slowest:?}");
    assert!(reopened > 86, "the flood was refused past its 64 slots: {reopened} reopenings");
}

/// Whether a non-blocking connection is still open and unanswered, after one more header byte when
/// `trickle` (an answer, the 503 of a refused one, comes just before the server closes it).
fn still_open(stream: &mut TcpStream, trickle: bool) -> bool {
    if trickle && stream.write(b"x").is_err() {
        return false;
    }
    let mut buf = [0u8; 512];
    matches!(stream.read(&mut buf), Err(e) if e.kind() == ErrorKind::WouldBlock)
}

// ---- The analytics: read key, rate limit, CORS; security headers ----

const READ_KEY: &str = "a-read-key-for-the-serving-tests";
const WINDOW: &str = "/api/summary?from=0&to=9999999999999";

#[test]
fn with_a_read_key_the_api_answers_401_without_it_and_the_dashboard_ingest_and_health_need_none() {
    let server = Server::start(&["--read-key", READ_KEY]);
    assert_eq!(server.post_json("/v1/beacons", &envelope(vec![record("k1")])).status, 200, "ingest needs no read key");
    for path in ["/api/summary", "/api/timeseries?metric=count", "/api/compare?dimension=variant&a=A&b=B", "/api/streams", "/api/diagnosis"] {
        let refused = server.get(path);
        assert_eq!(refused.status, 401, "{path}");
        assert_eq!((refused.json()["error"].as_str(), refused.json()["field"].as_str()), (Some("unauthorized"), Some("key")));
        assert!(refused.header("www-authenticate").unwrap().starts_with("Bearer"));
    }
    let bearer = format!("Bearer {READ_KEY}");
    let with_header = server.request("GET", WINDOW, &[("authorization", &bearer)], b"");
    assert_eq!(with_header.status, 200, "{}", with_header.text());
    assert_eq!(with_header.json()["groups"][0]["count"], 1);
    let with_query = server.get(&format!("{WINDOW}&key={READ_KEY}"));
    assert_eq!(with_query.status, 200, "the key parameter is taken out before the query is parsed: {}", with_query.text());
    for wrong in [format!("{WINDOW}&key=not-the-key-at-all-no"), format!("{WINDOW}&key=")] {
        assert_eq!(server.get(&wrong).status, 401);
    }
    assert_eq!(server.request("GET", WINDOW, &[("authorization", "Bearer not-the-key")], b"").status, 401);
    assert_eq!(server.request("GET", WINDOW, &[("authorization", &format!("Basic {READ_KEY}"))], b"").status, 401);
    assert_eq!(server.get("/health").status, 200);
    assert_eq!(server.get("/").status, 404, "the dashboard is served without a key (none in this test's directory)");
}

#[test]
fn analytics_are_rate_limited_per_address_before_the_key_is_checked_and_apart_from_ingest() {
    let server = Server::start(&["--read-key", READ_KEY, "--api-rate-limit", "0.5", "--api-rate-burst", "2", "--rate-limit", "0.5", "--rate-burst", "2"]);
    let guess = || server.request("GET", WINDOW, &[("authorization", "Bearer a-guessed-key-0000000")], b"");
    assert_eq!(guess().status, 401);
    assert_eq!(guess().status, 401);
    let limited = guess();
    assert_eq!(limited.status, 429, "guessing keys is rate limited: {}", limited.text());
    assert_eq!(limited.header("retry-after"), Some("2"));
    assert!(limited.json()["problem"].as_str().unwrap().contains("analytics"));
    for id in ["i1", "i2"] {
        assert_eq!(server.post_json("/v1/beacons", &envelope(vec![record(id)])).status, 200, "ingest has its own bucket");
    }
    let bearer = format!("Bearer {READ_KEY}");
    let other = exchange(connect_from("127.0.0.2", server.addr), "GET", WINDOW, &[("authorization", &bearer)]);
    assert_eq!(other.status, 200, "another address has its own bucket");
    assert_eq!(server.get("/health").status, 200, "/health is not limited");
}

#[test]
fn the_slowest_rate_answers_429_with_a_finite_retry_after_and_the_collector_goes_on() {
    let server = Server::start(&["--rate-limit", "0.001", "--rate-burst", "1"]);
    assert_eq!(server.post_json("/v1/beacons", &envelope(vec![record("s1")])).status, 200);
    let refused = server.post_json("/v1/beacons", &envelope(vec![record("s2")]));
    assert_eq!(refused.status, 429);
    assert_eq!(refused.header("retry-after"), Some("1000"));
    assert_eq!(server.get("/health").status, 200);
}

#[test]
fn api_cors_follows_api_origin_only_never_the_ingest_wildcard() {
    let only_ingest = Server::start(&["--allow-origin", "*"]);
    let read = only_ingest.request("GET", WINDOW, &[("origin", "https://evil.example")], b"");
    assert_eq!(read.status, 200);
    assert_eq!(read.header("access-control-allow-origin"), None, "--allow-origin '*' is ingest's only");
    let preflight = only_ingest.request("OPTIONS", "/api/summary", &[("origin", "https://evil.example"), ("access-control-request-method", "GET")], b"");
    assert_eq!(preflight.header("access-control-allow-origin"), None);
    assert_ne!(preflight.status / 100, 2);

    let admin = "https://admin.example.com";
    let server = Server::start(&["--allow-origin", "*", "--api-origin", admin, "--read-key", READ_KEY]);
    let preflight = server.request("OPTIONS", "/api/summary", &[("origin", admin), ("access-control-request-method", "GET"), ("access-control-request-headers", "authorization")], b"");
    assert_eq!(preflight.status, 204, "a preflight carries no key: {}", preflight.text());
    assert_eq!(preflight.header("access-control-allow-origin"), Some(admin));
    assert_eq!(preflight.header("access-control-allow-headers"), Some("authorization"));
    assert_eq!(preflight.header("access-control-allow-methods"), Some("GET, OPTIONS"));
    let evil = server.request("OPTIONS", "/api/summary", &[("origin", "https://evil.example"), ("access-control-request-method", "GET")], b"");
    assert_eq!(evil.status, 403);
    assert!(evil.json()["problem"].as_str().unwrap().contains("--api-origin"));
    let bearer = format!("Bearer {READ_KEY}");
    let read = server.request("GET", WINDOW, &[("origin", admin), ("authorization", &bearer)], b"");
    assert_eq!((read.status, read.header("access-control-allow-origin")), (200, Some(admin)));
    assert_eq!(read.header("vary"), Some("origin"));
    let read = server.request("GET", WINDOW, &[("origin", "https://evil.example"), ("authorization", &bearer)], b"");
    assert_eq!(read.header("access-control-allow-origin"), None);
    let beacon = server.request("POST", "/v1/beacons", &[("origin", "https://evil.example"), ("content-type", "text/plain")], envelope(vec![record("c1")]).to_string().as_bytes());
    assert_eq!((beacon.status, beacon.header("access-control-allow-origin")), (200, Some("*")), "ingest keeps its wildcard");
    assert_eq!(server.get("/health").header("access-control-allow-origin"), None);
}

#[test]
fn every_answer_is_nosniff_and_the_dashboard_has_a_strict_content_security_policy() {
    let dir = TempDir::new("dashboard-csp");
    std::fs::write(dir.0.join("index.html"), "<!doctype html><title>dash</title>").unwrap();
    let server = Server::start(&["--dashboard", dir.0.to_str().unwrap()]);
    let page = server.get("/");
    assert_eq!(page.status, 200);
    let csp = page.header("content-security-policy").unwrap();
    for directive in ["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"] {
        assert!(csp.split(';').any(|d| d.trim() == directive), "{directive} in {csp}");
    }
    assert!(!csp.contains("unsafe"), "{csp}");
    assert_eq!(page.header("referrer-policy"), Some("no-referrer"));
    assert!(server.get("/missing.js").header("content-security-policy").is_some());
    let answers = [
        page,
        server.get("/health"),
        server.get(WINDOW),
        server.get("/api/summary?bad=1"),
        server.get("/api/nothing"),
        server.request("POST", "/v1/beacons", &[("content-type", "text/plain")], b"{"),
    ];
    for resp in answers {
        assert_eq!(resp.header("x-content-type-options"), Some("nosniff"), "{} {}", resp.status, resp.text());
    }
}

#[test]
fn a_request_header_over_64_kib_is_refused_431() {
    let server = Server::start(&[]);
    let big = "x".repeat(70 * 1024);
    let refused = exchange(TcpStream::connect(server.addr).unwrap(), "GET", "/health", &[("x-padding", &big)]);
    assert_eq!(refused.status, 431);
    let fits = "x".repeat(32 * 1024);
    assert_eq!(exchange(TcpStream::connect(server.addr).unwrap(), "GET", "/health", &[("x-padding", &fits)]).status, 200);
}
