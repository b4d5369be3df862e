// The meter's health: every call into the meter runs through `guard`, so an exception is counted and
// contained, and a WebAssembly trap (memory left in an unknown state) disables the meter for good.

export function createHealth(enabled) {
  const health = {
    enabled,
    errors: 0,
    /** Runs `fn`, returning `fallback` when the meter is off or `fn` throws. Never throws. */
    guard(fn, fallback) {
      if (!health.enabled) return fallback;
      try {
        return fn();
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
