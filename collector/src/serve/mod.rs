//! The accept loop: HTTP/1.1 over hyper, with the caps and timeouts plain `axum::serve` lacks.
//!
//! Each accepted connection takes a slot ([`crate::serve::conn_limit`]: `--max-connections` in all,
//! `--max-connections-per-ip` per client) or is answered 503 at once and closed; an admitted one is
//! served under its header and idle timeouts ([`crate::serve::conn_timeout`]), with request headers of at
//! most [`MAX_HEADER_BYTES`] (431 beyond). Requests carry `ConnectInfo<SocketAddr>` for the
//! per-client rate limits.
//!
//! On shutdown the listener closes, idle connections close at once, and answers under way are
//! finished, for at most [`SHUTDOWN_GRACE`].

pub mod client;
pub mod conn_limit;
pub mod conn_timeout;

use crate::serve::client::client_of;
use crate::serve::conn_limit::{ConnLimit, Full};
use crate::serve::conn_timeout::{Activity, Tracked};
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use serde_json::json;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::pin;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tower_service::Service;

/// The largest request header (request line and fields): 64 KiB, so a connection's read buffer
/// stays small; browsers send a few KiB.
pub const MAX_HEADER_BYTES: usize = 64 * 1024;

/// How long shutdown waits for answers under way.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// The idle timeout while shutting down: a connection between requests closes this soon.
const SHUTDOWN_IDLE: Duration = Duration::from_millis(200);

/// The connection caps and timeouts (the command line's `--max-connections`,
/// `--max-connections-per-ip`, `--header-timeout`, `--idle-timeout`).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections open at once (at least 1).
    pub max_connections: usize,
    /// Connections open at once from one client (at least 1).
    pub max_connections_per_client: usize,
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
}

/// Serves `app` on `listener` until `shutdown` resolves, then shuts down gracefully (see the module
/// docs). Accept errors never end it: the next accept follows at once after a connection's own error,
/// after 100 ms after any other (such as running out of file descriptors).
pub async fn serve(listener: TcpListener, app: Router, limits: Limits, shutdown: impl Future<Output = ()>) {
    let slots = ConnLimit::new(limits.max_connections, limits.max_connections_per_client);
    let (stop, stopping) = watch::channel(());
    let mut connections = JoinSet::new();
    let mut shutdown = pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            // Reaps finished connections so the set holds open ones only.
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) if is_connection_error(&e) => continue,
                Err(e) => {
                    eprintln!("llm-ux-collector: accepting a connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        match slots.admit(client_of(peer.ip())) {
            Ok(slot) => {
                let (app, stopping) = (app.clone(), stopping.clone());
                connections.spawn(async move {
                    connection(stream, peer, app, limits, stopping).await;
                    drop(slot);
                });
            }
            Err(full) => refuse(&stream, full),
        }
    }
    drop(listener);
    let _ = stop.send(());
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, async { while connections.join_next().await.is_some() {} }).await;
}

/// Serves one connection until the client closes it, a timeout passes, or shutdown.
async fn connection(stream: TcpStream, peer: SocketAddr, app: Router, limits: Limits, mut stopping: watch::Receiver<()>) {
    let activity = Activity::new();
    let service = hyper::service::service_fn({
        let activity = activity.clone();
        move |mut request: hyper::Request<Incoming>| {
            request.extensions_mut().insert(ConnectInfo(peer));
            let handling = activity.begin();
            let answer = app.clone().call(request.map(Body::new));
            async move {
                let response = answer.await;
                drop(handling);
                response
            }
        }
    });
    let io = TokioIo::new(Tracked::new(stream, activity.clone()));
    let mut http = http1::Builder::new();
    // The header's own cap (431 beyond), and the read buffer no larger.
    http.max_header_size(MAX_HEADER_BYTES).max_buf_size(MAX_HEADER_BYTES);
    let mut conn = pin!(http.serve_connection(io, service));
    let (mut idle, mut shutting_down) = (limits.idle_timeout, false);
    loop {
        tokio::select! {
            _ = conn.as_mut() => return,
            () = activity.expired(limits.header_timeout, idle) => return,
            // An error means the server is gone: shut down all the same.
            _ = stopping.changed(), if !shutting_down => {
                shutting_down = true;
                idle = idle.min(SHUTDOWN_IDLE);
                conn.as_mut().graceful_shutdown();
            }
        }
    }
}

/// Answers 503 and closes, without reading the request: the answer is written only if the socket
/// takes it at once, so a refused connection costs no wait.
fn refuse(stream: &TcpStream, full: Full) {
    let problem = match full {
        Full::Total => "the collector has too many open connections; retry shortly",
        Full::Client => "too many open connections from this address (--max-connections-per-ip); close some or retry shortly",
    };
    let body = json!({ "error": "too many connections", "field": null, "problem": problem }).to_string();
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nretry-after: 1\r\ncache-control: no-store\r\nx-content-type-options: nosniff\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.try_write(response.as_bytes());
}

/// Errors of one connection only (it was closed before it was accepted).
fn is_connection_error(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::get;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn get_text(addr: SocketAddr, path: &str) -> String {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(format!("GET {path} HTTP/1.1\r\nhost: collector\r\nconnection: close\r\n\r\n").as_bytes()).await.unwrap();
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer).await;
        String::from_utf8_lossy(&answer).into_owned()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_panic_no_layer_catches_ends_its_connection_only_and_frees_its_slot() {
        let app = Router::new().route("/panic", get(|| async { panic!("uncaught") as &'static str })).route("/ok", get(|| async { "fine" }));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let one = Limits { max_connections: 1, max_connections_per_client: 1, header_timeout: Duration::from_secs(5), idle_timeout: Duration::from_secs(5) };
        tokio::spawn(serve(listener, app, one, std::future::pending()));
        assert_eq!(get_text(addr, "/panic").await, "", "closed without an answer");
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            let answer = get_text(addr, "/ok").await;
            if answer.ends_with("fine") {
                break;
            }
            assert!(answer.contains("503") && tokio::time::Instant::now() < deadline, "the only slot was never freed: {answer}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
