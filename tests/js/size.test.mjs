// What a page downloads: the one bundled module, dist/index.js (API, wasm-bindgen glue and the wasm core
// embedded in it), brotli-compressed (quality 11, as CDNs serve static files). Budget 40 KB now; the goal
// is 20 KB.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { brotliCompressSync, gzipSync, constants } from 'node:zlib';

const BUDGET_BROTLI = 40 * 1024;
const shipped = readFileSync(new URL('../../dist/index.js', import.meta.url));
const embeddedWasm = readFileSync(new URL('../../target/npm-stage/dist/llm_ux_meter.wasm', import.meta.url));
const brotli = (bytes) => brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;

test(`the browser package is at most ${BUDGET_BROTLI / 1024} KB brotli`, () => {
  const size = brotli(shipped);
  console.log(`size: dist/index.js: ${shipped.length} B raw, ${gzipSync(shipped, { level: 9 }).length} B gzip, ${size} B brotli ` +
    `(budget ${BUDGET_BROTLI} B); the wasm in it: ${embeddedWasm.length} B raw, ${brotli(embeddedWasm)} B brotli as a file of its own`);
  assert.ok(size <= BUDGET_BROTLI, `${size} B brotli is over the ${BUDGET_BROTLI} B budget`);
});

test('the shipped module is ASCII, so the embedded wasm reads the same in any page charset', () => {
  const offending = shipped.findIndex((byte) => byte > 0x7f);
  assert.equal(offending, -1, `byte ${shipped[offending]} at offset ${offending}`);
});
