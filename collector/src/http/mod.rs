//! The HTTP layer: the routes table ([`router`]), its handlers ([`ingest`], [`analytics`], the
//! dashboard and `/health` below), its middleware one per file ([`cors`](mod@cors), [`catch_panic`](mod@catch_panic),
//! [`api_access`](mod@api_access), [`nosniff`](mod@nosniff); the limits they use: [`rate_limit`], [`query_limit`], [`auth`]), and
//! the one error answer ([`error::ApiError`]).
//!
//! `POST /v1/beacons` answers, in the order the checks run:
//! - 403 when `--allow-origin` is given and the request's Origin header is not allowed ([`crate::http::cors`]);
//! - 429 with `Retry-After` (seconds) when the client (by address) is over `--rate-limit`;
//! - 401 when `--ingest-key` is set and `?key=` is missing or wrong;
//! - 415 for a content type other than `application/json` or `text/plain` (a `charset` parameter
//!   must say UTF-8), or a content coding other than `gzip` or `identity`;
//! - 413 when the body, or the body after gzip decompression, is over [`MAX_BODY_BYTES`] (the
//!   decompression stops there: a gzip bomb costs at most that much);
//! - 408 when the body has not arrived within `--body-timeout` of the request's header;
//! - 400 when the body is not JSON, not gzip although declared so, or not a valid envelope;
//! - 200 `{ "accepted": N, "duplicates": M }` once the batch is stored whole.
//!
//! `GET /api/summary`, `/api/timeseries`, `/api/compare`, `/api/streams`, `/api/diagnosis` and
//! `/metrics` answer, in order: 429 with `Retry-After` over `--api-rate-limit` (per client, a bucket
//! apart from ingest's); 401 with `WWW-Authenticate` when `--read-key` is set and the request does
//! not carry it ([`crate::http::auth`]); 400 for a bad parameter (see [`crate::api::summary`],
//! [`crate::api::timeseries`], [`crate::api::compare`], [`crate::api::streams`], [`crate::api::diagnosis`]; `/metrics`
//! takes none); 503 with `Retry-After` when the queue of queries is full
//! ([`crate::http::query_limit`]). `/metrics` answers the Prometheus text format or OpenMetrics, by
//! the `Accept` header ([`crate::prometheus`]), gzipped when `Accept-Encoding` takes it. Other GETs serve the dashboard
//! ([`crate::http::dashboard`]); `GET /health` never waits for queries.
//!
//! A handler that panics answers 500 ([`catch_panic`](mod@catch_panic)). Every answer carries
//! `X-Content-Type-Options: nosniff`. Every error body is `{ "error", "field", "problem" }` ([`ApiError`]): `field`
//! names the offending field (`records[3].status`, or a query parameter) or is null. Nothing is stored
//! unless the answer is 200, and `/metrics` counts what was stored ([`crate::prometheus`]).

pub mod analytics;
pub mod api_access;
pub mod auth;
pub mod catch_panic;
pub mod cors;
pub mod dashboard;
pub mod error;
pub mod ingest;
pub mod nosniff;
pub mod query_limit;
pub mod rate_limit;

use crate::prometheus::Registry;
use crate::serve::client::client_of;
use crate::store::Store;
use crate::api::{compare, diagnosis, streams, summary, timeseries};
use analytics::{analytics, metrics};
use api_access::api_access;
use axum::extract::{ConnectInfo, RawQuery, Request, State};
use axum::http::header;
use axum::http::{Method, StatusCode};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use catch_panic::catch_panic;
use cors::cors;
use error::ApiError;
use ingest::ingest;
use nosniff::nosniff;
use query_limit::QueryLimit;
use rate_limit::{retry_after_seconds, RateLimit};
use serde_json::{json, Value};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::Semaphore;

/// The largest body accepted, before and after decompression: 1 MiB.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// The HTTP layer's settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// Origins allowed to send beacons (CORS; lowercase, no trailing slash); `*` allows any.
    pub allow_origins: Vec<String>,
    /// Origins allowed to read the analytics API (CORS); never `*`.
    pub api_origins: Vec<String>,
    /// When set, `POST /v1/beacons` needs `?key=` equal to it.
    pub ingest_key: Option<String>,
    /// When set, `/api/*` needs it ([`crate::http::auth`]).
    pub read_key: Option<String>,
    /// Ingest requests per second per client, and the burst allowed; `None`: no limit.
    pub rate_limit: Option<(f64, f64)>,
    /// Analytics requests per second per client, and the burst allowed; `None`: no limit.
    pub api_rate_limit: Option<(f64, f64)>,
    /// Analytics queries run at once (at least 1).
    pub max_queries: usize,
    /// The longest an ingest body may take to arrive after the request's header.
    pub body_timeout: Duration,
    /// Label sets `/metrics` gives series of their own ([`crate::prometheus::table`]).
    pub metrics_label_sets: usize,
    /// The dashboard's directory, served at `/`.
    pub dashboard: PathBuf,
}

#[derive(Clone)]
pub(crate) struct AppState {
    store: Arc<dyn Store>,
    pub(crate) config: Arc<Config>,
    ingest_rate: Option<Arc<RateLimit>>,
    api_rate: Option<Arc<RateLimit>>,
    queries: Arc<QueryLimit>,
    store_writes: Arc<Semaphore>,
    metrics: Arc<Registry>,
}

/// The collector's routes over a store. Requests should carry `ConnectInfo<SocketAddr>` (as
/// [`crate::serve::serve`] gives them) so the rate limits see client addresses; without, all clients
/// share one bucket.
pub fn router(store: Arc<dyn Store>, config: Config) -> Router {
    let state = AppState {
        store: store.clone(),
        ingest_rate: config.rate_limit.map(|(rate, burst)| Arc::new(RateLimit::new(rate, burst))),
        api_rate: config.api_rate_limit.map(|(rate, burst)| Arc::new(RateLimit::new(rate, burst))),
        queries: Arc::new(QueryLimit::new(config.max_queries)),
        // Each waiting batch holds a blocking thread: the store's bound (at most 256) leaves the
        // threads queries and `/health` need (tokio's pool has 512).
        store_writes: Arc::new(Semaphore::new(store.writes_at_once())),
        metrics: Arc::new(Registry::new(config.metrics_label_sets)),
        config: Arc::new(config),
    };
    let api = Router::new()
        .route("/api/summary", get(|s: State<AppState>, q: RawQuery| analytics(s, q, summary::parse, |store, w| Ok(summary::summary(store, w)?.to_json()))))
        .route("/api/timeseries", get(|s: State<AppState>, q: RawQuery| analytics(s, q, timeseries::parse, timeseries::timeseries)))
        .route("/api/compare", get(|s: State<AppState>, q: RawQuery| analytics(s, q, compare::parse, compare::compare)))
        .route("/api/streams", get(|s: State<AppState>, q: RawQuery| analytics(s, q, streams::parse, streams::streams)))
        .route("/api/diagnosis", get(|s: State<AppState>, q: RawQuery| analytics(s, q, diagnosis::parse, diagnosis::diagnosis)))
        .route("/metrics", get(metrics))
        .route_layer(middleware::from_fn_with_state(state.clone(), api_access));
    Router::new()
        .route("/v1/beacons", post(ingest))
        .merge(api)
        .route("/health", get(health))
        .fallback(fallback)
        // Inside CORS, so a page can read the 500 of a handler that panicked.
        .layer(middleware::from_fn(catch_panic))
        .layer(middleware::from_fn_with_state(state.clone(), cors))
        .layer(middleware::map_response(nosniff))
        .with_state(state)
}

/// A JSON answer, never cached.
fn json_response(status: StatusCode, body: &Value) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json"), (header::CACHE_CONTROL, "no-store")], body.to_string()).into_response()
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// The client a request comes from ([`client_of`] its peer address).
fn client(request: &Request) -> IpAddr {
    client_of(request.extensions().get::<ConnectInfo<SocketAddr>>().map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |c| c.0.ip()))
}

/// 429 when `limit` refuses `client` now.
fn over_rate(limit: Option<&RateLimit>, client: IpAddr, what: &str) -> Option<ApiError> {
    let wait = limit?.check(client, Instant::now()).err()?;
    let seconds = retry_after_seconds(wait);
    Some(ApiError::new(StatusCode::TOO_MANY_REQUESTS, "rate limited", None, format!("over this client's {what} rate; retry in {seconds} s")).retry_after(seconds))
}

/// GET (and HEAD) of anything else: a dashboard file; other methods and `/api/...`: 404.
async fn fallback(State(state): State<AppState>, request: Request) -> Response {
    let uri = request.uri();
    if (request.method() == Method::GET || request.method() == Method::HEAD) && !uri.path().starts_with("/api/") && !uri.path().starts_with("/v1/") {
        return dashboard::serve(&state.config.dashboard, uri).await;
    }
    ApiError::new(StatusCode::NOT_FOUND, "not found", None, "no such endpoint".into()).into_response()
}

async fn health(State(state): State<AppState>) -> Response {
    let store = state.store.clone();
    match tokio::task::spawn_blocking(move || store.ping()).await {
        Ok(Ok(())) => json_response(StatusCode::OK, &json!({ "status": "ok" })),
        _ => json_response(StatusCode::SERVICE_UNAVAILABLE, &json!({ "status": "store unavailable" })),
    }
}
