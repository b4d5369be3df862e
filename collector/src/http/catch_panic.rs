//! A panic in a handler answers 500 and the collector goes on serving: the release profile unwinds
//! (the root Cargo.toml), and this layer turns the unwinding into an answer. A panic in a blocking
//! task reaches the handler as a failed join, answered 500 there; one anywhere else in serving a
//! request ends that connection's task only (tokio catches it). The panic's message goes to stderr
//! through the default hook; the client learns only that the request failed.

use crate::http::error::ApiError;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::future::{poll_fn, Future};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::pin;
use std::task::Poll;

/// Middleware (`axum::middleware::from_fn(catch_panic)`): the inner service's answer, or 500 when
/// polling it panicked. The panicked future is dropped unpolled; what it shared stays usable because
/// every lock in the collector recovers from poisoning.
pub async fn catch_panic(request: Request, next: Next) -> Response {
    let mut answer = pin!(next.run(request));
    poll_fn(|cx| match catch_unwind(AssertUnwindSafe(|| answer.as_mut().poll(cx))) {
        Ok(poll) => poll,
        Err(_) => Poll::Ready(ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal error", None, "the collector failed on this request; it goes on serving".into()).into_response()),
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::routing::get;
    use axum::Router;
    use http_body_util::BodyExt;
    use tower_service::Service;

    async fn call(router: &mut Router, path: &str) -> (StatusCode, String) {
        let response = router.call(Request::get(path).body(Body::empty()).unwrap()).await.unwrap();
        let status = response.status();
        (status, String::from_utf8(response.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap())
    }

    #[tokio::test]
    async fn a_panicking_handler_answers_500_and_the_router_goes_on() {
        let mut router = Router::new()
            .route("/panic", get(|| async { panic!("a handler bug") as &'static str }))
            .route("/after-await", get(|| async {
                tokio::task::yield_now().await;
                let empty: Vec<u8> = Vec::new();
                empty[1].to_string()
            }))
            .route("/ok", get(|| async { "fine" }))
            .layer(axum::middleware::from_fn(catch_panic));
        for path in ["/panic", "/after-await"] {
            let (status, body) = call(&mut router, path).await;
            assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{path}");
            assert!(body.contains("\"internal error\""), "{body}");
            assert!(!body.contains("a handler bug"), "the panic message stays in the log");
        }
        assert_eq!(call(&mut router, "/ok").await, (StatusCode::OK, "fine".to_owned()));
    }
}
