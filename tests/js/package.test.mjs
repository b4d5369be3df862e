// The built npm package in Node: the manual API, every report field of a timed replay against
// hand-computed values, determinism, every provider fixture detected and decoded, the core's memory
// reused across streams, and index.js deployed without its beacon modules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createMeter } from 'llm-ux-meter';
import { replay } from './replay.mjs';

const fixture = (path) => new URL(`../fixtures/${path}`, import.meta.url);
const timed = JSON.parse(readFileSync(fixture('replay/openai-timed.json'), 'utf8'));
const RELATIVE_ACCURACY = 0.01;

function assertClose(got, want, relative, what) {
  assert.ok(Math.abs(got - want) <= Math.abs(want) * relative + 1e-9, `${what}: got ${got}, want ${want}`);
}

test('a timed replay gives the hand-computed report, field by field', async () => {
  const meter = await createMeter({ dimensions: { scenario: 'chat', variant: 'B' } });
  const report = replay(meter, timed);
  const want = timed.expected;
  const exact = ['model', 'format', 'status', 'httpStatus', 'renderSource', 'finishReason', 'outputTokens', 'tokenSource',
    'reasoningTokens', 'outputEvents', 'outputEventsByKind', 'stalls', 'hidden', 'clockMs', 'def', 'anomalies', 'ttfbMs', 'ttftMs',
    'ttftArrivalMs', 'ttfoMs', 'tpotMs', 'tpotArrivalMs', 'durationMs', 'cadence'];
  for (const key of exact) assert.deepEqual(report[key], want[key], key);
  assertClose(report.tokensPerSecond, want.tokensPerSecond, 1e-12, 'tokensPerSecond');
  assertClose(report.jitterMs, want.jitterMs, 1e-12, 'jitterMs');
  for (const group of ['gaps', 'arrivalGaps', 'renderDelay']) {
    for (const [q, value] of Object.entries(want[group])) {
      assertClose(report[group][q], value, q === 'max' ? 0 : RELATIVE_ACCURACY, `${group}.${q}`);
    }
  }
  assert.equal(report.id, 'replay-1');
  assert.equal(report.startedAt, 1_700_000_000_000);
  assert.equal(report.scenario, 'chat');
  assert.equal(report.variant, 'B');
  const fields = ['id', 'startedAt', 'model', 'scenario', 'variant', 'format', 'status', 'httpStatus', 'renderSource', 'ttfbMs',
    'ttftMs', 'ttftArrivalMs', 'ttfoMs', 'tpotMs', 'tpotArrivalMs', 'tokensPerSecond', 'outputTokens', 'tokenSource',
    'reasoningTokens', 'outputEvents', 'gaps', 'arrivalGaps', 'jitterMs', 'stalls', 'renderDelay', 'durationMs', 'cadence', 'hidden', 'clockMs', 'def'];
  for (const field of fields) assert.ok(field in report, `report has ${field}`);
});

test('the same input gives the same report, bit for bit; bytes and strings alike', async () => {
  const meter = await createMeter();
  const a = replay(meter, timed);
  const b = replay(meter, timed, { asBytes: true });
  assert.deepEqual(Object.entries(a).map(([k, v]) => [k, Object.is(v, -0) ? 'negative zero' : v]), Object.entries(b));
  assert.equal(JSON.stringify(a), JSON.stringify(b));
});

test('onReport receives each report once; end and abort after the end change nothing', async () => {
  const seen = [];
  const meter = await createMeter({ onReport: (r) => seen.push(r) });
  const stream = meter.track({ start: 0 });
  stream.chunk('data: {"choices":[{"delta":{"content":"Hi"}}]}\n\n', 5);
  const report = stream.abort(9);
  assert.equal(report.status, 'aborted');
  assert.equal(stream.end(10), report);
  assert.deepEqual(seen, [report]);
});

test('an HTTP error status and a model hint from the request', async () => {
  const meter = await createMeter();
  const stream = meter.track({ start: 0, model: 'requested-model' });
  stream.response({ status: 503, contentType: 'application/json' }, 4);
  stream.chunk('{"error":"overloaded"}', 5);
  const report = stream.end(6);
  assert.equal(report.status, 'http_error');
  assert.equal(report.httpStatus, 503);
  assert.equal(report.model, 'requested-model');
});

test('an onReport that throws is contained and counted', async () => {
  const meter = await createMeter({ onReport: () => { throw new Error('app bug'); } });
  const originalError = console.error;
  console.error = () => {};
  try {
    const report = meter.track({ start: 0 }).end(1);
    assert.equal(report.status, 'ok');
    assert.equal(meter.errors, 1);
  } finally {
    console.error = originalError;
  }
});

test('every provider fixture is detected and decoded through the package', async () => {
  const manifest = JSON.parse(readFileSync(fixture('streams/manifest.json'), 'utf8'));
  const meter = await createMeter();
  for (const [name, want] of Object.entries(manifest)) {
    const body = readFileSync(fixture(`streams/${name}`));
    const stream = meter.track({ start: 0 });
    stream.response({ status: 200, headers: { 'content-type': want.contentType, ...want.headers } }, 1);
    for (let i = 0; i < body.length; i += 17) stream.chunk(body.subarray(i, i + 17), 2 + i);
    const report = stream.end(body.length + 3);
    assert.equal(report.format, want.format, name);
    assert.equal(report.model, want.model, name);
    assert.equal(report.finishReason, want.finishReason, name);
    assert.equal(report.status, want.errorEvent ? 'error' : 'ok', name);
    if (want.outputEvents) assert.deepEqual(report.outputEventsByKind, want.outputEvents, name);
    if (want.usage) assert.equal(report.tokenSource, 'usage', name);
  }
});

test('an unknown format is reported once on the console and detected instead', async () => {
  const meter = await createMeter();
  const warnings = [];
  const originalWarn = console.warn;
  console.warn = (message) => warnings.push(message);
  try {
    const stream = meter.track({ format: 'openia', start: 0 });
    stream.chunk('data: {"choices":[{"delta":{"content":"x"}}]}\n\n', 1);
    assert.equal(stream.end(2).format, 'openai');
  } finally {
    console.warn = originalWarn;
  }
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /unknown format "openia"/);
});

test('the core reuses its memory: rounds of interleaved streams give the same reports and grow nothing', async () => {
  // The wasm allocator (src/web/allocator.rs) keeps freed blocks in lists by size: every stream of every
  // fixture open at once, fed in turns of varying sizes and ended in reverse order, mixes the blocks'
  // lives; a block handed out twice or too small would change a report or trap.
  const manifest = JSON.parse(readFileSync(fixture('streams/manifest.json'), 'utf8'));
  const bodies = Object.entries(manifest).map(([name, want]) => [want, readFileSync(fixture(`streams/${name}`))]);
  const meter = await createMeter();
  const round = (step) => {
    const streams = bodies.map(([want]) => {
      const stream = meter.track({ start: 0, id: 'r', startedAt: 1 });
      stream.response({ status: 200, headers: { 'content-type': want.contentType, ...want.headers } }, 1);
      return stream;
    });
    for (let offset = 0, turn = 0; bodies.some(([, body]) => offset < body.length); turn++) {
      const size = 1 + ((turn * step) % 97);
      bodies.forEach(([, body], i) => offset < body.length && streams[i].chunk(body.subarray(offset, offset + size), 2 + offset));
      offset += size;
    }
    return JSON.stringify(streams.reverse().map((stream) => stream.end(1e6)));
  };
  const first = round(1);
  assert.equal(round(1), first, 'the same streams after the first round');
  // Each chunking has its own high-water mark (an event whole in a chunk is never buffered): a first pass
  // through them all reaches the highest, and a second pass must add nothing.
  const pass = () => {
    for (let n = 2; n < 40; n++) round(n);
  };
  pass();
  const memory = meter.wasmMemoryBytes;
  pass();
  assert.equal(round(1), first, 'the same streams after 76 rounds of other chunkings');
  assert.equal(meter.wasmMemoryBytes, memory, 'wasm memory grew in a second pass of the same chunkings');
  assert.ok(meter.enabled && meter.errors === 0, 'no trap');
});

test('a fetch or EventSource that cannot be replaced: fetch warns, neither throws into the app', async () => {
  const meter = await createMeter();
  const fetchProperty = Object.getOwnPropertyDescriptor(globalThis, 'fetch');
  class FrozenEventSource {}
  Object.defineProperty(globalThis, 'fetch', { ...fetchProperty, writable: false });
  Object.defineProperty(globalThis, 'EventSource', { value: FrozenEventSource, writable: false, configurable: true });
  const warnings = [];
  const originalWarn = console.warn;
  console.warn = (message) => warnings.push(message);
  try {
    const restorers = [meter.installFetch(), meter.installEventSource()];
    assert.deepEqual(restorers.map((restore) => typeof restore), ['function', 'function']);
    assert.equal(globalThis.fetch, fetchProperty.value);
    assert.equal(globalThis.EventSource, FrozenEventSource);
    for (const restore of restorers) restore();
    await meter.destroy();
  } finally {
    console.warn = originalWarn;
    Object.defineProperty(globalThis, 'fetch', fetchProperty);
    delete globalThis.EventSource;
  }
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /globalThis\.fetch cannot be replaced here/);
  assert.equal(meter.errors, 0);
});

test('with index.js deployed alone, an endpoint and a container warn once each and the meter works on without them', async () => {
  // Beacon delivery and DOM paint times are modules of their own (dist/beacons/, dist/lib/), imported only
  // when an endpoint or a container is set.
  const dir = mkdtempSync(join(tmpdir(), 'llm-ux-index-alone-'));
  try {
    copyFileSync(new URL('../../dist/index.js', import.meta.url), join(dir, 'index.js'));
    const { createMeter: createAlone } = await import(pathToFileURL(join(dir, 'index.js')));
    const warnings = [];
    const originalWarn = console.warn;
    console.warn = (message) => warnings.push(message);
    let meter;
    try {
      meter = await createAlone({ endpoint: 'http://127.0.0.1:9/v1/beacons', container: '#chat' });
    } finally {
      console.warn = originalWarn;
    }
    assert.equal(warnings.length, 2);
    assert.match(warnings.find((w) => w.includes('beacons')), /beacons disabled, their module could not load/);
    assert.match(warnings.find((w) => w.includes('DOM')), /DOM paint times disabled, their module could not load/);
    assert.ok(meter.enabled);
    assert.equal(meter.delivery, null);
    const stream = meter.track({ start: 0 });
    stream.chunk('data: {"choices":[{"delta":{"content":"Hi"}}]}\n\n', 5);
    assert.equal(stream.end(9).outputEvents, 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
