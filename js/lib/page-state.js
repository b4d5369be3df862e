// Page lifecycle: a hidden period voids render times, leaving the page ends the open streams as
// incomplete, and hidden, left and frozen are the moments to send what is queued. A prerendered page
// counts as hidden until it is shown; a page restored from the back/forward cache is a new visit.

const listeners = new Set();
let installed = false;
let watchers = 0;
const onBeforeUnload = () => {
  pageLeaving = true;
};

/** Whether the page is hidden (or prerendering) now; always false outside a browser. */
export function pageHidden() {
  return typeof document !== 'undefined' && (document.visibilityState === 'hidden' || document.prerendering === true);
}

/**
 * Whether the page has begun to leave (`beforeunload` fired, while a stream was open). Firefox and WebKit
 * fail a page's fetch bodies then, before `pagehide`; Chromium fires `pagehide` first.
 */
export let pageLeaving = false;

/**
 * Watches for the page beginning to leave while a stream is open; returns the release function, to call
 * once (a stream's end). Only then: a `beforeunload` listener keeps a page out of Firefox's back/forward
 * cache (a page with a fetch in flight is kept out anyway).
 */
export function watchLeaving() {
  if (typeof addEventListener !== 'function') return () => {};
  if (watchers++ === 0) addEventListener('beforeunload', onBeforeUnload, true);
  return () => {
    if (--watchers === 0) removeEventListener('beforeunload', onBeforeUnload, true);
  };
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
    addEventListener('pageshow', (event) => {
      pageLeaving = false;
      if (event.persisted) each('restored')();
    }, true);
    addEventListener('online', each('online'));
  }
  listeners.add(listener);
  return () => listeners.delete(listener);
}
