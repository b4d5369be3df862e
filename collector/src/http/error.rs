//! The collector's one error answer: `{ "error", "field", "problem" }` as JSON with its status, and
//! `Retry-After` or another header where the client needs one. Handlers and middleware return it
//! (`Result<Response, ApiError>`, so they use `?`); a refused check ([`Invalid`]) and a failed store
//! ([`StoreError`]) become one through the constructors that say which answer they are.

use crate::store::StoreError;
use crate::validate::Invalid;
use axum::http::header::{self, HeaderName, HeaderValue};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    /// A short name of the refusal (`"invalid query"`).
    error: &'static str,
    /// The offending field (`records[3].status`, a query parameter, a header) or none.
    field: Option<String>,
    /// What is wrong, and what to do, in words.
    problem: String,
    headers: Vec<(HeaderName, HeaderValue)>,
}

impl ApiError {
    pub fn new(status: StatusCode, error: &'static str, field: Option<String>, problem: String) -> ApiError {
        ApiError { status, error, field, problem, headers: Vec::new() }
    }

    /// With `Retry-After: seconds`.
    pub fn retry_after(self, seconds: u64) -> ApiError {
        self.with_header(header::RETRY_AFTER, HeaderValue::from(seconds))
    }

    pub fn with_header(mut self, name: HeaderName, value: HeaderValue) -> ApiError {
        self.headers.push((name, value));
        self
    }

    /// 400: a query parameter refused.
    pub fn invalid_query(Invalid { field, problem }: Invalid) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "invalid query", field, problem)
    }

    /// 400: a beacon envelope refused.
    pub fn invalid_envelope(Invalid { field, problem }: Invalid) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "invalid envelope", field, problem)
    }

    /// 500: a query the store could not answer (the cause goes to stderr, not to the client).
    pub fn query_failed(cause: impl std::fmt::Display) -> ApiError {
        eprintln!("llm-ux-collector: a query failed: {cause}");
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "query failed", None, "the store could not answer".into())
    }

    /// 500: a batch the store may not have stored (the cause goes to stderr).
    pub fn storage_failed(cause: impl std::fmt::Display) -> ApiError {
        eprintln!("llm-ux-collector: storing a batch failed: {cause}");
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "storage failed", None, "the batch may not have been stored; retry later (a record is counted once however often it is sent)".into())
    }

    /// 503: the queue of analytics queries is full ([`super::query_limit`]).
    pub fn busy() -> ApiError {
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "busy", None, "too many analytics queries are waiting; retry in 1 s".into()).retry_after(1)
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        ApiError::query_failed(e)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({ "error": self.error, "field": self.field, "problem": self.problem });
        let mut response = super::json_response(self.status, &body);
        for (name, value) in self.headers {
            response.headers_mut().insert(name, value);
        }
        response
    }
}
