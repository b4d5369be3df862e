//! The command line of `llm-ux-collector`: its flags, each checked as it is parsed (a number out of
//! range is refused with the range), and what they make: the HTTP layer's [`Config`], the
//! connection [`Limits`], and the refusal to serve the analytics to the network unprotected.

use crate::http::{self, Config};
use crate::serve::{self, Limits};
use clap::Parser;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// `--max-connections` when not given (lowered to the open-file limit minus
/// [`serve::conn_limit::RESERVED_FILES`] where that is smaller).
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;

/// The command line of `llm-ux-collector`.
#[derive(Parser, Debug, Clone)]
#[command(name = "llm-ux-collector", version, about = "Stores llm-ux-meter beacons and serves real-user TTFT, TPOT, RPM and token-throughput analytics.")]
pub struct Args {
    /// Address to listen on (host:port; port 0 picks a free port, which the start-up line shows). An
    /// address other than loopback needs --read-key or --public-analytics.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8787")]
    pub listen: SocketAddr,

    /// SQLite database file, created with its parent directory if missing (WAL mode).
    #[arg(long, value_name = "PATH", default_value = "data/beacons.db")]
    pub db: PathBuf,

    /// A browser origin allowed to send beacons (CORS), such as https://chat.example.com; repeat for
    /// several; `*` allows any. When at least one is given, a POST whose Origin header is not allowed
    /// is refused (403). Without any, no CORS headers are sent and the Origin header is not checked.
    /// Ingest only: the analytics API follows --api-origin.
    #[arg(long = "allow-origin", value_name = "ORIGIN", value_parser = parse_origin)]
    pub allow_origin: Vec<String>,

    /// A browser origin allowed to read the analytics API (CORS); repeat for several; `*` is refused.
    /// Without any, only the collector's own dashboard (same origin) reads them in a browser.
    #[arg(long = "api-origin", value_name = "ORIGIN", value_parser = parse_api_origin)]
    pub api_origin: Vec<String>,

    /// Require `?key=KEY` on POST /v1/beacons (a query parameter: sendBeacon cannot set headers);
    /// other requests get 401. It is visible in the pages that send beacons: it tells your pages from
    /// others, it keeps no secret.
    #[arg(long, value_name = "KEY", env = "LLM_UX_COLLECTOR_INGEST_KEY", hide_env_values = true)]
    pub ingest_key: Option<String>,

    /// Require this key on the analytics API (/api/*): `Authorization: Bearer KEY` or `?key=KEY`;
    /// other requests get 401. At least 16 visible ASCII characters. The dashboard asks for it.
    #[arg(long, value_name = "KEY", env = "LLM_UX_COLLECTOR_READ_KEY", hide_env_values = true, value_parser = parse_read_key)]
    pub read_key: Option<String>,

    /// Serve the analytics without a read key on an address other than loopback: anyone who reaches
    /// the port reads them.
    #[arg(long, conflicts_with = "read_key")]
    pub public_analytics: bool,

    /// Store in ClickHouse over its HTTP interface instead of SQLite (e.g. http://127.0.0.1:8123;
    /// credentials as ?user=...&password=..., so best given through the environment variable, which
    /// the process list does not show).
    #[arg(long, value_name = "URL", env = "LLM_UX_COLLECTOR_CLICKHOUSE", hide_env_values = true)]
    pub clickhouse: Option<String>,

    /// The ClickHouse database, created if missing.
    #[arg(long, value_name = "NAME", default_value = "llm_ux")]
    pub clickhouse_database: String,

    /// Ingest requests per second allowed per client address (429 with Retry-After beyond): 0 turns
    /// the limit off, else from 0.001 to 1000000.
    #[arg(long, value_name = "N", default_value_t = 50.0, value_parser = parse_rate)]
    pub rate_limit: f64,

    /// Ingest requests a client may send at once before the rate applies (1 to 1000000).
    #[arg(long, value_name = "N", default_value_t = 200.0, value_parser = parse_burst)]
    pub rate_burst: f64,

    /// Analytics requests (/api/*) per second allowed per client address, a limit apart from
    /// ingest's (429 with Retry-After beyond): 0 turns it off, else from 0.001 to 1000000.
    #[arg(long, value_name = "N", default_value_t = 10.0, value_parser = parse_rate)]
    pub api_rate_limit: f64,

    /// Analytics requests a client may send at once before their rate applies (1 to 1000000); a
    /// dashboard refresh sends about a dozen.
    #[arg(long, value_name = "N", default_value_t = 120.0, value_parser = parse_burst)]
    pub api_rate_burst: f64,

    /// Analytics queries run at once (1 to 256: each holds a blocking thread); eight times as many
    /// more wait their turn, and beyond those a query is answered 503 with Retry-After. Ingest and
    /// /health never wait for them.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = count::<1, 256>)]
    pub max_queries: usize,

    /// Connections open at once (1 to 1000000; default 1024, or the open-file limit minus 64 where
    /// that is lower). One more is answered 503 and closed. Start-up raises the open-file limit to
    /// its hard limit and refuses a cap over it.
    #[arg(long, value_name = "N", value_parser = count::<1, 1_000_000>)]
    pub max_connections: Option<usize>,

    /// Connections open at once from one client address (an IPv6 client: its /64), 1 to 1000000.
    /// Behind a proxy every client has the proxy's address: raise it to --max-connections there.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = count::<1, 1_000_000>)]
    pub max_connections_per_ip: usize,

    /// Seconds a request's header may take from its first byte (0.01 to 3600); the connection is
    /// closed beyond.
    #[arg(long, value_name = "SECONDS", default_value = "10", value_parser = parse_seconds)]
    pub header_timeout: Duration,

    /// Seconds an ingest body may take to arrive after its header (0.01 to 3600); 408 beyond.
    #[arg(long, value_name = "SECONDS", default_value = "20", value_parser = parse_seconds)]
    pub body_timeout: Duration,

    /// Seconds a connection may stay silent while no request is handled (0.01 to 3600): opened and
    /// unused, kept alive between requests, or its client not reading the answer; closed beyond.
    #[arg(long, value_name = "SECONDS", default_value = "5", value_parser = parse_seconds)]
    pub idle_timeout: Duration,

    /// Label sets (model, scenario, variant) GET /metrics gives series of their own, 1 to 1000: the
    /// first N seen since the start. Records of any other are counted under model, scenario and
    /// variant "other", and in llm_ux_folded_records_total.
    #[arg(long, value_name = "N", default_value_t = 100, value_parser = count::<1, 1000>)]
    pub metrics_label_sets: usize,

    /// The dashboard's directory, served at `/` (its files need no key; its data comes from the API).
    #[arg(long, value_name = "DIR", default_value = "www/dashboard")]
    pub dashboard: PathBuf,

    /// Shut down when standard input closes: a parent process that starts the collector with a pipe
    /// stops it by exiting, even when it is killed.
    #[arg(long)]
    pub exit_with_stdin: bool,
}

/// `*`, or an origin: `scheme://host[:port]` with no path, query or fragment.
fn parse_origin(s: &str) -> Result<String, String> {
    if s == "*" {
        return Ok(s.to_owned());
    }
    let trimmed = s.strip_suffix('/').unwrap_or(s);
    let rest = trimmed
        .strip_prefix("http://")
        .or_else(|| trimmed.strip_prefix("https://"))
        .ok_or_else(|| format!("{s:?} is not an origin: expected http(s)://host[:port] or *"))?;
    if rest.is_empty() || rest.contains(['/', '?', '#', ' ']) {
        return Err(format!("{s:?} is not an origin: expected http(s)://host[:port] (no path) or *"));
    }
    Ok(trimmed.to_ascii_lowercase())
}

/// An origin, never `*`.
fn parse_api_origin(s: &str) -> Result<String, String> {
    match parse_origin(s)? {
        any if any == "*" => Err("the analytics are private: list the origins that may read them (http(s)://host[:port]), `*` is not accepted".into()),
        origin => Ok(origin),
    }
}

fn parse_read_key(s: &str) -> Result<String, String> {
    http::auth::check_read_key(s).map(|()| s.to_owned())
}

fn number(s: &str) -> Result<f64, String> {
    s.trim().parse::<f64>().ok().filter(|x| x.is_finite()).ok_or_else(|| format!("{s:?} is not a finite number"))
}

/// Requests per second: 0 (no limit), or within the range a token bucket handles exactly.
fn parse_rate(s: &str) -> Result<f64, String> {
    let (min, max) = (http::rate_limit::MIN_RATE, http::rate_limit::MAX_RATE);
    match number(s)? {
        0.0 => Ok(0.0),
        x if (min..=max).contains(&x) => Ok(x),
        _ => Err(format!("must be 0 (no limit) or from {min} to {max} requests per second")),
    }
}

fn parse_burst(s: &str) -> Result<f64, String> {
    let max = http::rate_limit::MAX_RATE;
    Some(number(s)?).filter(|x| (1.0..=max).contains(x)).ok_or_else(|| format!("must be from 1 to {max} requests"))
}

fn parse_seconds(s: &str) -> Result<Duration, String> {
    Some(number(s)?).filter(|x| (0.01..=3600.0).contains(x)).map(Duration::from_secs_f64).ok_or_else(|| "must be from 0.01 to 3600 seconds".into())
}

fn count<const MIN: usize, const MAX: usize>(s: &str) -> Result<usize, String> {
    s.trim().parse::<usize>().ok().filter(|n| (MIN..=MAX).contains(n)).ok_or_else(|| format!("must be a whole number from {MIN} to {MAX}"))
}

impl Args {
    /// The HTTP layer's settings from the command line.
    pub fn config(&self) -> Config {
        let limit = |rate: f64, burst: f64| (rate > 0.0).then_some((rate, burst));
        Config {
            allow_origins: self.allow_origin.clone(),
            api_origins: self.api_origin.clone(),
            ingest_key: self.ingest_key.clone(),
            read_key: self.read_key.clone(),
            rate_limit: limit(self.rate_limit, self.rate_burst),
            api_rate_limit: limit(self.api_rate_limit, self.api_rate_burst),
            max_queries: self.max_queries,
            body_timeout: self.body_timeout,
            metrics_label_sets: self.metrics_label_sets,
            dashboard: self.dashboard.clone(),
        }
    }

    /// The connection caps and timeouts, the total under `open_files` (the process's open-file limit,
    /// if known) less [`serve::conn_limit::RESERVED_FILES`]. An error when `--max-connections` is over it.
    pub fn limits(&self, open_files: Option<u64>) -> Result<Limits, String> {
        let room = open_files.map(|n| usize::try_from(n.saturating_sub(serve::conn_limit::RESERVED_FILES)).unwrap_or(usize::MAX));
        let max_connections = match (self.max_connections, room) {
            (_, Some(0)) => return Err(format!("the open-file limit ({}) leaves no room for connections: raise it (ulimit -n)", open_files.unwrap_or(0))),
            (Some(n), Some(room)) if n > room => {
                return Err(format!("--max-connections {n} is over what the open-file limit allows ({room}: the limit {} less {} for the store and the rest); raise the limit (ulimit -n) or lower the cap", open_files.unwrap_or(0), serve::conn_limit::RESERVED_FILES))
            }
            (Some(n), _) => n,
            (None, room) => room.map_or(DEFAULT_MAX_CONNECTIONS, |room| room.min(DEFAULT_MAX_CONNECTIONS)),
        };
        Ok(Limits { max_connections, max_connections_per_client: self.max_connections_per_ip, header_timeout: self.header_timeout, idle_timeout: self.idle_timeout })
    }

    /// Refuses to serve the analytics to the network unprotected: a listen address other than
    /// loopback needs `--read-key` or `--public-analytics`.
    pub fn check_exposure(&self) -> Result<(), String> {
        if self.listen.ip().to_canonical().is_loopback() || self.read_key.is_some() || self.public_analytics {
            return Ok(());
        }
        Err(format!(
            "--listen {} is reachable from other machines, and so would the analytics be: pass --read-key KEY (or LLM_UX_COLLECTOR_READ_KEY) to require a key for them, or --public-analytics to serve them to anyone",
            self.listen
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(extra: &[&str]) -> Result<Args, clap::Error> {
        Args::try_parse_from(["llm-ux-collector"].iter().chain(extra))
    }

    #[test]
    fn numbers_out_of_range_are_refused_with_the_range() {
        for (flag, bad) in [
            ("--rate-limit", "1e-300"),
            ("--rate-limit", "-1"),
            ("--rate-limit", "inf"),
            ("--rate-limit", "NaN"),
            ("--rate-burst", "0.5"),
            ("--api-rate-limit", "1e7"),
            ("--api-rate-burst", "1e300"),
            ("--max-queries", "0"),
            ("--max-connections", "0"),
            ("--max-connections-per-ip", "-3"),
            ("--header-timeout", "0"),
            ("--body-timeout", "1e400"),
            ("--idle-timeout", "3601"),
            ("--metrics-label-sets", "0"),
            ("--metrics-label-sets", "1001"),
        ] {
            let error = parse(&[&format!("{flag}={bad}")]).unwrap_err().to_string();
            assert!(error.contains(flag) && (error.contains("must be") || error.contains("finite")), "{flag} {bad}: {error}");
        }
        let args = parse(&["--rate-limit", "0", "--api-rate-limit", "0.001", "--header-timeout", "0.5"]).unwrap();
        assert_eq!(args.config().rate_limit, None);
        assert_eq!(args.config().api_rate_limit, Some((0.001, 120.0)));
        assert_eq!(args.header_timeout, Duration::from_millis(500));
    }

    #[test]
    fn the_connection_cap_stays_under_the_open_file_limit() {
        let limits = |extra: &[&str], files| parse(extra).unwrap().limits(files);
        assert_eq!(limits(&[], None).unwrap().max_connections, DEFAULT_MAX_CONNECTIONS);
        assert_eq!(limits(&[], Some(1_048_576)).unwrap().max_connections, DEFAULT_MAX_CONNECTIONS);
        assert_eq!(limits(&[], Some(256)).unwrap().max_connections, 192, "lowered under a small limit");
        assert_eq!(limits(&["--max-connections", "192"], Some(256)).unwrap().max_connections, 192);
        let over = limits(&["--max-connections", "300"], Some(256)).unwrap_err();
        assert!(over.contains("--max-connections 300") && over.contains("256"), "{over}");
        assert!(limits(&[], Some(10)).is_err());
    }

    #[test]
    fn analytics_on_the_network_need_a_read_key_or_public_analytics() {
        let key = "a-read-key-of-24-chars!!";
        assert!(parse(&["--listen", "127.0.0.1:1"]).unwrap().check_exposure().is_ok());
        assert!(parse(&["--listen", "[::1]:1"]).unwrap().check_exposure().is_ok());
        let open = parse(&["--listen", "0.0.0.0:1"]).unwrap().check_exposure().unwrap_err();
        assert!(open.contains("--read-key") && open.contains("--public-analytics"), "{open}");
        assert!(parse(&["--listen", "192.0.2.1:1"]).unwrap().check_exposure().is_err());
        assert!(parse(&["--listen", "0.0.0.0:1", "--read-key", key]).unwrap().check_exposure().is_ok());
        assert!(parse(&["--listen", "[::]:1", "--public-analytics"]).unwrap().check_exposure().is_ok());
        assert!(parse(&["--read-key", key, "--public-analytics"]).is_err(), "contradictory");
        assert!(parse(&["--read-key", "short"]).unwrap_err().to_string().contains("16"));
        assert!(parse(&["--api-origin", "*"]).unwrap_err().to_string().contains("private"));
        assert_eq!(parse(&["--api-origin", "https://Admin.example.com/"]).unwrap().api_origin, ["https://admin.example.com"]);
    }

    #[test]
    fn origins() {
        assert_eq!(parse_origin("*").unwrap(), "*");
        assert_eq!(parse_origin("https://Chat.Example.com/").unwrap(), "https://chat.example.com");
        assert_eq!(parse_origin("http://127.0.0.1:5173").unwrap(), "http://127.0.0.1:5173");
        for bad in ["chat.example.com", "https://", "https://a.com/path", "ftp://a.com"] {
            assert!(parse_origin(bad).is_err(), "{bad}");
        }
    }
}
