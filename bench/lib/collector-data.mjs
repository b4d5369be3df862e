// Populated stores for the query timings, built by collector/examples/populate.rs (straight through
// Store::insert_batch, not over HTTP) and kept under target/bench-data/ so that later runs reuse them.
// A data set is named by backend, record count, seed and a version: a hash of the sources that decide
// what is stored (the generator, validation, rollups and the backend's store; comments aside), so a
// change to any of them builds it again. Its manifest (target/bench-data/NAME.json), written once the
// build finished, says when and how fast it was built.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, statfsSync, writeFileSync } from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './env.mjs';
import { DATA_DIR } from './collector-backends.mjs';

export const POPULATE_BIN = join(ROOT, 'target', 'release', 'examples', 'populate');
const DAYS = 30;
const SOURCES = {
  common: ['collector/examples/populate.rs', 'collector/src/validate', 'collector/src/rollup'],
  sqlite: ['collector/src/store/sqlite.rs'],
  clickhouse: ['collector/src/store/clickhouse'],
};
/** Bytes per record assumed for the disk check until a built data set says better. */
const BYTES_PER_RECORD = { sqlite: 2600, clickhouse: 900 };
/** Left free on the disk after a build, for everyone else. */
const DISK_MARGIN = 10 * 2 ** 30;

const files = (rel) => (statSync(join(ROOT, rel)).isDirectory() ? readdirSync(join(ROOT, rel)).sort().flatMap((n) => files(join(rel, n))) : [rel]);

/**
 * The version part of a data set's name: 10 hex digits of the hash of the sources it depends on,
 * comment lines left out (a reworded comment does not make 10 million records to build again).
 */
export function dataVersion(backend) {
  const hash = createHash('sha256');
  for (const rel of [...SOURCES.common, ...SOURCES[backend]].filter((p) => existsSync(join(ROOT, p))).flatMap(files)) {
    const code = readFileSync(join(ROOT, rel), 'utf8').split('\n').filter((line) => !line.trimStart().startsWith('//'));
    hash.update(rel).update(code.join('\n'));
  }
  return hash.digest('hex').slice(0, 10);
}

export function buildPopulate() {
  const r = spawnSync('cargo', ['build', '--release', '--quiet', '-p', 'llm-ux-collector', '--example', 'populate'], { cwd: ROOT, stdio: ['ignore', 2, 2] });
  if (r.status !== 0) throw new Error(`cargo build --example populate failed (exit ${r.status})`);
}

/** Runs populate with `args`; its progress lines go to `log`; resolves its final JSON line. */
export function runPopulate(args, log) {
  return new Promise((resolve, reject) => {
    const child = spawn(POPULATE_BIN, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => {
      err += c;
      for (let i; (i = err.indexOf('\n')) >= 0; err = err.slice(i + 1)) log(`    ${err.slice(0, i)}`);
    });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop())) : reject(new Error(`populate ${args.join(' ')} exited ${code}: ${err.slice(-500)}`))));
  });
}

const manifestPath = (name) => join(DATA_DIR, `${name}.json`);

/**
 * The data set of `records` records for `backend` (see collector-backends.mjs): reused when its
 * manifest and store exist, else built, after removing the same set of an older version and
 * checking the disk. Resolves the manifest plus `reused`, or `{ skipped: reason }`.
 */
export async function dataSet(backend, records, seed, log) {
  mkdirSync(DATA_DIR, { recursive: true });
  const prefix = `${backend.id}-${records}-s${seed}-`;
  const name = `${prefix}${dataVersion(backend.id)}`;
  if (existsSync(manifestPath(name)) && (await backend.exists(name))) {
    return { ...JSON.parse(readFileSync(manifestPath(name), 'utf8')), name, reused: true };
  }
  const older = new Set(readdirSync(DATA_DIR).filter((f) => f.startsWith(prefix)).map((f) => f.replace(/\.json$/, '')));
  older.delete(name);
  for (const old of older) {
    log(`  removing ${old}: built from older sources`);
    await backend.drop(old);
    rmSync(manifestPath(old), { force: true });
  }
  await backend.drop(name); // a build cut short leaves a store without a manifest
  const need = records * bytesPerRecord(backend.id);
  const free = freeBytes();
  if (free - need < DISK_MARGIN) {
    return { skipped: `it would take about ${gb(need)} of disk and ${gb(free)} is free (at least ${gb(DISK_MARGIN)} must stay free)` };
  }
  log(`  populating ${name} (${records.toLocaleString('en-US')} records, about ${gb(need)}; ${gb(free)} free)`);
  const built = await runPopulate([...backend.args(name), '--records', String(records), '--days', String(DAYS), '--seed', String(seed)], log);
  const manifest = {
    backend: backend.id, records, seed, days: DAYS, from: built.from, to: built.to, builtAt: new Date().toISOString(),
    buildSeconds: built.seconds, storeSeconds: built.storeSeconds, bytes: await backend.bytes(name),
  };
  writeFileSync(manifestPath(name), `${JSON.stringify(manifest, null, 2)}\n`);
  return { ...manifest, name, reused: false };
}

/** Bytes per record of the largest data set of this backend built so far, else a default. */
function bytesPerRecord(backendId) {
  const built = readdirSync(DATA_DIR)
    .filter((f) => f.startsWith(`${backendId}-`) && f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(join(DATA_DIR, f), 'utf8')))
    .sort((a, b) => b.records - a.records)[0];
  return built?.bytes > 0 ? built.bytes / built.records : BYTES_PER_RECORD[backendId];
}

export function freeBytes() {
  const s = statfsSync(DATA_DIR);
  return s.bavail * s.bsize;
}

export const gb = (bytes) => `${(bytes / 2 ** 30).toFixed(1)} GiB`;
