// A recording HTTP proxy on 127.0.0.1 for the collector's ClickHouse store: the collector is given
// the proxy's URL as `--clickhouse`, and every request is forwarded unchanged (method, path with its
// query string, headers but Host, body) to the real ClickHouse, its answer streamed back (status,
// headers, body as it arrives). Each request is recorded in arrival order as a statement:
//   sql       the `query` URL parameter, else the request body (the store's SELECTs, DDL and
//             INSERT ... SELECT travel as the body; INSERT ... FORMAT RowBinary in `query`);
//   settings  the other URL parameters;
//   body      for a request with both a `query` parameter and a body: the body's file name in
//             `dir` (written as it arrives), for the first `maxBodies` such requests; later ones are
//             counted in `stats.bodiesDropped` and left out of the log (without its rows such an
//             insert could not be replayed).
// `writeLog()` writes `dir/statements.jsonl` ({"sql", "body", "settings"} a line, as
// collector/tests/reference/replay_statements.py reads it) with the statements that ClickHouse
// answered 200, or whose client left before the answer (a collector killed mid-request): a request
// cut short is left out, and so is one ClickHouse refused (counted in `stats.refused`, its error
// kept in `refusals`). `writeLog({ maxPerShape })` keeps at most that many body-less statements of
// each shape (the same SQL but for its literals) to bound the replay.
//
// Cost per request: one loopback connection more and a copy of the SQL; bodies are streamed, not
// buffered, both ways. Any number of requests at once (the store opens one connection per request,
// `Connection: close`); the connection to ClickHouse is one per request too, as the store's own is.
import { createServer, request } from 'node:http';
import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// Hop-by-hop headers: each connection has its own (node frames the answer itself).
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'te', 'trailer', 'upgrade']);

/** `sql` with its string and number literals as S and N, and lists of them (or of tuples of them) as L. */
export function shapeOf(sql) {
  return sql
    .replace(/'(?:[^'\\]|\\.)*'/g, 'S')
    .replace(/\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b/gi, 'N')
    .replace(/\b[SN](?:\s*,\s*[SN])+\b/g, 'L')
    .replace(/\([LSN]\)(?:\s*,\s*\([LSN]\))+/g, 'L');
}

/**
 * Starts the proxy for `target` (`http://host:port`). Resolves `{ url, entries, stats, refusals,
 * writeLog(), close() }`; `entries` are all requests recorded so far, in arrival order.
 */
export async function startRecordingProxy(target, { dir, maxBodies = 40 } = {}) {
  const upstream = new URL(target);
  mkdirSync(dir, { recursive: true });
  const entries = [];
  const refusals = [];
  const stats = { requests: 0, bodies: 0, bodiesDropped: 0, cut: 0, clientLeft: 0, refused: 0, upstreamErrors: 0, leftOut: 0 };
  const pending = []; // body files being written

  const server = createServer((req, res) => {
    stats.requests++;
    const params = new URL(req.url, 'http://proxy').searchParams;
    const query = params.get('query');
    const settings = Object.fromEntries([...params].filter(([name]) => name !== 'query'));
    // complete: the whole request was forwarded (cut: the client left before); clientLeft: before
    // the whole answer; dropped: its body was not kept; ms: from the request to the answer's end.
    const entry = { sql: query, body: null, settings, status: null, complete: false, cut: false, clientLeft: false, dropped: false, ms: null };
    const started = performance.now();
    res.on('finish', () => void (entry.ms = performance.now() - started));
    entries.push(entry);
    const sqlChunks = query === null ? [] : null;
    let file = null;
    const up = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host }, agent: false }, (answer) => {
      entry.status = answer.statusCode;
      res.writeHead(answer.statusCode, Object.fromEntries(Object.entries(answer.headers).filter(([name]) => !HOP.has(name))));
      if (answer.statusCode !== 200) {
        let text = ''; // the error, kept (to 2,000 characters) as it streams through
        answer.on('data', (chunk) => void (text.length < 2000 && (text += chunk)));
        answer.on('end', () => refusals.push({ sql: entry.sql?.slice(0, 1000), status: answer.statusCode, error: text.slice(0, 2000) }));
      }
      answer.on('error', () => res.destroy());
      answer.pipe(res);
    });
    up.on('error', (e) => {
      if (entry.clientLeft || entry.cut) return; // destroyed below: the client left
      stats.upstreamErrors++;
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end(`recording proxy: ${e.message}`);
      else res.destroy();
    });
    // A client that leaves (killed) before its answer: ClickHouse sees its connection close too.
    res.on('close', () => {
      if (!res.writableFinished) {
        entry.clientLeft = true;
        stats.clientLeft++;
        up.destroy();
      }
    });
    req.on('data', (chunk) => {
      if (sqlChunks) return void sqlChunks.push(chunk);
      if (!file && !entry.dropped) {
        if (stats.bodies >= maxBodies) {
          stats.bodiesDropped++;
          entry.dropped = true;
          return;
        }
        entry.body = `body-${String(++stats.bodies).padStart(4, '0')}.bin`;
        file = createWriteStream(join(dir, entry.body));
        pending.push(new Promise((resolve) => file.on('close', resolve)));
      }
      file?.write(chunk);
    });
    req.on('end', () => {
      entry.complete = true;
      if (sqlChunks) entry.sql = Buffer.concat(sqlChunks).toString('utf8');
      file?.end();
    });
    req.on('close', () => {
      if (!req.complete) {
        entry.cut = true;
        stats.cut++;
        up.destroy();
        file?.end();
      }
    });
    req.pipe(up); // with backpressure; the listener above sees the same chunks
  });
  await new Promise((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));

  /**
   * Writes `dir/statements.jsonl` (see the top of this file) and returns the statements written. Of
   * the statements without a body, at most `maxPerShape` of each shape (the SQL with its literals
   * and lists of them made placeholders, see `shapeOf`): the first `maxPerShape - 1` and the longest
   * of the others, in their order.
   */
  async function writeLog({ maxPerShape = Infinity } = {}) {
    await Promise.all(pending);
    stats.refused = entries.filter((e) => e.status !== null && e.status !== 200).length;
    const ran = entries.filter((e) => e.complete && !e.dropped && e.sql && (e.status === 200 || (e.status === null && e.clientLeft)));
    const byShape = new Map();
    for (const [i, e] of ran.entries()) {
      if (e.body) continue;
      const shape = shapeOf(e.sql);
      if (!byShape.has(shape)) byShape.set(shape, []);
      byShape.get(shape).push(i);
    }
    const left = new Set();
    for (const indices of byShape.values()) {
      if (indices.length <= maxPerShape) continue;
      const rest = indices.slice(Math.max(0, maxPerShape - 1));
      const longest = rest.reduce((a, b) => (ran[b].sql.length > ran[a].sql.length ? b : a));
      for (const i of rest) if (i !== longest) left.add(i);
    }
    stats.leftOut = left.size;
    const logged = ran.filter((_, i) => !left.has(i));
    writeFileSync(join(dir, 'statements.jsonl'), logged.map(({ sql, body, settings }) => `${JSON.stringify({ sql, body, settings })}\n`).join(''));
    return logged;
  }

  return {
    url: `http://127.0.0.1:${server.address().port}`,
    entries,
    stats,
    refusals,
    writeLog,
    close: () => new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections?.();
    }),
  };
}
