// One page, built by each bundler with no configuration for the package (tests/js/bundlers.test.mjs).
// It replays the timed fixture through the manual API (a report known to the digit) and streams a real
// answer from the scripted LLM server through the fetch hook (?llm=URL). The result lands in window.result.
import { createMeter } from 'llm-ux-meter';
import { replay } from './replay.mjs';

async function run() {
  const query = new URLSearchParams(location.search);
  const doc = await (await fetch('./openai-timed.json')).json();
  const reports = [];
  const meter = await createMeter({ dimensions: { scenario: query.get('app') }, onReport: (report) => reports.push(report) });
  const replayed = replay(meter, doc);
  meter.installFetch();
  const response = await fetch(`${query.get('llm')}/v1/chat/completions`, {
    method: 'POST',
    body: JSON.stringify({ model: 'fast', stream: true, stream_options: { include_usage: true } }),
  });
  const body = await response.text();
  // The report follows the frame after the stream's end.
  for (let i = 0; i < 100 && reports.length < 2; i++) await new Promise((done) => setTimeout(done, 20));
  window.result = { enabled: meter.enabled, replayed, streamed: reports[1] ?? null, bodyEndsWithDone: body.endsWith('data: [DONE]\n\n') };
}

run().catch((error) => {
  window.result = { error: String(error) };
});
