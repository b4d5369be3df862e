//! A per-client rate limit: a token bucket per client ([`crate::serve::client::client_of`]), refilled at
//! `rate` per second up to `burst`. A refused request learns from `Retry-After` when a token will be
//! there. Ingest and the analytics API each have their own.
//!
//! Memory is bounded: at most [`MAX_CLIENTS`] buckets. When the table is full, buckets that have
//! refilled (clients gone quiet) are forgotten, at most once a second since that sweep is O(clients);
//! if every bucket is still in use, new clients share one overflow bucket until room is made, so a
//! flood of addresses is limited as one client instead of growing the table.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Clients tracked at once.
pub const MAX_CLIENTS: usize = 100_000;

/// The bucket new clients share while the table is full (no real client has this address).
const OVERFLOW: IpAddr = IpAddr::V6(Ipv6Addr::UNSPECIFIED);

/// The slowest rate and the largest rate and burst the collector accepts (checked at start-up), so
/// every wait and every sum here stays finite and small.
pub const MIN_RATE: f64 = 0.001;
pub const MAX_RATE: f64 = 1_000_000.0;

pub struct RateLimit {
    rate: f64,
    burst: f64,
    table: Mutex<Table>,
}

struct Table {
    clients: HashMap<IpAddr, Bucket>,
    next_sweep: Option<Instant>,
}

#[derive(Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl RateLimit {
    /// `rate` requests per second per client (finite, from [`MIN_RATE`] to [`MAX_RATE`]), bursts up
    /// to `burst` (finite, at least 1 and at most [`MAX_RATE`]); start-up validates both.
    pub fn new(rate: f64, burst: f64) -> RateLimit {
        RateLimit { rate, burst: burst.max(1.0), table: Mutex::new(Table { clients: HashMap::new(), next_sweep: None }) }
    }

    /// Takes a token for `client` at `now`: `Ok` when allowed, else how long until one is there.
    /// O(1) amortized; O(clients) at most once a second when the table is full.
    pub fn check(&self, client: IpAddr, now: Instant) -> Result<(), Duration> {
        let (rate, burst) = (self.rate, self.burst);
        let refill = |b: &Bucket| (b.tokens + now.saturating_duration_since(b.at).as_secs_f64() * rate).min(burst);
        let mut table = self.table.lock().unwrap_or_else(|p| p.into_inner());
        let mut key = client;
        if table.clients.len() >= MAX_CLIENTS && !table.clients.contains_key(&client) {
            if !matches!(table.next_sweep, Some(at) if now < at) {
                table.clients.retain(|_, b| refill(b) < burst);
                table.next_sweep = Some(now + Duration::from_secs(1));
            }
            if table.clients.len() >= MAX_CLIENTS {
                key = OVERFLOW;
            }
        }
        let bucket = table.clients.entry(key).or_insert(Bucket { tokens: burst, at: now });
        bucket.tokens = refill(bucket);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            // At most 1 / MIN_RATE seconds with a validated rate; saturating all the same.
            Err(Duration::try_from_secs_f64((1.0 - bucket.tokens) / rate).unwrap_or(Duration::MAX))
        }
    }
}

/// `Retry-After` for a wait: whole seconds, rounded up, at least 1 and at most a day. Never panics.
pub fn retry_after_seconds(wait: Duration) -> u64 {
    wait.as_secs().saturating_add(u64::from(wait.subsec_nanos() > 0)).clamp(1, 86_400)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bursts_then_refills_per_client() {
        let limit = RateLimit::new(2.0, 3.0);
        let (a, b) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        let t0 = Instant::now();
        for _ in 0..3 {
            assert!(limit.check(a, t0).is_ok());
        }
        let wait = limit.check(a, t0).unwrap_err();
        assert!((wait.as_secs_f64() - 0.5).abs() < 1e-9);
        assert!(limit.check(b, t0).is_ok(), "another client has its own bucket");
        assert!(limit.check(a, t0 + Duration::from_millis(500)).is_ok());
        assert!(limit.check(a, t0 + Duration::from_millis(500)).is_err());
    }

    #[test]
    fn the_slowest_rate_gives_a_finite_wait_and_retry_after() {
        let limit = RateLimit::new(MIN_RATE, 1.0);
        let client = "10.0.0.1".parse().unwrap();
        let t0 = Instant::now();
        assert!(limit.check(client, t0).is_ok());
        let wait = limit.check(client, t0).unwrap_err();
        assert_eq!(wait, Duration::from_secs(1000));
        assert_eq!(retry_after_seconds(wait), 1000);
        assert_eq!(retry_after_seconds(Duration::from_millis(1)), 1);
        assert_eq!(retry_after_seconds(Duration::from_millis(1500)), 2);
        assert_eq!(retry_after_seconds(Duration::MAX), 86_400);
    }

    #[test]
    fn a_full_table_of_busy_clients_puts_new_ones_in_one_shared_bucket() {
        let limit = RateLimit::new(1.0, 2.0);
        let t0 = Instant::now();
        for i in 0..MAX_CLIENTS as u32 {
            assert!(limit.check(IpAddr::from(i.to_be_bytes()), t0).is_ok());
        }
        let newcomer = |i: u32| IpAddr::from((u32::MAX - i).to_be_bytes());
        assert!(limit.check(newcomer(0), t0).is_ok());
        assert!(limit.check(newcomer(1), t0).is_ok());
        assert!(limit.check(newcomer(2), t0).is_err(), "newcomers share the overflow bucket");
        assert!(limit.table.lock().unwrap().clients.len() <= MAX_CLIENTS + 1, "the table does not grow");
        // Two seconds on, every bucket has refilled: the sweep forgets them and newcomers get their own.
        let later = t0 + Duration::from_secs(2);
        assert!(limit.check(newcomer(3), later).is_ok());
        assert!(limit.check(newcomer(3), later).is_ok());
        assert!(limit.check(newcomer(4), later).is_ok(), "a bucket of its own again");
        assert!(limit.table.lock().unwrap().clients.len() < 10);
    }
}
