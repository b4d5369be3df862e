// Sending a payload. Normal flushes use fetch and tell whether a failure is worth retrying (network
// errors, 408, 429, 5xx), and how long to wait. On page exit there is no time to wait: sendBeacon, else a keepalive fetch,
// each only for a payload under the browser's 64 KiB in-flight quota; what neither takes is returned.

import { retryAfterMs } from './retry-after.js';

/** Bodies stay this far under the 64 KiB keepalive quota (which other scripts share). */
export const EXIT_PAYLOAD_BYTES = 60 * 1024;

/**
 * Bodies go as 'text/plain' (no CORS preflight; sendBeacon can send it), or as 'application/json' when
 * `json` (OTLP collectors want it). `fetchImpl` is the page's fetch from before any hook.
 */
export function createTransport(endpoint, { json, fetchImpl }) {
  const contentType = json ? 'application/json' : 'text/plain;charset=UTF-8';
  const post = (body, keepalive) => fetchImpl(endpoint, { method: 'POST', body, headers: { 'content-type': contentType }, keepalive, credentials: 'omit' });
  return {
    /**
     * Resolves to true when the endpoint took `body`, false when it refused it for good, else the least
     * milliseconds to wait before a retry (0 unless the endpoint said). Never rejects.
     */
    async send(body) {
      try {
        const response = await post(body, false);
        const status = response.status;
        if (response.ok || !(status === 408 || status === 429 || status >= 500)) return response.ok;
        return retryAfterMs(response.headers.get('retry-after'));
      } catch {
        return 0;
      }
    },
    /** Hands `body` to the browser to send after the page is gone; false when it would not take it. */
    sendOnExit(body) {
      try {
        if (!json && globalThis.navigator?.sendBeacon?.(endpoint, new Blob([body], { type: contentType }))) return true;
        post(body, true).catch(() => {});
        return true;
      } catch {
        // Over the keepalive quota, or no fetch at all.
        return false;
      }
    },
  };
}
