// The experiment unit as beacons carry it (createMeter's `experimentUnit: { id, salt }`, the user an app
// assigns A/B variants to): the first 16 bytes of HMAC-SHA-256 keyed with the app's salt over the id, in
// hex. The id never leaves the page, and without the salt no one can find it again by hashing guesses
// (a plain hash of an e-mail address can be). A module of its own: only pages that give the option load it.

const MAX_ID_LENGTH = 1024;
const MIN_SALT_LENGTH = 16;

/**
 * Resolves to the unit's 32 lowercase hex characters, or to undefined, with one warning saying why, when
 * it cannot be made: the envelopes then go without it. Never rejects.
 */
export async function hashExperimentUnit({ id, salt }) {
  let problem = problemWith(id, salt);
  if (!problem) {
    try {
      return await hmacHex(salt, id);
    } catch (error) {
      problem = `WebCrypto failed (${error})`;
    }
  }
  console.warn(`llm-ux-meter: experimentUnit not sent, ${problem}; the records go without it.`);
}

/** The first 16 bytes of HMAC-SHA-256 keyed with UTF-8 `salt` over UTF-8 `id`, in lowercase hex. */
async function hmacHex(salt, id) {
  const utf8 = (text) => new TextEncoder().encode(text);
  const key = await crypto.subtle.importKey('raw', utf8(salt), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, utf8(id)));
  return [...mac.subarray(0, 16)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** Why `id` and `salt` cannot make the unit, or null. */
function problemWith(id, salt) {
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID_LENGTH) return `its id is not a string of 1 to ${MAX_ID_LENGTH} characters`;
  if (typeof salt !== 'string' || salt.length < MIN_SALT_LENGTH) return `its salt is not a string of at least ${MIN_SALT_LENGTH} characters`;
  // WebCrypto is only there in secure contexts: https:, and http: on localhost.
  if (!globalThis.crypto?.subtle) return 'WebCrypto is not available (a page served over plain http: other than localhost)';
  return null;
}
