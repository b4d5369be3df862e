// The bench's interval for a median decides whether a goal is met (bench/main-thread.mjs), so its
// ranks are checked against binomial tables: [x(k), x(n+1-k)] with P(B(n, 1/2) < k) <= 2.5%.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { medianInterval } from '../../bench/lib/stats.mjs';

const ranks = (n) => Array.from({ length: n }, (_, i) => i + 1);
const shuffled = (xs) => xs.map((x, i) => [((i * 7919) % xs.length), x]).sort((a, b) => a[0] - b[0]).map(([, x]) => x);

test('the 95% interval uses the ranks of the binomial tables', () => {
  // n: [k, n + 1 - k], from exact binomial sums (P(B(n, 1/2) <= k - 1) <= 2.5% < P(B(n, 1/2) <= k))
  const expected = { 6: [1, 6], 9: [2, 8], 10: [2, 9], 20: [6, 15], 25: [8, 18], 50: [18, 33] };
  for (const [n, interval] of Object.entries(expected)) assert.deepEqual(medianInterval(ranks(Number(n))), interval, `n = ${n}`);
});

test('too few values give no interval at 95%', () => {
  assert.deepEqual(medianInterval(ranks(5)), [NaN, NaN]);
  assert.deepEqual(medianInterval([]), [NaN, NaN]);
});

test('the input order does not matter and the input is left as it was', () => {
  const xs = shuffled(ranks(25).map((r) => r / 100));
  const copy = [...xs];
  assert.deepEqual(medianInterval(xs), [0.08, 0.18]);
  assert.deepEqual(xs, copy);
});

test('a lower level gives a narrower interval', () => {
  assert.deepEqual(medianInterval(ranks(25), 0.8), [9, 17]);
});
