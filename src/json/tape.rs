//! The tape a document's values are recorded on while it is validated, lent by the caller.

/// How many values and keys a [`Tape`] records: an event has 20 to 60. A document with more is
/// looked up without the tape.
const TAPE: usize = 96;

/// A value or key as recorded while validating: its bytes' range in the document and, for a value,
/// how many entries it spans with its contents (1 for a scalar). A container's entries follow it in
/// document order, keys before their values.
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    pub(super) start: u32,
    pub(super) end: u32,
    pub(super) span: u32,
}

/// Room to record one document's values while it is parsed ([`super::Value::parse`]). Kept by the caller and
/// lent for each document, so parsing neither clears nor moves it; only the entries a parse writes are read.
#[derive(Clone, Debug)]
pub struct Tape {
    pub(super) entries: [Entry; TAPE],
}

impl Default for Tape {
    fn default() -> Self {
        Tape { entries: [Entry { start: 0, end: 0, span: 0 }; TAPE] }
    }
}
