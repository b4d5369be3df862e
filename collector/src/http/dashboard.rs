//! Serves the dashboard: the files of one directory (`--dashboard DIR`) at `/`, `index.html` for `/`.
//! Only plain relative paths inside the directory are served (no `..`, no hidden files).
//!
//! The files are served without the read key: the page and its scripts are no secret, the data is,
//! and the data comes from the API, which needs the key; the page asks for it (`js/read-key.js`).
//! Every answer carries [`CONTENT_SECURITY_POLICY`]: the page runs only its own scripts and styles,
//! talks only to its own origin and cannot be framed.

use axum::http::{header, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use std::path::{Component, Path, PathBuf};

/// The dashboard's policy. uPlot sets styles through the CSSOM (`element.style`), which `style-src`
/// does not govern, and the page has no inline script or style; `data:` images are the empty favicon.
pub const CONTENT_SECURITY_POLICY: &str =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("json") => "application/json",
        Some("ico") => "image/x-icon",
        _ => "application/octet-stream",
    }
}

/// The file `uri` names inside `root`, if it is a safe relative path.
fn resolve(root: &Path, uri: &Uri) -> Option<PathBuf> {
    let relative = uri.path().trim_start_matches('/');
    let relative = if relative.is_empty() || relative.ends_with('/') { format!("{relative}index.html") } else { relative.to_owned() };
    let path = Path::new(&relative);
    let safe = path.components().all(|c| matches!(c, Component::Normal(part) if !part.to_string_lossy().starts_with('.')));
    safe.then(|| root.join(path))
}

/// Answers a GET for a dashboard file, 404 when there is none, with the page's security headers.
pub async fn serve(root: &Path, uri: &Uri) -> Response {
    let mut response = file(root, uri).await;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    // The page's address never leaves in a Referer.
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

async fn file(root: &Path, uri: &Uri) -> Response {
    let Some(path) = resolve(root, uri) else {
        return (StatusCode::NOT_FOUND, "not found").into_response();
    };
    match tokio::fs::read(&path).await {
        Ok(bytes) => (
            [(header::CONTENT_TYPE, content_type(&path)), (header::CACHE_CONTROL, "no-cache")],
            bytes,
        )
            .into_response(),
        Err(_) if uri.path() == "/" => (
            StatusCode::NOT_FOUND,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            format!("no dashboard at {}: start the collector from the project root or pass --dashboard DIR", root.display()),
        )
            .into_response(),
        Err(_) => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_safe_paths() {
        let root = Path::new("/srv/d");
        let at = |p: &str| resolve(root, &p.parse().unwrap());
        assert_eq!(at("/"), Some(PathBuf::from("/srv/d/index.html")));
        assert_eq!(at("/vendor/uPlot.esm.js"), Some(PathBuf::from("/srv/d/vendor/uPlot.esm.js")));
        assert_eq!(at("/../secret"), None);
        assert_eq!(at("/a/../../b"), None);
        assert_eq!(at("/.git/config"), None);
    }
}
