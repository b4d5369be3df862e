// The collector's analytics API, same origin. Every query carries the window, the filters and the SLO
// the page shows, so all panels always describe the same streams.
import { askForKey, currentKey } from './read-key.js';

/** A non-200 answer: the API's `{ error, field, problem }`, or what we could make of the response. */
export class ApiError extends Error {
  constructor(status, { error, field, problem }) {
    super(`${error}${field ? ` (${field})` : ''}: ${problem}`);
    Object.assign(this, { status, error, field, problem });
  }
}

/**
 * The query string for an endpoint: the window (`from`, `to`), one parameter per filter that is set,
 * the SLO thresholds that are set, then the endpoint's own parameters.
 */
export function queryString({ from, to }, filters, slo, own = {}) {
  const params = new URLSearchParams({ from: String(Math.round(from)), to: String(Math.round(to)) });
  for (const [dimension, value] of Object.entries(filters)) if (value) params.append(dimension, value);
  for (const [key, value] of Object.entries(slo)) if (String(value).trim() !== '') params.set(`slo.${key}`, String(value).trim());
  for (const [key, value] of Object.entries(own)) params.set(key, String(value));
  return params.toString();
}

/**
 * GETs `/api/<endpoint>?<query>` and resolves its JSON; rejects with an ApiError for any other status.
 * The read key, if this tab has one, goes in `Authorization: Bearer`; a 401 asks for it (read-key.js)
 * and tries again with the key given.
 */
export async function get(endpoint, query, signal) {
  for (;;) {
    const key = await currentKey(signal);
    const headers = { accept: 'application/json', ...(key !== null && { authorization: `Bearer ${key}` }) };
    const response = await fetch(`/api/${endpoint}?${query}`, { signal, headers });
    if (response.status === 401) {
      await askForKey(key, signal);
      continue;
    }
    const body = await response.json().catch(() => null);
    if (!response.ok) {
      const known = body && typeof body === 'object' && 'problem' in body;
      throw new ApiError(response.status, known ? body : { error: `HTTP ${response.status}`, field: null, problem: `/api/${endpoint} answered ${response.statusText || 'with an error'}` });
    }
    if (body === null) throw new ApiError(response.status, { error: 'invalid answer', field: null, problem: `/api/${endpoint} did not answer JSON` });
    return body;
  }
}
