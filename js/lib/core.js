// The wasm core (src/web/exports.rs): its bytes travel inside the package's JavaScript
// (scripts/embed-wasm.mjs), so the package is plain JavaScript to every bundler and runtime: nothing to
// resolve, copy or serve, no MIME type or path to get right, and the same code in browsers and Node.
// Its exports take numbers only: calls with numbers go straight to `wasm`; bytes cross through the
// buffer the module lends (the functions below), so a call allocates nothing on either side. All of them
// throw until `loadCore` has resolved.

import embedded from '../wasm/module.js';
import { FIELDS, POINTS } from './report-fields.js';

/** The core's exports (src/web/exports.rs). */
export let wasm;
let heap = new Uint8Array(0);

/** Compiles and instantiates the core off the main thread's critical path (async). O(module size). */
export async function loadCore() {
  // The string's code (scripts/embed-wasm.mjs): each character stands for its index among the printable
  // ones but `"`; below 72 it is the byte, below 92 the byte 28 higher, else it and the next character
  // number the n-th other byte (72 to 99, then 120 to 255).
  // A plain loop, no closure per character: this runs once, cold (interpreted), on the main thread.
  const bytes = new Uint8Array(embedded.length);
  let length = 0;
  for (let i = 0; i < embedded.length; ) {
    let code = embedded.charCodeAt(i++);
    let index = code - 32 - (code > 34);
    if (index >= 92) {
      code = embedded.charCodeAt(i++);
      index = 94 * (index - 92) + code - 32 - (code > 34);
      index += index < 28 ? 72 : 92;
    } else if (index >= 72) index += 28;
    bytes[length++] = index;
  }
  wasm = (await WebAssembly.instantiate(bytes.subarray(0, length))).instance.exports;
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
