//! Framing: cutting a byte stream into events (SSE) or lines (NDJSON, AI SDK data stream), whatever the
//! chunk boundaries. Every framer holds at most `cap` bytes of an unfinished event; larger ones are
//! dropped and counted, never buffered without bound.

use alloc::vec::Vec;
pub mod lines;
pub mod sse;

/// Default cap on one event or line: 1 MiB.
pub const DEFAULT_CAP: usize = 1 << 20;

/// A byte buffer that refuses to grow past its cap and remembers that it overflowed.
#[derive(Clone, Debug)]
pub(crate) struct CappedBuf {
    bytes: Vec<u8>,
    cap: usize,
    overflowed: bool,
}

impl CappedBuf {
    pub(crate) fn new(cap: usize) -> Self {
        CappedBuf { bytes: Vec::new(), cap, overflowed: false }
    }

    /// Appends `more`, or marks the buffer overflowed (and frees it) when that would pass the cap.
    pub(crate) fn extend(&mut self, more: &[u8]) {
        if self.overflowed {
            return;
        }
        if self.bytes.len() + more.len() > self.cap {
            self.mark_overflowed();
        } else {
            self.bytes.extend_from_slice(more);
        }
    }

    /// Drops the contents and marks the buffer overflowed, as if the cap had been passed.
    pub(crate) fn mark_overflowed(&mut self) {
        self.overflowed = true;
        self.bytes = Vec::new();
    }

    pub(crate) fn as_slice(&self) -> &[u8] {
        &self.bytes
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.bytes.is_empty() && !self.overflowed
    }

    pub(crate) fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// Empties the buffer, keeping its allocation unless it grew large.
    pub(crate) fn clear(&mut self) {
        if self.bytes.capacity() > 64 * 1024 {
            self.bytes = Vec::new();
        }
        self.bytes.clear();
        self.overflowed = false;
    }
}
