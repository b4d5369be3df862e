// Session and page identity. The session id lives in sessionStorage (one tab's visit, across reloads),
// so sampling and A/B analysis see one decision per session; the page id is new per page view and
// after a back/forward-cache restore, which counts as a new visit.

const KEY = 'llm-ux-meter:session';

/**
 * The tab's session id: `given`, else the stored one, else a new one from `randomId()` (stored when
 * storage allows).
 */
export function sessionIdFor(given, randomId) {
  if (given) return String(given);
  const id = randomId();
  try {
    const stored = sessionStorage.getItem(KEY);
    if (stored) return stored;
    sessionStorage.setItem(KEY, id);
  } catch {
    // No storage (a sandboxed frame, storage blocked): a session of one page.
  }
  return id;
}
