// Size budget of what a page downloads: the wasm module and the bundled JS (API and wasm-bindgen glue),
// brotli-compressed (quality 11, as CDNs serve static files). Budget 40 KB now; the goal is 20 KB.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { brotliCompressSync, gzipSync, constants } from 'node:zlib';

const BUDGET_BROTLI = 40 * 1024;
const FILES = ['wasm/llm_ux_meter_bg.wasm', 'index.js'];

test(`the browser package is at most ${BUDGET_BROTLI / 1024} KB brotli`, () => {
  let total = { raw: 0, gzip: 0, brotli: 0 };
  for (const file of FILES) {
    const bytes = readFileSync(new URL(`../../dist/${file}`, import.meta.url));
    const sizes = {
      raw: bytes.length,
      gzip: gzipSync(bytes, { level: 9 }).length,
      brotli: brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
    };
    console.log(`size: ${file}: ${sizes.raw} B raw, ${sizes.gzip} B gzip, ${sizes.brotli} B brotli`);
    total = { raw: total.raw + sizes.raw, gzip: total.gzip + sizes.gzip, brotli: total.brotli + sizes.brotli };
  }
  console.log(`size: total ${total.raw} B raw, ${total.gzip} B gzip, ${total.brotli} B brotli (budget ${BUDGET_BROTLI} B)`);
  assert.ok(total.brotli <= BUDGET_BROTLI, `${total.brotli} B brotli is over the ${BUDGET_BROTLI} B budget`);
});
