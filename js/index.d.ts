/** Stream formats the meter decodes; `auto` detects from headers, first bytes and first events. */
export type Format =
  | 'auto'
  | 'openai'
  | 'openai-responses'
  | 'anthropic'
  | 'gemini'
  | 'ollama'
  | 'ai-sdk-ui'
  | 'ai-sdk-data'
  | 'tgi'
  | 'text';

export type Status = 'ok' | 'aborted' | 'http_error' | 'error' | 'incomplete';
export type RenderSource = 'dom' | 'explicit' | 'frame';

export interface Dimensions {
  scenario?: string;
  variant?: string;
  appVersion?: string;
  [name: string]: string | undefined;
}

/** What a request looks like to `match` and `dimensionsFor`. `body` is the app's own (string) body. */
export interface RequestInfo {
  url: string;
  method: string;
  body?: unknown;
}

/** A URL prefix, a RegExp tested on the absolute URL, or a predicate. */
export type MatchRule = string | RegExp | ((request: RequestInfo) => boolean);

/** A report as sent to the endpoint: the report plus the page's context. */
export interface BeaconRecord extends Report {
  /** navigator.connection.effectiveType, where the browser has it. */
  connection: string | null;
  rttMs: number | null;
  deviceMemoryGb: number | null;
  cores: number | null;
  browser: 'chromium' | 'firefox' | 'safari' | 'edge' | 'node' | 'other';
}

export interface MeterOptions {
  /** Collection endpoint: finished streams' records are POSTed there in batches. Default: none. */
  endpoint?: string | null;
  /** Batch limits: flushed at whichever comes first. Defaults 50 records, 16 KiB, 10 s. */
  batch?: { maxRecords?: number; maxBytes?: number; maxDelayMs?: number };
  /** Share of sessions that send records (deterministic per session); travels with each batch. Default 1. */
  sampleRate?: number;
  /** The session id to sample and group by; default one per tab, kept in sessionStorage. */
  sessionId?: string;
  /**
   * The unit the app assigns A/B variants to when it is not the tab's session: a user, say. Every JSON
   * envelope then carries `experimentUnit`, the first 16 bytes of HMAC-SHA-256 keyed with UTF-8 `salt`
   * over UTF-8 `id`, in lowercase hex (32 characters; Node: `createHmac('sha256', salt).update(id)
   * .digest('hex').slice(0, 32)`). Neither `id` nor `salt` is ever sent. `id`: the app's own opaque id
   * (1 to 1024 characters). `salt`: a secret of the app's, at least 16 characters, the same for every
   * page and user of the app and kept over time (a new salt makes every user a new unit). Its hash is
   * made with WebCrypto (in a module loaded only with this option), so only on secure pages (https:,
   * localhost); batches wait for it. A bad `id` or `salt`, or no WebCrypto, warns once and the
   * envelopes go without it. Not sent with `format: 'otlp'`.
   */
  experimentUnit?: { id: string; salt: string };
  /** Changes a record before it is queued, or drops it by returning null. Exceptions are contained. */
  beforeSend?: (record: BeaconRecord) => BeaconRecord | null;
  /** 'json' (default): the envelope of schema/beacon.v1.json as text/plain. 'otlp': OTLP/HTTP JSON metrics. */
  format?: 'json' | 'otlp';
  /** Strip the query string and fragment from request URLs in records (default true; the llm-ux collector refuses records with them). */
  stripUrlQuery?: boolean;
  /** The fetch beacons use; default the page's fetch as it was when the meter was created. */
  fetch?: typeof fetch;
  /**
   * Which fetches the hooks meter. Default: any response with content type `text/event-stream` or
   * `application/x-ndjson`, or an AI SDK stream header. With `match`, exactly the matching requests.
   */
  match?: MatchRule | MatchRule[];
  /** Per-request dimensions (scenario, variant) for hooked streams; exceptions are contained. */
  dimensionsFor?: (request: RequestInfo) => Dimensions | undefined;
  /**
   * The chat container (element or selector). Hooked streams then take paint times from its DOM
   * changes (a MutationObserver, in a module of its own that `createMeter` loads only then); without
   * it, from the next frame after each chunk is read.
   */
  container?: Element | string;
  /** Called with every finished stream's report. Exceptions it throws are contained and counted. */
  onReport?: (report: Report) => void;
  /** Dimensions added to every report. */
  dimensions?: Dimensions;
}

export interface TrackOptions {
  /** The stream's format; default `auto`. An unknown name warns once and detects instead. */
  format?: Format;
  /** The model requested, used when the stream does not name one. */
  model?: string;
  /** When the request was issued (ms, `performance.now()` clock); default now. */
  start?: number;
  /** Report id; default a random 128-bit hex string. */
  id?: string;
  /** Epoch ms of `start`; default `performance.timeOrigin + start`. */
  startedAt?: number;
  /** Dimensions for this stream only, over the meter's. */
  dimensions?: Dimensions;
}

export interface ResponseInfo {
  status?: number;
  contentType?: string;
  /** A `Headers` object or a plain object with lower-case names. */
  headers?: Headers | Record<string, string>;
}

export interface Quantiles {
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export interface Report {
  id: string;
  /** Epoch milliseconds of the request. */
  startedAt: number;
  model: string | null;
  scenario: string | null;
  variant: string | null;
  appVersion: string | null;
  /** The request URL (hooks only); records sent to the endpoint have it without query or fragment. */
  url: string | null;
  format: Exclude<Format, 'auto'> | null;
  status: Status;
  httpStatus: number | null;
  /** Where paint times came from; null when render fields are null. */
  renderSource: RenderSource | null;
  /** headers − start. */
  ttfbMs: number | null;
  /** First output event painted − start. */
  ttftMs: number | null;
  /** First output event arrived − start. */
  ttftArrivalMs: number | null;
  /** First answer text (not reasoning or tool arguments) painted − start. */
  ttfoMs: number | null;
  /** (last paint − first paint) / (N − 1); null when N < 2. */
  tpotMs: number | null;
  /** (last arrival − first arrival) / (N − 1); null when N < 2. */
  tpotArrivalMs: number | null;
  /** 1000 / tpotMs. */
  tokensPerSecond: number | null;
  /** N: from the stream's usage, less reasoning tokens never streamed; else estimated. */
  outputTokens: number;
  tokenSource: 'usage' | 'estimate';
  reasoningTokens: number;
  outputEvents: number;
  outputEventsByKind: { answer: number; reasoning: number; tool: number };
  /** Intervals between frames that showed new text. */
  gaps: Quantiles | null;
  /** Intervals between consecutive output events as they arrived. */
  arrivalGaps: Quantiles | null;
  /** Standard deviation of the render gaps. */
  jitterMs: number | null;
  /** Render gaps of 500 ms or more. */
  stalls: { count: number; count1000: number; longestMs: number; totalMs: number } | null;
  /** paint − arrival per output event. */
  renderDelay: { p50: number; p90: number } | null;
  /** Last paint − start. */
  durationMs: number | null;
  /**
   * The stream's cadence: at most 32 points `[ms since start, output tokens shown]`, whole numbers, on
   * the render timeline (the arrival timeline when `renderSource` is null), downsampled keeping the
   * first and last output, both edges of each stall (the longest first), then the sharpest bends.
   * Empty when no output arrived.
   */
  cadence: [number, number][];
  /** The stream overlapped a hidden-page period (render fields are null). */
  hidden: boolean;
  finishReason: string | null;
  anomalies: { malformedEvents: number; oversizeDropped: number; unterminatedLast: boolean };
  /**
   * The step of the clock the stream was timed with, in ms (100, 1, 0.1, 0.02, 0.005 or 0.001), read
   * off its times: 1 in Firefox and Safari, 0.1 in Chrome, finer when cross-origin isolated. Every
   * time and gap is a whole multiple of it.
   */
  clockMs: number;
  /** Metric definition version. */
  def: number;
}

export interface TrackedStream {
  /** The response headers arrived at `at` (default now). */
  response(response: ResponseInfo, at?: number): void;
  /** The app received a chunk of the body at `at` (default now). */
  chunk(data: Uint8Array | ArrayBuffer | ArrayBufferView | string, at?: number): void;
  /** The app painted the text received so far, at `at` (default now). */
  rendered(at?: number): void;
  /** The stream ended; returns the report (null when the meter is disabled). Later calls return the same report. */
  end(at?: number): Report | null;
  /** The stream was cancelled; `ok` all the same when its end had already arrived. */
  abort(at?: number): Report | null;
}

export interface Meter {
  /** False when WebAssembly could not load (CSP) or after a trap inside the meter. */
  readonly enabled: boolean;
  /** Errors caught inside the meter. */
  readonly errors: number;
  /** Streams ended early (as aborted) because 64 were open at once: the idlest goes first. */
  readonly evicted: number;
  /** Bytes of WebAssembly memory the meter holds. */
  readonly wasmMemoryBytes: number;
  /** Meters a stream by hand (custom transports such as WebSocket, workers, replays). */
  track(options?: TrackOptions): TrackedStream;
  /** A metered fetch, for SDKs that take fetch when their client is built. */
  wrapFetch<F extends typeof fetch>(fetchImpl: F): F;
  /** Meters every later call of `globalThis.fetch`. Idempotent; returns the function that restores it. */
  installFetch(): () => void;
  /** Meters every later `EventSource`. Idempotent; returns the function that restores it. */
  installEventSource(): () => void;
  /** Merges dimensions into those of streams started from now on. */
  setDimensions(dimensions: Dimensions): void;
  /** The metered stream behind a response the hook returned (to call `rendered()`), or null. */
  streamOf(response: Response): TrackedStream | null;
  /** Sends every queued record now; resolves when none is left to send. */
  flush(): Promise<void>;
  /** Flushes, removes the hooks and stops listening to the page. */
  destroy(): Promise<void>;
  /** Delivery counters; null without an endpoint. */
  readonly delivery: {
    sent: number;
    queued: number;
    /** outOfBounds: records outside the beacon schema's bounds (a stream over an hour, one kept over 29 days), which the collector would refuse. */
    dropped: { beforeSend: number; tooLarge: number; queueFull: number; rejected: number; storageFull: number; outOfBounds: number };
    sampled: boolean;
    sessionId: string;
  } | null;
}

/** Loads the meter (once per page) and returns it. Never rejects: a meter that cannot load is disabled. */
export function createMeter(options?: MeterOptions): Promise<Meter>;
