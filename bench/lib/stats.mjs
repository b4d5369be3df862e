// Small statistics and formatting helpers shared by the sections.

const sorted = (xs) => [...xs].sort((a, b) => a - b);

/** The median (mean of the two middle values for an even count). */
export function median(xs) {
  if (!xs.length) return NaN;
  const s = sorted(xs);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** The q-quantile by linear interpolation (q in [0, 1]). */
export function quantile(xs, q) {
  if (!xs.length) return NaN;
  const s = sorted(xs);
  const at = (s.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return s[lo] + (s[hi] - s[lo]) * (at - lo);
}

/**
 * A distribution-free confidence interval for the median: order statistics x(k) and x(n+1-k), with
 * k the largest rank such that P(Binomial(n, 1/2) < k) <= (1 - level) / 2. Its true level is at least
 * `level`; [NaN, NaN] when n is too small for any (n < 6 at 95%). O(n log n).
 */
export function medianInterval(xs, level = 0.95) {
  const n = xs.length;
  let below = 0; // P(Binomial(n, 1/2) < k), accumulated as k grows
  let choose = 1; // C(n, k - 1)
  let k = 0;
  while (k < n / 2) {
    const next = below + choose / 2 ** n;
    if (next > (1 - level) / 2) break;
    below = next;
    k++;
    choose = (choose * (n - k + 1)) / k;
  }
  if (k === 0) return [NaN, NaN];
  const s = sorted(xs);
  return [s[k - 1], s[n - k]];
}

export const min = (xs) => Math.min(...xs);
export const max = (xs) => Math.max(...xs);

/** Thousands separators, `digits` decimals. */
export function fmt(x, digits = 0) {
  if (x === null || x === undefined || Number.isNaN(x)) return 'n/a';
  return x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** A signed number: "+1.23" or "−0.40". */
export function signed(x, digits = 2) {
  if (x === null || x === undefined || Number.isNaN(x)) return 'n/a';
  const s = fmt(Math.abs(x), digits);
  return (x < 0 && Number(s.replace(/,/g, '')) !== 0 ? '−' : '+') + s;
}

export const pct = (x, digits = 1) => (Number.isFinite(x) ? `${fmt(x * 100, digits)}%` : 'n/a');

/** "median (min–max)" of a list of numbers. */
export function spread(xs, digits = 0) {
  return `${fmt(median(xs), digits)} (${fmt(min(xs), digits)}–${fmt(max(xs), digits)})`;
}

/** A markdown table from a header row and data rows; `align` per column: 'l' or 'r'. */
export function table(header, rows, align = header.map((_, i) => (i === 0 ? 'l' : 'r'))) {
  const line = (cells) => `| ${cells.join(' | ')} |`;
  return [line(header), line(align.map((a) => (a === 'r' ? '---:' : '---'))), ...rows.map(line)].join('\n');
}

/** Rejects after `ms` with a clear message unless `promise` settles first. */
export function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: timed out after ${ms / 1000} s`)), ms);
    }),
  ]);
}

/** A progress line on stderr. */
export function progress(message) {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}
