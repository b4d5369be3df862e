// Wires the dashboard: the state from the URL hash, the controls, and a refresh every 10 s that
// queries every panel for the same window, filters and SLO. Panels fail independently: an error
// answer shows in the banner and the other panels still update.
import { renderComparison, renderComparisonHint } from './ab-panel.js';
import { get, queryString } from './api.js';
import { distinctValues, fillFilters, fillFixedOptions, fillSelect, showExperimentStart, showState } from './controls.js';
import { renderDistributions } from './distribution.js';
import { byId, el, replaceChildren } from './dom.js';
import { renderFindings } from './findings.js';
import { clock } from './format.js';
import { renderGroupsTable } from './groups-table.js';
import { renderLengthTable } from './length-table.js';
import { renderStreamsTable, SLOWEST_LIMIT } from './streams-table.js';
import { renderStops } from './stops-panel.js';
import { renderTileCharts, renderTiles, TILE_SERIES } from './headline.js';
import { AB_DIMENSIONS, experimentWindow, FILTER_DIMENSIONS, parseHash, timeWindow, toHash } from './view-state.js';

const REFRESH_MS = 10_000;

let state = parseHash(location.hash);
let current = null; // the AbortController of the refresh in flight: a newer refresh cancels it

async function refresh() {
  current?.abort();
  const controller = new AbortController();
  current = controller;
  const { signal } = controller;
  const span = timeWindow(state, Date.now());
  const query = (own) => queryString(span, state.filters, state.slo, own);
  const errors = [];
  const settle = (promise) => promise.catch((e) => (signal.aborted ? null : (errors.push(e), null)));

  const dimensions = settle(get('summary', queryString(span, {}, {}, { groupBy: AB_DIMENSIONS.join(',') }), signal));
  const total = settle(get('summary', query({}), signal));
  const byModel = settle(get('summary', query({ groupBy: 'model,scenario' }), signal));
  const byVariant = settle(get('summary', query({ groupBy: 'variant' }), signal));
  // Single streams and the diagnosis take no SLO.
  const slowest = settle(get('streams', queryString(span, state.filters, {}, { sort: state.slowest, order: 'desc', limit: SLOWEST_LIMIT }), signal));
  const diagnosis = settle(get('diagnosis', queryString(span, state.filters, {}, {}), signal));
  const series = Object.fromEntries(Object.entries(TILE_SERIES).map(([tile, lines]) => [tile, Promise.all(lines.map(([metric, q]) =>
    settle(get('timeseries', query({ metric, ...(q !== undefined && { q }), bucket: span.bucket }), signal))))]));
  const comparison = dimensions.then((answer) => answer && compare(answer.groups, span, signal, settle));

  const [dimensionsAnswer, totalAnswer, byModelAnswer, byVariantAnswer, slowestAnswer, diagnosisAnswer] = await Promise.all([dimensions, total, byModel, byVariant, slowest, diagnosis]);
  if (signal.aborted) return;
  if (dimensionsAnswer) fillFilters(dimensionsAnswer.groups, state.filters);
  const streams = totalAnswer?.groups[0]?.count ?? 0;
  showEmpty(totalAnswer !== null && streams === 0);
  if (diagnosisAnswer) renderFindings(diagnosisAnswer.findings, state.filters, (dimension, value) => update((s) => (s.filters[dimension] = value)));
  if (totalAnswer) {
    renderTiles(totalAnswer.groups[0], state.slo);
    renderStops(totalAnswer.groups);
    renderLengthTable(totalAnswer.groups[0]);
  }
  if (byModelAnswer) renderGroupsTable(byModelAnswer.groups, state.slo);
  if (byVariantAnswer) renderDistributions(byVariantAnswer.groups);
  if (slowestAnswer) renderStreamsTable(slowestAnswer.streams, slowestAnswer.sort);

  const tileSeries = Object.fromEntries(await Promise.all(Object.entries(series).map(async ([tile, answers]) => [tile, await answers])));
  await comparison;
  if (signal.aborted) return;
  renderTileCharts((tile) => tileSeries[tile].map((answer) => answer?.series[0]?.points ?? []));
  showErrors(errors);
  replaceChildren(byId('updated'), `updated ${clock(Date.now())}`);
}

/**
 * Fills the arm pickers, then shows /api/compare for the picked (or first two) arms over the
 * experiment: from its start to the window's end. A filter on the compared dimension itself is left
 * out: it would leave one arm empty.
 */
async function compare(groups, span, signal, settle) {
  const { dimension, metric, unit, split, detect } = state.ab;
  const values = distinctValues(groups, dimension);
  const a = state.ab.a || values[0] || '';
  const b = state.ab.b || values.find((v) => v !== a) || '';
  fillSelect(byId('ab-a'), values, a, null);
  fillSelect(byId('ab-b'), values, b, null);
  const experiment = experimentWindow(state, span);
  showExperimentStart(experiment.from, state.ab.start !== null, state.from === null);
  if (!a || !b || a === b) {
    renderComparisonHint(values.length < 2 ? `Comparing needs two ${dimension} values with streams in this range.` : 'Pick two different arms.');
    return;
  }
  if (experiment.from >= experiment.to) {
    renderComparisonHint('The experiment starts after the window\'s end: pick an earlier start.');
    return;
  }
  const filters = { ...state.filters, [dimension]: '' };
  const own = { dimension, a, b, metric, unit, ...(split.trim() && { split: split.trim() }), ...(detect.trim() && { mde: Number(detect) / 100 }) };
  const answer = await settle(get('compare', queryString(experiment, filters, state.slo, own), signal));
  if (answer && !signal.aborted) renderComparison(answer);
}

function showEmpty(empty) {
  byId('empty').hidden = !empty;
  byId('content').hidden = empty;
  const filtered = FILTER_DIMENSIONS.some((d) => state.filters[d]);
  replaceChildren(byId('empty-filters'), filtered ? 'Some filters are set: clearing them may show streams. ' : '');
}

function showErrors(errors) {
  const banner = byId('banner');
  banner.hidden = errors.length === 0;
  const unique = [...new Map(errors.map((e) => [e.message, e])).values()];
  replaceChildren(banner, unique.map((e) => el('p', {}, el('strong', {}, e.error ?? 'error'), e.field ? ` in ${e.field}` : '', `: ${e.problem ?? e.message}`)));
}

/** A datetime-local input's value (local time) in epoch ms; null when cleared. */
function epochOf(localDateTime) {
  const epochMs = new Date(localDateTime).getTime();
  return Number.isFinite(epochMs) ? epochMs : null;
}

/** Applies a change from a control: into the state, the URL hash (shareable), and a refresh. */
function update(change) {
  change(state);
  history.replaceState(null, '', toHash(state) || location.pathname + location.search);
  showState(state);
  refresh();
}

for (const button of document.querySelectorAll('#range button')) {
  button.addEventListener('click', () => update((s) => Object.assign(s, { range: button.value, from: null, to: null })));
}
byId('fixed-window-clear').addEventListener('click', () => update((s) => Object.assign(s, { from: null, to: null })));
for (const d of FILTER_DIMENSIONS) byId(`filter-${d}`).addEventListener('change', (e) => update((s) => (s.filters[d] = e.target.value)));
byId('slo-ttft').addEventListener('change', (e) => update((s) => (s.slo.ttftMs = e.target.value)));
byId('slo-tpot').addEventListener('change', (e) => update((s) => (s.slo.tpotMs = e.target.value)));
byId('ab-dimension').addEventListener('change', (e) => update((s) => Object.assign(s.ab, { dimension: e.target.value, a: '', b: '' })));
byId('ab-a').addEventListener('change', (e) => update((s) => (s.ab.a = e.target.value)));
byId('ab-b').addEventListener('change', (e) => update((s) => (s.ab.b = e.target.value)));
byId('ab-metric').addEventListener('change', (e) => update((s) => (s.ab.metric = e.target.value)));
byId('ab-unit').addEventListener('change', (e) => update((s) => (s.ab.unit = e.target.value)));
byId('ab-start').addEventListener('change', (e) => update((s) => (s.ab.start = epochOf(e.target.value))));
byId('ab-start-clear').addEventListener('click', () => update((s) => (s.ab.start = null)));
byId('ab-split').addEventListener('change', (e) => update((s) => (s.ab.split = e.target.value.trim())));
byId('ab-detect').addEventListener('change', (e) => update((s) => (s.ab.detect = e.target.value.trim())));
byId('slowest-sort').addEventListener('change', (e) => update((s) => (s.slowest = e.target.value)));
byId('pause').addEventListener('click', () => update((s) => (s.paused = !s.paused)));
addEventListener('hashchange', () => {
  state = parseHash(location.hash);
  showState(state);
  refresh();
});
// A hidden tab does not poll; it catches up when shown again.
document.addEventListener('visibilitychange', () => !document.hidden && !state.paused && refresh());
setInterval(() => !document.hidden && !state.paused && refresh(), REFRESH_MS);

fillFixedOptions();
showState(state);
refresh();
