// Page lifecycle for metered streams: a hidden period voids render times, leaving the page ends the
// streams as incomplete, and a prerendered page counts as hidden until it is shown.

const listeners = new Set();
let installed = false;

/** Whether the page is hidden (or prerendering) now; always false outside a browser. */
export function pageHidden() {
  return typeof document !== 'undefined' && (document.visibilityState === 'hidden' || document.prerendering === true);
}

/** Subscribes `{ hidden(), left() }` to page events; returns the unsubscribe function. */
export function onPageState(listener) {
  if (!installed && typeof addEventListener === 'function') {
    installed = true;
    const each = (method) => () => listeners.forEach((l) => l[method]());
    addEventListener('visibilitychange', () => pageHidden() && each('hidden')(), true);
    // pagehide, not unload: it fires on bfcache entry and tab close alike, and keeps bfcache working.
    addEventListener('pagehide', each('left'), true);
  }
  listeners.add(listener);
  return () => listeners.delete(listener);
}
