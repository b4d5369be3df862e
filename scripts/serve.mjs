// A small static file server for the demo and the browser tests (loopback only).
// Usage: node scripts/serve.mjs [--port 8080] [--root .]
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';

/** Content types by file extension, shared with the bench's server. */
export const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.css': 'text/css',
  '.sse': 'text/event-stream',
  '.ndjson': 'application/x-ndjson',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * Serves `root` on 127.0.0.1:`port` (0 picks a free port). Resolves to the listening server.
 * `headersFor(path)` may add response headers (a test page's Content Security Policy, say).
 */
export function serveStatic(root, port = 0, headersFor = () => ({})) {
  const base = resolve(root);
  const server = createServer(async (req, res) => {
    try {
      const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      let file = normalize(join(base, path));
      if (!file.startsWith(base)) throw Object.assign(new Error('outside root'), { code: 'ENOENT' });
      if ((await stat(file)).isDirectory()) file = join(file, 'index.html');
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store', ...headersFor(path) });
      res.end(body);
    } catch (error) {
      res.writeHead(error.code === 'ENOENT' ? 404 : 500, { 'content-type': 'text/plain' });
      res.end(error.code === 'ENOENT' ? 'not found' : 'error');
    }
  });
  return new Promise((done) => server.listen(port, '127.0.0.1', () => done(server)));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { port: { type: 'string', default: '8080' }, root: { type: 'string', default: '.' } } });
  const server = await serveStatic(values.root, Number(values.port));
  console.log(`serving ${resolve(values.root)} at http://127.0.0.1:${server.address().port}/`);
}
