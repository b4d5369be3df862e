// The browser side of tests/js/beacons.test.mjs: a page that creates a meter sending to a test
// endpoint and produces streams on demand. The endpoint and options come from the query string
// (?endpoint=...&options={...}) so that a reload or a new page view starts the same way.

import { recordPageProblems } from './page-problems.js';
import { createMeter } from '/dist/index.js';

recordPageProblems();

const params = new URLSearchParams(location.search);
const SSE = (i, model = 'beacon-model') => `data: {"model":"${model}","choices":[{"delta":{"content":"token ${i}"}}]}\n\n`;
let meter = null;

window.harness = {
  async init(extra = {}) {
    const options = { endpoint: params.get('endpoint'), ...JSON.parse(params.get('options') ?? '{}'), ...extra };
    if (options.dropModel) {
      const drop = options.dropModel;
      options.beforeSend = (r) => (r.model === drop ? null : { ...r, scenario: 'changed-by-beforeSend' });
    }
    meter = await createMeter(options);
    return meter.delivery;
  },
  /** Finishes `n` streams through the manual API (a few output events each). */
  emit(n, { model = 'beacon-model', scenario = 'chat', variant = 'A' } = {}) {
    for (let i = 0; i < n; i++) {
      const s = meter.track({ dimensions: { scenario, variant } });
      s.response({ status: 200, contentType: 'text/event-stream' });
      for (let k = 0; k < 3; k++) s.chunk(SSE(k, model));
      s.end();
    }
  },
  flush: () => meter.flush(),
  delivery: () => meter.delivery,
  hide() {
    Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
    document.dispatchEvent(new Event('visibilitychange'));
  },
  /** A hooked fetch of `url` with a request body, read to the end. */
  async fetchStream(url, body) {
    meter.installFetch();
    const response = await fetch(url, { method: 'POST', body });
    const length = (await response.text()).length;
    // The report comes after the frame that paints the last chunk: wait for it before the caller flushes.
    await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    return length;
  },
  /** `sessions` meters with their own session ids, one stream each; resolves to the sampled ids. */
  async simulateSessions(sessions, sampleRate) {
    const sampled = [];
    for (let i = 0; i < sessions; i++) {
      const m = await createMeter({ endpoint: params.get('endpoint'), sampleRate, sessionId: `sim-${i}` });
      const s = m.track();
      s.chunk(SSE(i));
      s.end();
      if (m.delivery.sampled) sampled.push(`sim-${i}`);
      await m.destroy();
    }
    return sampled;
  },
  async destroy() {
    const before = globalThis.fetch;
    meter.installFetch();
    const hooked = globalThis.fetch !== before;
    await meter.destroy();
    return { hooked, restored: globalThis.fetch === before };
  },
};
window.ready = true;
