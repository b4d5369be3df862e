// Free loopback ports for the servers a test starts (a port can be taken again before the server
// binds it: callers that cannot retry start their server on port 0 instead).
import { createServer } from 'node:net';

/** `n` distinct ports free now on 127.0.0.1 (held open together, then released). */
export async function freePorts(n) {
  const servers = await Promise.all(Array.from({ length: n }, () => new Promise((resolve, reject) => {
    const server = createServer().once('error', reject).listen(0, '127.0.0.1', () => resolve(server));
  })));
  const ports = servers.map((server) => server.address().port);
  await Promise.all(servers.map((server) => new Promise((closed) => server.close(closed))));
  return ports;
}
