// The wasm core travels inside the package's JavaScript as an ASCII string: scripts/embed-wasm.mjs
// encodes it at build time (`wasmStringLiteral`), js/lib/core.js decodes it at load (`wasmBytes`). The
// string's characters are the 94 printable ones other than `"`, each standing for its index (its code
// minus 32, minus 1 above `"`). Two ranges of bytes that wasm code is full of, 92 in all, take one
// character each (the ranges chosen by measuring brotli): 0 to 71 (control, locals, loads and stores,
// constants, small LEB128 numbers) as indexes 0 to 71, and 100 to 119 (f64 comparisons, i32 arithmetic)
// as 72 to 91. Each other byte takes two, the first 92 or 93: the n-th of them in order (72 to 99, then
// 120 to 255) is 94 * (first - 92) + second. So the bytes survive every bundler, minifier and page
// charset, and brotli still sees the module's own byte patterns: about 300 B of brotli over a `.wasm`
// file of its own (docs/size.md); bytes 0 to 91 as one character cost 120 B more, one character per
// byte with `\xNN` escapes for the rest about 1,600 B, base64 about 6 KB. Only the decoder ships: the
// bundler leaves the encoder out.

/** The JavaScript string literal (with its quotes) of `bytes` in the code above. Build time; O(n). */
export function wasmStringLiteral(bytes) {
  const index = (byte) => (byte < 72 ? byte : byte < 100 ? byte + 20 : byte < 120 ? byte - 28 : byte);
  const char = (i) => (i === 59 ? '\\\\' : String.fromCharCode(i + 32 + (i > 1))); // 59: `\`
  let out = '"';
  for (const byte of bytes) {
    const i = index(byte);
    out += i < 92 ? char(i) : char(92 + Math.floor((i - 92) / 94)) + char((i - 92) % 94);
  }
  return `${out}"`;
}

/** The bytes of a string in the code above. Runs once a page, cold (interpreted), on the main thread:
 * a plain loop, no closure per character. O(n). */
export function wasmBytes(text) {
  const bytes = new Uint8Array(text.length);
  let length = 0;
  for (let i = 0; i < text.length; ) {
    let code = text.charCodeAt(i++);
    let index = code - 32 - (code > 34);
    if (index >= 92) {
      code = text.charCodeAt(i++);
      index = 94 * (index - 92) + code - 32 - (code > 34);
      index += index < 28 ? 72 : 92;
    } else if (index >= 72) index += 28;
    bytes[length++] = index;
  }
  return bytes.subarray(0, length);
}
