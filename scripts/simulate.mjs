// Fills the collector with really measured chats: headless Chromium (Debian's, via playwright-core)
// drives the demo chat page through a few hundred conversations, as users would, across models, API
// formats, scenarios, the A/B variants and the app's versions, several pages at once. Every figure is
// the meter's own measurement of a real stream painted in a real page; then the A/B summary is printed,
// and what GET /api/diagnosis finds in the run's window, as the dashboard would say it.
//
// Each cause the diagnosis names is in the traffic: a slow-start model (scripted-slow), stuttering ones
// (scripted-jittery, scripted-stalling), one behind a buffering proxy (scripted-buffered), a slow page
// (the share --heavy of users on app version 1.1-heavy) and, with --peak N, a load peak: odd UTC
// minutes run N pages at once, even ones --parallel, so the peak minutes carry more streams than the
// demo's LLM API serves at full speed (scripts/demo.mjs) and it slows.
//
//   npm start  # in another terminal, then:
//   npm run simulate [-- --chats 300 --parallel 6 --impatient 0.3 --heavy 0.2 --collector http://127.0.0.1:8787 --chat http://127.0.0.1:8080/www/chat/]
//   npm run simulate -- --standalone [--db data/beacons.db]   # starts its own collector and servers
//   npm run simulate -- --standalone --parallel 3 --peak 10 --chats 2000 --max-seconds 300   # quiet and peak minutes
import { parseArgs } from 'node:util';
import { launchChromium } from '../tests/js/browsers/chromium.mjs';
import { startDemo, DEFAULT_PORTS } from './demo.mjs';

const { values: options } = parseArgs({
  options: {
    chats: { type: 'string', default: '300' },
    parallel: { type: 'string', default: '6' },
    collector: { type: 'string', default: `http://127.0.0.1:${DEFAULT_PORTS.collector}` },
    chat: { type: 'string', default: `http://127.0.0.1:${DEFAULT_PORTS.chat}/www/chat/` },
    standalone: { type: 'boolean', default: false },
    db: { type: 'string', default: 'data/beacons.db' },
    'max-seconds': { type: 'string', default: '600' },
    seed: { type: 'string', default: '1' },
    impatient: { type: 'string', default: '0.3' },
    heavy: { type: 'string', default: '0.2' },
    peak: { type: 'string' },
  },
});
const CHATS = positive('chats');
const PARALLEL = positive('parallel');
const PEAK = options.peak === undefined ? null : positive('peak');
const DEADLINE = Date.now() + positive('max-seconds') * 1000;
// One chat never takes this long: the slowest profile's longest answer streams in about 11 s.
const CHAT_TIMEOUT_MS = 60_000;

// Traffic like a product's: mostly the fast model, some of each other profile; mostly short chats.
const MODELS = { 'scripted-fast': 4, 'scripted-jittery': 2.5, 'scripted-slow': 2, 'scripted-stalling': 1.5, 'scripted-buffered': 2 };
const FORMATS = { openai: 1, anthropic: 1, gemini: 1, ollama: 1, 'ai-sdk-ui': 1 };
const SCENARIOS = { chat: 5, rag: 3, code: 2 };
const PROMPTS = {
  chat: ['What is a good name for a cat?', 'Summarise our call in two lines.', 'How do I say thanks in Japanese?'],
  rag: ['What does the refund policy say about damaged items?', 'Which plan includes single sign-on?'],
  code: ['Write a function that merges two sorted arrays.', 'Refactor this loop into a map and a filter.'],
};
// A user's conversation is one browser session, 3 to 12 chats, in one variant (A and B take turns).
const SESSION_CHATS = [3, 12];
// Some users give up: this share of chats (--impatient) is watched for 2 to 10 s after the first token,
// then stopped if still streaming. A slow stream is stopped more often, as the dashboard's stops by TPOT show.
const IMPATIENT_SHARE = share('impatient');
const PATIENCE_MS = [2000, 10_000];
// A user's app version, for the whole session: this share (--heavy) have the one whose page is slow.
const HEAVY_SHARE = share('heavy');
const APP_VERSIONS = { normal: '1.0', heavy: '1.1-heavy' };

const random = mulberry32(Number(options.seed));
const demo = options.standalone ? await startDemo({ db: options.db }) : null;
const collectorUrl = demo?.collectorUrl ?? options.collector.replace(/\/$/, '');
const pageUrl = demo?.chatUrl ?? existingChatUrl(options.chat, collectorUrl);
let browser = null;
process.on('SIGINT', () => stop(130));
process.on('SIGTERM', () => stop(143));

try {
  await reachable(collectorUrl, pageUrl);
  browser = await launchChromium();
  const startedAt = Date.now();
  const tally = { started: 0, done: 0, failed: 0, stopped: 0, A: 0, B: 0 };
  const pages = PEAK ? `${PARALLEL} pages at once, ${PEAK} in odd UTC minutes` : `${PARALLEL} pages at once`;
  console.log(`simulate: ${CHATS} chats, ${pages}, on ${pageUrl}`);
  let nextVariant = 0;
  const progress = every(Math.max(1, Math.round(CHATS / 10)), () =>
    console.log(`simulate: ${tally.done + tally.failed}/${CHATS} chats · ${Math.round((Date.now() - startedAt) / 1000)} s · A ${tally.A} · B ${tally.B} · ${tally.failed} failed`));

  await Promise.all(Array.from({ length: Math.max(PARALLEL, PEAK ?? 0) }, async (_, page) => {
    while (tally.started < CHATS && Date.now() < DEADLINE) {
      if (page >= pagesNow()) {
        await untilNextMinute();
        continue;
      }
      const variant = nextVariant++ % 2 === 0 ? 'A' : 'B';
      const appVersion = random() < HEAVY_SHARE ? APP_VERSIONS.heavy : APP_VERSIONS.normal;
      const length = SESSION_CHATS[0] + Math.floor(random() * (SESSION_CHATS[1] - SESSION_CHATS[0] + 1));
      await session(page, { variant, appVersion }, length, tally, progress);
    }
  }));

  const finished = tally.done + tally.failed;
  console.log(`simulate: ${finished} chats in ${Math.round((Date.now() - startedAt) / 1000)} s (${tally.failed} failed, ${tally.stopped} stopped by the user)${finished < CHATS ? ': stopped at --max-seconds' : ''}`);
  // Every chat started before now: the window holds them all.
  const runWindow = { from: startedAt - 1000, to: Date.now() };
  await printSummary(runWindow, tally.done);
  await printDiagnosis(runWindow);
  console.log(`dashboard: ${collectorUrl}/`);
  await stop(tally.done > 0 ? 0 : 1);
} catch (error) {
  console.error(`simulate: ${error.message}`);
  await stop(1);
}

/** The pages at once now: --peak's in odd UTC minutes, else --parallel. */
function pagesNow() {
  return PEAK && new Date().getUTCMinutes() % 2 === 1 ? PEAK : PARALLEL;
}

/** Waits for the next UTC minute, or the deadline when that comes first. */
function untilNextMinute() {
  const now = Date.now();
  return new Promise((resolve) => setTimeout(resolve, Math.min(Math.ceil((now + 1) / 60_000) * 60_000, DEADLINE) - now));
}

/**
 * One user's conversation on the `slot`th page: a new browser context (a new session) in one variant
 * and app version, `length` chats (fewer when a peak ends and the slot is not needed), then the beacons flushed.
 */
async function session(slot, { variant, appVersion }, length, tally, progress) {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(pageUrl);
    await page.waitForFunction(() => window.chat?.ready);
    await page.selectOption('#variant', variant);
    await page.selectOption('#app', appVersion);
    for (let i = 0; i < length && slot < pagesNow() && tally.started < CHATS && Date.now() < DEADLINE; i++) {
      tally.started++;
      const status = await chat(page, pick(MODELS), pick(FORMATS), pick(SCENARIOS));
      tally[status ? 'done' : 'failed']++;
      if (status) tally[variant]++;
      if (status === 'aborted') tally.stopped++;
      progress();
    }
    await page.evaluate(() => window.chat.flush());
  } finally {
    await context.close();
  }
}

/**
 * Types a prompt and sends it with these settings, through the page's own controls; an impatient user
 * presses Stop when the answer still streams once their patience is over. The measured report's
 * status, or null when the chat was not measured.
 */
async function chat(page, model, format, scenario) {
  await page.selectOption('#model', model);
  await page.selectOption('#format', format);
  await page.selectOption('#scenario', scenario);
  const count = await page.evaluate(() => window.chat.answers.length);
  await page.fill('#prompt', PROMPTS[scenario][Math.floor(random() * PROMPTS[scenario].length)]);
  const patience = random() < IMPATIENT_SHARE ? PATIENCE_MS[0] + random() * (PATIENCE_MS[1] - PATIENCE_MS[0]) : null;
  await page.press('#prompt', 'Enter');
  const until = (condition, timeout) => page.waitForFunction(condition, count, { timeout, polling: 50 });
  const ended = (n) => ['done', 'failed'].includes(window.chat.answers[n]?.state);
  try {
    if (patience != null) {
      await until((n) => window.chat.answers[n]?.text || ['done', 'failed'].includes(window.chat.answers[n]?.state), CHAT_TIMEOUT_MS);
      const gaveUp = await until(ended, patience).then(() => false, () => true);
      // A click, not page.click: the stream may have ended meanwhile, and a disabled Stop does nothing.
      if (gaveUp) await page.evaluate(() => document.querySelector('#stop').click());
    }
    await until(ended, CHAT_TIMEOUT_MS);
  } catch {
    return null;
  }
  return page.evaluate((n) => (window.chat.answers[n].state === 'done' ? window.chat.answers[n].report.status : null), count);
}

/** Waits (up to 5 s) for the collector to hold the run's records, then prints the A/B summary. */
async function printSummary({ from, to }, expected) {
  const summary = async (groupBy) => {
    const response = await fetch(`${collectorUrl}/api/summary?from=${from}&to=${to}${groupBy ? `&groupBy=${groupBy}` : ''}`);
    if (!response.ok) throw new Error(`GET /api/summary answered ${response.status}: ${await response.text()}`);
    return response.json();
  };
  const total = async () => (await summary()).groups.reduce((sum, g) => sum + g.count, 0);
  const until = Date.now() + 5000;
  let stored = await total();
  while (stored < expected && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    stored = await total();
  }
  console.log(`collector: ${stored} records stored for this run (${expected} chats measured); GET /api/summary?groupBy=variant:`);
  const ms = (stats, q) => (stats?.[q] == null ? '–' : stats[q].toFixed(1));
  const percent = (share) => (share == null ? '–' : `${(share * 100).toFixed(1)}%`);
  const rows = (await summary('variant')).groups.map((g) => [
    g.key.variant ?? '(none)', String(g.count), ms(g.ttftMs, 'p50'), ms(g.ttftMs, 'p90'), ms(g.tpotMs, 'p50'), ms(g.tpotMs, 'p90'),
    ms(g.gapP90Ms, 'p50'), percent(g.stallRate), percent(g.stopRate),
  ]);
  const header = ['variant', 'streams', 'TTFT p50', 'TTFT p90', 'TPOT p50', 'TPOT p90', 'gap p90 (p50)', 'stall rate', 'stop rate'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  for (const row of [header, ...rows]) console.log(`  ${row.map((cell, i) => cell.padStart(widths[i])).join('  ')}`);
  console.log('  (times in ms: render TTFT and TPOT as painted in the page; B only adds follow-up suggestions: no difference expected)');
}

/** Prints the findings of GET /api/diagnosis for the run's window: what the dashboard would say. */
async function printDiagnosis({ from, to }) {
  const query = `from=${from}&to=${to}`;
  const response = await fetch(`${collectorUrl}/api/diagnosis?${query}`);
  if (!response.ok) throw new Error(`GET /api/diagnosis answered ${response.status}: ${await response.text()}`);
  const { findings } = await response.json();
  console.log(`collector: GET /api/diagnosis?${query}: ${findings.length ? `${findings.length} findings` : 'nothing found'}`);
  for (const { kind, severity, text } of findings) console.log(`  ${kind} (${severity}): ${text}`);
}

/** The running demo's chat page, told where the collector is when that is not where it looks by default. */
function existingChatUrl(chat, collector) {
  const url = new URL(chat);
  if (collector !== `http://127.0.0.1:${DEFAULT_PORTS.collector}`) url.searchParams.set('collector', collector);
  return url.href;
}

async function reachable(collector, page) {
  for (const [what, url] of [['the collector', `${collector}/health`], ['the chat page', page]]) {
    const ok = await fetch(url).then((r) => r.ok, () => false);
    if (!ok) throw new Error(`${what} is not reachable at ${url}: start the demo first (npm start), or pass --standalone`);
  }
}

async function stop(code) {
  await browser?.close().catch(() => {});
  await demo?.close();
  process.exit(code);
}

function share(name) {
  const value = Number(options[name]);
  if (!(value >= 0 && value <= 1)) {
    console.error(`simulate: --${name} must be a share from 0 to 1`);
    process.exit(2);
  }
  return value;
}

function positive(name) {
  const value = Number(options[name]);
  if (!Number.isInteger(value) || value < 1) {
    console.error(`simulate: --${name} must be a positive integer`);
    process.exit(2);
  }
  return value;
}

/** Picks a key of `weights` with probability proportional to its weight. */
function pick(weights) {
  const entries = Object.entries(weights);
  let r = random() * entries.reduce((sum, [, w]) => sum + w, 0);
  for (const [key, weight] of entries) if ((r -= weight) < 0) return key;
  return entries.at(-1)[0];
}

/** Calls `fn` on every `n`th call. */
function every(n, fn) {
  let calls = 0;
  return () => { if (++calls % n === 0) fn(); };
}

// Seeded: every run draws the same sequence of sessions and chats (the pages take them in varying order).
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
