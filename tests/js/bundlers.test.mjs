// The package works in a real browser both ways users load it: a plain <script type="module"> and a
// Vite production build. Each page replays the timed fixture and must get the hand-computed report.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import { serveStatic } from '../../scripts/serve.mjs';
import { launchChromium } from './browser.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const expected = JSON.parse(readFileSync(join(root, 'tests/fixtures/replay/openai-timed.json'), 'utf8')).expected;
let browser;
const servers = [];

before(async () => {
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  servers.forEach((s) => s.close());
});

async function reportFrom(url) {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e));
  await page.goto(url);
  await page.waitForFunction(() => window.result, null, { timeout: 10_000 });
  const result = await page.evaluate(() => window.result);
  await page.close();
  assert.deepEqual(errors, []);
  return result;
}

function checkReport(result, scenario) {
  assert.equal(result.enabled, true);
  const r = result.report;
  assert.equal(r.scenario, scenario);
  for (const key of ['format', 'model', 'status', 'ttftMs', 'ttftArrivalMs', 'tpotMs', 'tpotArrivalMs', 'outputTokens', 'stalls']) {
    assert.deepEqual(r[key], expected[key], key);
  }
}

test('a plain <script type="module"> page', async () => {
  const server = await serveStatic(root);
  servers.push(server);
  checkReport(await reportFrom(`http://127.0.0.1:${server.address().port}/tests/js/pages/plain.html`), 'plain');
});

test('a Vite production build', async () => {
  const outDir = mkdtempSync(join(tmpdir(), 'llm-ux-meter-vite-'));
  try {
    await build({
      root: join(root, 'tests/js/vite-app'),
      logLevel: 'warn',
      resolve: { alias: { 'llm-ux-meter': root } },
      build: { outDir, emptyOutDir: true, target: 'es2022' },
    });
    const server = await serveStatic(outDir);
    servers.push(server);
    checkReport(await reportFrom(`http://127.0.0.1:${server.address().port}/`), 'vite');
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
});
