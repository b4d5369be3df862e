// The bounds of the beacon contract (schema/beacon.v1.json) on a record. The llm-ux collector refuses
// a whole batch for one record outside them, so such a record (a stream that ran over an hour, one
// kept in localStorage for a month, odd values given to the manual API) is dropped before it is
// queued, and counted; the rest of its batch arrives. The report's numbers have theirs beside them in
// ../report-fields.js, written there from the schema, which index.js's loader hands over: no field is
// named in both bundles. tests/js/beacons.test.mjs checks these bounds against the schema.

import { MAX_URL_LENGTH } from './record-url.js';

const HOUR_MS = 3_600_000;

/** The page context's numbers, as report-fields.js writes the report's: [field, minimum, maximum]. */
export const CONTEXT_NUMBERS = [
  ['rttMs', 0, HOUR_MS],
  ['deviceMemoryGb', 0, 1024],
  ['cores', 1, 4096],
];

/** Texts: field → most characters (code points, as JSON Schema counts them). */
export const LENGTHS = new Map([
  ['id', 128],
  ...'model scenario variant appVersion finishReason'.split(' ').map((field) => [field, 256]),
  ['url', MAX_URL_LENGTH],
  ['connection', 32],
]);

/** The collector takes `startedAt` up to 30 days before its clock: a day less here, for clocks apart. */
export const MAX_AGE_MS = 29 * 24 * HOUR_MS;
/** ...and up to 1 hour after it. */
export const MAX_AHEAD_MS = HOUR_MS;

/** Whether `value` is a number from `min` to `max`, or null (not measured). */
const inRange = (value, min, max) => value == null || (typeof value === 'number' && value >= min && value <= max);

/** Whether `value` is a text of at most `length` characters, or null. */
// UTF-16 units are at least as many as code points: count these only when it can matter.
const fitsLength = (value, length) => value == null || (typeof value === 'string' && (value.length <= length || [...value].length <= length));

/** Whether `value` is within the bounds of `field`, one of the page context's. */
export function fits(field, value) {
  const number = CONTEXT_NUMBERS.find(([name]) => name === field);
  return number ? inRange(value, number[1], number[2]) : fitsLength(value, LENGTHS.get(field));
}

/**
 * Whether the collector would take `record` at `nowMs` (epoch ms), as far as the page can tell; `fields`:
 * the report's, with their bounds (report-fields.js). O(fields).
 */
export function withinBounds(record, nowMs, fields) {
  for (const [path, kind, ...bounds] of [...fields, ...CONTEXT_NUMBERS]) {
    const [key, member] = path.split('.');
    const value = member ? record[key]?.[member] : record[key];
    // A number's kind is its bounds; points have theirs after their kind, for each of their numbers.
    if (typeof kind === 'number' ? !inRange(value, kind, bounds[0])
      : kind === 'points' && value?.some((point) => point.some((number) => !inRange(number, ...bounds)))) return false;
  }
  for (const [field, length] of LENGTHS) if (!fitsLength(record[field], length)) return false;
  return record.startedAt >= nowMs - MAX_AGE_MS && record.startedAt <= nowMs + MAX_AHEAD_MS;
}
