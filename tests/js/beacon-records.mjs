// Valid beacon records and envelopes (schema/beacon.v1.json) for tests that post to the collector:
// one plausible stream, changed by `overrides`.

/** A valid record of an `ok` OpenAI stream that started `agoMs` before now. */
export function validRecord(id, overrides = {}, agoMs = 60_000) {
  return {
    id,
    startedAt: Date.now() - agoMs,
    url: 'https://api.example.com/v1/chat/completions',
    model: 'gpt-4.1-mini',
    scenario: 'chat',
    variant: 'A',
    appVersion: '1.4.2',
    format: 'openai',
    status: 'ok',
    httpStatus: 200,
    renderSource: 'dom',
    ttfbMs: 300,
    ttftMs: 420,
    ttftArrivalMs: 412,
    ttfoMs: 420,
    tpotMs: 21,
    tpotArrivalMs: 20.5,
    tokensPerSecond: 47.6,
    outputTokens: 120,
    tokenSource: 'usage',
    reasoningTokens: 0,
    outputEvents: 118,
    outputEventsByKind: { answer: 118, reasoning: 0, tool: 0 },
    gaps: { p50: 20, p90: 31, p99: 45, max: 60 },
    arrivalGaps: { p50: 20, p90: 30, p99: 44, max: 58 },
    jitterMs: 7,
    stalls: { count: 0, count1000: 0, longestMs: 0, totalMs: 0 },
    renderDelay: { p50: 4, p90: 9 },
    durationMs: 2919,
    hidden: false,
    finishReason: 'stop',
    anomalies: { malformedEvents: 0, oversizeDropped: 0, unterminatedLast: false },
    def: 1,
    connection: '4g',
    rttMs: 50,
    deviceMemoryGb: 8,
    cores: 8,
    browser: 'chromium',
    ...overrides,
  };
}

/** The envelope around `records`, as the meter sends it. */
export function envelope(records, batchId, overrides = {}) {
  return { v: 1, def: 1, sentAt: Date.now(), sessionId: 's-test', pageId: 'p-test', batchId, retry: 0, sampleRate: 1, records, ...overrides };
}
