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

// @ts-expect-error: not a format the meter knows
createMeter().then((m) => m.track({ format: 'openia' }));

export { example };
