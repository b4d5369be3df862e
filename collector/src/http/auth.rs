//! Keys: the read key that opens the analytics API (`--read-key`), and the comparison every key check
//! uses.
//!
//! A request to `/api/*` carries the read key as `Authorization: Bearer KEY` or as `?key=KEY` (the
//! header wins when both are there). The `key` parameter is taken out of the query before the API
//! parses it, since the API refuses parameters it does not know.

use axum::http::header::{self, HeaderMap};

/// The shortest read key accepted: a short key is guessed.
pub const MIN_KEY_CHARS: usize = 16;

/// Whether `given` equals `expected`, in time that depends on their lengths only, not on where they
/// differ. O(length).
pub fn constant_time_eq(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len() && given.iter().zip(expected).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Whether the request carries `key`, in its `Authorization: Bearer` header or else its `key` query
/// parameter. O(header and query length).
pub fn has_key(headers: &HeaderMap, query: Option<&str>, key: &str) -> bool {
    if let Some(value) = headers.get(header::AUTHORIZATION) {
        let given = value.as_bytes();
        let bearer = given.len() > 7 && given[..7].eq_ignore_ascii_case(b"bearer ");
        return bearer && constant_time_eq(given[7..].trim_ascii(), key.as_bytes());
    }
    let given = form_urlencoded::parse(query.unwrap_or("").as_bytes()).find(|(name, _)| name == "key").map(|(_, value)| value);
    given.is_some_and(|g| constant_time_eq(g.as_bytes(), key.as_bytes()))
}

/// `query` without its `key` parameters (the others untouched, in order); `None` when nothing is left.
pub fn without_key(query: &str) -> Option<String> {
    let is_key = |pair: &str| {
        let name = pair.split_once('=').map_or(pair, |(name, _)| name);
        form_urlencoded::parse(name.as_bytes()).next().is_some_and(|(name, _)| name == "key")
    };
    let kept: Vec<&str> = query.split('&').filter(|pair| !is_key(pair)).collect();
    (!kept.is_empty()).then(|| kept.join("&"))
}

/// A read key is at least [`MIN_KEY_CHARS`] visible ASCII characters (no spaces), so that it goes
/// unchanged into a header, a query string and a shell.
pub fn check_read_key(key: &str) -> Result<(), String> {
    if key.len() < MIN_KEY_CHARS || !key.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(format!("a read key is at least {MIN_KEY_CHARS} visible ASCII characters, without spaces (e.g. `openssl rand -hex 24`)"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    const KEY: &str = "0123456789abcdef-key";

    fn bearer(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn the_key_as_a_bearer_header_or_a_query_parameter() {
        let none = HeaderMap::new();
        assert!(has_key(&bearer(&format!("Bearer {KEY}")), None, KEY));
        assert!(has_key(&bearer(&format!("bearer  {KEY} ")), None, KEY));
        assert!(!has_key(&bearer(&format!("Basic {KEY}")), None, KEY));
        assert!(!has_key(&bearer("Bearer 0123456789abcdef-kez"), None, KEY));
        assert!(!has_key(&bearer("Bearer "), Some(&format!("key={KEY}")), KEY), "a wrong header is not saved by the query");
        assert!(has_key(&none, Some(&format!("from=1&key={KEY}")), KEY));
        assert!(has_key(&none, Some("key=0123456789abcdef%2Dkey"), KEY), "percent-encoded");
        assert!(!has_key(&none, Some("key=0123456789abcdef"), KEY));
        assert!(!has_key(&none, Some("from=1"), KEY));
        assert!(!has_key(&none, None, KEY));
    }

    #[test]
    fn the_key_parameter_is_taken_out_of_the_query() {
        assert_eq!(without_key("from=1&key=abc&groupBy=model").as_deref(), Some("from=1&groupBy=model"));
        assert_eq!(without_key("k%65y=abc&model=a%26b").as_deref(), Some("model=a%26b"));
        assert_eq!(without_key("key=abc"), None);
        assert_eq!(without_key("keys=1&monkey=2").as_deref(), Some("keys=1&monkey=2"));
    }

    #[test]
    fn read_keys_are_long_visible_ascii() {
        assert!(check_read_key(KEY).is_ok());
        for bad in ["short", "0123456789 abcdef", "0123456789abcdéf", ""] {
            assert!(check_read_key(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn equal_only_when_equal() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
    }
}
