// Nanoseconds per event through the manual API (`track()`, `chunk()` per chunk) in Node, for staged builds
// side by side: the main-thread bench's stream (bench/lib/events.js: 20,000 OpenAI content events in 1-300 B
// chunks), each build's streams interleaved with the others' over 41 rounds, so that machine noise falls on
// all alike. A quick check of a core speed step in V8 between two `npm run bench` runs (docs/core-speed.md).
//
//   cp -r target/npm-stage/dist /tmp/before   # after scripts/build.sh, before the step; then again after
//   node scripts/manual-api-ns.mjs /tmp/before target/npm-stage/dist
import { resolve } from 'node:path';
import { openaiStream, chunkBounds } from '../bench/lib/events.js';

const stages = process.argv.slice(2);
if (stages.length === 0) {
  console.error('usage: node scripts/manual-api-ns.mjs STAGED_DIST [STAGED_DIST ...]');
  process.exit(2);
}
const EVENTS = 20_000;
const ROUNDS = 41;
const bytes = new TextEncoder().encode(openaiStream(EVENTS, 1));
const bounds = chunkBounds(bytes.length, 1);
const chunks = [];
for (let i = 0; i < bounds.length; i += 2) chunks.push(bytes.slice(bounds[i], bounds[i + 1]));

/** One timed stream through a build's manual API, in ms (`end()` excluded, as in the bench). */
async function runner(stage) {
  const { createMeter } = await import(resolve(stage, 'index.js'));
  const meter = await createMeter();
  return () => {
    const stream = meter.track({ format: 'openai' });
    stream.response({ status: 200, contentType: 'text/event-stream' });
    const start = performance.now();
    for (const chunk of chunks) stream.chunk(chunk);
    const ms = performance.now() - start;
    stream.end();
    return ms;
  };
}

const runs = await Promise.all(stages.map(runner));
const times = stages.map(() => []);
for (let round = 0; round < ROUNDS; round++) {
  for (let k = 0; k < runs.length; k++) {
    const i = (k + round) % runs.length;
    times[i].push(runs[i]());
  }
}
const perEvent = (ms) => Math.round((ms * 1e6) / (EVENTS + 2));
stages.forEach((stage, i) => {
  const sorted = [...times[i]].sort((a, b) => a - b);
  console.log(`${stage}: median ${perEvent(sorted[ROUNDS >> 1])} ns per event (min ${perEvent(sorted[0])}, max ${perEvent(sorted[ROUNDS - 1])})`);
});
