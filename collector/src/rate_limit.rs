//! A per-client rate limit on ingest: a token bucket per client address, refilled at `rate` per
//! second up to `burst`. A refused request learns from `Retry-After` when a token will be there.
//! Memory is bounded: at most [`MAX_CLIENTS`] buckets, idle full ones dropped first.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Clients tracked at once; past this, buckets that have refilled are forgotten.
pub const MAX_CLIENTS: usize = 100_000;

pub struct RateLimit {
    rate: f64,
    burst: f64,
    clients: Mutex<HashMap<IpAddr, Bucket>>,
}

#[derive(Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl RateLimit {
    /// `rate` requests per second per client, bursts up to `burst` (both > 0).
    pub fn new(rate: f64, burst: f64) -> RateLimit {
        RateLimit { rate, burst: burst.max(1.0), clients: Mutex::new(HashMap::new()) }
    }

    /// Takes a token for `client` at `now`: `Ok` when allowed, else how long until one is there. O(1)
    /// amortized.
    pub fn check(&self, client: IpAddr, now: Instant) -> Result<(), Duration> {
        let mut clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        if clients.len() >= MAX_CLIENTS && !clients.contains_key(&client) {
            let (rate, burst) = (self.rate, self.burst);
            clients.retain(|_, b| b.tokens + now.saturating_duration_since(b.at).as_secs_f64() * rate < burst);
        }
        let bucket = clients.entry(client).or_insert(Bucket { tokens: self.burst, at: now });
        bucket.tokens = (bucket.tokens + now.saturating_duration_since(bucket.at).as_secs_f64() * self.rate).min(self.burst);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - bucket.tokens) / self.rate))
        }
    }
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
}
