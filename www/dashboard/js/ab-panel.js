// The A/B panel: /api/compare's judgement of two arms of one dimension, with the unit the app
// assigns arms to (the session, or its user) as the sample. The decision (the always-valid test of the mean, which stays valid however often this page
// looks) is the headline; a sample ratio mismatch overrides it and shows as a warning. The
// fixed-horizon test and the secondary figures are labelled as what they are, so that their
// p-values do not read as more chances of a winner. Arm names are beacon strings: they go in as text.
import { byId, el, replaceChildren } from './dom.js';
import { count, ms, percent, points, pValue, signed, tick } from './format.js';
import { AB_METRICS } from './view-state.js';

/** The API's `unit` as counts read ("412 sessions"). */
const UNIT_PLURALS = { session: 'sessions', user: 'users' };

/** Shows `compare`, the API's answer. */
export function renderComparison(compare) {
  const { a, b, sequential, srm } = compare;
  const name = AB_METRICS[compare.metric] ?? compare.metric;
  const units = UNIT_PLURALS[compare.unit] ?? compare.unit;
  replaceChildren(byId('ab-result'),
    el('p', { id: 'ab-status', class: `ab-status ${statusKind(sequential.decision)}` }, headline(sequential, a, b)),
    el('p', { class: 'ab-status-detail' }, srm.mismatch
      ? `the always-valid test (${sequential.method}) of the mean ${name} is set aside until the split is explained`
      : `the decision: the always-valid test (${sequential.method}) of the mean ${name}, p ${pValue(sequential.pValue)}`),
    srm.mismatch && srmWarning(srm, a, b, units),
    armsTable(a, b, name, units),
    primaryDifference(compare, name),
    notes(compare, units),
    powerLine(compare.power, units),
    fixedHorizon(compare.difference),
    secondaryTable(compare.secondary, a, b, name),
    el('p', { id: 'ab-verdict', class: 'verdict' }, compare.verdict ?? ''));
}

/** What to show instead of a comparison (no arms picked yet, the same arm twice, a start after the end). */
export function renderComparisonHint(text) {
  replaceChildren(byId('ab-result'), el('p', { class: 'hint' }, text));
}

/** The decision in words, with the better arm by its name. */
function headline({ decision, status }, a, b) {
  if (decision === 'aBetter') return `${armName(a.value)} is better`;
  if (decision === 'bBetter') return `${armName(b.value)} is better`;
  if (decision === 'sampleRatioMismatch') return 'Sample ratio mismatch: no decision';
  return capitalized(status);
}

function statusKind(decision) {
  if (decision === 'sampleRatioMismatch') return 'mismatch';
  return decision === 'keepCollecting' ? 'open' : 'decided';
}

function srmWarning({ expected, observed, pValue: p }, a, b, units) {
  const total = observed[0] + observed[1];
  return el('p', { id: 'ab-srm', class: 'ab-srm' },
    el('strong', {}, 'Sample ratio mismatch'),
    `: ${count(observed[0])} ${units} in a (${armName(a.value)}) and ${count(observed[1])} in b (${armName(b.value)}), where about ${count(total * expected[0])} and ${count(total * expected[1])} were expected (${percent(expected[0])} : ${percent(expected[1])}), p ${pValue(p)}. `,
    `${capitalized(units)} of one arm go missing or are counted twice: no figure below can be trusted until that is fixed.`);
}

function armsTable(a, b, name, units) {
  const row = (label, left, right) => el('tr', {}, el('th', { scope: 'row' }, label), el('td', { class: 'num' }, left), el('td', { class: 'num' }, right));
  return el('table', { class: 'ab-table', id: 'ab-arms' },
    el('thead', {}, el('tr', {}, el('th', {}), armHeading('a', a), armHeading('b', b))),
    el('tbody', {},
      row(units, count(a.units), count(b.units)),
      row('streams', count(a.streams), count(b.streams)),
      row(`mean ${name}`, ms(a.mean), ms(b.mean)),
      row(`median ${name}`, ms(a.median), ms(b.median))));
}

function armHeading(letter, arm) {
  return el('th', { scope: 'col', class: 'num arm' }, `${letter}: `, armName(arm.value));
}

/** The decision's figure: mean b − a, with the confidence sequence (valid at every look). */
function primaryDifference({ difference, sequential }, name) {
  const [low, high] = sequential.ci95 ?? [null, null];
  return el('p', { id: 'ab-difference', class: 'ab-difference' },
    `mean ${name}, b − a: `, el('strong', {}, signed(difference.estimate, ms)),
    difference.relative !== null ? ` (${signed(difference.relative, percent)})` : '',
    '; 95% interval, always valid: ', el('span', { id: 'ab-interval' }, `${signed(low, ms)} to ${signed(high, ms)}`));
}

/** What the counts leave out: units seen in both arms, streams without a unit, units dropped to a sample. */
function notes({ mixedUnits, streamsWithoutUnit, sampled }, units) {
  const said = [
    mixedUnits > 0 && `${count(mixedUnits)} ${units} saw both arms and are left out.`,
    streamsWithoutUnit > 0 && `${count(streamsWithoutUnit)} streams have no ${units.replace(/s$/, '')} unit and are left out.`,
    sampled && `The figures are of a uniform sample of ${units}: there were too many to read.`,
  ].filter(Boolean);
  return said.length > 0 && el('p', { id: 'ab-notes', class: 'ab-note' }, said.join(' '));
}

/** What a fixed-horizon test of the planned difference needs, and what the data detect now. */
function powerLine(power, units) {
  if (power.unitsPerArm === null) return el('p', { id: 'ab-power', class: 'ab-power' }, `Power: not known until the ${units} of an arm differ`);
  const needed = power.moreUnitsPerArm > 0 ? `About ${count(power.moreUnitsPerArm)} more ${units} per arm` : `Enough ${units}`;
  return el('p', { id: 'ab-power', class: 'ab-power' },
    `${needed} to detect a ${tick(power.relativeDifference * 100)}% difference; detectable now: ${percent(power.detectableNow)}`,
    el('small', {}, ` (${count(power.unitsPerArm)} per arm give 80% power at a fixed horizon; the always-valid decision needs about ${count(power.sequentialUnitsPerArm)})`));
}

function fixedHorizon(difference) {
  const [low, high] = difference.ci95 ?? [null, null];
  return el('p', { id: 'ab-fixed', class: 'ab-fixed' },
    el('span', { class: 'label' }, 'Fixed horizon, valid only for a sample size fixed beforehand and looked at once: '),
    `b − a ${signed(difference.estimate, ms)}, 95% CI ${signed(low, ms)} to ${signed(high, ms)}, p ${pValue(difference.pValue)}`);
}

/** The other figures, each with its own fixed-horizon test: context, never the decision. */
function secondaryTable(secondary, a, b, name) {
  const row = (label, figures, format, formatDifference) => {
    const [low, high] = figures.ci95 ?? [null, null];
    return el('tr', {}, el('th', { scope: 'row' }, label),
      el('td', { class: 'num' }, format(figures.a)),
      el('td', { class: 'num' }, format(figures.b)),
      el('td', { class: 'num', title: `95% CI ${signed(low, formatDifference)} to ${signed(high, formatDifference)}` }, signed(figures.difference, formatDifference)),
      el('td', { class: 'num test' }, `p ${pValue(figures.pValue)}`));
  };
  return el('table', { class: 'ab-table ab-secondary', id: 'ab-secondary' },
    el('caption', {}, 'secondary (not the decision) ', el('small', {}, 'each tested at a fixed horizon, one look')),
    el('thead', {}, el('tr', {}, el('th', {}), armHeading('a', a), armHeading('b', b), el('th', { scope: 'col', class: 'num' }, 'b − a'), el('th', { scope: 'col', class: 'num' }, 'test'))),
    el('tbody', {},
      row(`median ${name}`, secondary.median, ms, ms),
      row('stall rate', secondary.stallRate, percent, points),
      row('stop rate', secondary.stopRate, percent, points),
      row('goodput', secondary.goodput, percent, points)));
}

function armName(value) {
  return value === null || value === undefined ? '(none)' : value;
}

function capitalized(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
