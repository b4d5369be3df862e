// Page lifecycle: a hidden period voids render times, leaving the page ends the open streams as
// incomplete, and hidden, left and frozen are the moments to send what is queued. A prerendered page
// counts as hidden until it is shown; a page restored from the back/forward cache is a new visit.

const listeners = new Set();
let installed = false;

/** Whether the page is hidden (or prerendering) now; always false outside a browser. */
export function pageHidden() {
  return typeof document !== 'undefined' && (document.visibilityState === 'hidden' || document.prerendering === true);
}

/**
 * Subscribes `{ hidden(), left(), frozen(), restored(), online() }` (any subset) to page events;
 * returns the unsubscribe function.
 */
export function onPageState(listener) {
  if (!installed && typeof addEventListener === 'function' && typeof document !== 'undefined') {
    installed = true;
    const each = (method) => () => listeners.forEach((l) => l[method]?.());
    addEventListener('visibilitychange', () => pageHidden() && each('hidden')(), true);
    // pagehide, not unload: it fires on bfcache entry and tab close alike, and keeps bfcache working.
    addEventListener('pagehide', each('left'), true);
    document.addEventListener('freeze', each('frozen'), true);
    addEventListener('pageshow', (event) => event.persisted && each('restored')(), true);
    addEventListener('online', each('online'));
  }
  listeners.add(listener);
  return () => listeners.delete(listener);
}
