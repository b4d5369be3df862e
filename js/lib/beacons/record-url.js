// The request URL as a record carries it off the page. Parsed as the browser parses it (WHATWG URL), never
// pattern-matched: a raw newline, a backslash or a tab cannot hide a query from the parser. Credentials
// never leave; the query and fragment only when the app keeps them (`stripUrlQuery: false`).

/** Longest URL a record carries (the beacon schema's limit); longer ones are cut there. */
export const MAX_URL_LENGTH = 2048;

/**
 * `url` resolved against the page, without user name, password, query and fragment (unless
 * `keepQuery`), at most MAX_URL_LENGTH characters; for a scheme other than http(s) (data:, blob:),
 * whose URL may hold content, only the scheme; null when it does not parse. O(length of url).
 */
export function recordUrl(url, keepQuery) {
  let parsed;
  try {
    parsed = new URL(url, globalThis.location?.href);
  } catch {
    return null;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return parsed.protocol;
  parsed.username = '';
  parsed.password = '';
  if (!keepQuery) {
    parsed.search = '';
    parsed.hash = '';
  }
  return parsed.href.slice(0, MAX_URL_LENGTH);
}
