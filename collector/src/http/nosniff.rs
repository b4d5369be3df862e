//! `X-Content-Type-Options: nosniff` on every answer (middleware): a browser never takes a JSON
//! answer or a dashboard file for another type.

use axum::http::header::{self, HeaderValue};
use axum::response::Response;

pub async fn nosniff(mut response: Response) -> Response {
    response.headers_mut().insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}
