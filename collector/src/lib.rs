//! # llm-ux-collector
//!
//! Receives the beacons of `llm-ux-meter` (batches of per-stream records, `schema/beacon.v1.json`),
//! stores them, and serves analytics over them.
//!
//! - `POST /v1/beacons`: the envelope as `application/json` or `text/plain` (what `sendBeacon`
//!   sends), optionally `Content-Encoding: gzip`; see [`http`] for every answer.
//! - `GET /api/summary`: per-group count, RPM, token throughput, percentiles, stall rate, goodput
//!   and length bands; see [`summary`].
//! - `GET /api/timeseries`: one figure per time bucket and group; see [`timeseries`].
//! - `GET /api/compare`: an A/B judgement with Mann-Whitney and two-proportion tests; see [`compare`].
//! - `GET /health`; any other GET serves the dashboard (`--dashboard DIR`).
//!
//! Storage is behind [`store::Store`] (SQLite by default, ClickHouse with `--clickhouse`); the
//! analytics read per-minute, -hour and -day [`rollup`]s holding the meter's own sketches.

pub mod dims;
pub mod compare;
pub mod dashboard;
pub mod http;
pub mod params;
pub mod query;
pub mod rate_limit;
pub mod rollup;
pub mod store;
pub mod stats;
pub mod summary;
pub mod tally;
pub mod timeseries;
pub mod validate;

use clap::Parser;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

pub use http::{router, Config, MAX_BODY_BYTES};

/// The command line of `llm-ux-collector`.
#[derive(Parser, Debug, Clone)]
#[command(name = "llm-ux-collector", version, about = "Stores llm-ux-meter beacons and serves real-user TTFT, TPOT, RPM and token-throughput analytics.")]
pub struct Args {
    /// Address to listen on (host:port; port 0 picks a free port, which the start-up line shows).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8787")]
    pub listen: SocketAddr,

    /// SQLite database file, created with its parent directory if missing (WAL mode).
    #[arg(long, value_name = "PATH", default_value = "data/beacons.db")]
    pub db: PathBuf,

    /// A browser origin allowed to send beacons and read the API (CORS), such as
    /// https://chat.example.com; repeat for several; `*` allows any. When at least one is given,
    /// a POST whose Origin header is not allowed is refused (403). Without any, no CORS headers are
    /// sent and the Origin header is not checked.
    #[arg(long = "allow-origin", value_name = "ORIGIN", value_parser = parse_origin)]
    pub allow_origin: Vec<String>,

    /// Require `?key=KEY` on POST /v1/beacons (a query parameter: sendBeacon cannot set headers);
    /// other requests get 401.
    #[arg(long, value_name = "KEY", env = "LLM_UX_COLLECTOR_INGEST_KEY", hide_env_values = true)]
    pub ingest_key: Option<String>,

    /// Store in ClickHouse over its HTTP interface instead of SQLite (e.g. http://127.0.0.1:8123).
    #[arg(long, value_name = "URL")]
    pub clickhouse: Option<String>,

    /// The ClickHouse database, created if missing.
    #[arg(long, value_name = "NAME", default_value = "llm_ux")]
    pub clickhouse_database: String,

    /// Ingest requests per second allowed per client address (429 with Retry-After beyond); 0 turns
    /// the limit off.
    #[arg(long, value_name = "N", default_value_t = 50.0)]
    pub rate_limit: f64,

    /// Ingest requests a client may send at once before the rate applies.
    #[arg(long, value_name = "N", default_value_t = 200.0)]
    pub rate_burst: f64,

    /// The dashboard's directory, served at `/`.
    #[arg(long, value_name = "DIR", default_value = "www/dashboard")]
    pub dashboard: PathBuf,

    /// Shut down when standard input closes: a parent process that starts the collector with a pipe
    /// stops it by exiting, even when it is killed.
    #[arg(long)]
    pub exit_with_stdin: bool,
}

/// `*`, or an origin: `scheme://host[:port]` with no path, query or fragment.
fn parse_origin(s: &str) -> Result<String, String> {
    if s == "*" {
        return Ok(s.to_owned());
    }
    let trimmed = s.strip_suffix('/').unwrap_or(s);
    let rest = trimmed
        .strip_prefix("http://")
        .or_else(|| trimmed.strip_prefix("https://"))
        .ok_or_else(|| format!("{s:?} is not an origin: expected http(s)://host[:port] or *"))?;
    if rest.is_empty() || rest.contains(['/', '?', '#', ' ']) {
        return Err(format!("{s:?} is not an origin: expected http(s)://host[:port] (no path) or *"));
    }
    Ok(trimmed.to_ascii_lowercase())
}

impl Args {
    /// The HTTP layer's settings from the command line.
    pub fn config(&self) -> Config {
        Config {
            allow_origins: self.allow_origin.clone(),
            ingest_key: self.ingest_key.clone(),
            rate_limit: (self.rate_limit > 0.0).then_some((self.rate_limit, self.rate_burst)),
            dashboard: self.dashboard.clone(),
        }
    }
}

/// The collector's router for these arguments: opens the store (`--clickhouse`, else `--db`) and
/// builds the routes. What the binary serves; tests serve the same.
pub fn app(args: &Args) -> Result<axum::Router, store::StoreError> {
    let store: Arc<dyn store::Store> = match &args.clickhouse {
        Some(url) => Arc::new(store::clickhouse::ClickHouseStore::open(url, &args.clickhouse_database)?),
        None => Arc::new(store::sqlite::SqliteStore::open(&args.db)?),
    };
    Ok(router(store, args.config()))
}

/// Where the records go, for the start-up line.
fn storage(args: &Args) -> String {
    match &args.clickhouse {
        Some(url) => format!("clickhouse {url} database {}", args.clickhouse_database),
        None => format!("database {}", args.db.display()),
    }
}

/// Runs the collector until Ctrl-C or SIGTERM: opens the store, binds `--listen`, logs one start-up
/// line with the address to stderr, and serves.
pub async fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let app = app(&args)?;
    let listener = tokio::net::TcpListener::bind(args.listen).await.map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
    let addr = listener.local_addr()?;
    eprintln!("llm-ux-collector {}: listening on http://{addr} ({})", env!("CARGO_PKG_VERSION"), storage(&args));
    axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()).with_graceful_shutdown(shutdown(args.exit_with_stdin)).await?;
    Ok(())
}

async fn shutdown(exit_with_stdin: bool) {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let stdin_closed = async {
        if !exit_with_stdin {
            return std::future::pending::<()>().await;
        }
        // Blocking reads until end of file (or an error: no stdin at all), on a plain thread: the
        // runtime waits for its blocking pool on exit, and this read may never end after a signal.
        let (closed, on_closed) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
            let _ = closed.send(());
        });
        let _ = on_closed.await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
        _ = stdin_closed => {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins() {
        assert_eq!(parse_origin("*").unwrap(), "*");
        assert_eq!(parse_origin("https://Chat.Example.com/").unwrap(), "https://chat.example.com");
        assert_eq!(parse_origin("http://127.0.0.1:5173").unwrap(), "http://127.0.0.1:5173");
        for bad in ["chat.example.com", "https://", "https://a.com/path", "ftp://a.com"] {
            assert!(parse_origin(bad).is_err(), "{bad}");
        }
    }
}
