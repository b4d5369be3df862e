// What the hooks know about a request: its URL and method, whether `match` selects it, and the model
// it asks for (read from a string JSON body only when the response is metered, and never kept).

import { DATA_STREAM_HEADER, UI_STREAM_HEADER } from './stream-headers.js';

const MAX_MODEL_BODY = 1 << 20;
const MAX_MODEL_LENGTH = 128;

/** `{ url, method, body }` of a fetch call; `body` is the caller's own reference, held until headers. */
export function describeRequest(input, init) {
  const request = input instanceof Request ? input : null;
  // A URL object gives its href.
  return { url: request ? request.url : String(input), method: String(init?.method ?? request?.method ?? 'GET').toUpperCase(), body: init?.body };
}

/** A predicate over requests from the `match` option (URL prefixes, RegExps, functions, or a list). */
export function createMatcher(match) {
  if (match == null) return null;
  const rules = [match].flat();
  return (request) => {
    const absolute = absoluteUrl(request.url);
    return rules.some((rule) => {
      if (typeof rule === 'string') return request.url.startsWith(rule) || absolute.startsWith(rule);
      if (rule instanceof RegExp) {
        rule.lastIndex = 0;
        return rule.test(absolute);
      }
      return typeof rule === 'function' && rule(request) === true;
    });
  };
}

/** Whether a response looks like an LLM stream: SSE, NDJSON or an AI SDK stream. */
export function isStreamResponse(response) {
  const { headers } = response;
  return /^(text\/event-stream|application\/x-ndjson)/i.test(headers.get('content-type')) || headers.has(UI_STREAM_HEADER) || headers.has(DATA_STREAM_HEADER);
}

/** The model a request names: the JSON body's `model`, else Gemini's `models/{model}:` URL segment. */
export function requestedModel({ body, url }) {
  let model;
  if (typeof body === 'string' && body.length <= MAX_MODEL_BODY && body.includes('"model"')) {
    try {
      ({ model } = JSON.parse(body));
    } catch {
      // Not JSON: no model from the body.
    }
  }
  if (typeof model !== 'string') {
    const gemini = /\/models\/([^/:?]+):stream/.exec(url);
    model = gemini && decodeURIComponent(gemini[1]);
  }
  return model?.slice(0, MAX_MODEL_LENGTH);
}

function absoluteUrl(url) {
  try {
    return new URL(url, globalThis.location?.href).href;
  } catch {
    return url;
  }
}
