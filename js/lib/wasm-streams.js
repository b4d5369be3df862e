// The wasm core travels with its code in streams (scripts/embed-wasm.mjs splits it at build time): the
// opcodes in one, each kind of immediate (local indexes, constants, memory offsets, ...) in its own.
// Brotli finds more in a stream of alike numbers than in the interleaved code: about 1 KB less over the
// module (docs/size.md). `joinStreams` puts the module back, byte for byte, before it is compiled: a few
// ms once a page, on the main thread.

/** The streams, in their order in the split module: function sizes, local declarations, opcodes (with
 * alignments, call targets, globals and the rarer immediates), block types, branch labels (`br_if`'s
 * apart), local indexes (`local.set`'s apart), i32 and i64 constants, float bytes, memory offsets
 * (of more than one byte: the last, flagged, in `m`, the others in `M`). */
export const STREAMS = 'scoblrvwijfmM';

/** `immediates` of opcodes 0 to 0x44, by opcode (the others have none). */
const BY_OPCODE = (
  ',,b,b,b,,,,,,,,' + // 0x00-0x0B: block, loop and if take a block type
  'l,r,*l,,o,oo,' + // 0x0C-0x11: br, br_if, br_table; call, call_indirect (type and table)
  ',,,,,,,,,,,,,,' + // 0x12-0x1F: none the core uses takes any
  'v,w,v,o,o,o,o,,' + // 0x20-0x27: local.get, set, tee; global.get, set; table.get, set
  'om,om,om,om,om,om,om,om,om,om,om,om,om,om,om,om,om,om,om,om,om,om,om,' + // 0x28-0x3E: loads, stores: alignment, offset
  'o,o,i,j,ffff,ffffffff' // 0x3F-0x44: memory.size, grow (memory 0); i32, i64, f32 and f64 constants
).split(',');

/**
 * The immediates after opcode `op`, a letter of `STREAMS` each: an LEB128 number in that stream, or for
 * `f` one byte; `*` before a letter is a count, then that many numbers and one more (`br_table`'s
 * labels). Both directions read the code with this one function, so the module comes back byte for
 * byte whatever it says of an opcode (scripts/embed-wasm.mjs checks the round trip): it only decides
 * what goes where, and opcodes the core does not use are left out. 0xFC's sub-opcode is one number;
 * the memory indexes after `memory.copy` and `memory.fill` then read as opcodes (0, no immediates).
 */
export const immediates = (op) => (op == 252 ? 'o' : BY_OPCODE[op] ?? '');

/**
 * Walks the code of a module: `take(stream, raw)` moves one item of `stream` (a byte if `raw`, else an
 * LEB128 number) from wherever the caller reads to wherever it writes, and returns its value. The
 * caller has moved everything up to the code section's function count, `count`; `end()` is how far
 * into the module the walk has come. O(code size).
 */
export function walkCode(count, take, end) {
  while (count--) {
    const last = take('s') + end();
    for (let n = take('c'); n--; take('c')) take('c');
    while (end() < last) {
      const spec = immediates(take('o', 1));
      for (let i = 0; i < spec.length; i++) {
        if (spec[i] == '*') for (let n = take(spec[++i]); n--; ) take(spec[i]);
        take(spec[i], spec[i] == 'f');
      }
    }
  }
}

/**
 * `wasm` with its code in streams, as `joinStreams` reads it (for scripts/embed-wasm.mjs; bundles leave it
 * out). Throws when the result would not join back to `wasm` exactly. O(n).
 */
export function splitStreams(wasm) {
  let q = 8;
  const number = () => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = wasm[q++];
      if (byte === undefined) throw new Error('the module ends inside a number');
      value += (byte & 127) * 2 ** shift;
      if (byte < 128) return value;
    }
  };
  const leb = (value) => {
    const out = [];
    do out.push((value & 127) | (value > 127 ? 128 : 0));
    while ((value >>>= 7));
    return out;
  };
  let code = null;
  while (q < wasm.length && !code) {
    const id = wasm[q++];
    const length = number();
    if (id === 10) code = { end: q + length, count: number() };
    else q += length;
  }
  if (!code) throw new Error('no code section');
  const before = q;
  const streams = Object.fromEntries([...STREAMS].map((stream) => [stream, []]));
  walkCode(code.count, (stream, raw) => {
    const from = q;
    const value = raw ? wasm[q++] : number();
    const bytes = [...wasm.subarray(from, q)];
    // A memory offset of more than one byte: its last byte, flagged, in `m`; the others in `M`, the
    // last of them unflagged, so that `M` reads as LEB128 numbers. Offsets of one byte, most of them,
    // are alike small numbers; the high bytes of the others (into the static data) are alike too.
    if (stream == 'm' && bytes.length > 1) {
      streams.m.push(bytes.pop() | 128);
      bytes.push(bytes.pop() & 127);
      stream = 'M';
    }
    streams[stream].push(...bytes);
    return value;
  }, () => q);
  if (q !== code.end) throw new Error(`the code section ends at ${code.end}, its functions at ${q}`);
  const header = [...[...STREAMS].map((stream) => streams[stream].length), code.count, before].flatMap(leb);
  const split = Uint8Array.from([...header, ...wasm.subarray(0, before), ...[...STREAMS].flatMap((stream) => streams[stream]), ...wasm.subarray(q)]);
  const joined = joinStreams(split);
  if (joined.length !== wasm.length || joined.some((byte, i) => byte !== wasm[i])) throw new Error('the split module does not join back to the module');
  return split;
}

/** The module back from its split form `bytes`: a header of LEB128 numbers (each stream's length, the
 * functions' count, the length of the module up to them), then the module up to them, the streams,
 * and the rest of the module. O(n). */
export function joinStreams(bytes) {
  const out = new Uint8Array(bytes.length);
  const at = { h: 0 };
  let o = 0;
  /** Copies the next LEB128 number (or byte, if `raw`) of `stream` to the module; returns its value. */
  const take = (stream, raw) => {
    // A flagged memory offset: its first bytes from `M`, then its last from `m` (its value is not used).
    if (stream == 'm' && bytes[at.m] > 127) return take('M'), (out[o - 1] |= 128), (out[o++] = bytes[at.m++] & 127);
    let value = 0;
    let shift = 0;
    let byte;
    do value |= ((byte = out[o++] = bytes[at[stream]++]) & 127) << shift, (shift += 7);
    while (!raw && byte > 127);
    return raw ? byte : value;
  };
  // The header is read as a stream `h` would be, then written over: it goes on into the module's start.
  const lengths = [...STREAMS].map(() => take('h'));
  const count = take('h');
  let before = take('h');
  o = 0;
  while (before--) take('h', 1);
  [...STREAMS].forEach((stream, i) => {
    at[stream] = at.h;
    at.h += lengths[i];
  });
  walkCode(count, take, () => o);
  out.set(bytes.subarray(at.h), o);
  return out.subarray(0, o + bytes.length - at.h);
}
