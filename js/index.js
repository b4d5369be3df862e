// The package's one entry (browsers, bundled or not, and Node) and its public API, createMeter. Importing it
// has no side effects. Streams are metered by hooks (fetch, EventSource) or by hand (`track`);
// everything the meter does runs under its health guard, so nothing it does ever throws into the app.

import { createHealth } from './lib/health.js';
import { openStream } from './lib/track.js';
import { createFetchHook } from './lib/fetch.js';
import { eventSourceHook } from './lib/event-source.js';
import { onPageState } from './lib/page-state.js';
import { warmUp } from './lib/warm-up.js';
import { loadCore, wasm } from './lib/core.js';
import { loadBeacons } from './lib/load-beacons.js';

let loaded;

/** The meter's API (docs/api-reference.md). The core loads once, on the first call; if it cannot, the meter is disabled. */
export async function createMeter(options = {}) {
  loaded ??= loadCore().then(() => {
    warmUp();
    return true;
  }, (error) => {
    console.warn(`llm-ux-meter: disabled, WebAssembly could not load (${error}); a Content Security Policy needs 'wasm-unsafe-eval' in script-src.`);
    return false;
  });
  const { onReport, dimensionsFor, container } = options;
  const [coreLoaded, createBeacons, domRender] = await Promise.all([
    loaded,
    options.endpoint ? loadBeacons(options) : null,
    // A module of its own (dist/lib/), as beacon delivery is: a page without a container does not download it.
    container == null
      ? null
      : import('./lib/dom-render.js').catch((error) => {
          console.warn(`llm-ux-meter: DOM paint times disabled, their module could not load (${error}); deploy all of the package's dist/.`);
        }),
  ]);
  const health = createHealth(coreLoaded);
  // Beacons use the page's fetch from before any hook, so they are never metered themselves.
  const beacons = createBeacons && health.enabled ? createBeacons({ ...options, fetchImpl: options.fetch ?? globalThis.fetch?.bind(globalThis) }, health) : null;
  const active = new Set();
  let dimensions = { ...options.dimensions };
  const updateDomRender = domRender?.createDomRender(container, () => [...active].filter((control) => control.render === 'dom'));

  const meter = {
    health,
    active,
    evicted: 0,
    dimensions: () => dimensions,
    dimensionsOf: ({ url, method, body }) => dimensionsFor && health.guard(() => dimensionsFor({ url, method, body })),
    /** Opens a hooked stream: paints come from the DOM when there is a container, else from frames. */
    open(trackOptions) {
      return openStream(meter, trackOptions, updateDomRender ? 'dom' : 'frame');
    },
    changed() {
      updateDomRender?.();
    },
    report(report) {
      health.guard(() => beacons?.add(report));
      if (!onReport) return;
      try {
        onReport(report);
      } catch (error) {
        health.errors++;
        console.error('llm-ux-meter: onReport threw', error);
      }
    },
  };

  // Streams first: a stream cut off by leaving the page is reported before the queue goes out.
  const sendNow = () => health.guard(() => beacons?.exit());
  const unsubscribe = onPageState({
    hidden: () => {
      active.forEach((control) => control.hidden());
      sendNow();
    },
    left: () => {
      active.forEach((control) => control.finish('left'));
      sendNow();
    },
    frozen: sendNow,
    restored: () => beacons?.newPage(),
    online: () => beacons?.wake(),
  });
  const fetchHook = createFetchHook(meter, options);
  const installEventSource = eventSourceHook(meter);
  const restorers = [];
  /** Installs a hook while the meter is enabled; returns its restore function, which `destroy` calls too. */
  const install = (hook) => {
    const restore = (health.enabled && hook()) || (() => {});
    restorers.push(restore);
    return restore;
  };

  return {
    /** False when WebAssembly could not load (CSP) or after a trap inside the meter. */
    get enabled() {
      return health.enabled;
    },
    /** Errors caught inside the meter since it was created. */
    get errors() {
      return health.errors;
    },
    /** Bytes of WebAssembly memory the meter holds (it grows with concurrent streams, not their length). */
    get wasmMemoryBytes() {
      return coreLoaded ? wasm.memory.buffer.byteLength : 0;
    },
    /** Streams ended early because 64 were open (bodies never read to the end), the idlest first. */
    get evicted() {
      return meter.evicted;
    },
    /** Meters a stream by hand (custom transports, replays). */
    track(trackOptions) {
      return openStream(meter, trackOptions, 'explicit')?.stream ?? disabledStream();
    },
    /** A metered version of `fetchImpl`, for SDKs that take a fetch when their client is built. */
    wrapFetch: fetchHook.wrapFetch,
    /** Meters every later `fetch` of the page; returns the function that restores the original. */
    installFetch: () => install(fetchHook.installFetch),
    /** Meters every later `EventSource`; returns the function that restores the original. */
    installEventSource: () => install(installEventSource),
    /** Sends every queued record now; resolves when none is left to send. */
    async flush() {
      await beacons?.flush();
    },
    /** Delivery counters: records sent, dropped by reason, queued; the session and its sampling. */
    get delivery() {
      return beacons?.stats() ?? null;
    },
    /** Flushes, removes the hooks and stops listening to the page. */
    async destroy() {
      restorers.splice(0).forEach((restore) => restore());
      unsubscribe();
      await this.flush();
    },
    /** Merges `more` into the dimensions of streams started from now on. */
    setDimensions(more) {
      dimensions = { ...dimensions, ...more };
    },
    /** The metered stream behind a response the hook returned (for `rendered()` signals), or null. */
    streamOf: fetchHook.streamOf,
  };
}

function disabledStream() {
  const nothing = () => null;
  return { response: nothing, chunk: nothing, rendered: nothing, end: nothing, abort: nothing };
}
