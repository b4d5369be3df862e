// The wasm core (src/web/exports.rs): its bytes travel inside the package's JavaScript
// (js/lib/wasm-text.js), so the package is plain JavaScript to every bundler and runtime: nothing to
// resolve, copy or serve, no MIME type or path to get right, and the same code in browsers and Node.
// Its exports take numbers only: calls with numbers go straight to `wasm`; bytes cross through the
// buffer the module lends (the functions below), so a call allocates nothing on either side. All of them
// throw until `loadCore` has resolved.

import embedded from '../wasm/module.js';
import { FIELDS, POINTS } from './report-fields.js';
import { wasmBytes } from './wasm-text.js';

/** The core's exports (src/web/exports.rs). */
export let wasm;
let heap = new Uint8Array(0);

/** Compiles and instantiates the core off the main thread's critical path (async). O(module size). */
export async function loadCore() {
  wasm = (await WebAssembly.instantiate(wasmBytes(embedded))).instance.exports;
}

/** A view of the core's memory. Growing the memory detaches the old view, whose length then reads 0: a
 * test of the length, where comparing buffers would call the `memory.buffer` getter into the engine
 * each chunk (about 45 ns in V8). */
const memory = () => (heap.length ? heap : (heap = new Uint8Array(wasm.memory.buffer)));

/** Copies `bytes` into the core's buffer; returns their length. O(length). */
function put(bytes) {
  const at = wasm.buffer(bytes.length);
  memory().set(bytes, at);
  return bytes.length;
}

export const response = (handle, status, contentType, flags, at) => wasm.response(handle, status, put(contentType), flags, at);
export const chunk = (handle, bytes, at) => wasm.chunk(handle, put(bytes), at);

/** The report's numbers (report-fields.js), or null for an unknown handle. */
export function close(handle, at, ending) {
  const address = wasm.close(handle, at, ending);
  return address ? new Float64Array(wasm.memory.buffer, address, FIELDS.length + 2 * POINTS).slice() : null;
}

/** A text of the last closed report, UTF-8 bytes: 0 the model, 1 the finish reason. */
export function text(which) {
  const length = wasm.text(which);
  const at = wasm.buffer(0);
  return memory().slice(at, at + length);
}
