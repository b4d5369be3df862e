// Section 6: the token estimate (used when a stream carries no usage) against the real o200k_base
// tokenizer (js-tiktoken), per language group of tests/fixtures/corpus, through the package in Node
// (dist/index.js of the run's snapshot): each sample as a `format: 'text'` stream in 37-byte chunks,
// as tests/js/token-estimate.test.mjs does.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { getEncoding } from 'js-tiktoken';
import { median, quantile, fmt, pct, table, max } from './lib/stats.mjs';

export const title = 'Token estimate error against o200k_base';

const GROUPS = ['en', 'zh', 'code', 'mixed'];
const CHUNK = 37;

export async function run(ctx) {
  const { createMeter } = await import(pathToFileURL(join(ctx.dist.dir, 'index.js')).href);
  const meter = await createMeter();
  if (!meter.enabled) throw new Error('the meter is disabled in Node');
  const encoding = getEncoding('o200k_base');
  const tiktokenVersion = JSON.parse(readFileSync(join(ctx.root, 'node_modules/js-tiktoken/package.json'), 'utf8')).version;
  const encoder = new TextEncoder();
  const rows = [];
  const all = [];
  for (const group of GROUPS) {
    const samples = JSON.parse(readFileSync(join(ctx.root, `tests/fixtures/corpus/${group}.json`), 'utf8'));
    const errors = [];
    const signedErrors = [];
    let truthTotal = 0;
    let estimateTotal = 0;
    for (const text of samples) {
      const stream = meter.track({ format: 'text', start: 0 });
      const bytes = encoder.encode(text);
      for (let at = 0; at < bytes.length; at += CHUNK) stream.chunk(bytes.subarray(at, at + CHUNK), 1 + at);
      const report = stream.end(bytes.length + 2);
      if (report?.tokenSource !== 'estimate') throw new Error(`${group}: tokenSource ${report?.tokenSource}`);
      const truth = encoding.encode(text).length;
      truthTotal += truth;
      estimateTotal += report.outputTokens;
      signedErrors.push((report.outputTokens - truth) / truth);
      errors.push(Math.abs(report.outputTokens - truth) / truth);
    }
    all.push(...errors);
    rows.push({ group, n: samples.length, median: median(errors), p90: quantile(errors, 0.9), max: max(errors), bias: median(signedErrors), truthTotal, estimateTotal });
  }
  const body = [
    `Each sample of \`tests/fixtures/corpus/<group>.json\` streamed through the package in Node (\`createMeter()\` from ` +
    `\`dist/index.js\`, \`track({ format: 'text' })\`, ${CHUNK}-byte chunks that split words and UTF-8 characters); the report's ` +
    `\`outputTokens\` (\`tokenSource: 'estimate'\`) against js-tiktoken ${tiktokenVersion} \`o200k_base\` counted in this run. ` +
    'Error = |estimate − truth| / truth per sample; the estimate is deterministic, so one pass is the figure.',
    '',
    table(['group', 'samples', 'median abs. error', 'p90 abs. error', 'max', 'median signed error', 'tokens: estimate / o200k_base (sum)'],
      rows.map((r) => [r.group, fmt(r.n), pct(r.median), pct(r.p90), pct(r.max), pct(r.bias), `${fmt(r.estimateTotal)} / ${fmt(r.truthTotal)}`])),
    '',
    `All ${all.length} samples: median ${pct(median(all))}, p90 ${pct(quantile(all, 0.9))}. ` +
    'The estimate is used only for streams without usage fields (the report then says `tokenSource: "estimate"`); ' +
    'it sets N, and so TPOT, for those streams: a 5% token error is a 5% TPOT error. ' +
    'Goal (from the test): median absolute error under 10% per group.',
  ].join('\n');
  const met = rows.every((r) => r.median < 0.1);
  return {
    body,
    goals: [{ name: 'Token estimate: median abs. error < 10% per group', value: rows.map((r) => `${r.group} ${pct(r.median)}`).join(', '), met }],
    headline: rows,
  };
}
