//! A small HTTP/1.1 client for ClickHouse's HTTP interface, over a std `TcpStream`.
//!
//! One request per connection (`Connection: close`): there is no pool to keep healthy and no stale
//! connection to retry. On loopback a connection costs tens of microseconds; across a network, one
//! round trip more per query. Plain `http://` only (no TLS). The URL's own query string is sent with
//! every request, so credentials or settings can ride along:
//! `http://ch.internal:8123/?user=collector&password=...`.
//!
//! Failure modes: connecting takes at most [`CONNECT_TIMEOUT`], and each read or write waits at most
//! [`IO_TIMEOUT`]; a status other than 200 is an error carrying ClickHouse's message (its exception
//! text), cut to [`MESSAGE_MAX`] characters.

use crate::store::StoreError;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
pub const IO_TIMEOUT: Duration = Duration::from_secs(60);
const MESSAGE_MAX: usize = 1000;

pub struct Client {
    /// `host:port`, to connect to and for the Host header.
    authority: String,
    /// The URL's path, `/` when it has none.
    path: String,
    /// The URL's query parameters, sent with every request before the request's own.
    params: Vec<(String, String)>,
}

fn error(message: String) -> StoreError {
    StoreError(format!("clickhouse: {message}"))
}

impl Client {
    /// Parses `http://host[:port][/path][?params]` (port 8123 by default).
    pub fn new(url: &str) -> Result<Client, StoreError> {
        let rest = url.strip_prefix("http://").ok_or_else(|| {
            error(format!("{url:?} is not a ClickHouse HTTP URL: expected http://host:port (https is not supported; put a TLS proxy on loopback)"))
        })?;
        let (before_query, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (authority, path) = match before_query.find('/') {
            Some(i) => (&before_query[..i], &before_query[i..]),
            None => (before_query, "/"),
        };
        if authority.is_empty() || authority.contains('@') {
            return Err(error(format!("{url:?}: expected http://host:port (give credentials as ?user=...&password=...)")));
        }
        let authority = if authority.rsplit_once(':').is_some_and(|(_, port)| port.parse::<u16>().is_ok()) { authority.to_owned() } else { format!("{authority}:8123") };
        let params = form_urlencoded::parse(query.as_bytes()).into_owned().collect();
        Ok(Client { authority, path: path.to_owned(), params })
    }

    /// POSTs `body` with the URL parameters `params` and returns the answer's body.
    pub fn post(&self, params: &[(&str, &str)], body: &[u8]) -> Result<Vec<u8>, StoreError> {
        let query = form_urlencoded::Serializer::new(String::new()).extend_pairs(&self.params).extend_pairs(params).finish();
        let head = format!(
            "POST {}?{query} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\n\r\n",
            self.path,
            self.authority,
            body.len()
        );
        // One write: a head and body sent apart could wait for a delayed ACK (Nagle).
        let mut request = head.into_bytes();
        request.extend_from_slice(body);
        let mut stream = self.connect()?;
        let io = |e: std::io::Error| error(format!("{}: {e}", self.authority));
        stream.write_all(&request).map_err(io)?;
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).map_err(io)?;
        let (status, body) = parse_response(&raw).map_err(|e| error(format!("{}: {e}", self.authority)))?;
        if status != 200 {
            let text = String::from_utf8_lossy(&body);
            let mut message: String = text.trim().chars().take(MESSAGE_MAX).collect();
            if message.is_empty() {
                message = "(no message)".into();
            }
            return Err(error(format!("HTTP {status}: {message}")));
        }
        Ok(body)
    }

    fn connect(&self) -> Result<TcpStream, StoreError> {
        let addrs = self.authority.to_socket_addrs().map_err(|e| error(format!("cannot resolve {}: {e}", self.authority)))?;
        let mut last = None;
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
                Ok(stream) => {
                    let timeouts = stream.set_read_timeout(Some(IO_TIMEOUT)).and(stream.set_write_timeout(Some(IO_TIMEOUT)));
                    timeouts.map_err(|e| error(format!("{}: {e}", self.authority)))?;
                    return Ok(stream);
                }
                Err(e) => last = Some(e),
            }
        }
        Err(error(match last {
            Some(e) => format!("cannot connect to {}: {e}", self.authority),
            None => format!("{} resolves to no address", self.authority),
        }))
    }
}

/// The status and the body (de-chunked) of a whole HTTP/1.1 response.
fn parse_response(raw: &[u8]) -> Result<(u16, Vec<u8>), String> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n").ok_or("the answer has no complete HTTP header")?;
    let head = std::str::from_utf8(&raw[..end]).map_err(|_| "the HTTP header is not UTF-8")?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line.split(' ').nth(1).and_then(|s| s.parse().ok()).ok_or_else(|| format!("bad status line {status_line:?}"))?;
    let mut chunked = false;
    let mut length = None;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else { continue };
        let (name, value) = (name.trim(), value.trim());
        if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.eq_ignore_ascii_case("chunked");
        } else if name.eq_ignore_ascii_case("content-length") {
            length = Some(value.parse::<usize>().map_err(|_| format!("bad Content-Length {value:?}"))?);
        }
    }
    let body = &raw[end + 4..];
    if chunked {
        return dechunk(body).map(|b| (status, b));
    }
    match length {
        Some(n) if n > body.len() => Err(format!("the answer ended after {} of {n} bytes", body.len())),
        Some(n) => Ok((status, body[..n].to_vec())),
        None => Ok((status, body.to_vec())),
    }
}

fn dechunk(mut data: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let line_end = data.windows(2).position(|w| w == b"\r\n").ok_or("a chunked answer ended early")?;
        let size_text = std::str::from_utf8(&data[..line_end]).map_err(|_| "bad chunk size")?;
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or_default().trim(), 16).map_err(|_| format!("bad chunk size {size_text:?}"))?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        if data.len() < size + 2 {
            return Err("a chunked answer ended early".into());
        }
        out.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let c = Client::new("http://127.0.0.1:8123").unwrap();
        assert_eq!((c.authority.as_str(), c.path.as_str()), ("127.0.0.1:8123", "/"));
        assert!(c.params.is_empty());
        let c = Client::new("http://ch.internal/proxy/?user=u&password=p%26q").unwrap();
        assert_eq!((c.authority.as_str(), c.path.as_str()), ("ch.internal:8123", "/proxy/"));
        assert_eq!(c.params, [("user".to_owned(), "u".to_owned()), ("password".to_owned(), "p&q".to_owned())]);
        assert_eq!(Client::new("http://[::1]:9000").unwrap().authority, "[::1]:9000");
        for bad in ["https://ch:8443", "ch:8123", "http://", "http://u:p@ch:8123"] {
            assert!(Client::new(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn responses_by_length_by_chunks_and_until_close() {
        assert_eq!(parse_response(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcdef").unwrap(), (200, b"abc".to_vec()));
        let chunked = b"HTTP/1.1 500 Internal Server Error\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nCod\r\n2;x=1\r\ne:\r\n0\r\n\r\n";
        assert_eq!(parse_response(chunked).unwrap(), (500, b"Code:".to_vec()));
        assert_eq!(parse_response(b"HTTP/1.0 200 OK\r\n\r\nOk.\n").unwrap(), (200, b"Ok.\n".to_vec()));
        assert!(parse_response(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc").is_err());
        assert!(parse_response(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab").is_err());
        assert!(parse_response(b"garbage").is_err());
    }
}
