//! CORS: which web pages may send beacons, and which may read the analytics, are separate lists.
//!
//! - `POST /v1/beacons` follows `--allow-origin` (`*`: any page). With a list, a POST whose Origin is
//!   not on it is refused (403), preflights too; without one, no CORS headers and no Origin check.
//! - `/api/*` follows `--api-origin` only, never `*`: the analytics are private, and a wildcard would
//!   let any page a user visits read them through the user's browser. A page not on the list gets no
//!   CORS headers, so its browser keeps the answer from it; its preflight is refused (403).
//! - Nothing else (the dashboard, `/health`, `/metrics`) answers CORS: a scraper is no browser.
//!
//! An allowed origin gets `access-control-allow-origin` (its own origin, or `*` for ingest's `*`) and
//! `access-control-expose-headers: retry-after` on every answer, errors included.

use crate::http::error::ApiError;
use crate::http::AppState;
use axum::extract::{Request, State};
use axum::http::header::{self, HeaderValue};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The CORS rules of one kind of route.
struct Rules<'a> {
    origins: &'a [String],
    flag: &'static str,
    methods: &'static str,
    headers: &'static str,
}

/// Middleware: answers preflights and adds CORS headers, by route (see the module docs).
pub(crate) async fn cors(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let path = request.uri().path();
    let ingest = path == "/v1/beacons";
    let rules = if ingest {
        Rules { origins: &state.config.allow_origins, flag: "--allow-origin", methods: "POST, OPTIONS", headers: "content-type, content-encoding" }
    } else if path.starts_with("/api/") {
        Rules { origins: &state.config.api_origins, flag: "--api-origin", methods: "GET, OPTIONS", headers: "authorization" }
    } else {
        return next.run(request).await;
    };
    if rules.origins.is_empty() {
        return next.run(request).await;
    }
    let any = rules.origins.iter().any(|o| o == "*");
    let origin = request.headers().get(header::ORIGIN).and_then(|v| v.to_str().ok()).map(str::to_ascii_lowercase);
    let allowed = origin.as_ref().is_some_and(|o| any || rules.origins.contains(o));
    let allow_value = if any { Some(HeaderValue::from_static("*")) } else { origin.as_deref().and_then(|o| HeaderValue::from_str(o).ok()) };
    let preflight = request.method() == Method::OPTIONS && request.headers().contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    let refused = || ApiError::new(StatusCode::FORBIDDEN, "origin not allowed", Some("origin".into()), format!("this origin is not on the collector's {} list", rules.flag)).into_response();

    let mut response = if preflight {
        if !allowed {
            return refused();
        }
        let mut response = StatusCode::NO_CONTENT.into_response();
        let h = response.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static(rules.methods));
        let requested = request.headers().get(header::ACCESS_CONTROL_REQUEST_HEADERS).cloned();
        // Ingest echoes what the page asks for (sendBeacon and fetch vary); the API allows its one header.
        let headers = if ingest { requested } else { None };
        h.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, headers.unwrap_or(HeaderValue::from_static(rules.headers)));
        h.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("86400"));
        response
    } else {
        if origin.is_some() && !allowed && request.method() == Method::POST {
            return refused();
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
