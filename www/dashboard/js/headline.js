// The four headline tiles, side by side so the kind of slowness shows at a glance: TTFT (slow to
// start), TPOT (slow to stream), RPM and token throughput (slow at peak), each over its time series.
import { columns, draw, PALETTE } from './charts.js';
import { byId, replaceChildren } from './dom.js';
import { count, ms, percent, perMinute, tokensPerSecond } from './format.js';

const CHART_HEIGHT = 120;

/** The time series each tile charts: `[metric, quantile]` per line. */
export const TILE_SERIES = {
  ttft: [['ttftMs', 0.5], ['ttftMs', 0.9]],
  tpot: [['tpotMs', 0.5], ['tpotMs', 0.9]],
  rpm: [['rpm']],
  throughput: [['tokenThroughput']],
};

const QUANTILE_LINES = [
  { label: 'p50', color: PALETTE[0] },
  { label: 'p90', color: PALETTE[1], dash: [5, 3] },
];
const LINES = {
  ttft: { lines: QUANTILE_LINES, unit: ' ms' },
  tpot: { lines: QUANTILE_LINES, unit: ' ms' },
  rpm: { lines: [{ label: 'requests/min', color: PALETTE[2] }], unit: '' },
  throughput: { lines: [{ label: 'tokens/s', color: PALETTE[3] }], unit: '' },
};

/** Fills the tiles from the ungrouped summary's one group (undefined when there is no stream). */
export function renderTiles(total, slo) {
  tile('ttft', ms(total?.ttftMs?.p50), `p90 ${ms(total?.ttftMs?.p90)}`);
  tile('tpot', ms(total?.tpotMs?.p50), `p90 ${ms(total?.tpotMs?.p90)}`);
  tile('rpm', perMinute(total?.rpm), `${count(total?.count ?? 0)} streams`);
  tile('throughput', tokensPerSecond(total?.tokenThroughput), goodputLine(total?.goodput, slo));
}

/** Draws each tile's chart; `pointsOf(tileName)` gives one points list per line of TILE_SERIES. */
export function renderTileCharts(pointsOf) {
  for (const [name, { lines, unit }] of Object.entries(LINES)) {
    draw(byId(`chart-${name}`), { series: lines, data: columns(pointsOf(name)), height: CHART_HEIGHT, unit });
  }
}

function tile(name, value, detail) {
  replaceChildren(byId(`value-${name}`), value);
  replaceChildren(byId(`detail-${name}`), detail);
}

function goodputLine(goodput, slo) {
  const sloSet = [slo.ttftMs, slo.tpotMs].some((limit) => String(limit).trim() !== '');
  return sloSet ? `goodput ${percent(goodput)} within the SLO` : 'goodput: set an SLO';
}
