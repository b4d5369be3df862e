//! `POST /v1/beacons`: a batch of stream records in, checked whole before anything is stored. The
//! checks run in the order the module doc of [`super`] lists, each refusal an [`ApiError`]; the body
//! is read within `--body-timeout` and at most [`MAX_BODY_BYTES`], before and after gzip.

use super::error::ApiError;
use super::{client, json_response, now_ms, over_rate, AppState, MAX_BODY_BYTES};
use crate::http::auth::constant_time_eq;
use crate::store::StoreError;
use crate::validate::{envelope, Batch};
use axum::body::{Body, Bytes};
use axum::extract::{RawQuery, Request, State};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::StatusCode;
use axum::response::Response;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde_json::{json, Value};
use std::io::Read;
use std::time::Duration;

pub(crate) async fn ingest(State(state): State<AppState>, RawQuery(query): RawQuery, request: Request) -> Result<Response, ApiError> {
    if let Some(refused) = over_rate(state.ingest_rate.as_deref(), client(&request), "ingest") {
        return Err(refused);
    }
    let (parts, body) = request.into_parts();
    let headers = parts.headers;
    if let Some(expected) = &state.config.ingest_key {
        let given = form_urlencoded::parse(query.as_deref().unwrap_or("").as_bytes()).find(|(k, _)| k == "key").map(|(_, v)| v.into_owned());
        if !given.is_some_and(|g| constant_time_eq(g.as_bytes(), expected.as_bytes())) {
            return Err(ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", Some("key".into()), "missing or wrong ingest key (?key=)".into()));
        }
    }
    check_content_type(&headers).map_err(|problem| ApiError::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported media type", Some("content-type".into()), problem))?;
    let gzip = content_encoding(&headers).map_err(|problem| ApiError::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported content encoding", Some("content-encoding".into()), problem))?;
    let declared = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return Err(too_large("the body"));
    }
    let bytes = read_body(body, state.config.body_timeout).await?;
    // The body and its parsed JSON (many times the body's size) are dropped here, before the wait
    // for the store: only the validated batch waits.
    let batch = batch_of(&bytes, gzip)?;
    drop(bytes);
    let (store, metrics) = (state.store.clone(), state.metrics.clone());
    let permit = state.store_writes.clone().acquire_owned().await.map_err(ApiError::storage_failed)?;
    // Counted on the blocking thread once stored: a stored batch counts even if its client left.
    let insert = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let inserted = store.insert_batch(&batch, now_ms())?;
        metrics.count(&batch, &inserted.accepted_at);
        Ok::<_, StoreError>(inserted)
    });
    let inserted = insert.await.map_err(ApiError::storage_failed)?.map_err(ApiError::storage_failed)?;
    Ok(json_response(StatusCode::OK, &json!({ "accepted": inserted.accepted(), "duplicates": inserted.duplicates })))
}

/// 413 for `what`.
fn too_large(what: &str) -> ApiError {
    ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "payload too large", None, format!("{what} is over {MAX_BODY_BYTES} bytes (1 MiB)"))
}

/// The body, at most [`MAX_BODY_BYTES`], once it has arrived within `timeout` (408 after, with
/// `Connection: close`).
async fn read_body(body: Body, timeout: Duration) -> Result<Bytes, ApiError> {
    match tokio::time::timeout(timeout, Limited::new(body, MAX_BODY_BYTES).collect()).await {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => Err(too_large("the body")),
        Ok(Err(e)) => Err(ApiError::new(StatusCode::BAD_REQUEST, "unreadable body", None, format!("could not read the body: {e}"))),
        Err(_) => Err(ApiError::new(StatusCode::REQUEST_TIMEOUT, "request timeout", None, format!("the body did not arrive within {} s (--body-timeout)", timeout.as_secs_f64()))
            .with_header(header::CONNECTION, HeaderValue::from_static("close"))),
    }
}

/// The checked batch of a body (gzipped or not): 413 past [`MAX_BODY_BYTES`] inflated (the
/// decompression stops there), 400 for bad gzip, JSON or envelope.
fn batch_of(bytes: &[u8], gzip: bool) -> Result<Batch, ApiError> {
    let inflated;
    let body: &[u8] = if gzip {
        let mut out = Vec::new();
        let mut decoder = flate2::read::MultiGzDecoder::new(bytes).take(MAX_BODY_BYTES as u64 + 1);
        decoder
            .read_to_end(&mut out)
            .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, "invalid gzip", None, format!("Content-Encoding is gzip but the body is not valid gzip: {e}")))?;
        if out.len() > MAX_BODY_BYTES {
            return Err(too_large("the decompressed body"));
        }
        inflated = out;
        &inflated
    } else {
        bytes
    };
    let value: Value = serde_json::from_slice(body).map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, "invalid JSON", None, format!("the body is not valid UTF-8 JSON: {e}")))?;
    envelope(&value, now_ms()).map_err(ApiError::invalid_envelope)
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
