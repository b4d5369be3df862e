//! Fuzzes framing, detection and every decoder through a whole stream: the first byte picks the format
//! (or detection) and the chunk size, the rest is the body. Any panic is a bug (in wasm it would trap).
#![no_main]

use libfuzzer_sys::fuzz_target;
use llm_ux_meter::decode::Format;
use llm_ux_meter::metrics::report::RenderSource;
use llm_ux_meter::stream::{Ending, Stream};

fuzz_target!(|data: &[u8]| {
    let Some((&control, body)) = data.split_first() else { return };
    let format = Format::ALL.get(usize::from(control % 16)).copied();
    let chunk = usize::from(control / 16) * 7 + 1;
    let mut stream = Stream::with_cap(format, 0.0, 1024);
    stream.response(200, if control & 1 == 0 { b"text/event-stream" } else { b"" }, control & 2 != 0, control & 4 != 0, 1.0);
    for (i, part) in body.chunks(chunk).enumerate() {
        stream.chunk(part, 2.0 + i as f64);
        if i % 3 == 0 {
            stream.rendered(2.5 + i as f64, RenderSource::Frame);
        }
    }
    let report = stream.end(1e9, Ending::Complete);
    assert!(report.output_events <= body.len() as u64);
});
