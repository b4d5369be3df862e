// The wasm core's stack comes after its static data (scripts/build.sh), so an overflow would write over that
// data instead of trapping. It cannot happen while the stack use is bounded by the code: no indirect calls,
// no recursion but Framer::push's one replay of the bytes it held while sniffing the format. This test
// finds each function's frame (what its prologue takes off the stack pointer) in the shipped module and
// checks that the deepest call path needs at most a quarter of the stack.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const root = new URL('../../', import.meta.url);
const wat = execFileSync(new URL('node_modules/.bin/wasm-dis', root).pathname, [new URL('target/npm-stage/dist/llm_ux_meter.wasm', root).pathname], {
  encoding: 'utf8',
  maxBuffer: 64 << 20,
});
// The size the build links with (scripts/wasm-layout.env, which scripts/build.sh reads too).
const stackBytes = Number(/^STACK_BYTES=(\d+)$/m.exec(readFileSync(new URL('scripts/wasm-layout.env', root), 'utf8'))?.[1]);

/** Each function's frame and callees, by name (wasm-dis numbers them). */
function functions() {
  const pointer = /\(global \$(\S+) \(mut i32\)/.exec(wat)[1];
  const sp = pointer.replace(/\$/g, '\\$');
  const taken = new RegExp(`\\(i32\\.sub\\s*\\(global\\.get \\$${sp}\\)\\s*\\(i32\\.const (\\d+)\\)|\\(i32\\.add\\s*\\(global\\.get \\$${sp}\\)\\s*\\(i32\\.const -(\\d+)\\)`, 'g');
  const all = new Map();
  for (const body of wat.split('\n (func ').slice(1)) {
    const name = body.slice(0, body.search(/[\s(]/));
    const frame = Math.max(0, ...[...body.matchAll(taken)].map((m) => Number(m[1] ?? m[2])));
    all.set(name, { frame, callees: new Set([...body.matchAll(/\(call (\$\S+?)\)?[\s)]/g)].map((m) => m[1])) });
  }
  return all;
}

test(`the core's deepest call path uses at most a quarter of its ${stackBytes / 1024} KiB stack`, () => {
  assert.ok(stackBytes > 0, 'scripts/wasm-layout.env sets no STACK_BYTES');
  assert.ok(!wat.includes('call_indirect'), 'an indirect call: the stack use is no longer bounded by the code');
  const all = functions();
  const selfCalling = [...all].filter(([name, f]) => f.callees.has(name)).map(([name]) => name);
  // Framer::push, which calls itself once, after sniffing: counted twice below.
  assert.equal(selfCalling.length, 1, `functions that call themselves: ${selfCalling.join(', ')}`);
  const deepest = new Map();
  const depth = (name, path = []) => {
    if (deepest.has(name)) return deepest.get(name);
    assert.ok(!path.includes(name), `recursion: ${[...path, name].join(' -> ')}`);
    const { frame, callees } = all.get(name);
    const below = [...callees].filter((callee) => callee !== name && all.has(callee)).map((callee) => depth(callee, [...path, name]));
    const used = frame * (callees.has(name) ? 2 : 1) + Math.max(0, ...below);
    deepest.set(name, used);
    return used;
  };
  const used = Math.max(...[...all.keys()].map((name) => depth(name)));
  console.log(`wasm stack: the deepest call path takes ${used} B of the ${stackBytes} B stack`);
  assert.ok(used > 0, 'no frame found: the prologue pattern no longer matches');
  assert.ok(used <= stackBytes / 4, `${used} B of stack on the deepest path, over a quarter of ${stackBytes} B`);
});
