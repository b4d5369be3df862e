// The wasm core's code in streams (js/lib/wasm-streams.js): every module the build makes joins back byte
// for byte, and the layout is what makes the package smaller, so a change that stops it paying fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { brotliCompressSync, constants } from 'node:zlib';
import { joinStreams, splitStreams } from '../../js/lib/wasm-streams.js';

const stage = (path) => readFileSync(new URL(`../../target/npm-stage/${path}`, import.meta.url));
const brotli = (bytes) => brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
// The shipped module, its fault-injection twin, and the module before wasm-opt (other opcodes, names).
const modules = {
  shipped: stage('dist/llm_ux_meter.wasm'),
  'fault injection': stage('dist-fault/llm_ux_meter.wasm'),
  'before wasm-opt': stage('dist/wasm/llm_ux_meter.pre-opt.wasm'),
};

test('every module the build makes joins back from its streams byte for byte', () => {
  for (const [name, wasm] of Object.entries(modules)) {
    const split = splitStreams(wasm);
    assert.deepEqual(joinStreams(split), new Uint8Array(wasm), name);
    assert.ok(WebAssembly.validate(joinStreams(split)), `${name}: not a valid module once joined`);
  }
});

test('in streams the shipped module compresses at least 5% smaller', () => {
  const [whole, split] = [modules.shipped, splitStreams(modules.shipped)].map(brotli);
  console.log(`wasm streams: the shipped module ${whole} B brotli, in streams ${split} B`);
  assert.ok(split < 0.95 * whole, `${split} B in streams against ${whole} B`);
});

test('a module cut short is refused with an error, not split', () => {
  const wasm = modules.shipped;
  assert.throws(() => splitStreams(wasm.subarray(0, wasm.length >> 1)), /module ends inside a number|join back|code section/);
});
