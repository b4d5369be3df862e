//! The analytics' gate, before any query work (middleware over `/api/*` and `/metrics`): the
//! per-client rate (429), then the read key (401, [`super::auth`]). A key given as `?key=` is taken
//! out of the query the API then parses.

use super::auth::{has_key, without_key};
use super::error::ApiError;
use super::{client, over_rate, AppState};
use axum::extract::{Request, State};
use axum::http::header::{self, HeaderValue};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;

pub(crate) async fn api_access(State(state): State<AppState>, mut request: Request, next: Next) -> Result<Response, ApiError> {
    if let Some(refused) = over_rate(state.api_rate.as_deref(), client(&request), "analytics") {
        return Err(refused);
    }
    let Some(key) = &state.config.read_key else {
        return Ok(next.run(request).await);
    };
    if !has_key(request.headers(), request.uri().query(), key) {
        return Err(ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", Some("key".into()), "the analytics need the collector's read key: Authorization: Bearer KEY, or ?key=KEY".into())
            .with_header(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"llm-ux-collector analytics\"")));
    }
    if let Some(query) = request.uri().query() {
        let path = request.uri().path();
        let rest = without_key(query).map_or_else(|| path.to_owned(), |rest| format!("{path}?{rest}"));
        // Parts of a valid query make a valid query; were it not so, the API would refuse `key` (400).
        if let Ok(uri) = rest.parse() {
            *request.uri_mut() = uri;
        }
    }
    Ok(next.run(request).await)
}
