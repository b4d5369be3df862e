// The ingest load test: `clients` keep-alive HTTP/1.1 connections, each POSTing one envelope after
// another (text/plain, as sendBeacon sends it) for a warm-up and then a timed stretch. Records are
// realistic beacons with fresh ids, so none is a duplicate the store could skip.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { quantile } from './stats.mjs';

const MODELS = ['gpt-4o', 'gpt-4o-mini', 'claude-sonnet-4', 'llama-3.1-70b'];
const SCENARIOS = ['chat', 'code', 'summarize'];
const CONNECTIONS = ['4g', '4g', '4g', '4g', '3g', null];
const TEMPLATES = 64;

/**
 * Envelopes to send, prepared before the clock starts so that the client spends its CPU on HTTP:
 * `TEMPLATES` bodies of `perEnvelope` records, each split where the record ids go; `body(n)` fills
 * in ids unique to request `n`. An envelope is what one page view sends: one session (variant,
 * browser, connection, app version), one scenario, mostly one model, its streams started over the
 * last few minutes.
 */
export function envelopes(perEnvelope, now = Date.now()) {
  const run = randomBytes(8).toString('hex');
  const templates = Array.from({ length: TEMPLATES }, (_, t) => {
    const page = {
      variant: t % 2 ? 'B' : 'A', scenario: SCENARIOS[t % SCENARIOS.length], connection: CONNECTIONS[t % CONNECTIONS.length],
      model: MODELS[t % MODELS.length], other: MODELS[(t + 1) % MODELS.length], appVersion: t % 5 ? '2.4.0' : '2.3.1',
    };
    const records = Array.from({ length: perEnvelope }, (_, i) => record(`@id${i}@`, now - (perEnvelope - i) * 9000 * Math.random(), page));
    const json = JSON.stringify({ v: 1, def: 1, sentAt: now, sessionId: run, pageId: `${run}${t}`, batchId: `${run}-${t}`, retry: 0, sampleRate: 1, records });
    return json.split(/@id\d+@/);
  });
  return (n) => {
    const parts = templates[n % TEMPLATES];
    let body = parts[0];
    for (let i = 1; i < parts.length; i++) body += `${run}${n.toString(16).padStart(8, '0')}${i.toString(16).padStart(2, '0')}` + parts[i];
    return body;
  };
}

/** One record as the meter sends it (the fields of tests/common/mod.rs `record`, values varied). */
function record(id, startedAt, page) {
  const ttft = 300 + Math.random() * 900;
  const tpot = 8 + Math.random() * 35;
  const tokens = 20 + Math.floor(Math.random() * 700);
  const stalls = Math.random() < 0.04 ? 1 : 0;
  const { connection } = page;
  return {
    id, startedAt, url: 'https://api.example.com/v1/chat/completions', model: Math.random() < 0.8 ? page.model : page.other,
    scenario: page.scenario, variant: page.variant, appVersion: page.appVersion, format: 'openai', status: 'ok',
    httpStatus: 200, renderSource: 'dom', ttfbMs: ttft * 0.4, ttftMs: ttft, ttftArrivalMs: ttft - 6, ttfoMs: ttft - 6, tpotMs: tpot,
    tpotArrivalMs: tpot * 0.97, tokensPerSecond: 1000 / tpot, outputTokens: tokens, tokenSource: 'usage', reasoningTokens: 0,
    outputEvents: tokens - 2, outputEventsByKind: { answer: tokens - 2, reasoning: 0, tool: 0 },
    gaps: { p50: tpot * 0.85, p90: tpot * 1.7, p99: tpot * 3.5, max: tpot * 5 + stalls * 900 },
    arrivalGaps: { p50: tpot * 0.83, p90: tpot * 1.65, p99: tpot * 3.4, max: tpot * 5 },
    jitterMs: tpot * 0.3, stalls: { count: stalls, count1000: 0, longestMs: stalls * 900, totalMs: stalls * 900 },
    renderDelay: { p50: 6.5, p90: 14.2 }, durationMs: ttft + tokens * tpot, hidden: false, finishReason: 'stop',
    anomalies: { malformedEvents: 0, oversizeDropped: 0, unterminatedLast: false }, def: 1, connection,
    rttMs: connection ? 75 : null, deviceMemoryGb: connection ? 8 : null, cores: 8, browser: connection ? 'chromium' : 'safari',
  };
}

/**
 * Runs the load against `urls` (collectors' origins; client `i` sends to `urls[i % urls.length]`, as
 * a load balancer spreads connections). Resolves { records, requests, seconds,
 * errors, firstError, bodyBytes (of one envelope), recordsPerSecond, p50Ms, p99Ms, clientCpu (this
 * process's CPU seconds per second of the timed stretch) }. Any answer other than 200 with every record accepted counts as an error.
 */
export async function ingestLoad(urls, { clients, perEnvelope, warmupMs, durationMs }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  const targets = urls.map((url) => new URL('/v1/beacons', url));
  const body = envelopes(perEnvelope);
  let next = 0;
  let errors = 0;
  let firstError = null;
  const latencies = [];
  let records = 0;
  const t0 = performance.now();
  const timedFrom = t0 + warmupMs;
  const end = timedFrom + durationMs;
  let cpuFrom = null;
  const post = (target, payload) => new Promise((resolve) => {
    const req = http.request(target, { method: 'POST', agent, headers: { 'content-type': 'text/plain;charset=UTF-8', 'content-length': Buffer.byteLength(payload) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode, text }));
    });
    req.setTimeout(30_000, () => req.destroy(new Error('no answer within 30 s')));
    req.on('error', (error) => resolve({ status: 0, text: String(error) }));
    req.end(payload);
  });
  const client = async (_, i) => {
    const target = targets[i % targets.length];
    while (performance.now() < end) {
      const payload = body(next++);
      const sent = performance.now();
      const answer = await post(target, payload);
      const done = performance.now();
      const ok = answer.status === 200 && JSON.parse(answer.text).accepted === perEnvelope;
      if (!ok) {
        errors++;
        firstError ??= `${answer.status} ${answer.text.slice(0, 200)}`;
      }
      // Requests completed in the timed stretch count, whenever they were sent.
      if (done >= timedFrom && done <= end) {
        latencies.push(done - sent);
        if (ok) records += perEnvelope;
      }
      if (cpuFrom === null && done >= timedFrom) cpuFrom = process.cpuUsage();
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  const cpu = process.cpuUsage(cpuFrom ?? undefined);
  agent.destroy();
  const seconds = durationMs / 1000;
  return {
    records, requests: latencies.length, seconds, errors, firstError, bodyBytes: Buffer.byteLength(body(0)),
    recordsPerSecond: records / seconds,
    p50Ms: quantile(latencies, 0.5), p99Ms: quantile(latencies, 0.99),
    clientCpu: (cpu.user + cpu.system) / 1e6 / ((performance.now() - Math.max(timedFrom, t0)) / 1000),
  };
}
