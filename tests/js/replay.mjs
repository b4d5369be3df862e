// Replays a timed fixture (tests/fixtures/replay/*.json) through a meter's manual API.
export function replay(meter, doc, options = {}) {
  const stream = meter.track({ start: doc.start, id: 'replay-1', startedAt: 1_700_000_000_000, ...options });
  stream.response({ status: doc.response.status, contentType: doc.response.contentType, headers: {} }, doc.response.at);
  const encoder = new TextEncoder();
  for (const step of doc.steps) {
    if (step.chunk != null) stream.chunk(options.asBytes ? encoder.encode(step.chunk) : step.chunk, step.at);
    else stream.rendered(step.at);
  }
  return stream.end(doc.end);
}
