// The page's controls (filters, SLO, A/B picks, time range, pause) and the state they show. Select
// options are dimension values from beacons: each goes in as an option's text and value, never as HTML.
import { byId, el, replaceChildren } from './dom.js';
import { dateTime, dateTimeInput } from './format.js';
import { AB_DIMENSIONS, AB_METRICS, AB_UNITS, FILTER_DIMENSIONS, SLOWEST_SORTS } from './view-state.js';

/** The sorted distinct values of `dimension` among summary groups (streams that did not set it aside). */
export function distinctValues(groups, dimension) {
  const values = new Set(groups.map((g) => g.key[dimension]).filter((v) => v !== null && v !== undefined));
  return [...values].sort((x, y) => x.localeCompare(y));
}

/**
 * Fills a select with `values` after a first option (`first`: `[value, text]`, or null for none) and
 * selects `selected`. A selected value not among them (a shared link to a quieter window) stays listed.
 */
export function fillSelect(select, values, selected, first) {
  const all = selected && !values.includes(selected) ? [selected, ...values] : values;
  const options = [...(first ? [first] : []), ...all.map((v) => [v, v])];
  // Unchanged options stay as they are: rebuilding them every refresh would close an open select.
  const same = select.options.length === options.length && options.every(([value, text], i) => select.options[i].value === value && select.options[i].textContent === text);
  if (!same) replaceChildren(select, options.map(([value, text]) => el('option', { value }, text)));
  select.value = selected;
}

/** The filter selects' options, from the unfiltered summary grouped by every dimension. */
export function fillFilters(groups, filters) {
  for (const d of FILTER_DIMENSIONS) fillSelect(byId(`filter-${d}`), distinctValues(groups, d), filters[d], ['', `all ${plural(d)}`]);
}

/** The options that do not depend on the data: the A/B panel's dimensions and metrics, the slowest streams' ranking. */
export function fillFixedOptions() {
  replaceChildren(byId('ab-dimension'), AB_DIMENSIONS.map((d) => el('option', { value: d }, d)));
  replaceChildren(byId('ab-metric'), Object.entries(AB_METRICS).map(([metric, name]) => el('option', { value: metric }, name)));
  replaceChildren(byId('ab-unit'), Object.entries(AB_UNITS).map(([unit, name]) => el('option', { value: unit }, name)));
  replaceChildren(byId('slowest-sort'), Object.entries(SLOWEST_SORTS).map(([sort, name]) => el('option', { value: sort }, name)));
}

/** Shows the state in the controls that do not depend on the data. */
export function showState(state) {
  for (const button of document.querySelectorAll('#range button')) {
    button.setAttribute('aria-pressed', String(state.from === null && button.value === state.range));
  }
  const fixed = byId('fixed-window');
  fixed.hidden = state.from === null;
  if (state.from !== null) replaceChildren(byId('fixed-window-text'), `${dateTime(state.from)} to ${dateTime(state.to)}`);
  byId('slo-ttft').value = state.slo.ttftMs;
  byId('slo-tpot').value = state.slo.tpotMs;
  byId('ab-dimension').value = state.ab.dimension;
  byId('ab-metric').value = state.ab.metric;
  byId('ab-unit').value = state.ab.unit;
  byId('ab-split').value = state.ab.split;
  byId('ab-detect').value = state.ab.detect;
  byId('slowest-sort').value = state.slowest;
  const pause = byId('pause');
  pause.setAttribute('aria-pressed', String(state.paused));
  replaceChildren(pause, state.paused ? 'Resume' : 'Pause');
}

/**
 * Shows the A/B experiment's start (`from`), chosen or the window's (which a rolling window moves at
 * every refresh), and says how the looks go. A start being typed is left alone.
 */
export function showExperimentStart(from, chosen, rolling) {
  const input = byId('ab-start');
  if (document.activeElement !== input) input.value = dateTimeInput(from);
  byId('ab-start-clear').hidden = !chosen;
  const end = rolling ? 'now' : 'the window\'s end';
  replaceChildren(byId('ab-window'),
    `The experiment runs from its start to ${end}: each look extends its end and keeps its start, and the always-valid decision stays valid however often you look.`,
    chosen ? '' : ` No start set: it starts with the dashboard's window${rolling ? ', which moves with every look' : ''}. Set the time the test began.`);
}

function plural(dimension) {
  return dimension === 'connection' ? 'connections' : `${dimension}s`;
}
