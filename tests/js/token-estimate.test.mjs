// The token estimate as the package computes it (wasm, through a plain text stream) against the real
// o200k_base tokenizer (js-tiktoken) counted now, per language group: median absolute error under 10%.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { getEncoding } from 'js-tiktoken';
import { createMeter } from 'llm-ux-meter';

const GROUPS = ['en', 'zh', 'code', 'mixed'];
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

test('estimated tokens are within 10% (median) of o200k_base for English, Chinese, code and mixed text', async () => {
  const encoding = getEncoding('o200k_base');
  const meter = await createMeter();
  const encoder = new TextEncoder();
  for (const group of GROUPS) {
    const samples = JSON.parse(readFileSync(new URL(`../fixtures/corpus/${group}.json`, import.meta.url), 'utf8'));
    const errors = samples.map((text, i) => {
      const stream = meter.track({ format: 'text', start: 0 });
      const bytes = encoder.encode(text);
      // Odd chunk sizes split words and UTF-8 characters: the estimate must not depend on them.
      for (let at = 0; at < bytes.length; at += 37) stream.chunk(bytes.subarray(at, at + 37), 1 + at);
      const report = stream.end(bytes.length + 2);
      assert.equal(report.tokenSource, 'estimate');
      const truth = encoding.encode(text).length;
      return Math.abs(report.outputTokens - truth) / truth;
    });
    const error = median(errors);
    console.log(`token estimate: ${group}: median absolute error ${(error * 100).toFixed(1)}% over ${samples.length} samples`);
    assert.ok(error < 0.1, `${group}: median error ${error}`);
  }
});
