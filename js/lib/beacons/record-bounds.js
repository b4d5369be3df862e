// The bounds of the beacon contract (schema/beacon.v1.json) on a record. The llm-ux collector refuses
// a whole batch for one record outside them, so such a record (a stream that ran over an hour, one
// kept in localStorage for a month, odd values given to the manual API) is dropped before it is
// queued, and counted; the rest of its batch arrives. The report's numbers have theirs beside them in
// ../report-fields.js, written there from the schema, which index.js's loader hands over: no field is
// named in both bundles; the other fields have theirs here, in the same form. tests/js/beacons.test.mjs
// checks these bounds against the schema.

import { MAX_URL_LENGTH } from './record-url.js';

const HOUR_MS = 3_600_000;

/**
 * The fields report-fields.js does not hold (the texts and the page's context), as it writes a number:
 * [field, minimum, maximum]; a text as [field, 'text', most characters (code points, as JSON Schema counts them)].
 */
export const OTHER_FIELDS = [
  ['id', 'text', 128],
  ...'model scenario variant appVersion finishReason'.split(' ').map((field) => [field, 'text', 256]),
  ['url', 'text', MAX_URL_LENGTH],
  ['connection', 'text', 32],
  ['rttMs', 0, HOUR_MS],
  ['deviceMemoryGb', 0, 1024],
  ['cores', 1, 4096],
];

/** The collector takes `startedAt` up to 30 days before its clock: a day less here, for clocks apart. */
export const MAX_AGE_MS = 29 * 24 * HOUR_MS;
/** ...and up to 1 hour after it. */
export const MAX_AHEAD_MS = HOUR_MS;

const inRange = (value, min, max) => typeof value === 'number' && value >= min && value <= max;

/**
 * Whether `value` is within the bounds of `field`, an entry of FIELDS or OTHER_FIELDS (of other kinds,
 * names or 'bool', always); null (not measured) always is.
 */
export function fits([, kind, ...bounds], value) {
  if (value == null) return true;
  if (typeof kind === 'number') return inRange(value, kind, bounds[0]);
  // UTF-16 units are at least as many as code points: count these only when it can matter.
  if (kind === 'text') return typeof value === 'string' && (value.length <= bounds[0] || [...value].length <= bounds[0]);
  // The points' bounds are those of each of their numbers.
  return kind !== 'points' || value.every((point) => point.every((number) => inRange(number, ...bounds)));
}

/**
 * Whether the collector would take `record` at `nowMs` (epoch ms), as far as the page can tell; `fields`:
 * the report's, with their bounds (report-fields.js). O(fields).
 */
export function withinBounds(record, nowMs, fields) {
  const fieldsFit = [...fields, ...OTHER_FIELDS].every((field) => {
    const [key, member] = field[0].split('.');
    return fits(field, member ? record[key]?.[member] : record[key]);
  });
  return fieldsFit && record.startedAt >= nowMs - MAX_AGE_MS && record.startedAt <= nowMs + MAX_AHEAD_MS;
}
