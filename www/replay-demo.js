// The replay demo: schedules a fixture's events like a model would and meters them as a page would.
import { createMeter } from '../dist/index.js';

const FIXTURES = '../tests/fixtures/streams/';
const PROFILES = {
  fast: () => 15,
  slow: () => 80,
  jittery: () => 10 + Math.random() * 110,
  stalling: (i) => (i === 6 ? 1200 : 30),
};

const $ = (id) => document.getElementById(id);
const manifest = await (await fetch(`${FIXTURES}manifest.json`)).json();
for (const [name, info] of Object.entries(manifest)) $('fixture').add(new Option(`${name} (${info.format})`, name));
const meter = await createMeter({ dimensions: { scenario: 'demo' } });

$('replay').addEventListener('click', async () => {
  $('replay').disabled = true;
  try {
    await replay($('fixture').value, PROFILES[$('profile').value]);
  } finally {
    $('replay').disabled = false;
  }
});

async function replay(name, delayOf) {
  const info = manifest[name];
  const body = await (await fetch(FIXTURES + name)).text();
  const events = body.split(/(?<=\r\n\r\n|\n\n|\r\r)|(?<=\n)(?=[^\n])/).filter((e) => info.format !== 'text' || e);
  const stream = meter.track({ model: undefined });
  $('wire').textContent = '';
  $('report').replaceChildren();
  await sleep(150 + Math.random() * 200); // time to first byte
  stream.response({ status: 200, headers: { 'content-type': info.contentType, ...info.headers } });
  for (const [i, event] of events.entries()) {
    if (i > 0) await sleep(delayOf(i));
    stream.chunk(event);
    $('wire').append(event);
    $('wire').scrollTop = $('wire').scrollHeight;
    requestAnimationFrame(() => setTimeout(() => stream.rendered()));
  }
  await sleep(50);
  show(stream.end());
}

function show(report) {
  const rows = Object.entries(report).map(([key, value]) => {
    const row = document.createElement('tr');
    const name = document.createElement('td');
    const cell = document.createElement('td');
    name.textContent = key;
    cell.textContent = typeof value === 'object' && value !== null ? JSON.stringify(value, round) : String(round(key, value));
    row.append(name, cell);
    return row;
  });
  $('report').replaceChildren(...rows);
}

function round(_key, value) {
  return typeof value === 'number' && !Number.isInteger(value) ? Math.round(value * 10) / 10 : value;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
