// Builds the report object from the numbers the wasm core lays out, in the order of report-fields.js
// (generated from src/web/report_layout.rs, the layout's one definition).

import { FIELDS } from './report-fields.js';

const FORMATS = FIELDS.find(([name]) => name === 'format')[1];

/** The wasm code of a format name: 0 detects. Unknown names warn and detect. */
export function formatCode(format) {
  const index = FORMATS.indexOf(format);
  if (index < 0 && format != null && format !== 'auto') {
    console.warn(`llm-ux-meter: unknown format ${JSON.stringify(format)}, detected instead (known: auto, ${FORMATS.join(', ')})`);
  }
  return index + 1;
}

/** `n`: the report's numbers (NaN is null); `texts`: [model, finish reason]; `meta`: what JS knows. O(fields). */
export function buildReport(n, texts, { id, startedAt, model, url, dimensions }) {
  const report = { id, startedAt, model: texts[0] || model || null };
  for (const key of ['scenario', 'variant', 'appVersion']) report[key] = dimensions[key] ?? null;
  report.url = url ?? null;
  // The points go last, so every other field's number is at its own index.
  FIELDS.forEach(([name, kind], i) => {
    const number = Number.isNaN(n[i]) ? null : n[i];
    const value = Array.isArray(kind)
      ? (kind[n[i]] ?? null)
      : kind === 'bool'
        ? number === 1
        : kind === 'points'
          ? Array.from({ length: number }, (_, k) => [n[i + 1 + 2 * k], n[i + 2 + 2 * k]])
          : number;
    const [key, member] = name.split('.');
    if (!member) report[key] = value;
    // A nested object is null as a whole when its first member is.
    else if (!(key in report)) report[key] = number === null ? null : { [member]: value };
    else if (report[key]) report[key][member] = value;
  });
  report.finishReason = texts[1] || null;
  return report;
}
