// The collector's two stores as the bench uses them: where a store's data lives, the collector
// arguments that open it, how big it is on disk, how to drop it, and whose CPU time serves it.
//   SQLite: a file under target/bench-data/.
//   ClickHouse: a database in a private server (scripts/clickhouse.sh, data in
//   target/bench-data/clickhouse/, kept between runs so populated databases can be reused).
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './env.mjs';
import { adopt, release } from './cpu.mjs';

// The real path: a worktree may link its target/bench-data here to share the data sets, and
// scripts/clickhouse.sh recognises its server by the directory named on its command line.
mkdirSync(join(ROOT, 'target', 'bench-data'), { recursive: true });
export const DATA_DIR = realpathSync(join(ROOT, 'target', 'bench-data'));
const CLICKHOUSE_DIR = join(DATA_DIR, 'clickhouse');
const CLICKHOUSE_SCRIPT = join(ROOT, 'scripts', 'clickhouse.sh');

/** Bytes of the files under `path` (0 when missing). */
export function dirBytes(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(path).reduce((sum, name) => sum + dirBytes(join(path, name)), 0);
}

export function sqliteBackend() {
  const file = (name) => join(DATA_DIR, name, 'beacons.db');
  return {
    id: 'sqlite',
    title: 'SQLite',
    /** Collectors an ingest run spreads its load over (one per SQLite file), and its senders. */
    collectors: 1,
    clients: 32,
    args: (name) => ['--db', file(name)],
    exists: async (name) => existsSync(file(name)),
    bytes: async (name) => dirBytes(join(DATA_DIR, name)),
    drop: async (name) => rmSync(join(DATA_DIR, name), { recursive: true, force: true }),
    serverPids: () => [],
    settle: async () => {},
    close: async () => {},
  };
}

/** Whether this checkout has the ClickHouse start script (the backend is measured only then). */
export const clickhouseAvailable = () => existsSync(CLICKHOUSE_SCRIPT);

/** Whether a process with this pid runs. */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts the private ClickHouse server (scripts/clickhouse.sh installs it when missing), or uses the
 * one already running there (another bench run's, say): `close()` stops it only if this call started it.
 */
export async function clickhouseBackend() {
  const pidFile = join(CLICKHOUSE_DIR, 'server.pid');
  const startedHere = !(existsSync(pidFile) && alive(Number(readFileSync(pidFile, 'utf8'))));
  const url = execFileSync('bash', [CLICKHOUSE_SCRIPT, 'start', CLICKHOUSE_DIR], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  const query = async (sql) => {
    const answer = await fetch(url, { method: 'POST', body: sql });
    const text = await answer.text();
    if (!answer.ok) throw new Error(`ClickHouse: ${text.slice(0, 300)}`);
    return text.trim();
  };
  // Its CPU is the bench's, not another process's noise (the server runs detached).
  const serverPid = Number(readFileSync(pidFile, 'utf8'));
  adopt(serverPid);
  const version = await query('SELECT version()');
  // A database name is a plain identifier: keys use dashes, ClickHouse wants underscores.
  const database = (name) => name.replace(/[^A-Za-z0-9_]/g, '_');
  return {
    id: 'clickhouse',
    title: `ClickHouse ${version}`,
    /** Two stateless collectors on one database (issue 15), on the same cores as the server; enough
     * senders to fill their 200 ms gathering (see the section's text). */
    collectors: 2,
    clients: 512,
    url,
    args: (name) => ['--clickhouse', url, '--clickhouse-database', database(name)],
    /** The same with every query of the collector logged in system.query_log (a URL setting). */
    loggedArgs: (name) => ['--clickhouse', `${url}/?log_queries=1`, '--clickhouse-database', database(name)],
    /**
     * What the logged queries on database `name` cost since `since` (a Date): per kind of statement
     * (the database name left out, numbers and quoted strings blanked out), its count and its summed
     * and mean durations (ms).
     */
    queryLog: async (name, since) => {
      await query('SYSTEM FLUSH LOGS');
      const bare = `replaceAll(query, '${database(name)}.', '')`;
      const kind = `substring(replaceRegexpAll(replaceRegexpAll(${bare}, '\\'[^\\']*\\'', '?'), '[0-9]+', 'N'), 1, 60)`;
      const rows = await query(
        `SELECT ${kind} AS kind, count(), sum(query_duration_ms) FROM system.query_log WHERE type = 2 AND position(query, '${database(name)}.') > 0 ` +
        `AND event_time >= toDateTime(${Math.floor(since.getTime() / 1000)}) GROUP BY kind ORDER BY sum(query_duration_ms) DESC FORMAT TSV`,
      );
      return rows.split('\n').filter(Boolean).map((line) => {
        const [statement, count, totalMs] = line.split('\t');
        return { statement: statement.replace(/\\'/g, "'"), count: Number(count), totalMs: Number(totalMs), meanMs: Number(totalMs) / Number(count) };
      });
    },
    exists: async (name) => (await query(`SELECT count() FROM system.databases WHERE name = '${database(name)}'`)) === '1',
    bytes: async (name) => Number(await query(`SELECT sum(bytes_on_disk) FROM system.parts WHERE active AND database = '${database(name)}'`)),
    drop: (name) => query(`DROP DATABASE IF EXISTS ${database(name)}`),
    serverPids: () => [serverPid],
    /** Waits (at most `maxMs`) for background merges to end, so they do not run beside a timing. */
    settle: async (maxMs = 180_000) => {
      const end = Date.now() + maxMs;
      while (Date.now() < end && Number(await query('SELECT count() FROM system.merges')) > 0) await new Promise((r) => setTimeout(r, 1000));
    },
    close: async () => {
      if (!startedHere) return;
      release(serverPid);
      execFileSync('bash', [CLICKHOUSE_SCRIPT, 'stop', CLICKHOUSE_DIR], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    },
  };
}
