//! The `llm-ux-collector` binary itself: `--help`, the start-up line, serving, and refusing bad flags.

mod common;

use clap::CommandFactory;
use common::{envelope, recent, record, request, TempDir};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_llm-ux-collector");

/// Kills the child on drop, so a failed assertion leaves no process behind.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn help_lists_every_flag_and_the_defaults() {
    let out = Command::new(BIN).arg("--help").output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    let command = llm_ux_collector::Args::command();
    let longs: Vec<&str> = command.get_arguments().filter_map(|a| a.get_long()).collect();
    for flag in ["listen", "db", "allow-origin", "ingest-key"] {
        assert!(longs.contains(&flag), "{flag} is a flag");
    }
    for flag in longs {
        assert!(help.contains(&format!("--{flag}")), "--help lists --{flag}:\n{help}");
    }
    assert!(help.contains("127.0.0.1:8787"), "{help}");
    assert!(help.contains("data/beacons.db"), "{help}");
}

#[test]
fn bad_flags_are_refused() {
    for args in [&["--allow-origin", "chat.example.com"][..], &["--listen", "nowhere"], &["--no-such-flag"]] {
        let out = Command::new(BIN).args(args).output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        assert!(!out.stderr.is_empty());
    }
}

#[test]
fn numbers_out_of_range_are_refused_at_start_up_naming_the_flag() {
    for args in [
        &["--rate-limit", "1e-300"][..],
        &["--rate-burst", "inf"],
        &["--api-rate-limit", "NaN"],
        &["--max-connections", "0"],
        &["--max-connections-per-ip", "1e3"],
        &["--max-queries", "100000"],
        &["--header-timeout", "0"],
        &["--body-timeout", "7200"],
        &["--idle-timeout=-1"],
        &["--read-key", "short"],
        &["--api-origin", "*"],
    ] {
        let out = Command::new(BIN).args(args).stdin(Stdio::null()).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        let flag = args[0].split('=').next().unwrap();
        assert!(stderr.contains(flag), "{args:?}: {stderr}");
    }
}

#[test]
fn listening_beyond_loopback_needs_a_read_key_or_public_analytics() {
    let dir = TempDir::new("binary-exposed");
    let out = Command::new(BIN).args(["--listen", "0.0.0.0:0", "--db"]).arg(dir.0.join("b.db")).stdin(Stdio::null()).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("--read-key") && stderr.contains("--public-analytics"), "{stderr}");
    assert!(!dir.0.join("b.db").exists(), "refused before opening anything");
    for flag in [&["--public-analytics"][..], &["--read-key", "a-read-key-of-at-least-16"]] {
        let (_running, line) = start(&[&["--listen", "0.0.0.0:0"][..], flag].concat(), &dir, None);
        assert!(line.contains("listening on http://0.0.0.0:"), "{line}");
        assert!(line.contains(if flag.len() == 1 { "analytics open" } else { "analytics need the read key" }), "{line}");
    }
}

#[test]
fn the_connection_cap_stays_under_the_open_file_limit() {
    let dir = TempDir::new("binary-nofile");
    let (_running, line) = start(&[], &dir, Some(256));
    assert!(line.contains("at most 192 connections, 64 per address"), "the limit less 64 for the rest: {line}");
    let mut over = Command::new(BIN);
    over.args(["--listen", "127.0.0.1:0", "--max-connections", "300", "--db"]).arg(dir.0.join("over.db")).stdin(Stdio::null());
    limit_open_files(&mut over, 256);
    let out = over.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("--max-connections 300") && stderr.contains("open-file limit"), "{stderr}");
}

/// The lock-out: 300 idle connections from one address with the file limit at 256. Now that
/// address holds its 64 slots, the rest are refused, and another address is served all along.
#[test]
fn three_hundred_idle_connections_under_a_256_file_limit_lock_no_one_else_out() {
    let dir = TempDir::new("binary-flood");
    let (mut running, line) = start(&[], &dir, Some(256));
    let addr = address(&line);
    let flood: Vec<TcpStream> = (0..300).filter_map(|_| TcpStream::connect(addr).ok()).collect();
    for _ in 0..5 {
        let t0 = std::time::Instant::now();
        let resp = request_from("127.0.0.2", addr, "/health");
        assert_eq!(resp.status, 200);
        assert!(t0.elapsed() < std::time::Duration::from_secs(1), "{:?}", t0.elapsed());
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    drop(flood);
    assert!(running.0.try_wait().unwrap().is_none(), "still running");
}

#[test]
fn an_idle_connection_does_not_hold_up_shutdown() {
    let dir = TempDir::new("binary-idle-shutdown");
    let (mut running, line) = start(&[], &dir, None);
    let _idle = TcpStream::connect(address(&line)).unwrap();
    let mut kept = TcpStream::connect(address(&line)).unwrap();
    kept.write_all(b"GET /health HTTP/1.1\r\nhost: collector\r\n\r\n").unwrap();
    kept.read_exact(&mut [0u8; 12]).unwrap();
    let t0 = std::time::Instant::now();
    assert!(Command::new("kill").args(["-TERM", &running.0.id().to_string()]).status().unwrap().success());
    while running.0.try_wait().unwrap().is_none() {
        assert!(t0.elapsed() < std::time::Duration::from_secs(3), "still running 3 s after SIGTERM with idle connections open");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The release profile unwinds, so a panic answers 500 instead of ending the process; only the wasm
/// build aborts.
#[test]
fn the_release_profile_unwinds_and_only_the_wasm_profile_aborts() {
    let manifest = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml")).unwrap();
    let section = |name: &str| manifest.split(&format!("[profile.{name}]")).nth(1).unwrap().split("\n[").next().unwrap().to_owned();
    let panic_setting = |name: &str| section(name).lines().find(|l| l.trim_start().starts_with("panic")).map(|l| l.replace(' ', ""));
    assert_eq!(panic_setting("release"), None, "the default: unwind");
    assert_eq!(panic_setting("wasm").as_deref(), Some("panic=\"abort\""));
}

/// Starts the binary (on a free loopback port unless `args` has `--listen`), its open-file limit set
/// to `open_files` when given; returns it with its start-up line.
fn start(args: &[&str], dir: &TempDir, open_files: Option<u64>) -> (Running, String) {
    let mut command = Command::new(BIN);
    if !args.contains(&"--listen") {
        command.args(["--listen", "127.0.0.1:0"]);
    }
    command.arg("--db").arg(dir.0.join("beacons.db")).args(args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    if let Some(n) = open_files {
        limit_open_files(&mut command, n);
    }
    let mut running = Running(command.spawn().unwrap());
    let mut line = String::new();
    BufReader::new(running.0.stderr.take().unwrap()).read_line(&mut line).unwrap();
    assert!(line.contains("listening on"), "{line}");
    (running, line)
}

fn address(line: &str) -> SocketAddr {
    let port = line.split("http://").nth(1).and_then(|rest| rest.split_whitespace().next()).and_then(|a| a.rsplit(':').next()).unwrap();
    SocketAddr::from(([127, 0, 0, 1], port.parse().unwrap()))
}

/// Sets the child's soft and hard limits on open files to `n` (as `ulimit -n n` would).
fn limit_open_files(command: &mut Command, n: u64) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe, as code between fork and exec must be.
    unsafe {
        command.pre_exec(move || {
            let limit = libc::rlimit { rlim_cur: n as libc::rlim_t, rlim_max: n as libc::rlim_t };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// A GET from the local address `from` (any of 127/8 on Linux: a second client).
fn request_from(from: &str, addr: SocketAddr, path: &str) -> common::Resp {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_io().build().unwrap();
    let mut stream = runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind(SocketAddr::new(from.parse().unwrap(), 0)).unwrap();
        let stream = socket.connect(addr).await.unwrap().into_std().unwrap();
        stream.set_nonblocking(false).unwrap();
        stream
    });
    stream.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();
    stream.write_all(format!("GET {path} HTTP/1.1\r\nhost: collector\r\nconnection: close\r\n\r\n").as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    common::parse_response(&raw)
}

#[test]
fn starts_logs_its_address_and_serves() {
    let dir = TempDir::new("binary");
    let db = dir.0.join("nested").join("dir").join("beacons.db");
    let child = Command::new(BIN)
        .args(["--listen", "127.0.0.1:0", "--db"])
        .arg(&db)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut running = Running(child);
    let mut line = String::new();
    BufReader::new(running.0.stderr.take().unwrap()).read_line(&mut line).unwrap();
    assert!(line.starts_with("llm-ux-collector "), "{line}");
    let addr: SocketAddr = line.split("http://").nth(1).and_then(|rest| rest.split_whitespace().next()).unwrap_or_else(|| panic!("no address in {line:?}")).parse().unwrap();
    assert!(line.contains(&db.display().to_string()), "{line}");
    assert_eq!(request(addr, "GET", "/health", &[], b"", false).status, 200);
    let body = envelope(vec![record("bin-1")]).to_string();
    let resp = request(addr, "POST", "/v1/beacons", &[("content-type", "text/plain;charset=UTF-8")], body.as_bytes(), false);
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert!(db.exists(), "the database and its parent directories were created");
    let query = format!("/api/summary?from={}&to={}&groupBy=model", recent(1_699_999_999_000.0) as i64, recent(1_700_000_001_000.0) as i64);
    let resp = request(addr, "GET", &query, &[], b"", false);
    assert_eq!(resp.json()["groups"][0]["count"], 1);
}

#[test]
fn with_exit_with_stdin_it_stops_when_its_parent_closes_the_pipe() {
    let dir = TempDir::new("binary-stdin");
    let mut child = listening_with_stdin_piped(&dir);
    assert!(child.try_wait().unwrap().is_none(), "runs while the pipe is open");
    drop(child.stdin.take());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(std::time::Instant::now() < deadline, "still running 10 s after its stdin closed");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
}

#[test]
fn with_exit_with_stdin_a_sigterm_still_ends_it_while_the_pipe_is_open() {
    let dir = TempDir::new("binary-sigterm");
    let mut child = listening_with_stdin_piped(&dir);
    assert!(Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() {
        assert!(std::time::Instant::now() < deadline, "still running 10 s after SIGTERM (stdin still open)");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    drop(child.stdin.take());
}

/// The binary with `--exit-with-stdin` and a piped stdin, once it logged that it listens.
fn listening_with_stdin_piped(dir: &TempDir) -> Child {
    let mut child = Command::new(BIN)
        .args(["--listen", "127.0.0.1:0", "--exit-with-stdin", "--db"])
        .arg(dir.0.join("beacons.db"))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap()).read_line(&mut line).unwrap();
    assert!(line.contains("listening"), "{line}");
    child
}
