// What the page shows, kept in the URL hash so that a view can be shared or bookmarked:
//   #range=1h&model=gpt-4o&slo.ttftMs=1000&slo.tpotMs=50&ab=variant&a=A&b=B&metric=tpotMs&slowest=ttftMs
// `from` and `to` (epoch ms) pin an absolute window instead of a range ending now: the link to an
// incident keeps showing that incident. The A/B experiment has its own start (`abStart`, epoch ms),
// its unit (`unit`: the session, or the app's user), its expected split of units (`split`, a:b
// weights) and the difference its power line plans for (`detect`, in percent).

export const RANGES = { '15m': 15 * 60_000, '1h': 3_600_000, '6h': 6 * 3_600_000, '24h': 24 * 3_600_000, '7d': 7 * 24 * 3_600_000 };
export const FILTER_DIMENSIONS = ['model', 'scenario', 'variant', 'connection'];
export const AB_DIMENSIONS = ['variant', 'model', 'scenario', 'appVersion', 'connection'];
/** The units an experiment may assign arms to (the API's `unit` names). */
export const AB_UNITS = { session: 'session', user: 'user' };
export const AB_METRICS = { tpotMs: 'TPOT', ttftMs: 'TTFT', gapP90Ms: 'gap p90', renderDelayMs: 'render delay', stallMs: 'stall time' };
/** What the slowest-streams table can rank by (the API's `sort` names). */
export const SLOWEST_SORTS = { tpotMs: 'TPOT', ttftMs: 'TTFT', stallMs: 'stall time', renderDelayMs: 'render delay', gapP90Ms: 'gap p90' };

const BUCKETS = [['1m', 60_000], ['5m', 300_000], ['15m', 900_000], ['1h', 3_600_000], ['6h', 21_600_000], ['1d', 86_400_000]];
// Enough points for a smooth line at dashboard width, far below the API's limit of 1,440 buckets.
const MAX_POINTS = 200;

export function defaultState() {
  return {
    range: '1h',
    from: null,
    to: null,
    filters: Object.fromEntries(FILTER_DIMENSIONS.map((d) => [d, ''])),
    slo: { ttftMs: '1000', tpotMs: '50' },
    ab: { dimension: 'variant', a: '', b: '', metric: 'tpotMs', unit: 'session', start: null, split: '50:50', detect: '10' },
    slowest: 'tpotMs',
    paused: false,
  };
}

/** The state in a hash (`#a=1&b=2`); what is missing or unknown takes its default. */
export function parseHash(hash) {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const state = defaultState();
  if (Object.hasOwn(RANGES, params.get('range') ?? '')) state.range = params.get('range');
  const from = Number(params.get('from'));
  const to = Number(params.get('to'));
  if (params.has('from') && params.has('to') && Number.isFinite(from) && Number.isFinite(to)) Object.assign(state, { from, to });
  for (const d of FILTER_DIMENSIONS) state.filters[d] = params.get(d) ?? '';
  for (const key of ['ttftMs', 'tpotMs']) if (params.has(`slo.${key}`)) state.slo[key] = params.get(`slo.${key}`);
  if (AB_DIMENSIONS.includes(params.get('ab'))) state.ab.dimension = params.get('ab');
  state.ab.a = params.get('a') ?? '';
  state.ab.b = params.get('b') ?? '';
  if (Object.hasOwn(AB_METRICS, params.get('metric') ?? '')) state.ab.metric = params.get('metric');
  if (Object.hasOwn(AB_UNITS, params.get('unit') ?? '')) state.ab.unit = params.get('unit');
  const abStart = Number(params.get('abStart'));
  if (params.has('abStart') && Number.isFinite(abStart)) state.ab.start = abStart;
  for (const key of ['split', 'detect']) if (params.has(key)) state.ab[key] = params.get(key);
  if (Object.hasOwn(SLOWEST_SORTS, params.get('slowest') ?? '')) state.slowest = params.get('slowest');
  state.paused = params.get('paused') === '1';
  return state;
}

/** The hash for a state, with only what differs from the defaults. */
export function toHash(state) {
  const defaults = defaultState();
  const params = new URLSearchParams();
  if (state.from !== null) {
    params.set('from', state.from);
    params.set('to', state.to);
  } else if (state.range !== defaults.range) {
    params.set('range', state.range);
  }
  for (const d of FILTER_DIMENSIONS) if (state.filters[d]) params.set(d, state.filters[d]);
  for (const key of ['ttftMs', 'tpotMs']) if (state.slo[key] !== defaults.slo[key]) params.set(`slo.${key}`, state.slo[key]);
  if (state.ab.dimension !== defaults.ab.dimension) params.set('ab', state.ab.dimension);
  if (state.ab.a) params.set('a', state.ab.a);
  if (state.ab.b) params.set('b', state.ab.b);
  if (state.ab.metric !== defaults.ab.metric) params.set('metric', state.ab.metric);
  if (state.ab.unit !== defaults.ab.unit) params.set('unit', state.ab.unit);
  if (state.ab.start !== null) params.set('abStart', state.ab.start);
  for (const key of ['split', 'detect']) if (state.ab[key] !== defaults.ab[key]) params.set(key, state.ab[key]);
  if (state.slowest !== defaults.slowest) params.set('slowest', state.slowest);
  if (state.paused) params.set('paused', '1');
  const hash = params.toString();
  return hash ? `#${hash}` : '';
}

/** The window to query: `{ from, to, bucket }`, the bucket being the finest that keeps the charts under MAX_POINTS. */
export function timeWindow(state, now) {
  const to = state.from !== null ? state.to : now;
  const from = state.from !== null ? state.from : now - RANGES[state.range];
  const span = Math.max(to - from, 1);
  const [bucket] = BUCKETS.find(([, size]) => span / size <= MAX_POINTS) ?? BUCKETS[BUCKETS.length - 1];
  return { from, to, bucket };
}

/**
 * The A/B experiment's window: from its own start (the dashboard window's when none is set) to the
 * dashboard window's end, so that each look extends the experiment and keeps where it began.
 */
export function experimentWindow(state, span) {
  return { from: state.ab.start ?? span.from, to: span.to };
}
