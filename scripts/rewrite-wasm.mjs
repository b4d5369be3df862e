// Rewrites the linked wasm module before wasm-opt, for scripts/build.sh. Functions are found by the path
// in their mangled name (legacy or v0); one that no longer matches only costs size, which the size test
// watches.
//
// - Core's and alloc's panic functions trap at once. The slim build's panic handler traps (src/lib.rs)
//   and never reads its message or location, but the functions that lead to it (bounds checks, slice
//   ranges, capacity overflow, ...) still store their arguments for it, and every call site passes
//   them: wasm-opt keeps stores before a trap, since memory outlives it. All of these functions never
//   return (`-> !`), so an `unreachable` body is what they did, without the stores: 275 B brotli.
// - libm's square root, ceiling and rounding use wasm's own instructions. These are exact operations,
//   so the results are the same bits; libm uses the instructions only with an unstable feature, and
//   its portable square root (128-bit multiplications) and the others were 419 B brotli.
// - Constant data only those functions use is zeroed (wasm-opt then drops it): panic messages and
//   their locations, the digit table that formats their numbers, the square root's table; the wasm
//   is 1,323 B raw and 722 B brotli smaller. What is used comes from the relocations the linker keeps
//   with `--emit-relocs`: every address of data in code or data is one, naming its symbol, so a data
//   symbol no relocation from a used function or used data names is never read. The exports are used,
//   and what used things name, except what the rewritten functions name and panic locations, told by
//   their shape (a file name ending in `.rs`, a line, a column). The linking and relocation sections
//   are then dropped.
// - The linker's exports of its layout globals (`__data_end`, `__heap_base`), which nothing reads, go: 35 B.
//
//   node scripts/rewrite-wasm.mjs IN.wasm OUT.wasm    (IN linked with --emit-relocs; OUT keeps IN's names)
import binaryen from 'binaryen';
import { readFileSync, writeFileSync } from 'node:fs';
import { DIVERGING, EXACT } from './wasm-rewrites.mjs';

const rewritten = (name) => DIVERGING.some((pattern) => pattern.test(name)) || Object.keys(EXACT).some((path) => name.includes(path));

/** Relocation types that carry an addend (tool-conventions, Linking.md). */
const WITH_ADDEND = new Set([3, 4, 5, 8, 9, 11, 14, 15, 16, 17, 21, 22, 23, 25]);

/**
 * `wasm` with the bytes of unused data symbols zeroed and its linking and relocation sections dropped,
 * and the names of the functions to rewrite. O(size × symbols) at worst; the module is small.
 */
function collectData(wasm) {
  let pos = 0;
  const u32 = () => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = wasm[pos++];
      value |= (byte & 127) << shift;
      if (byte < 128) return value >>> 0;
    }
  };
  const name = () => {
    const length = u32();
    return wasm.subarray(pos, (pos += length)).toString('utf8');
  };
  const sections = [];
  for (pos = 8; pos < wasm.length; ) {
    const [id, start] = [wasm[pos++], pos - 1];
    const size = u32();
    const content = pos;
    sections.push({ id, start, content, end: content + size, custom: id === 0 ? name() : null, payload: pos });
    pos = content + size;
  }
  const section = (id, custom = null) => sections.find((s) => s.id === id && s.custom === custom);
  const [linking, code, data, exports] = [section(0, 'linking'), section(10), section(11), section(7)];
  if (!linking || !code || !data || !exports || section(2) || section(8)) throw new Error('expected a module linked with --emit-relocs, without imports or a start function');
  pos = code.content;
  const bodies = Array.from({ length: u32() }, () => {
    const size = u32();
    return [pos - code.content, (pos += size) - code.content];
  });
  pos = data.content;
  const segments = Array.from({ length: u32() }, () => {
    const flags = u32();
    if (flags === 2) u32();
    let address = NaN; // a passive segment has none: no address is within it
    if (flags !== 1) {
      // An active segment's address: i32.const N, end.
      if (wasm[pos++] !== 0x41) throw new Error('a data offset other than i32.const');
      address = u32();
      if (wasm[pos++] !== 0x0b) throw new Error('a data offset other than i32.const');
    }
    const size = u32();
    return { at: (pos += size) - size, address, size };
  });
  // The symbol table: functions by index, data by where their bytes are.
  const symbols = [];
  pos = linking.payload;
  if (u32() !== 2) throw new Error('linking section version');
  while (pos < linking.end) {
    const [type, size] = [wasm[pos++], u32()];
    const end = pos + size;
    for (let n = type === 8 ? u32() : 0; n > 0; n--) {
      const symbol = { kind: wasm[pos++], flags: u32() };
      const defined = !(symbol.flags & 0x10);
      if (symbol.kind === 1) {
        symbol.name = name();
        if (defined) {
          const [segment, offset, length] = [u32(), u32(), u32()];
          symbol.start = segments[segment].at + offset;
          symbol.end = symbol.start + length;
        }
      } else {
        symbol.index = u32();
        if (symbol.kind !== 3 && (defined || symbol.flags & 0x40)) symbol.name = name();
      }
      symbols.push(symbol);
    }
    pos = end;
  }
  // What each function and data symbol names.
  const functionNames = new Map(symbols.filter((s) => s.kind === 0).map((s) => [s.index, s.name ?? '']));
  const named = new Map();
  const names = (key, symbol) => named.set(key, [...(named.get(key) ?? []), symbol]);
  const dataAt = (at) => symbols.findIndex((s) => s.kind === 1 && at >= s.start && at < s.end);
  for (const relocations of sections.filter((s) => s.custom?.startsWith('reloc.'))) {
    pos = relocations.payload;
    const target = sections[u32()];
    for (let n = u32(); n > 0; n--) {
      const [type, offset, symbol] = [wasm[pos++], u32(), u32()];
      if (WITH_ADDEND.has(type)) u32();
      if (target === code) {
        const body = bodies.findIndex(([start, end]) => offset >= start && offset < end);
        if (body < 0) throw new Error('a code relocation outside the functions');
        names(`f${body}`, symbol);
      } else if (target === data) {
        const at = dataAt(data.content + offset);
        if (at < 0) throw new Error('a data relocation outside the data symbols');
        names(`d${at}`, symbol);
      } else throw new Error(`relocations of a section other than code and data (${target.custom ?? target.id})`);
    }
  }
  // A panic's location: 16 bytes, the address and length of a source file's name, then a line and a
  // column. Only the panic handler would read one, and it traps without: a location stays unused
  // whoever passes it on (a trapping call, or `Vec::insert` on to its own).
  const word = (at) => wasm.readUInt32LE(at);
  const fileName = (address, length) => {
    const segment = segments.find((s) => address >= s.address && address + length <= s.address + s.size);
    return segment && wasm.subarray(segment.at + address - segment.address, segment.at + address - segment.address + length).toString('latin1');
  };
  const location = ({ start, end }) => end - start === 16 && /^[\w/.-]+\.rs$/.test(fileName(word(start), word(start + 4)) ?? '');
  const used = new Set();
  const use = (key) => {
    if (used.has(key)) return;
    if (key.startsWith('d') && location(symbols[Number(key.slice(1))])) return;
    used.add(key);
    if (key.startsWith('f') && rewritten(functionNames.get(Number(key.slice(1))) ?? '')) return;
    for (const symbol of named.get(key) ?? []) {
      const { kind, index } = symbols[symbol];
      if (kind === 3) throw new Error('a relocation against a section');
      if (kind === 0) use(`f${index}`);
      if (kind === 1) use(`d${symbol}`);
    }
  };
  pos = exports.content;
  for (let n = u32(); n > 0; n--) {
    name();
    const [kind, index] = [wasm[pos++], u32()];
    if (kind === 0) use(`f${index}`);
  }
  // Bytes of a used symbol stay even if an unused one shares them (merged constants).
  const out = Buffer.from(wasm);
  const keep = new Uint8Array(wasm.length);
  symbols.forEach((s, i) => s.kind === 1 && s.end && used.has(`d${i}`) && keep.fill(1, s.start, s.end));
  symbols.forEach((s, i) => {
    if (s.kind === 1 && s.end && !used.has(`d${i}`)) for (let at = s.start; at < s.end; at++) if (!keep[at]) out[at] = 0;
  });
  const kept = sections.filter((s) => s !== linking && !s.custom?.startsWith('reloc.')).map((s) => out.subarray(s.start, s.end));
  return { wasm: Buffer.concat([out.subarray(0, 8), ...kept]), rewrite: new Set([...functionNames.values()].filter(rewritten)) };
}

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  console.error('usage: node scripts/rewrite-wasm.mjs IN.wasm OUT.wasm');
  process.exit(2);
}
const { wasm, rewrite } = collectData(readFileSync(input));
const module = binaryen.readBinary(wasm);
const x = () => module.local.get(0, binaryen.f64);
for (let i = 0; i < module.getNumFunctions(); i++) {
  const func = module.getFunctionByIndex(i);
  const { name, body, params, results } = binaryen.getFunctionInfo(func);
  if (!rewrite.delete(name)) continue;
  const exact = Object.entries(EXACT).find(([path]) => name.includes(path));
  if (exact) {
    if (params !== binaryen.f64 || results !== binaryen.f64) throw new Error(`${name} is not f64 -> f64`);
    binaryen._BinaryenFunctionSetBody(func, exact[1](module, x));
  } else {
    // A check on the names: a function that can reach its end is not one of these.
    if (binaryen.getExpressionType(body) !== binaryen.unreachable) throw new Error(`${name} can return: not trapped`);
    binaryen._BinaryenFunctionSetBody(func, module.unreachable());
  }
}
// The data they used is gone: each must have been rewritten.
if (rewrite.size) throw new Error(`not found by name in the module: ${[...rewrite].join(', ')}`);
// The linker's layout globals, which nothing reads.
for (const name of ['__data_end', '__heap_base']) module.removeExport(name);
binaryen.setDebugInfo(true);
writeFileSync(output, module.emitBinary());
