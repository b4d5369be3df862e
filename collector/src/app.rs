//! The collector as the binary runs it: the store the arguments name, the routes over it, the
//! start-up line, and serving until a signal (or the end of standard input) says stop.

use crate::cli::Args;
use crate::http::router;
use crate::serve::{self, serve, Limits};
use crate::store;
use std::sync::Arc;

/// The collector's router for these arguments: opens the store (`--clickhouse`, else `--db`) and
/// builds the routes. What the binary serves; tests serve the same.
pub fn app(args: &Args) -> Result<axum::Router, store::StoreError> {
    let store: Arc<dyn store::Store> = match &args.clickhouse {
        Some(url) => Arc::new(store::clickhouse::ClickHouseStore::open(url, &args.clickhouse_database)?),
        None => Arc::new(store::sqlite::SqliteStore::open(&args.db)?),
    };
    Ok(router(store, args.config()))
}

/// What the collector does, for the start-up line: where the records go, who reads the analytics,
/// and the connection caps.
fn describe(args: &Args, limits: &Limits) -> String {
    let storage = match &args.clickhouse {
        // Up to the query string, which may hold a password.
        Some(url) => format!("clickhouse {} database {}", url.split('?').next().unwrap_or_default(), args.clickhouse_database),
        None => format!("database {}", args.db.display()),
    };
    let analytics = if args.read_key.is_some() { "analytics need the read key" } else { "analytics open to whoever reaches this address" };
    format!("{storage}; {analytics}; at most {} connections, {} per address", limits.max_connections, limits.max_connections_per_client)
}

/// Runs the collector until Ctrl-C, SIGTERM or (with `--exit-with-stdin`) the end of standard input:
/// checks the flags together, raises the open-file limit, opens the store, binds `--listen`, logs one
/// start-up line with the address to stderr, and serves.
pub async fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    args.check_exposure()?;
    let limits = args.limits(serve::conn_limit::raise_open_file_limit())?;
    let app = app(&args)?;
    let listener = tokio::net::TcpListener::bind(args.listen).await.map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
    let addr = listener.local_addr()?;
    eprintln!("llm-ux-collector {}: listening on http://{addr} ({})", env!("CARGO_PKG_VERSION"), describe(&args, &limits));
    serve(listener, app, limits, shutdown(args.exit_with_stdin)).await;
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
    use clap::Parser;

    #[test]
    fn the_start_up_line_leaves_out_the_clickhouse_password() {
        let args = Args::try_parse_from(["llm-ux-collector", "--clickhouse", "http://ch.internal:8123/?user=collector&password=s3cret"]).unwrap();
        let line = describe(&args, &args.limits(None).unwrap());
        assert!(line.starts_with("clickhouse http://ch.internal:8123/ database llm_ux;"), "{line}");
        assert!(!line.contains("s3cret"));
    }
}
