// Section 4: memory. WebAssembly linear memory (meter.wasmMemoryBytes) and the page's JS heap (after a
// full GC through CDP) before and after one 100,000-token stream and after 1,000 streams, hooked; the
// same reads unhooked first, as a control for what the browser itself keeps.
import { openBenchPage } from './lib/browser.mjs';
import { median, fmt, signed, table, progress } from './lib/stats.mjs';

const HEAP_FLAT_BYTES = 16 * 1024;

export const title = 'Memory: wasm linear memory and JS heap';

export async function run(ctx) {
  const p = await openBenchPage(ctx);
  const request = (schedule) => [`${ctx.llm.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'text/plain' },
    body: JSON.stringify({ model: 'bench', stream: true, stream_options: { include_usage: true }, schedule }),
  }];
  const long = request({ tokens: 100_000, ttftMs: 0, tokenMs: 0, eventsPerWrite: 100 });
  const short = request({ tokens: 20, ttftMs: 0, tokenMs: 0, eventsPerWrite: 20 });
  const streams = (req, n, hooked) => p.page.evaluate(([[u, i], k, h]) => window.bench.net.streams(u, i, k, h), [req, n, hooked]);
  const measure = async () => {
    const heaps = [];
    for (let i = 0; i < 3; i++) heaps.push(await p.heapUsed());
    const { wasmMemoryBytes, errors, evicted } = await p.page.evaluate(() => window.bench.net.health());
    return { heap: median(heaps), heapSpread: Math.max(...heaps) - Math.min(...heaps), wasm: wasmMemoryBytes, errors, evicted };
  };
  try {
    // Warm-up: one short stream each way (connection, JIT, the meter's first stream).
    await streams(short, 2, false);
    await streams(short, 2, true);
    const steps = [];
    const step = async (label, fn) => {
      const r = fn ? await fn() : null;
      const m = await measure();
      steps.push({ label, ...m, r });
      progress(`  memory: ${label}: wasm ${fmt(m.wasm)} B, heap ${fmt(m.heap)} B`);
      return r;
    };
    await step('baseline (unhooked control)');
    await step('after one 100,000-token stream, unhooked', () => streams(long, 1, false));
    await step('after 1,000 streams, unhooked', () => streams(short, 1000, false));
    await step('baseline (hooked)');
    const longHooked = await step('after one 100,000-token stream, hooked', () => streams(long, 1, true));
    await step('after a second 100,000-token stream, hooked', () => streams(long, 1, true));
    const manyHooked = await step('after 1,000 streams, hooked', () => streams(short, 1000, true));
    await step('after 1,000 more streams (2,000), hooked', () => streams(short, 1000, true));
    if (longHooked.last.outputEvents !== 100_000 || longHooked.last.status !== 'ok') throw new Error(`100k stream report: ${JSON.stringify(longHooked.last)}`);
    if (manyHooked.reports !== 1000) throw new Error(`1,000 streams gave ${manyHooked.reports} reports`);

    const [b0, u1, u2, b1, h1, h1b, h2, h3] = steps;
    const rows = steps.map((s, i) => {
      const base = i < 3 ? b0 : b1;
      return [s.label, fmt(s.wasm), signed(s.wasm - base.wasm, 0), fmt(s.heap), i === 0 || i === 3 ? '' : signed(s.heap - base.heap, 0), fmt(s.heapSpread)];
    });
    // Flat: nothing grows with a stream's length (second long stream) or with the number of streams
    // (the second thousand); what the first long stream and first thousand add is reported as a step.
    const lengthGrowth = { wasm: h1b.wasm - h1.wasm, heap: h1b.heap - h1.heap };
    const countGrowth = { wasm: h3.wasm - h2.wasm, heap: h3.heap - h2.heap };
    const wasmFlat = lengthGrowth.wasm === 0 && countGrowth.wasm === 0;
    const heapFlat = lengthGrowth.heap <= HEAP_FLAT_BYTES && countGrowth.heap <= HEAP_FLAT_BYTES;
    const met = wasmFlat && heapFlat && h3.errors === 0 && h3.evicted === 0;
    const body = [
      'One page, one meter. Each figure is taken after a full GC (CDP `HeapProfiler.collectGarbage`, twice) as CDP ' +
      '`Runtime.getHeapUsage().usedSize` (median of 3 readings; the last column is their spread) and the meter\'s ' +
      '`wasmMemoryBytes`. A 100,000-token stream is an OpenAI stream from the scripted server ' +
      `(${fmt(longHooked.bytes / 1e6, 1)} MB, usage included; the report says ${fmt(longHooked.last.outputEvents)} output events); ` +
      'the 1,000 streams are 20-token OpenAI streams, one after the other, each read to its end. The page keeps no reports ' +
      '(a count and the last one). The unhooked control runs first, then the hooked steps are compared with a fresh baseline.',
      '',
      table(['step', 'wasm memory, B', 'change', 'JS heap used, B', 'change', 'heap spread'], rows, ['l', 'r', 'r', 'r', 'r', 'r']),
      '',
      `With stream length (second 100,000-token stream against the first): wasm ${signed(lengthGrowth.wasm, 0)} B, JS heap ` +
      `${signed(lengthGrowth.heap, 0)} B. With stream count (2,000 streams against 1,000): wasm ${signed(countGrowth.wasm, 0)} B, JS heap ` +
      `${signed(countGrowth.heap, 0)} B. One-time steps from the hooked baseline: the first long stream took wasm memory ` +
      `${signed(h1.wasm - b1.wasm, 0)} B (linear memory only grows, in 64 KiB pages; the largest chunk the page read in that stream was ${fmt(longHooked.maxChunk)} B, ` +
      'against a few hundred bytes in the baseline\'s short streams) ' +
      `and the first 1,000 streams the JS heap ${signed(h2.heap - b1.heap, 0)} B (unhooked control: ${signed(u2.heap - b0.heap, 0)} B). ` +
      `Meter errors: ${h3.errors}; streams evicted: ${h3.evicted}.`,
      '',
      `**Goal (flat): ${met ? 'met' : 'missed'}** — flat is read as: no growth with a stream's length or with the number of ` +
      `streams (wasm memory unchanged, JS heap within ${fmt(HEAP_FLAT_BYTES / 1024)} KiB, i.e. under 16 B a stream), after the ` +
      'one-time steps above.',
    ].join('\n');
    return {
      body,
      goals: [{
        name: 'Memory: flat (no growth with stream length or count)',
        value: `2nd 100k-token stream: wasm ${signed(lengthGrowth.wasm, 0)} B, heap ${signed(lengthGrowth.heap, 0)} B; 1,000 → 2,000 streams: wasm ${signed(countGrowth.wasm, 0)} B, heap ${signed(countGrowth.heap, 0)} B; one-time: wasm ${signed(h1.wasm - b1.wasm, 0)} B, heap ${signed(h2.heap - b1.heap, 0)} B`,
        met,
      }],
      headline: { baseline: b1, long: h1, many: h2 },
    };
  } finally {
    await p.close();
  }
}
