// The table per model and scenario, busiest first; times in ms (the panel's title says so). Model and scenario names are beacon strings: they
// go in as text. A percentile over the SLO is marked, so the failing rows stand out.
import { byId, el, replaceChildren } from './dom.js';
import { count, number, percent } from './format.js';

const COLUMNS = [
  { head: 'streams', title: 'streams started in the window', cell: (g) => count(g.count) },
  { head: 'rpm', title: 'streams per minute', cell: (g) => number(g.rpm) },
  { head: 'tok/s', title: 'output tokens per second over the window', cell: (g) => number(g.tokenThroughput) },
  { head: 'TTFT p50', title: 'time to first token, median', cell: (g) => number(g.ttftMs?.p50), slo: (g, slo) => over(g.ttftMs?.p50, slo.ttftMs) },
  { head: 'TTFT p90', title: 'time to first token, 90th percentile', cell: (g) => number(g.ttftMs?.p90), slo: (g, slo) => over(g.ttftMs?.p90, slo.ttftMs) },
  { head: 'TPOT p50', title: 'time per output token, median', cell: (g) => number(g.tpotMs?.p50), slo: (g, slo) => over(g.tpotMs?.p50, slo.tpotMs) },
  { head: 'TPOT p90', title: 'time per output token, 90th percentile', cell: (g) => number(g.tpotMs?.p90), slo: (g, slo) => over(g.tpotMs?.p90, slo.tpotMs) },
  { head: 'gap p90', title: "90th percentile over streams of each stream's render-gap p90", cell: (g) => number(g.gapP90Ms?.p90) },
  { head: 'render delay', title: "median over streams of each stream's render delay p50 (paint minus arrival)", cell: (g) => number(g.renderDelayMs?.p50) },
  { head: 'stall rate', title: 'share of streams with a render gap of 500 ms or more', cell: (g) => percent(g.stallRate) },
  { head: 'stop rate', title: 'share of the streams that had started answering which the user stopped or left', cell: (g) => percent(g.stopRate) },
  { head: 'goodput', title: 'share of streams meeting every SLO at once', cell: (g) => percent(g.goodput) },
];

/** Renders the summary's groups (grouped by model and scenario). */
export function renderGroupsTable(groups, slo) {
  const head = el('tr', {}, el('th', { scope: 'col' }, 'model'), el('th', { scope: 'col' }, 'scenario'),
    COLUMNS.map(({ head, title }) => el('th', { scope: 'col', class: 'num', title }, head)));
  const rows = [...groups].sort((x, y) => (y.count ?? 0) - (x.count ?? 0)).map((g) =>
    el('tr', {}, nameCell(g.key.model), nameCell(g.key.scenario),
      COLUMNS.map((c) => el('td', { class: c.slo?.(g, slo) ? 'num over' : 'num' }, c.cell(g)))));
  replaceChildren(byId('groups'), el('thead', {}, head), el('tbody', {}, rows));
}

/** A dimension value as text; a stream that did not set it shows as "(none)". */
function nameCell(value) {
  return value === null || value === undefined ? el('td', { class: 'unset' }, '(none)') : el('td', { class: 'name', title: value }, value);
}

function over(value, limit) {
  return value !== null && value !== undefined && String(limit ?? '').trim() !== '' && value > Number(limit);
}
