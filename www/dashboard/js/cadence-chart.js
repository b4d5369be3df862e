// One stream's cadence (tokens shown against time, from /api/streams) drawn against an ideal steady
// stream: the same first token, last token and length, at an even pace. Where the stream runs under the
// ideal line it fell behind. A stretch between two points that took 500 ms or more longer than the
// stream's own TPOT would for the tokens it added is a stall (red): the downsampling keeps the edges of
// every stall, so each is a stretch of its own, while a steady stretch, however long, adds its tokens at
// about the TPOT pace. When the cadence is on the render timeline, a tick marks when the first token
// arrived, before the page painted it.
import { byId, replaceChildren } from './dom.js';
import { count, number, tick } from './format.js';

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 720;
const HEIGHT = 240;
const MARGIN = { left: 56, right: 16, top: 12, bottom: 34 };
/** Stretches this much slower than the stream's pace are stalls, as in the report (docs/metrics.md). */
const STALL_MS = 500;

/** Draws `stream`'s cadence into #cadence, with a caption; a stream without one says why. */
export function renderCadence(stream) {
  const caption = byId('cadence-caption');
  const points = stream?.cadence ?? [];
  if (!stream) {
    replaceChildren(caption, 'No stream to show.');
    return replaceChildren(byId('cadence'));
  }
  const rendered = stream.ttftMs !== null && stream.ttftMs !== undefined;
  const timeline = rendered ? 'tokens painted' : 'tokens arrived (nothing painted)';
  replaceChildren(caption, `${stream.model ?? '(no model)'} · ${count(stream.outputTokens)} tokens · TTFT ${number(stream.ttftMs ?? stream.ttftArrivalMs)} ms · ` +
    `TPOT ${number(stream.tpotMs ?? stream.tpotArrivalMs)} ms · ${timeline} · stream ${stream.id}`);
  if (points.length === 0) {
    return replaceChildren(byId('cadence'), svg('text', { x: WIDTH / 2, y: HEIGHT / 2, 'text-anchor': 'middle', class: 'unset' }, stream.cadence ? 'No output arrived.' : 'This stream was sent without a cadence (a package before it).'));
  }
  const tpot = (rendered ? stream.tpotMs : stream.tpotArrivalMs) ?? 0;
  replaceChildren(byId('cadence'), ...chart(points, tpot, rendered ? stream.ttftArrivalMs : null));
}

function chart(points, tpot, arrivalMs) {
  const [first, last] = [points[0], points[points.length - 1]];
  const maxX = niceCeil(last[0]);
  const maxY = niceCeil(Math.max(last[1], 1));
  const x = (ms) => MARGIN.left + (ms / maxX) * (WIDTH - MARGIN.left - MARGIN.right);
  const y = (tokens) => HEIGHT - MARGIN.bottom - (tokens / maxY) * (HEIGHT - MARGIN.top - MARGIN.bottom);
  const path = (pts) => pts.map(([ms, tokens], i) => `${i ? 'L' : 'M'}${x(ms).toFixed(1)},${y(tokens).toFixed(1)}`).join('');
  const stalls = points.slice(1).map((p, i) => [points[i], p]).filter(([a, b]) => b[0] - a[0] - (b[1] - a[1]) * tpot >= STALL_MS);
  const ticks = (max) => [0, 0.25, 0.5, 0.75, 1].map((f) => f * max);
  return [
    ...ticks(maxY).map((t) => svg('line', { x1: MARGIN.left, x2: WIDTH - MARGIN.right, y1: y(t), y2: y(t), class: 'grid' })),
    ...ticks(maxY).map((t) => svg('text', { x: MARGIN.left - 6, y: y(t) + 4, 'text-anchor': 'end' }, tick(t))),
    ...ticks(maxX).map((t, i) => svg('text', { x: x(t), y: HEIGHT - MARGIN.bottom + 16, 'text-anchor': i === 4 ? 'end' : i ? 'middle' : 'start' }, maxX >= 10_000 ? `${tick(t / 1000)} s` : `${tick(t)} ms`)),
    svg('text', { x: 12, y: MARGIN.top + 4, class: 'axis-name', transform: `rotate(-90 12 ${MARGIN.top + 4})`, 'text-anchor': 'end' }, 'tokens'),
    // The ideal: from the first output to the last at an even pace (the stream's own mean TPOT).
    svg('path', { d: path([first, last]), class: 'ideal' }, svg('title', {}, 'a steady stream with the same first and last token')),
    svg('path', { d: path(points), class: 'shown' }, svg('title', {}, 'this stream')),
    ...stalls.map(([a, b]) => svg('path', { d: path([a, b]), class: 'stall' }, svg('title', {}, `stall: ${count(b[0] - a[0])} ms without new text`))),
    ...points.map(([ms, tokens]) => svg('circle', { cx: x(ms), cy: y(tokens), r: 2.5, class: 'point' }, svg('title', {}, `${count(ms)} ms: ${count(tokens)} tokens`))),
    arrivalMs === null || arrivalMs === undefined
      ? null
      : svg('line', { x1: x(arrivalMs), x2: x(arrivalMs), y1: y(0), y2: y(0) - 10, class: 'arrival' }, svg('title', {}, `first token arrived at ${number(arrivalMs)} ms`)),
  ].filter(Boolean);
}

/** A round axis end at least `value`: 1, 1.2, 1.6, 2, 2.4, 3, 4, 5, 6 or 8 times a power of ten (quarters stay round). */
function niceCeil(value) {
  const power = 10 ** Math.floor(Math.log10(Math.max(value, 1)));
  return [1, 1.2, 1.6, 2, 2.4, 3, 4, 5, 6, 8, 10].map((m) => m * power).find((v) => v >= value);
}

function svg(tag, attributes, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  node.append(...children.map((c) => (typeof c === 'string' ? document.createTextNode(c) : c)));
  return node;
}
