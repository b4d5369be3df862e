// Installing a hook by replacing a global (fetch, EventSource): installed once, however often asked, and
// restored on request unless something replaced the hook since (a wrapper installed after ours stays).

/**
 * The installer of `wrap(original)` as `globalThis[name]`: it returns the function that restores the
 * original, or null when there is no such global function or it cannot be replaced (frozen).
 */
export function globalHook(name, wrap) {
  let restore = null;
  return () => {
    const original = globalThis[name];
    if (restore || typeof original !== 'function') return restore;
    const hooked = wrap(original);
    try {
      globalThis[name] = hooked;
    } catch {
      // Frozen or not writable: checked below.
    }
    if (globalThis[name] !== hooked) return null;
    return (restore = () => {
      if (globalThis[name] === hooked) globalThis[name] = original;
      restore = null;
    });
  };
}
