// The A/B panel: two arms of one dimension compared on one metric by /api/compare. Arm names are
// beacon strings: they go in as text.
import { byId, el, replaceChildren } from './dom.js';
import { count, ms, percent, pValue } from './format.js';
import { AB_METRICS } from './view-state.js';

/** Shows `compare`, the API's answer for arms `a` and `b` on `metric`. */
export function renderComparison(compare, metric) {
  const { a, b, difference, mannWhitney, stallRate, stopRate, goodput } = compare;
  const name = AB_METRICS[metric] ?? metric;
  const row = (label, left, right, test) => el('tr', {}, el('th', { scope: 'row' }, label), el('td', { class: 'num' }, left), el('td', { class: 'num' }, right), el('td', { class: 'num test' }, test));
  const table = el('table', { class: 'ab-table' },
    el('thead', {}, el('tr', {}, el('th', {}), el('th', { scope: 'col', class: 'num arm' }, 'a: ', armName(a.value)), el('th', { scope: 'col', class: 'num arm' }, 'b: ', armName(b.value)), el('th', { scope: 'col', class: 'num' }, 'test'))),
    el('tbody', {},
      row('streams', count(a.count), count(b.count), ''),
      row(`median ${name}`, ms(a.median), ms(b.median), `Mann-Whitney p ${pValue(mannWhitney?.pValue)}`),
      row('stall rate', percent(stallRate?.a), percent(stallRate?.b), `p ${pValue(stallRate?.pValue)}`),
      row('stop rate', percent(stopRate?.a), percent(stopRate?.b), `p ${pValue(stopRate?.pValue)}`),
      row('goodput', percent(goodput?.a), percent(goodput?.b), `p ${pValue(goodput?.pValue)}`)));
  const [low, high] = difference?.ci95 ?? [null, null];
  const shift = el('p', { class: 'ab-difference' }, `difference in ${name} (b − a): `, el('strong', {}, signedMs(difference?.estimate)),
    `, 95% CI ${ms(low)} to ${ms(high)}`);
  replaceChildren(byId('ab-result'), table, shift, el('p', { id: 'ab-verdict', class: 'verdict' }, compare.verdict ?? ''));
}

/** What to show instead of a comparison (no arms picked yet, the same arm twice). */
export function renderComparisonHint(text) {
  replaceChildren(byId('ab-result'), el('p', { class: 'hint' }, text));
}

function armName(value) {
  return value === null || value === undefined ? '(none)' : value;
}

function signedMs(value) {
  if (value === null || value === undefined || !Number.isFinite(value)) return ms(value);
  return `${value > 0 ? '+' : ''}${ms(value)}`;
}
