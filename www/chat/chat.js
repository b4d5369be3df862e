// The demo chat: an ordinary streaming chat app with the meter installed the way the README says. The
// user picks a model (its timing profile on the scripted server), an API format, a scenario, an A/B
// variant and the app's version; answers are painted token by token into #messages, where the meter
// takes its paint times.
//
// Query parameters: `llm` (the scripted LLM API) and `collector` (where beacons go), by default those of
// `npm start` (scripts/demo.mjs); `app`, the app version to start with. The page keeps each answer in
// `window.chat.answers` for the simulation and the end-to-end test, which drive it through the same
// controls as a user.
import { createMeter } from '/dist/index.js';
import { PROVIDERS, readAnswer } from './providers.js';

const params = new URLSearchParams(location.search);
const llmUrl = params.get('llm') ?? `${location.protocol}//${location.hostname}:8081`;
const collectorUrl = params.get('collector') ?? 'http://127.0.0.1:8787';

// The scripted server picks the timing profile from a word in the model's name.
const MODELS = {
  'scripted-fast': 'scripted-fast: 150 ms to the first token, 15 ms per token',
  'scripted-slow': 'scripted-slow: 900 ms, 80 ms per token',
  'scripted-jittery': 'scripted-jittery: 300 ms, 40 ± 35 ms per token',
  'scripted-stalling': 'scripted-stalling: 300 ms, 25 ms per token, a 1.2 s stall',
  'scripted-buffered': 'scripted-buffered: as fast, behind a proxy that passes tokens on 8 at a time',
};
// What kind of conversation it is: the answer's length, and for RAG the retrieved passages in the prompt.
const SCENARIOS = {
  chat: { label: 'chat: short answers', tokens: 40 },
  code: { label: 'code: long answers', tokens: 120 },
  rag: { label: 'RAG: retrieved context, medium answers', tokens: 80, passages: 6 },
};
// The A/B test: B suggests follow-up questions under each finished answer. The stream and its paint are
// the same in both, so the A/B panel and the diagnosis should find no difference in speed.
const VARIANTS = {
  A: { label: 'A: the answer alone', followUps: [] },
  B: { label: 'B: suggested follow-ups', followUps: ['Tell me more', 'Give an example', 'Make it shorter'] },
};
// The app's versions, a dimension of every beacon. 1.1-heavy stands for an app that re-renders the whole
// answer as markdown on every token: RENDER_COST_MS of synchronous work before each token is painted, a
// fixed cost (the scenarios' answer lengths do not change it). It is less than the fastest model's token
// interval (15 ms), so the page still reads each event as it arrives and the cost shows as render delay:
// the meter times an arrival when the page reads it, and a page busier than the token interval would
// read several events at once, as if a buffering proxy held them.
const RENDER_COST_MS = 12;
const APP_VERSIONS = {
  '1.0': { label: '1.0: appends each token', renderCostMs: 0 },
  '1.1-heavy': { label: `1.1-heavy: re-renders the whole answer on every token (${RENDER_COST_MS} ms)`, renderCostMs: RENDER_COST_MS },
};

const $ = (selector) => document.querySelector(selector);
const messages = $('#messages');
const answers = [];
const awaitingReport = [];
// The answer streaming now: Stop cancels it, as a user who gives up would (the meter reports `aborted`).
let current = null;

const meter = await createMeter({
  endpoint: `${collectorUrl}/v1/beacons`,
  container: messages,
  // The dashboard is live: a finished answer reaches the collector within a second.
  batch: { maxDelayMs: 1000 },
  onReport(report) {
    const answer = awaitingReport.shift();
    if (answer) finish(answer, report);
  },
});
meter.installFetch();

fillSelect($('#model'), MODELS);
fillSelect($('#format'), Object.fromEntries(Object.entries(PROVIDERS).map(([name, p]) => [name, p.label])));
fillSelect($('#scenario'), Object.fromEntries(Object.entries(SCENARIOS).map(([name, s]) => [name, s.label])));
fillSelect($('#variant'), Object.fromEntries(Object.entries(VARIANTS).map(([name, v]) => [name, v.label])));
fillSelect($('#app'), Object.fromEntries(Object.entries(APP_VERSIONS).map(([name, v]) => [name, v.label])));
$('#variant').value = sessionVariant();
$('#app').value = APP_VERSIONS[params.get('app')] ? params.get('app') : '1.0';
$('#dashboard').href = `${collectorUrl}/`;

// A real app opens its connection to the API early: the first answer's TTFT is then the model's, not a
// TCP handshake's.
fetch(`${llmUrl}/health`).catch(() => {});

$('#composer').addEventListener('submit', (event) => {
  event.preventDefault();
  const prompt = $('#prompt').value.trim();
  if (prompt && !$('#send').disabled) send(prompt);
});
$('#stop').addEventListener('click', () => current?.abort());
$('#prompt').addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey) {
    event.preventDefault();
    $('#composer').requestSubmit();
  }
});
setInterval(showDelivery, 500);
showDelivery();

window.chat = { ready: true, answers, flush: () => meter.flush() };

async function send(prompt) {
  const settings = { model: $('#model').value, format: $('#format').value, scenario: $('#scenario').value, variant: $('#variant').value, appVersion: $('#app').value };
  const provider = PROVIDERS[settings.format];
  const scenario = SCENARIOS[settings.scenario];
  const { renderCostMs } = APP_VERSIONS[settings.appVersion];
  // The stream's own model name is on the report; the scenario, variant and version are the app's to say.
  meter.setDimensions({ scenario: settings.scenario, variant: settings.variant, appVersion: settings.appVersion });
  const stop = new AbortController();
  current = stop;
  $('#send').disabled = true;
  $('#stop').disabled = false;
  $('#prompt').value = '';
  append('prompt', prompt);

  const element = append('answer', '');
  const text = element.querySelector('.text').appendChild(document.createTextNode(''));
  const answer = { ...settings, element, text: '', state: 'streaming', schedule: null, report: null };
  answers.push(answer);
  awaitingReport.push(answer);
  const [path, body] = provider.request(settings.model, scenario.passages ? withPassages(prompt, scenario.passages) : prompt);
  const schedule = { tokens: scenario.tokens, seed: 1 + Math.floor(Math.random() * 1e9) };
  let stream = null;
  try {
    // text/plain keeps it a simple cross-origin request: no CORS preflight in front of the timed one.
    const response = await fetch(llmUrl + path, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ ...body, schedule }), signal: stop.signal });
    if (!response.ok) throw new Error(`the API answered ${response.status}: ${await response.text()}`);
    stream = response;
    answer.schedule = JSON.parse(response.headers.get('x-scripted-schedule'));
    await readAnswer(response, provider, (piece) => {
      answer.text += piece;
      if (renderCostMs) busy(renderCostMs);
      text.appendData(piece);
    });
    if (answer.state === 'streaming') answer.state = 'streamed';
  } catch (error) {
    // Only a stream gets a report (an error answer is JSON, and a failed fetch has no response).
    if (!stream) awaitingReport.splice(awaitingReport.indexOf(answer), 1);
    if (stream && stop.signal.aborted) {
      // The meter's report (status aborted) may have come first and finished the answer already.
      if (answer.state === 'streaming') answer.state = 'streamed';
      text.appendData(' [stopped]');
    } else {
      answer.state = 'failed';
      element.dataset.state = 'failed';
      text.appendData(`${answer.text ? '\n' : ''}${error.message}`);
    }
  } finally {
    current = null;
    $('#send').disabled = false;
    $('#stop').disabled = true;
  }
}

/** Shows what the meter measured under the answer. */
function finish(answer, report) {
  answer.report = report;
  if (answer.state !== 'failed') answer.state = 'done';
  answer.element.dataset.state = answer.state;
  const ms = (value) => (value == null ? '–' : `${Math.round(value)} ms`);
  const figures = [
    `TTFT ${ms(report.ttftMs)}`,
    `TPOT ${report.tpotMs == null ? '–' : `${report.tpotMs.toFixed(1)} ms`}`,
    `${report.outputTokens} tokens`,
    `gap p90 ${ms(report.gaps?.p90)}`,
    report.stalls?.count ? `${report.stalls.count} stall${report.stalls.count > 1 ? 's' : ''} (${ms(report.stalls.longestMs)})` : 'no stall',
    `${report.model} · ${report.format} · ${answer.scenario} · ${answer.variant} · ${answer.appVersion} · ${report.status}`,
  ];
  answer.element.querySelector('.figures').textContent = figures.join(' · ');
  if (answer.state === 'done') suggestFollowUps(answer);
}

/** Variant B's buttons under a finished answer: each puts its question in the prompt. */
function suggestFollowUps(answer) {
  const questions = VARIANTS[answer.variant].followUps;
  if (!questions.length) return;
  const list = answer.element.appendChild(document.createElement('div'));
  list.className = 'follow-ups';
  for (const question of questions) {
    const button = list.appendChild(document.createElement('button'));
    button.type = 'button';
    button.textContent = question;
    button.addEventListener('click', () => {
      $('#prompt').value = question;
      $('#prompt').focus();
    });
  }
}

function append(kind, content) {
  const element = document.createElement('div');
  element.className = kind;
  if (kind === 'answer') {
    element.dataset.state = 'streaming';
    element.innerHTML = '<div class="text"></div><div class="figures"></div>';
  } else {
    element.textContent = content;
  }
  messages.append(element);
  element.scrollIntoView({ block: 'end' });
  return element;
}

/** Synchronous work for `ms`: what re-rendering the whole answer's markdown costs a heavy app. */
function busy(ms) {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

function withPassages(prompt, count) {
  const passages = Array.from({ length: count }, (_, i) => `[${i + 1}] A retrieved passage from the knowledge base that may help answer the question.`);
  return `Answer from the context.\n\nContext:\n${passages.join('\n')}\n\nQuestion: ${prompt}`;
}

/** A/B assignment: one variant per browser session, at random, which the select can still change. */
function sessionVariant() {
  const stored = sessionStorage.getItem('demo-variant');
  if (VARIANTS[stored]) return stored;
  const variant = Math.random() < 0.5 ? 'A' : 'B';
  sessionStorage.setItem('demo-variant', variant);
  return variant;
}

function fillSelect(select, options) {
  for (const [value, label] of Object.entries(options)) select.append(new Option(label, value));
}

function showDelivery() {
  const delivery = meter.delivery;
  $('#beacons').textContent = meter.enabled && delivery
    ? `meter on · beacons to ${collectorUrl}: ${delivery.sent} records sent, ${delivery.queued} queued`
    : 'the meter is off in this browser (no WebAssembly): the chat works, nothing is measured';
}
