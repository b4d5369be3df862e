// The package in a Next.js App Router app (tests/js/apps/next: useChat from @ai-sdk/react, a route that
// streams an AI SDK UI message stream) with no next.config at all, in the four ways users run Next:
// `next build` then `next start` with Turbopack (the default) and with webpack, and `next dev` with each.
// Each time a user chats in headless Chromium: the meter must load, report the scripted answer's schedule,
// and leave the app's bytes untouched; and the page, which imports the package, must render on the server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { launchChromium } from './browsers/chromium.mjs';
import { freePorts } from './lib/free-ports.mjs';
import { installApp, packTarball } from './packed-app.mjs';

// The route's schedule and text (tests/js/apps/next/app/api/chat/route.js): 30 deltas of one word each,
// which the meter's token estimate counts as one token each (the stream carries no usage).
const FIRST_MS = 200;
const EVERY_MS = 25;
const ANSWER = 'Alpha bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu one café 日 🙂';
const DELTAS = ANSWER.split(/(?= )/).length;
// Arrival TPOT is (last − first arrival) / 29 over a 725 ms span: ±3 ms is ±87 ms of drift, far more
// than this machine's timers and loopback show, and far less than a meter off by one or more events or
// tokens (725 / 28 = 25.9 stays inside, hence the exact counts checked too).
const TPOT_TOLERANCE_MS = 3;
// The first delta leaves the server 200 ms after the request came in; measured 210 to 240 ms here (716 ms
// once, in dev on a loaded machine). The upper bound only catches a stream timed from something else.
const TTFT_SLACK_MS = 1000;
// The static markup of app/page.js, as the server must render it.
const STATIC_MARKUP = ['<h1>llm-ux-meter in Next.js</h1>', '<div id="messages"></div>', 'aria-label="Message"'];

const SERVER_WAIT_MS = 120_000;
const MODE_TIMEOUT_MS = 240_000;

let app;
let browser;
const running = new Set();

before(async () => {
  app = installApp('next', packTarball());
  browser = await launchChromium();
}, { timeout: 600_000 });

after(async () => {
  await Promise.all([...running].map(stop));
  await browser?.close();
});

/** Starts `next ...args` in the app in a process group of its own (Next forks workers). */
function next(args) {
  const child = spawn(process.execPath, [join(app, 'node_modules/next/dist/bin/next'), ...args], {
    cwd: app,
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1', NODE_ENV: undefined },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.output = '';
  child.stdout.on('data', (data) => { child.output += data; });
  child.stderr.on('data', (data) => { child.output += data; });
  child.exited = once(child, 'exit');
  running.add(child);
  child.exited.then(() => running.delete(child));
  return child;
}

/** Ends the whole process group: SIGTERM, then SIGKILL for anything left after 5 s. */
async function stop(child) {
  const signal = (name) => {
    try {
      process.kill(-child.pid, name);
    } catch (error) {
      if (error.code !== 'ESRCH') throw error;
    }
  };
  signal('SIGTERM');
  await Promise.race([child.exited, sleep(5000, null, { ref: false })]);
  signal('SIGKILL');
  running.delete(child);
}

/** Runs `next ...args` to its end, within `timeoutMs`; returns its output, or throws with it. */
async function runNext(args, timeoutMs) {
  const child = next(args);
  const timer = sleep(timeoutMs, 'timeout', { ref: false });
  const outcome = await Promise.race([child.exited, timer]);
  if (outcome === 'timeout') {
    await stop(child);
    throw new Error(`next ${args.join(' ')} took more than ${timeoutMs} ms:\n${child.output}`);
  }
  const [code] = outcome;
  assert.equal(code, 0, `next ${args.join(' ')} failed:\n${child.output}`);
  return child.output;
}

/** Starts `next <command>` on a free port; resolves once `/` answers 200, with the server's HTML for it. */
async function serve(command) {
  const [port] = await freePorts(1);
  const child = next([...command, '-H', '127.0.0.1', '-p', String(port)]);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + SERVER_WAIT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`next ${command.join(' ')} exited:\n${child.output}`);
    if (Date.now() > deadline) throw new Error(`next ${command.join(' ')} did not answer within ${SERVER_WAIT_MS} ms:\n${child.output}`);
    try {
      // A dev server compiles the page on this first request, so it may take seconds.
      const response = await fetch(`${url}/`, { signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())) });
      if (response.ok) return { child, url, html: await response.text() };
    } catch {
      // Not listening yet.
    }
    await sleep(200);
  }
}

/** The text deltas of an AI SDK UI message stream, as a client that reads it all gets them. */
async function routeText(url) {
  const response = await fetch(`${url}/api/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'warm-up', messages: [], trigger: 'submit-message' }),
    signal: AbortSignal.timeout(60_000),
  });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('x-vercel-ai-ui-message-stream'), 'v1');
  let text = '';
  for (const line of (await response.text()).split('\n')) {
    if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
    const chunk = JSON.parse(line.slice(6));
    if (chunk.type === 'text-delta') text += chunk.delta;
  }
  return text;
}

function assertStaticMarkup(html, where) {
  for (const markup of STATIC_MARKUP) assert.ok(html.includes(markup), `${where} lacks ${markup}:\n${html.slice(0, 2000)}`);
}

/** A user opens the page, types a message and sends it; returns what the page and the meter showed. */
async function chat(url) {
  const page = await browser.newPage();
  const errors = [];
  const warnings = [];
  page.on('pageerror', (error) => errors.push(`pageerror: ${error}`));
  page.on('console', (message) => {
    if (message.type() === 'warning') warnings.push(message.text());
    // Next serves no favicon.ico unless the app has one, and Chromium asks for it.
    if (message.type() === 'error' && !message.location().url.endsWith('/favicon.ico')) errors.push(`console.error: ${message.text()} (${message.location().url})`);
  });
  try {
    await page.goto(`${url}/`, { timeout: 60_000 });
    // Set after installFetch: the page is hydrated and the meter is hooked.
    await page.waitForFunction(() => window.llmUxMeterReady === true, null, { timeout: 60_000 });
    await page.getByLabel('Message').pressSequentially('How fast is this?', { timeout: 10_000 });
    await page.getByRole('button', { name: 'Send' }).click({ timeout: 10_000 });
    await page.waitForFunction(() => window.llmUxReports?.length > 0, null, { timeout: 30_000 });
    // A quiet spell, so a second report of the same stream would show.
    await sleep(300);
    const seen = await page.evaluate(async () => ({
      enabled: window.llmUxMeter.enabled,
      meterErrors: window.llmUxMeter.errors,
      reports: window.llmUxReports,
      effects: window.llmUxEffects,
      question: document.querySelector('#messages [data-role="user"]')?.textContent,
      answer: document.querySelector('#messages [data-role="assistant"]')?.textContent,
      // Destroying the meter the page kept must give back the browser's own fetch: a meter created by
      // an effect run that was cleaned up first would still be hooked underneath.
      fetchRestored: await window.llmUxMeter.destroy().then(() => /\[native code\]/.test(String(globalThis.fetch))),
    }));
    return { ...seen, errors, warnings };
  } finally {
    await page.close();
  }
}

function checkChat(t, seen, sent, { dev }) {
  if (seen.warnings.length) t.diagnostic(`console warnings: ${JSON.stringify(seen.warnings)}`);
  assert.deepEqual(seen.errors, []);
  assert.equal(seen.enabled, true, 'meter.enabled');
  // In dev, React's StrictMode mounts the page, cleans up and mounts again: the race the page handles.
  if (dev) assert.ok(seen.effects >= 2, `the effect ran ${seen.effects} times in dev`);
  else assert.equal(seen.effects, 1);
  assert.equal(seen.fetchRestored, true, 'only the live meter hooked fetch');
  assert.equal(seen.meterErrors, 0, 'meter.errors');
  assert.equal(seen.question, 'How fast is this?');
  // The bytes reached the app unchanged: the page shows exactly what the route sent.
  assert.equal(sent, ANSWER, 'the route sent the scripted text');
  assert.equal(seen.answer, ANSWER, 'the page shows the answer as sent');
  assert.equal(seen.reports.length, 1, `one report per stream, from one meter:\n${JSON.stringify(seen.reports)}`);
  const [r] = seen.reports;
  t.diagnostic(`ttftArrivalMs ${r.ttftArrivalMs.toFixed(2)}, tpotArrivalMs ${r.tpotArrivalMs.toFixed(3)}, ttftMs ${r.ttftMs?.toFixed(2)}, tpotMs ${r.tpotMs?.toFixed(3)}, arrival gaps ${JSON.stringify(r.arrivalGaps)}`);
  assert.equal(r.status, 'ok');
  assert.equal(r.format, 'ai-sdk-ui');
  assert.equal(r.renderSource, 'dom');
  assert.equal(r.scenario, 'next');
  assert.equal(new URL(r.url).pathname, '/api/chat');
  assert.equal(r.outputEvents, DELTAS);
  assert.equal(r.tokenSource, 'estimate');
  assert.equal(r.outputTokens, DELTAS);
  assert.ok(r.ttftArrivalMs >= FIRST_MS && r.ttftArrivalMs < FIRST_MS + TTFT_SLACK_MS, `ttftArrivalMs ${r.ttftArrivalMs}`);
  assert.ok(Math.abs(r.tpotArrivalMs - EVERY_MS) <= TPOT_TOLERANCE_MS, `tpotArrivalMs ${r.tpotArrivalMs}`);
  assert.ok(r.ttftMs >= r.ttftArrivalMs, `ttftMs ${r.ttftMs} painted before arrival ${r.ttftArrivalMs}`);
}

const MODES = [
  { name: 'next build (Turbopack) then next start', build: ['build'], serve: ['start'] },
  { name: 'next build --webpack then next start', build: ['build', '--webpack'], serve: ['start'] },
  { name: 'next dev (Turbopack)', serve: ['dev'] },
  { name: 'next dev --webpack', serve: ['dev', '--webpack'] },
];

for (const mode of MODES) {
  test(mode.name, { timeout: MODE_TIMEOUT_MS }, async (t) => {
    const t0 = performance.now();
    const since = () => `${((performance.now() - t0) / 1000).toFixed(1)} s`;
    rmSync(join(app, '.next'), { recursive: true, force: true });
    if (mode.build) {
      const output = await runNext(mode.build, 180_000);
      t.diagnostic(`built in ${since()}`);
      const warnings = output.split('\n').filter((line) => line.includes('⚠'));
      if (warnings.length) t.diagnostic(`build warnings: ${warnings.join(' | ')}`);
      // Prerendered at build time: the page that imports the package rendered on the server. (Turbopack
      // keeps the package in the server bundle; webpack drops it there, with the useEffect that Next strips
      // from production server builds and the package's sideEffects: false. next dev keeps it in both.)
      assertStaticMarkup(readFileSync(join(app, '.next/server/app/index.html'), 'utf8'), 'the prerendered /');
    }
    const server = await serve(mode.serve);
    try {
      assertStaticMarkup(server.html, 'the server-rendered /');
      t.diagnostic(`serving after ${since()}`);
      // Once before the user: a dev server compiles the route on its first request.
      const sent = await routeText(server.url);
      checkChat(t, await chat(server.url), sent, { dev: !mode.build });
    } finally {
      await stop(server.child);
    }
    t.diagnostic(`${mode.name}: ${since()}`);
  });
}
