//! The analytics' handlers: `/api/*` (each endpoint a parse and a run, [`crate::api::summary`] and the
//! others) and `/metrics` ([`crate::prometheus`]). Each takes its turn among the queries
//! ([`super::query_limit`]) and runs on a blocking thread.

use super::error::ApiError;
use super::{json_response, now_ms, AppState};
use crate::prometheus::exposition;
use crate::store::{Store, StoreError};
use crate::validate::Invalid;
use axum::extract::{RawQuery, State};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use std::io::Write;

/// Parses the query, waits for its turn, runs it on a blocking thread, and answers JSON (400 for a
/// bad parameter, 503 when too many queries wait).
pub(crate) async fn analytics<Q: Send + 'static>(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
    parse: fn(Option<&str>, i64) -> Result<Q, Invalid>,
    run: fn(&dyn Store, &Q) -> Result<Value, StoreError>,
) -> Result<Response, ApiError> {
    let query = parse(query.as_deref(), now_ms()).map_err(ApiError::invalid_query)?;
    let permit = state.queries.enter().await.ok_or_else(ApiError::busy)?;
    let store = state.store.clone();
    let answer = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        run(store.as_ref(), &query)
    });
    let answer = answer.await.map_err(ApiError::query_failed)??;
    Ok(json_response(StatusCode::OK, &answer))
}

/// `GET /metrics`: the counts in the format the `Accept` header prefers. It takes its turn among
/// the analytics' queries, which bounds the answers being written at once; each is O(label sets ×
/// bounds).
pub(crate) async fn metrics(State(state): State<AppState>, RawQuery(query): RawQuery, headers: HeaderMap) -> Result<Response, ApiError> {
    if let Some((name, _)) = form_urlencoded::parse(query.as_deref().unwrap_or("").as_bytes()).next() {
        return Err(ApiError::new(StatusCode::BAD_REQUEST, "invalid query", Some(name.into_owned()), "/metrics takes no parameter but the read key (?key=)".into()));
    }
    let format = exposition::negotiate(headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()));
    let gzip = accepts_gzip(&headers);
    let permit = state.queries.enter().await.ok_or_else(ApiError::busy)?;
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
    let (body, zipped) = written.await.map_err(|e| {
        eprintln!("llm-ux-collector: writing /metrics failed: {e}");
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "metrics failed", None, "the metrics could not be written".into())
    })?;
    let mut response = (StatusCode::OK, [(header::CONTENT_TYPE, format.content_type()), (header::CACHE_CONTROL, "no-store"), (header::VARY, "Accept, Accept-Encoding")], body).into_response();
    if zipped {
        response.headers_mut().insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    Ok(response)
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
