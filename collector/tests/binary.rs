//! The `llm-ux-collector` binary itself: `--help`, the start-up line, serving, and refusing bad flags.

mod common;

use clap::CommandFactory;
use common::{envelope, record, request, TempDir};
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
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
    let resp = request(addr, "GET", "/api/summary?from=1699999999000&to=1700000001000&groupBy=model", &[], b"", false);
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
