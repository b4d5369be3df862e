//! A small HTTP/1.1 client for ClickHouse's HTTP interface, over a std `TcpStream`.
//!
//! One request per connection (`Connection: close`): there is no pool to keep healthy and no stale
//! connection to retry. On loopback a connection costs tens of microseconds; across a network, one
//! round trip more per query. Plain `http://` only (no TLS). The URL's own query string is sent with
//! every request, so credentials or settings can ride along:
//! `http://ch.internal:8123/?user=collector&password=...`.
//!
//! The answer's body is read as it arrives ([`Client::post_streaming`]), so an answer of any size
//! costs a buffer of memory; [`Client::post`] collects it for small answers.
//!
//! Failure modes: connecting takes at most [`CONNECT_TIMEOUT`], and each read or write waits at most
//! [`IO_TIMEOUT`]; a status other than 200 is an error carrying ClickHouse's message (its exception
//! text), cut to [`MESSAGE_MAX`] characters; a body cut short (by its length or its chunks) is an
//! error when read, never a shorter answer.

use crate::store::StoreError;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
pub const IO_TIMEOUT: Duration = Duration::from_secs(60);
const MESSAGE_MAX: usize = 1000;
/// The longest response header, and the longest chunk-size or trailer line, accepted.
const HEAD_MAX: u64 = 64 * 1024;

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
        self.post_streaming(params, body, |answer| {
            let mut out = Vec::new();
            answer.read_to_end(&mut out).map_err(|e| error(format!("{}: {e}", self.authority)))?;
            Ok(out)
        })
    }

    /// POSTs `body` with the URL parameters `params` and hands the answer's body to `read` as it
    /// arrives (a status other than 200 is an error before `read` runs). Memory O(a buffer).
    pub fn post_streaming<T>(&self, params: &[(&str, &str)], body: &[u8], read: impl FnOnce(&mut dyn BufRead) -> Result<T, StoreError>) -> Result<T, StoreError> {
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
        stream.write_all(&request).map_err(|e| error(format!("{}: {e}", self.authority)))?;
        let (status, mut answer) = response(BufReader::new(stream)).map_err(|e| error(format!("{}: {e}", self.authority)))?;
        if status != 200 {
            let mut text = Vec::new();
            // The message as far as it can be read: the status alone already says it failed.
            let _ = (&mut answer).take(4 * MESSAGE_MAX as u64).read_to_end(&mut text);
            let text = String::from_utf8_lossy(&text);
            let mut message: String = text.trim().chars().take(MESSAGE_MAX).collect();
            if message.is_empty() {
                message = "(no message)".into();
            }
            return Err(error(format!("HTTP {status}: {message}")));
        }
        read(&mut answer)
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

/// Reads an HTTP/1.1 response's status line and header; returns the status and the body, read
/// as it arrives (de-chunked).
fn response<R: BufRead>(mut input: R) -> Result<(u16, Body<R>), String> {
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let before = head.len();
        (&mut input).take(HEAD_MAX).read_until(b'\n', &mut head).map_err(|e| e.to_string())?;
        if head.len() == before {
            return Err("the answer has no complete HTTP header".into());
        }
        if head.len() as u64 > HEAD_MAX {
            return Err("the answer's HTTP header is too long".into());
        }
    }
    let head = std::str::from_utf8(&head[..head.len() - 4]).map_err(|_| "the HTTP header is not UTF-8")?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line.split(' ').nth(1).and_then(|s| s.parse().ok()).ok_or_else(|| format!("bad status line {status_line:?}"))?;
    let (mut chunked, mut length) = (false, None);
    for line in lines {
        let Some((name, value)) = line.split_once(':') else { continue };
        let (name, value) = (name.trim(), value.trim());
        if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.eq_ignore_ascii_case("chunked");
        } else if name.eq_ignore_ascii_case("content-length") {
            length = Some(value.parse::<u64>().map_err(|_| format!("bad Content-Length {value:?}"))?);
        }
    }
    let body = match (chunked, length) {
        (true, _) => Body { input, framing: Framing::Chunked { started: false }, left: 0 },
        (false, Some(length)) => Body { input, framing: Framing::Length, left: length },
        (false, None) => Body { input, framing: Framing::UntilClose, left: 0 },
    };
    Ok((status, body))
}

/// How a body ends.
enum Framing {
    /// After `Content-Length` bytes.
    Length,
    /// After its last chunk (`started`: a chunk was read, so a chunk's CRLF comes before the next size).
    Chunked { started: bool },
    /// When the connection closes.
    UntilClose,
    /// Read to its end.
    Done,
}

/// A response body being read: `left` bytes remain of the length, or of the current chunk.
struct Body<R> {
    input: R,
    framing: Framing,
    left: u64,
}

fn cut_short() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "the answer ended early")
}

fn bad_chunk(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what)
}

impl<R: BufRead> Body<R> {
    /// One line of at most [`HEAD_MAX`] bytes, without its CRLF.
    fn line(&mut self) -> io::Result<String> {
        let mut line = Vec::new();
        (&mut self.input).take(HEAD_MAX).read_until(b'\n', &mut line)?;
        if !line.ends_with(b"\r\n") {
            return Err(cut_short());
        }
        line.truncate(line.len() - 2);
        String::from_utf8(line).map_err(|_| bad_chunk("a chunk line is not UTF-8".into()))
    }

    /// Reads the next chunk's size (after the CRLF ending the previous chunk); at the last chunk,
    /// its trailer too, and the body is done.
    fn next_chunk(&mut self) -> io::Result<()> {
        if matches!(self.framing, Framing::Chunked { started: true }) && !self.line()?.is_empty() {
            return Err(bad_chunk("a chunk is longer than its size".into()));
        }
        let line = self.line()?;
        let size = u64::from_str_radix(line.split(';').next().unwrap_or_default().trim(), 16).map_err(|_| bad_chunk(format!("bad chunk size {line:?}")))?;
        if size == 0 {
            while !self.line()?.is_empty() {}
            self.framing = Framing::Done;
        } else {
            self.framing = Framing::Chunked { started: true };
            self.left = size;
        }
        Ok(())
    }
}

impl<R: BufRead> BufRead for Body<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if let Framing::Chunked { .. } = self.framing {
            if self.left == 0 {
                self.next_chunk()?;
            }
        }
        match self.framing {
            Framing::Done => Ok(&[]),
            Framing::Length if self.left == 0 => Ok(&[]),
            Framing::UntilClose => self.input.fill_buf(),
            Framing::Length | Framing::Chunked { .. } => {
                let left = self.left;
                let buf = self.input.fill_buf()?;
                if buf.is_empty() {
                    return Err(cut_short());
                }
                Ok(&buf[..buf.len().min(usize::try_from(left).unwrap_or(usize::MAX))])
            }
        }
    }

    fn consume(&mut self, n: usize) {
        self.input.consume(n);
        if !matches!(self.framing, Framing::UntilClose) {
            self.left -= n as u64;
        }
    }
}

impl<R: BufRead> Read for Body<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
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

    /// The status and the whole body of `raw`, read as [`Client::post_streaming`] reads it.
    fn whole(raw: &[u8]) -> Result<(u16, Vec<u8>), String> {
        let (status, mut body) = response(raw)?;
        let mut out = Vec::new();
        body.read_to_end(&mut out).map_err(|e| e.to_string())?;
        Ok((status, out))
    }

    #[test]
    fn responses_by_length_by_chunks_and_until_close() {
        assert_eq!(whole(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcdef").unwrap(), (200, b"abc".to_vec()));
        let chunked = b"HTTP/1.1 500 Internal Server Error\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nCod\r\n2;x=1\r\ne:\r\n0\r\n\r\n";
        assert_eq!(whole(chunked).unwrap(), (500, b"Code:".to_vec()));
        assert_eq!(whole(b"HTTP/1.0 200 OK\r\n\r\nOk.\n").unwrap(), (200, b"Ok.\n".to_vec()));
        assert!(whole(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc").is_err());
        assert!(whole(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab").is_err());
        assert!(whole(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n").is_err(), "a chunk longer than its size");
        assert!(whole(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n").is_err(), "no last chunk");
        assert!(whole(b"garbage").is_err());
        assert!(whole(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n").is_err(), "no end of header");
    }

    #[test]
    fn a_body_is_read_as_it_arrives() {
        // A reader that hands out 3 bytes at a time, as a slow connection would.
        struct Trickle<'a>(&'a [u8]);
        impl Read for Trickle<'_> {
            fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
                let n = self.0.len().min(out.len()).min(3);
                out[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        let payload: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
        for chunk in payload.chunks(777) {
            raw.extend(format!("{:x}\r\n", chunk.len()).as_bytes());
            raw.extend(chunk);
            raw.extend(b"\r\n");
        }
        raw.extend(b"0\r\nX-Trailer: 1\r\n\r\n");
        let (status, mut body) = response(BufReader::with_capacity(16, Trickle(&raw))).unwrap();
        let mut out = Vec::new();
        body.read_to_end(&mut out).unwrap();
        assert_eq!((status, out), (200, payload));
    }
}
