// "What users feel": /api/diagnosis's findings, the most severe first, shown above every other panel
// so that a reader learns where the experience breaks before reading figures. The sentences are the
// API's; they quote beacon strings (model names and the like), so they go in as text.
import { byId, el, replaceChildren } from './dom.js';
import { count, pValue } from './format.js';
import { FILTER_DIMENSIONS } from './view-state.js';

/** Each finding kind as a user would name what they feel. A kind added later shows as the API names it. */
const KINDS = {
  start: 'Slow to start',
  stream: 'Slow or uneven streaming',
  page: 'Slow page',
  load: 'Slower at peak',
  network: 'Network bunches tokens',
};

/** What the two sides of a comparison are: the busiest times against the quietest, or a value against the rest. */
const SIDES = { load: ['streams at peak', 'at quiet times'] };
const OTHERWISE = ['streams', 'other streams'];

/**
 * Lists `findings` (the answer's list), or says that nothing stands out. `filters` are the page's: a
 * finding about a value of a filterable dimension gets a button calling `applyFilter(dimension, value)`.
 */
export function renderFindings(findings, filters, applyFilter) {
  if (findings.length === 0) {
    const where = FILTER_DIMENSIONS.some((d) => filters[d]) ? 'in this window with these filters' : 'in this window';
    replaceChildren(byId('findings'), el('p', { class: 'hint' }, `Nothing stands out ${where}: each model, scenario, variant, app version and connection was compared with the rest of the streams (and the busiest times with the quietest), and none is clearly worse. Groups under 30 streams are not judged.`));
    return;
  }
  replaceChildren(byId('findings'), el('ol', { class: 'findings' }, findings.map((f) => finding(f, applyFilter))));
}

function finding({ kind, severity, text, evidence = {} }, applyFilter) {
  const [these, others] = SIDES[kind] ?? OTHERWISE;
  return el('li', { class: `finding ${severity}` },
    el('p', { class: 'finding-head' }, el('span', { class: 'severity' }, severity), ' ', el('strong', {}, KINDS[kind] ?? kind)),
    el('p', { class: 'finding-text' }, text),
    el('p', { class: 'finding-evidence' },
      `${count(evidence.streams)} ${these} vs ${count(evidence.otherStreams)} ${others}; p ${pValue(evidence.pValue)}`, evidence.test ? ` (${evidence.test})` : '',
      filterButton(evidence, applyFilter)));
}

/** A button narrowing the page to the finding's value, when the page has a filter for its dimension (a null value has none). */
function filterButton({ dimension, value }, applyFilter) {
  if (!FILTER_DIMENSIONS.includes(dimension) || typeof value !== 'string') return null;
  const button = el('button', { type: 'button', class: 'finding-filter' }, `Show only this ${dimension}`);
  button.addEventListener('click', () => applyFilter(dimension, value));
  return button;
}
