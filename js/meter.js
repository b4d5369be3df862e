// The public API over the WebAssembly core. Every call into wasm is guarded: an exception or a trap
// inside the meter disables it and is counted; nothing the meter does ever throws into the app.

import * as wasm from './wasm/llm_ux_meter.js';

const FORMATS = ['openai', 'openai-responses', 'anthropic', 'gemini', 'ollama', 'ai-sdk-ui', 'ai-sdk-data', 'tgi', 'text'];
const STATUSES = ['ok', 'aborted', 'http_error', 'error', 'incomplete'];
const RENDER_SOURCES = ['dom', 'explicit', 'frame'];
const TOKEN_SOURCES = ['usage', 'estimate'];
const ENDING = { complete: 0, aborted: 1, failed: 2, left: 3 };
const UI_STREAM_HEADER = 'x-vercel-ai-ui-message-stream';
const DATA_STREAM_HEADER = 'x-vercel-ai-data-stream';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const now = () => performance.now();

/**
 * Builds `createMeter` around a function that loads and instantiates the wasm module once
 * (the browser and Node entries differ only in how they fetch the bytes).
 */
export function makeCreateMeter(load) {
  let loaded;
  return async function createMeter(options = {}) {
    loaded ??= load().then(() => true, (error) => {
      console.warn(`llm-ux-meter: disabled, WebAssembly could not load (${error}). If the page has a Content Security Policy, add 'wasm-unsafe-eval' to script-src.`);
      return false;
    });
    return meter(options, await loaded);
  };
}

function meter(options, enabled) {
  const { onReport, dimensions = {} } = options;
  const health = { enabled, errors: 0 };
  const guard = (fn, fallback) => {
    if (!health.enabled) return fallback;
    try {
      return fn();
    } catch (error) {
      health.errors++;
      // A trap leaves the module's memory in an unknown state: stop using it for good.
      if (error instanceof WebAssembly.RuntimeError) health.enabled = false;
      return fallback;
    }
  };

  return {
    /** Whether the meter is working (false after a trap, or when WebAssembly is not allowed). */
    get enabled() {
      return health.enabled;
    },
    /** Errors caught inside the meter since it was created. */
    get errors() {
      return health.errors;
    },
    track(trackOptions = {}) {
      return track(trackOptions, { onReport, dimensions, guard, health });
    },
  };
}

function track(options, { onReport, dimensions, guard, health }) {
  const start = options.start ?? now();
  const startedAt = options.startedAt ?? Math.round(performance.timeOrigin + start);
  const id = options.id ?? randomId();
  const handle = guard(() => wasm.open(formatCode(options.format), start), -1);
  let report = null;

  const finish = (ending, at) => {
    if (report || handle < 0) return report;
    const numbers = guard(() => wasm.close(handle, at, ending), null);
    if (!numbers || numbers.length === 0) return null;
    const text = (which) => guard(() => decoder.decode(wasm.text(which)), '');
    report = buildReport(numbers, text, { id, startedAt, model: options.model, dimensions: { ...dimensions, ...options.dimensions } });
    if (onReport) {
      try {
        onReport(report);
      } catch (error) {
        health.errors++;
        console.error('llm-ux-meter: onReport threw', error);
      }
    }
    return report;
  };

  return {
    /** The response headers arrived: gives TTFB, the HTTP status and format hints. */
    response(response = {}, at = now()) {
      guard(() => {
        const headers = response.headers ?? {};
        const header = (name) => (typeof headers.get === 'function' ? headers.get(name) : headers[name]) != null;
        const contentType = response.contentType ?? (typeof headers.get === 'function' ? headers.get('content-type') : headers['content-type']) ?? '';
        const flags = (header(UI_STREAM_HEADER) ? 1 : 0) | (header(DATA_STREAM_HEADER) ? 2 : 0);
        wasm.response(handle, response.status ?? 200, encoder.encode(contentType), flags, at);
      });
    },
    /** The app received a chunk of the body (bytes or text). */
    chunk(data, at = now()) {
      guard(() => wasm.chunk(handle, toBytes(data), at));
    },
    /** The app painted the text received so far. */
    rendered(at = now()) {
      guard(() => wasm.rendered(handle, at, 1));
    },
    /** The stream ended; returns the report (also given to `onReport`). */
    end(at = now()) {
      return finish(ENDING.complete, at);
    },
    /** The stream was cancelled; a stream whose end had already arrived still reports `ok`. */
    abort(at = now()) {
      return finish(ENDING.aborted, at);
    },
  };
}

function buildReport(n, text, { id, startedAt, model, dimensions }) {
  const num = (i) => (Number.isNaN(n[i]) ? null : n[i]);
  const quantiles = (i) => (Number.isNaN(n[i]) ? null : { p50: n[i], p90: n[i + 1], p99: n[i + 2], max: n[i + 3] });
  return {
    id,
    startedAt,
    model: text(0) || model || null,
    scenario: dimensions.scenario ?? null,
    variant: dimensions.variant ?? null,
    format: FORMATS[n[0]] ?? null,
    status: STATUSES[n[1]],
    httpStatus: num(2),
    renderSource: RENDER_SOURCES[n[3]] ?? null,
    ttfbMs: num(4),
    ttftMs: num(5),
    ttftArrivalMs: num(6),
    ttfoMs: num(7),
    tpotMs: num(8),
    tpotArrivalMs: num(9),
    tokensPerSecond: num(10),
    outputTokens: n[11],
    tokenSource: TOKEN_SOURCES[n[12]],
    reasoningTokens: n[13],
    outputEvents: n[14],
    outputEventsByKind: { answer: n[15], reasoning: n[16], tool: n[17] },
    gaps: quantiles(18),
    arrivalGaps: quantiles(22),
    jitterMs: num(26),
    stalls: Number.isNaN(n[27]) ? null : { count: n[27], count1000: n[28], longestMs: n[29], totalMs: n[30] },
    renderDelay: Number.isNaN(n[31]) ? null : { p50: n[31], p90: n[32] },
    durationMs: num(33),
    hidden: n[34] === 1,
    finishReason: text(1) || null,
    anomalies: { malformedEvents: n[35], oversizeDropped: n[36], unterminatedLast: n[37] === 1 },
    def: n[38],
  };
}

function formatCode(format) {
  if (format == null || format === 'auto') return 0;
  const index = FORMATS.indexOf(format);
  if (index < 0) {
    console.warn(`llm-ux-meter: unknown format ${JSON.stringify(format)}, detecting it instead. Known: auto, ${FORMATS.join(', ')}.`);
    return 0;
  }
  return index + 1;
}

function toBytes(data) {
  if (typeof data === 'string') return encoder.encode(data);
  if (data instanceof Uint8Array) return data;
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return new Uint8Array(data);
}

function randomId() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
