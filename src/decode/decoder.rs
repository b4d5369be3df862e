//! What decoding a stream keeps from one event to the next.

use super::repeat::LastEvent;
use crate::json::Tape;

/// What decoding a stream keeps from one event to the next: the tape each event's JSON is parsed on,
/// and the last event, when a repeat of it can be told from its bytes (`repeat.rs`). The stream keeps
/// one and lends it to [`super::decode`] for each event: about 1.7 KB, whatever the stream.
#[derive(Clone, Debug, Default)]
pub struct Decoder {
    pub tape: Tape,
    pub(super) last: LastEvent,
}
