// What scripts/rewrite-wasm.mjs rewrites, found by the path in rustc's mangled names: the build applies
// these and tests/js/wasm-rewrites.test.mjs checks that they still apply (a name no longer matched only
// costs size, silently, so the test fails instead). The names come from the toolchain in
// scripts/rewrite-wasm.toolchain; scripts/build.sh says so when it runs with another.

/** Functions that never return, by the path in their mangled name: their bodies become `unreachable`. */
export const DIVERGING = [
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

/** libm's functions of one f64 that are exact operations, by the path in their mangled name, as wasm instructions. */
export const EXACT = {
  '4libm4math4sqrt4sqrt': (m, x) => m.f64.sqrt(x()),
  '4libm4math4ceil4ceil': (m, x) => m.f64.ceil(x()),
  // libm's round (halves away from zero; wasm's `nearest` breaks ties to even): x + ±(0.5 - 2^-54), truncated.
  '4libm4math5round5round': (m, x) => m.f64.trunc(m.f64.add(x(), m.f64.copysign(m.f64.const(0.5 - 0.25 * Number.EPSILON), x()))),
};
