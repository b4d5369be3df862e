// The collector as an attacker on the open internet sees it: the release binary, every public route, the
// attacks of the hardening issue and the ones that already failed, each answered with a clear status
// instead of harm. Bounded: a few thousand requests and sockets at most, every wait capped, traffic to
// 127.0.0.1 (and 127.0.0.2 as a second client address) only.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { buildCollector, startCollector } from '../../scripts/collector.mjs';
import { envelope, validRecord } from './beacon-records.mjs';

const READ_KEY = 'read-key-for-the-abuse-suite';
const MEMORY_LIMIT_BYTES = 512 * 1024 * 1024;
let dir;
const collectors = [];

before(() => {
  buildCollector();
  dir = mkdtempSync(join(tmpdir(), 'collector-abuse-'));
}, { timeout: 600_000 });

after(async () => {
  await Promise.all(collectors.map((c) => c.close()));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A fresh collector over its own database; `args` are extra flags. */
async function collector(name, args = []) {
  const c = await startCollector({ db: join(dir, `${name}.db`), args, build: false });
  collectors.push(c);
  return Object.assign(c, { db: join(dir, `${name}.db`) });
}

const auth = { authorization: `Bearer ${READ_KEY}` };

async function post(c, body, headers = {}) {
  const response = await fetch(`${c.url}/v1/beacons`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain;charset=UTF-8', ...headers },
    body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, headers: response.headers, json: await response.json().catch(() => null) };
}

async function get(c, path, headers = auth) {
  const t0 = performance.now();
  const response = await fetch(`${c.url}${path}`, { headers, signal: AbortSignal.timeout(30_000) });
  const text = await response.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {
    // Not JSON (a dashboard file): the test looks at the text.
  }
  return { status: response.status, headers: response.headers, text, json, ms: performance.now() - t0 };
}

/** The process's peak resident memory (VmHWM), in bytes. */
function peakMemory(c) {
  const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${c.process.pid}/status`, 'utf8'))[1];
  return Number(kb) * 1024;
}

/** Polls /health every 100 ms while `work` runs; resolves to the slowest answer's time in ms. */
async function healthWhile(c, work) {
  let slowest = 0;
  let done = false;
  const poll = (async () => {
    while (!done) {
      const t0 = performance.now();
      const r = await fetch(`${c.url}/health`, { signal: AbortSignal.timeout(5_000) }).catch((e) => ({ status: String(e) }));
      assert.equal(r.status, 200, 'health answered');
      slowest = Math.max(slowest, performance.now() - t0);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  try {
    await work();
  } finally {
    done = true;
    await poll;
  }
  return slowest;
}

function assertRefused(r, status, field) {
  assert.equal(r.status, status, JSON.stringify(r.json));
  assert.equal(r.json?.field, field, JSON.stringify(r.json));
  assert.ok(r.json.problem, 'the answer says what is wrong');
}

test('50,000 groups from the public ingest: every query stays bounded, /health stays fast, memory under 512 MiB', { timeout: 180_000 }, async (t) => {
  const c = await collector('groups', ['--read-key', READ_KEY]);
  const GROUPS = 50_000;
  const PER_BATCH = 500;
  for (let b = 0; b < GROUPS / PER_BATCH; b++) {
    const records = Array.from({ length: PER_BATCH }, (_, k) => validRecord(`g-${b}-${k}`, { model: `model-${b * PER_BATCH + k}` }, 30_000 + k));
    const r = await post(c, envelope(records, `groups-${b}`));
    assert.equal(r.status, 200, JSON.stringify(r.json));
  }
  const to = Date.now() + 60_000;
  const from = to - 24 * 3_600_000;
  const queries = [
    `/api/timeseries?groupBy=model&bucket=1m&from=${from}&to=${to}`,
    `/api/summary?groupBy=model,scenario,variant,appVersion,connection&from=${from}&to=${to}`,
    `/api/compare?dimension=variant&a=A&b=B&metric=ttftMs&from=${from}&to=${to}`,
    `/api/streams?sort=ttftMs&limit=500&from=${from}&to=${to}`,
    `/api/diagnosis?from=${from}&to=${to}`,
    '/metrics',
  ];
  const slowestHealth = await healthWhile(c, async () => {
    const answers = await Promise.all([...queries, queries[0], queries[1]].map((q) => get(c, q)));
    for (const [i, a] of answers.entries()) {
      t.diagnostic(`${queries[i % queries.length].split('?')[0]}: ${a.status}, ${a.text.length} B in ${a.ms.toFixed(0)} ms`);
      assert.ok(a.status === 200 || a.status === 400, `${a.status}: ${a.text.slice(0, 200)}`);
      assert.ok(a.text.length < 8 * 1024 * 1024, `answer of ${a.text.length} B`);
      assert.ok(a.ms < 20_000, `answered in ${a.ms} ms`);
    }
    const [timeseries, summary] = answers;
    assert.equal(timeseries.status, 200, timeseries.text.slice(0, 300));
    assert.equal(timeseries.json.truncated, true);
    assert.ok(timeseries.json.series.length <= 1000, `${timeseries.json.series.length} series`);
    assert.equal(summary.status, 200, summary.text.slice(0, 300));
    assert.equal(summary.json.truncated, true);
    assert.equal(summary.json.totalGroups, GROUPS);
    assert.ok(summary.json.groups.length <= 1000);
    // /metrics: the first 100 label sets (the default cap) and "other", every other record folded.
    const metrics = answers[queries.indexOf('/metrics')].text;
    assert.equal(new Set(metrics.match(/^llm_ux_streams_total\{model="[^"]*"/gm)).size, 101);
    assert.match(metrics, new RegExp(`^llm_ux_folded_records_total ${GROUPS - 100}$`, 'm'));
  });
  t.diagnostic(`slowest /health during the queries: ${slowestHealth.toFixed(0)} ms; peak memory ${(peakMemory(c) / 2 ** 20).toFixed(0)} MiB`);
  assert.ok(slowestHealth < 1000, `/health took ${slowestHealth} ms`);
  assert.ok(peakMemory(c) < MEMORY_LIMIT_BYTES);
  assert.equal((await get(c, '/health', {})).status, 200, 'still alive');
});

test('unbounded fields, implausible figures and unknown fields are refused with 400 naming the field; nothing is stored', { timeout: 60_000 }, async () => {
  const c = await collector('fields', ['--read-key', READ_KEY]);
  const hour = 3_600_000;
  const bad = [
    [{ connection: 'x'.repeat(10_000) }, 'records[1].connection'],
    [{ url: `https://a.example/${'p'.repeat(10_000)}` }, 'records[1].url'],
    [{ model: 'm'.repeat(100_000) }, 'records[1].model'],
    [{ ttftMs: -5000 }, 'records[1].ttftMs'],
    [{ durationMs: -1e308 }, 'records[1].durationMs'],
    [{ tpotMs: 1.7e308 }, 'records[1].tpotMs'],
    [{ ttftMs: 2 * hour }, 'records[1].ttftMs'],
    [{ cores: -5 }, 'records[1].cores'],
    [{ outputTokens: 20_000_000 }, 'records[1].outputTokens'],
    [{ startedAt: Date.now() - 31 * 24 * hour }, 'records[1].startedAt'],
    [{ startedAt: Date.now() + 2 * hour }, 'records[1].startedAt'],
    [{ injected: 'unknown field' }, 'records[1].injected'],
  ];
  const sizeBefore = statSync(c.db).size;
  for (const [change, field] of bad) {
    const records = [validRecord('ok-0'), validRecord('bad-1', change)];
    assertRefused(await post(c, envelope(records, `bad-${field}`)), 400, field);
  }
  assertRefused(await post(c, envelope([validRecord('ok-0')], 'unknown-top', { extra: 1 })), 400, 'extra');
  // The A/B unit is a hash, never an id as the app has it (nor a way to store one).
  for (const unit of ['user-42@example.com', 'A'.repeat(32), 'a'.repeat(33), 'a'.repeat(100_000), 42, null]) {
    assertRefused(await post(c, envelope([validRecord('ok-0')], `unit-${String(unit).length}`, { experimentUnit: unit })), 400, 'experimentUnit');
  }
  assertRefused(await post(c, envelope([validRecord('ok-0')], 'future-sent', { sentAt: Date.now() + 2 * hour })), 400, 'sentAt');
  const summary = await get(c, `/api/summary?from=${Date.now() - 40 * 24 * hour}&to=${Date.now() + hour}`);
  assert.equal(summary.status, 200);
  assert.deepEqual(summary.json.groups, [], 'nothing from a refused batch is stored');
  assert.ok(statSync(c.db).size <= sizeBefore + 64 * 1024, 'the database did not grow');
});

test('window arithmetic cannot overflow: extreme from/to are refused, never widened', async () => {
  const c = await collector('window', ['--read-key', READ_KEY]);
  assert.equal((await post(c, envelope([validRecord('w-0')], 'w'))).status, 200);
  for (const path of ['/api/summary', '/api/timeseries', '/api/compare', '/api/streams', '/api/diagnosis']) {
    const r = await get(c, `${path}?from=-9223372036854775808&to=-9223372036854775807`);
    assert.equal(r.status, 400, `${path}: ${r.text}`);
    assert.match(r.json.field, /^(from|to)$/);
    const huge = await get(c, `${path}?from=0&to=9223372036854775807&bucket=1m`);
    assert.equal(huge.status, 400, `${path}: ${huge.text}`);
  }
});

test("hostile A/B parameters are refused naming the field, or answered with finite figures", { timeout: 60_000 }, async () => {
  const c = await collector('compare', ['--read-key', READ_KEY]);
  const records = Array.from({ length: 80 }, (_, i) => validRecord(`ab-${i}`, { variant: ['A', 'B'][i % 2], tpotMs: 20 + (i % 7) }));
  for (let i = 0; i < 80; i += 2) assert.equal((await post(c, envelope(records.slice(i, i + 2), `ab-${i}`, { sessionId: `s-${i}` }))).status, 200);
  const window = `from=${Date.now() - 3_600_000}&to=${Date.now() + 60_000}`;
  const refused = [
    [`unit=${'x'.repeat(10_000)}`, 'unit'],
    ['split=NaN:1', 'split'],
    ['split=Infinity:1', 'split'],
    ['split=1e10:1', 'split'],
    ['split=-1:2', 'split'],
    ['split=1:2:3', 'split'],
    ['mde=NaN', 'mde'],
    ['mde=1e999', 'mde'],
    [`metric=${'m'.repeat(10_000)}`, 'metric'],
  ];
  for (const [query, field] of refused) assertRefused(await get(c, `/api/compare?a=A&b=B&${query}&${window}`), 400, field);
  // Extreme but allowed weights and sizes: an answer whose every number is finite (JSON has no NaN).
  for (const query of ['split=1e-300:1', 'split=1e9:1e-9', 'mde=0.001', 'mde=10', 'unit=user', `a=${'a'.repeat(4000)}`]) {
    const r = await get(c, `/api/compare?a=A&b=B&${query}&${window}`.replace('a=A&b=B&a=', 'b=B&a='));
    assert.equal(r.status, 200, `${query}: ${r.text.slice(0, 300)}`);
    assert.ok(!/NaN|Infinity/.test(r.text), `${query}: ${r.text.slice(0, 300)}`);
  }
});

test('the attacks that already fail keep failing: injection, traversal, gzip bombs, bad JSON, spoofed addresses', { timeout: 60_000 }, async () => {
  const c = await collector('classic', ['--read-key', READ_KEY, '--rate-limit', '1', '--rate-burst', '3']);
  // SQL in values and in parameters is data or a 400, never SQL.
  const sql = "x'); DROP TABLE records; --";
  assert.equal((await post(c, envelope([validRecord('sql-0', { model: sql, scenario: '" OR 1=1 --' })], 'sql'))).status, 200);
  const injected = await get(c, `/api/summary?groupBy=model&model=${encodeURIComponent(sql)}&from=0&to=${Date.now() + 60_000}`);
  assert.equal(injected.status, 200);
  assert.deepEqual(injected.json.groups.map((g) => g.key.model), [sql]);
  assertRefused(await get(c, `/api/summary?groupBy=${encodeURIComponent('model;DROP TABLE records')}`), 400, 'groupBy');
  // Path traversal out of the dashboard directory.
  for (const path of ['/../Cargo.toml', '/%2e%2e/Cargo.toml', '/..%2fCargo.toml', '/js/%2e%2e/%2e%2e/Cargo.toml']) {
    const r = await get(c, path, {});
    assert.ok(!r.text.includes('[package]') && !r.text.includes('[workspace]'), `${path} served a file outside the dashboard`);
  }
  // A gzip bomb: 1 GiB of zeros in about 1 MiB stops at the decompression cap.
  const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 });
  const bombed = await post(c, bomb, { 'content-encoding': 'gzip' });
  assert.equal(bombed.status, 413);
  assert.equal((await post(c, '{"v":1,', {})).status, 400);
  // The rate limit keys on the socket's address, not on headers a client writes itself.
  let limited = 0;
  for (let i = 0; i < 8; i++) {
    const r = await post(c, '{}', { 'x-forwarded-for': `203.0.113.${i}`, 'x-real-ip': `198.51.100.${i}`, forwarded: `for=192.0.2.${i}` });
    if (r.status === 429) limited++;
  }
  assert.ok(limited >= 3, `${limited} of 8 spoofed requests were limited`);
});

/**
 * Opens a TCP connection from `localAddress`; resolves once connected to the socket, whose
 * `ended` promise resolves when the connection closes.
 */
function open(c, localAddress = '127.0.0.1') {
  const { port } = new URL(c.url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: Number(port), localAddress });
    socket.on('data', () => {});
    socket.ended = new Promise((closed) => socket.once('close', closed));
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Whether `socket` is closed within `limitMs`. */
const closedWithin = (socket, limitMs) => Promise.race([socket.ended.then(() => true), new Promise((r) => setTimeout(r, limitMs, false))]);

/** GET /health from another client address (127.0.0.2) over a fresh connection; resolves to its ms. */
async function healthFrom(c, localAddress) {
  const socket = await open(c, localAddress);
  const t0 = performance.now();
  socket.write('GET /health HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
  let answer = '';
  socket.on('data', (d) => { answer += d; });
  await new Promise((resolve) => socket.once('close', resolve));
  assert.match(answer, /^HTTP\/1\.1 200/, answer.slice(0, 100));
  return performance.now() - t0;
}

test('a flood of idle and slow connections from one address locks no one else out; slow clients are cut off', { timeout: 60_000 }, async (t) => {
  const c = await collector('flood', ['--read-key', READ_KEY, '--header-timeout', '2', '--idle-timeout', '2', '--body-timeout', '2']);
  const flood = [];
  try {
    // Past the per-address cap (64): the rest are refused at once, the others held open, half of them
    // trickling a header that never ends.
    for (let i = 0; i < 300; i++) {
      const socket = await open(c).catch(() => null);
      if (!socket) continue;
      socket.on('error', () => {});
      if (i % 2) socket.write('GET /health HTTP/1.1\r\nx-slow: ');
      flood.push(socket);
    }
    const trickle = setInterval(() => flood.forEach((s, i) => i % 2 && !s.destroyed && s.write('a')), 200);
    let slowest = 0;
    for (let i = 0; i < 10; i++) {
      slowest = Math.max(slowest, await healthFrom(c, '127.0.0.2'));
      await new Promise((r) => setTimeout(r, 200));
    }
    clearInterval(trickle);
    t.diagnostic(`slowest /health from 127.0.0.2 during the flood: ${slowest.toFixed(0)} ms`);
    assert.ok(slowest < 1000, `/health took ${slowest} ms`);
    // Trickled headers and silent connections are closed by the timeouts (2 s here), not held forever.
    const closed = await Promise.all(flood.map((s) => closedWithin(s, 8_000)));
    assert.equal(closed.filter((c) => !c).length, 0, 'connections the server never closed');
    // A body that never arrives: 408 after --body-timeout.
    const slowBody = await open(c, '127.0.0.3');
    slowBody.write('POST /v1/beacons HTTP/1.1\r\nhost: x\r\ncontent-type: text/plain\r\ncontent-length: 1000\r\n\r\n{"v":1');
    let answer = '';
    slowBody.on('data', (d) => { answer += d; });
    assert.ok(await closedWithin(slowBody, 8_000), 'the slow body was cut off');
    assert.match(answer, /^HTTP\/1\.1 408/, answer.slice(0, 100));
  } finally {
    flood.forEach((s) => s.destroy());
  }
});

test('analytics are private: a read key, their own CORS list, a strict dashboard policy, their own rate limit', { timeout: 30_000 }, async () => {
  const c = await collector('access', ['--read-key', READ_KEY, '--allow-origin', '*', '--api-origin', 'https://dash.example.com',
    '--api-rate-limit', '1', '--api-rate-burst', '5']);
  assert.equal((await get(c, '/api/summary', {})).status, 401);
  assert.equal((await get(c, '/api/summary', { authorization: 'Bearer wrong-key-wrong-key' })).status, 401);
  assert.equal((await get(c, `/api/summary?key=${READ_KEY}`, {})).status, 200);
  // Ingest's '*' never opens the analytics to another page; the API's own list does, for its origin only.
  const evil = await get(c, '/api/summary', { ...auth, origin: 'https://evil.example' });
  assert.equal(evil.headers.get('access-control-allow-origin'), null);
  const dash = await get(c, '/api/summary', { ...auth, origin: 'https://dash.example.com' });
  assert.equal(dash.headers.get('access-control-allow-origin'), 'https://dash.example.com');
  const page = await get(c, '/', {});
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-security-policy'), /frame-ancestors 'none'/);
  assert.match(page.headers.get('content-security-policy'), /script-src 'self'/);
  assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
  // The burst (5) is spent above: guessing keys is rate limited before the key is checked.
  const statuses = [];
  for (let i = 0; i < 4; i++) statuses.push((await get(c, '/api/summary', { authorization: `Bearer guess-${i}-guess-guess` })).status);
  assert.ok(statuses.includes(429), statuses.join());
  // /metrics too (on a collector of its own: the burst above is spent), and no page reads it through a
  // browser, the dashboard's origin included.
  const m = await collector('metrics-access', ['--read-key', READ_KEY, '--api-origin', 'https://dash.example.com']);
  assert.equal((await get(m, '/metrics', {})).status, 401);
  assert.equal((await get(m, '/metrics', { authorization: 'Bearer wrong-key-wrong-key' })).status, 401);
  const scraped = await get(m, '/metrics', { ...auth, origin: 'https://dash.example.com' });
  assert.equal(scraped.status, 200);
  assert.equal(scraped.headers.get('access-control-allow-origin'), null);
});

test('start-up refuses what would make it unsafe or crash, naming the flag', { timeout: 30_000 }, async () => {
  const refused = async (args, pattern) => {
    await assert.rejects(startCollector({ db: join(dir, 'never.db'), args, build: false }), pattern);
  };
  await refused(['--rate-limit', '1e-300'], /--rate-limit/);
  await refused(['--rate-burst', 'NaN'], /--rate-burst/);
  await refused(['--max-connections', '0'], /--max-connections/);
  // Analytics on a public address need a read key, unless they are meant to be public.
  await assert.rejects(startCollector({ db: join(dir, 'never.db'), listen: '0.0.0.0:0', build: false }), /--read-key/);
});

test('every collector attacked above stayed under 512 MiB of resident memory, and is still serving', async (t) => {
  const running = collectors.filter((c) => c.process.exitCode === null);
  assert.ok(running.length >= 5, `${running.length} collectors`);
  for (const c of running) {
    t.diagnostic(`${c.db.split('/').pop()}: peak ${(peakMemory(c) / 2 ** 20).toFixed(0)} MiB`);
    assert.ok(peakMemory(c) < MEMORY_LIMIT_BYTES);
    assert.equal((await get(c, '/health', {})).status, 200);
  }
});
