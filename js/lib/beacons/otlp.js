// Records as OTLP/HTTP JSON metrics, under the OpenTelemetry GenAI client metric names where they
// exist (time_to_first_chunk, time_per_output_chunk, token.usage, operation.duration; seconds), so an
// OpenTelemetry Collector takes them as they are. One histogram point per record and metric.

const SECONDS_BOUNDS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
const TOKEN_BOUNDS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576];

const METRICS = [
  ['gen_ai.client.operation.time_to_first_chunk', 's', SECONDS_BOUNDS, (r) => seconds(r.ttftMs ?? r.ttftArrivalMs)],
  ['gen_ai.client.operation.time_per_output_chunk', 's', SECONDS_BOUNDS, (r) => seconds(r.tpotMs ?? r.tpotArrivalMs)],
  ['gen_ai.client.operation.duration', 's', SECONDS_BOUNDS, (r) => seconds(r.durationMs)],
  ['gen_ai.client.token.usage', '{token}', TOKEN_BOUNDS, (r) => r.outputTokens, { 'gen_ai.token.type': 'output' }],
  ['llm_ux.stall.duration', 's', SECONDS_BOUNDS, (r) => seconds(r.stalls?.totalMs)],
];

/** The OTLP request for `records` of the session and page given. */
export function toOtlp(records, sessionId, pageId) {
  const metrics = METRICS.map(([name, unit, bounds, value, extra = {}]) => ({
    name,
    unit,
    histogram: {
      aggregationTemporality: 1, // delta: each point is one stream
      dataPoints: records.filter((r) => value(r) != null).map((r) => point(r, value(r), bounds, extra)),
    },
  })).filter((m) => m.histogram.dataPoints.length > 0);
  return {
    resourceMetrics: [{
      resource: { attributes: attributes({ 'service.name': 'llm-ux-meter', 'session.id': sessionId, 'page.id': pageId }) },
      scopeMetrics: [{ scope: { name: 'llm-ux-meter' }, metrics }],
    }],
  };
}

function point(record, value, bounds, extra) {
  const nanos = `${Math.round(record.startedAt)}000000`;
  const bucketCounts = Array(bounds.length + 1).fill(0);
  bucketCounts[bounds.findIndex((b) => value <= b) === -1 ? bounds.length : bounds.findIndex((b) => value <= b)] = 1;
  return {
    startTimeUnixNano: nanos,
    timeUnixNano: nanos,
    count: '1',
    sum: value,
    min: value,
    max: value,
    bucketCounts: bucketCounts.map(String),
    explicitBounds: bounds,
    attributes: attributes({
      'gen_ai.response.model': record.model,
      'gen_ai.provider.format': record.format,
      'llm_ux.scenario': record.scenario,
      'llm_ux.variant': record.variant,
      'llm_ux.status': record.status,
      'llm_ux.record_id': record.id,
      ...extra,
    }),
  };
}

function seconds(ms) {
  return ms == null ? null : ms / 1000;
}

function attributes(object) {
  return Object.entries(object)
    .filter(([, v]) => v != null)
    .map(([key, v]) => ({ key, value: typeof v === 'number' ? { doubleValue: v } : { stringValue: String(v) } }));
}
