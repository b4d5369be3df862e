// Runs one small stream through the core when the module loads: browsers compile wasm functions on
// their first call, and that first call must not fall on the app's first streamed chunk.

import * as core from './core.js';

const encoder = new TextEncoder();
const SAMPLE = encoder.encode(
  'data: {"model":"warm-up","choices":[{"delta":{"content":"Hi \\u00e9"}}]}\n\n' +
    'data: {"choices":[{"delta":{"content":" there"},"finish_reason":"stop"}],"usage":{"completion_tokens":2}}\n\ndata: [DONE]\n\n',
);

export function warmUp() {
  try {
    const handle = core.wasm.open(0, 0);
    core.response(handle, 200, encoder.encode('text/event-stream'), 0, 1);
    core.chunk(handle, SAMPLE.subarray(0, 40), 2);
    core.chunk(handle, SAMPLE.subarray(40), 3);
    core.wasm.rendered(handle, 4, 2);
    core.close(handle, 5, 0);
    core.text(0);
  } catch {
    // A failure here shows again, and is counted, on the first real stream.
  }
}
