// Section: start-up. What a page pays before the meter is ready, beside what it pays to download it:
// from `import('dist/index.js')` to a ready `createMeter()`, in a fresh page each run (a new browser
// context: nothing cached, nothing compiled), next to the yardstick measured the same way in the same
// page: `WebAssembly.instantiate` of the bare wasm module's bytes (already in the page). Chromium: the
// main thread's CPU time (CDP `ThreadTime` before and after) as the goal's figure, wall time beside
// it; Firefox: wall time (no CDP). A phone-like budget weighs both costs: CPU time × 4, bytes at
// 1.6 Mbps (slow 4G).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants } from 'node:zlib';
import { median, fmt, spread, table, progress } from './lib/stats.mjs';

const RUNS = 21;
/** Start-up main-thread CPU at most this many times the yardstick's (issue 37). */
const GOAL_RATIO = 1.5;
const PHONE_CPU = 4;
const PHONE_BYTES_PER_MS = 1.6e6 / 8 / 1000;

export const title = 'Start-up: import to a ready meter';

const brotli = (bytes) => brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;

/** One fresh page of `browser`: the yardstick, then the meter, each timed. */
async function once(ctx, engine, bareBase64) {
  const page = await (engine === 'chromium' ? ctx.browser : ctx.firefox).newPage();
  try {
    await page.goto(`${ctx.site.url}/bench/pages/blank.html`);
    const cdp = engine === 'chromium' ? await page.context().newCDPSession(page) : null;
    if (cdp) await cdp.send('Performance.enable');
    const threadMs = async () => (cdp ? (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'ThreadTime').value * 1000 : NaN);
    await page.evaluate((b64) => {
      window.bare = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    }, bareBase64);
    const timed = async (fn, arg) => {
      const cpu0 = await threadMs();
      const wall = await page.evaluate(fn, arg);
      return { cpu: (await threadMs()) - cpu0, wall };
    };
    const yardstick = await timed(async () => {
      const t = performance.now();
      await WebAssembly.instantiate(window.bare);
      return performance.now() - t;
    });
    const meter = await timed(async (url) => {
      const t = performance.now();
      const { createMeter } = await import(url);
      const m = await createMeter({ onReport() {} });
      const ms = performance.now() - t;
      if (!m || typeof m.installFetch !== 'function') throw new Error('createMeter gave no meter');
      return ms;
    }, `${ctx.site.url}/dist/index.js`);
    return { yardstick, meter };
  } finally {
    await page.close();
  }
}

export async function run(ctx) {
  const bare = readFileSync(ctx.dist.wasm);
  const bareBase64 = bare.toString('base64');
  const bytes = { meter: brotli(readFileSync(join(ctx.dist.dir, 'index.js'))), yardstick: brotli(bare) };
  const runs = { chromium: [], firefox: [] };
  for (const engine of ['chromium', 'firefox']) {
    await once(ctx, engine, bareBase64); // warm-up: the browser's own first-page costs
    for (let i = 0; i < RUNS; i++) runs[engine].push(await once(ctx, engine, bareBase64));
    progress(`  startup: ${engine}: meter ${fmt(median(runs[engine].map((r) => r.meter.wall)), 1)} ms wall, yardstick ${fmt(median(runs[engine].map((r) => r.yardstick.wall)), 1)} ms`);
  }
  const figure = (engine, who, what) => runs[engine].map((r) => r[who][what]);
  const cpu = { meter: median(figure('chromium', 'meter', 'cpu')), yardstick: median(figure('chromium', 'yardstick', 'cpu')) };
  const ratio = cpu.meter / cpu.yardstick;
  const phone = (who) => cpu[who] * PHONE_CPU + bytes[who] / PHONE_BYTES_PER_MS;
  const row = (label, who) => [
    label, spread(figure('chromium', who, 'cpu'), 2), spread(figure('chromium', who, 'wall'), 2), spread(figure('firefox', who, 'wall'), 2),
    fmt(bytes[who]), fmt(phone(who), 1),
  ];
  const met = ratio <= GOAL_RATIO;
  const body = [
    `${RUNS} runs per browser after one warm-up, each in a fresh page (a new browser context: no cache, nothing compiled). ` +
    'In each page the yardstick runs first: `WebAssembly.instantiate` of the bare module\'s bytes (the module `dist/index.js` ' +
    'embeds, as a `Uint8Array` already in the page); then the meter: `await import(\'dist/index.js\')` and `await createMeter({ onReport })`. ' +
    'Chromium: the main thread\'s CPU time (CDP `Performance.getMetrics` `ThreadTime`, read before and after) and the page\'s wall ' +
    'time; Firefox: wall time. Median (min–max), ms. The phone-like budget is CPU time × 4 plus the brotli bytes at 1.6 Mbps.',
    '',
    table(['what', 'Chromium main-thread CPU', 'Chromium wall', 'Firefox wall', 'brotli bytes', 'phone-like ms'], [
      row('**the meter: import to a ready `createMeter()`**', 'meter'),
      row('yardstick: `WebAssembly.instantiate` of the bare module', 'yardstick'),
    ], ['l', 'r', 'r', 'r', 'r', 'r']),
    '',
    `**Goal (start-up main-thread CPU at most ${GOAL_RATIO}× the yardstick's): ${met ? 'met' : '**missed**'}** — ${fmt(ratio, 2)}×.`,
  ].join('\n');
  return { body, goals: [{ name: `Start-up: main-thread CPU at most ${GOAL_RATIO}× WebAssembly.instantiate of the bare module`, value: `${fmt(cpu.meter, 2)} ms against ${fmt(cpu.yardstick, 2)} ms (${fmt(ratio, 2)}×)`, met }] };
}
