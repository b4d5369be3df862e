// The ingest measurements of one backend: HTTP load runs on fresh stores (with the CPU each process
// used), the same envelopes stored without HTTP (parse, validation and store timed apart), and a
// profile of a load run for when the goal is missed.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startCollector } from '../../scripts/collector.mjs';
import { cpuWatch } from './cpu.mjs';
import { ingestLoad, envelopes } from './collector-load.mjs';
import { runPopulate } from './collector-data.mjs';
import { perfRecord, perfShares } from './collector-profile.mjs';

/** CPU seconds a process has used (user + system; Linux counts in ticks of 10 ms). */
function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** A store name no other run uses, for a fresh store. */
const freshName = (what) => `${what}-${process.pid}-${Date.now()}`;

/**
 * One load run on a fresh store: resolves the load's figures plus the cores the collector and the
 * database server used over it and the share of the machine other processes took.
 */
export async function ingestRun(backend, load, { profile = null, logged = false } = {}) {
  const name = freshName('ingest');
  const collector = await startCollector({ args: ['--rate-limit', '0', ...(logged ? backend.loggedArgs(name) : backend.args(name))], build: false });
  try {
    const pids = [collector.process.pid, ...backend.serverPids()];
    const before = pids.map(cpuSeconds);
    const machine = cpuWatch();
    const t0 = performance.now();
    const since = new Date();
    const sampling = profile ? new Promise((r) => setTimeout(r, load.warmupMs)).then(() => perfRecord(collector.process.pid, load.durationMs / 1000, profile)) : null;
    const result = await ingestLoad(collector.url, load);
    await sampling;
    const seconds = (performance.now() - t0) / 1000;
    const [collectorCores, ...serverCores] = pids.map((pid, i) => (cpuSeconds(pid) - before[i]) / seconds);
    if (result.errors) throw new Error(`${result.errors} ingest requests failed; the first: ${result.firstError}`);
    return { ...result, collectorCores, serverCores: serverCores.reduce((a, b) => a + b, 0), others: machine().others, queryLog: logged ? await backend.queryLog(name, since) : null };
  } finally {
    await collector.close();
    await backend.drop(name);
  }
}

/**
 * `count` envelopes like the load's, stored by collector/examples/populate.rs on a fresh store, one
 * insert_batch each, in one thread and without HTTP. Resolves per record: µs to parse the JSON, to
 * validate, in the store; and the records per second the store alone takes.
 */
export async function storeAlone(backend, perEnvelope, count, log) {
  const dir = mkdtempSync(join(tmpdir(), 'collector-bench-'));
  const file = join(dir, 'envelopes.jsonl');
  const body = envelopes(perEnvelope);
  writeFileSync(file, Array.from({ length: count }, (_, n) => body(n)).join('\n'));
  const name = freshName('alone');
  try {
    const r = await runPopulate([...backend.args(name), '--envelopes', file], log);
    const us = (s) => (s * 1e6) / r.records;
    return { records: r.records, parseUs: us(r.parseSeconds), validateUs: us(r.validateSeconds), storeUs: us(r.storeSeconds), storeRecordsPerSecond: r.records / r.storeSeconds, batchMs: (r.storeSeconds * 1000) / r.batches };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await backend.drop(name);
  }
}

/** A load run with the collector sampled by perf over the timed stretch: its run figures and shares. */
export async function ingestProfile(backend, load) {
  const dir = mkdtempSync(join(tmpdir(), 'collector-perf-'));
  try {
    const run = await ingestRun(backend, load, { profile: join(dir, 'perf.data') });
    return { run, shares: perfShares(join(dir, 'perf.data')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
