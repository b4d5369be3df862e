// A loopback static server for the bench pages: URL prefixes mapped to directories (the dist/ snapshot,
// bench/), plus files held in memory (the esbuild bundle of eventsource-parser the page uses).
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, resolve } from 'node:path';
import { TYPES } from '../../scripts/serve.mjs';

/** `mounts`: { '/dist/': '/abs/dir', ... }; `files`: { '/vendor/x.js': 'text' }. Resolves to { url, close() }. */
export function serveBench(mounts, files = {}) {
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    try {
      let body;
      if (Object.hasOwn(files, path)) body = files[path];
      else {
        const prefix = Object.keys(mounts).find((p) => path.startsWith(p));
        if (!prefix) throw Object.assign(new Error('no mount'), { code: 'ENOENT' });
        const base = resolve(mounts[prefix]);
        const file = normalize(join(base, path.slice(prefix.length)));
        if (!file.startsWith(base)) throw Object.assign(new Error('outside'), { code: 'ENOENT' });
        body = await readFile(file);
      }
      res.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
      res.end(body);
    } catch (error) {
      res.writeHead(error.code === 'ENOENT' ? 404 : 500, { 'content-type': 'text/plain' });
      res.end('not found');
    }
  });
  return new Promise((done) => server.listen(0, '127.0.0.1', () => done({
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((r) => {
      server.close(() => r());
      server.closeAllConnections();
    }),
  })));
}
