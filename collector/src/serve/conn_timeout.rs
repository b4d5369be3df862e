//! A connection's own timeouts (the body's is ingest's, `--body-timeout`):
//!
//! - **header**: once the first byte of a request has arrived, its header must be complete within
//!   `header` (a client trickling a header, "slowloris", is cut off);
//! - **idle**: while no request is being handled, a connection on which no byte has moved either way
//!   for `idle` is closed: one opened and left silent, one kept alive after its answer, and one whose
//!   client stopped reading the answer.
//!
//! A request being handled (from its complete header until its answer is ready) is never timed out
//! here: its body has ingest's timeout and a query its own bounds. hyper's own `header_read_timeout`
//! is not used: its clock starts when the connection is ready for a request, so it would count the
//! idle time between keep-alive requests as header time and make the two one timeout.
//!
//! [`Tracked`] wraps the socket to see bytes move; [`Activity::begin`] marks a request being
//! handled; [`Activity::expired`] resolves when a timeout has passed.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;

/// `head_started` when no request header is arriving.
const NO_HEAD: u64 = u64::MAX;

/// What a connection's timeouts watch. Times are milliseconds since the connection opened.
pub struct Activity {
    opened: Instant,
    handling: AtomicUsize,
    last_io: AtomicU64,
    head_started: AtomicU64,
    /// Wakes the watcher when a deadline comes nearer: a header starts, or a handler ends.
    woken: Notify,
}

/// A request being handled; dropped when its answer is ready.
pub struct Handling(Arc<Activity>);

impl Activity {
    pub fn new() -> Arc<Activity> {
        Arc::new(Activity { opened: Instant::now(), handling: AtomicUsize::new(0), last_io: AtomicU64::new(0), head_started: AtomicU64::new(NO_HEAD), woken: Notify::new() })
    }

    fn now(&self) -> u64 {
        u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// A request's header is complete and its handler starts.
    pub fn begin(self: &Arc<Self>) -> Handling {
        self.handling.fetch_add(1, Ordering::SeqCst);
        self.head_started.store(NO_HEAD, Ordering::SeqCst);
        Handling(self.clone())
    }

    fn moved(&self, read: bool) {
        let now = self.now();
        self.last_io.store(now, Ordering::SeqCst);
        if read && self.handling.load(Ordering::SeqCst) == 0 && self.head_started.compare_exchange(NO_HEAD, now, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
            self.woken.notify_one();
        }
    }

    /// Resolves once the header or the idle timeout has passed (see the module docs); never while a
    /// request is being handled.
    pub async fn expired(&self, header: Duration, idle: Duration) {
        let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        loop {
            if self.handling.load(Ordering::SeqCst) > 0 {
                self.woken.notified().await;
                continue;
            }
            let idle_at = self.last_io.load(Ordering::SeqCst).saturating_add(ms(idle));
            let header_at = match self.head_started.load(Ordering::SeqCst) {
                NO_HEAD => u64::MAX,
                started => started.saturating_add(ms(header)),
            };
            let now = self.now();
            let at = idle_at.min(header_at);
            if now >= at {
                return;
            }
            // Either way the deadlines are read again.
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(at - now)) => {}
                () = self.woken.notified() => {}
            }
        }
    }
}

impl Drop for Handling {
    fn drop(&mut self) {
        self.0.last_io.store(self.0.now(), Ordering::SeqCst);
        self.0.handling.fetch_sub(1, Ordering::SeqCst);
        // Stores a wake-up if the watcher is not waiting yet: it cannot miss the end.
        self.0.woken.notify_one();
    }
}

/// A socket that reports to its [`Activity`] each time bytes move.
pub struct Tracked<IO> {
    io: IO,
    activity: Arc<Activity>,
}

impl<IO> Tracked<IO> {
    pub fn new(io: IO, activity: Arc<Activity>) -> Tracked<IO> {
        Tracked { io, activity }
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for Tracked<IO> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.io).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.moved(true);
        }
        poll
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Tracked<IO> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.io).poll_write(cx, buf);
        if matches!(poll, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.moved(false);
        }
        poll
    }

    fn poll_write_vectored(mut self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[io::IoSlice<'_>]) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        if matches!(poll, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.moved(false);
        }
        poll
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    const HEADER: Duration = Duration::from_millis(300);
    const IDLE: Duration = Duration::from_millis(150);

    /// How long `expired` takes to resolve from now, in ms.
    async fn expires_after(activity: &Arc<Activity>, header: Duration, idle: Duration) -> u128 {
        let t0 = Instant::now();
        tokio::time::timeout(Duration::from_secs(5), activity.expired(header, idle)).await.expect("expires");
        t0.elapsed().as_millis()
    }

    #[tokio::test]
    async fn a_silent_connection_expires_after_the_idle_timeout() {
        let activity = Activity::new();
        let waited = expires_after(&activity, HEADER, IDLE).await;
        assert!((140..600).contains(&waited), "{waited} ms");
    }

    #[tokio::test]
    async fn a_trickling_header_expires_after_the_header_timeout_though_bytes_keep_coming() {
        let (client, server) = tokio::io::duplex(64);
        let activity = Activity::new();
        let mut server = Tracked::new(server, activity.clone());
        let mut client = client;
        let trickle = tokio::spawn(async move {
            for _ in 0..40 {
                if client.write_all(b"x").await.is_err() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        });
        let read = tokio::spawn(async move {
            let mut byte = [0u8; 1];
            while server.read(&mut byte).await.is_ok_and(|n| n > 0) {}
        });
        // The idle timeout is further off than the header's: the first byte brings the deadline nearer.
        let waited = expires_after(&activity, HEADER, Duration::from_secs(3)).await;
        assert!((280..900).contains(&waited), "the header timeout, not the idle one: {waited} ms");
        trickle.abort();
        read.abort();
    }

    #[tokio::test]
    async fn never_while_a_request_is_handled_and_idle_counts_from_its_end() {
        let activity = Activity::new();
        let handling = activity.begin();
        let watcher = tokio::spawn({
            let activity = activity.clone();
            async move { activity.expired(HEADER, IDLE).await }
        });
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert!(!watcher.is_finished(), "a handled request is never timed out");
        let ended = Instant::now();
        drop(handling);
        watcher.await.unwrap();
        let waited = ended.elapsed().as_millis();
        assert!((140..600).contains(&waited), "idle from the answer: {waited} ms");
    }
}
