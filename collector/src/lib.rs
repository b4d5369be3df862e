//! # llm-ux-collector
//!
//! Receives the beacons of `llm-ux-meter` (batches of per-stream records, `schema/beacon.v1.json`),
//! stores them, and serves analytics over them.
//!
//! - `POST /v1/beacons`: the envelope as `application/json` or `text/plain` (what `sendBeacon`
//!   sends), optionally `Content-Encoding: gzip`; see [`http`] for every answer.
//! - `GET /api/summary`: per-group count, RPM, token throughput, percentiles, stall rate, goodput,
//!   stop rate and length bands; see [`summary`].
//! - `GET /api/timeseries`: one figure per time bucket and group; see [`timeseries`].
//! - `GET /api/compare`: an A/B judgement over units (sessions), valid at every look; see [`compare`].
//! - `GET /api/streams`: single streams sorted by a figure (the slowest first); see [`streams`].
//! - `GET /api/diagnosis`: where the experience breaks, in plain words, with tests; see [`diagnosis`].
//! - `GET /metrics`: what this collector accepted, as Prometheus histograms and counters; see
//!   [`prometheus`].
//! - `GET /health`; any other GET serves the dashboard (`--dashboard DIR`).
//!
//! Storage is behind [`store::Store`] (SQLite by default, ClickHouse with `--clickhouse`); the
//! analytics read per-minute, -hour and -day [`rollup`]s holding the meter's own sketches.
//!
//! Ingest faces the internet; the analytics and `/metrics` are private (`--read-key`,
//! [`http::auth`]). Connections are capped and timed out ([`serve`]), requests rate limited per
//! client ([`http::rate_limit`]), queries capped ([`http::query_limit`]), and a handler that panics
//! answers 500 ([`http::catch_panic`]).
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
//! 5. Query machinery: [`params`] (the shared parameters), [`query`] (reading a window the cheap
//!    way, choosing groups), [`tally`], [`stats`] and [`experiment`] (the statistics).
//! 6. One file per analytics endpoint: [`summary`], [`timeseries`], [`compare`], [`streams`],
//!    [`diagnosis`]; and [`prometheus`] for `/metrics`.
//! 7. [`http`]: the routes table, handlers, middleware one per file, the one error answer; [`serve`]:
//!    the accept loop.
//! 8. [`cli`] (the command line) and [`app`] (the collector the binary runs).

pub mod app;
pub mod cli;
pub mod compare;
pub mod diagnosis;
pub mod dims;
pub mod experiment;
pub mod http;
pub mod params;
pub mod prometheus;
pub mod query;
pub mod rollup;
pub mod serve;
pub mod stats;
pub mod store;
pub mod streams;
pub mod summary;
pub mod tally;
pub mod timeseries;
pub mod validate;


pub use app::{app, run};
pub use cli::{Args, DEFAULT_MAX_CONNECTIONS};
pub use http::{router, Config, MAX_BODY_BYTES};
pub use serve::{serve, Limits};
