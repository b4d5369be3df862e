// Starts the real collector binary (target/release/llm-ux-collector, built by `cargo build --release
// -p llm-ux-collector` when missing) on a free loopback port, for the demo, the simulation, the browser
// tests and the bench.
//
//   import { startCollector } from './collector.mjs';
//   const collector = await startCollector({ db: '/tmp/x.db', args: ['--allow-origin', '*'] });
//   collector.url; await collector.close();
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const COLLECTOR_BIN = join(ROOT, 'target', 'release', 'llm-ux-collector');

/** Builds the release binary (cargo is incremental: quick when nothing changed). */
export function buildCollector() {
  const cargo = existsSync(join(process.env.HOME ?? '', '.cargo', 'bin', 'cargo')) ? join(process.env.HOME, '.cargo', 'bin', 'cargo') : 'cargo';
  const built = spawnSync(cargo, ['build', '--release', '--quiet', '-p', 'llm-ux-collector'], { cwd: ROOT, stdio: 'inherit' });
  if (built.status !== 0) throw new Error(`cargo build -p llm-ux-collector failed (exit ${built.status})`);
}

/**
 * Spawns the collector and resolves once it listens. `listen` defaults to `127.0.0.1:0` (a free port);
 * `args` are extra flags. Resolves `{ url, process, output(), close() }`; rejects when it exits first.
 */
export async function startCollector({ db, listen = '127.0.0.1:0', args = [], build = true, env = {} } = {}) {
  if (build) buildCollector();
  // --exit-with-stdin: the collector ends when this process does, however it ends (its end of the
  // pipe closes), so no collector outlives a killed demo or test.
  const argv = ['--listen', listen, ...(db ? ['--db', db] : []), '--exit-with-stdin', ...args];
  const child = spawn(COLLECTOR_BIN, argv, { cwd: ROOT, stdio: ['pipe', 'inherit', 'pipe'], env: { ...process.env, ...env } });
  let stderr = '';
  const url = await new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      // Up to the space after the address: a chunk may end mid-address.
      const m = /listening on (http:\/\/\S+)\s/.exec(stderr);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`llm-ux-collector exited (${code}) before listening:\n${stderr}`)));
    child.once('error', reject);
  });
  // Keep draining stderr so the child never blocks on a full pipe.
  child.stderr.on('data', () => {});
  return {
    url,
    process: child,
    output: () => stderr,
    close: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
