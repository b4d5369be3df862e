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
    meter = await createMeter({ ...options, onReport: (r) => reports.push(r) });
    if (options.install !== false) meter.installFetch();
    return { enabled: meter.enabled };
  },
  reports: () => reports.slice(),
  health: () => ({ enabled: meter.enabled, errors: meter.errors, wasmMemoryBytes: meter.wasmMemoryBytes }),

  /** Fetches and reads `url` the way `mode` says, rendering text as it arrives. */
  async read(url, { init, mode = 'reader', hooked = true, cancelAfter = null, abortAfter = null } = {}) {
    const controller = new AbortController();
    const doFetch = hooked ? globalThis.fetch : originalFetch;
    chat.textContent = '';
    const fetchStart = performance.now();
    const response = await doFetch(url, { ...init, signal: controller.signal });
    const props = {
      url: response.url, status: response.status, statusText: response.statusText, ok: response.ok, type: response.type,
      redirected: response.redirected, isResponse: response instanceof Response, headers: [...response.headers],
    };
    const arrivals = [];
    const paints = [];
    const render = (text) => {
      if (!text) return;
      chat.append(text);
      nextPaint().then((t) => paints.push(t - fetchStart));
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
      } else if (mode === 'unread') {
        bytes = new Uint8Array(0);
      } else {
        const reader = response.body.getReader();
        const chunks = [];
        const text = decoder();
        for (let n = 0; ; n++) {
          if (n === cancelAfter) {
            await reader.cancel('enough');
            break;
          }
          if (n === abortAfter) controller.abort();
          const { done, value } = await reader.read();
          if (done) break;
          arrivals.push(performance.now());
          chunks.push(value);
          render(text.decode(value, { stream: true }));
        }
        bytes = concat(chunks);
      }
    } catch (e) {
      error = e.name;
    }
    // Let the meter's own end-of-stream paint and report happen.
    await nextPaint();
    await nextPaint();
    return {
      props, error, length: bytes?.length ?? 0, sha256: bytes ? await sha256(bytes) : null,
      fetchStart, arrivals: arrivals.map((t) => t - fetchStart), paints: [...new Set(paints)],
      rendered: chat.textContent.length,
    };
  },
};
window.ready = true;
