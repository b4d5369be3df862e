// Runs one small stream through the core when the module loads: browsers compile wasm functions on
// their first call, and that first call must not fall on the app's first streamed chunk.

import * as wasm from '../wasm/llm_ux_meter.js';

const SAMPLE = new TextEncoder().encode(
  'data: {"model":"warm-up","choices":[{"delta":{"content":"Hi \\u00e9"}}]}\n\n' +
    'data: {"choices":[{"delta":{"content":" there"},"finish_reason":"stop"}],"usage":{"completion_tokens":2}}\n\ndata: [DONE]\n\n',
);

export function warmUp() {
  try {
    const handle = wasm.open(0, 0);
    wasm.response(handle, 200, new TextEncoder().encode('text/event-stream'), 0, 1);
    wasm.chunk(handle, SAMPLE.subarray(0, 40), 2);
    wasm.chunk(handle, SAMPLE.subarray(40), 3);
    wasm.rendered(handle, 4, 2);
    wasm.close(handle, 5, 0);
    wasm.text(0);
  } catch {
    // A failure here shows again, and is counted, on the first real stream.
  }
}
