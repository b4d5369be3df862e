// Builds the report object from the numbers the wasm core lays out (src/web/report_layout.rs).

const FORMATS = ['openai', 'openai-responses', 'anthropic', 'gemini', 'ollama', 'ai-sdk-ui', 'ai-sdk-data', 'tgi', 'text'];
const STATUSES = ['ok', 'aborted', 'http_error', 'error', 'incomplete'];
const RENDER_SOURCES = ['dom', 'explicit', 'frame'];
const TOKEN_SOURCES = ['usage', 'estimate'];

/** The wasm code of a format name: 0 detects. Unknown names warn and detect. */
export function formatCode(format) {
  if (format == null || format === 'auto') return 0;
  const index = FORMATS.indexOf(format);
  if (index < 0) {
    console.warn(`llm-ux-meter: unknown format ${JSON.stringify(format)}, detecting it instead. Known: auto, ${FORMATS.join(', ')}.`);
    return 0;
  }
  return index + 1;
}

/** `n`: the report's numbers (NaN is null); `texts`: [model, finish reason]; `meta`: what JS knows. */
export function buildReport(n, texts, { id, startedAt, model, url, dimensions }) {
  const num = (i) => (Number.isNaN(n[i]) ? null : n[i]);
  const quantiles = (i) => (Number.isNaN(n[i]) ? null : { p50: n[i], p90: n[i + 1], p99: n[i + 2], max: n[i + 3] });
  return {
    id,
    startedAt,
    model: texts[0] || model || null,
    scenario: dimensions.scenario ?? null,
    variant: dimensions.variant ?? null,
    appVersion: dimensions.appVersion ?? null,
    url: url ?? null,
    format: FORMATS[n[0]] ?? null,
    status: STATUSES[n[1]],
    httpStatus: num(2),
    renderSource: RENDER_SOURCES[n[3]] ?? null,
    ttfbMs: num(4),
    ttftMs: num(5),
    ttftArrivalMs: num(6),
    ttfoMs: num(7),
    tpotMs: num(8),
    tpotArrivalMs: num(9),
    tokensPerSecond: num(10),
    outputTokens: n[11],
    tokenSource: TOKEN_SOURCES[n[12]],
    reasoningTokens: n[13],
    outputEvents: n[14],
    outputEventsByKind: { answer: n[15], reasoning: n[16], tool: n[17] },
    gaps: quantiles(18),
    arrivalGaps: quantiles(22),
    jitterMs: num(26),
    stalls: Number.isNaN(n[27]) ? null : { count: n[27], count1000: n[28], longestMs: n[29], totalMs: n[30] },
    renderDelay: Number.isNaN(n[31]) ? null : { p50: n[31], p90: n[32] },
    durationMs: num(33),
    hidden: n[34] === 1,
    finishReason: texts[1] || null,
    anomalies: { malformedEvents: n[35], oversizeDropped: n[36], unterminatedLast: n[37] === 1 },
    clockMs: n[39],
    def: n[38],
  };
}
