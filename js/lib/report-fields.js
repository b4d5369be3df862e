// Generated from src/web/report_layout.rs and schema/beacon.v1.json by tests/report_fields.rs; do not edit.
// After changing the layout or the schema's bounds:
// LLM_UX_REPORT_FIELDS=write cargo test --test report_fields
//
// The report's fields in the order of the wasm core's numbers: [name, kind]. A dotted name is a member of
// a nested object (null when its first member is); kind: the names a number indexes, 'bool' (0 or 1),
// 'points' (last: the number of [x, y] pairs, then POINTS pairs) or, for a number (NaN for null), its
// minimum and maximum. These and the points' (of each of their numbers, after 'points') are the
// beacon contract's (schema/beacon.v1.json), which js/lib/beacons/record-bounds.js keeps records within.
export const FIELDS = [
  ['format', ['openai', 'openai-responses', 'anthropic', 'gemini', 'ollama', 'ai-sdk-ui', 'ai-sdk-data', 'tgi', 'text']],
  ['status', ['ok', 'aborted', 'http_error', 'error', 'incomplete']],
  ['httpStatus', 0, 999],
  ['renderSource', ['dom', 'explicit', 'frame']],
  ['ttfbMs', 0, 3600000],
  ['ttftMs', 0, 3600000],
  ['ttftArrivalMs', 0, 3600000],
  ['ttfoMs', 0, 3600000],
  ['tpotMs', 0, 3600000],
  ['tpotArrivalMs', 0, 3600000],
  ['tokensPerSecond', 0, 1000000],
  ['outputTokens', 0, 10000000],
  ['tokenSource', ['usage', 'estimate']],
  ['reasoningTokens', 0, 10000000],
  ['outputEvents', 0, 10000000],
  ['outputEventsByKind.answer', 0, 10000000],
  ['outputEventsByKind.reasoning', 0, 10000000],
  ['outputEventsByKind.tool', 0, 10000000],
  ['gaps.p50', 0, 3600000],
  ['gaps.p90', 0, 3600000],
  ['gaps.p99', 0, 3600000],
  ['gaps.max', 0, 3600000],
  ['arrivalGaps.p50', 0, 3600000],
  ['arrivalGaps.p90', 0, 3600000],
  ['arrivalGaps.p99', 0, 3600000],
  ['arrivalGaps.max', 0, 3600000],
  ['jitterMs', 0, 3600000],
  ['stalls.count', 0, 10000000],
  ['stalls.count1000', 0, 10000000],
  ['stalls.longestMs', 0, 3600000],
  ['stalls.totalMs', 0, 3600000],
  ['renderDelay.p50', 0, 3600000],
  ['renderDelay.p90', 0, 3600000],
  ['durationMs', 0, 3600000],
  ['hidden', 'bool'],
  ['anomalies.malformedEvents', 0, 10000000],
  ['anomalies.oversizeDropped', 0, 10000000],
  ['anomalies.unterminatedLast', 'bool'],
  ['def', 1, 1000],
  ['clockMs', 0.001, 1000],
  ['cadence', 'points', 0, 3600000],
];

export const POINTS = 32;
