// The main-thread benchmark's stream, built the same way in the page and in Node: OpenAI Chat
// Completions events (content 75% ASCII words, 12.5% Chinese, 12.5% with JSON escapes), then a usage
// event and [DONE], cut into seeded random chunks of 1 to 300 bytes. Plain ESM, no Node built-ins.

/** mulberry32: a small seeded PRNG returning floats in [0, 1). */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ['the', 'model', 'answer', 'is', 'streamed', 'token', 'by', 'and', 'a', 'of', 'to', 'in', 'latency',
  'user', 'first', 'time', 'output', 'browser', 'fast', 'with', 'that', 'it', 'for', 'on', 'response', 'chat'];
const HANZI = '流式输出令牌时间首字延迟模型回答测量用户浏览器快速';
const ESCAPED = [' "quoted"', '\n\n', ' C:\\path\\to', '\tindent', ' say "hi"', '.\n', ' a\\b', ' tab\there'];

const HEAD = 'data: {"id":"chatcmpl-A1b2C3","object":"chat.completion.chunk","created":1764676800,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":';
const TAIL = '},"finish_reason":null}]}\n\n';

/** The content of event `i`'s delta, drawn from `random`. */
function content(random) {
  const r = random();
  if (r < 0.75) {
    const n = 1 + Math.floor(random() * 2);
    let s = '';
    for (let k = 0; k < n; k++) s += ' ' + WORDS[Math.floor(random() * WORDS.length)];
    return s;
  }
  if (r < 0.875) {
    const n = 1 + Math.floor(random() * 3);
    let s = '';
    for (let k = 0; k < n; k++) s += HANZI[Math.floor(random() * HANZI.length)];
    return s;
  }
  return ESCAPED[Math.floor(random() * ESCAPED.length)];
}

/** The SSE text of `events` content events, a usage event and [DONE] (events + 2 events in all). */
export function openaiStream(events = 20_000, seed = 1) {
  const random = rng(seed);
  const parts = [];
  for (let i = 0; i < events; i++) parts.push(HEAD + JSON.stringify(content(random)) + TAIL);
  parts.push(`data: {"id":"chatcmpl-A1b2C3","object":"chat.completion.chunk","created":1764676800,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":${events},"total_tokens":${events + 12}}}\n\n`);
  parts.push('data: [DONE]\n\n');
  return parts.join('');
}

/** Seeded chunk boundaries over `length` bytes: sizes uniform in [min, max]. Returns [start, end) pairs flattened. */
export function chunkBounds(length, seed, min = 1, max = 300) {
  const random = rng(seed ^ 0x5bd1e995);
  const bounds = [];
  for (let at = 0; at < length;) {
    const end = Math.min(length, at + min + Math.floor(random() * (max - min + 1)));
    bounds.push(at, end);
    at = end;
  }
  return bounds;
}
