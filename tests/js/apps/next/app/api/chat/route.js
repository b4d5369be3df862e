// A scripted answer as an AI SDK UI message stream, no model needed: known text on a known schedule, so
// the test can check the meter's figures and that the page shows exactly these bytes.
import { createUIMessageStream, createUIMessageStreamResponse } from 'ai';

// Kept in step with tests/js/next.test.mjs. Each delta is a word with its space: one token, so the
// meter's TPOT must come out at EVERY_MS. The last three carry 2-, 3- and 4-byte UTF-8.
const FIRST_MS = 200;
const EVERY_MS = 25;
const ANSWER = 'Alpha bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu one café 日 🙂';
const DELTAS = ANSWER.split(/(?= )/); // 30

const sleepUntil = (at) => new Promise((done) => setTimeout(done, Math.max(0, at - performance.now())));

export async function POST() {
  const start = performance.now();
  const stream = createUIMessageStream({
    async execute({ writer }) {
      writer.write({ type: 'text-start', id: 'answer' });
      for (let i = 0; i < DELTAS.length; i++) {
        // Absolute target times: a late timer does not push back the deltas after it.
        await sleepUntil(start + FIRST_MS + i * EVERY_MS);
        writer.write({ type: 'text-delta', id: 'answer', delta: DELTAS[i] });
      }
      writer.write({ type: 'text-end', id: 'answer' });
    },
  });
  return createUIMessageStreamResponse({ stream });
}
