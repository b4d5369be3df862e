// The slowest streams of the current filters, one per row, from /api/streams: the streams behind a bad
// percentile. A row picked (click, or Enter) shows its cadence below; the worst is shown first. Names
// are beacon strings: they go in as text.
import { renderCadence } from './cadence-chart.js';
import { byId, el, replaceChildren } from './dom.js';
import { count, dateTime, hoursMinutes, number } from './format.js';

/** Rows shown. */
export const SLOWEST_LIMIT = 20;

const COLUMNS = [
  { head: 'started', title: 'when the request was sent', cell: (s) => hoursMinutes(s.startedAt), detail: (s) => `${dateTime(s.startedAt)}, stream ${s.id}` },
  { head: 'model', cell: (s) => s.model, name: true },
  { head: 'scenario', cell: (s) => s.scenario, name: true },
  { head: 'variant', cell: (s) => s.variant, name: true },
  { head: 'status', title: 'ok, aborted (the user stopped it), incomplete (the page was left), error, http_error', cell: (s) => s.status },
  { head: 'TTFT', sort: 'ttftMs', title: 'time to first token painted', cell: (s) => number(s.ttftMs), num: true },
  { head: 'TPOT', sort: 'tpotMs', title: 'time per output token after the first, painted', cell: (s) => number(s.tpotMs), num: true },
  { head: 'tokens', title: 'output tokens', cell: (s) => count(s.outputTokens), num: true },
  { head: 'gap p90', sort: 'gapP90Ms', title: "90th percentile of the stream's render gaps", cell: (s) => number(s.gapP90Ms), num: true },
  { head: 'stalls', title: 'render gaps of 500 ms or more', cell: (s) => count(s.stalls?.count), num: true },
  { head: 'stall time', sort: 'stallMs', title: 'summed stall time', cell: (s) => number(s.stalls?.totalMs), num: true },
  { head: 'render delay', sort: 'renderDelayMs', title: 'median of paint minus arrival', cell: (s) => number(s.renderDelay?.p50), num: true },
];

/** The id of the stream whose cadence is shown, kept while it stays in the table. */
let picked = null;

/** Renders the API's `streams`, ranked by `sort` (that column is marked), and the picked one's cadence. */
export function renderStreamsTable(streams, sort) {
  if (!streams.some((s) => s.id === picked)) picked = streams[0]?.id ?? null;
  const head = el('tr', {}, COLUMNS.map((c) => el('th', { scope: 'col', class: c.num ? 'num' : null, title: c.title, 'aria-sort': c.sort === sort ? 'descending' : null }, c.head)));
  const rows = streams.map((s) => {
    const row = el('tr', { tabindex: 0, 'aria-selected': String(s.id === picked), title: 'show its cadence' }, COLUMNS.map((c) => cell(c, s, sort)));
    // The mark moves in place: the rows, and the keyboard's focus on them, stay.
    const pick = () => {
      picked = s.id;
      rows.forEach((r, i) => r.setAttribute('aria-selected', String(streams[i].id === picked)));
      renderCadence(s);
    };
    row.addEventListener('click', pick);
    row.addEventListener('keydown', (e) => e.key === 'Enter' && pick());
    return row;
  });
  const empty = streams.length === 0 ? el('tr', {}, el('td', { colspan: COLUMNS.length, class: 'unset' }, 'No stream in this range.')) : null;
  replaceChildren(byId('streams'), el('thead', {}, head), el('tbody', {}, rows, empty));
  renderCadence(streams.find((s) => s.id === picked));
}

function cell(column, stream, sort) {
  const value = column.cell(stream);
  if (column.name && (value === null || value === undefined)) return el('td', { class: 'unset' }, '(none)');
  const classes = [column.num && 'num', column.name && 'name', column.sort === sort && 'ranked'].filter(Boolean).join(' ');
  return el('td', { class: classes || null, title: column.name ? value : column.detail?.(stream) }, value);
}
