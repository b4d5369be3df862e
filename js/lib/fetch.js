// The fetch hook: a wrapper that calls the real fetch exactly as the app did, and meters the response
// when it is an LLM stream (or `match` selects it). Any failure inside the meter returns the original
// response; rejections reach the app unchanged.

import { createMatcher, describeRequest, isStreamResponse, requestedModel } from './request.js';
import { observeResponse } from './metered-response.js';
import { globalHook } from './global-hook.js';

/**
 * Most streams metered at once. A body the app never reads to its end never ends; past this many,
 * the one idle longest is ended as aborted (and counted), so such bodies cost bounded memory.
 * (Not a FinalizationRegistry: browsers may collect a stream's wrapper while its reader is in use.)
 */
const MAX_ACTIVE = 64;

export function createFetchHook(meter, { match }) {
  const { health, active } = meter;
  const matches = createMatcher(match);
  const streams = new WeakMap();
  const open = (request, url) =>
    meter.open({ start: request.start, url: url || request.url, model: requestedModel(request), dimensions: meter.dimensionsOf(request) });

  function meterResponse(request, response) {
    health.guard(() => {
      const selected = matches ? matches(request) : isStreamResponse(response);
      // Opaque responses ('opaque', 'opaqueredirect') have no readable body.
      if (!selected || !response.body || /^opaque/.test(response.type)) return;
      if (active.size >= MAX_ACTIVE) {
        [...active].reduce((a, b) => (b.lastActivity < a.lastActivity ? b : a)).finish('aborted');
        meter.evicted++;
      }
      const control = open(request, response.url);
      if (!control) return;
      control.stream.response(response);
      observeResponse(response, control, health);
      streams.set(response, control.stream);
    });
    return response;
  }

  function failed(request, error) {
    health.guard(() => matches?.(request) && open(request)?.finish(error?.name === 'AbortError' ? 'aborted' : 'failed'));
    throw error;
  }

  /** `fetchImpl` metered; itself when the meter is disabled. */
  function wrapFetch(fetchImpl) {
    if (!health.enabled) return fetchImpl;
    if (typeof fetchImpl !== 'function') throw new TypeError('llm-ux-meter: wrapFetch needs a fetch function');
    return function fetch(input, init) {
      const request = health.guard(() => ({ ...describeRequest(input, init), start: performance.now() }), null);
      const pending = Reflect.apply(fetchImpl, this, arguments);
      return request ? pending.then((response) => meterResponse(request, response), (error) => failed(request, error)) : pending;
    };
  }

  const install = globalHook('fetch', wrapFetch);
  return {
    wrapFetch,
    installFetch() {
      const restore = install();
      if (!restore) console.warn('llm-ux-meter: globalThis.fetch cannot be replaced here; use meter.wrapFetch(fetch) where the app passes fetch.');
      return restore;
    },
    streamOf: (response) => streams.get(response) ?? null,
  };
}
