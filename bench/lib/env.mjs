// The run's environment: a snapshot of dist/ (so every section measures the same build even if it is
// rebuilt meanwhile), the machine, and the esbuild bundle of eventsource-parser the page uses.
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import { tmpdir, cpus, totalmem, loadavg, release } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const STAGED_WASM = 'target/npm-stage/dist/llm_ux_meter.wasm'; // scripts/build.sh: the module dist/index.js embeds

/**
 * Builds dist/ with `npm run build` when it is missing. A build already running (it empties dist/ first)
 * gets up to a minute to finish before this one starts.
 */
export async function ensureBuilt(log) {
  const needed = ['dist/index.js', STAGED_WASM];
  const ready = () => needed.every((f) => existsSync(join(ROOT, f)));
  if (ready()) return false;
  log('dist/ is incomplete: waiting up to 60 s in case a build is running');
  for (let i = 0; i < 60 && !ready(); i++) await new Promise((r) => setTimeout(r, 1000));
  if (ready()) return false;
  log('dist/ is missing: npm run build');
  const r = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 2, 2] });
  if (r.status !== 0) throw new Error('npm run build failed');
  return true;
}

/**
 * Copies dist/ into a temporary directory, with the wasm module embedded in dist/index.js as the build left
 * it in target/npm-stage; returns { dir, wasm, files: [{ path, bytes, sha256 }], cleanup() }.
 */
export function snapshotDist() {
  const dir = mkdtempSync(join(tmpdir(), 'llm-ux-meter-bench-'));
  cpSync(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
  const files = [];
  const walk = (rel) => {
    for (const name of readdirSync(join(dir, rel))) {
      const path = join(rel, name);
      if (statSync(join(dir, path)).isDirectory()) walk(path);
      else {
        const bytes = readFileSync(join(dir, path));
        files.push({ path, bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), mtime: statSync(join(ROOT, path)).mtime });
      }
    }
  };
  walk('dist');
  const wasm = join(dir, 'llm_ux_meter.wasm');
  cpSync(join(ROOT, STAGED_WASM), wasm);
  return { dir: join(dir, 'dist'), wasm, files, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

function git(args) {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

/** Machine and software facts for BENCHMARKS.md (read-only git queries). */
export function machine() {
  const cpu = cpus();
  const dirty = git(['status', '--porcelain']);
  return {
    cores: cpu.length,
    cpuModel: cpu[0]?.model?.trim() ?? 'unknown',
    memoryBytes: totalmem(),
    kernel: release(),
    node: process.version,
    commit: git(['rev-parse', '--short', 'HEAD']),
    dirtyFiles: dirty === null ? null : dirty.split('\n').filter(Boolean).length,
    loadAtStart: loadavg(),
  };
}

/** Bundles eventsource-parser's createParser with esbuild --minify (ESM), in memory. */
export async function bundleEventsourceParser() {
  const esbuild = await import('esbuild');
  const out = await esbuild.build({
    stdin: { contents: "export { createParser } from 'eventsource-parser';", resolveDir: ROOT, loader: 'js' },
    bundle: true, minify: true, format: 'esm', write: false, logLevel: 'silent',
  });
  const version = JSON.parse(readFileSync(join(ROOT, 'node_modules/eventsource-parser/package.json'), 'utf8')).version;
  return { code: out.outputFiles[0].text, bytes: out.outputFiles[0].contents, version, esbuild: esbuild.version };
}

export const load = () => loadavg().map((x) => x.toFixed(2)).join(' / ');
