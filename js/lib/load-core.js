// Loads the wasm core. Its bytes travel inside the package's JavaScript (scripts/embed-wasm.mjs), so the
// package is plain JavaScript to every bundler and runtime: nothing to resolve, copy or serve, no MIME
// type or path to get right, and the same code in browsers and Node.

import init from '../wasm/llm_ux_meter.js';
import embedded from '../wasm/llm_ux_meter_bg.js';

/** Compiles and instantiates the core off the main thread's critical path (async). O(module size). */
export function loadCore() {
  const bytes = new Uint8Array(embedded.length);
  for (let i = 0; i < bytes.length; i++) bytes[i] = embedded.charCodeAt(i);
  return init({ module_or_path: bytes });
}
