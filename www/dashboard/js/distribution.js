// The shape of TPOT and of the per-stream gap p90, per variant: each variant's p50..p99 as a curve.
// A variant that is slower only in its tail shows as curves that part at p90, which a median hides.
import { draw, PALETTE, PERCENTILES } from './charts.js';
import { byId } from './dom.js';

const CHART_HEIGHT = 240;

/** Draws both charts from the summary grouped by variant (the busiest variants, one colour each). */
export function renderDistributions(groups) {
  const variants = [...groups].sort((x, y) => (y.count ?? 0) - (x.count ?? 0)).slice(0, PALETTE.length);
  const series = variants.map((g, i) => ({ label: g.key.variant ?? '(none)', color: PALETTE[i] }));
  for (const [metric, id] of [['tpotMs', 'chart-tpot-distribution'], ['gapP90Ms', 'chart-gap-distribution']]) {
    const data = [PERCENTILES.map((_, i) => i), ...variants.map((g) => PERCENTILES.map((p) => g[metric]?.[`p${p}`] ?? null))];
    draw(byId(id), { series, data, height: CHART_HEIGHT, x: 'percentile', unit: ' ms' });
  }
}
