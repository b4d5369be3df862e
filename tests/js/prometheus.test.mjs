// GET /metrics as a monitoring team uses it (issue 19): Debian's real Prometheus (2.42) scrapes two
// collector binaries every second with docs/prometheus.md's scrape config (its targets and key file
// replaced) and loads docs/prometheus/alerts.yml, while beacons go to the collectors through their HTTP
// ingest: three models in five waves of the same streams, hostile model names, duplicates, a refused
// batch and a record of another definition version on collector A; on collector B, capped at 5 label
// sets, twelve models. A stand-in for vLLM's /metrics (vLLM's histogram names, `model_name` label and
// bucket bounds, read from collector/src/prometheus/buckets.rs) serves the server side of the same
// streams, so the side-by-side queries have both sides.
// Checked through Prometheus's HTTP API: p90 TTFT and TPOT per model (since the start, and the docs'
// rate form) agree with /api/summary's within the bucket's width; the counters equal the counts exactly
// (streams by status, output tokens, stalls, stalled streams, observations), and /api/summary's count
// and stall rate; sums over both collectors are the totals; B exposes 5 label sets and "other", its
// folded count exact; hostile label values arrive intact; a scrape with a wrong key gets 401 (as a
// request without one); Prometheus asks for OpenMetrics, which ends with `# EOF`; `promtool check
// metrics` passes both collectors' text answers and `promtool check rules` the alert rules, whose alerts
// go pending for the model they are about and no other; every PromQL block of docs/prometheus.md and
// every query of docs/grafana/llm-ux.json returns data.
// Bounded: about 800 records, every wait capped, Prometheus started under `timeout` (it stops by itself
// within 4 minutes whatever happens to this process), traffic to 127.0.0.1 only.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, buildCollector, startCollector } from '../../scripts/collector.mjs';
import { envelope, validRecord } from './beacon-records.mjs';
import { freePorts } from './lib/free-ports.mjs';
import { prng } from './lib/prng.mjs';

const KEY = 'read-key-for-the-prometheus-test';
const DOCS = readFileSync(join(ROOT, 'docs', 'prometheus.md'), 'utf8');
const ALERTS = join(ROOT, 'docs', 'prometheus', 'alerts.yml');
const GRAFANA = JSON.parse(readFileSync(join(ROOT, 'docs', 'grafana', 'llm-ux.json'), 'utf8'));
const BUCKETS_RS = readFileSync(join(ROOT, 'collector', 'src', 'prometheus', 'buckets.rs'), 'utf8');
const WAVES = 5;
const PER_WAVE = 40; // streams per main model and wave: the same 40 in every wave
const CAP = 5;
const CAP_MODELS = 12;
const T0 = Date.now();
// Users' figures per main model (ms): TTFT and TPOT ranges, the share of painted streams that stall.
const MODELS = {
  'fast-model': { ttft: [250, 900], tpot: [6, 28], stalling: 0 },
  'slow-model': { ttft: [900, 3200], tpot: [45, 140], stalling: 0.02 },
  'stalling-model': { ttft: [400, 1400], tpot: [12, 45], stalling: 0.3 },
};
const HOSTILE = ['quote"d', 'back\\slash', 'new\nline', 'cr\rtab\tnul\u0000', '\\n, not a newline', 'x"},status="ok', '模型 🚀', 'a'.repeat(256), 'é'.repeat(200)];

/** The fields of one plausible stream of a model with `profile`, drawn from `rand`. */
function stream(profile, rand) {
  const between = ([lo, hi], x) => Math.round((lo + (hi - lo) * x) * 100) / 100;
  const u = rand();
  const status = u < 0.06 ? 'aborted' : u < 0.09 ? 'incomplete' : u < 0.11 ? 'error' : u < 0.12 ? 'http_error' : 'ok';
  if (status === 'http_error') {
    const none = { ttftMs: null, ttftArrivalMs: null, ttfoMs: null, tpotMs: null, tpotArrivalMs: null, tokensPerSecond: null, gaps: null, arrivalGaps: null, jitterMs: null, renderDelay: null, stalls: null };
    return { ...none, status, httpStatus: 503, outputTokens: 0, outputEvents: 0, outputEventsByKind: { answer: 0, reasoning: 0, tool: 0 }, durationMs: 120, finishReason: null };
  }
  const hidden = rand() < 0.05;
  const delay = between([1, 30], rand());
  const ttft = between(profile.ttft, rand() ** 1.5);
  const tpot = between(profile.tpot, rand() ** 1.5);
  const tokens = 20 + Math.floor(rand() * 600);
  const stalls = rand() < profile.stalling ? 1 + Math.floor(rand() * 3) : 0;
  const stalled = stalls ? between([500 * stalls, 1800 * stalls], rand()) : 0;
  const painted = hidden
    ? { ttftMs: null, ttfoMs: null, tpotMs: null, tokensPerSecond: null, gaps: null, jitterMs: null, renderDelay: null, stalls: null }
    : {
        ttftMs: ttft,
        ttfoMs: ttft,
        tpotMs: tpot,
        tokensPerSecond: Math.round(100_000 / tpot) / 100,
        renderDelay: { p50: delay, p90: delay * 2 },
        stalls: { count: stalls, count1000: stalls ? 1 : 0, longestMs: stalls ? stalled / stalls : 0, totalMs: stalled },
      };
  const arrival = { ttftArrivalMs: Math.max(1, ttft - delay), tpotArrivalMs: Math.round(tpot * 97) / 100 };
  return { ...painted, ...arrival, status, hidden, outputTokens: tokens, outputEvents: tokens, outputEventsByKind: { answer: tokens, reasoning: 0, tool: 0 }, durationMs: Math.min(3_600_000, ttft + tpot * tokens + stalled) };
}

/** `s` cut at 128 bytes, at a character boundary, as the collector writes label values. */
function cut(s) {
  const bytes = new TextEncoder().encode(s);
  if (bytes.length <= 128) return s;
  let end = 128;
  while ((bytes[end] & 0xc0) === 0x80) end--;
  return new TextDecoder().decode(bytes.slice(0, end));
}

/** vLLM's bounds as buckets.rs declares them (`pub const VLLM_TTFT: [f64; 22] = [...]`). */
function vllmBounds(name) {
  const m = new RegExp(`pub const ${name}: \\[f64; \\d+\\] = \\[([^\\]]+)\\]`).exec(BUCKETS_RS);
  assert.ok(m, `${name} in buckets.rs`);
  return m[1].split(',').map(Number);
}

/** A float as Python's prometheus_client writes it: 1 as "1.0". */
const pyFloat = (x) => (Number.isInteger(x) ? x.toFixed(1) : String(x));

/** A histogram over `bounds` (seconds). */
function histogram(bounds) {
  return { bounds, counts: new Array(bounds.length + 1).fill(0), sum: 0, observe(seconds) {
    const i = this.bounds.findIndex((b) => seconds <= b);
    this.counts[i < 0 ? this.bounds.length : i]++;
    this.sum += seconds;
  } };
}

/**
 * The stand-in for vLLM's /metrics: `vllm:time_to_first_token_seconds` and
 * `vllm:time_per_output_token_seconds` per `model_name`, observing what the server would have measured
 * of each stream (its first token 60 ms before the page got it, its tokens 5% faster than they
 * arrived). Keeps the Accept header of the last scrape.
 */
function vllmStandIn() {
  const ttftBounds = vllmBounds('VLLM_TTFT');
  const tpotBounds = vllmBounds('VLLM_TPOT');
  const models = new Map();
  const state = { accept: null, observe(model, r) {
    if (!models.has(model)) models.set(model, { ttft: histogram(ttftBounds), tpot: histogram(tpotBounds) });
    const h = models.get(model);
    if (r.ttftArrivalMs !== null) h.ttft.observe(Math.max(0.001, (r.ttftArrivalMs - 60) / 1000));
    if (r.tpotArrivalMs !== null) h.tpot.observe((r.tpotArrivalMs * 0.95) / 1000);
  } };
  const write = (name, help, pick) => {
    let out = `# HELP ${name} ${help}\n# TYPE ${name} histogram\n`;
    for (const [model, h] of models) {
      const { bounds, counts, sum } = pick(h);
      const labels = `engine="0",model_name="${model}"`;
      let cumulative = 0;
      counts.forEach((n, i) => {
        cumulative += n;
        out += `${name}_bucket{${labels},le="${i < bounds.length ? pyFloat(bounds[i]) : '+Inf'}"} ${cumulative}\n`;
      });
      out += `${name}_sum{${labels}} ${sum}\n${name}_count{${labels}} ${cumulative}\n`;
    }
    return out;
  };
  const server = createServer((request, response) => {
    state.accept = request.headers.accept ?? null;
    response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
    response.end(write('vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', (h) => h.ttft) + write('vllm:time_per_output_token_seconds', 'Histogram of time per output token in seconds.', (h) => h.tpot));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(Object.assign(state, { server, address: `127.0.0.1:${server.address().port}` }))));
}

/** The ```lang blocks of a Markdown text. */
const blocks = (markdown, lang) => [...markdown.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]);

/** Prometheus's configuration: the docs' scrape job on both collectors, the stand-in, and a job with a wrong key. */
function prometheusConfig(dir, collectors, vllm) {
  const keyFile = join(dir, 'read-key');
  writeFileSync(keyFile, KEY);
  const docsJob = blocks(DOCS, 'yaml').find((b) => b.startsWith('scrape_configs:'));
  assert.ok(docsJob, 'docs/prometheus.md shows a scrape config');
  const replaced = (text, from, to) => {
    assert.equal(text.split(from).length, 2, `the docs' scrape config has ${from} once`);
    return text.replace(from, to);
  };
  let scrape = replaced(docsJob, '/etc/prometheus/llm-ux-read-key', keyFile);
  scrape = replaced(scrape, "['collector-1.internal:8787', 'collector-2.internal:8787']", JSON.stringify(collectors.map((c) => new URL(c.url).host)));
  return [
    'global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s',
    `rule_files:\n  - ${JSON.stringify(ALERTS)}`,
    scrape.trimEnd(),
    `  - job_name: vllm-stand-in\n    static_configs:\n      - targets: ['${vllm.address}']`,
    `  - job_name: wrong-key\n    metrics_path: /metrics\n    authorization:\n      credentials: not-the-read-key-0123456789\n    static_configs:\n      - targets: ['${new URL(collectors[0].url).host}']`,
  ].join('\n') + '\n';
}

/** Starts Prometheus on a free port; resolves `{ url, close() }` once it is ready. */
async function startPrometheus(dir, config) {
  const configFile = join(dir, 'prometheus.yml');
  writeFileSync(configFile, config);
  for (let attempt = 1; ; attempt++) {
    const [port] = await freePorts(1);
    const args = [`--config.file=${configFile}`, `--storage.tsdb.path=${join(dir, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'];
    // `timeout` ends it after 4 minutes whatever becomes of this process (and passes SIGTERM on).
    const child = spawn('timeout', ['-k', '5', '240', 'prometheus', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    child.stderr.on('data', (chunk) => (log = (log + chunk).slice(-20_000)));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 30_000;
    let ready = false;
    while (!ready && child.exitCode === null && Date.now() < deadline) {
      ready = await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.ok, () => false);
      if (!ready) await sleep(200);
    }
    const close = async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    };
    if (ready) return { url, close, log: () => log };
    await close();
    if (attempt === 3 || !/address already in use/.test(log)) throw new Error(`prometheus did not start:\n${log}`);
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let dir;
let prometheus;
let vllm;
const collectors = [];
// What each collector accepted, by id: what /metrics must count.
const accepted = [new Map(), new Map()];
const timings = {};

async function post(collector, records, batchId) {
  const response = await fetch(`${collector.url}/v1/beacons`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(envelope(records, batchId)),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, json: await response.json() };
}

/** Posts `records` to collector `c`, expects the answer the ids seen so far predict, and keeps the new ones. */
async function deliver(c, records, batchId) {
  const seen = accepted[c];
  const fresh = records.filter((r, i) => !seen.has(r.id) && records.findIndex((o) => o.id === r.id) === i);
  const answer = await post(collectors[c], records, batchId);
  assert.deepEqual(answer, { status: 200, json: { accepted: fresh.length, duplicates: records.length - fresh.length } });
  for (const r of fresh) seen.set(r.id, r);
}

async function get(url, headers = {}) {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** An instant query: its result vector. */
async function query(expr) {
  const r = await get(`${prometheus.url}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = JSON.parse(r.text);
  assert.equal(body.status, 'success', `${expr}: ${r.text}`);
  return body.data.result;
}

/** `{ [labels of `by`]: value }` of an instant query. */
async function byLabels(expr, ...by) {
  return Object.fromEntries((await query(expr)).map((s) => [by.map((l) => s.metric[l] ?? '').join('|'), Number(s.value[1])]));
}

/** Polls `check` every 250 ms until it is true, for at most `ms`; then asserts it once more, for the message. */
async function until(ms, check, message) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline && !(await check())) await sleep(250);
  assert.ok(await check(), message);
}

const instance = (c) => new URL(collectors[c].url).host;
/** The accepted records of definition 1 of collector `c`. */
const counted = (c) => [...accepted[c].values()].filter((r) => r.def === 1);
const authorized = { authorization: `Bearer ${KEY}` };

before(async () => {
  const t0 = performance.now();
  buildCollector();
  assert.equal(spawnSync('prometheus', ['--version']).status, 0, 'prometheus is missing: run `bash scripts/setup.sh --browser` as root (it installs Debian\'s prometheus)');
  dir = mkdtempSync(join(tmpdir(), 'prometheus-test-'));
  for (const [name, extra] of [['a', []], ['b', ['--metrics-label-sets', String(CAP)]]]) {
    collectors.push(await startCollector({ db: join(dir, `${name}.db`), args: ['--read-key', KEY, '--rate-limit', '0', ...extra], build: false }));
  }
  vllm = await vllmStandIn();
  prometheus = await startPrometheus(dir, prometheusConfig(dir, collectors, vllm));
  timings.started = performance.now() - t0;
  await until(20_000, async () => (await query('up == 1')).length === 3, 'both collectors and the stand-in are up');

  // Collector A, before the waves: hostile model names (one stream each), a record of definition 2
  // (stored, counted nowhere), a refused batch (nothing stored), and duplicates.
  const rand = prng(19);
  const hostile = HOSTILE.map((model, i) => validRecord(`hostile-${i}`, { model, ...stream(MODELS['fast-model'], rand) }));
  await deliver(0, hostile, 'hostile');
  await deliver(0, [validRecord('definition-2', { def: 2 })], 'def-2');
  const refused = await post(collectors[0], [validRecord('refused-1'), validRecord('refused-2', { status: 'lost' })], 'refused');
  assert.equal(refused.status, 400);
  await deliver(0, hostile.slice(0, 3), 'hostile-again');
  // The waves: the same streams per main model each time (new ids), so every wave has the same
  // distribution; on B, CAP_MODELS models of 3 streams, fast ones, in the same order each wave.
  const templates = Object.fromEntries(Object.entries(MODELS).map(([model, profile]) => [model, Array.from({ length: PER_WAVE }, () => stream(profile, rand))]));
  const capTemplates = Array.from({ length: 3 }, () => stream(MODELS['fast-model'], rand));
  const served = new Set();
  for (let wave = 0; wave < WAVES; wave++) {
    const records = Object.entries(templates).flatMap(([model, list]) => list.map((fields, i) => validRecord(`${model}-${wave}-${i}`, { ...fields, model }, 5_000)));
    records.sort(() => rand() - 0.5);
    const batches = [];
    for (let i = 0; i < records.length; i += 20) batches.push(records.slice(i, i + 20));
    await Promise.all(batches.map((batch, i) => deliver(0, batch, `w${wave}-${i}`)));
    if (wave === 1) await deliver(0, [batches[0][0], validRecord(`fast-model-late`, { ...templates['fast-model'][0], model: 'fast-model' }, 5_000)], 'mixed');
    for (let m = 0; m < CAP_MODELS; m++) {
      await deliver(1, capTemplates.map((fields, i) => validRecord(`cap-${m}-${wave}-${i}`, { ...fields, model: `cap-model-${m}` }, 5_000)), `cap-${wave}-${m}`);
    }
    // The server's side of the wave's streams.
    for (const r of counted(0).filter((r) => r.model in MODELS && !served.has(r.id))) {
      vllm.observe(r.model, r);
      served.add(r.id);
    }
    await sleep(1_300);
  }
  timings.fed = performance.now() - t0;
  // Every record and the stand-in's last state scraped, then one more scrape for the rates.
  const total = counted(0).length + counted(1).length;
  await until(15_000, async () => Number((await query('sum(llm_ux_streams_total)'))[0]?.value[1]) === total, `Prometheus scraped all ${total} streams`);
  const firstTokens = counted(0).filter((r) => r.model in MODELS && r.ttftArrivalMs !== null).length;
  await until(15_000, async () => Number((await query('sum(vllm:time_to_first_token_seconds_count)'))[0]?.value[1]) === firstTokens, 'Prometheus scraped the stand-in');
  await sleep(1_500);
  timings.scraped = performance.now() - t0;
}, { timeout: 240_000 });

after(async () => {
  await prometheus?.close();
  await Promise.all(collectors.map((c) => c.close()));
  vllm?.server.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  console.log(`prometheus test: Prometheus ready at ${Math.round(timings.started)} ms, fed at ${Math.round(timings.fed)} ms, scraped at ${Math.round(timings.scraped)} ms`);
});

/** The summary of collector `c`'s records per model, over a window holding them all. */
async function summaryByModel(c) {
  const r = await get(`${collectors[c].url}/api/summary?from=${T0 - 3_600_000}&to=${Date.now() + 60_000}&groupBy=model`, authorized);
  assert.equal(r.status, 200, r.text);
  return Object.fromEntries(JSON.parse(r.text).groups.map((g) => [g.key.model ?? '', g]));
}

/** The width of the bucket of `bounds` holding `v` (seconds). */
function width(bounds, v) {
  const i = bounds.findIndex((b) => v <= b);
  return i < 0 ? Infinity : bounds[i] - (i > 0 ? bounds[i - 1] : 0);
}

test('p90 TTFT and TPOT per model in Prometheus agree with /api/summary within the bucket width', async () => {
  const summary = await summaryByModel(0);
  for (const [family, field] of [['llm_ux_time_to_first_token_seconds', 'ttftMs'], ['llm_ux_time_per_output_token_seconds', 'tpotMs']]) {
    const bounds = (await query(`count by (le) (${family}_bucket)`)).map((s) => Number(s.metric.le)).filter(Number.isFinite).sort((a, b) => a - b);
    assert.ok(bounds.length > 20, `${family}: ${bounds.length} bounds`);
    // Since the start (the counters' own values), and the docs' rate form, which leaves out the first wave.
    const allData = `histogram_quantile(0.9, sum by (le, model) (${family}_bucket))`;
    const rated = `histogram_quantile(0.9, sum by (le, model) (rate(${family}_bucket[5m])))`;
    assert.ok(blocks(DOCS, 'promql').some((b) => b.trim() === rated), `docs/prometheus.md shows ${rated}`);
    for (const expr of [allData, rated]) {
      const p90s = await byLabels(expr, 'model');
      for (const model of Object.keys(MODELS)) {
        const expected = summary[model][field].p90 / 1000;
        const got = p90s[model];
        const tolerance = Math.max(width(bounds, expected), width(bounds, got)) + 0.01 * expected;
        assert.ok(Math.abs(got - expected) <= tolerance, `${expr} for ${model}: ${got} s, /api/summary ${expected} s (tolerance ${tolerance})`);
      }
    }
  }
});

test('the counters equal the counts of the accepted records exactly, and /api/summary agrees', async () => {
  const records = counted(0);
  const on = `{instance="${instance(0)}"}`;
  const models = [...new Set(records.map((r) => cut(r.model)))];
  const expect = (pick) => Object.fromEntries(models.map((m) => [m, records.filter((r) => cut(r.model) === m).reduce((n, r) => n + pick(r), 0)]));
  const streams = await byLabels(`sum by (model, status) (llm_ux_streams_total${on})`, 'model', 'status');
  for (const m of models) {
    for (const status of ['ok', 'aborted', 'http_error', 'error', 'incomplete']) {
      assert.equal(streams[`${m}|${status}`], records.filter((r) => cut(r.model) === m && r.status === status).length, `${JSON.stringify(m)} ${status}`);
    }
  }
  const stallsKnown = (r) => (r.stalls ? 1 : 0);
  for (const [family, pick] of [
    ['llm_ux_output_tokens_total', (r) => r.outputTokens],
    ['llm_ux_stalls_total', (r) => r.stalls?.count ?? 0],
    ['llm_ux_stalled_streams_total', (r) => (r.stalls?.count > 0 ? 1 : 0)],
    ['llm_ux_stall_seconds_count', stallsKnown],
    ['llm_ux_time_to_first_token_seconds_count', (r) => (r.ttftMs === null ? 0 : 1)],
    ['llm_ux_time_to_first_token_arrival_seconds_count', (r) => (r.ttftArrivalMs === null ? 0 : 1)],
    ['llm_ux_time_per_output_token_arrival_seconds_count', (r) => (r.tpotArrivalMs === null ? 0 : 1)],
  ]) {
    assert.deepEqual(await byLabels(`sum by (model) (${family}${on})`, 'model'), expect(pick), family);
  }
  const summary = await summaryByModel(0);
  const stalled = await byLabels(`sum by (model) (llm_ux_stalled_streams_total${on}) / sum by (model) (llm_ux_stall_seconds_count${on})`, 'model');
  for (const model of Object.keys(MODELS)) {
    assert.equal(summary[model].count, expect(() => 1)[model], `${model}: count`);
    assert.ok(Math.abs(summary[model].stallRate - stalled[model]) < 1e-12, `${model}: stall rate ${summary[model].stallRate} vs ${stalled[model]}`);
  }
  assert.equal(Number((await query(`llm_ux_folded_records_total${on}`))[0].value[1]), 0);
});

test('sums over the instances are the totals of both collectors', async () => {
  const total = counted(0).length + counted(1).length;
  assert.equal(Number((await query('sum(llm_ux_streams_total)'))[0].value[1]), total);
  const perInstance = await byLabels('sum by (instance) (llm_ux_streams_total)', 'instance');
  assert.deepEqual(perInstance, { [instance(0)]: counted(0).length, [instance(1)]: counted(1).length });
  const tokens = [...counted(0), ...counted(1)].reduce((n, r) => n + r.outputTokens, 0);
  assert.equal(Number((await query('sum(llm_ux_output_tokens_total)'))[0].value[1]), tokens);
});

test('past the cap, label sets fold into "other" and the folded count is exact', async () => {
  const on = `{instance="${instance(1)}"}`;
  const sets = await query(`count by (model, scenario, variant) (llm_ux_streams_total${on})`);
  const models = sets.map((s) => s.metric.model).sort();
  assert.deepEqual(models, [...Array.from({ length: CAP }, (_, m) => `cap-model-${m}`), 'other'].sort());
  const folded = counted(1).filter((r) => Number(r.model.slice('cap-model-'.length)) >= CAP).length;
  assert.equal(Number((await query(`llm_ux_folded_records_total${on}`))[0].value[1]), folded);
  assert.equal(Number((await query(`sum(llm_ux_streams_total{instance="${instance(1)}",model="other",scenario="other",variant="other"})`))[0].value[1]), folded);
  const series = Number((await query(`count({__name__=~"llm_ux_.*", instance="${instance(1)}"})`))[0].value[1]);
  assert.equal(series, (CAP + 1) * 168 + 1, 'the series: 168 per label set and the folded counter');
});

test('hostile model names reach Prometheus intact', async () => {
  const r = await get(`${prometheus.url}/api/v1/series?match[]=${encodeURIComponent(`llm_ux_streams_total{instance="${instance(0)}"}`)}`);
  const names = new Set(JSON.parse(r.text).data.map((s) => s.model));
  assert.deepEqual([...names].sort(), [...new Set([...HOSTILE.map(cut), ...Object.keys(MODELS)])].sort());
});

test('the read key: 401 without it, for a scraper with a wrong one too', async () => {
  const open = await get(`${collectors[0].url}/metrics`);
  assert.equal(open.status, 401);
  assert.equal(JSON.parse(open.text).field, 'key');
  assert.equal(Number((await query('up{job="wrong-key"}'))[0].value[1]), 0);
  const targets = JSON.parse((await get(`${prometheus.url}/api/v1/targets`)).text).data.activeTargets;
  const wrong = targets.find((t) => t.labels.job === 'wrong-key');
  assert.match(wrong.lastError, /401/);
});

test('OpenMetrics when asked, as Prometheus does; promtool reads the text format', async () => {
  assert.match(vllm.accept, /^application\/openmetrics-text/, 'Prometheus asks for OpenMetrics first, so it scraped the collectors in OpenMetrics');
  const open = await get(`${collectors[0].url}/metrics`, { ...authorized, accept: vllm.accept });
  assert.equal(open.headers.get('content-type'), 'application/openmetrics-text; version=1.0.0; charset=utf-8');
  assert.ok(open.text.endsWith('\n# EOF\n'));
  for (const c of [0, 1]) {
    const text = await get(`${collectors[c].url}/metrics`, authorized);
    assert.equal(text.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
    assert.ok(!text.text.includes('# EOF'));
    const checked = spawnSync('promtool', ['check', 'metrics'], { input: text.text, encoding: 'utf8', timeout: 30_000 });
    assert.equal(checked.status, 0, `promtool check metrics: ${checked.stdout}${checked.stderr}`);
    assert.equal(checked.stdout + checked.stderr, '', 'no lint problem');
  }
});

test('the alert rules: promtool passes them, Prometheus runs them, each alert pends for its model only', async () => {
  const checked = spawnSync('promtool', ['check', 'rules', ALERTS], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(checked.status, 0, checked.stdout + checked.stderr);
  assert.match(checked.stdout, /SUCCESS: 2 rules found/);
  assert.ok(blocks(DOCS, 'yaml').includes(readFileSync(ALERTS, 'utf8')), 'docs/prometheus.md shows alerts.yml as it is');
  const rules = JSON.parse((await get(`${prometheus.url}/api/v1/rules`)).text).data.groups.flatMap((g) => g.rules);
  assert.deepEqual(rules.map((r) => r.name), ['RealUserTPOTOverSLO', 'RealUserStallsFrequent']);
  for (const rule of rules) assert.equal(rule.health, 'ok', `${rule.name}: ${rule.lastError}`);
  const pending = async () => JSON.parse((await get(`${prometheus.url}/api/v1/alerts`)).text).data.alerts.map((a) => `${a.labels.alertname} ${a.labels.model} ${a.state}`).sort();
  // What the rules should find, from /api/summary's figures of the same streams (the waves repeat them).
  const summary = await summaryByModel(0);
  const over = (pick, limit) => Object.keys(MODELS).filter((m) => pick(summary[m]) > limit);
  const expected = [...over((g) => g.stallRate, 0.05).map((m) => `RealUserStallsFrequent ${m} pending`), ...over((g) => g.tpotMs.p90, 50).map((m) => `RealUserTPOTOverSLO ${m} pending`)].sort();
  assert.deepEqual(expected, ['RealUserStallsFrequent stalling-model pending', 'RealUserTPOTOverSLO slow-model pending'], 'the streams are made for one model over each threshold');
  await until(10_000, async () => JSON.stringify(await pending()) === JSON.stringify(expected), `alerts ${JSON.stringify(await pending())}`);
});

test('every PromQL block of docs/prometheus.md and every query of the Grafana dashboard returns data', async () => {
  const docs = blocks(DOCS, 'promql');
  assert.ok(docs.length >= 8, `${docs.length} PromQL blocks`);
  // Grafana's variables as the dashboard opens: every model, a rate window over the whole test.
  const grafana = GRAFANA.panels.flatMap((p) => p.targets.map((t) => t.expr.replaceAll('$__rate_interval', '5m').replaceAll('$model', '.*')));
  assert.ok(grafana.length >= 10 && grafana.every((e) => !e.includes('$__')), `${grafana.length} Grafana queries`);
  for (const expr of [...docs, ...grafana]) {
    const result = await query(expr);
    assert.ok(result.some((s) => Number.isFinite(Number(s.value[1]))), `${expr}: ${JSON.stringify(result)}`);
  }
  const variable = GRAFANA.templating.list.find((v) => v.name === 'model').query.query;
  const [, metric, label] = /^label_values\((\w+), (\w+)\)$/.exec(variable);
  const values = JSON.parse((await get(`${prometheus.url}/api/v1/label/${label}/values?match[]=${metric}`)).text).data;
  assert.ok(Object.keys(MODELS).every((m) => values.includes(m)), `the model variable: ${values.length} values`);
});
