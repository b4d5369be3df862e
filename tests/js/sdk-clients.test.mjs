// Real client SDKs in each browser engine (Chromium, Firefox, WebKit), against the scripted server:
// openai-node with `wrapFetch`, the AI SDK's DefaultChatTransport and a plain fetch reader through
// `installFetch`. Each stream must give exactly one report whose arrival timings match the schedule
// the server played, while the app still renders the exact answer (the meter passes every byte
// through), and a non-streaming fetch must pass through untouched and unreported. The page logic is in
// tests/js/sdk-app/main.js.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { build } from 'vite';
import { serveStatic } from '../../scripts/serve.mjs';
import { startScriptedServer, planOffsets, resolveSchedule, answerTokens } from '../../scripts/scripted-llm-server.mjs';
import { forEachEngine, pageProblems } from './browsers/index.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));

// Loopback bounds. TTFT: the page starts its clock when it calls fetch, the server when the POST
// arrives, so the measured TTFT is the planned offset plus the CORS preflight where one is due (JSON and
// the SDKs' custom headers need one), the request's trip and the first event's delivery to the page's
// main thread. The server sends its headers when the POST arrives, so the report's TTFB holds the first
// two and their way back (4 to 25 ms on a warm loopback page, Firefox the slowest; in CI once the whole
// TTFT was 27 ms late) and is bounded apart, loosely; TTFT after TTFB is the planned offset, give or take
// the event's delivery against the headers' (-5 to +4 ms measured): at most 25 ms late leaves room for
// a busy machine, and never earlier than planned holds for the TTFT itself. TPOT is
// (last arrival - first arrival) / (N - 1): the server writes every event on its absolute target, so
// only the first and last deliveries' lateness counts, divided by N - 1 (24 to 39 here); 2 ms is then
// a generous bound.
const TTFT_SLACK_MS = 25;
const TTFB_BOUND_MS = 100;
const TPOT_SLACK_MS = 2;

let outDir;
let site;
let llm;

async function buildApp() {
  // Others may be rebuilding dist/ while this runs: wait for a complete package, and retry once.
  for (let attempt = 0; ; attempt += 1) {
    for (let i = 0; i < 300 && !(existsSync(join(root, 'dist/index.js'))); i += 1) await sleep(100);
    try {
      await build({
        root: join(root, 'tests/js/sdk-app'),
        logLevel: 'warn',
        resolve: { alias: { 'llm-ux-meter': root } },
        build: { outDir, emptyOutDir: true, target: 'es2022', chunkSizeWarningLimit: 4096 },
      });
      return;
    } catch (error) {
      if (attempt > 0) throw error;
      await sleep(2000);
    }
  }
}

before(async () => {
  outDir = mkdtempSync(join(tmpdir(), 'llm-ux-meter-sdk-'));
  [, llm] = await Promise.all([buildApp(), startScriptedServer({ port: 0 })]);
  site = await serveStatic(outDir);
}, { timeout: 45_000 });

after(async () => {
  site?.close();
  await llm?.close();
  if (outDir) rmSync(outDir, { recursive: true, force: true });
});

/** Checks the arrival timings against the planned offsets; returns the deltas (measured - planned). */
function checkTimings(t, report, offsets, label) {
  const ttftDelta = report.ttftArrivalMs - offsets[0];
  const afterHeaders = report.ttftArrivalMs - report.ttfbMs - offsets[0];
  // TPOT divides by the report's N (usage or estimate), so the planned figure does too.
  const plannedTpot = (offsets.at(-1) - offsets[0]) / (report.outputTokens - 1);
  const tpotDelta = report.tpotArrivalMs - plannedTpot;
  t.diagnostic(`${label}: ttftArrivalMs ${report.ttftArrivalMs.toFixed(2)} (planned ${offsets[0]}, +${ttftDelta.toFixed(2)} ms; ttfbMs ${report.ttfbMs.toFixed(2)}), ` +
    `tpotArrivalMs ${report.tpotArrivalMs.toFixed(3)} (planned ${plannedTpot.toFixed(3)}, ${tpotDelta >= 0 ? '+' : ''}${tpotDelta.toFixed(3)} ms), ` +
    `ttftMs ${report.ttftMs?.toFixed(2)} (${report.renderSource})`);
  // Never earlier than planned (the client's clock starts first), allowing for timer coarsening.
  assert.ok(ttftDelta >= -1, `${label}: ttftArrivalMs ${report.ttftArrivalMs} before planned ${offsets[0]}`);
  assert.ok(report.ttfbMs >= 0 && report.ttfbMs <= TTFB_BOUND_MS, `${label}: ttfbMs ${report.ttfbMs} (preflight and request trip)`);
  assert.ok(afterHeaders <= TTFT_SLACK_MS, `${label}: ttftArrivalMs ${report.ttftArrivalMs} - ttfbMs ${report.ttfbMs} vs planned ${offsets[0]}`);
  assert.ok(Math.abs(tpotDelta) <= TPOT_SLACK_MS, `${label}: tpotArrivalMs ${report.tpotArrivalMs} vs planned ${plannedTpot}`);
  // Painted after it arrived, measured from the DOM of the metered container.
  assert.equal(report.renderSource, 'dom');
  assert.ok(report.ttftMs >= report.ttftArrivalMs, `${label}: painted (${report.ttftMs}) before arrival (${report.ttftArrivalMs})`);
  return { ttftDelta, tpotDelta };
}

async function checkPage(page, result) {
  assert.deepEqual(await pageProblems(page), []);
  assert.equal(result.enabled, true);
  assert.equal(result.errors, 0);
}

forEachEngine((_engine, browser) => {
  let page;
  before(async () => {
    page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${site.address().port}/?server=${encodeURIComponent(llm.url)}`);
    await page.waitForFunction(() => window.ready === true, null, { timeout: 10_000 });
    // One short stream first, so the timed ones measure a warm page (see warmUp in main.js).
    const warm = await page.evaluate(() => window.warmUp());
    assert.deepEqual(warm.reports.map((r) => r.status), ['ok']);
  }, { timeout: 45_000 });

  test('openai-node in the browser, metered with wrapFetch', { timeout: 15_000 }, async (t) => {
    const result = await page.evaluate(() => window.openaiSdk({ model: 'fast' }));
    await checkPage(page, result);
    assert.equal(result.fetchPatched, false, 'wrapFetch must not touch globalThis.fetch');
    const schedule = resolveSchedule('fast');
    const offsets = planOffsets(schedule);
    assert.deepEqual(result.schedule.offsetsMs, offsets, 'the server played the schedule computed here');
    assert.equal(result.metered, true, 'streamOf knows the response the SDK got');
    assert.equal(result.usage?.completion_tokens, schedule.tokens);

    assert.equal(result.reports.length, 1, JSON.stringify(result.reports));
    const [report] = result.reports;
    assert.equal(report.format, 'openai');
    // openai-node cancels the body after [DONE]: the meter had the whole stream, so it is ok.
    assert.equal(report.status, 'ok');
    assert.equal(report.httpStatus, 200);
    assert.equal(report.model, 'fast');
    assert.equal(report.finishReason, 'stop');
    assert.equal(report.tokenSource, 'usage');
    assert.equal(report.outputTokens, schedule.tokens);
    assert.equal(report.outputEventsByKind.answer, schedule.tokens);
    checkTimings(t, report, offsets, 'openai-node');
    assert.equal(result.text, answerTokens(schedule.tokens, schedule.seed).join(''));

    const connection = llm.connections().find((c) => c.id === result.connection);
    assert.equal(connection.method, 'POST');
    assert.equal(connection.path, '/v1/chat/completions');
    assert.ok(connection.closedAt !== null && connection.closedBy !== null, `connection still open: ${JSON.stringify(connection)}`);
  });

  test('the AI SDK DefaultChatTransport through the patched global fetch', { timeout: 15_000 }, async (t) => {
    const installed = await page.evaluate(() => window.installFetch());
    assert.equal(installed.fetchPatched, true);
    const query = { tokens: '30', ttftMs: '120', tokenMs: '12', seed: '7' };
    const result = await page.evaluate((q) => window.aiSdkTransport({ query: q }), `?${new URLSearchParams(query)}`);
    await checkPage(page, result);
    const schedule = resolveSchedule('scripted', null, query);
    const offsets = planOffsets(schedule);
    assert.ok(result.kinds.includes('finish'), `chunks: ${result.kinds}`);

    assert.equal(result.reports.length, 1, JSON.stringify(result.reports));
    const [report] = result.reports;
    assert.equal(report.format, 'ai-sdk-ui');
    assert.equal(report.status, 'ok');
    assert.equal(report.outputEventsByKind.answer, schedule.tokens);
    // The UI message stream carries no token usage the meter reads: N is estimated from the text.
    assert.equal(report.tokenSource, 'estimate');
    assert.ok(report.outputTokens > 0);
    checkTimings(t, report, offsets, 'ai-sdk-ui');
    assert.equal(result.text, answerTokens(schedule.tokens, schedule.seed).join(''));

    const connection = llm.connections().filter((c) => c.method === 'POST' && c.path === '/api/ui-chat').at(-1);
    assert.ok(connection.closedAt !== null, `connection still open: ${JSON.stringify(connection)}`);
  });

  test('plain fetch and a reader over an Anthropic stream, through the patched global fetch', { timeout: 15_000 }, async (t) => {
    const schedule = { tokens: 25, ttftMs: 200, tokenMs: 10, seed: 3 };
    const result = await page.evaluate((args) => window.plainAnthropic(args), { model: 'claude-scripted', schedule });
    await checkPage(page, result);
    const resolved = resolveSchedule('claude-scripted', schedule);
    const offsets = planOffsets(resolved);
    assert.deepEqual(result.schedule.offsetsMs, offsets);
    assert.equal(result.metered, true);

    assert.equal(result.reports.length, 1, JSON.stringify(result.reports));
    const [report] = result.reports;
    assert.equal(report.format, 'anthropic');
    assert.equal(report.status, 'ok');
    assert.equal(report.model, 'claude-scripted');
    assert.equal(report.finishReason, 'end_turn');
    assert.equal(report.tokenSource, 'usage');
    assert.equal(report.outputTokens, schedule.tokens);
    assert.equal(report.outputEventsByKind.answer, schedule.tokens);
    checkTimings(t, report, offsets, 'anthropic');
    assert.equal(result.text, answerTokens(schedule.tokens, schedule.seed).join(''));

    const connection = llm.connections().find((c) => c.id === result.connection);
    assert.equal(connection.closedBy, 'server');
  });

  test('a non-streaming fetch through the patched fetch is passed through and not reported', { timeout: 10_000 }, async () => {
    const result = await page.evaluate(() => window.plainPage());
    await checkPage(page, result);
    assert.equal(result.fetchPatched, true);
    assert.deepEqual(result.reports, []);
    assert.equal(result.same, true, 'same body as the unpatched fetch');
    assert.ok(result.length > 0);
    assert.equal(result.status, 200);
    assert.match(result.contentType, /^text\/html/);
    assert.equal(result.metered, false);
  });
});
