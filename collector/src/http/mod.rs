//! The HTTP layer: routes, ingest checks, access to the analytics, and error answers.
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
//! not carry it ([`crate::http::auth`]); 400 for a bad parameter (see [`crate::summary`],
//! [`crate::timeseries`], [`crate::compare`], [`crate::streams`], [`crate::diagnosis`]; `/metrics`
//! takes none); 503 with `Retry-After` when the queue of queries is full
//! ([`crate::http::query_limit`]). `/metrics` answers the Prometheus text format or OpenMetrics, by
//! the `Accept` header ([`crate::prometheus`]), gzipped when `Accept-Encoding` takes it. Other GETs serve the dashboard
//! ([`crate::http::dashboard`]); `GET /health` never waits for queries.
//!
//! A handler that panics answers 500 ([`crate::http::catch_panic`]). Every answer carries
//! `X-Content-Type-Options: nosniff`. Every error body is `{ "error", "field", "problem" }`: `field`
//! names the offending field (`records[3].status`, or a query parameter) or is null. Nothing is stored
//! unless the answer is 200, and `/metrics` counts what was stored ([`crate::prometheus`]).

pub mod auth;
pub mod catch_panic;
pub mod cors;
pub mod dashboard;
pub mod query_limit;
pub mod rate_limit;

use crate::http::auth::{constant_time_eq, has_key, without_key};
use crate::http::catch_panic::catch_panic;
use crate::serve::client::client_of;
use crate::http::cors::cors;
use crate::http::query_limit::QueryLimit;
use crate::http::rate_limit::{retry_after_seconds, RateLimit};
use crate::prometheus::{exposition, Registry};
use crate::store::{Store, StoreError};
use crate::validate::{envelope, Invalid};
use crate::{compare, diagnosis, streams, summary, timeseries};
use axum::body::Bytes;
use axum::extract::{ConnectInfo, RawQuery, Request, State};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::{Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde_json::{json, Value};
use std::io::{Read, Write};
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

fn json_response(status: StatusCode, body: &Value) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json"), (header::CACHE_CONTROL, "no-store")], body.to_string()).into_response()
}

/// The error answer: `{ "error", "field", "problem" }` as JSON.
pub(crate) fn error(status: StatusCode, error: &str, field: Option<String>, problem: String) -> Response {
    json_response(status, &json!({ "error": error, "field": field, "problem": problem }))
}

/// An error answer with `Retry-After`.
fn retry_later(status: StatusCode, error_name: &str, seconds: u64, problem: String) -> Response {
    let mut response = error(status, error_name, None, problem);
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    response
}

/// 503: the queue of analytics queries ([`QueryLimit`]) is full.
fn busy() -> Response {
    retry_later(StatusCode::SERVICE_UNAVAILABLE, "busy", 1, "too many analytics queries are waiting; retry in 1 s".into())
}

async fn nosniff(mut response: Response) -> Response {
    response.headers_mut().insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// The client a request comes from ([`client_of`] its peer address).
fn client(request: &Request) -> IpAddr {
    client_of(request.extensions().get::<ConnectInfo<SocketAddr>>().map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |c| c.0.ip()))
}

/// 429 when `limit` refuses `client` now.
fn over_rate(limit: Option<&RateLimit>, client: IpAddr, what: &str) -> Option<Response> {
    let wait = limit?.check(client, Instant::now()).err()?;
    let seconds = retry_after_seconds(wait);
    Some(retry_later(StatusCode::TOO_MANY_REQUESTS, "rate limited", seconds, format!("over this client's {what} rate; retry in {seconds} s")))
}

async fn ingest(State(state): State<AppState>, RawQuery(query): RawQuery, request: Request) -> Response {
    if let Some(refused) = over_rate(state.ingest_rate.as_deref(), client(&request), "ingest") {
        return refused;
    }
    let (parts, body) = request.into_parts();
    let headers = parts.headers;
    if let Some(expected) = &state.config.ingest_key {
        let given = form_urlencoded::parse(query.as_deref().unwrap_or("").as_bytes()).find(|(k, _)| k == "key").map(|(_, v)| v.into_owned());
        if !given.is_some_and(|g| constant_time_eq(g.as_bytes(), expected.as_bytes())) {
            return error(StatusCode::UNAUTHORIZED, "unauthorized", Some("key".into()), "missing or wrong ingest key (?key=)".into());
        }
    }
    if let Err(problem) = check_content_type(&headers) {
        return error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported media type", Some("content-type".into()), problem);
    }
    let gzip = match content_encoding(&headers) {
        Ok(gzip) => gzip,
        Err(problem) => return error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported content encoding", Some("content-encoding".into()), problem),
    };
    let too_large = |what: &str| error(StatusCode::PAYLOAD_TOO_LARGE, "payload too large", None, format!("{what} is over {MAX_BODY_BYTES} bytes (1 MiB)"));
    let declared = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return too_large("the body");
    }
    let timeout = state.config.body_timeout;
    let bytes: Bytes = match tokio::time::timeout(timeout, Limited::new(body, MAX_BODY_BYTES).collect()).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => return too_large("the body"),
        Ok(Err(e)) => return error(StatusCode::BAD_REQUEST, "unreadable body", None, format!("could not read the body: {e}")),
        Err(_) => {
            let mut response = error(StatusCode::REQUEST_TIMEOUT, "request timeout", None, format!("the body did not arrive within {} s (--body-timeout)", timeout.as_secs_f64()));
            response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
            return response;
        }
    };
    // The body and its parsed JSON (many times the body's size) are dropped at the end of this block,
    // before the wait for the store: only the validated batch waits.
    let batch = {
        let inflated;
        let body: &[u8] = if gzip {
            let mut out = Vec::new();
            let mut decoder = flate2::read::MultiGzDecoder::new(&bytes[..]).take(MAX_BODY_BYTES as u64 + 1);
            if let Err(e) = decoder.read_to_end(&mut out) {
                return error(StatusCode::BAD_REQUEST, "invalid gzip", None, format!("Content-Encoding is gzip but the body is not valid gzip: {e}"));
            }
            if out.len() > MAX_BODY_BYTES {
                return too_large("the decompressed body");
            }
            inflated = out;
            &inflated
        } else {
            &bytes
        };
        let value: Value = match serde_json::from_slice(body) {
            Ok(value) => value,
            Err(e) => return error(StatusCode::BAD_REQUEST, "invalid JSON", None, format!("the body is not valid UTF-8 JSON: {e}")),
        };
        match envelope(&value, now_ms()) {
            Ok(batch) => batch,
            Err(Invalid { field, problem }) => return error(StatusCode::BAD_REQUEST, "invalid envelope", field, problem),
        }
    };
    drop(bytes);
    let (store, metrics) = (state.store.clone(), state.metrics.clone());
    let stored = async {
        let permit = state.store_writes.clone().acquire_owned().await.map_err(|e| e.to_string())?;
        // Counted on the blocking thread once stored: a stored batch counts even if its client left.
        let insert = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let inserted = store.insert_batch(&batch, now_ms())?;
            metrics.count(&batch, &inserted.accepted_at);
            Ok::<_, StoreError>(inserted)
        });
        insert.await.map_err(|e| e.to_string())?.map_err(|e| e.to_string())
    };
    match stored.await {
        Ok(inserted) => json_response(StatusCode::OK, &json!({ "accepted": inserted.accepted(), "duplicates": inserted.duplicates })),
        Err(e) => {
            eprintln!("llm-ux-collector: storing a batch failed: {e}");
            error(StatusCode::INTERNAL_SERVER_ERROR, "storage failed", None, "the batch may not have been stored; retry later (a record is counted once however often it is sent)".into())
        }
    }
}

/// `application/json` or `text/plain`, with at most a UTF-8 charset parameter.
fn check_content_type(headers: &HeaderMap) -> Result<(), String> {
    let expected = "send application/json or text/plain (UTF-8)";
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return Err(format!("no Content-Type: {expected}"));
    };
    let value = value.to_str().map_err(|_| format!("unreadable Content-Type: {expected}"))?;
    let mut parts = value.split(';');
    let mime = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    if mime != "application/json" && mime != "text/plain" {
        return Err(format!("Content-Type {mime:?} is not accepted: {expected}"));
    }
    for param in parts {
        let (name, v) = param.split_once('=').unwrap_or((param, ""));
        if name.trim().eq_ignore_ascii_case("charset") {
            let charset = v.trim().trim_matches('"');
            if !charset.eq_ignore_ascii_case("utf-8") && !charset.eq_ignore_ascii_case("utf8") {
                return Err(format!("charset {charset:?} is not accepted: the body must be UTF-8"));
            }
        }
    }
    Ok(())
}

/// Whether the body is gzip; `Err` for a coding the collector does not decode.
fn content_encoding(headers: &HeaderMap) -> Result<bool, String> {
    let mut gzip = false;
    for value in headers.get_all(header::CONTENT_ENCODING) {
        let value = value.to_str().map_err(|_| "unreadable Content-Encoding".to_owned())?;
        for coding in value.split(',').map(|c| c.trim().to_ascii_lowercase()).filter(|c| !c.is_empty()) {
            match coding.as_str() {
                "identity" => {}
                "gzip" | "x-gzip" if !gzip => gzip = true,
                _ => return Err(format!("Content-Encoding {coding:?} is not accepted: send gzip or no encoding")),
            }
        }
    }
    Ok(gzip)
}

/// Whether an `Accept-Encoding` header takes gzip (not refused with `q=0`).
fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers.get_all(header::ACCEPT_ENCODING).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(',')).any(|coding| {
        let mut parts = coding.split(';');
        let name = parts.next().unwrap_or("").trim();
        let refused = parts.filter_map(|p| p.split_once('=')).any(|(k, q)| k.trim().eq_ignore_ascii_case("q") && q.trim().parse::<f64>().map_or(true, |q| q <= 0.0));
        (name.eq_ignore_ascii_case("gzip") || name.eq_ignore_ascii_case("x-gzip")) && !refused
    })
}

/// `bytes` gzipped at the fastest level (2.3 MB to 77 KB in a few ms at 100 label sets); `None` if
/// the encoder fails, and the answer then goes uncompressed.
fn gzipped(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::with_capacity(bytes.len() / 8), flate2::Compression::fast());
    encoder.write_all(bytes).ok()?;
    encoder.finish().ok()
}

/// The analytics' gate, before any query work: the per-client rate (429), then the read key (401).
/// A key given as `?key=` is taken out of the query the API then parses.
async fn api_access(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    if let Some(refused) = over_rate(state.api_rate.as_deref(), client(&request), "analytics") {
        return refused;
    }
    let Some(key) = &state.config.read_key else {
        return next.run(request).await;
    };
    if !has_key(request.headers(), request.uri().query(), key) {
        let mut response = error(StatusCode::UNAUTHORIZED, "unauthorized", Some("key".into()), "the analytics need the collector's read key: Authorization: Bearer KEY, or ?key=KEY".into());
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"llm-ux-collector analytics\""));
        return response;
    }
    if let Some(query) = request.uri().query() {
        let path = request.uri().path();
        let rest = without_key(query).map_or_else(|| path.to_owned(), |rest| format!("{path}?{rest}"));
        // Parts of a valid query make a valid query; were it not so, the API would refuse `key` (400).
        if let Ok(uri) = rest.parse() {
            *request.uri_mut() = uri;
        }
    }
    next.run(request).await
}

/// Parses the query, waits for its turn ([`QueryLimit`]), runs it on a blocking thread, and answers
/// JSON (400 for a bad parameter, 503 when too many queries wait).
async fn analytics<Q: Send + 'static>(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
    parse: fn(Option<&str>, i64) -> Result<Q, Invalid>,
    run: fn(&dyn Store, &Q) -> Result<Value, StoreError>,
) -> Response {
    let query = match parse(query.as_deref(), now_ms()) {
        Ok(q) => q,
        Err(Invalid { field, problem }) => return error(StatusCode::BAD_REQUEST, "invalid query", field, problem),
    };
    let Some(permit) = state.queries.enter().await else {
        return busy();
    };
    let store = state.store.clone();
    let answer = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        run(store.as_ref(), &query)
    });
    match answer.await.map_err(|e| e.to_string()).and_then(|r| r.map_err(|e| e.to_string())) {
        Ok(answer) => json_response(StatusCode::OK, &answer),
        Err(e) => {
            eprintln!("llm-ux-collector: a query failed: {e}");
            error(StatusCode::INTERNAL_SERVER_ERROR, "query failed", None, "the store could not answer".into())
        }
    }
}

/// `GET /metrics` ([`crate::prometheus`]): the counts in the format the `Accept` header prefers. It
/// takes its turn among the analytics' queries ([`QueryLimit`]), which bounds the answers being
/// written at once; each is O(label sets × bounds).
async fn metrics(State(state): State<AppState>, RawQuery(query): RawQuery, headers: HeaderMap) -> Response {
    if let Some((name, _)) = form_urlencoded::parse(query.as_deref().unwrap_or("").as_bytes()).next() {
        return error(StatusCode::BAD_REQUEST, "invalid query", Some(name.into_owned()), "/metrics takes no parameter but the read key (?key=)".into());
    }
    let format = exposition::negotiate(headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()));
    let gzip = accepts_gzip(&headers);
    let Some(permit) = state.queries.enter().await else {
        return busy();
    };
    let registry = state.metrics.clone();
    let written = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let text = exposition::write(&registry.snapshot(), format).into_bytes();
        // Prometheus asks for gzip: histograms' lines repeat their labels, so it takes about 1/30.
        match gzip.then(|| gzipped(&text)).flatten() {
            Some(zipped) => (zipped, true),
            None => (text, false),
        }
    });
    match written.await {
        Ok((body, zipped)) => {
            let mut response = (StatusCode::OK, [(header::CONTENT_TYPE, format.content_type()), (header::CACHE_CONTROL, "no-store"), (header::VARY, "Accept, Accept-Encoding")], body).into_response();
            if zipped {
                response.headers_mut().insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
            }
            response
        }
        Err(e) => {
            eprintln!("llm-ux-collector: writing /metrics failed: {e}");
            error(StatusCode::INTERNAL_SERVER_ERROR, "metrics failed", None, "the metrics could not be written".into())
        }
    }
}

/// GET (and HEAD) of anything else: a dashboard file; other methods and `/api/...`: 404.
async fn fallback(State(state): State<AppState>, request: Request) -> Response {
    let uri = request.uri();
    if (request.method() == Method::GET || request.method() == Method::HEAD) && !uri.path().starts_with("/api/") && !uri.path().starts_with("/v1/") {
        return dashboard::serve(&state.config.dashboard, uri).await;
    }
    error(StatusCode::NOT_FOUND, "not found", None, "no such endpoint".into())
}

async fn health(State(state): State<AppState>) -> Response {
    let store = state.store.clone();
    match tokio::task::spawn_blocking(move || store.ping()).await {
        Ok(Ok(())) => json_response(StatusCode::OK, &json!({ "status": "ok" })),
        _ => json_response(StatusCode::SERVICE_UNAVAILABLE, &json!({ "status": "store unavailable" })),
    }
}
