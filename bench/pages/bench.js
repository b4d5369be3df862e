// The browser side of the bench: loads the package (the run's dist/ snapshot) and the app's SSE parser
// (eventsource-parser, bundled by esbuild), and exposes what the sections time as window.bench.
// Everything here runs on the page's main thread; Node drives it through page.evaluate.

window.addEventListener('error', (e) => { window.loadError ??= String(e.message); });
let createMeter, createParser, openaiStream, chunkBounds;
try {
  ({ createMeter } = await import('/dist/index.js'));
  ({ createParser } = await import('/vendor/eventsource-parser.js'));
  ({ openaiStream, chunkBounds } = await import('/bench/lib/events.js'));
} catch (error) {
  window.loadError = String(error);
  throw error;
}

const SSE = { 'content-type': 'text/event-stream' };
const originalFetch = globalThis.fetch;
const chat = document.getElementById('chat');

// Reports: a count and the last one only (the memory section must not keep them all).
let reportCount = 0;
let lastReport = null;
const waiters = [];
const meter = await createMeter({
  onReport: (report) => {
    reportCount++;
    lastReport = report;
    for (const w of waiters.splice(0)) w();
  },
});
const hookedFetch = meter.wrapFetch(originalFetch);
// The main-thread section hands the page's own Response to the real hook through this stub.
let stubResponse = null;
const hookedStub = meter.wrapFetch(async () => stubResponse);

function waitReports(n, timeoutMs = 10_000) {
  return new Promise((resolve, reject) => {
    const end = performance.now() + timeoutMs;
    const check = () => {
      if (reportCount >= n) return resolve(lastReport);
      if (performance.now() > end) return reject(new Error(`waited for report ${n}, have ${reportCount}`));
      waiters.push(check);
      setTimeout(check, 50);
    };
    check();
  });
}

/** The next presented frame: rAF, then a posted task (as web-vitals and the meter take paints). */
function nextPaint() {
  return new Promise((resolve) => requestAnimationFrame(() => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => resolve(performance.now());
    channel.port2.postMessage(0);
  }));
}

// ---------------------------------------------------------------------------------------------------
// Main-thread cost per chunk: an in-page stream (no network), so only CPU is measured.

let mtBytes = null;
let mtEvents = 0;
let mtChunks = null;

/** A pull source handing out the prepared chunks one per pull (each chunk owns its buffer, as fetch's do). */
function source(chunks) {
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      if (i < chunks.length) controller.enqueue(chunks[i++]);
      else controller.close();
    },
  });
}

/** The app's own path: reader + TextDecoder(stream) + eventsource-parser + JSON.parse + content. */
async function appRead(reader) {
  const decoder = new TextDecoder();
  let answer = '';
  let events = 0;
  const parser = createParser({
    onEvent(event) {
      events++;
      if (event.data === '[DONE]') return;
      const content = JSON.parse(event.data).choices[0]?.delta?.content;
      if (content) answer += content;
    },
  });
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parser.feed(decoder.decode(value, { stream: true }));
  }
  parser.feed(decoder.decode());
  return { events, chars: answer.length };
}

/** A hand-written pull wrapper around `inner` (no meter): a default stream, or a byte stream as the meter's body is. */
function wrapper(inner, bytes) {
  const reader = inner.getReader();
  const pull = async (controller) => {
    const { done, value } = await reader.read();
    if (done) controller.close();
    else controller.enqueue(value);
  };
  return bytes ? new ReadableStream({ type: 'bytes', pull }) : new ReadableStream({ pull }, { highWaterMark: 0 });
}

async function readerOnly(reader) {
  let chunks = 0;
  for (;;) {
    const { done } = await reader.read();
    if (done) break;
    chunks++;
  }
  return { chunks };
}

const MT = {
  /** Builds the stream once; returns its size. */
  setup(events, seed) {
    mtEvents = events + 2;
    mtBytes = new TextEncoder().encode(openaiStream(events, seed));
    return { events: mtEvents, bytes: mtBytes.length };
  },
  /** Fresh chunk copies for the next run (a byte stream may take a chunk's buffer). */
  prepare(chunkSeed) {
    const bounds = chunkBounds(mtBytes.length, chunkSeed);
    mtChunks = [];
    for (let i = 0; i < bounds.length; i += 2) mtChunks.push(mtBytes.slice(bounds[i], bounds[i + 1]));
    return { chunks: mtChunks.length };
  },
  /** Whether the fetch hook hands the app a body stream of its own instead of the response's. */
  async bodyWrapped() {
    stubResponse = new Response(source([new TextEncoder().encode('data: {}\n\n')]), { headers: SSE });
    const original = stubResponse.body;
    const response = await hookedStub('https://api.example.test/v1/chat/completions', { method: 'POST', body: '{}' });
    const wrapped = response.body !== original;
    await response.body.cancel();
    return wrapped;
  },
  async run(variant) {
    const chunks = mtChunks;
    mtChunks = null;
    const reportsBefore = reportCount;
    let result;
    let endMs = null;
    const t0 = performance.now();
    if (variant === 'reader') {
      result = await readerOnly(source(chunks).getReader());
    } else if (variant === 'app') {
      const response = new Response(source(chunks), { headers: SSE });
      result = await appRead(response.body.getReader());
    } else if (variant === 'hooked' || variant === 'hooked-reader') {
      stubResponse = new Response(source(chunks), { headers: SSE });
      const response = await hookedStub('https://api.example.test/v1/chat/completions', { method: 'POST', body: '{"model":"gpt-4o","stream":true}' });
      result = variant === 'hooked' ? await appRead(response.body.getReader()) : await readerOnly(response.body.getReader());
    } else if (variant === 'wrap-default' || variant === 'wrap-bytes') {
      result = await readerOnly(wrapper(source(chunks), variant === 'wrap-bytes').getReader());
    } else if (variant === 'manual') {
      const stream = meter.track({ format: 'openai' });
      stream.response({ status: 200, contentType: 'text/event-stream' });
      for (const chunk of chunks) stream.chunk(chunk);
      const t1 = performance.now();
      const report = stream.end();
      endMs = performance.now() - t1;
      result = { outputEvents: report?.outputEvents };
    } else throw new Error(`unknown variant ${variant}`);
    const ms = performance.now() - t0 - (endMs ?? 0);
    let report = null;
    if (variant.startsWith('hooked')) {
      await waitReports(reportsBefore + 1);
      report = { status: lastReport.status, outputEvents: lastReport.outputEvents, outputTokens: lastReport.outputTokens, format: lastReport.format };
    }
    return { ms, endMs, events: mtEvents, chunks: chunks.length, result, report, enabled: meter.enabled, errors: meter.errors };
  },
};

// ---------------------------------------------------------------------------------------------------
// Network reads (throughput, memory, accuracy) against the scripted server.

async function countBody(response) {
  const reader = response.body.getReader();
  let bytes = 0;
  let chunks = 0;
  let maxChunk = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.length;
    chunks++;
    if (value.length > maxChunk) maxChunk = value.length;
  }
  return { bytes, chunks, maxChunk };
}

const NET = {
  /** One read of `url` with a reader, hooked or not: bytes and the body's read time. */
  async throughput(url, init, hooked) {
    const before = reportCount;
    const t0 = performance.now();
    const response = await (hooked ? hookedFetch : originalFetch)(url, init);
    const t1 = performance.now();
    const { bytes, chunks } = await countBody(response);
    const t2 = performance.now();
    let report = null;
    if (hooked) {
      await waitReports(before + 1);
      report = { status: lastReport.status, outputEvents: lastReport.outputEvents, format: lastReport.format };
    }
    return { bytes, chunks, headersMs: t1 - t0, bodyMs: t2 - t1, report };
  },
  /** `n` streams one after the other, read to the end; reports are awaited every 10 streams. */
  async streams(url, init, n, hooked) {
    const before = reportCount;
    let bytes = 0;
    let maxChunk = 0;
    for (let i = 0; i < n; i++) {
      const response = await (hooked ? hookedFetch : originalFetch)(url, init);
      const read = await countBody(response);
      bytes += read.bytes;
      maxChunk = Math.max(maxChunk, read.maxChunk);
      if (hooked && i % 10 === 9) await waitReports(before + i + 1);
    }
    if (hooked) await waitReports(before + n, 30_000);
    return { bytes, maxChunk, reports: reportCount - before, last: hooked ? { status: lastReport.status, outputEvents: lastReport.outputEvents, outputTokens: lastReport.outputTokens } : null };
  },
  /** As the capture test's harness reads: reader, decode, render into #chat; the page's own arrival and paint times. */
  async paintedRead(url, init) {
    const before = reportCount;
    chat.textContent = '';
    const fetchStart = performance.now();
    const response = await hookedFetch(url, init);
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    const arrivals = [];
    const paints = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      arrivals.push(performance.now() - fetchStart);
      const text = decoder.decode(value, { stream: true });
      if (text) {
        chat.append(text);
        nextPaint().then((t) => paints.push(t - fetchStart));
      }
    }
    await nextPaint();
    await nextPaint();
    const report = await waitReports(before + 1);
    return {
      arrivals, paints: [...new Set(paints)], report,
      // For the request's transit: the scripted server's record of this request, and the fetch call on the epoch clock.
      connection: response.headers.get('x-scripted-connection'), fetchStartEpoch: performance.timeOrigin + fetchStart,
    };
  },
  health: () => ({ enabled: meter.enabled, errors: meter.errors, evicted: meter.evicted, wasmMemoryBytes: meter.wasmMemoryBytes }),
};

window.bench = { mt: MT, net: NET };
window.ready = true;
