// Strategy × workload heatmap of one device's times normalised to its fastest
// strategy per workload (★ marks the fastest, ⚠ a contended case), coloured on a log
// scale that the Compare page shares between its devices.
import {contendedTitle} from '../contention.js';
import {escapeHtml} from '../dom.js';
import {formatNs} from '../format.js';
import {strategyColour} from '../strategy_colours.js';
import {drawChart} from './setup.js';

// 1.04 -> "1.0", 12.3 -> "12", 1530 -> "1.5k".
export function compactRatio(v) {
  if (v < 10) return v.toFixed(1);
  if (v < 1000) return String(Math.round(v));
  return `${(v / 1000).toFixed(1)}k`;
}

// The top of the colour scale (log10 of the slowest normalised value, at least 0.1) of
// every heatmap drawn from `valueOfs` (one valueOf per chart): charts that share it
// give one value one colour.
export function sharedMaxLog(strategies, workloads, valueOfs) {
  let maxLog = 0.1;
  for (const valueOf of valueOfs) {
    for (const strategy of strategies) {
      for (const w of workloads) {
        const v = valueOf(strategy, w.key);
        if (v) maxLog = Math.max(maxLog, Math.log10(v.normalized));
      }
    }
  }
  return maxLog;
}

// strategies: row labels (in their strategies' colours); workloads: [{key, label}];
// valueOf(strategy, key) -> {normalized, median_ns, fastest, contended, other_cpu_share}
// | null; maxLog: the colour scale's top (sharedMaxLog; default this chart's own).
export function drawNormalizedHeatmap(el, strategies, workloads, valueOf, {title, maxLog} = {}) {
  const data = [];
  const top = maxLog || sharedMaxLog(strategies, workloads, [valueOf]);
  strategies.forEach((strategy, y) => {
    workloads.forEach((w, x) => {
      const v = valueOf(strategy, w.key);
      if (!v) return;
      data.push({value: [x, y, Math.log10(v.normalized)], raw: v});
    });
  });
  return drawChart(el, {
    title: title ? {text: title, left: 'center', textStyle: {fontSize: 13}} : undefined,
    grid: {left: 8, right: 16, top: title ? 32 : 8, bottom: 64, containLabel: true},
    tooltip: {
      formatter: (p) => {
        const raw = p.data.raw;
        return `<b>${escapeHtml(strategies[p.data.value[1]])}</b> · ${escapeHtml(workloads[p.data.value[0]].label)}` +
          `<br>median ${escapeHtml(formatNs(raw.median_ns))}<br>${raw.normalized.toFixed(2)}× the fastest` +
          (raw.contended ? `<br>⚠ ${escapeHtml(contendedTitle(raw))}` : '');
      },
    },
    // Long labels are cut to their width (the full text is in the tooltip), never spilled.
    xAxis: {type: 'category', data: workloads.map((w) => w.label),
      axisLabel: {rotate: 30, fontSize: 11, interval: 0, width: 110, overflow: 'truncate'}},
    yAxis: {type: 'category', data: strategies, inverse: true,
      axisLabel: {fontSize: 11, width: 110, overflow: 'truncate', fontWeight: 600,
        color: (value) => strategyColour(value)}},
    visualMap: {
      min: 0, max: top, calculable: false, orient: 'horizontal', left: 'center', bottom: 0,
      itemHeight: 120, text: [`${Math.pow(10, top).toFixed(1)}× slower`, 'fastest'],
      inRange: {color: ['#2f9e5b', '#f4e58a', '#d9534f']},
    },
    series: [{
      type: 'heatmap',
      data,
      label: {
        show: true, fontSize: 10,
        // Compact (1.0, 12, 1.5k) so a label fits its cell.
        formatter: (p) => `${p.data.raw.contended ? '⚠' : ''}${p.data.raw.fastest ? '★' : compactRatio(p.data.raw.normalized)}`,
      },
    }],
  });
}
