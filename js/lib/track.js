// One metered stream over a wasm handle. The public side is the manual API (`response`, `chunk`,
// `rendered`, `end`, `abort`); hooks also drive paints from frames or the DOM, hidden periods, and
// endings the app did not cause (network errors, leaving the page).

import * as core from './core.js';
import { buildReport, formatCode } from './report.js';
import { onNextPaint } from './next-paint.js';
import { pageHidden, pageLeaving, watchLeaving } from './page-state.js';
import { randomId } from './random-id.js';
import { DATA_STREAM_HEADER, UI_STREAM_HEADER } from './stream-headers.js';

const ENDING = { complete: 0, aborted: 1, failed: 2, left: 3 };
const SOURCE = { dom: 0, explicit: 1, frame: 2 };

// Big chunks go to wasm in slices: the buffer they cross (core.js) then never grows past a slice.
const SLICE = 64 * 1024;
const encoder = new TextEncoder();
const decoder = new TextDecoder();
// The Performance object, looked up once: reading the global `performance` calls into the browser
// every time (in Chromium about as long as `now()` itself), and a stream reads the clock per chunk.
const clock = globalThis.performance;
const now = () => clock.now();

/**
 * Opens a stream. `meter`: { health, active, dimensions(), changed(), report(report) }. `render`: where paint
 * times come from: 'explicit' (only `rendered()` calls), 'frame' (the frame after each chunk) or 'dom'
 * (paints the DOM observer attributes). Returns the hooks' handle, whose `stream` is the app's manual
 * API; `null` when the meter is off.
 */
export function openStream(meter, options = {}, render = 'explicit') {
  const { health, active } = meter;
  const start = options.start ?? now();
  const handle = health.guard(() => core.wasm.open(formatCode(options.format), start), -1);
  if (handle < 0) return null;
  const meta = {
    id: options.id ?? randomId(),
    startedAt: options.startedAt ?? Math.round(performance.timeOrigin + start),
    model: options.model,
    url: options.url,
    dimensions: { ...meter.dimensions(), ...options.dimensions },
  };
  let report = null;
  let ended = false;
  let paintPending = false;
  let lastActivity = start;
  const releaseLeaving = watchLeaving();

  // Once per chunk: a function of its own, not a closure per call, and no slice object when the
  // chunk fits in one (most do).
  const feed = (data, at) => {
    const bytes = toBytes(data);
    if (bytes.length <= SLICE) return core.chunk(handle, bytes, at);
    for (let offset = 0; offset < bytes.length; offset += SLICE) core.chunk(handle, bytes.subarray(offset, offset + SLICE), at);
  };
  const paint = (at, source) => health.guard(() => core.wasm.rendered(handle, at, source));
  // Paints at the next frame (coalesced), from `source`.
  const paintNextFrame = (source) => {
    if (paintPending || ended) return;
    paintPending = onNextPaint((at) => {
      paintPending = false;
      if (!ended && render !== 'explicit') paint(at, source);
    });
  };

  const finish = (ending, at = now()) => {
    if (ended) return report;
    ended = true;
    releaseLeaving();
    // A body cut off because the page is leaving is incomplete, not a network error.
    if (ending === 'failed' && pageLeaving) ending = 'left';
    active.delete(control);
    meter.changed();
    const numbers = health.guard(() => core.close(handle, at, ENDING[ending]), null);
    if (!numbers) return null;
    const texts = [0, 1].map((which) => health.guard(() => decoder.decode(core.text(which)), ''));
    report = buildReport(numbers, texts, meta);
    meter.report(report);
    return report;
  };

  const stream = {
    /** The response headers arrived: TTFB, the HTTP status and format hints. */
    response(response = {}, at = now()) {
      health.guard(() => {
        const headers = response.headers ?? {};
        const get = (name) => (typeof headers.get === 'function' ? headers.get(name) : headers[name]);
        const contentType = response.contentType ?? get('content-type') ?? '';
        const flags = (get(UI_STREAM_HEADER) != null ? 1 : 0) | (get(DATA_STREAM_HEADER) != null ? 2 : 0);
        core.response(handle, response.status ?? 200, encoder.encode(contentType), flags, at);
      });
    },
    /** The app received a chunk of the body (bytes or text). */
    chunk(data, at = now()) {
      if (ended) return;
      lastActivity = at;
      health.guard(feed, undefined, data, at);
      if (render === 'frame') paintNextFrame(SOURCE.frame);
    },
    /** The app painted the text received so far. Switches a hooked stream to explicit signals. */
    rendered(at = now()) {
      render = 'explicit';
      if (!ended) paint(at, SOURCE.explicit);
    },
    /** The stream ended; returns the report (also given to `onReport`). */
    end(at) {
      return finish('complete', at);
    },
    /** The stream was cancelled; `ok` all the same when its end had already arrived. */
    abort(at) {
      return finish('aborted', at);
    },
  };

  const control = {
    stream,
    get render() {
      return render;
    },
    get lastActivity() {
      return lastActivity;
    },
    /** The DOM observer saw this stream's text change. */
    domChanged() {
      if (render === 'dom') paintNextFrame(SOURCE.dom);
    },
    hidden() {
      health.guard(() => core.wasm.hidden(handle));
    },
    /** Ends with `ending`, after the paint of the last chunk when paints come from frames or the DOM. */
    finishAfterPaint(ending) {
      if (ended) return;
      const at = now();
      if (render === 'explicit' || pageHidden() || !onNextPaint(() => finish(ending, at))) finish(ending, at);
    },
    finish,
  };
  active.add(control);
  meter.changed();
  if (pageHidden()) control.hidden();
  return control;
}

function toBytes(data) {
  if (typeof data === 'string') return encoder.encode(data);
  if (data instanceof Uint8Array) return data;
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return new Uint8Array(data);
}
