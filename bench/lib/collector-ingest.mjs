// The ingest measurements of one backend: HTTP load runs on fresh stores (with the CPU each process
// used), the same envelopes stored without HTTP (parse, validation and store timed apart), and a
// profile of a load run for when the goal is missed.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { launchCollector } from './collector-launch.mjs';
import { ingestLoad, envelopes } from './collector-load.mjs';
import { runPopulate } from './collector-data.mjs';
import { machineWatch, perfRecord, perfShares } from './collector-profile.mjs';

/** A store name no other run uses, for a fresh store. */
const freshName = (what) => `${what}-${process.pid}-${Date.now()}`;

/**
 * One load run on a fresh store, through `backend.collectors` collectors (the load spread over
 * them; the first is the one profiled): resolves the load's figures plus the cores the collectors
 * (together) and the database server used over it, the share of the machine other processes took and the share left
 * idle. Options:
 * `collectorProfile`, `serverProfile`: perf files to sample them into over the timed stretch;
 * `logged`: log the store's queries and return what they cost (ClickHouse).
 */
export async function ingestRun(backend, load, { collectorProfile = null, serverProfile = null, logged = false } = {}) {
  const name = freshName('ingest');
  const args = ['--rate-limit', '0', '--max-connections-per-ip', '1024', ...(logged ? backend.loggedArgs(name) : backend.args(name))];
  const fleet = [];
  for (let i = 0; i < backend.collectors; i++) fleet.push(await launchCollector(args));
  const [collector] = fleet;
  try {
    const watch = machineWatch(fleet.map((c) => c.process.pid), backend.serverPids());
    const since = new Date();
    const afterWarmup = new Promise((r) => setTimeout(r, load.warmupMs));
    const sampling = [
      collectorProfile && afterWarmup.then(() => perfRecord(collector.process.pid, load.durationMs / 1000, collectorProfile)),
      serverProfile && afterWarmup.then(() => perfRecord(backend.serverPids()[0], load.durationMs / 1000, serverProfile, 'fp')),
    ];
    const result = await ingestLoad(fleet.map((c) => c.url), load);
    await Promise.all(sampling);
    const { cores, serverCores, others, idle } = watch();
    const collectorCores = cores.reduce((a, b) => a + b, 0);
    if (result.errors) {
      const exited = collector.process.exitCode ?? collector.process.signalCode;
      throw new Error(`${result.errors} ingest requests failed; the first: ${result.firstError}; the collector ${exited === null ? 'runs' : `exited (${exited})`}; its output: ${collector.output().slice(-500)}`);
    }
    return { ...result, collectorCores, serverCores, others, idle, queryLog: logged ? await backend.queryLog(name, since) : null };
  } finally {
    await Promise.all(fleet.map((c) => c.close()));
    await backend.drop(name);
  }
}

/**
 * `count` envelopes like the load's, stored by collector/examples/populate.rs on a fresh store,
 * `group` envelopes per insert_batch, in one thread and without HTTP. Resolves per record: µs to
 * parse the JSON, to validate, in the store; the records per second the store alone takes; and the
 * mean time of one insert_batch.
 */
export async function storeAlone(backend, { perEnvelope, count, group }, log) {
  const dir = mkdtempSync(join(tmpdir(), 'collector-bench-'));
  const file = join(dir, 'envelopes.jsonl');
  const body = envelopes(perEnvelope);
  writeFileSync(file, Array.from({ length: count }, (_, n) => body(n)).join('\n'));
  const name = freshName('alone');
  try {
    const r = await runPopulate([...backend.args(name), '--envelopes', file, '--group', String(group)], log);
    const us = (s) => (s * 1e6) / r.records;
    return { group, records: r.records, parseUs: us(r.parseSeconds), validateUs: us(r.validateSeconds), storeUs: us(r.storeSeconds), storeRecordsPerSecond: r.records / r.storeSeconds, batchMs: (r.storeSeconds * 1000) / r.batches };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await backend.drop(name);
  }
}

/**
 * A load run with the collector (SQLite) or the database server and its query log (ClickHouse)
 * sampled by perf over the timed stretch: the run's figures and the profile's shares.
 */
export async function ingestProfile(backend, load) {
  const dir = mkdtempSync(join(tmpdir(), 'collector-perf-'));
  const file = join(dir, 'perf.data');
  try {
    const server = backend.serverPids().length > 0;
    const run = await ingestRun(backend, load, server ? { serverProfile: file, logged: true } : { collectorProfile: file });
    return { run, shares: perfShares(file) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
