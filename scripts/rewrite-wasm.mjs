// Makes each of core's and alloc's panic functions in a wasm module trap at once, for scripts/build.sh.
// The slim build's panic handler traps (src/lib.rs) and never reads its message or location, but the
// functions that lead to it (bounds checks, RefCell borrows, capacity overflow, ...) still store their
// arguments for it, and every call site passes them: wasm-opt keeps stores before a trap, since memory
// outlives it. All of these functions never return (`-> !`), so an `unreachable` body is what they did,
// without the stores: 275 B brotli less in dist/index.js. The names are the v0-mangled paths of
// Rust 1.95's core and alloc; one that no longer matches only costs size, which the size test watches.
//
//   node scripts/trap-panics.mjs IN.wasm OUT.wasm    (OUT keeps IN's names)
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

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  console.error('usage: node scripts/trap-panics.mjs IN.wasm OUT.wasm');
  process.exit(2);
}
const module = binaryen.readBinary(readFileSync(input));
for (let i = 0; i < module.getNumFunctions(); i++) {
  const func = module.getFunctionByIndex(i);
  const { name, body, module: imported } = binaryen.getFunctionInfo(func);
  if (imported || !DIVERGING.some((pattern) => pattern.test(name))) continue;
  // A check on the names: a function that can reach its end is not one of these.
  if (binaryen.getExpressionInfo(body).type !== binaryen.unreachable) throw new Error(`${name} can return: not trapped`);
  binaryen._BinaryenFunctionSetBody(func, module.unreachable());
}
binaryen.setDebugInfo(true);
writeFileSync(output, module.emitBinary());
