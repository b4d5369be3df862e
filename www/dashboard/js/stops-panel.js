// "Do users give up?": the share of streams the user stopped (the stop button, a new question) or left
// (the page closed) once the first token had arrived, against how slow the stream was: by TTFT band and
// by TPOT band, one bar each. Both charts share one scale, so their bars compare. From the ungrouped
// summary; should it hold several groups, their bands' counts are added up.
import { byId, el, replaceChildren } from './dom.js';
import { band, count, percent } from './format.js';

const SVG = 'http://www.w3.org/2000/svg';
/** Bands with fewer streams than this have a pale bar: a rate of 1 in 2 says little. */
const FEW = 10;

const CHARTS = [
  { metric: 'ttftMs', id: 'stops-ttft', unit: 's', head: 'TTFT', caption: 'by time to first token (TTFT)' },
  { metric: 'tpotMs', id: 'stops-tpot', unit: 'ms', head: 'TPOT', caption: 'by time per output token (TPOT)' },
];

/** Fills the panel from the summary's `groups` (one group: the streams of the current filters). */
export function renderStops(groups) {
  const overall = groups.length === 1 ? groups[0].stopRate : null;
  replaceChildren(byId('stops-overall'), overall === null || overall === undefined
    ? 'no answer got as far as its first token'
    : `${percent(overall)} of the answers that had started were stopped or left`);
  const lists = CHARTS.map(({ metric }) => addUp(groups.map((g) => g.stopsBy?.[metric] ?? [])));
  const full = fullBar(lists.flat());
  CHARTS.forEach((chart, i) => renderChart(chart, lists[i], full));
  replaceChildren(byId('stops-scale'), `Full bar: ${percent(full)}; pale bars: fewer than ${FEW} streams, a rough figure.`);
}

/** The bands of several groups as one list: streams and stops added up, the rate recomputed. */
function addUp(lists) {
  const bands = (lists[0] ?? []).map(({ from, to }) => ({ from, to, streams: 0, stopped: 0 }));
  for (const list of lists) {
    list.forEach((b, i) => {
      bands[i].streams += b.streams;
      bands[i].stopped += b.stopped;
    });
  }
  return bands.map((b) => ({ ...b, stopRate: b.streams > 0 ? b.stopped / b.streams : null }));
}

/** The share a full bar stands for: the highest band's rate, up to a whole 10%. */
function fullBar(bands) {
  const highest = Math.max(0, ...bands.map((b) => b.stopRate ?? 0));
  return Math.min(1, Math.max(0.1, Math.ceil(highest * 10 - 1e-9) / 10));
}

function renderChart({ id, unit, head, caption }, bands, full) {
  const rows = bands.map((b) => el('tr', { class: b.streams > 0 && b.streams < FEW ? 'few' : null },
    el('th', { scope: 'row' }, band(b.from, b.to, unit)),
    el('td', { class: 'rate', title: b.streams > 0 ? `${count(b.stopped)} of ${count(b.streams)} streams stopped or left` : 'no stream in this band' },
      el('div', { class: 'rate-line' }, bar(b.stopRate === null ? 0 : b.stopRate / full), el('span', {}, percent(b.stopRate)))),
    el('td', { class: 'num' }, count(b.streams))));
  replaceChildren(byId(id), el('caption', {}, caption),
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, head), el('th', { scope: 'col' }, 'stopped or left'), el('th', { scope: 'col', class: 'num' }, 'streams'))),
    el('tbody', {}, rows));
}

/** A bar `share` (0..1) of its cell's width; the figure beside it says the same for screen readers. */
function bar(share) {
  const svg = document.createElementNS(SVG, 'svg');
  for (const [name, value] of Object.entries({ class: 'bar', viewBox: '0 0 100 10', preserveAspectRatio: 'none', 'aria-hidden': 'true' })) svg.setAttribute(name, value);
  const track = document.createElementNS(SVG, 'rect');
  for (const [name, value] of Object.entries({ class: 'track', width: 100, height: 10 })) track.setAttribute(name, value);
  const fill = document.createElementNS(SVG, 'rect');
  for (const [name, value] of Object.entries({ class: 'fill', width: (Math.min(1, share) * 100).toFixed(1), height: 10 })) fill.setAttribute(name, value);
  svg.append(track, fill);
  return svg;
}
