// A real HTTP collection endpoint for the beacon tests (loopback): records every attempt, answers
// with scripted failures first, and accepts the envelope as text/plain or JSON, with CORS open.
import { createServer } from 'node:http';

export function startBeaconEndpoint() {
  const attempts = []; // { at, status, contentType, body, json }
  const script = []; // statuses (and Retry-After) to answer before succeeding: { status, retryAfter }
  const server = createServer((req, res) => {
    const cors = { 'access-control-allow-origin': '*', 'access-control-allow-headers': '*', 'access-control-expose-headers': 'retry-after' };
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { ...cors, 'access-control-allow-methods': 'POST' });
      return res.end();
    }
    const parts = [];
    req.on('data', (c) => parts.push(c));
    req.on('end', () => {
      const body = Buffer.concat(parts).toString('utf8');
      const next = script.shift() ?? { status: 200 };
      let json = null;
      try {
        json = JSON.parse(body);
      } catch {
        // Recorded as is; the test decides.
      }
      attempts.push({ at: Date.now(), status: next.status, contentType: req.headers['content-type'], path: req.url, body, json });
      res.writeHead(next.status, { ...cors, 'content-type': 'application/json', ...(next.retryAfter != null && { 'retry-after': String(next.retryAfter) }) });
      res.end(next.status < 300 ? '{"accepted":true}' : '{"error":"scripted failure"}');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${server.address().port}/v1/beacons`,
    attempts,
    script,
    /** Envelopes the endpoint accepted. */
    accepted: () => attempts.filter((a) => a.status < 300 && a.json).map((a) => a.json),
    /** Unique record ids among accepted envelopes, and how many record copies arrived in all. */
    records() {
      const all = this.accepted().flatMap((e) => e.records ?? []);
      return { unique: new Map(all.map((r) => [r.id, r])), copies: all.length };
    },
    close: () => new Promise((r) => server.close(r)),
  })));
}
