//! The HTTP layer: routes, ingest checks, CORS and error answers.
//!
//! `POST /v1/beacons` answers, in the order the checks run:
//! - 403 when `--allow-origin` is given and the request's Origin header is not allowed;
//! - 401 when `--ingest-key` is set and `?key=` is missing or wrong;
//! - 415 for a content type other than `application/json` or `text/plain` (a `charset` parameter
//!   must say UTF-8), or a content coding other than `gzip` or `identity`;
//! - 413 when the body, or the body after gzip decompression, is over [`MAX_BODY_BYTES`] (the
//!   decompression stops there: a gzip bomb costs at most that much);
//! - 400 when the body is not JSON, not gzip although declared so, or not a valid envelope;
//! - 429 with `Retry-After` (seconds) when the client (by address) is over `--rate-limit`;
//! - 200 `{ "accepted": N, "duplicates": M }` once the batch is stored whole.
//!
//! `GET /api/summary`, `/api/timeseries` and `/api/compare` answer 400 for a bad parameter (see
//! [`crate::summary`], [`crate::timeseries`], [`crate::compare`]); other GETs serve the dashboard.
//!
//! Every error body is `{ "error", "field", "problem" }`: `field` names the offending field
//! (`records[3].status`, or a query parameter) or is null. Nothing is stored unless the answer is 200.

use crate::rate_limit::RateLimit;
use crate::store::{Store, StoreError};
use crate::validate::{envelope, Invalid};
use crate::{compare, dashboard, summary, timeseries};
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
use std::io::Read;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// The largest body accepted, before and after decompression: 1 MiB.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// The HTTP layer's settings.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// Origins allowed by CORS (lowercase, no trailing slash); `*` allows any.
    pub allow_origins: Vec<String>,
    /// When set, `POST /v1/beacons` needs `?key=` equal to it.
    pub ingest_key: Option<String>,
    /// Ingest requests per second per client address, and the burst allowed; `None`: no limit.
    pub rate_limit: Option<(f64, f64)>,
    /// The dashboard's directory, served at `/`.
    pub dashboard: PathBuf,
}

#[derive(Clone)]
struct AppState {
    store: Arc<dyn Store>,
    config: Arc<Config>,
    rate_limit: Option<Arc<RateLimit>>,
}

/// The collector's routes over a store. Serve it with `into_make_service_with_connect_info::<SocketAddr>()`
/// so the rate limit sees client addresses (without, all clients share one bucket).
pub fn router(store: Arc<dyn Store>, config: Config) -> Router {
    let rate_limit = config.rate_limit.map(|(rate, burst)| Arc::new(RateLimit::new(rate, burst)));
    let state = AppState { store, config: Arc::new(config), rate_limit };
    Router::new()
        .route("/v1/beacons", post(ingest))
        .route("/api/summary", get(|s: State<AppState>, q: RawQuery| analytics(s, q, summary::parse, |store, w| Ok(summary::summary(store, w)?.to_json()))))
        .route("/api/timeseries", get(|s: State<AppState>, q: RawQuery| analytics(s, q, timeseries::parse, timeseries::timeseries)))
        .route("/api/compare", get(|s: State<AppState>, q: RawQuery| analytics(s, q, compare::parse, compare::compare)))
        .route("/health", get(health))
        .fallback(fallback)
        .layer(middleware::from_fn_with_state(state.clone(), cors))
        .with_state(state)
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json"), (header::CACHE_CONTROL, "no-store")], body.to_string()).into_response()
}

fn error(status: StatusCode, error: &str, field: Option<String>, problem: String) -> Response {
    json_response(status, &json!({ "error": error, "field": field, "problem": problem }))
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

async fn ingest(State(state): State<AppState>, RawQuery(query): RawQuery, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let headers = parts.headers;
    if let Some(limit) = &state.rate_limit {
        let client = parts.extensions.get::<ConnectInfo<SocketAddr>>().map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |c| c.0.ip());
        if let Err(wait) = limit.check(client, Instant::now()) {
            let seconds = wait.as_secs_f64().ceil().max(1.0) as u64;
            let mut response = error(StatusCode::TOO_MANY_REQUESTS, "rate limited", None, format!("over this client's ingest rate; retry in {seconds} s"));
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
            return response;
        }
    }
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
    let bytes: Bytes = match Limited::new(body, MAX_BODY_BYTES).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => return too_large("the body"),
        Err(e) => return error(StatusCode::BAD_REQUEST, "unreadable body", None, format!("could not read the body: {e}")),
    };
    let body: Vec<u8> = if gzip {
        let mut out = Vec::new();
        let mut decoder = flate2::read::MultiGzDecoder::new(&bytes[..]).take(MAX_BODY_BYTES as u64 + 1);
        if let Err(e) = decoder.read_to_end(&mut out) {
            return error(StatusCode::BAD_REQUEST, "invalid gzip", None, format!("Content-Encoding is gzip but the body is not valid gzip: {e}"));
        }
        if out.len() > MAX_BODY_BYTES {
            return too_large("the decompressed body");
        }
        out
    } else {
        bytes.to_vec()
    };
    let value: Value = match serde_json::from_slice(&body) {
        Ok(value) => value,
        Err(e) => return error(StatusCode::BAD_REQUEST, "invalid JSON", None, format!("the body is not valid UTF-8 JSON: {e}")),
    };
    let batch = match envelope(&value) {
        Ok(batch) => batch,
        Err(Invalid { field, problem }) => return error(StatusCode::BAD_REQUEST, "invalid envelope", field, problem),
    };
    let store = state.store.clone();
    match tokio::task::spawn_blocking(move || store.insert_batch(&batch, now_ms())).await {
        Ok(Ok(inserted)) => json_response(StatusCode::OK, &json!({ "accepted": inserted.accepted, "duplicates": inserted.duplicates })),
        Ok(Err(e)) => {
            eprintln!("llm-ux-collector: storing a batch failed: {e}");
            error(StatusCode::INTERNAL_SERVER_ERROR, "storage failed", None, "the batch was not stored; retry later".into())
        }
        Err(e) => {
            eprintln!("llm-ux-collector: storing a batch failed: {e}");
            error(StatusCode::INTERNAL_SERVER_ERROR, "storage failed", None, "the batch was not stored; retry later".into())
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

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Parses the query, runs it on a blocking thread, and answers JSON (400 for a bad parameter).
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
    let store = state.store.clone();
    match tokio::task::spawn_blocking(move || run(store.as_ref(), &query)).await {
        Ok(Ok(answer)) => json_response(StatusCode::OK, &answer),
        Ok(Err(e)) => {
            eprintln!("llm-ux-collector: a query failed: {e}");
            error(StatusCode::INTERNAL_SERVER_ERROR, "query failed", None, "the store could not answer".into())
        }
        Err(e) => {
            eprintln!("llm-ux-collector: a query failed: {e}");
            error(StatusCode::INTERNAL_SERVER_ERROR, "query failed", None, "the store could not answer".into())
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

/// CORS: preflights answered here (204 for an allowed origin, 403 otherwise); other responses to an
/// allowed origin get `access-control-allow-origin` and `access-control-expose-headers: retry-after`;
/// a POST from an origin not on a non-empty allow-list is refused (403).
async fn cors(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let origins = &state.config.allow_origins;
    if origins.is_empty() {
        return next.run(request).await;
    }
    let any = origins.iter().any(|o| o == "*");
    let origin = request.headers().get(header::ORIGIN).and_then(|v| v.to_str().ok()).map(str::to_ascii_lowercase);
    let allowed = origin.as_ref().is_some_and(|o| any || origins.contains(o));
    let allow_value = if any { Some(HeaderValue::from_static("*")) } else { origin.as_deref().and_then(|o| HeaderValue::from_str(o).ok()) };
    let preflight = request.method() == Method::OPTIONS && request.headers().contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);

    let mut response = if preflight {
        if !allowed {
            return error(StatusCode::FORBIDDEN, "origin not allowed", Some("origin".into()), "this origin is not on the collector's --allow-origin list".into());
        }
        let mut response = StatusCode::NO_CONTENT.into_response();
        let h = response.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, POST, OPTIONS"));
        let requested = request.headers().get(header::ACCESS_CONTROL_REQUEST_HEADERS).cloned();
        h.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, requested.unwrap_or(HeaderValue::from_static("content-type, content-encoding")));
        h.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("86400"));
        response
    } else {
        if origin.is_some() && !allowed && request.method() == Method::POST {
            return error(StatusCode::FORBIDDEN, "origin not allowed", Some("origin".into()), "this origin is not on the collector's --allow-origin list".into());
        }
        next.run(request).await
    };
    let h = response.headers_mut();
    if !any {
        h.append(header::VARY, HeaderValue::from_static("origin"));
    }
    if allowed {
        if let Some(value) = allow_value {
            h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, value);
        }
        h.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static("retry-after"));
    }
    response
}
