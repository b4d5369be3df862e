// The collector as a deployment runs it (issue 15): three collectors on one ClickHouse database behind a
// load balancer, 32 senders spreading batches over them. As in production, some batches arrive twice
// (hedged to two collectors at once, re-sent after a lost answer, a record in two batches), a
// collector dies (SIGKILL) mid-run and comes back on its address, and a failed batch is retried, the
// same envelope, on another collector until it is accepted.
// Checked: each record is answered as accepted once at most; every collector gives the same summaries;
// against the truth computed here from the distinct records, per group (model, scenario, variant) and
// overall, over windows read from day, hour and minute rollups and from records (partial minutes at
// both ends), counts, output-token throughput, stall rates and length bands are exact, TTFT and TPOT
// p50/p90/p99 within 1% of the order statistic of rank floor(q × (n − 1)) (the sketch's definition),
// means exact. The store documents no settling delay, so nothing waits for one.
// Issue 15 also wants every statement the store sends to run on a current ClickHouse: collector 2 (the
// one killed and restarted) reaches ClickHouse through a recording proxy (tests/js/lib/recording-proxy.mjs),
// is then read through every read path (summaries with SLOs and filters, timeseries at every bucket
// size, compares, single streams, a window cut mid-minute, more groups than an answer holds) and
// restarted again, and the statements it sent are replayed on chdb-core (ClickHouse 26.x in process) by
// collector/tests/reference/replay_statements.py. One collector, not three: the three run the same
// code, so one sends every kind of statement, with a third of the requests to record and replay.
// Bounded: 16,000 records (25 to 35 s here on 2 shared cores, ClickHouse start, the reads through
// the proxy (3 s) and the replay of about 100 statements (3 s) included), every wait capped, traffic
// to 127.0.0.1 only.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { ROOT, buildCollector, startCollector } from '../../scripts/collector.mjs';
import { envelope, validRecord } from './beacon-records.mjs';
import { freePorts } from './lib/free-ports.mjs';
import { prng } from './lib/prng.mjs';
import { startRecordingProxy } from './lib/recording-proxy.mjs';

const CLICKHOUSE_DIR = join(ROOT, 'target', 'clickhouse-scale');
// The statement log of the proxied collector (kept after the run, removed by the next one).
const LOG_DIR = join(CLICKHOUSE_DIR, 'statements');
const PROXIED = 2; // the collector killed and restarted: its log holds the start-up sweep after a kill
const PYTHON = join(ROOT, 'target', 'pyenv', 'bin', 'python');
const READ_KEY = 'read-key-for-the-scale-test';
const DATABASE = `scale_${process.pid}`;
const RECORDS = 16_000;
const SENDERS = 32;
const ATTEMPTS = 12; // per delivery of a batch; a batch never accepted fails the test
const HOUR = 3_600_000;
const T0 = Date.now();
// Windows read from hour and minute rollups (all), minutes and records of the partial minutes at both
// ends (cut, a record exactly on each edge), and day rollups (days).
const DAY = 24 * HOUR;
const WINDOWS = {
  all: { from: T0 - 3 * HOUR, to: T0 },
  cut: { from: T0 - 97 * 60_000 - 12_345, to: T0 - 23 * 60_000 - 29_087 },
  days: { from: Math.floor((T0 - 3 * HOUR) / DAY) * DAY, to: Math.floor((T0 - 3 * HOUR) / DAY) * DAY + 2 * DAY },
};

const rand = prng(15);
const gauss = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
const lognormal = (median, sigma) => Math.min(3_599_000, Math.round(median * Math.exp(sigma * gauss()) * 100) / 100);
const pick = (items) => items[Math.floor(rand() * items.length)];

// 3 models (of unequal traffic) × 2 scenarios × 2 variants, connection a fourth dimension the
// grouping merges; skewed TTFT, TPOT and lengths, some nulls, some stalls, startedAt over 2 hours.
const MODELS = [['gpt-4.1-mini', 0.5, 380, 18], ['claude-sonnet-4', 0.8, 620, 26], ['llama-3.3-70b', 1, 900, 35]];
const records = Array.from({ length: RECORDS }, (_, i) => {
  const u = rand();
  const [model, , ttftMedian, tpotMedian] = MODELS.find(([, upTo]) => u < upTo);
  const scenario = rand() < 0.6 ? 'chat' : 'rag';
  const variant = rand() < 0.5 ? 'A' : 'B';
  const stallCount = rand() < 0.08 ? 1 + Math.floor(rand() * 3) : 0;
  const stallMs = stallCount * (1000 + Math.round(rand() * 2000));
  return validRecord(`r-${i}`, {
    startedAt: T0 - 1000 - Math.floor(rand() * 2 * HOUR),
    model, scenario, variant,
    connection: pick(['4g', 'wifi', null]),
    ttftMs: rand() < 0.02 ? null : lognormal(ttftMedian * (scenario === 'rag' ? 1.8 : 1) * (variant === 'B' ? 0.9 : 1), 0.8),
    tpotMs: rand() < 0.04 ? null : lognormal(tpotMedian, 0.5),
    outputTokens: rand() < 0.01 ? 0 : Math.min(20_000, Math.round(lognormal(220, 1))),
    stalls: rand() < 0.05 ? null : { count: stallCount, count1000: 0, longestMs: stallCount ? stallMs / stallCount : 0, totalMs: stallMs },
  });
});
records[0].startedAt = WINDOWS.cut.from;
records[1].startedAt = WINDOWS.cut.to - 1;
records[2].startedAt = WINDOWS.cut.to;

// Shuffled into batches of 1 to 50; about 3% of batches also carry up to 3 records of another batch.
const order = records.map((_, i) => i);
for (let i = order.length - 1; i > 0; i--) {
  const j = Math.floor(rand() * (i + 1));
  [order[i], order[j]] = [order[j], order[i]];
}
// A batch is one session's (an envelope carries one sessionId), and a session keeps one variant, as an
// A/B test assigns them: so a compare's arms hold every stream of their variant whichever copy of a
// record shared by two batches is kept.
const batches = [];
for (const variant of ['A', 'B']) {
  const mine = order.filter((k) => records[k].variant === variant);
  for (let i = 0; i < mine.length; ) {
    const n = 1 + Math.floor(rand() * 50);
    batches.push(mine.slice(i, i + n).map((k) => records[k]));
    i += n;
  }
}
for (const batch of batches) {
  if (rand() >= 0.03) continue;
  const other = pick(batches.filter((b) => b[0].variant === batch[0].variant));
  for (let k = 0; k < 3; k++) {
    const record = pick(other);
    if (!batch.includes(record) && batch.length < 50) batch.push(record);
  }
}
/** Records carried by two batches (which may be in flight at once). */
const SHARED = batches.flat().length - RECORDS;
const bodies = batches.map((b, i) => JSON.stringify(envelope(b, `batch-${i}`, { sessionId: `s-${b[0].variant}-${i % 97}`, pageId: `p-${i}` })));

let clickhouseUrl;
let proxy;
let ports;
let collectors = [];
let args;
let startedMs;
const setup = {};
let sent; // set once every batch was accepted
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

/** Starts collector `i` on its port, collector PROXIED through the recording proxy. */
const startOn = (i) => startCollector({ listen: `127.0.0.1:${ports[i]}`, args: ['--clickhouse', i === PROXIED ? proxy.url : clickhouseUrl, ...args], build: false });

before(async () => {
  buildCollector();
  startedMs = performance.now();
  // A fresh server: one a killed run left behind is stopped first (its pid file is in the directory).
  spawnSync('bash', ['scripts/clickhouse.sh', 'stop', CLICKHOUSE_DIR], { cwd: ROOT, stdio: 'ignore', timeout: 60_000 });
  rmSync(CLICKHOUSE_DIR, { recursive: true, force: true });
  setup.removeMs = performance.now() - startedMs;
  // Installs clickhouse-server when missing (as root); fails, never skips, when it cannot start one.
  const started = spawnSync('bash', ['scripts/clickhouse.sh', 'start', CLICKHOUSE_DIR], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 300_000 });
  assert.equal(started.status, 0, 'scripts/clickhouse.sh start failed');
  clickhouseUrl = started.stdout.trim();
  setup.clickhouseMs = performance.now() - startedMs - setup.removeMs;
  // The rows of the first 12 inserts are kept (of about 30): enough to replay every kind of insert.
  proxy = await startRecordingProxy(clickhouseUrl, { dir: LOG_DIR, maxBodies: 12 });
  args = ['--clickhouse-database', DATABASE, '--read-key', READ_KEY, '--rate-limit', '100000', '--rate-burst', '100000'];
  ports = await freePorts(3);
  collectors = await Promise.all([0, 1, 2].map(startOn));
  setup.collectorsMs = performance.now() - startedMs - setup.removeMs - setup.clickhouseMs;
}, { timeout: 900_000 });

after(async () => {
  // Not the killed one (if its restart failed): close() would wait for an exit that already happened.
  await Promise.all(collectors.filter((c) => c?.process.signalCode === null).map((c) => c.close()));
  await proxy?.close();
  spawnSync('bash', ['scripts/clickhouse.sh', 'stop', CLICKHOUSE_DIR], { cwd: ROOT, stdio: 'inherit', timeout: 60_000 });
  rmSync(join(CLICKHOUSE_DIR, 'data'), { recursive: true, force: true }); // hundreds of MB; the logs stay
});

/**
 * Runs `sql` on ClickHouse itself: `{ status, text }`. One connection, closed after the answer (a
 * connection kept alive would hold the server's shutdown for its keep-alive timeout, 10 s).
 */
function clickhouse(sql) {
  return new Promise((resolve, reject) => {
    const req = request(clickhouseUrl, { method: 'POST', agent: false, headers: { connection: 'close' }, timeout: 30_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk) => (text += chunk)).on('end', () => resolve({ status: res.statusCode, text }));
    });
    req.on('timeout', () => req.destroy(new Error('ClickHouse did not answer within 30 s'))).on('error', reject).end(sql);
  });
}

/** POSTs `body` to collector `i`: `{ status, json }`, status 0 on a network error or timeout. */
async function post(i, body) {
  try {
    const r = await fetch(`http://127.0.0.1:${ports[i]}/v1/beacons`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: AbortSignal.timeout(10_000) });
    const json = await r.json().catch(() => null);
    return r.status === 200 && !json ? { status: 0 } : { status: r.status, json }; // an answer cut short is lost
  } catch {
    return { status: 0 };
  }
}

test(`${RECORDS} records in ${batches.length} batches from ${SENDERS} senders over 3 collectors, one killed and restarted: every batch accepted, each record once`, { timeout: 180_000 }, async (t) => {
  const stats = { requests: 0, retries: 0, failed: {}, unanswered: 0, hedged: 0, concurrent: 0, resent: 0, accepted: 0, duplicates: 0, acceptedAgain: [] };
  const inflight = [new Set(), new Set(), new Set()]; // batch indices being posted to each collector
  let acceptedBatches = 0;
  let abort = false; // a sender failed: the others and the killer stop

  /** Delivers batch `b` as a load balancer would: the same envelope to another collector until a 200. */
  async function deliver(b, first) {
    for (let attempt = 0, i = first; attempt < ATTEMPTS && !abort; attempt++, i = (i + 1 + Math.floor(rand() * 2)) % 3) {
      if (attempt) stats.retries++;
      stats.requests++;
      inflight[i].add(b);
      const r = await post(i, bodies[b]);
      inflight[i].delete(b);
      if (r.status === 200) {
        stats.accepted += r.json.accepted;
        stats.duplicates += r.json.duplicates;
        return { ...r.json, at: i };
      }
      assert.ok(r.status === 0 || r.status === 429 || r.status >= 500, `batch ${b} refused: ${r.status} ${JSON.stringify(r.json)}`);
      stats.failed[r.status] = (stats.failed[r.status] ?? 0) + 1;
      if (r.status !== 429) stats.unanswered += batches[b].length; // maybe stored, maybe not
      await sleep(Math.min(500, 20 * 2 ** attempt));
    }
    assert.fail(`batch ${b} was not accepted after ${ATTEMPTS} attempts`);
  }

  let next = 0;
  const sender = async () => {
    try {
      while (next < batches.length && !abort) {
        const b = next++;
        const roll = rand();
        const first = Math.floor(rand() * 3);
        if (roll < 0.05) { // hedged: to two collectors at once
          stats.hedged++;
          stats.concurrent += batches[b].length;
          await Promise.all([deliver(b, first), deliver(b, (first + 1) % 3)]);
        } else {
          const answer = await deliver(b, first);
          if (roll < 0.1) { // its answer was lost on the way: sent again, elsewhere
            stats.resent++;
            const again = await deliver(b, (answer.at + 1 + Math.floor(rand() * 2)) % 3);
            if (again.accepted) stats.acceptedAgain.push(again.accepted);
          }
        }
        acceptedBatches++;
      }
    } catch (e) {
      abort = true;
      throw e;
    }
  };

  const t0 = performance.now();
  // Mid-run: SIGKILL collector 2 once 40% of the batches are in, restart it on its port 1.5 s later.
  const chaos = {};
  const killer = async () => {
    while (acceptedBatches < 0.4 * batches.length && !abort) await sleep(20);
    if (abort) return;
    const victim = collectors[2];
    chaos.killAt = performance.now() - t0;
    chaos.inflight = [...inflight[2]].reduce((n, b) => n + batches[b].length, 0);
    const exited = new Promise((r) => victim.process.once('exit', r));
    victim.process.kill('SIGKILL');
    await exited;
    await sleep(1500);
    const restarting = performance.now();
    collectors[2] = await startOn(2).catch((e) => void (chaos.restartError = e)); // the others carry on
    chaos.restartMs = performance.now() - restarting;
    chaos.backAt = performance.now() - t0;
  };
  await Promise.all([...Array.from({ length: SENDERS }, sender), killer()]);
  const sendMs = performance.now() - t0;
  sent = true;

  const copies = batches.reduce((n, b) => n + b.length, 0) - RECORDS;
  t.diagnostic(`${RECORDS} records in ${batches.length} batches (${copies} records in two batches), ${stats.hedged} batches hedged, ${stats.resent} re-sent after their 200; ` +
    `${stats.requests} requests, ${stats.retries} retries (failed: ${JSON.stringify(stats.failed)}); answers: ${stats.accepted} accepted, ${stats.duplicates} duplicates; ` +
    `collector 2 killed at ${seconds(chaos.killAt)} (${chaos.inflight} records in flight), back at ${seconds(chaos.backAt)} (start-up ${chaos.restartMs.toFixed(0)} ms); ` +
    `old data removed in ${seconds(setup.removeMs)}, ClickHouse up in ${seconds(setup.clickhouseMs)}, collectors in ${seconds(setup.collectorsMs)}, sending ${seconds(sendMs)}`);
  assert.ok(collectors[2], `collector 2 did not come back: ${chaos.restartError?.message}`);
  // A batch re-sent after its 200 is all duplicates. Over the run each record is accepted once at
  // most; a record may never be answered as accepted only when it was sent in a request that got no
  // answer, or when two of its copies were inserted at the same moment (both answered duplicate):
  // hedged batches, and the records two batches share.
  const again = stats.acceptedAgain;
  assert.equal(again.length, 0, `${again.length} of ${stats.resent} batches re-sent after their 200 had records accepted again (${again.reduce((a, b) => a + b, 0)})`);
  assert.ok(stats.accepted <= RECORDS, `${stats.accepted} records accepted, of ${RECORDS}`);
  const atRisk = stats.unanswered + stats.concurrent + SHARED;
  assert.ok(stats.accepted >= RECORDS - atRisk, `${stats.accepted} records accepted, of ${RECORDS} (${stats.unanswered} sent without an answer, ${stats.concurrent} hedged, ${SHARED} shared)`);
});

/** GET `path` from collector `i` with the read key: its JSON. */
async function get(i, path) {
  const r = await fetch(`http://127.0.0.1:${ports[i]}${path}`, { headers: { authorization: `Bearer ${READ_KEY}` }, signal: AbortSignal.timeout(30_000) });
  const text = await r.text();
  assert.equal(r.status, 200, `collector ${i} ${path}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

const GROUPINGS = { groups: 'model,scenario,variant', overall: '' };
const keyOf = (grouping, k) => (grouping === 'overall' ? 'overall' : `${k.model}/${k.scenario}/${k.variant}`);
const answers = []; // answers[collector][`${window} ${grouping}`], of the collectors up

test('the three collectors give the same summaries', { timeout: 60_000 }, async () => {
  assert.ok(sent, 'the traffic did not complete');
  const up = [0, 1, 2].filter((i) => collectors[i]);
  await Promise.all(up.map(async (i) => {
    answers[i] = {};
    for (const [w, { from, to }] of Object.entries(WINDOWS)) {
      for (const [grouping, groupBy] of Object.entries(GROUPINGS)) {
        answers[i][`${w} ${grouping}`] = await get(i, `/api/summary?from=${from}&to=${to}${groupBy ? `&groupBy=${groupBy}` : ''}`);
      }
    }
  }));
  // Means are sums of floats, which another order of reading could change in the last bits.
  const canonical = (answer) => JSON.stringify(answer, (_, v) => (typeof v === 'number' ? Number(v.toPrecision(12)) : v));
  const streams = (answer) => answer.groups.reduce((n, g) => n + g.count, 0);
  const [first, ...others] = up;
  const differing = [];
  for (const query of Object.keys(answers[first])) {
    for (const i of others) {
      if (canonical(answers[i][query]) !== canonical(answers[first][query])) differing.push(`${query}: collector ${i} counts ${streams(answers[i][query])} streams, collector ${first} ${streams(answers[first][query])}`);
    }
  }
  assert.equal(differing.length, 0, differing.join('\n'));
});

/** The truth of a window and grouping: per group key, the distinct records' figures and sorted values. */
function truth(window, grouping) {
  const groups = {};
  for (const r of records) {
    if (r.startedAt < WINDOWS[window].from || r.startedAt >= WINDOWS[window].to) continue;
    const g = (groups[keyOf(grouping, r)] ??= { count: 0, tokens: 0, stallKnown: 0, stalled: 0, bands: [0, 0, 0], ttftMs: [], tpotMs: [] });
    g.count++;
    g.tokens += r.outputTokens;
    if (r.stalls) {
      g.stallKnown++;
      g.stalled += r.stalls.count > 0;
    }
    if (r.outputTokens > 0) g.bands[r.outputTokens <= 50 ? 0 : r.outputTokens <= 500 ? 1 : 2]++;
    for (const m of ['ttftMs', 'tpotMs']) if (r[m] !== null) g[m].push(r[m]);
  }
  for (const g of Object.values(groups)) for (const m of ['ttftMs', 'tpotMs']) g[m].sort((a, b) => a - b);
  return groups;
}

/** Calls `fn(collector, query, window, answer, truth, grouping)` for each collector's answer to each query. */
function eachAnswer(fn) {
  assert.ok(answers.length, 'no summaries to check');
  for (const [i, byQuery] of answers.entries()) {
    if (!byQuery) continue;
    for (const [query, answer] of Object.entries(byQuery)) {
      const [window, grouping] = query.split(' ');
      fn(i, query, WINDOWS[window], answer, truth(window, grouping), grouping);
    }
  }
}

test('counts are exact: streams, output-token throughput, stall rate and length bands, per group and overall', (t) => {
  const wrong = [];
  eachAnswer((i, query, { from, to }, answer, groups, grouping) => {
    const ms = to - from;
    // Computed as summary.rs computes them from exact counts, so equal to the last bit.
    const expected = Object.fromEntries(Object.entries(groups).map(([key, g]) => [key, {
      count: g.count,
      tokenThroughput: (g.tokens * 1000) / ms,
      stallRate: g.stallKnown ? g.stalled / g.stallKnown : null,
      lengthBands: { '1-50': g.bands[0], '51-500': g.bands[1], over500: g.bands[2] },
    }]));
    const got = Object.fromEntries(answer.groups.map((g) => [keyOf(grouping, g.key), { count: g.count, tokenThroughput: g.tokenThroughput, stallRate: g.stallRate, lengthBands: g.lengthBands }]));
    if (grouping === 'overall') t.diagnostic(`collector ${i}, ${query}: ${got.overall?.count} streams of ${expected.overall.count} (${((got.overall?.count / expected.overall.count - 1) * 100).toFixed(1)}%)`);
    for (const key of new Set([...Object.keys(expected), ...Object.keys(got)])) {
      const show = (o, f) => JSON.stringify(o[key]?.[f]);
      const off = Object.keys(expected[key] ?? got[key]).filter((f) => show(got, f) !== show(expected, f));
      if (off.length) wrong.push(`collector ${i}, ${query}, ${key}: ${off.map((f) => `${f} ${show(got, f)} (truth ${show(expected, f)})`).join(', ')}`);
    }
    if (answer.totalGroups !== Object.keys(expected).length || answer.truncated) wrong.push(`collector ${i}, ${query}: ${answer.totalGroups} groups, truncated ${answer.truncated}`);
  });
  assert.equal(wrong.length, 0, `${wrong.length} off:\n${wrong.slice(0, 12).join('\n')}`);
});

test('TTFT and TPOT p50, p90 and p99 within 1% of the exact order statistic, means exact, per group and overall', (t) => {
  const wrong = [];
  eachAnswer((i, query, _, answer, groups, grouping) => {
    for (const g of answer.groups) {
      const key = keyOf(grouping, g.key);
      for (const m of ['ttftMs', 'tpotMs']) {
        const values = groups[key]?.[m] ?? [];
        const mean = values.reduce((s, v) => s + v, 0) / values.length;
        const checks = [['p50', 0.5], ['p90', 0.9], ['p99', 0.99]].map(([p, q]) => [p, values[Math.floor(q * (values.length - 1))], 0.01]);
        for (const [p, exact, tolerance] of [...checks, ['mean', mean, 1e-9]]) {
          const error = Math.abs(g[m][p] - exact) / exact;
          if (!(error <= tolerance * (1 + 1e-9))) wrong.push(`collector ${i} ${query} ${key} ${m}.${p}: ${g[m][p]}, exact ${exact?.toFixed(2)} (${(error * 100).toFixed(2)}%)`);
        }
      }
    }
  });
  t.diagnostic(`${seconds(performance.now() - startedMs)} since the set-up began (the build aside)`);
  assert.equal(wrong.length, 0, `${wrong.length} off:\n${wrong.slice(0, 12).join('\n')}`);
});

/** `items` by `keyOf(item)` (Object.groupBy is Node 21+). */
const groupBy = (items, keyOf) => items.reduce((groups, item) => ((groups[keyOf(item)] ??= []).push(item), groups), {});

/** The distinct records of window `w` (a WINDOWS entry) that `keep` selects. */
const inWindow = ({ from, to }, keep = () => true) => records.filter((r) => r.startedAt >= from && r.startedAt < to && keep(r));

// A day 5 days back, far from every window above: 80 records of 80 variants, one a minute, more
// groups than a timeseries of 1,441 one-minute buckets holds (100,000 / 1,441 = 69 series).
const SPREAD_DAY = Math.floor((T0 - 5 * DAY) / DAY) * DAY;
const SPREAD = Array.from({ length: 80 }, (_, k) => validRecord(`spread-${k}`, { startedAt: SPREAD_DAY + 3 * HOUR + k * 60_000 + 5_000, variant: `v${k}` }));

test('collector 2, through the proxy: summaries with SLOs and filters, timeseries at every bucket size, compares, truncated answers, a restart', { timeout: 60_000 }, async (t) => {
  assert.ok(sent, 'the traffic did not complete');
  assert.ok(collectors[PROXIED] && answers[PROXIED], 'the proxied collector is not running');
  const started = performance.now();
  const P = PROXIED;
  const cut = WINDOWS.cut;
  const window = `from=${cut.from}&to=${cut.to}`;
  const wrong = [];
  const check = (what, got, expected) => void (JSON.stringify(got) !== JSON.stringify(expected) && wrong.push(`${what}: ${JSON.stringify(got)}, truth ${JSON.stringify(expected)}`));
  const sum = (points) => points.reduce((n, [, v]) => n + (v ?? 0), 0);

  // Summaries with SLOs: goodput within the counts of streams meeting the SLOs 1% tighter and looser
  // (a value within 1% of a threshold is judged by its sketch bucket); with a filter, and grouped by
  // connection (null for some: a key with a null in the chosen groups).
  const slo = { ttftMs: 800, tpotMs: 40 };
  const meets = (r, f) => r.ttftMs !== null && r.tpotMs !== null && r.ttftMs <= slo.ttftMs * f && r.tpotMs <= slo.tpotMs * f;
  const summaries = [
    ['', () => true, () => 'overall', () => 'overall'],
    ['&groupBy=model,variant', () => true, (r) => `${r.model}/${r.variant}`, (k) => `${k.model}/${k.variant}`],
    ['&model=gpt-4.1-mini&model=llama-3.3-70b&groupBy=connection', (r) => r.model !== 'claude-sonnet-4', (r) => `${r.connection}`, (k) => `${k.connection}`],
  ];
  const summariesRead = summaries.map(async ([extra, keep, keyOfRecord, keyOfAnswer]) => {
    const answer = await get(P, `/api/summary?${window}&slo.ttftMs=${slo.ttftMs}&slo.tpotMs=${slo.tpotMs}${extra}`);
    const groups = groupBy(inWindow(cut, keep), keyOfRecord);
    check(`summary${extra} groups`, answer.groups.map((g) => keyOfAnswer(g.key)).sort(), Object.keys(groups).sort());
    for (const g of answer.groups) {
      const key = keyOfAnswer(g.key);
      check(`summary${extra} ${key} count`, g.count, groups[key]?.length);
      const good = Math.round(g.goodput * g.count);
      const [low, high] = [0.99, 1.01].map((f) => (groups[key] ?? []).filter((r) => meets(r, f)).length);
      if (!(good >= low && good <= high)) wrong.push(`summary${extra} ${key}: goodput ${g.goodput} (${good} streams), truth ${low} to ${high}`);
    }
  });

  // Timeseries at every bucket size over the window cut mid-minute: per variant, the counts add up
  // to the window's; quantiles, goodput and stall rates answered.
  const byVariant = Object.fromEntries(Object.entries(groupBy(inWindow(cut), (r) => r.variant)).map(([k, v]) => [k, v.length]));
  const timeseriesRead = ['1m', '5m', '15m', '1h', '6h', '1d'].map(async (bucket) => {
    const answer = await get(P, `/api/timeseries?${window}&metric=count&bucket=${bucket}&groupBy=variant`);
    check(`timeseries count ${bucket} by variant`, Object.fromEntries(answer.series.map((s) => [s.key.variant, sum(s.points)])), byVariant);
  });
  const figuresRead = ['metric=ttftMs&q=0.9&bucket=5m&groupBy=model,scenario', `metric=goodput&slo.tpotMs=${slo.tpotMs}&bucket=15m`, 'metric=stallRate&bucket=1h&model=claude-sonnet-4'].map(async (query) => {
    const answer = await get(P, `/api/timeseries?${window}&${query}`);
    if (answer.series.every((s) => s.points.every(([, v]) => v === null))) wrong.push(`timeseries ${query}: no values`);
  });

  // Compares between the variants: each arm's count is its streams with a value of the metric (its
  // sessions keep one variant: none is left out as seen in both).
  const comparesRead = [['ttftMs', '', () => true], ['tpotMs', `&scenario=rag&slo.tpotMs=${slo.tpotMs}`, (r) => r.scenario === 'rag']].map(async ([metric, extra, keep]) => {
    const answer = await get(P, `/api/compare?${window}&dimension=variant&a=A&b=B&metric=${metric}${extra}`);
    check(`compare ${metric}${extra} sessions seen in both arms`, answer.mixedUnits, 0);
    for (const arm of ['a', 'b']) {
      check(`compare ${metric}${extra} arm ${arm}`, answer[arm].count, inWindow(cut, (r) => keep(r) && r.variant === answer[arm].value && r[metric] !== null).length);
    }
  });
  // Single streams: the worst by TPOT of one scenario, each once (nulls last, ties by id).
  const byTpot = (x, y) => (x.tpotMs === null) - (y.tpotMs === null) || (y.tpotMs ?? 0) - (x.tpotMs ?? 0) || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0);
  const streamsRead = [get(P, `/api/streams?${window}&scenario=rag&sort=tpotMs&limit=25`).then((answer) => {
    check('streams of rag, the worst by TPOT', answer.streams.map((s) => [s.id, s.tpotMs]), inWindow(cut, (r) => r.scenario === 'rag').sort(byTpot).slice(0, 25).map((r) => [r.id, r.tpotMs]));
  })];
  // At once (the collector runs 4 queries at a time, queues 32): the same statements, sooner.
  await Promise.all([...summariesRead, ...timeseriesRead, ...figuresRead, ...comparesRead, ...streamsRead]);

  // More groups than a timeseries of a day of minutes holds: the busiest 69, and all counted.
  for (const batch of [SPREAD.slice(0, 40), SPREAD.slice(40)]) {
    const r = await post(P, JSON.stringify(envelope(batch, `spread-${batch[0].id}`)));
    assert.equal(r.status, 200, `the spread records were refused: ${JSON.stringify(r.json)}`);
  }
  const day = `from=${SPREAD_DAY + 30_000}&to=${SPREAD_DAY + 30_000 + DAY}`;
  const [many, all] = await Promise.all([get(P, `/api/timeseries?${day}&metric=count&bucket=1m&groupBy=variant`), get(P, `/api/summary?${day}&groupBy=variant`)]);
  check('timeseries of 80 groups: series, truncated, totalGroups', [many.series.length, many.truncated, many.totalGroups], [69, true, 80]);
  check('summary of 80 groups: groups, truncated, totalGroups', [all.groups.length, all.truncated, all.totalGroups], [80, false, 80]);

  // A restart: the start-up sweep marks again what is marked already, which changes no figure.
  await collectors[P].close();
  const restarting = performance.now();
  collectors[P] = await startOn(P);
  const restartMs = performance.now() - restarting;
  const again = await get(P, `/api/summary?from=${cut.from}&to=${cut.to}&groupBy=${GROUPINGS.groups}`);
  const rounded = (answer) => JSON.parse(JSON.stringify(answer, (_, v) => (typeof v === 'number' ? Number(v.toPrecision(12)) : v))); // float sums, as above
  check('the summary of the window cut after the restart', rounded(again), rounded(answers[P]['cut groups']));
  t.diagnostic(`read paths and a restart (start-up ${restartMs.toFixed(0)} ms) in ${seconds(performance.now() - started)}`);
  assert.equal(wrong.length, 0, `${wrong.length} off:\n${wrong.slice(0, 12).join('\n')}`);
});

test('every statement the store sent runs on a current ClickHouse (chdb-core)', { timeout: 180_000 }, async (t) => {
  assert.ok(existsSync(PYTHON), `${PYTHON} is missing: run scripts/setup.sh (it installs chdb-core, a current ClickHouse, into target/pyenv)`);
  const probe = spawnSync(PYTHON, ['-c', 'import chdb'], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(probe.status, 0, `chdb is not installed in target/pyenv: run scripts/setup.sh (it installs chdb-core)\n${probe.stderr}`);
  assert.ok(sent, 'the traffic did not complete');

  // Two statements of each shape (the same SQL but for its literals) are replayed, the first and the
  // longest: every kind the store sent, in about 100 statements rather than 300 (10 s of replay).
  const log = await proxy.writeLog({ maxPerShape: 2 });
  const { stats, entries } = proxy;
  const bodyBytes = log.filter((e) => e.body).reduce((n, e) => n + statSync(join(LOG_DIR, e.body)).size, 0);
  const upstreamMs = entries.reduce((ms, e) => ms + (e.ms ?? 0), 0);
  t.diagnostic(`proxy: ${stats.requests} requests (${seconds(upstreamMs)} from request to answer in all), ${stats.cut} cut short and ${stats.clientLeft} left before the answer ` +
    `(by a collector killed mid-request), ${stats.refused} refused by ClickHouse, ` +
    `${stats.upstreamErrors} not forwarded; log: ${log.length} statements (${stats.leftOut} more of the same shapes left out, and ${stats.bodiesDropped} inserts past the ` +
    `first ${stats.bodies}), ${(bodyBytes / 1e6).toFixed(1)} MB of insert rows`);
  assert.equal(stats.upstreamErrors, 0, 'the proxy failed to forward requests');
  assert.equal(proxy.refusals.length, 0, `ClickHouse 18.16 refused statements:\n${JSON.stringify(proxy.refusals.slice(0, 3), null, 1)}`);

  // What the log must hold: every kind of statement the store sends, and the creation of every table
  // and view of the database (of which ClickHouse 18.16 is asked directly).
  const listed = await clickhouse(`SELECT name, engine FROM system.tables WHERE database = '${DATABASE}' FORMAT TSV`);
  const made = listed.text.split('\n').filter(Boolean).map((line) => line.split('\t'));
  assert.equal(listed.status, 200, `listing the tables: ${listed.text}`);
  assert.ok(made.length >= 4, `ClickHouse lists ${made.length} tables in ${DATABASE}`);
  t.diagnostic(`the database holds ${made.map(([name, engine]) => `${name} (${engine})`).join(', ')}`);
  const sqlOf = (e) => e.sql.trim();
  const kind = (engine) => ({ MaterializedView: 'MATERIALIZED VIEW', View: 'VIEW' })[engine] ?? 'TABLE';
  const has = (pattern, { body } = {}) => (e) => pattern.test(sqlOf(e)) && (body === undefined || Boolean(e.body) === body);
  const expected = {
    'CREATE DATABASE': has(/^CREATE DATABASE IF NOT EXISTS \w+$/),
    ...Object.fromEntries(['records', 'rollup_states', 'copies', 'duplicates'].map((table) => [`CREATE TABLE ${table}`, has(new RegExp(`^CREATE TABLE IF NOT EXISTS \\w+\\.${table} \\(`))])),
    // And every other table or view the store made (ClickHouse lists them).
    ...Object.fromEntries(made.map(([name, engine]) => [`CREATE ${kind(engine)} ${name}`, has(new RegExp(`^CREATE ${kind(engine)} IF NOT EXISTS \\w+\\.${name} `))])),
    'INSERT INTO records FORMAT RowBinary with its rows': has(/^INSERT INTO \w+\.records \(.*\) FORMAT RowBinary$/s, { body: true }),
    'the lookup of an insert\'s ids in copies': has(/^SELECT\b.*\bFROM \w+\.copies WHERE id IN \(SELECT arrayJoin\(\[/s),
    'the start-up sweep of copies': has(/^SELECT\b.*\bFROM \w+\.copies WHERE id IN \(SELECT id FROM \w+\.copies WHERE copy >= \d+\)/s),
    'INSERT INTO duplicates ... SELECT': has(/^INSERT INTO \w+\.duplicates \(.*\) SELECT\b/s, { body: false }),
    'rollups: rollup_states merged': has(/^SELECT\b(?!.*UNION ALL).*\bFROM \w+\.rollup_states WHERE grain = /s),
    'rollups: their duplicates': has(/^SELECT\b(?!.*UNION ALL).*\bFROM \(SELECT \* FROM \w+\.duplicates WHERE\b/s),
    'rows: records of partial minutes': has(/^SELECT started_at, .*\bFROM \w+\.records WHERE .*ORDER BY started_at/s),
    'rows by unit: records of a compare\'s arms': has(/^SELECT session_id, started_at, .*\bFROM \w+\.records WHERE /s),
    'reads of records: the count of duplicates in their window': has(/^SELECT count\(\) FROM \w+\.duplicates WHERE started_at >= /s),
    'reads of records without the duplicate copies': has(/\bFROM \w+\.records WHERE .*\(id, copy\) NOT IN \(SELECT id, copy FROM \w+\.duplicates\b/s),
    'busiest groups: rollup_states, duplicates and records ranked': has(/^SELECT\b(?=.*\bFROM \w+\.rollup_states\b)(?=.*\bFROM \w+\.duplicates\b)(?=.*\bFROM \w+\.records\b).*\bUNION ALL\b.*\bORDER BY sum\(n\) DESC\b/s),
    'busiest groups: all groups counted': has(/^SELECT count\(\) FROM \(SELECT 1 FROM \(SELECT\b.*\brollup_states\b/s),
  };
  const missing = Object.entries(expected).filter(([, match]) => !log.some(match)).map(([name]) => name);
  if (!made.some(([, engine]) => engine === 'MaterializedView')) missing.push('a materialized view (ClickHouse lists none)');
  assert.equal(missing.length, 0, `the statement log (${LOG_DIR}) lacks: ${missing.join('; ')}`);

  const replayStarted = performance.now();
  const replay = spawnSync(PYTHON, [join(ROOT, 'collector', 'tests', 'reference', 'replay_statements.py'), LOG_DIR], { cwd: ROOT, encoding: 'utf8', timeout: 150_000 });
  const replayMs = performance.now() - replayStarted;
  for (const line of replay.stdout.trim().split('\n')) t.diagnostic(line);
  t.diagnostic(`replay of ${log.length} statements in ${seconds(replayMs)}; ${seconds(performance.now() - startedMs)} since the set-up began (the build aside)`);
  assert.equal(replay.status, 0, `replay_statements.py ${LOG_DIR} failed (exit ${replay.status ?? replay.signal}):\n${replay.stdout.slice(-3000)}${replay.stderr.slice(-3000)}`);
});
