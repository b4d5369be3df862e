// The fetch hook: a wrapper that calls the real fetch exactly as the app did, and meters the response
// when it is an LLM stream (or `match` selects it). Any failure inside the meter returns the original
// response; rejections reach the app unchanged.

import { createMatcher, describeRequest, isStreamResponse, requestedModel } from './request.js';
import { observeResponse } from './metered-response.js';

/**
 * Most streams metered at once. A body the app never reads to its end never ends; past this many,
 * the one idle longest is ended as aborted (and counted), so such bodies cost bounded memory.
 * (Not a FinalizationRegistry: browsers may collect a stream's wrapper while its reader is in use.)
 */
const MAX_ACTIVE = 64;

export function createFetchHook(meter, { match }) {
  const matches = createMatcher(match);
  const streams = new WeakMap();
  let installed = null;

  function meterResponse(request, response) {
    try {
      const selected = matches ? matches(request) : isStreamResponse(response);
      if (!selected || !response.body || response.type === 'opaque' || response.type === 'opaqueredirect') return response;
      if (meter.active.size >= MAX_ACTIVE) {
        const idlest = [...meter.active].reduce((a, b) => (b.lastActivity < a.lastActivity ? b : a));
        idlest.finish('aborted');
        meter.evicted++;
      }
      const control = meter.open({ start: request.start, url: response.url || request.url, model: requestedModel(request), dimensions: meter.dimensionsOf(request) });
      if (!control) return response;
      control.stream.response(response);
      observeResponse(response, control, meter.health);
      streams.set(response, control.stream);
      return response;
    } catch (error) {
      meter.health.fail(error);
      return response;
    }
  }

  function failed(request, error) {
    try {
      if (matches?.(request)) meter.open({ start: request.start, url: request.url, model: requestedModel(request), dimensions: meter.dimensionsOf(request) })?.finish(error?.name === 'AbortError' ? 'aborted' : 'failed');
    } catch (meterError) {
      meter.health.fail(meterError);
    }
    throw error;
  }

  function wrapFetch(fetchImpl) {
    if (typeof fetchImpl !== 'function') throw new TypeError('llm-ux-meter: wrapFetch needs a fetch function');
    return function fetch(input, init) {
      let request = null;
      if (meter.health.enabled) {
        try {
          request = { ...describeRequest(input, init), start: performance.now() };
        } catch (error) {
          meter.health.fail(error);
        }
      }
      const pending = Reflect.apply(fetchImpl, this, arguments);
      if (!request) return pending;
      return pending.then((response) => meterResponse(request, response), (error) => failed(request, error));
    };
  }

  function installFetch() {
    if (installed) return installed;
    const original = globalThis.fetch;
    const metered = wrapFetch(original);
    try {
      globalThis.fetch = metered;
    } catch {
      // A frozen or non-writable fetch: fall through to the check below.
    }
    if (globalThis.fetch !== metered) {
      console.warn('llm-ux-meter: globalThis.fetch cannot be replaced here; use meter.wrapFetch(fetch) where the app passes fetch.');
      return () => {};
    }
    installed = () => {
      // Leave a wrapper someone installed after ours in place.
      if (globalThis.fetch === metered) globalThis.fetch = original;
      installed = null;
    };
    return installed;
  }

  return { wrapFetch, installFetch, streamOf: (response) => streams.get(response) ?? null };
}
