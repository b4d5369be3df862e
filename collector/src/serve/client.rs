//! Who a client is, for the per-client limits (request rates, open connections): the socket's peer
//! address, never a header the client writes itself. An IPv6 client is its /64 network, the block one
//! subscriber gets, so cycling through the addresses of that block buys no more than one address.

use std::net::{IpAddr, Ipv6Addr};

/// The client `peer` counts as: an IPv4 address as it is (IPv4-mapped IPv6 included), an IPv6
/// address with its last 64 bits cleared. O(1).
pub fn client_of(peer: IpAddr) -> IpAddr {
    match peer.to_canonical() {
        IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from(v6.to_bits() & !u128::from(u64::MAX))),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_as_is_ipv6_by_its_64_bit_network() {
        let at = |s: &str| client_of(s.parse().unwrap());
        assert_eq!(at("203.0.113.7"), at("203.0.113.7"));
        assert_ne!(at("203.0.113.7"), at("203.0.113.8"));
        assert_eq!(at("::ffff:203.0.113.7"), at("203.0.113.7"));
        assert_eq!(at("2001:db8:1:2:aaaa::1"), at("2001:db8:1:2:ffff:ffff:ffff:ffff"));
        assert_eq!(at("2001:db8:1:2::5"), "2001:db8:1:2::".parse::<IpAddr>().unwrap());
        assert_ne!(at("2001:db8:1:2::1"), at("2001:db8:1:3::1"));
    }
}
