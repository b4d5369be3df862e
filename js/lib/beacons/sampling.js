// Deterministic sampling per session: the same session id always gets the same decision, so a
// session's streams are all in or all out and A/B arms keep their shape. FNV-1a over the id, as a
// fraction of 2^32, against the rate.

export function isSampled(sessionId, rate) {
  // A fraction in [0, 1): every session at a rate of 1, none at 0.
  let hash = 0x811c9dc5;
  for (let i = 0; i < sessionId.length; i++) {
    hash ^= sessionId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash / 2 ** 32 < rate;
}
