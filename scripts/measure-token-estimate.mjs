#!/usr/bin/env node
// Regenerates the reference token counts of the estimator corpus and prints how
// far `TokenEstimate` (src/metrics/token_estimate.rs) is from them.
//
// Usage, from the repository root (js-tiktoken is a devDependency):
//   npm install
//   node scripts/measure-token-estimate.mjs            # rewrite counts, print table
//   node scripts/measure-token-estimate.mjs --no-write # only print the table
//
// 1. Reads the corpus tests/fixtures/corpus/<group>.json (each a JSON array of
//    sample strings; sample id = "<group>/<index>") and counts every sample with
//    the reference tokenizer, js-tiktoken's o200k_base (GPT-4o family).
// 2. Writes tests/fixtures/corpus/tiktoken-counts.json ({"<id>": count}), which
//    the native test tests/token_estimate.rs asserts against.
// 3. Gets the estimator's numbers by running
//      TOKEN_ESTIMATE_JSON=1 cargo test --test token_estimate estimates_match_tiktoken -- --nocapture
//    whose test prints one line `TOKEN_ESTIMATE_JSON {"<id>": estimate, ...}`,
//    then prints per group the median, p90 and max absolute relative error
//    |estimate - reference| / reference.
import { getEncoding } from 'js-tiktoken';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const GROUPS = ['en', 'zh', 'code', 'mixed'];
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const corpusDir = join(root, 'tests', 'fixtures', 'corpus');
const write = !process.argv.includes('--no-write');

const enc = getEncoding('o200k_base');
const samples = {};
const counts = {};
for (const g of GROUPS) {
  const arr = JSON.parse(readFileSync(join(corpusDir, `${g}.json`), 'utf8'));
  arr.forEach((text, i) => {
    samples[`${g}/${i}`] = text;
    counts[`${g}/${i}`] = enc.encode(text).length;
  });
}
const countsPath = join(corpusDir, 'tiktoken-counts.json');
if (write) {
  const lines = Object.entries(counts).map(([id, n]) => `  ${JSON.stringify(id)}: ${n}`);
  writeFileSync(countsPath, `{\n${lines.join(',\n')}\n}\n`);
  console.log(`wrote ${countsPath} (${lines.length} samples)`);
} else {
  const stored = JSON.parse(readFileSync(countsPath, 'utf8'));
  const stale = Object.keys(counts).filter((id) => stored[id] !== counts[id]);
  console.log(stale.length ? `stored counts differ for ${stale.length} samples` : 'stored counts are current');
}

const run = spawnSync(
  'cargo',
  ['test', '--test', 'token_estimate', 'estimates_match_tiktoken', '--', '--nocapture'],
  { cwd: root, env: { ...process.env, TOKEN_ESTIMATE_JSON: '1' }, encoding: 'utf8', maxBuffer: 64 << 20 },
);
const line = (run.stdout ?? '').split('\n').find((l) => l.startsWith('TOKEN_ESTIMATE_JSON '));
if (!line) {
  process.stderr.write(`${run.stdout ?? ''}${run.stderr ?? ''}\nno TOKEN_ESTIMATE_JSON line from cargo test\n`);
  process.exit(1);
}
const estimates = JSON.parse(line.slice('TOKEN_ESTIMATE_JSON '.length));

// Same statistics as tests/token_estimate.rs: median (mean of the two middle
// values for an even count) and nearest-rank p90.
const median = (v) => (v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2);
const p90 = (v) => v[Math.ceil((9 * v.length) / 10) - 1]; // nearest rank ceil(0.9 n)
const pct = (x) => `${(100 * x).toFixed(1)}%`.padStart(8);
console.log('group   samples  o200k tokens  estimated  median |err|  p90 |err|  max |err|');
for (const g of [...GROUPS, 'all']) {
  const ids = Object.keys(counts).filter((id) => g === 'all' || id.startsWith(`${g}/`));
  const errs = ids.map((id) => Math.abs(estimates[id] - counts[id]) / counts[id]).sort((a, b) => a - b);
  const ref = ids.reduce((s, id) => s + counts[id], 0);
  const est = ids.reduce((s, id) => s + estimates[id], 0);
  console.log(
    `${g.padEnd(6)} ${String(ids.length).padStart(8)} ${String(ref).padStart(13)} ${String(est).padStart(10)}` +
      `    ${pct(median(errs))}   ${pct(p90(errs))}  ${pct(errs[errs.length - 1])}`,
  );
}
if (run.status !== 0) {
  console.log('note: cargo test failed (see `cargo test --test token_estimate`)');
  process.exit(run.status ?? 1);
}
