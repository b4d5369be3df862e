// The bounds of the beacon contract (schema/beacon.v1.json) on a record. The llm-ux collector refuses
// a whole batch for one record outside them, so such a record (a stream that ran over an hour, one
// kept in localStorage for a month, odd values given to the manual API) is dropped before it is
// queued, and counted; the rest of its batch arrives. tests/js/beacons.test.mjs checks these bounds
// against the schema.

import { MAX_URL_LENGTH } from './record-url.js';

const HOUR_MS = 3_600_000;
const DURATION = [0, HOUR_MS];
const COUNT = [0, 10_000_000];
/** Space-separated field paths, each with `bound`. */
const each = (fields, bound) => fields.split(' ').map((field) => [field, bound]);

/** Numbers: field path → [minimum, maximum]; null (not measured) is always within. */
export const RANGES = new Map([
  ...each('ttfbMs ttftMs ttftArrivalMs ttfoMs tpotMs tpotArrivalMs jitterMs durationMs rttMs stalls.longestMs stalls.totalMs ' +
    'gaps.p50 gaps.p90 gaps.p99 gaps.max arrivalGaps.p50 arrivalGaps.p90 arrivalGaps.p99 arrivalGaps.max renderDelay.p50 renderDelay.p90', DURATION),
  ...each('outputTokens reasoningTokens outputEvents outputEventsByKind.answer outputEventsByKind.reasoning outputEventsByKind.tool ' +
    'stalls.count stalls.count1000 anomalies.malformedEvents anomalies.oversizeDropped', COUNT),
  ['tokensPerSecond', [0, 1_000_000]],
  ['httpStatus', [0, 999]],
  ['clockMs', [0.001, 1000]],
  ['def', [1, 1000]],
  ['deviceMemoryGb', [0, 1024]],
  ['cores', [1, 4096]],
]);

/** Strings: field → most characters (code points, as JSON Schema counts them). */
export const LENGTHS = new Map([
  ['id', 128],
  ...each('model scenario variant appVersion finishReason', 256),
  ['url', MAX_URL_LENGTH],
  ['connection', 32],
]);

/** The collector takes `startedAt` up to 30 days before its clock: a day less here, for clocks apart. */
export const MAX_AGE_MS = 29 * 24 * HOUR_MS;
/** ...and up to 1 hour after it. */
export const MAX_AHEAD_MS = HOUR_MS;

/** Whether `value` is within the bounds of the field at `path` (a field without bounds: always). */
export function fits(path, value) {
  if (value == null) return true;
  const range = RANGES.get(path);
  if (range) return typeof value === 'number' && value >= range[0] && value <= range[1];
  const length = LENGTHS.get(path);
  // UTF-16 units are at least as many as code points: count these only when it can matter.
  if (length !== undefined) return typeof value === 'string' && (value.length <= length || [...value].length <= length);
  return true;
}

/** Whether the collector would take `record` at `nowMs` (epoch ms), as far as the page can tell. O(fields). */
export function withinBounds(record, nowMs) {
  for (const path of [...RANGES.keys(), ...LENGTHS.keys()]) {
    const [field, inner] = path.split('.');
    if (!fits(path, inner ? record[field]?.[inner] : record[field])) return false;
  }
  // The core makes at most 32 whole, non-decreasing points: only their size can be out of bounds.
  if (record.cadence?.some(([ms, tokens]) => ms > HOUR_MS || tokens > HOUR_MS)) return false;
  return record.startedAt >= nowMs - MAX_AGE_MS && record.startedAt <= nowMs + MAX_AHEAD_MS;
}
