// The whole path, all real: headless Chromium loads the demo chat page (scripts/demo.mjs), which streams
// answers from the scripted LLM server through its hooked fetch, paints them token by token and sends
// beacons to the collector binary (on a temporary SQLite database); the analytics API must then show
// every chat with its dimensions and the timing the server was scripted to produce, soon after the
// beacon was answered, and no prompt or answer text may reach the collector.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDemo } from '../../scripts/demo.mjs';
import { launchChromium } from './browsers/chromium.mjs';

const FRAME_MS = 1000 / 60;
// One of each format, both variants, each profile but the slow one, each scenario.
const CHATS = [
  { model: 'scripted-fast', format: 'openai', scenario: 'chat', variant: 'A' },
  { model: 'scripted-jittery', format: 'anthropic', scenario: 'code', variant: 'B' },
  { model: 'scripted-fast', format: 'gemini', scenario: 'rag', variant: 'A' },
  { model: 'scripted-stalling', format: 'ollama', scenario: 'chat', variant: 'B' },
  { model: 'scripted-fast', format: 'ai-sdk-ui', scenario: 'code', variant: 'A' },
];
const PROMPT_MARKER = `zebra${randomBytes(6).toString('hex')}`;

let dir, db, demo, browser;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'llm-ux-e2e-'));
  db = join(dir, 'beacons.db');
  demo = await startDemo({ db });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await demo?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function summary(query) {
  const response = await fetch(`${demo.collectorUrl}/api/summary?${query}`);
  assert.equal(response.status, 200, await response.clone().text());
  return response.json();
}
const total = (s) => s.groups.reduce((sum, g) => sum + g.count, 0);

/**
 * The scheduled truth of an answer from the server's x-scripted-schedule header: the first token
 * reaches the page with the first network write (the last event of the first group when the server
 * writes several at once), and TPOT spreads the rest over the meter's N − 1 intervals.
 */
function truth(schedule, outputTokens) {
  const offsets = schedule.offsetsMs;
  const first = offsets[Math.min(schedule.eventsPerWrite, offsets.length) - 1];
  return { ttftMs: first, tpotMs: (offsets.at(-1) - first) / (outputTokens - 1) };
}

/** Sends one chat through the page's controls; resolves its answer and how the beacon carrying it went. */
async function chat(page, { model, format, scenario, variant }, from) {
  for (const [select, value] of Object.entries({ model, format, scenario, variant })) await page.selectOption(`#${select}`, value);
  const index = await page.evaluate(() => window.chat.answers.length);
  const beacon = page.waitForResponse((r) => r.url().startsWith(`${demo.collectorUrl}/v1/beacons`));
  await page.fill('#prompt', `Tell me about ${PROMPT_MARKER}, please.`);
  await page.click('#send');
  await page.waitForFunction((n) => ['done', 'failed'].includes(window.chat.answers[n]?.state), index);
  await page.evaluate(() => window.chat.flush());
  const answered = await beacon;
  const answeredAt = Date.now();
  // The record is there within a second of the collector's answer: poll for it.
  let stored = total(await summary(`from=${from}`));
  while (stored < index + 1 && Date.now() - answeredAt < 1000) stored = total(await summary(`from=${from}`));
  const visibleAfterMs = Date.now() - answeredAt;
  const answer = await page.evaluate((n) => {
    const { state, text, schedule, report } = window.chat.answers[n];
    return { state, text, schedule, report };
  }, index);
  return { answer, beacon: { status: answered.status(), stored, visibleAfterMs } };
}

test('each chat in the demo page reaches the collector within a second, with its dimensions and scheduled timing, and no text', async () => {
  const from = Date.now() - 1000;
  const page = await browser.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(String(e)));
  await page.goto(demo.chatUrl);
  await page.waitForFunction(() => window.chat?.ready);

  const results = [];
  for (const [i, settings] of CHATS.entries()) {
    const { answer, beacon } = await chat(page, settings, from);
    assert.equal(answer.state, 'done', `${settings.format}: ${answer.text}`);
    assert.equal(beacon.status, 200);
    assert.equal(beacon.stored, i + 1, `${settings.format}: ${beacon.stored} records visible ${beacon.visibleAfterMs} ms after the beacon's 200`);
    assert.ok(beacon.visibleAfterMs <= 1000, `${settings.format}: visible ${beacon.visibleAfterMs} ms after the beacon's 200`);
    results.push({ settings, answer, visibleAfterMs: beacon.visibleAfterMs });
  }

  const byDimensions = await summary(`from=${from}&groupBy=model,scenario,variant`);
  assert.equal(byDimensions.groups.length, CHATS.length, JSON.stringify(byDimensions.groups.map((g) => g.key)));
  for (const { settings, answer: { report, schedule }, visibleAfterMs } of results) {
    const { format, ...dimensions } = settings;
    assert.equal(report.format, format);
    assert.equal(report.status, 'ok', format);
    const group = byDimensions.groups.find((g) => g.key.model === dimensions.model && g.key.scenario === dimensions.scenario && g.key.variant === dimensions.variant);
    assert.ok(group, `${format}: a group keyed ${JSON.stringify(dimensions)}`);
    assert.equal(group.count, 1, format);
    // What the collector holds is what the page measured: means are exact, percentiles within the
    // sketch's 1% relative error.
    for (const metric of ['ttftMs', 'tpotMs']) {
      assert.ok(Math.abs(group[metric].mean - report[metric]) < 1e-9, `${format} ${metric}: collector mean ${group[metric].mean}, page ${report[metric]}`);
      assert.ok(Math.abs(group[metric].p50 - report[metric]) <= report[metric] * 0.01, `${format} ${metric}: collector p50 ${group[metric].p50}, page ${report[metric]}`);
    }
    // And what the page measured is the schedule, within the capture tests' bounds (arrival at most
    // 10 ms after the planned time, TPOT within min(2 ms, 1% + 0.25 ms)) plus the paint: the page
    // paints in the frame after the text arrived, and the meter's paint time is within a frame of it.
    const expected = truth(schedule, report.outputTokens);
    const ttftDelta = group.ttftMs.mean - expected.ttftMs;
    const tpotDelta = group.tpotMs.mean - expected.tpotMs;
    const tpotBound = Math.min(2, expected.tpotMs * 0.01 + 0.25) + (2 * FRAME_MS) / (report.outputTokens - 1);
    console.log(`e2e (${format}, ${dimensions.model}, ${dimensions.variant}): TTFT ${ttftDelta.toFixed(2)} ms and TPOT ${tpotDelta.toFixed(3)} ms (bound ${tpotBound.toFixed(3)}) from the schedule; stored ${visibleAfterMs} ms after the beacon's 200`);
    assert.ok(ttftDelta >= 0 && ttftDelta <= 10 + 2 * FRAME_MS, `${format}: TTFT ${group.ttftMs.mean} ms, scheduled ${expected.ttftMs} ms`);
    assert.ok(Math.abs(tpotDelta) <= tpotBound, `${format}: TPOT ${group.tpotMs.mean} ms, scheduled ${expected.tpotMs} ms`);
  }

  const byVariant = await summary(`from=${from}&groupBy=variant`);
  assert.deepEqual(Object.fromEntries(byVariant.groups.map((g) => [g.key.variant, g.count])), { A: 3, B: 2 });

  // No text reaches the collector: neither the prompt's marker nor any three-word run of an answer is in
  // the database files (the WAL too) or the collector's output, where each record's id is.
  const stored = Buffer.concat([db, `${db}-wal`].filter(existsSync).map((file) => readFileSync(file)));
  const output = demo.collector.output();
  for (const { answer } of results) assert.ok(stored.includes(answer.report.id), `record ${answer.report.id} is in the database files`);
  const phrases = results.flatMap(({ answer }) => {
    const words = answer.text.split(/\s+/).filter(Boolean);
    return words.slice(2).map((_, i) => words.slice(i, i + 3).join(' ')).filter((phrase) => phrase.length >= 12);
  });
  assert.ok(phrases.length > 50, `${phrases.length} phrases`);
  for (const text of [PROMPT_MARKER, ...phrases]) {
    for (const form of new Set([text, JSON.stringify(text).slice(1, -1)])) {
      assert.ok(!stored.includes(form), `${JSON.stringify(form)} is in the database`);
      assert.ok(!output.includes(form), `${JSON.stringify(form)} is in the collector's output`);
    }
  }
  assert.deepEqual(problems, []);
  await page.close();
});
