// The meter's health: every call into the meter runs through `guard`, so an exception is counted and
// contained, and a WebAssembly trap (memory left in an unknown state) disables the meter for good.

export function createHealth(enabled) {
  const health = {
    enabled,
    errors: 0,
    /**
     * Runs `fn(a, b)`, returning `fallback` when the meter is off or `fn` throws. Never throws. The
     * arguments spare hot paths a closure per call.
     */
    guard(fn, fallback, a, b) {
      if (!health.enabled) return fallback;
      try {
        return fn(a, b);
      } catch (error) {
        health.fail(error);
        return fallback;
      }
    },
    fail(error) {
      health.errors++;
      if (error instanceof WebAssembly.RuntimeError) health.enabled = false;
    },
  };
  return health;
}
