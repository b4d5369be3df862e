// What a page downloads, brotli-compressed (quality 11, as CDNs serve static files): dist/index.js (API,
// hooks and the wasm core embedded in it), plus dist/beacons/beacons.js when beacons are configured
// (the common use), dist/beacons/otlp.js for OTLP, dist/beacons/experiment-unit.js with an experimentUnit
// and dist/lib/dom-render.js with a container. One budget for the common use, 21 KB (21,504 B), which
// every open issue's additions share: what only some pages use loads only when used. The budget's
// history and each size step are in docs/size.md and git's log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { brotliCompressSync, gzipSync, constants } from 'node:zlib';

const BUDGET_BROTLI = 21 * 1024;
const dist = (path) => readFileSync(new URL(`../../dist/${path}`, import.meta.url));
const [index, beacons, otlp, experimentUnit, domRender] = ['index.js', 'beacons/beacons.js', 'beacons/otlp.js', 'beacons/experiment-unit.js', 'lib/dom-render.js'].map(dist);
const embeddedWasm = readFileSync(new URL('../../target/npm-stage/dist/llm_ux_meter.wasm', import.meta.url));
const brotli = (bytes) => brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;

test(`the common use (hooks and beacons) is at most ${BUDGET_BROTLI / 1024} KB brotli; onReport alone downloads less`, () => {
  const onReportOnly = brotli(index);
  const withBeacons = onReportOnly + brotli(beacons);
  console.log(`size: dist/index.js: ${index.length} B raw, ${gzipSync(index, { level: 9 }).length} B gzip, ${onReportOnly} B brotli ` +
    `(onReport alone); with dist/beacons/beacons.js: ${withBeacons} B brotli (budget ${BUDGET_BROTLI} B); with OTLP as well: ` +
    `${withBeacons + brotli(otlp)} B; with an experimentUnit: ${withBeacons + brotli(experimentUnit)} B; with a container (DOM paint times): ${withBeacons + brotli(domRender)} B; the wasm in index.js: ${embeddedWasm.length} B raw, ${brotli(embeddedWasm)} B brotli as a file of its own`);
  assert.ok(withBeacons <= BUDGET_BROTLI, `${withBeacons} B brotli is over the ${BUDGET_BROTLI} B budget`);
  // Beacon delivery is not in the module every page loads.
  assert.ok(!index.includes('sendBeacon') && beacons.includes('sendBeacon'), 'beacon delivery is bundled into index.js');
  assert.ok(!index.includes('resourceMetrics') && otlp.includes('resourceMetrics'), 'OTLP encoding is bundled into index.js');
  assert.ok(!index.includes('MutationObserver') && domRender.includes('MutationObserver'), 'DOM paint times are bundled into index.js');
  assert.ok(!index.includes('importKey') && !beacons.includes('importKey') && experimentUnit.includes('importKey'), "the experiment unit's HMAC is bundled into index.js or beacons.js");
});

test('the shipped modules are ASCII, so the embedded wasm reads the same in any page charset', () => {
  for (const [name, bytes] of Object.entries({ index, beacons, otlp, experimentUnit, domRender })) {
    const offending = bytes.findIndex((byte) => byte > 0x7f);
    assert.equal(offending, -1, `${name}: byte ${bytes[offending]} at offset ${offending}`);
  }
});

test('dist/ holds the modules above and their types, nothing else', () => {
  const files = readdirSync(new URL('../../dist/', import.meta.url), { recursive: true }).sort();
  assert.deepEqual(files, ['beacons', 'beacons/beacons.js', 'beacons/experiment-unit.js', 'beacons/otlp.js', 'index.d.ts', 'index.js', 'lib', 'lib/dom-render.js']);
});
