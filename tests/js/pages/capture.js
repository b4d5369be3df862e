// The browser side of tests/js/capture.test.mjs: a chat-like page that loads the package (dist/, or the
// fault-injection build with ?pkg=dist-fault), reads streams the ways apps do, and records its own
// truth (arrival and paint times of what it rendered) for the test to compare with the meter's report.

import { recordPageProblems } from './page-problems.js';

recordPageProblems();

const pkg = new URLSearchParams(location.search).get('pkg') ?? 'dist';
const { createMeter } = await import(`/${pkg}/index.js`);
const originalFetch = globalThis.fetch;
const decoder = () => new TextDecoder();
const chat = document.getElementById('chat');
let meter = null;
const reports = [];

function nextPaint() {
  return new Promise((resolve) => requestAnimationFrame(() => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => resolve(performance.now());
    channel.port2.postMessage(0);
  }));
}

async function sha256(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

function concat(chunks) {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** Reads `reader` to its end; returns the chunks. */
async function drain(reader) {
  const chunks = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return chunks;
    chunks.push(value);
  }
}

async function digest(chunks) {
  const bytes = concat(chunks.map((c) => (c instanceof Uint8Array ? c : new TextEncoder().encode(c))));
  return { length: bytes.length, sha256: await sha256(bytes) };
}

/** The name of the error `fn` throws or rejects with, or null. */
async function errorOf(fn) {
  try {
    await fn();
    return null;
  } catch (e) {
    return e.name;
  }
}

/** What every way of using a locked or used body gives. */
async function refusals(response) {
  const body = response.body;
  const refused = {};
  for (const method of ['text', 'json', 'arrayBuffer', 'blob', 'bytes', 'formData', 'clone']) refused[method] = await errorOf(() => response[method]());
  refused.getReader = await errorOf(() => body.getReader());
  refused.values = await errorOf(() => body.values());
  refused.tee = await errorOf(() => body.tee());
  refused.pipeThrough = await errorOf(() => body.pipeThrough(new TextDecoderStream()));
  refused.pipeTo = await errorOf(() => body.pipeTo(new WritableStream()));
  refused.cancel = await errorOf(() => body.cancel());
  return { bodyUsed: response.bodyUsed, locked: body.locked, refused };
}

/**
 * Ways an app uses a fetch body, each returning what the app saw (bytes as a digest, errors by name):
 * the same with and without the meter, or the meter is not transparent.
 */
const BODY_USES = {
  reader: async (r) => digest(await drain(r.body.getReader())),
  async byob(r) {
    const reader = r.body.getReader({ mode: 'byob' });
    const chunks = [];
    for (;;) {
      const { done, value } = await reader.read(new Uint8Array(64));
      if (done) break;
      chunks.push(value);
    }
    return { ...(await digest(chunks)), filledViews: chunks.every((c) => c instanceof Uint8Array && c.byteLength <= 64) };
  },
  async concurrentReads(r) {
    const reader = r.body.getReader();
    const chunks = [];
    for (;;) {
      const results = await Promise.all([reader.read(), reader.read(), reader.read()]);
      for (const { done, value } of results) if (!done) chunks.push(value);
      if (results.some((x) => x.done)) break;
    }
    return digest(chunks);
  },
  async forAwait(r) {
    const chunks = [];
    for await (const chunk of r.body) chunks.push(chunk);
    return { ...(await digest(chunks)), locked: r.body.locked };
  },
  async valuesPreventCancel(r) {
    const chunks = [];
    for await (const chunk of r.body.values({ preventCancel: true })) {
      chunks.push(chunk);
      break;
    }
    const lockedAfterBreak = r.body.locked;
    chunks.push(...(await drain(r.body.getReader())));
    return { ...(await digest(chunks)), lockedAfterBreak };
  },
  async breakCancels(r) {
    for await (const chunk of r.body) break;
    return { locked: r.body.locked, afterBreak: await r.body.getReader().read(), bodyUsed: r.bodyUsed };
  },
  async pipeThrough(r) {
    const parts = [];
    for await (const text of r.body.pipeThrough(new TextDecoderStream())) parts.push(text);
    return digest([parts.join('')]);
  },
  async pipeTo(r) {
    const chunks = [];
    await r.body.pipeTo(new WritableStream({ write: (chunk) => chunks.push(chunk) }));
    return { ...(await digest(chunks)), locked: r.body.locked };
  },
  async tee(r) {
    const [a, b] = r.body.tee();
    const [first, second] = await Promise.all([drain(a.getReader()), drain(b.getReader())]);
    return { first: await digest(first), second: await digest(second), locked: r.body.locked };
  },
  text: async (r) => digest([await r.text()]),
  // An SSE body is not JSON: the same error, after the whole body was read.
  json: async (r) => ({ error: await errorOf(() => r.json()), bodyUsed: r.bodyUsed }),
  arrayBuffer: async (r) => digest([new Uint8Array(await r.arrayBuffer())]),
  async blob(r) {
    const blob = await r.blob();
    return { type: blob.type, ...(await digest([new Uint8Array(await blob.arrayBuffer())])) };
  },
  bytes: async (r) => digest([await r.bytes()]),
  // The meter follows the body read first: here the original's (a new stream since the clone), so
  // cancelling the copy afterwards does not make the report aborted.
  async cloneThenOriginal(r) {
    const copy = r.clone();
    const original = await digest(await drain(r.body.getReader()));
    return { original, copyCancel: await errorOf(() => copy.body.cancel()) };
  },
  async cloneThenClone(r) {
    const copy = r.clone();
    const fromCopy = await digest(await drain(copy.body.getReader()));
    const original = await digest([new Uint8Array(await r.arrayBuffer())]);
    return { fromCopy, original, copy: [copy.url, copy.type, copy.redirected, copy instanceof Response] };
  },
  async afterUse(r) {
    await r.text();
    return refusals(r);
  },
  async whileLocked(r) {
    const reader = r.body.getReader();
    const refused = await refusals(r);
    reader.releaseLock();
    return { refused, ...(await digest(await drain(r.body.getReader()))) };
  },
  async cancel(r) {
    await r.body.cancel('enough');
    return { bodyUsed: r.bodyUsed, text: await errorOf(() => r.text()) };
  },
  async readerCancel(r) {
    const reader = r.body.getReader();
    const first = await reader.read();
    await reader.cancel('enough');
    return { first: first.value.length > 0, afterCancel: await reader.read() };
  },
  async releaseAndReread(r) {
    const reader = r.body.getReader();
    const { value } = await reader.read();
    reader.releaseLock();
    return { released: await errorOf(() => reader.read()), ...(await digest([value, ...(await drain(r.body.getReader()))])) };
  },
  // Around the meter's patches: read as usual, not observed.
  bypass: async (r) => digest(await drain(ReadableStream.prototype.getReader.call(r.body))),
  async shape(r) {
    const reader = r.body.getReader();
    const shape = {
      responseKeys: Object.keys(r), bodyKeys: Object.keys(r.body), readerKeys: Object.keys(reader), sameBody: r.body === r.body,
      classes: [r instanceof Response, r.body instanceof ReadableStream, reader instanceof ReadableStreamDefaultReader],
      names: [r.text.name, r.body.getReader.name, r.body[Symbol.asyncIterator]?.name, reader.read.name, reader.cancel.name],
    };
    return { shape, ...(await digest(await drain(reader))) };
  },
};

window.harness = {
  async init(options = {}) {
    reports.length = 0;
    const { install = true, persist = false, scenarioFromUrl = false, matchPathsContaining, ...meterOptions } = options;
    meter = await createMeter({
      ...meterOptions,
      // RegExps cannot cross WebDriver's JSON: the tests send { regExp: source }.
      ...(meterOptions.match && { match: meterOptions.match.map((m) => (m.regExp ? new RegExp(m.regExp) : m)) }),
      ...(matchPathsContaining && { match: (request) => request.url.includes(matchPathsContaining) }),
      ...(scenarioFromUrl && { dimensionsFor: (request) => ({ scenario: new URL(request.url).pathname, variant: 'B' }) }),
      onReport: (r) => {
        reports.push(r);
        // Survives navigation, for the tests of leaving the page mid-stream.
        if (persist) localStorage.setItem('reports', JSON.stringify([...JSON.parse(localStorage.getItem('reports') ?? '[]'), r]));
      },
    });
    if (install) meter.installFetch();
    return { enabled: meter.enabled };
  },
  setDimensions: (d) => meter.setDimensions(d),
  installEventSource: () => meter.installEventSource(),
  persisted: () => JSON.parse(localStorage.getItem('reports') ?? '[]'),
  clearPersisted: () => localStorage.removeItem('reports'),
  /** Pretends the page was hidden (as a tab switch would), for the next `hideAfter` chunks' stream. */
  hide() {
    Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
    document.dispatchEvent(new Event('visibilitychange'));
  },
  reports: () => reports.slice(),
  health: () => ({ enabled: meter.enabled, errors: meter.errors, wasmMemoryBytes: meter.wasmMemoryBytes }),

  bodyUses: () => Object.keys(BODY_USES),
  /** Fetches `url` and uses its body as BODY_USES[use] does; returns what the app saw. */
  async useBody(url, use, hooked) {
    const response = await (hooked ? globalThis.fetch : originalFetch)(url);
    let seen;
    try {
      seen = await BODY_USES[use](response);
    } catch (e) {
      seen = { threw: e.name, message: e.message };
    }
    // Let the meter's end-of-stream paint and report happen.
    await nextPaint();
    await nextPaint();
    return seen;
  },
  /** Fetches and reads `url` the way `mode` says, rendering text as it arrives. */
  async read(url, { init, mode = 'reader', hooked = true, wrapped = false, explicit = false, draw = true,
    cancelAfter = null, abortAfter = null, cancelOn = null, hideAfter = null, unreadWaitMs = 0, clone = false } = {}) {
    const controller = new AbortController();
    const doFetch = wrapped ? meter.wrapFetch(originalFetch) : hooked ? globalThis.fetch : originalFetch;
    chat.textContent = '';
    const fetchStart = performance.now();
    const response = await doFetch(url, { ...init, signal: controller.signal });
    const props = {
      url: response.url, status: response.status, statusText: response.statusText, ok: response.ok, type: response.type,
      redirected: response.redirected, isResponse: response instanceof Response, headers: [...response.headers],
      // A clone tees the body: only where the test asks (small bodies).
      cloneUrl: clone ? response.clone().url : null,
    };
    const arrivals = [];
    const paints = [];
    const render = (text) => {
      if (!text || !draw) return;
      chat.append(text);
      nextPaint().then((t) => {
        paints.push(t - fetchStart);
        if (explicit) meter.streamOf(response)?.rendered(t);
      });
    };
    let bytes;
    let error = null;
    try {
      if (mode === 'text') {
        const text = await response.text();
        render(text);
        bytes = new TextEncoder().encode(text);
      } else if (mode === 'arrayBuffer') {
        bytes = new Uint8Array(await response.arrayBuffer());
      } else if (mode === 'json') {
        bytes = new TextEncoder().encode(JSON.stringify(await response.json()));
      } else if (mode === 'decoderStream') {
        const parts = [];
        for await (const text of response.body.pipeThrough(new TextDecoderStream())) {
          arrivals.push(performance.now());
          parts.push(text);
          render(text);
        }
        bytes = new TextEncoder().encode(parts.join(''));
      } else if (mode === 'iterate') {
        const chunks = [];
        const text = decoder();
        for await (const chunk of response.body) {
          arrivals.push(performance.now());
          chunks.push(chunk);
          render(text.decode(chunk, { stream: true }));
        }
        bytes = concat(chunks);
      } else if (mode === 'unread-then-read') {
        await new Promise((r) => setTimeout(r, unreadWaitMs));
        bytes = new Uint8Array(await response.arrayBuffer());
      } else {
        const reader = response.body.getReader();
        const chunks = [];
        const text = decoder();
        let seen = '';
        let length = 0;
        for (let n = 0; ; n++) {
          if (n === cancelAfter) {
            await reader.cancel('enough');
            break;
          }
          if (n === abortAfter) controller.abort();
          if (n === hideAfter) window.harness.hide();
          const { done, value } = await reader.read();
          if (done) break;
          arrivals.push(performance.now());
          length += value.length;
          if (draw) chunks.push(value);
          const decoded = text.decode(value, { stream: true });
          render(decoded);
          if (cancelOn) {
            seen = (seen + decoded).slice(-200);
            if (seen.includes(cancelOn)) {
              // As openai-node does after [DONE]: stop reading and cancel the body.
              await reader.cancel();
              break;
            }
          }
        }
        bytes = draw ? concat(chunks) : { length };
      }
    } catch (e) {
      error = e.name;
    }
    // Let the meter's own end-of-stream paint and report happen.
    await nextPaint();
    await nextPaint();
    return {
      props, error, length: bytes?.length ?? 0, sha256: bytes instanceof Uint8Array ? await sha256(bytes) : null,
      fetchStart, arrivals: arrivals.map((t) => t - fetchStart), paints: [...new Set(paints)],
      rendered: chat.textContent.length,
    };
  },
};
window.ready = true;
