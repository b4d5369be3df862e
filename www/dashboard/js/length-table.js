// "TPOT by answer length": the streams of the current filters split by how many tokens they output,
// each band's TPOT and stall rate. Long answers are where a slow pace is felt: a median over all
// streams can hide that they alone are slow.
import { byId, el, replaceChildren } from './dom.js';
import { count, ms, percent } from './format.js';

/** The summary's `byLength` keys, and how the table names them. */
const BANDS = [['1-50', '1–50 tokens'], ['51-500', '51–500 tokens'], ['over500', 'over 500 tokens']];

const COLUMNS = [
  { head: 'streams', title: 'streams with this many output tokens', cell: (b) => count(b?.count ?? 0) },
  { head: 'TPOT p50', title: 'time per output token, median', cell: (b) => ms(b?.tpotMs?.p50) },
  { head: 'TPOT p90', title: 'time per output token, 90th percentile', cell: (b) => ms(b?.tpotMs?.p90) },
  { head: 'stall rate', title: 'share of streams with a render gap of 500 ms or more', cell: (b) => percent(b?.stallRate) },
];

/** Renders the ungrouped summary's one group (undefined when there is no stream). */
export function renderLengthTable(total) {
  const head = el('tr', {}, el('th', { scope: 'col' }, 'answer length'), COLUMNS.map(({ head, title }) => el('th', { scope: 'col', class: 'num', title }, head)));
  const rows = BANDS.map(([key, name]) => el('tr', {}, el('th', { scope: 'row' }, name), COLUMNS.map((c) => el('td', { class: 'num' }, c.cell(total?.byLength?.[key])))));
  replaceChildren(byId('by-length'), el('thead', {}, head), el('tbody', {}, rows));
}
