// A tiny chat page that streams answers through real client SDKs (openai-node, the AI SDK's
// DefaultChatTransport) and plain fetch, with the meter hooked in the two documented ways: wrapFetch for
// an SDK that takes a fetch at construction, installFetch for code that reads globalThis.fetch per call.
// tests/js/sdk-clients.test.mjs calls the window.* functions below; each returns plain JSON.
import { recordPageProblems } from '../pages/page-problems.js';
import { createMeter } from 'llm-ux-meter';
import OpenAI from 'openai';
import { DefaultChatTransport } from 'ai';

recordPageProblems();

const serverUrl = new URLSearchParams(location.search).get('server');
const chat = document.getElementById('chat');
const nativeFetch = globalThis.fetch;
const reports = [];
const meter = await createMeter({ onReport: (report) => reports.push(report), container: chat });

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

/** A new answer bubble in the metered container: the meter times paints from its DOM changes. */
function bubble() {
  const el = document.createElement('p');
  chat.append(el);
  return el;
}

/**
 * The reports that arrived since `from`: waits for `min` of them (the meter reports after the paint that
 * follows the stream's end), then a quiet period, so a duplicate report would show up too.
 */
async function reportsSince(from, { min = 1, timeoutMs = 3000, quietMs = 250 } = {}) {
  const t0 = performance.now();
  while (reports.length - from < min && performance.now() - t0 < timeoutMs) await sleep(5);
  await sleep(quietMs);
  return reports.slice(from);
}

const state = () => ({ enabled: meter.enabled, errors: meter.errors, fetchPatched: globalThis.fetch !== nativeFetch });

const openai = () => new OpenAI({ apiKey: 'test', baseURL: `${serverUrl}/v1`, fetch: meter.wrapFetch(nativeFetch), dangerouslyAllowBrowser: true, maxRetries: 0 });

/**
 * A short stream through the same client, to measure warm: a fresh browser's first request to a new
 * origin pays for its connection, the CORS preflight and first-run code (10 to 40 ms more on loopback).
 */
window.warmUp = async function warmUp() {
  const from = reports.length;
  // `schedule` is the scripted server's extension; openai-node sends unknown body fields as they are.
  const stream = await openai().chat.completions.create({ model: 'fast', stream: true, messages: [{ role: 'user', content: 'warm up' }], schedule: { tokens: 3, ttftMs: 0, tokenMs: 1 } });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  return { ...state(), text, reports: await reportsSince(from) };
};

/** openai-node, built with `fetch: meter.wrapFetch(fetch)`; the global fetch is left alone. */
window.openaiSdk = async function openaiSdk({ model = 'fast' } = {}) {
  const from = reports.length;
  const { data: stream, response } = await openai().chat.completions.create({
    model,
    stream: true,
    stream_options: { include_usage: true },
    messages: [{ role: 'user', content: 'Say something.' }],
  }).withResponse();
  const el = bubble();
  let usage = null;
  for await (const chunk of stream) {
    const text = chunk.choices[0]?.delta?.content;
    if (text) el.textContent += text;
    if (chunk.usage) usage = chunk.usage;
  }
  return {
    ...state(),
    reports: await reportsSince(from),
    text: el.textContent,
    usage,
    metered: meter.streamOf(response) !== null,
    schedule: JSON.parse(response.headers.get('x-scripted-schedule')),
    connection: Number(response.headers.get('x-scripted-connection')),
  };
};

let restoreFetch = null;

/** From here on every fetch of the page goes through the meter. */
window.installFetch = function installFetch() {
  restoreFetch ??= meter.installFetch();
  return state();
};

/** The AI SDK's DefaultChatTransport (it calls globalThis.fetch at request time), chunks read by hand. */
window.aiSdkTransport = async function aiSdkTransport({ query = '' } = {}) {
  const from = reports.length;
  const transport = new DefaultChatTransport({ api: `${serverUrl}/api/ui-chat${query}` });
  const stream = await transport.sendMessages({
    chatId: 'chat-1',
    messages: [{ id: 'user-1', role: 'user', parts: [{ type: 'text', text: 'hi' }] }],
    trigger: 'submit-message',
    messageId: undefined,
    abortSignal: undefined,
  });
  const el = bubble();
  const kinds = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    kinds.push(value.type);
    if (value.type === 'text-delta') el.textContent += value.delta;
  }
  return { ...state(), reports: await reportsSince(from), text: el.textContent, kinds: [...new Set(kinds)] };
};

/** Plain fetch and a reader over an Anthropic Messages stream, SSE parsed by hand. */
window.plainAnthropic = async function plainAnthropic({ model, schedule }) {
  const from = reports.length;
  const response = await fetch(`${serverUrl}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, max_tokens: 256, stream: true, messages: [{ role: 'user', content: 'hi' }], schedule }),
  });
  const el = bubble();
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += value;
    let cut;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = event.split('\n').find((line) => line.startsWith('data: '));
      const parsed = data ? JSON.parse(data.slice(6)) : null;
      if (parsed?.type === 'content_block_delta' && parsed.delta.type === 'text_delta') el.textContent += parsed.delta.text;
    }
  }
  return {
    ...state(),
    reports: await reportsSince(from),
    text: el.textContent,
    metered: meter.streamOf(response) !== null,
    schedule: JSON.parse(response.headers.get('x-scripted-schedule')),
    connection: Number(response.headers.get('x-scripted-connection')),
  };
};

/** A non-streaming request through the patched fetch: passed through untouched and never reported. */
window.plainPage = async function plainPage() {
  const from = reports.length;
  const patched = await fetch(location.href);
  const patchedText = await patched.text();
  const native = await nativeFetch(location.href);
  const nativeText = await native.text();
  return {
    ...state(),
    reports: await reportsSince(from, { min: 1, timeoutMs: 500 }),
    same: patchedText === nativeText,
    length: patchedText.length,
    status: patched.status,
    contentType: patched.headers.get('content-type'),
    metered: meter.streamOf(patched) !== null,
  };
};

window.ready = true;
