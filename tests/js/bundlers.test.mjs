// The package as users get it (`npm pack`, installed with npm) in every way users load it: a plain
// <script type="module"> page, and the same app built by webpack 5, Rollup, esbuild and Vite with no
// configuration for the package (only entry and output; Rollup's node-resolve, without which Rollup
// bundles no npm package at all). Each page runs in headless Chromium: the timed replay must give the
// hand-computed report, and a real stream through the fetch hook a full `ok` report. Next.js: next.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { serveStatic } from '../../scripts/serve.mjs';
import { startScriptedServer } from '../../scripts/scripted-llm-server.mjs';
import { launchChromium } from './browsers/chromium.mjs';
import { ROOT, installApp, packTarball } from './packed-app.mjs';

const FIXTURE = join(ROOT, 'tests/fixtures/replay/openai-timed.json');
const expected = JSON.parse(readFileSync(FIXTURE, 'utf8')).expected;
const SCHEDULED_TOKENS = 40; // the scripted server's default answer length
let app;
let browser;
let llm;
const servers = [];

before(async () => {
  app = installApp('web', packTarball(), { 'replay.mjs': join(ROOT, 'tests/js/replay.mjs') });
  [browser, llm] = await Promise.all([launchChromium(), startScriptedServer({ port: 0 })]);
}, { timeout: 120_000 });

after(async () => {
  await browser?.close();
  await llm?.close();
  servers.forEach((server) => server.close());
});

/** Serves `dir` (with the fixture the page fetches); resolves to its base URL. */
async function serve(dir) {
  writeFileSync(join(dir, 'openai-timed.json'), readFileSync(FIXTURE));
  const server = await serveStatic(dir);
  servers.push(server);
  return `http://127.0.0.1:${server.address().port}`;
}

const bundler = (name) => createRequire(join(app, 'package.json'))(name);

/** Writes an HTML page for a bundle that has none of its own. */
function pageFor(outDir, script) {
  writeFileSync(join(outDir, 'index.html'), `<!doctype html><meta charset="utf-8">${script}`);
}

async function resultOf(url, name) {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if ((m.type() === 'error' || m.type() === 'warning') && !m.location().url.endsWith('/favicon.ico')) errors.push(`console.${m.type()}: ${m.text()}`);
  });
  try {
    await page.goto(`${url}?app=${name}&llm=${encodeURIComponent(llm.url)}`);
    await page.waitForFunction(() => window.result, null, { timeout: 15_000 });
    const result = await page.evaluate(() => window.result);
    assert.deepEqual(errors, []);
    assert.equal(result.error, undefined);
    return result;
  } finally {
    await page.close();
  }
}

function checkResult(result, scenario, { streamed = true } = {}) {
  assert.equal(result.enabled, true);
  const r = result.replayed;
  assert.equal(r.scenario, scenario);
  for (const key of ['format', 'model', 'status', 'ttftMs', 'ttftArrivalMs', 'tpotMs', 'tpotArrivalMs', 'outputTokens', 'stalls']) {
    assert.deepEqual(r[key], expected[key], key);
  }
  if (!streamed) return;
  assert.equal(result.bodyEndsWithDone, true, 'the app read the whole stream');
  const s = result.streamed;
  assert.ok(s, 'the streamed answer was reported');
  assert.equal(s.scenario, scenario);
  assert.equal(s.status, 'ok');
  assert.equal(s.format, 'openai');
  assert.equal(s.model, 'fast');
  assert.equal(s.outputTokens, SCHEDULED_TOKENS);
  assert.equal(s.tokenSource, 'usage');
  assert.ok(s.ttftArrivalMs > 0 && s.tpotArrivalMs > 0, JSON.stringify(s));
}

/** Builds with `build(entry, outDir)` into target/js-apps/web/out-<name>, serves it; returns the page's URL. */
async function built(name, build) {
  const outDir = join(app, `out-${name}`);
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir);
  await build(join(app, 'main.js'), outDir);
  return `${await serve(outDir)}/`;
}

test('a plain <script type="module"> page imports the installed file as it is', async () => {
  checkResult(await resultOf(`${await serve(app)}/plain.html`, 'plain'), 'plain', { streamed: false });
});

test('webpack 5 (production mode, entry and output only)', { timeout: 120_000 }, async () => {
  const webpack = bundler('webpack');
  const url = await built('webpack', (entry, outDir) => new Promise((done, fail) => {
    webpack({ mode: 'production', context: app, entry, output: { path: outDir, filename: 'main.js' } }, (error, stats) => {
      if (error || stats.hasErrors()) return fail(error ?? new Error(stats.toString('errors-only')));
      done(pageFor(outDir, '<script src="main.js"></script>'));
    });
  }));
  checkResult(await resultOf(url, 'webpack'), 'webpack');
});

test('Rollup 4 (node-resolve only)', { timeout: 120_000 }, async () => {
  const { rollup } = bundler('rollup');
  const { nodeResolve } = bundler('@rollup/plugin-node-resolve');
  const url = await built('rollup', async (input, outDir) => {
    const bundle = await rollup({ input, plugins: [nodeResolve({ browser: true })], onwarn: (w) => { throw new Error(w.message); } });
    await bundle.write({ dir: outDir, format: 'es' });
    await bundle.close();
    pageFor(outDir, '<script type="module" src="main.js"></script>');
  });
  checkResult(await resultOf(url, 'rollup'), 'rollup');
});

test('esbuild (--bundle --minify --format=esm)', { timeout: 120_000 }, async () => {
  const esbuild = join(app, 'node_modules/.bin/esbuild');
  const url = await built('esbuild', (entry, outDir) => {
    execFileSync(esbuild, [entry, '--bundle', '--minify', '--format=esm', `--outdir=${outDir}`, '--log-level=warning'], { stdio: 'inherit' });
    pageFor(outDir, '<script type="module" src="main.js"></script>');
  });
  checkResult(await resultOf(url, 'esbuild'), 'esbuild');
});

test('Vite (production build, its CLI)', { timeout: 120_000 }, async () => {
  const url = await built('vite', (entry, outDir) => {
    execFileSync(join(app, 'node_modules/.bin/vite'), ['build', '--outDir', outDir, '--emptyOutDir', '--logLevel', 'warn'], { cwd: app, stdio: 'inherit' });
  });
  checkResult(await resultOf(url, 'vite'), 'vite');
});

test('importing the package has no side effects: no window, document or fetch touched (server-side rendering)', () => {
  // A fresh Node process whose window, document and fetch throw when touched, as a strict SSR runtime would.
  const probe = `
    for (const name of ['window', 'document', 'fetch', 'navigator', 'location', 'self']) {
      Object.defineProperty(globalThis, name, { configurable: true, get() { throw new Error(name + ' touched at import'); } });
    }
    const { createMeter } = await import('llm-ux-meter');
    console.log(typeof createMeter);`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', probe], { cwd: app, encoding: 'utf8' });
  assert.equal(out.trim(), 'function');
});
