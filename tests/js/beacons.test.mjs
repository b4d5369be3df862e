// Beacons end to end: each browser engine (Chromium, Firefox, WebKit) sends stream records to a real
// local endpoint. Each test
// counts exactly: records sent equal records received, with no duplicates after dedup by record id.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createHmac } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import Ajv2020 from 'ajv/dist/2020.js';
import { serveStatic } from '../../scripts/serve.mjs';
import { launchChromiumEngine } from './browsers/chromium.mjs';
import { forEachEngine, onlyIn, pageProblems } from './browsers/index.mjs';
import { startBeaconEndpoint } from './beacon-endpoint.mjs';
import { MAX_AGE_MS, MAX_AHEAD_MS, OTHER_FIELDS, withinBounds } from '../../js/lib/beacons/record-bounds.js';
import { FIELDS } from '../../js/lib/report-fields.js';
import { hashExperimentUnit } from '../../js/lib/beacons/experiment-unit.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const schema = JSON.parse(readFileSync(new URL('../../schema/beacon.v1.json', import.meta.url), 'utf8'));
const validate = new Ajv2020({ allErrors: true }).compile(schema);
let site;

before(async () => {
  site = await serveStatic(root);
});
after(() => site?.close());

// An app's user id and its own secret salt (createMeter's experimentUnit), and what envelopes must carry.
const UNIT = { id: 'user-42@example.com', salt: 'app-salt-3f9c1e7a55d2b804' };
const UNIT_HASH = createHmac('sha256', UNIT.salt).update(UNIT.id).digest('hex').slice(0, 32);

const harnessUrl = (endpoint, options = {}) =>
  `http://127.0.0.1:${site.address().port}/tests/js/pages/beacons.html?endpoint=${encodeURIComponent(endpoint.url)}&options=${encodeURIComponent(JSON.stringify(options))}`;


async function until(check, timeoutMs = 5000) {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
  return true;
}

function assertDelivered(endpoint, expected) {
  const { unique } = endpoint.records();
  assert.equal(unique.size, expected, `records received (unique): ${unique.size} of ${expected}`);
  for (const envelope of endpoint.accepted()) assert.ok(validate(envelope), JSON.stringify(validate.errors));
}

test("the bounds the meter keeps records within are the schema's, every one of them", () => {
  const resolve = (node) => (node.$ref ? { ...resolve(schema.$defs[node.$ref.split('/').pop()]), ...node, $ref: undefined } : node);
  const ranges = new Map();
  const lengths = new Map();
  const walk = (properties, prefix) => {
    for (const [name, property] of Object.entries(properties)) {
      const node = resolve(property);
      if (node.properties) walk(node.properties, `${prefix}${name}.`);
      if (node.minimum !== undefined) ranges.set(`${prefix}${name}`, [node.minimum, node.maximum]);
      if (node.maxLength !== undefined) lengths.set(`${prefix}${name}`, node.maxLength);
    }
  };
  walk(schema.$defs.record.properties, '');
  // startedAt's range in the schema is 1970 to 2100; the meter keeps the collector's window instead.
  ranges.delete('startedAt');
  // A number's bounds follow its name, a text's length its kind; the points' follow theirs (checked with
  // the cadence's below).
  const numbers = [...FIELDS, ...OTHER_FIELDS].filter(([, kind]) => typeof kind === 'number');
  assert.deepEqual(numbers.map(([name, min, max]) => [name, [min, max]]).sort(), [...ranges].sort());
  assert.deepEqual(OTHER_FIELDS.filter(([, kind]) => kind === 'text').map(([name, , length]) => [name, length]).sort(), [...lengths].sort());
  assert.match(schema.$defs.record.properties.startedAt.description, /within the 30 days before its clock and at most 1 hour after it/);
  assert.ok(MAX_AGE_MS < 30 * 24 * 3_600_000 && MAX_AHEAD_MS <= 3_600_000);
  // The cadence's bounds: withinBounds checks each number's (tested below); the core makes the rest so.
  const cadence = schema.$defs.record.properties.cadence;
  assert.deepEqual([cadence.maxItems, cadence.items.maxItems, cadence.items.items.type, cadence.items.items.maximum], [32, 2, 'integer', 3_600_000]);
  assert.deepEqual(FIELDS.at(-1), ['cadence', 'points', cadence.items.items.minimum, cadence.items.items.maximum]);
});

test('withinBounds: each bound, null, the clock window', () => {
  const now = Date.UTC(2027, 0, 15);
  const record = {
    id: 'r', startedAt: now - 60_000, url: 'https://a.example/v1', model: 'm', scenario: null, variant: null, appVersion: null, httpStatus: 200,
    ttfbMs: 1, ttftMs: null, ttftArrivalMs: 3_600_000, ttfoMs: 0, tpotMs: 2, tpotArrivalMs: 2, tokensPerSecond: 500, outputTokens: 10, reasoningTokens: 0,
    outputEvents: 10, outputEventsByKind: { answer: 10, reasoning: 0, tool: 0 }, gaps: null, arrivalGaps: { p50: 1, p90: 2, p99: 3, max: 4 }, jitterMs: 1,
    stalls: { count: 0, count1000: 0, longestMs: 0, totalMs: 0 }, renderDelay: null, durationMs: 10, finishReason: 'stop', anomalies: { malformedEvents: 0, oversizeDropped: 0 },
    def: 1, connection: '4g', rttMs: 50, deviceMemoryGb: 8, cores: 8,
  };
  assert.ok(withinBounds(record, now, FIELDS));
  const outside = [
    ['ttftArrivalMs', 3_600_000.5], ['durationMs', -1], ['tpotMs', 1.7e308], ['arrivalGaps', { p50: 1, p90: 2, p99: 3, max: 4e6 }], ['outputTokens', 10_000_001],
    ['stalls', { count: -1, count1000: 0, longestMs: 0, totalMs: 0 }], ['tokensPerSecond', 2e6], ['httpStatus', 1000], ['cores', 0], ['def', 0],
    ['model', 'm'.repeat(257)], ['id', '😀'.repeat(129)], ['connection', 'c'.repeat(33)], ['url', `https://a.example/${'p'.repeat(2048)}`],
    ['startedAt', now - MAX_AGE_MS - 1], ['startedAt', now + MAX_AHEAD_MS + 1], ['ttfbMs', '1'],
    ['cadence', [[5, 1], [3_600_001, 2]]], ['cadence', [[5, 3_600_001]]], ['cadence', [[-1, 0]]], ['cadence', [[5, null]]],
  ];
  for (const [field, value] of outside) assert.equal(withinBounds({ ...record, [field]: value }, now, FIELDS), false, `${field}: ${JSON.stringify(value).slice(0, 40)}`);
  // At the bounds, in code points (a four-byte character is two UTF-16 units, one character).
  const inside = [['id', '😀'.repeat(128)], ['model', 'é'.repeat(256)], ['startedAt', now - MAX_AGE_MS], ['startedAt', now + MAX_AHEAD_MS], ['cores', 4096], ['deviceMemoryGb', 0.25],
    ['cadence', []], ['cadence', null], ['cadence', Array.from({ length: 32 }, (_, i) => [3_600_000 - 31 + i, i])]];
  for (const [field, value] of inside) assert.ok(withinBounds({ ...record, [field]: value }, now, FIELDS), field);
});

test('hashExperimentUnit: HMAC-SHA-256 of the id keyed with the salt, 16 bytes in hex; bad input warns once and gives none', async () => {
  assert.equal(await hashExperimentUnit(UNIT), UNIT_HASH);
  assert.match(UNIT_HASH, new RegExp(schema.properties.experimentUnit.pattern));
  const crypto = Object.getOwnPropertyDescriptor(globalThis, 'crypto');
  const warnings = [];
  const originalWarn = console.warn;
  console.warn = (message) => warnings.push(message);
  try {
    const bad = [
      [{ id: '', salt: UNIT.salt }, /id is not a string of 1 to 1024 characters/],
      [{ id: 'u'.repeat(1025), salt: UNIT.salt }, /id is not a string/],
      [{ id: 42, salt: UNIT.salt }, /id is not a string/],
      [{ id: UNIT.id, salt: 'short-salt' }, /salt is not a string of at least 16 characters/],
      [{ id: UNIT.id }, /salt is not a string/],
    ];
    for (const [unit, reason] of bad) {
      warnings.length = 0;
      assert.equal(await hashExperimentUnit(unit), undefined, JSON.stringify(unit));
      assert.equal(warnings.length, 1);
      assert.match(warnings[0], reason);
      assert.ok(warnings[0].startsWith('llm-ux-meter: ') && !warnings[0].includes(UNIT.salt));
    }
    // An http: page other than localhost has no WebCrypto.
    Object.defineProperty(globalThis, 'crypto', { value: {}, configurable: true });
    warnings.length = 0;
    assert.equal(await hashExperimentUnit(UNIT), undefined);
    assert.deepEqual(warnings.map((w) => /WebCrypto is not available/.test(w)), [true]);
  } finally {
    Object.defineProperty(globalThis, 'crypto', crypto);
    console.warn = originalWarn;
  }
});

forEachEngine((engine, browser) => {
  async function open(endpoint, options = {}) {
    const page = await browser.newPage();
    await page.goto(harnessUrl(endpoint, options));
    await page.waitForFunction(() => window.ready);
    await page.evaluate(() => window.harness.init());
    return page;
  }

  test('batches: every record arrives once, in batches of at most 50 records and 16 KiB, valid against the schema', async () => {
    const endpoint = await startBeaconEndpoint();
    const page = await open(endpoint);
    await page.evaluate(() => window.harness.emit(120));
    await page.evaluate(() => window.harness.flush());
    assertDelivered(endpoint, 120);
    assert.equal(endpoint.records().copies, 120, 'no duplicates on a healthy endpoint');
    for (const a of endpoint.attempts) {
      assert.ok(a.json.records.length <= 50, `${a.json.records.length} records in a batch`);
      assert.ok(Buffer.byteLength(a.body) <= 17 * 1024, `${Buffer.byteLength(a.body)} bytes in a batch`);
      assert.match(a.contentType, /^text\/plain/, 'no CORS preflight: text/plain');
    }
    // The browser family from the user agent (no client hints outside Chromium): WebKit's is Safari's.
    const family = { chromium: 'chromium', firefox: 'firefox', webkit: 'safari' }[engine];
    assert.deepEqual(new Set([...endpoint.records().unique.values()].map((r) => r.browser)), new Set([family]));
    const delivery = await page.evaluate(() => window.harness.delivery());
    assert.equal(delivery.sent, 120);
    assert.equal(delivery.queued, 0);
    await page.close();
    await endpoint.close();
  });

  test('a batch goes out on its timer without any flush call', async () => {
    const endpoint = await startBeaconEndpoint();
    const page = await open(endpoint, { batch: { maxDelayMs: 300 } });
    await page.evaluate(() => window.harness.emit(3));
    assert.ok(await until(() => endpoint.records().unique.size === 3, 3000));
    await page.close();
    await endpoint.close();
  });

  test('hidden mid-batch, navigation away and tab close each send what is queued at once', async () => {
    const endpoint = await startBeaconEndpoint();
    let page = await open(endpoint);
    await page.evaluate(() => window.harness.emit(5));
    await page.evaluate(() => window.harness.hide());
    assert.ok(await until(() => endpoint.records().unique.size === 5), 'hidden');
    await page.evaluate(() => window.harness.emit(7));
    await page.goto('about:blank');
    assert.ok(await until(() => endpoint.records().unique.size === 12), 'navigation away');
    await page.close();
    page = await open(endpoint);
    await page.evaluate(() => window.harness.emit(4));
    await page.close({ runBeforeUnload: true });
    assert.ok(await until(() => endpoint.records().unique.size === 16), `tab close: ${endpoint.records().unique.size}`);
    assertDelivered(endpoint, 16);
    await endpoint.close();
  });

  test('503 three times, then 200: retried with backoff, delivered once', async () => {
    const endpoint = await startBeaconEndpoint();
    endpoint.script.push({ status: 503 }, { status: 503 }, { status: 503 });
    const page = await open(endpoint);
    await page.evaluate(() => window.harness.emit(10));
    await page.evaluate(() => window.harness.flush());
    assert.equal(endpoint.attempts.length, 4);
    assert.deepEqual(endpoint.attempts.map((a) => a.json.retry), [0, 1, 2, 3]);
    const gaps = endpoint.attempts.slice(1).map((a, i) => a.at - endpoint.attempts[i].at);
    // Backoff 1 s, 2 s, 4 s, each with ±20% jitter.
    assert.ok(gaps[0] >= 750 && gaps[1] >= 1550 && gaps[2] >= 3150 && gaps[2] <= 5500, `retry gaps ${gaps}`);
    assertDelivered(endpoint, 10);
    await page.close();
    await endpoint.close();
  });

  test('429 with Retry-After waits as long as the endpoint asks', async () => {
    const endpoint = await startBeaconEndpoint();
    endpoint.script.push({ status: 429, retryAfter: 3 });
    const page = await open(endpoint);
    await page.evaluate(() => window.harness.emit(2));
    await page.evaluate(() => window.harness.flush());
    const gap = endpoint.attempts[1].at - endpoint.attempts[0].at;
    assert.ok(gap >= 2950, `retried after ${gap} ms`);
    assertDelivered(endpoint, 2);
    await page.close();
    await endpoint.close();
  });

  test('offline, then online: sent as soon as the network is back', { skip: onlyIn(['chromium', 'firefox'], engine, 'classic WebDriver (WebKit\'s) cannot take a page offline') }, async () => {
    const endpoint = await startBeaconEndpoint();
    const page = await open(endpoint);
    await page.setOffline(true);
    await page.evaluate(() => window.harness.emit(5));
    await page.evaluate(() => {
      window.harness.flush().catch(() => {});
    });
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(endpoint.attempts.length, 0, 'nothing reached the endpoint while offline');
    await page.setOffline(false);
    assert.ok(await until(() => endpoint.records().unique.size === 5, 8000));
    assertDelivered(endpoint, 5);
    await page.close();
    await endpoint.close();
  });

  test('a reload while the endpoint is down keeps the queue and sends it on the next load', async () => {
    const endpoint = await startBeaconEndpoint();
    for (let i = 0; i < 5; i++) endpoint.script.push({ status: 503 });
    const page = await open(endpoint);
    await page.evaluate(() => window.harness.emit(6));
    // Not awaited: the reload cuts it short (and classic WebDriver runs one command at a time).
    await page.evaluate(() => {
      window.harness.flush().catch(() => {});
    });
    assert.ok(await until(() => endpoint.attempts.length >= 1));
    endpoint.script.length = 0;
    await page.reload();
    await page.waitForFunction(() => window.ready);
    await page.evaluate(() => window.harness.init());
    await page.evaluate(() => window.harness.flush());
    assertDelivered(endpoint, 6);
    await page.close();
    await endpoint.close();
  });

  test('a batch over 64 KiB on exit: beacons under the quota, the rest kept and sent on the next load', async () => {
    const endpoint = await startBeaconEndpoint();
    const options = { batch: { maxRecords: 1000, maxBytes: 1 << 20, maxDelayMs: 600_000 } };
    const page = await open(endpoint, options);
    await page.evaluate(() => window.harness.emit(150));
    await page.goto('about:blank');
    await until(() => false, 1000);
    const onExit = endpoint.records().unique.size;
    assert.ok(onExit > 0 && onExit < 150, `${onExit} records went out on exit`);
    for (const a of endpoint.attempts) assert.ok(Buffer.byteLength(a.body) < 64 * 1024, `${Buffer.byteLength(a.body)} bytes in one exit payload`);
    await page.goto(harnessUrl(endpoint, options));
    await page.waitForFunction(() => window.ready);
    await page.evaluate(() => window.harness.init());
    await page.evaluate(() => window.harness.flush());
    assertDelivered(endpoint, 150);
    await page.close();
    await endpoint.close();
  });

  test('a record the collector would refuse is dropped and counted; the rest of its batch arrives', async () => {
    const endpoint = await startBeaconEndpoint();
    let page = await open(endpoint);
    await page.evaluate(() => window.harness.emit(1));
    await page.evaluate(() => window.harness.flush());
    const [real] = endpoint.records().unique.values();
    await page.close();
    // What an earlier page could not send: one record 40 days old by now, one an hour old.
    const hour = 3_600_000;
    const unsent = [{ ...real, id: 'stored-40-days', startedAt: Date.now() - 40 * 24 * hour }, { ...real, id: 'stored-1-hour', startedAt: Date.now() - hour }];
    page = await browser.newPage();
    await page.goto(harnessUrl(endpoint));
    await page.waitForFunction(() => window.ready);
    await page.evaluate((records) => localStorage.setItem('llm-ux-meter:unsent', JSON.stringify(records)), unsent);
    // Streams that ran over an hour (as beforeSend makes them here), and a dimension over 256 characters.
    await page.evaluate(() => window.harness.init({ beforeSend: (r) => (r.scenario === 'long' ? { ...r, durationMs: 2 * 3_600_000 } : r) }));
    await page.evaluate(() => {
      window.harness.emit(3);
      window.harness.emit(2, { scenario: 'long' });
      window.harness.emit(1, { scenario: 's'.repeat(257) });
    });
    await page.evaluate(() => window.harness.flush());
    const delivery = await page.evaluate(() => window.harness.delivery());
    assert.equal(delivery.dropped.outOfBounds, 4);
    assert.equal(delivery.sent, 4, 'the stored hour-old record and the 3 plain streams');
    assertDelivered(endpoint, 5);
    assert.ok(endpoint.records().unique.has('stored-1-hour') && !endpoint.records().unique.has('stored-40-days'));
    await page.close();
    await endpoint.close();
  });

  test('sampling at 0.5 over 1,000 sessions: about half, the same sessions every time', async () => {
    const endpoint = await startBeaconEndpoint();
    const page = await open(endpoint);
    const sampled = await page.evaluate(() => window.harness.simulateSessions(1000, 0.5));
    const again = await page.evaluate(() => window.harness.simulateSessions(1000, 0.5));
    // Binomial(1000, 0.5): standard deviation 15.8; 4 of them either side.
    assert.ok(sampled.length >= 437 && sampled.length <= 563, `${sampled.length} of 1000 sessions sampled`);
    assert.deepEqual(again, sampled, 'deterministic per session');
    const sessions = new Set(endpoint.accepted().map((e) => e.sessionId));
    assert.equal(sessions.size, sampled.length, 'exactly the sampled sessions sent records');
    assert.ok(endpoint.accepted().every((e) => e.sampleRate === 0.5));
    assert.equal(endpoint.records().unique.size, sampled.length * 2);
    await page.close();
    await endpoint.close();
  });

  test('privacy: no prompt, answer or query string in any byte sent; beforeSend changes or drops records', async () => {
    const endpoint = await startBeaconEndpoint();
    const page = await open(endpoint, { dropModel: 'drop-me' });
    const url = `http://127.0.0.1:${site.address().port}/tests/fixtures/privacy/openai-marker.sse?key=PRIVATE-QUERY-55#PRIVATE-FRAGMENT`;
    const body = JSON.stringify({ model: 'private-test-model', messages: [{ role: 'user', content: 'PRIVATE-PROMPT-91c2' }] });
    assert.ok((await page.evaluate(([u, b]) => window.harness.fetchStream(u, b), [url, body])) > 0);
    await page.evaluate(() => window.harness.emit(2, { model: 'drop-me' }));
    await page.evaluate(() => window.harness.flush());
    const sent = endpoint.attempts.map((a) => a.body).join('\n');
    for (const marker of ['PRIVATE-ANSWER-7f3a', 'PRIVATE-PROMPT-91c2', 'PRIVATE-QUERY-55', 'PRIVATE-FRAGMENT', 'Here is']) {
      assert.ok(!sent.includes(marker), `${marker} was sent`);
    }
    const records = [...endpoint.records().unique.values()];
    assert.equal(records.length, 1, 'the dropped model never left the page');
    assert.equal(records[0].scenario, 'changed-by-beforeSend');
    assert.match(records[0].url, /\/tests\/fixtures\/privacy\/openai-marker\.sse$/);
    assert.equal((await page.evaluate(() => window.harness.delivery())).dropped.beforeSend, 2);
    await page.close();
    await endpoint.close();
  });

  test("format 'otlp' sends OTLP/HTTP JSON with the GenAI client metric names", async () => {
    const endpoint = await startBeaconEndpoint();
    const page = await open(endpoint, { format: 'otlp' });
    await page.evaluate(() => window.harness.emit(3));
    await page.evaluate(() => window.harness.flush());
    assert.equal(endpoint.attempts.length, 1);
    const [attempt] = endpoint.attempts;
    assert.match(attempt.contentType, /^application\/json/);
    const metrics = attempt.json.resourceMetrics[0].scopeMetrics[0].metrics;
    const names = metrics.map((m) => m.name);
    assert.ok(names.includes('gen_ai.client.operation.time_to_first_chunk') && names.includes('gen_ai.client.token.usage'), names.join());
    const ttfc = metrics.find((m) => m.name === 'gen_ai.client.operation.time_to_first_chunk');
    assert.equal(ttfc.histogram.dataPoints.length, 3);
    const point = ttfc.histogram.dataPoints[0];
    assert.equal(point.count, '1');
    assert.equal(point.bucketCounts.reduce((n, c) => n + Number(c), 0), 1);
    assert.ok(point.attributes.some((a) => a.key === 'gen_ai.response.model' && a.value.stringValue === 'beacon-model'));
    await page.close();
    await endpoint.close();
  });

  test('a page restored from the back/forward cache is a new page view of the same session', async () => {
    const endpoint = await startBeaconEndpoint();
    // Playwright turns Chromium's back/forward cache off unless asked; Firefox and WebKit keep theirs.
    const cached = engine === 'chromium' ? await launchChromiumEngine({ bfcache: true }) : browser;
    // `no-store` pages (the test server's default) may not enter the cache.
    const cacheableSite = await serveStatic(root, 0, () => ({ 'cache-control': 'no-cache' }));
    const page = await cached.newPage();
    await page.goto(harnessUrl(endpoint).replace(`:${site.address().port}/`, `:${cacheableSite.address().port}/`));
    await page.waitForFunction(() => window.ready);
    await page.evaluate(() => window.harness.init());
    await page.evaluate(() => {
      window.restored = 0;
      addEventListener('pageshow', (e) => e.persisted && window.restored++);
    });
    await page.evaluate(() => window.harness.emit(1));
    await page.evaluate(() => window.harness.flush());
    await page.goto(`http://127.0.0.1:${cacheableSite.address().port}/www/index.html`);
    await page.goBack({ waitUntil: 'commit' });
    await page.waitForFunction(() => window.restored === 1);
    await page.evaluate(() => window.harness.emit(1));
    await page.evaluate(() => window.harness.flush());
    const envelopes = endpoint.accepted();
    assert.equal(envelopes.length, 2);
    assert.notEqual(envelopes[0].pageId, envelopes[1].pageId, 'a new page id after the restore');
    assert.equal(envelopes[0].sessionId, envelopes[1].sessionId, 'the same session');
    assertDelivered(endpoint, 2);
    await (cached === browser ? page : cached).close();
    cacheableSite.close();
    await endpoint.close();
  });

  test('experimentUnit: every envelope carries the HMAC of the id and salt, never either; a short salt sends without it', async () => {
    let endpoint = await startBeaconEndpoint();
    let page = await open(endpoint, { experimentUnit: UNIT, batch: { maxRecords: 4 } });
    await page.evaluate(() => window.harness.emit(10));
    await page.evaluate(() => window.harness.flush());
    assertDelivered(endpoint, 10);
    assert.equal(endpoint.accepted().length, 3);
    assert.deepEqual(endpoint.accepted().map((e) => e.experimentUnit), [UNIT_HASH, UNIT_HASH, UNIT_HASH]);
    const sent = endpoint.attempts.map((a) => a.path + a.body).join('\n');
    for (const secret of [UNIT.id, 'user-42', UNIT.salt]) assert.ok(!sent.includes(secret), `${secret} was sent`);
    assert.deepEqual(await pageProblems(page), []);
    await page.close();
    await endpoint.close();

    endpoint = await startBeaconEndpoint();
    page = await open(endpoint, { experimentUnit: { id: UNIT.id, salt: 'too-short' } });
    await page.evaluate(() => window.harness.emit(3));
    await page.evaluate(() => window.harness.flush());
    assertDelivered(endpoint, 3);
    assert.ok(endpoint.accepted().every((e) => !('experimentUnit' in e)));
    assert.ok(!endpoint.attempts.some((a) => a.body.includes('user-42')), 'the id was sent');
    const problems = await pageProblems(page);
    assert.equal(problems.length, 1, JSON.stringify(problems));
    assert.equal(problems[0].kind, 'console.warn');
    assert.match(problems[0].text, /^llm-ux-meter: experimentUnit not sent, its salt is not a string of at least 16 characters/);
    await page.close();
    await endpoint.close();
  });

  test('experimentUnit: a page left while its hash is pending sends nothing and keeps the records for the next load', async () => {
    const endpoint = await startBeaconEndpoint();
    const page = await browser.newPage();
    await page.goto(harnessUrl(endpoint, { experimentUnit: UNIT }));
    await page.waitForFunction(() => window.ready);
    // WebCrypto that never answers: the unit stays pending.
    await page.evaluate(() => {
      crypto.subtle.sign = () => new Promise(() => {});
    });
    await page.evaluate(() => window.harness.init());
    await page.evaluate(() => window.harness.emit(5));
    // Not awaited: it waits for the unit (and classic WebDriver runs one command at a time).
    await page.evaluate(() => {
      window.harness.flush().catch(() => {});
    });
    await until(() => false, 500);
    assert.equal(endpoint.attempts.length, 0, 'a batch went out without the unit');
    await page.goto('about:blank');
    await until(() => false, 500);
    assert.equal(endpoint.attempts.length, 0, 'the page sent its records without the unit on exit');
    await page.goto(harnessUrl(endpoint, { experimentUnit: UNIT }));
    await page.waitForFunction(() => window.ready);
    await page.evaluate(() => window.harness.init());
    await page.evaluate(() => window.harness.flush());
    assertDelivered(endpoint, 5);
    assert.ok(endpoint.accepted().every((e) => e.experimentUnit === UNIT_HASH));
    await page.close();
    await endpoint.close();
  });

  test('destroy flushes and unhooks', async () => {
    const endpoint = await startBeaconEndpoint();
    const page = await open(endpoint, { batch: { maxDelayMs: 600_000 } });
    await page.evaluate(() => window.harness.emit(4));
    const result = await page.evaluate(() => window.harness.destroy());
    assert.deepEqual(result, { hooked: true, restored: true });
    assertDelivered(endpoint, 4);
    await page.close();
    await endpoint.close();
  });
});
