// Compiled (not run) by tests/js/types.test.mjs: the declarations must accept the documented API and
// give the report its documented types.
import { createMeter, type Report, type TrackedStream } from 'llm-ux-meter';

async function example(): Promise<number | null> {
  const meter = await createMeter({ endpoint: null, onReport(report: Report) {}, dimensions: { scenario: 'chat' } });
  const s: TrackedStream = meter.track({ format: 'auto', model: undefined, start: 0 });
  s.response({ status: 200, contentType: 'text/event-stream', headers: {} }, 12.5);
  s.chunk(new Uint8Array([100, 97]), 120.0);
  s.chunk('data: {}\n\n');
  s.rendered(121.0);
  const report = s.end(500.0);
  if (!report) return null;
  const tokensPerSecond: number | null = report.tokensPerSecond;
  const status: 'ok' | 'aborted' | 'http_error' | 'error' | 'incomplete' = report.status;
  const p90: number | undefined = report.gaps?.p90;
  void [status, p90, meter.enabled, meter.errors, s.abort()];
  return tokensPerSecond;
}

async function hooks(): Promise<void> {
  const meter = await createMeter({
    endpoint: 'https://collect.example.com/v1/beacons',
    batch: { maxRecords: 20, maxDelayMs: 5000 },
    sampleRate: 0.5,
    experimentUnit: { id: 'user-42', salt: 'the-apps-own-secret-salt' },
    beforeSend: (record) => (record.browser === 'other' ? null : { ...record, scenario: 'renamed' }),
    match: ['/api/chat', /\/v1\//, (request) => request.method === 'POST'],
    dimensionsFor: (request) => ({ scenario: new URL(request.url).pathname }),
    container: '#messages',
    format: 'otlp',
  });
  const restore: () => void = meter.installFetch();
  const metered: typeof fetch = meter.wrapFetch(fetch);
  const response = await metered('/api/chat');
  meter.streamOf(response)?.rendered();
  meter.setDimensions({ variant: 'B' });
  meter.installEventSource()();
  await meter.flush();
  const sent: number | undefined = meter.delivery?.sent;
  void [restore, sent, meter.evicted, meter.wasmMemoryBytes];
  await meter.destroy();
}

// @ts-expect-error: not a format the meter knows
createMeter().then((m) => m.track({ format: 'openia' }));

export { example, hooks };
