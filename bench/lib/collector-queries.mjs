// The analytics queries the bench times, as the dashboard asks them, over a populated store whose
// records end at `to`: one request at a time on a keep-alive connection, wall time from sending the
// request to the end of the answer's body.
import http from 'node:http';
import { median, quantile } from './stats.mjs';

const DAY = 86_400_000;

export const QUERIES = [
  {
    id: 'summary-model-scenario', label: 'summary, 30 days, by model and scenario', summary: true,
    path: (to) => `/api/summary?from=${to - 30 * DAY}&to=${to}&groupBy=model,scenario`,
    shape: (a) => `${a.groups.length} groups, ${count(a.groups)} streams`,
  },
  {
    id: 'summary-slo', label: 'summary, 30 days, by model and scenario, with goodput for TTFT ≤ 1 s and TPOT ≤ 50 ms', summary: true,
    path: (to) => `/api/summary?from=${to - 30 * DAY}&to=${to}&groupBy=model,scenario&slo.ttftMs=1000&slo.tpotMs=50`,
    shape: (a) => `${a.groups.length} groups, ${count(a.groups)} streams`,
  },
  {
    id: 'summary-variant', label: 'summary, 30 days, by variant', summary: true,
    path: (to) => `/api/summary?from=${to - 30 * DAY}&to=${to}&groupBy=variant`,
    shape: (a) => `${a.groups.length} groups, ${count(a.groups)} streams`,
  },
  {
    id: 'timeseries', label: 'timeseries of TPOT p90, 1 h buckets, 7 days',
    path: (to) => `/api/timeseries?from=${to - 7 * DAY}&to=${to}&metric=tpotMs&q=0.9&bucket=1h`,
    shape: (a) => `${a.series.length} series of ${a.series[0]?.points.length ?? 0} points`,
  },
  {
    id: 'compare', label: 'compare variant A with B (TPOT), 7 days',
    path: (to) => `/api/compare?from=${to - 7 * DAY}&to=${to}&a=A&b=B`,
    shape: (a) => `${(a.a.count + a.b.count).toLocaleString('en-US')} TPOT values read`,
  },
  {
    id: 'streams', label: 'streams, the 50 worst by TPOT, 7 days',
    path: (to) => `/api/streams?from=${to - 7 * DAY}&to=${to}&sort=tpotMs&limit=50`,
    shape: (a) => `${a.streams.length} streams`,
  },
  {
    id: 'diagnosis', label: 'diagnosis, 7 days (every value of every dimension against the rest; peak hours against quiet ones)',
    path: (to) => `/api/diagnosis?from=${to - 7 * DAY}&to=${to}`,
    shape: (a) => `${a.findings.length} findings`,
  },
];

const count = (groups) => groups.reduce((n, g) => n + g.count, 0).toLocaleString('en-US');

/** One GET; resolves { ms, answer } or rejects on anything but a 200 JSON answer. */
function get(agent, url) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    http.get(url, { agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => {
        const ms = performance.now() - t0;
        if (res.statusCode !== 200) return reject(new Error(`GET ${url}: ${res.statusCode} ${text.slice(0, 200)}`));
        resolve({ ms, answer: JSON.parse(text) });
      });
    }).on('error', reject);
  });
}

/**
 * Times every query against the collector at `origin`: one warm-up request, then `runs` timed ones.
 * Resolves [{ id, label, summary, ms: [...], median, p95, shape }].
 */
export async function timeQueries(origin, to, runs, log) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const out = [];
    for (const q of QUERIES) {
      const url = `${origin}${q.path(to)}`;
      const { answer } = await get(agent, url);
      const ms = [];
      for (let i = 0; i < runs; i++) ms.push((await get(agent, url)).ms);
      out.push({ id: q.id, label: q.label, summary: Boolean(q.summary), ms, median: median(ms), p95: quantile(ms, 0.95), shape: q.shape(answer) });
      log(`    ${q.label}: median ${median(ms).toFixed(1)} ms, p95 ${quantile(ms, 0.95).toFixed(1)} ms (${q.shape(answer)})`);
    }
    return out;
  } finally {
    agent.destroy();
  }
}

/** Asks `path` of the collector at `origin` over and over until `until` settles; resolves how many answers came. */
export async function loopQuery(origin, path, until) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let done = false;
  let answers = 0;
  const loop = (async () => {
    while (!done) {
      await get(agent, `${origin}${path}`);
      answers++;
    }
  })();
  try {
    await until;
  } finally {
    done = true;
    await loop;
    agent.destroy();
  }
  return answers;
}
