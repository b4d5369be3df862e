// Deterministic sampling per session: the same session id always gets the same decision, so a
// session's streams are all in or all out and A/B arms keep their shape. FNV-1a over the id, as a
// fraction of 2^32, against the rate.

export function isSampled(sessionId, rate) {
  // The hash as a fraction is in [0, 1): every session is below a rate of 1 or more, none below 0 or NaN.
  let hash = 0x811c9dc5;
  for (let i = 0; i < sessionId.length; i++) {
    hash ^= sessionId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash / 2 ** 32 < rate;
}
