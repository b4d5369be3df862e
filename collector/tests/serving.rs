//! The rate limit on ingest and the dashboard files, over real HTTP.

mod common;

use common::{envelope, record, Server, TempDir};
use serde_json::json;
use std::time::Duration;

#[test]
fn over_the_rate_a_client_gets_429_with_retry_after_and_nothing_is_stored() {
    let server = Server::start(&["--rate-limit", "2", "--rate-burst", "3"]);
    let post = |id: &str| server.post_json("/v1/beacons", &envelope(vec![record(id)]));
    for id in ["r1", "r2", "r3"] {
        assert_eq!(post(id).status, 200, "within the burst");
    }
    let refused = post("r4");
    assert_eq!(refused.status, 429);
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert_eq!(refused.json()["error"], "rate limited");
    let summary = server.get("/api/summary?from=0&to=9999999999999").json();
    assert_eq!(summary["groups"][0]["count"], json!(3), "the refused batch was not stored");
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(post("r4").status, 200, "after Retry-After the client may send again");
    assert_eq!(server.get("/api/summary?from=0&to=9999999999999").status, 200, "queries are not limited");
}

#[test]
fn the_dashboard_directory_is_served_at_the_root_and_nothing_outside_it() {
    let dir = TempDir::new("dashboard");
    let root = dir.0.join("site");
    std::fs::create_dir_all(root.join("js")).unwrap();
    std::fs::write(root.join("index.html"), "<!doctype html><title>dash</title>").unwrap();
    std::fs::write(root.join("js/app.js"), "export {};").unwrap();
    std::fs::write(dir.0.join("secret.txt"), "secret").unwrap();
    let server = Server::start(&["--dashboard", root.to_str().unwrap()]);
    let index = server.get("/");
    assert_eq!((index.status, index.header("content-type")), (200, Some("text/html; charset=utf-8")));
    assert_eq!(index.text(), "<!doctype html><title>dash</title>");
    let script = server.get("/js/app.js");
    assert_eq!((script.status, script.header("content-type")), (200, Some("text/javascript; charset=utf-8")));
    for path in ["/../secret.txt", "/js/../../secret.txt", "/%2e%2e/secret.txt", "/missing.js"] {
        let resp = server.get(path);
        assert_eq!(resp.status, 404, "{path}");
        assert!(!resp.text().contains("secret"), "{path}");
    }
    assert_eq!(server.get("/api/nothing").json()["error"], "not found", "unknown API paths are JSON errors");
    let missing = Server::start(&["--dashboard", dir.0.join("none").to_str().unwrap()]);
    let hint = missing.get("/");
    assert_eq!(hint.status, 404);
    assert!(hint.text().contains("--dashboard"), "{}", hint.text());
}
