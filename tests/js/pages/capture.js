// The browser side of tests/js/capture.test.mjs: a chat-like page that loads the package (dist/, or the
// fault-injection build with ?pkg=dist-fault), reads streams the ways apps do, and records its own
// truth (arrival and paint times of what it rendered) for the test to compare with the meter's report.

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

window.harness = {
  async init(options = {}) {
    reports.length = 0;
    const { install = true, persist = false, scenarioFromUrl = false, matchPathsContaining, ...meterOptions } = options;
    meter = await createMeter({
      ...meterOptions,
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
