// A loopback HTTP server that streams LLM answers in every provider wire format on a known, scripted
// schedule: browser tests compare what the meter measured with this truth, and the demo chat can use it
// as a realistic backend. No dependencies beyond node: built-ins.
//
//   import { startScriptedServer } from './scripted-llm-server.mjs';
//   const server = await startScriptedServer({ port: 0 });   // server.url, server.connections(), server.close()
//   node scripts/scripted-llm-server.mjs --port 8787 [--capacity 6]
//
// The schedule (profile from the model name, overridden by body `schedule` / query parameters) is sent
// back in the `x-scripted-schedule` header; `planOffsets` below is the single source of its timing.
//
// Capacity (`capacity`, unlimited unless given; the demo gives it): a real server slows under load. It
// serves `capacity` streams at once at full speed; a stream that arrives when more are in flight (itself
// included) waits OVERLOAD.queueMs more for its first token and has every token interval (and its
// jitter) OVERLOAD.tokenShare longer, per stream beyond capacity. The load is judged once, at the
// request's arrival, and is part of its schedule: the header's ttftMs, tokenMs and offsets include it,
// and `inFlight` and `capacity` say why.
import { createServer, STATUS_CODES } from 'node:http';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';

/** Timing profiles, chosen by model name (any other name gets `fast`). */
export const PROFILES = {
  fast: { ttftMs: 150, tokenMs: 15, jitterMs: 0 },
  slow: { ttftMs: 900, tokenMs: 80, jitterMs: 0 },
  jittery: { ttftMs: 300, tokenMs: 40, jitterMs: 35 },
  stalling: { ttftMs: 300, tokenMs: 25, jitterMs: 0, stallAt: 20, stallMs: 1200 },
  // The fast model's cadence behind a buffering proxy, which passes its events on 8 at a time.
  buffered: { ttftMs: 150, tokenMs: 15, jitterMs: 0, eventsPerWrite: 8 },
};

/** What each stream beyond a server's capacity adds to a stream arriving then (see the header). */
export const OVERLOAD = { queueMs: 150, tokenShare: 0.1 };

const DEFAULTS = {
  tokens: 40, ttftMs: 150, tokenMs: 15, jitterMs: 0, stallAt: null, stallMs: 0, seed: 1,
  eventsPerWrite: 1, bytes: null, status: null, errorAt: null, hangAfterDone: 0, usage: false,
};
const NUMERIC = ['tokens', 'ttftMs', 'tokenMs', 'jitterMs', 'stallAt', 'stallMs', 'seed', 'eventsPerWrite', 'bytes', 'status', 'errorAt', 'hangAfterDone'];
const MAX_HEADER_BYTES = 8000;
const BLOCK_BYTES = 16 * 1024;
// setTimeout fires ~1 ms late (more on a busy machine): the last SPIN_MS before a target are waited out
// with setImmediate, so every event lands on its absolute target and timer lateness never accumulates.
const SPIN_MS = 3;

// Small seeded PRNG (mulberry32); a different `stream` gives an independent sequence for the same seed,
// so the answer text does not change when the jitter does and vice versa.
function rng(seed, stream) {
  let a = (Math.imul((seed >>> 0) ^ 0x9e3779b9, 0x85ebca6b) + Math.imul(stream, 0xc2b2ae35)) >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ['the', 'meter', 'measures', 'time', 'to', 'first', 'token', 'and', 'each', 'streamed', 'answer',
  'in', 'browser', 'users', 'see', 'latency', 'output', 'per', 'model', 'café', 'server', 'fast', 'chunk',
  'a', 'of', 'when', 'text', 'arrives', 'quickly', 'response', 'is', 'render', 'slowly', 'with'];
const HANZI = ['流', '式', '输', '出', '令', '牌', '时', '间', '首', '字', '延', '迟', '模', '型', '回', '答', '测', '量'];

/**
 * The deterministic answer for (n, seed) as an array of token texts: English words (with their leading
 * space), runs of Chinese characters (one per token), punctuation, a quote or a newline now and then.
 * A prefix-stable sequence: answerTokens(n, s) is a prefix of answerTokens(n + 1, s).
 */
export function answerTokens(n, seed = 1) {
  const random = rng(seed, 1);
  const pick = (list) => list[Math.floor(random() * list.length)];
  const out = [];
  let sentenceStart = true;
  let afterPunct = true; // no punctuation right after punctuation
  let hanziLeft = 0;
  while (out.length < n) {
    const r = random();
    if (hanziLeft > 0) {
      hanziLeft -= 1;
      out.push(pick(HANZI));
      afterPunct = false;
    } else if (!afterPunct && r < 0.1) {
      hanziLeft = 1 + Math.floor(random() * 4);
      out.push(' ' + pick(HANZI));
      sentenceStart = false;
    } else if (!afterPunct && r < 0.22) {
      const p = random();
      out.push(p < 0.4 ? ',' : p < 0.55 ? '，' : p < 0.8 ? '.' : p < 0.88 ? '。' : p < 0.94 ? '!' : '.\n\n');
      sentenceStart = p >= 0.55;
      afterPunct = true;
    } else if (!sentenceStart && r < 0.25) {
      out.push(' "' + pick(WORDS) + '"');
      afterPunct = false;
    } else {
      const word = pick(WORDS);
      const space = out.length && !out[out.length - 1].endsWith('\n') ? ' ' : '';
      out.push(space + (sentenceStart ? word[0].toUpperCase() + word.slice(1) : word));
      sentenceStart = false;
      afterPunct = false;
    }
  }
  return out;
}

/**
 * The planned time (ms from the request's arrival) of each output event. Pure: same schedule, same
 * offsets. offsets[0] = ttftMs; each next one adds tokenMs ± a seeded integer jitter (never below 0);
 * the event at index stallAt gets stallMs more (stallAt 0 delays the first event too).
 */
export function planOffsets(schedule) {
  const s = { ...DEFAULTS, ...schedule };
  const random = rng(s.seed, 2);
  const offsets = [];
  let at = s.ttftMs;
  for (let i = 0; i < s.tokens; i += 1) {
    if (i > 0) {
      // One draw per interval, even with zero jitter, so the sequence does not depend on jitterMs.
      const jitter = Math.round((random() * 2 - 1) * s.jitterMs);
      at += Math.max(0, s.tokenMs + jitter);
    }
    if (s.stallAt !== null && i === s.stallAt) at += s.stallMs;
    offsets.push(at);
  }
  return offsets;
}

/** Profile for a model name: exact name, else a profile name found as a word in it ("llama-slow"), else fast. */
export function profileFor(model = '') {
  const name = String(model).toLowerCase();
  if (PROFILES[name]) return name;
  return Object.keys(PROFILES).find((p) => name.split(/[^a-z]+/).includes(p)) ?? 'fast';
}

/** Profile defaults, then body `schedule`, then query parameters. Throws a message on a bad value. */
export function resolveSchedule(model, ...overrides) {
  const merged = Object.assign({}, ...overrides.filter(Boolean));
  const profile = merged.profile && PROFILES[merged.profile] ? merged.profile : profileFor(model);
  const s = { ...DEFAULTS, ...PROFILES[profile], profile };
  for (const key of NUMERIC) {
    if (merged[key] === undefined || merged[key] === null || merged[key] === '') continue;
    const value = Number(merged[key]);
    if (!Number.isFinite(value) || value < 0) throw new Error(`schedule.${key} must be a non-negative number`);
    s[key] = ['tokens', 'stallAt', 'errorAt', 'eventsPerWrite', 'bytes', 'status', 'seed'].includes(key) ? Math.floor(value) : value;
  }
  if (merged.usage !== undefined) s.usage = merged.usage === true || merged.usage === '1' || merged.usage === 1 || merged.usage === 'true';
  s.tokens = Math.min(s.tokens, 1_000_000);
  s.eventsPerWrite = Math.max(1, s.eventsPerWrite);
  if (s.status !== null && (s.status < 100 || s.status > 599)) throw new Error('schedule.status must be an HTTP status');
  return s;
}

// ---------------------------------------------------------------------------------------------------
// Wire formats. Each has a preamble (sent at response start, before the first token, as real servers
// do), one output event per token, a trailer (end marker, usage) and an error event.

const sse = (obj, event) => `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(obj)}\n\n`;
const ndjson = (obj) => `${JSON.stringify(obj)}\n`;

const FORMATS = {
  openai: {
    contentType: 'text/event-stream',
    chunk(c, delta, finish = null, extra = {}) {
      return sse({ id: c.id, object: 'chat.completion.chunk', created: c.created, model: c.model, system_fingerprint: 'fp_scripted',
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...(c.usage ? { usage: null } : {}), ...extra });
    },
    preamble(c) { return this.chunk(c, { role: 'assistant', content: '', refusal: null }); },
    token(c, text) { return this.chunk(c, { content: text }); },
    trailer(c) {
      let out = this.chunk(c, {}, 'stop');
      if (c.usage) {
        out += sse({ id: c.id, object: 'chat.completion.chunk', created: c.created, model: c.model, system_fingerprint: 'fp_scripted', choices: [],
          usage: { prompt_tokens: c.promptTokens, completion_tokens: c.sent, total_tokens: c.promptTokens + c.sent,
            prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } } });
      }
      return out + 'data: [DONE]\n\n';
    },
    error() { return sse({ error: { message: 'The server had an error while processing your request (scripted errorAt).', type: 'server_error', param: null, code: null } }); },
  },

  'openai-responses': {
    contentType: 'text/event-stream',
    ev(c, obj) { return sse({ ...obj, sequence_number: c.seq++ }, obj.type); },
    response(c, status, output, usage) {
      return { id: c.id, object: 'response', created_at: c.created, status, error: null, incomplete_details: null, model: c.model, output, usage };
    },
    item(c, status, text) {
      return { id: c.itemId, type: 'message', status, role: 'assistant', content: text === null ? [] : [{ type: 'output_text', annotations: [], text }] };
    },
    preamble(c) {
      return this.ev(c, { type: 'response.created', response: this.response(c, 'in_progress', [], null) })
        + this.ev(c, { type: 'response.in_progress', response: this.response(c, 'in_progress', [], null) })
        + this.ev(c, { type: 'response.output_item.added', output_index: 0, item: this.item(c, 'in_progress', null) })
        + this.ev(c, { type: 'response.content_part.added', item_id: c.itemId, output_index: 0, content_index: 0, part: { type: 'output_text', annotations: [], text: '' } });
    },
    token(c, text) { return this.ev(c, { type: 'response.output_text.delta', item_id: c.itemId, output_index: 0, content_index: 0, delta: text }); },
    trailer(c) {
      const text = c.text.slice(0, c.sent).join('');
      return this.ev(c, { type: 'response.output_text.done', item_id: c.itemId, output_index: 0, content_index: 0, text })
        + this.ev(c, { type: 'response.content_part.done', item_id: c.itemId, output_index: 0, content_index: 0, part: { type: 'output_text', annotations: [], text } })
        + this.ev(c, { type: 'response.output_item.done', output_index: 0, item: this.item(c, 'completed', text) })
        + this.ev(c, { type: 'response.completed', response: this.response(c, 'completed', [this.item(c, 'completed', text)], {
          input_tokens: c.promptTokens, input_tokens_details: { cached_tokens: 0 }, output_tokens: c.sent,
          output_tokens_details: { reasoning_tokens: 0 }, total_tokens: c.promptTokens + c.sent }) });
    },
    error(c) { return this.ev(c, { type: 'error', code: 'server_error', message: 'The server had an error processing your request (scripted errorAt).', param: null }); },
  },

  anthropic: {
    contentType: 'text/event-stream',
    preamble(c) {
      return sse({ type: 'message_start', message: { model: c.model, id: c.id, type: 'message', role: 'assistant', content: [], stop_reason: null, stop_sequence: null,
        usage: { input_tokens: c.promptTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 } } }, 'message_start')
        + sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start')
        + sse({ type: 'ping' }, 'ping');
    },
    token(c, text) { return sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }, 'content_block_delta'); },
    trailer(c) {
      return sse({ type: 'content_block_stop', index: 0 }, 'content_block_stop')
        // Anthropic's usage here is cumulative for the whole message.
        + sse({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null },
          usage: { input_tokens: c.promptTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: c.sent } }, 'message_delta')
        + sse({ type: 'message_stop' }, 'message_stop');
    },
    error() { return sse({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, 'error'); },
  },

  gemini: {
    contentType: 'text/event-stream',
    preamble() { return ''; },
    token(c, text, i) {
      const last = i === c.schedule.tokens - 1;
      return sse({ candidates: [{ content: { parts: [{ text }], role: 'model' }, ...(last ? { finishReason: 'STOP' } : {}), index: 0 }],
        // Gemini's usageMetadata is cumulative on every event.
        usageMetadata: { promptTokenCount: c.promptTokens, candidatesTokenCount: i + 1, totalTokenCount: c.promptTokens + i + 1 },
        modelVersion: c.model, responseId: c.id });
    },
    trailer() { return ''; }, // the last token event carries finishReason; Gemini has no end marker
    error() { return sse({ error: { code: 500, message: 'Internal error encountered (scripted errorAt).', status: 'INTERNAL' } }); },
  },

  ollama: {
    contentType: 'application/x-ndjson',
    line(c, content, extra) {
      const base = { model: c.model, created_at: new Date().toISOString() };
      return ndjson(c.route === 'generate' ? { ...base, response: content, ...extra } : { ...base, message: { role: 'assistant', content }, ...extra });
    },
    preamble() { return ''; },
    token(c, text) { return this.line(c, text, { done: false }); },
    trailer(c) {
      const ns = (ms) => Math.round(ms * 1e6);
      const offsets = c.offsets;
      return this.line(c, '', { done_reason: 'stop', done: true, total_duration: ns(performance.now() - c.t0), load_duration: 0,
        prompt_eval_count: c.promptTokens, prompt_eval_duration: ns(c.schedule.ttftMs), eval_count: c.sent,
        eval_duration: ns(c.sent ? offsets[c.sent - 1] - offsets[0] : 0) });
    },
    error() { return ndjson({ error: 'an error was encountered while running the model (scripted errorAt)' }); },
  },

  'ai-sdk-ui': {
    contentType: 'text/event-stream',
    // Only fields of the AI SDK's strict chunk schema: unknown keys make the client reject the chunk.
    preamble(c) {
      return sse({ type: 'start', messageId: c.id, messageMetadata: { model: c.model } }) + sse({ type: 'start-step' }) + sse({ type: 'text-start', id: c.itemId });
    },
    token(c, text) { return sse({ type: 'text-delta', id: c.itemId, delta: text }); },
    trailer(c) {
      return sse({ type: 'text-end', id: c.itemId }) + sse({ type: 'finish-step' })
        + sse({ type: 'finish', messageMetadata: { model: c.model, usage: { inputTokens: c.promptTokens, outputTokens: c.sent } } }) + 'data: [DONE]\n\n';
    },
    error() { return sse({ type: 'error', errorText: 'The model is overloaded (scripted errorAt).' }) + 'data: [DONE]\n\n'; },
  },

  'ai-sdk-data': {
    contentType: 'text/plain; charset=utf-8',
    preamble(c) { return `f:${JSON.stringify({ messageId: c.id })}\n`; },
    token(c, text) { return `0:${JSON.stringify(text)}\n`; },
    trailer(c) {
      const usage = { promptTokens: c.promptTokens, completionTokens: c.sent };
      return `e:${JSON.stringify({ finishReason: 'stop', usage, isContinued: false })}\nd:${JSON.stringify({ finishReason: 'stop', usage })}\n`;
    },
    error() { return `3:${JSON.stringify('An error occurred (scripted errorAt).')}\n`; },
  },

  tgi: {
    contentType: 'text/event-stream',
    data(obj) { return `data:${JSON.stringify(obj)}\n\n`; }, // TGI (axum) writes no space after "data:"
    preamble() { return ''; },
    token(c, text, i) {
      const last = i === c.schedule.tokens - 1;
      return this.data({ index: i + 1, token: { id: 1000 + ((i * 7919) % 30000), text, logprob: -((i % 10) + 1) / 20, special: false },
        generated_text: last ? c.text.join('') : null,
        details: last ? { finish_reason: 'length', generated_tokens: c.schedule.tokens, seed: c.schedule.seed, input_length: c.promptTokens } : null });
    },
    trailer() { return ''; },
    error() { return this.data({ error: 'Request failed during generation: Server error: scripted errorAt', error_type: 'generation' }); },
  },

  text: {
    contentType: 'text/plain; charset=utf-8',
    preamble() { return ''; },
    token(c, text) { return text; },
    trailer() { return ''; },
    error: null, // plain text cannot say "error": the connection is cut instead
  },
};

const ROUTES = [
  [/^\/v1\/chat\/completions$/, 'openai'],
  [/^\/v1\/responses$/, 'openai-responses'],
  [/^\/v1\/messages$/, 'anthropic'],
  [/^\/v1beta\/models\/([^/]+):streamGenerateContent$/, 'gemini'],
  [/^\/api\/(chat|generate)$/, 'ollama'],
  [/^\/api\/ui-chat$/, 'ai-sdk-ui'],
  [/^\/api\/data-chat$/, 'ai-sdk-data'],
  [/^\/generate_stream$/, 'tgi'],
  [/^\/text$/, 'text'],
];

const EXTRA_HEADERS = {
  'ai-sdk-ui': { 'x-vercel-ai-ui-message-stream': 'v1', 'x-accel-buffering': 'no' },
  'ai-sdk-data': { 'x-vercel-ai-data-stream': 'v1' },
};

const CORS = {
  'access-control-allow-origin': '*',
  // Test pages on another origin must be able to read these.
  'access-control-expose-headers': 'x-scripted-schedule, x-scripted-connection, x-vercel-ai-ui-message-stream, x-vercel-ai-data-stream',
};

function errorBody(format, status) {
  const message = `${STATUS_CODES[status] ?? 'Error'} (scripted status ${status})`;
  if (format === 'anthropic') {
    const type = { 400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error', 429: 'rate_limit_error', 529: 'overloaded_error', 503: 'overloaded_error' }[status] ?? 'api_error';
    return { type: 'error', error: { type, message } };
  }
  if (format === 'gemini') {
    const s = { 400: 'INVALID_ARGUMENT', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 429: 'RESOURCE_EXHAUSTED', 503: 'UNAVAILABLE' }[status] ?? 'INTERNAL';
    return { error: { code: status, message, status: s } };
  }
  if (format === 'ollama') return { error: message };
  if (format === 'tgi') return { error: message, error_type: status === 429 ? 'overloaded' : 'generation' };
  return { error: { message, type: status === 429 ? 'rate_limit_exceeded' : status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code: null } };
}

const estimateTokens = (value) => Math.max(1, Math.ceil(JSON.stringify(value ?? '').length / 4));

// ---------------------------------------------------------------------------------------------------

/**
 * A request for each format: the path and the body fields its real API takes (the JSON body also takes
 * `model` and `schedule`). Plain text is last: hooks meter it only when `match` selects it.
 */
export const REQUESTS = {
  openai: ['/v1/chat/completions', { stream: true, stream_options: { include_usage: true } }],
  'openai-responses': ['/v1/responses', { stream: true }],
  anthropic: ['/v1/messages', { stream: true, max_tokens: 100 }],
  gemini: ['/v1beta/models/gemini-test:streamGenerateContent?alt=sse', {}],
  ollama: ['/api/chat', {}],
  'ai-sdk-ui': ['/api/ui-chat', { id: 'c1', messages: [], trigger: 'submit-message' }],
  'ai-sdk-data': ['/api/data-chat', { messages: [] }],
  tgi: ['/generate_stream', { inputs: 'hi' }],
  text: ['/text', {}],
};

/**
 * Starts the server on 127.0.0.1:`port` (0 = a free port), serving `capacity` streams at once at full
 * speed (the file header). Resolves once listening to { url, connections(), close() }.
 */
export function startScriptedServer({ port = 0, capacity = Infinity } = {}) {
  const records = [];
  const load = { capacity, streaming: 0 };
  const live = new Set(); // per-request controls, to stop streams on close()
  let nextId = 1;

  const server = createServer((req, res) => {
    const t0 = performance.now(); // the request's arrival: every planned offset counts from here
    const url = new URL(req.url, 'http://127.0.0.1');
    const route = ROUTES.find(([re]) => re.test(url.pathname));
    const record = {
      id: nextId++, method: req.method, path: url.pathname, format: route && req.method !== 'OPTIONS' ? route[1] : null,
      openedAt: epoch(t0), closedAt: null, closedBy: null, bytesSent: 0, status: null, maxBufferedBytes: 0,
    };
    records.push(record);
    req.socket.setNoDelay(true);
    // Lets a client find its own record in connections().
    res.setHeader('x-scripted-connection', String(record.id));
    const conn = { record, res, closed: false, ended: false, cancel: null, release: null };
    live.add(conn);
    res.on('finish', () => finish(conn, 'server'));
    res.on('close', () => {
      // 'close' without a finished response means the peer went away (or we cut it: then closedBy is set).
      if (!conn.ended) finish(conn, 'client');
      live.delete(conn);
    });
    handle(req, res, url, route, conn, t0, load).catch((error) => {
      if (conn.closed) return;
      if (!res.headersSent) sendJson(res, conn, 500, { error: { message: String(error?.message ?? error) } });
      else res.destroy();
    });
  });

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const url = `http://127.0.0.1:${server.address().port}`;
      resolve({
        url,
        server,
        connections: () => records.map((r) => ({ ...r })),
        close: () => new Promise((done) => {
          for (const conn of live) {
            if (!conn.ended) finish(conn, 'server');
          }
          server.close(() => done());
          server.closeAllConnections();
        }),
      });
    });
  });
}

/** Marks a connection done once: by the server (response ended, cut or shut down) or by the client. */
function finish(conn, by) {
  if (conn.record.closedBy) return;
  conn.ended = true;
  conn.closed = true;
  conn.record.closedBy = by;
  conn.record.closedAt = epoch(performance.now());
  conn.cancel?.(); // wakes a pending wait so the stream stops at once
  conn.release?.();
}

/**
 * `schedule` as served with `inFlight` streams in flight (itself included) on a server of `capacity`:
 * OVERLOAD's delays per stream beyond capacity (the file header).
 */
function underLoad(schedule, inFlight, capacity) {
  const excess = Math.max(0, inFlight - capacity);
  const slower = 1 + excess * OVERLOAD.tokenShare;
  return {
    ...schedule, ttftMs: schedule.ttftMs + excess * OVERLOAD.queueMs, tokenMs: schedule.tokenMs * slower, jitterMs: schedule.jitterMs * slower,
    inFlight, capacity: Number.isFinite(capacity) ? capacity : null,
  };
}

// Epoch milliseconds with sub-millisecond precision: comparable across processes (a browser's
// performance.timeOrigin + performance.now()) and monotonic within this one.
const epoch = (now) => performance.timeOrigin + now;

function sendJson(res, conn, status, body, headers = {}) {
  const text = JSON.stringify(body);
  conn.record.status = status;
  conn.record.bytesSent += Buffer.byteLength(text);
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-cache', ...CORS, ...headers });
  res.end(text);
}

async function readBody(req) {
  if (req.method !== 'POST') return {};
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > 8 * 1024 * 1024) throw new Error('request body too large');
    chunks.push(chunk);
  }
  try {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    return body && typeof body === 'object' ? body : {};
  } catch {
    return {}; // lenient: tests may post anything; the schedule then comes from the query
  }
}

async function handle(req, res, url, route, conn, t0, load) {
  if (req.method === 'OPTIONS') {
    conn.record.status = 204;
    res.writeHead(204, {
      ...CORS,
      'access-control-allow-methods': req.headers['access-control-request-method'] ?? '*',
      'access-control-allow-headers': req.headers['access-control-request-headers'] ?? '*',
      'access-control-max-age': '600',
    });
    return res.end();
  }
  if (url.pathname === '/health') {
    conn.record.status = 200;
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-cache', ...CORS });
    conn.record.bytesSent += 2;
    return res.end('ok');
  }
  if (!route) return sendJson(res, conn, 404, { error: { message: `no route for ${url.pathname}` } });
  if (req.method !== 'POST' && req.method !== 'GET') return sendJson(res, conn, 405, { error: { message: 'use POST or GET' } }, { allow: 'GET, POST, OPTIONS' });

  const format = route[1];
  const body = await readBody(req);
  if (conn.closed) return;
  const query = Object.fromEntries(url.searchParams);
  const match = url.pathname.match(route[0]);
  // Gemini names the model in the path (its body has no model field).
  const model = String(query.model ?? (format === 'gemini' ? decodeURIComponent(match[1]) : body.model ?? 'scripted'));
  let schedule;
  try {
    schedule = resolveSchedule(model, body.schedule && typeof body.schedule === 'object' ? body.schedule : null, query);
  } catch (error) {
    return sendJson(res, conn, 400, { error: { message: error.message } });
  }
  if (schedule.status !== null) {
    const retry = schedule.status === 429 || schedule.status === 503 ? { 'retry-after': '1' } : {};
    return sendJson(res, conn, schedule.status, errorBody(format, schedule.status), retry);
  }

  if (conn.closed) return;
  schedule = underLoad(schedule, load.streaming + 1, load.capacity);
  load.streaming += 1;
  conn.release = () => {
    load.streaming -= 1;
    conn.release = null;
  };
  const ctx = {
    schedule, model, t0, sent: 0, seq: 0,
    id: `${{ anthropic: 'msg_', 'openai-responses': 'resp_', openai: 'chatcmpl-' }[format] ?? 'scripted-'}${conn.record.id}s${schedule.seed}`,
    itemId: `msg_scripted_${conn.record.id}`,
    created: Math.floor(Date.now() / 1000),
    route: match[1],
    usage: schedule.usage || body.stream_options?.include_usage === true,
    promptTokens: estimateTokens(body.messages ?? body.input ?? body.prompt ?? body.contents ?? body.inputs),
  };
  const bytesMode = schedule.bytes !== null && (format === 'text' || format === 'openai');
  const info = bytesMode
    ? { format, profile: schedule.profile, bytes: schedule.bytes, ttftMs: schedule.ttftMs, inFlight: schedule.inFlight, capacity: schedule.capacity }
    : scheduleHeader(format, schedule, (ctx.offsets = planOffsets(schedule)));

  conn.record.status = 200;
  res.writeHead(200, {
    'content-type': FORMATS[format].contentType,
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    ...CORS,
    ...EXTRA_HEADERS[format],
    'x-scripted-schedule': JSON.stringify(info),
  });
  res.flushHeaders(); // the client sees the response start now, long before the first token

  if (bytesMode) return streamBytes(format, ctx, conn);
  return streamScripted(format, ctx, conn);
}

function scheduleHeader(format, s, offsets) {
  const info = {
    format, profile: s.profile, tokens: s.tokens, ttftMs: s.ttftMs, tokenMs: s.tokenMs, jitterMs: s.jitterMs, seed: s.seed,
    stallAt: s.stallAt, stallMs: s.stallMs, eventsPerWrite: s.eventsPerWrite, errorAt: s.errorAt, hangAfterDone: s.hangAfterDone,
    inFlight: s.inFlight, capacity: s.capacity, offsetsMs: offsets,
  };
  // Large N: the client recomputes the offsets with planOffsets from the parameters above.
  if (Buffer.byteLength(JSON.stringify(info)) > MAX_HEADER_BYTES) delete info.offsetsMs;
  return info;
}

/** Resolves true at performance.now() >= target, or false as soon as the connection is closed. */
function waitUntil(target, conn) {
  return new Promise((resolve) => {
    let timer = null;
    let immediate = null;
    conn.cancel = () => {
      clearTimeout(timer);
      clearImmediate(immediate);
      resolve(false);
    };
    const step = () => {
      if (conn.closed) return resolve(false);
      const left = target - performance.now();
      if (left <= 0) {
        conn.cancel = null;
        return resolve(true);
      }
      if (left > SPIN_MS) timer = setTimeout(step, left - SPIN_MS);
      else immediate = setImmediate(step);
    };
    step();
  });
}

function write(conn, text) {
  if (conn.closed || text === '') return true;
  const buf = Buffer.from(text, 'utf8');
  conn.record.bytesSent += buf.length;
  const ok = conn.res.write(buf);
  conn.record.maxBufferedBytes = Math.max(conn.record.maxBufferedBytes, conn.res.writableLength);
  return ok;
}

async function streamScripted(format, ctx, conn) {
  const f = FORMATS[format];
  const { schedule: s, offsets } = ctx;
  ctx.text = answerTokens(s.tokens, s.seed);
  const stop = s.errorAt !== null && s.errorAt < s.tokens ? s.errorAt : s.tokens;
  const failing = stop < s.tokens;

  // Group output events per write: a group goes out at the planned time of its last event, which is
  // what a buffering proxy in front of a real server does.
  const writes = [];
  for (let first = 0; first < stop; first += s.eventsPerWrite) {
    const last = Math.min(first + s.eventsPerWrite, stop) - 1;
    writes.push({ at: offsets[last], first, last });
  }

  write(conn, f.preamble(ctx));
  for (const w of writes) {
    if (!(await waitUntil(ctx.t0 + w.at, conn))) return;
    let text = '';
    for (let i = w.first; i <= w.last; i += 1) text += f.token(ctx, ctx.text[i], i);
    ctx.sent = w.last + 1;
    write(conn, text);
  }

  if (failing) {
    if (!(await waitUntil(ctx.t0 + offsets[stop], conn))) return;
    if (!f.error) {
      finish(conn, 'server');
      return conn.res.destroy(); // plain text: the only way to fail is to cut the connection
    }
    write(conn, f.error(ctx));
    return conn.res.end();
  }
  // The trailer follows the last token at once (its own write, right after it).
  if (s.tokens === 0 && !(await waitUntil(ctx.t0 + s.ttftMs, conn))) return;
  write(conn, f.trailer(ctx));
  if (s.hangAfterDone > 0 && !(await waitUntil(performance.now() + s.hangAfterDone, conn))) return;
  if (!conn.closed) conn.res.end();
}

/** Resolves true on 'drain', false if the connection closes first. */
function drained(conn) {
  return new Promise((resolve) => {
    const onDrain = () => { cleanup(); resolve(true); };
    const onClose = () => { cleanup(); resolve(false); };
    const cleanup = () => { conn.res.off('drain', onDrain); conn.res.off('close', onClose); };
    conn.res.on('drain', onDrain);
    conn.res.on('close', onClose);
  });
}

// Throughput mode: about `bytes` of body in ~16 KiB writes, each after the previous one drained, so a
// client that stops reading stops the server too (nothing piles up in memory).
async function streamBytes(format, ctx, conn) {
  const f = FORMATS[format];
  const tokens = answerTokens(200, ctx.schedule.seed);
  const eventText = (i) => (format === 'text' ? tokens[i % tokens.length] : f.token(ctx, tokens[i % tokens.length]));
  // One block of whole events (never a UTF-8 character cut in two), reused for every write.
  const build = (limit) => {
    let text = '';
    for (let i = 0; ; i += 1) {
      const next = eventText(i);
      if (Buffer.byteLength(text + next) > limit) return text;
      text += next;
    }
  };
  const block = Buffer.from(build(BLOCK_BYTES), 'utf8');
  const eventsIn = (buf) => (format === 'text' ? 0 : buf.toString('utf8').split('\n\n').length - 1);
  const perBlock = eventsIn(block);
  let left = ctx.schedule.bytes;

  if (format === 'openai') {
    const head = f.preamble(ctx);
    write(conn, head);
    left -= Buffer.byteLength(head);
  }
  if (!(await waitUntil(ctx.t0 + ctx.schedule.ttftMs, conn))) return;
  while (left > 0 && !conn.closed) {
    let buf = block;
    if (left < block.length) {
      // The last, partial block: whole events, then (text only) ASCII padding to land on exactly `bytes`.
      const part = build(left);
      buf = Buffer.from(format === 'text' ? part + ' '.repeat(left - Buffer.byteLength(part)) : part || ' ', 'utf8');
    }
    left -= buf.length;
    ctx.sent += buf === block ? perBlock : eventsIn(buf);
    conn.record.bytesSent += buf.length;
    const ok = conn.res.write(buf);
    conn.record.maxBufferedBytes = Math.max(conn.record.maxBufferedBytes, conn.res.writableLength);
    if (!ok && !(await drained(conn))) return;
  }
  if (conn.closed) return;
  if (format === 'openai') write(conn, f.trailer(ctx));
  conn.res.end();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { port: { type: 'string', default: '8787' }, capacity: { type: 'string', default: 'Infinity' } } });
  const server = await startScriptedServer({ port: Number(values.port), capacity: Number(values.capacity) });
  console.log(`scripted LLM server at ${server.url}/`);
  const stop = () => server.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
