// Rewrites a few functions of the linked wasm module before wasm-opt, for scripts/build.sh. Each is
// found by the path in its mangled name (legacy or v0); one that no longer matches only costs size,
// which the size test watches.
//
// - Core's and alloc's panic functions trap at once. The slim build's panic handler traps (src/lib.rs)
//   and never reads its message or location, but the functions that lead to it (bounds checks, slice
//   ranges, capacity overflow, ...) still store their arguments for it, and every call site passes
//   them: wasm-opt keeps stores before a trap, since memory outlives it. All of these functions never
//   return (`-> !`), so an `unreachable` body is what they did, without the stores: 275 B brotli.
// - libm's square root, ceiling and rounding use wasm's own instructions. These are exact operations,
//   so the results are the same bits; libm uses the instructions only with an unstable feature, and
//   its portable square root (128-bit multiplications) and the others were 419 B brotli.
//
//   node scripts/rewrite-wasm.mjs IN.wasm OUT.wasm    (OUT keeps IN's names)
import binaryen from 'binaryen';
import { readFileSync, writeFileSync } from 'node:fs';

const DIVERGING = [
  /4core9panicking/, // every function of core::panicking (panic_fmt, panic_bounds_check, panic_const::*, ...)
  /4core5slice5index\d+\w*_fail/, // slice_index_fail and its kin
  /4core4cell\d+panic_already/, // RefCell's borrow failures
  /4core6option\d+(unwrap|expect)_failed/,
  /4core6result\d+unwrap_failed/,
  /5alloc7raw_vec\d+(handle_error|capacity_overflow)/,
  /5alloc5alloc18handle_alloc_error/,
  /alloc_error_handler/,
  /13assert_failed/, // Vec::insert's and Vec::remove's
];

/** libm's functions of one f64 that are exact operations, as wasm instructions. */
const EXACT = {
  '4libm4math4sqrt4sqrt': (m, x) => m.f64.sqrt(x()),
  '4libm4math4ceil4ceil': (m, x) => m.f64.ceil(x()),
  // libm's round (halves away from zero; wasm's `nearest` breaks ties to even): x + ±(0.5 - 2^-54), truncated.
  '4libm4math5round5round': (m, x) => m.f64.trunc(m.f64.add(x(), m.f64.copysign(m.f64.const(0.5 - 0.25 * Number.EPSILON), x()))),
};

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  console.error('usage: node scripts/rewrite-wasm.mjs IN.wasm OUT.wasm');
  process.exit(2);
}
const module = binaryen.readBinary(readFileSync(input));
const x = () => module.local.get(0, binaryen.f64);
for (let i = 0; i < module.getNumFunctions(); i++) {
  const func = module.getFunctionByIndex(i);
  const { name, body, params, results, module: imported } = binaryen.getFunctionInfo(func);
  if (imported) continue;
  if (DIVERGING.some((pattern) => pattern.test(name))) {
    // A check on the names: a function that can reach its end is not one of these.
    if (binaryen.getExpressionType(body) !== binaryen.unreachable) throw new Error(`${name} can return: not trapped`);
    binaryen._BinaryenFunctionSetBody(func, module.unreachable());
  }
  const exact = Object.entries(EXACT).find(([path]) => name.includes(path));
  if (exact) {
    if (params !== binaryen.f64 || results !== binaryen.f64) throw new Error(`${name} is not f64 -> f64`);
    binaryen._BinaryenFunctionSetBody(func, exact[1](module, x));
  }
}
binaryen.setDebugInfo(true);
writeFileSync(output, module.emitBinary());
