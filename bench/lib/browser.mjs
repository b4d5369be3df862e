// Headless Chromium for the bench: Debian's /usr/bin/chromium through playwright-core (never a
// downloaded browser), the same flags as the browser tests, and CDP helpers (GC, heap, CPU profile).
// The bench page opens in Firefox too (lib/firefox.mjs), without the CDP helpers.
import { chromium } from 'playwright-core';

export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

export function launchChromium() {
  return chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
}

/** The browsers the bench page opens in (`openBenchPage`'s `engine`), with their names. */
export const ENGINES = { chromium: 'Chromium', firefox: 'Firefox' };

/**
 * Opens the bench page in `engine` (a key of ENGINES) and waits for its module to load; page errors
 * are collected in `problems`. `cdp` and its helpers are Chromium's only (null in Firefox).
 */
export async function openBenchPage(ctx, engine = 'chromium') {
  const page = await (engine === 'firefox' ? ctx.firefox : ctx.browser).newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(String(e)));
  page.setDefaultTimeout(120_000);
  await page.goto(`${ctx.site.url}/bench/pages/bench.html`);
  await page.waitForFunction(() => window.ready === true || window.loadError, null, { timeout: 30_000 });
  const loadError = await page.evaluate(() => window.loadError ?? null);
  if (loadError) throw new Error(`bench page failed to load: ${loadError}`);
  const cdp = engine === 'chromium' ? await page.context().newCDPSession(page) : null;
  let metricsOn = false;
  return {
    page,
    cdp,
    problems,
    /** The smallest step of the page's `performance.now()` in ms (coarsened by the browser unless cross-origin isolated). */
    clockStepMs: () => page.evaluate(() => {
      let step = Infinity;
      let last = performance.now();
      for (const end = last + 50; last < end;) {
        const now = performance.now();
        if (now > last) step = Math.min(step, now - last);
        last = now;
      }
      return Math.round(step * 1000) / 1000; // to the µs: 0.1, not 0.09999999
    }),
    /** Full GC (twice: a second pass collects what the first finalised). */
    async gc() {
      await cdp.send('HeapProfiler.collectGarbage');
      await cdp.send('HeapProfiler.collectGarbage');
    },
    /** The page's main-thread CPU time so far, in ms (CDP `Performance.getMetrics`, `ThreadTime`). */
    async threadMs() {
      if (!metricsOn) {
        await cdp.send('Performance.enable');
        metricsOn = true;
      }
      const { metrics } = await cdp.send('Performance.getMetrics');
      return metrics.find((m) => m.name === 'ThreadTime').value * 1000;
    },
    /** JS heap bytes in use after a full GC. */
    async heapUsed() {
      await this.gc();
      return (await cdp.send('Runtime.getHeapUsage')).usedSize;
    },
    /** Runs `fn` under the V8 sampling profiler (interval in µs); resolves to [fn's result, profile]. */
    async profile(fn, intervalUs = 100) {
      await cdp.send('Profiler.enable');
      await cdp.send('Profiler.setSamplingInterval', { interval: intervalUs });
      await cdp.send('Profiler.start');
      let result;
      let profile;
      try {
        result = await fn();
      } finally {
        ({ profile } = await cdp.send('Profiler.stop'));
        await cdp.send('Profiler.disable');
      }
      return [result, profile];
    },
    close: () => page.close(),
  };
}
