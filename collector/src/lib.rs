//! # llm-ux-collector
//!
//! Receives the beacons of `llm-ux-meter` (batches of per-stream records, `schema/beacon.v1.json`),
//! stores them, and serves analytics over them.
//!
//! - `POST /v1/beacons`: the envelope as `application/json` or `text/plain` (what `sendBeacon`
//!   sends), optionally `Content-Encoding: gzip`; see [`http`] for every answer.
//! - `GET /api/summary`: per-group count, RPM, token throughput, percentiles, stall rate, goodput,
//!   stop rate and length bands; see [`api::summary`].
//! - `GET /api/timeseries`: one figure per time bucket and group; see [`api::timeseries`].
//! - `GET /api/compare`: an A/B judgement over units (sessions), valid at every look; see
//!   [`api::compare`].
//! - `GET /api/streams`: single streams sorted by a figure (the slowest first); see [`api::streams`].
//! - `GET /api/diagnosis`: where the experience breaks, in plain words, with tests; see
//!   [`api::diagnosis`].
//! - `GET /metrics`: what this collector accepted, as Prometheus histograms and counters; see
//!   [`prometheus`].
//! - `GET /health`; any other GET serves the dashboard (`--dashboard DIR`).
//!
//! Storage is behind [`store::Store`] (SQLite by default, ClickHouse with `--clickhouse`); the
//! analytics read per-minute, -hour and -day [`rollup`]s holding the meter's own sketches.
//!
//! Ingest faces the internet; the analytics and `/metrics` are private (`--read-key`,
//! [`http::auth`]). Connections are capped and timed out ([`serve`](mod@serve)), requests rate limited per
//! client ([`http::rate_limit`]), queries capped ([`http::query_limit`]), and a handler that panics
//! answers 500 ([`http::catch_panic`](mod@http::catch_panic)).
//!
//! # Layers
//!
//! Read in this order; each imports only those above it (no module imports one that imports it
//! back):
//! 1. [`dims`]: the vocabulary every layer shares: the definition version, a window's time bounds,
//!    dimensions, filters and group keys, metrics, experiment units.
//! 2. [`validate`]: ingest's contract, the beacon envelope and its checks.
//! 3. [`rollup`]: a record's figures ([`rollup::Row`]) and their mergeable summaries per minute,
//!    hour and day; [`rollup::plan`] cuts a window into them.
//! 4. [`store`]: the [`store::Store`] trait and its read types, and the two stores.
//! 5. [`query`]: the machinery the endpoints share: [`query::params`], [`query::window`] (reading a
//!    window the cheap way, choosing groups), [`query::tally`], [`query::stats`] and
//!    [`query::experiment`] (the statistics).
//! 6. [`api`]: one file per analytics endpoint; and [`prometheus`] for `/metrics`.
//! 7. [`http`]: the routes table, handlers, middleware one per file, the one error answer; [`serve`](mod@serve):
//!    the accept loop.
//! 8. [`cli`] (the command line) and [`app`](mod@app) (the collector the binary runs).

pub mod api;
pub mod app;
pub mod cli;
pub mod dims;
pub mod http;
pub mod prometheus;
pub mod query;
pub mod rollup;
pub mod serve;
pub mod store;
pub mod validate;

pub use app::{app, run};
pub use cli::{Args, DEFAULT_MAX_CONNECTIONS};
pub use http::{router, Config, MAX_BODY_BYTES};
pub use serve::{serve, Limits};
