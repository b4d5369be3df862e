//! Caps on open connections: at most `total` at once, and at most `per_client` from one client
//! ([`crate::serve::client::client_of`]), so one address flooding the collector with connections leaves room
//! for everyone else. Each connection holds a [`Slot`] while it is open.
//!
//! The total stays below the process's open-file limit (each connection is a file descriptor), which
//! [`raise_open_file_limit`] lifts to its hard limit at start-up: past the limit `accept` fails and no
//! client at all gets in.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// File descriptors kept for everything but connections: the database and its WAL, reader
/// connections, ClickHouse sockets, standard streams, the listener, one connection being refused.
pub const RESERVED_FILES: u64 = 64;

pub struct ConnLimit {
    total: usize,
    per_client: usize,
    open: Mutex<Open>,
}

#[derive(Default)]
struct Open {
    total: usize,
    by_client: HashMap<IpAddr, usize>,
}

/// Why a connection was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Full {
    /// `total` connections are open.
    Total,
    /// `per_client` connections from this client are open.
    Client,
}

/// An open connection's place; frees it when dropped.
pub struct Slot {
    limit: Arc<ConnLimit>,
    client: IpAddr,
}

impl ConnLimit {
    /// `total` and `per_client` at least 1 (start-up validates them).
    pub fn new(total: usize, per_client: usize) -> Arc<ConnLimit> {
        Arc::new(ConnLimit { total, per_client, open: Mutex::new(Open::default()) })
    }

    /// A slot for a connection from `client`, unless a cap is reached. O(1); the table holds only
    /// clients with an open connection, so at most `total` entries.
    pub fn admit(self: &Arc<Self>, client: IpAddr) -> Result<Slot, Full> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if open.total >= self.total {
            return Err(Full::Total);
        }
        let count = open.by_client.entry(client).or_insert(0);
        if *count >= self.per_client {
            return Err(Full::Client);
        }
        *count += 1;
        open.total += 1;
        Ok(Slot { limit: self.clone(), client })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.limit.open.lock().unwrap_or_else(|p| p.into_inner());
        open.total -= 1;
        if let Some(count) = open.by_client.get_mut(&self.client) {
            *count -= 1;
            if *count == 0 {
                open.by_client.remove(&self.client);
            }
        }
    }
}

/// Raises this process's soft limit on open files to its hard limit, and returns the soft limit in
/// force (`None` where there is no such limit to read).
#[cfg(unix)]
pub fn raise_open_file_limit() -> Option<u64> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit and setrlimit only read and write the struct passed by pointer.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return None;
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit { rlim_cur: limit.rlim_max, rlim_max: limit.rlim_max };
            // Refused on macOS when the hard limit is unlimited: the soft limit then stays.
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                limit = raised;
            }
        }
    }
    Some(open_files(limit.rlim_cur))
}

/// `rlim_t` is `u64` on Linux and macOS, narrower on some targets.
#[cfg(unix)]
#[allow(clippy::useless_conversion)]
fn open_files(limit: libc::rlim_t) -> u64 {
    u64::from(limit)
}

#[cfg(not(unix))]
pub fn raise_open_file_limit() -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_the_total_and_each_client_and_frees_on_drop() {
        let limit = ConnLimit::new(3, 2);
        let (a, b, c): (IpAddr, IpAddr, IpAddr) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap(), "10.0.0.3".parse().unwrap());
        let a1 = limit.admit(a).unwrap();
        let _a2 = limit.admit(a).unwrap();
        assert_eq!(limit.admit(a).err(), Some(Full::Client));
        let b1 = limit.admit(b).unwrap();
        assert_eq!(limit.admit(c).err(), Some(Full::Total));
        drop(a1);
        let _c1 = limit.admit(c).expect("a freed slot takes another connection");
        assert_eq!(limit.admit(a).err(), Some(Full::Total));
        drop(b1);
        let open = limit.open.lock().unwrap();
        assert_eq!(open.total, 2);
        assert_eq!(open.by_client.len(), 2, "a client without connections is forgotten");
    }

    #[cfg(unix)]
    #[test]
    fn the_open_file_limit_is_raised_to_the_hard_limit() {
        let soft = raise_open_file_limit().unwrap();
        let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) }, 0);
        assert_eq!(open_files(limit.rlim_cur), soft);
        assert!(limit.rlim_cur == limit.rlim_max || cfg!(target_os = "macos"));
    }
}
