// Builds the report object from the numbers the wasm core lays out, in the order of report-fields.js
// (generated from src/web/report_layout.rs, the layout's one definition).

import { FIELDS } from './report-fields.js';

const FORMATS = FIELDS.find(([name]) => name === 'format')[1];

// Each field's place in the report, worked out once: [key, member of a nested object or null, decode of
// the numbers from the field's own].
const PLACES = FIELDS.map(([name, kind]) => {
  const [key, member = null] = name.split('.');
  const decode = Array.isArray(kind)
    ? (n, i) => kind[n[i]] ?? null
    : kind === 'bool'
      ? (n, i) => n[i] === 1
      : kind === 'points'
        ? (n, i) => Array.from({ length: n[i] }, (_, k) => [n[i + 1 + 2 * k], n[i + 2 + 2 * k]])
        : (n, i) => (Number.isNaN(n[i]) ? null : n[i]);
  return [key, member, decode];
});

/** The wasm code of a format name: 0 detects. Unknown names warn and detect. */
export function formatCode(format) {
  if (format == null || format === 'auto') return 0;
  const index = FORMATS.indexOf(format);
  if (index < 0) {
    console.warn(`llm-ux-meter: unknown format ${JSON.stringify(format)}, detecting it instead. Known: auto, ${FORMATS.join(', ')}.`);
    return 0;
  }
  return index + 1;
}

/** `n`: the report's numbers (NaN is null); `texts`: [model, finish reason]; `meta`: what JS knows. O(fields). */
export function buildReport(n, texts, { id, startedAt, model, url, dimensions }) {
  const report = {
    id,
    startedAt,
    model: texts[0] || model || null,
    scenario: dimensions.scenario ?? null,
    variant: dimensions.variant ?? null,
    appVersion: dimensions.appVersion ?? null,
    url: url ?? null,
  };
  // The points go last, so every other field's number is at its own index.
  PLACES.forEach(([key, member, decode], i) => {
    if (member === null) report[key] = decode(n, i);
    // A nested object is null as a whole when its first member is.
    else if (!(key in report)) report[key] = Number.isNaN(n[i]) ? null : { [member]: decode(n, i) };
    else if (report[key]) report[key][member] = decode(n, i);
  });
  report.finishReason = texts[1] || null;
  return report;
}
