// uPlot charts that stay in place across refreshes: new data goes into the existing chart (no flicker,
// the hover legend survives) unless the series changed, and charts follow their container's width.
// Series labels may be beacon strings (variant names): uPlot puts labels in the legend as text
// (textContent) and draws axes on a canvas, so they are never parsed as HTML.
import uPlot from '../vendor/uPlot.esm.js';
import { dateTime, hoursMinutes, monthDay, number } from './format.js';

const tickFormat = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 2 });

/** The percentiles the summary reports: the x axis of distribution charts, evenly spaced. */
export const PERCENTILES = [50, 75, 90, 95, 99];
export const PALETTE = ['#2563eb', '#ea580c', '#059669', '#9333ea', '#dc2626', '#0891b2', '#ca8a04', '#db2777'];

const AXIS = { stroke: '#5b6472', grid: { stroke: '#eef0f3', width: 1 }, ticks: { stroke: '#eef0f3', width: 1 }, font: '11px system-ui, sans-serif' };
const plots = new Map(); // container → { plot, signature }

const resizer = new ResizeObserver((entries) => {
  for (const { target } of entries) {
    const entry = plots.get(target);
    if (entry && target.clientWidth > 0) entry.plot.setSize({ width: target.clientWidth, height: entry.plot.height });
  }
});

/**
 * Draws `data` (uPlot's columns: x values, then one array per series) in `container`.
 * `series`: `[{ label, color, dash }]`; `height` in px; `x`: 'time' (epoch seconds) or 'percentile'
 * (x values are indexes into PERCENTILES); `unit` follows values in the legend (axes stay bare).
 */
export function draw(container, { series, data, height, x = 'time', unit = '' }) {
  const signature = JSON.stringify([series, height, x, unit]);
  const existing = plots.get(container);
  if (existing?.signature === signature) {
    existing.plot.setData(data);
    return;
  }
  existing?.plot.destroy();
  const options = {
    width: Math.max(container.clientWidth, 120),
    height,
    legend: { show: true, live: true },
    cursor: { drag: { x: x === 'time', y: false } },
    scales: { x: { time: x === 'time' }, y: { range: (_, min, max) => [0, max > 0 ? max * 1.08 : 1] } },
    axes: [
      x === 'time' ? { ...AXIS, size: 30, values: timeTicks } : { ...AXIS, size: 30, splits: () => PERCENTILES.map((_, i) => i), values: (_, ticks) => ticks.map(percentileLabel) },
      { ...AXIS, size: 44, values: (_, ticks) => ticks.map((v) => tickFormat.format(v)) },
    ],
    series: [
      x === 'time' ? { label: 'time', value: hoveredTime } : { label: 'percentile', value: (_, i) => percentileLabel(i) },
      ...series.map(({ label, color, dash }) => ({
        label,
        stroke: color,
        width: 1.75,
        dash,
        spanGaps: false,
        points: { show: x !== 'time', size: 5 },
        value: (_, v) => (v === null ? '—' : `${number(v)}${unit}`),
      })),
    ],
  };
  const plot = new uPlot(options, data, container);
  plots.set(container, { plot, signature });
  resizer.observe(container);
}

// Hours and minutes below a day's steps, else the date: one short line under small charts.
function timeTicks(_, ticks, _axis, _space, step) {
  return ticks.map((t) => (step >= 86_400 ? monthDay(t * 1000) : hoursMinutes(t * 1000)));
}

// The hovered time in the legend: the clock alone when the chart spans less than a day (it fits
// under a small chart without wrapping), else with the date.
function hoveredTime(u, t) {
  if (t === null) return '';
  const times = u.data[0];
  return times[times.length - 1] - times[0] < 86_400 ? hoursMinutes(t * 1000) : dateTime(t * 1000);
}

function percentileLabel(index) {
  return index === null || PERCENTILES[index] === undefined ? '' : `p${PERCENTILES[index]}`;
}

/** A time series' points `[[t_ms, v], ...]` as uPlot columns (epoch seconds on x). */
export function columns(pointLists) {
  const times = [...new Set(pointLists.flatMap((points) => points.map(([t]) => t)))].sort((a, b) => a - b);
  const index = new Map(times.map((t, i) => [t, i]));
  return [
    times.map((t) => t / 1000),
    ...pointLists.map((points) => {
      const values = new Array(times.length).fill(null);
      for (const [t, v] of points) values[index.get(t)] = v;
      return values;
    }),
  ];
}
