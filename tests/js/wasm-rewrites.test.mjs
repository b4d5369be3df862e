// scripts/rewrite-wasm.mjs finds what it rewrites by rustc's mangled names (scripts/wasm-rewrites.mjs).
// A name another toolchain mangles differently is not found, and the module only grows, silently: this
// test fails instead. It checks the build's own modules: the rewritten one before wasm-opt (names kept)
// and the shipped one, against the linked one the rewrites started from.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import binaryen from 'binaryen';
import { DIVERGING, EXACT } from '../../scripts/wasm-rewrites.mjs';

const root = new URL('../../', import.meta.url);
const read = (path) => readFileSync(new URL(path, root));
const linked = read('target/wasm32-unknown-unknown/wasm/llm_ux_meter.wasm');
const rewritten = binaryen.readBinary(read('target/npm-stage/dist/wasm/llm_ux_meter.pre-opt.wasm'));
const shipped = read('target/npm-stage/dist/llm_ux_meter.wasm');

const functions = () => Array.from({ length: rewritten.getNumFunctions() }, (_, i) => binaryen.getFunctionInfo(rewritten.getFunctionByIndex(i)));

test('the panic paths trap at once: every function the patterns name is `unreachable`', () => {
  const trapped = functions().filter((f) => DIVERGING.some((pattern) => pattern.test(f.name)));
  const kinds = DIVERGING.filter((pattern) => trapped.some((f) => pattern.test(f.name)));
  for (const f of trapped) assert.equal(binaryen.getExpressionId(f.body), binaryen.UnreachableId, `${f.name} still has its body`);
  // Fewer found only costs size; what they kept alive (panic messages and locations) is checked below.
  assert.ok(trapped.length > 0, `no function of the ${DIVERGING.length} patterns found: the names no longer match`);
  console.log(`wasm rewrites: ${trapped.length} panic functions trapped, of ${kinds.length} of the ${DIVERGING.length} patterns`);
});

test('libm\'s exact functions are wasm instructions', () => {
  for (const path of Object.keys(EXACT)) {
    const found = functions().filter((f) => f.name.includes(path));
    assert.ok(found.length > 0, `${path}: no function of that name (the build would keep libm's own)`);
    for (const f of found) assert.notEqual(binaryen.getExpressionId(f.body), binaryen.BlockId, `${f.name} is not one expression`);
  }
});

test('the data only panics used is gone from the shipped module', () => {
  for (const text of ['.rs', 'index out of bounds', 'capacity overflow', 'library/']) {
    assert.ok(linked.includes(text), `the linked module has no ${JSON.stringify(text)}: the check would be vacuous`);
    assert.ok(!shipped.includes(text), `the shipped module still holds ${JSON.stringify(text)}`);
  }
});
