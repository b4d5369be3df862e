// The wasm core's ASCII code (js/lib/wasm-text.js): what the build encodes, the page decodes byte for
// byte, for every byte value and for the module the build ships; and the string is printable ASCII.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { wasmBytes, wasmStringLiteral } from '../../js/lib/wasm-text.js';

const roundTrip = (bytes) => {
  const literal = wasmStringLiteral(bytes);
  assert.match(literal, /^"[ -~]*"$/, 'printable ASCII only');
  return wasmBytes(JSON.parse(literal));
};

test('every byte value, alone and in runs, comes back as it went', () => {
  const all = Uint8Array.from({ length: 256 }, (_, i) => i);
  assert.deepEqual(roundTrip(all), all);
  const mixed = Uint8Array.from({ length: 5000 }, (_, i) => (i * 7919 + (i >> 3)) & 255);
  assert.deepEqual(roundTrip(mixed), mixed);
  assert.deepEqual(roundTrip(new Uint8Array(0)), new Uint8Array(0));
});

test('the shipped module comes back as it went, most bytes one character each', () => {
  const module = readFileSync(new URL('../../target/npm-stage/dist/llm_ux_meter.wasm', import.meta.url));
  const literal = wasmStringLiteral(module);
  assert.deepEqual(wasmBytes(JSON.parse(literal)), new Uint8Array(module));
  assert.ok(literal.length < module.length * 1.2, `${literal.length} characters for ${module.length} bytes`);
});
