// Raw samples of one result as a box plot (quartiles, whiskers at 1.5 IQR) with every
// sample drawn as a jittered point beside it.
import {escapeHtml} from '../dom.js';
import {formatNs} from '../format.js';
import {drawChart, palette} from './setup.js';

// Linear-interpolated quantile of sorted values (Hyndman & Fan 1996, type 7).
export function quantile(sorted, q) {
  if (sorted.length === 0) return NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

export function boxStats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const q1 = quantile(sorted, 0.25);
  const q2 = quantile(sorted, 0.5);
  const q3 = quantile(sorted, 0.75);
  const iqr = q3 - q1;
  const inside = sorted.filter((v) => v >= q1 - 1.5 * iqr && v <= q3 + 1.5 * iqr);
  return [inside[0], q1, q2, q3, inside[inside.length - 1]];
}

export function drawDistribution(el, samples, {title} = {}) {
  // Deterministic jitter so screenshots are stable.
  const jitter = (i) => ((i * 7919) % 1000) / 1000 * 0.5 - 0.25;
  return drawChart(el, {
    title: title ? {text: title, left: 'center', textStyle: {fontSize: 13}} : undefined,
    grid: {left: 8, right: 24, top: title ? 32 : 12, bottom: 28, containLabel: true},
    tooltip: {trigger: 'item', formatter: (p) => escapeHtml(
      p.seriesType === 'boxplot' ?
        `whiskers ${formatNs(p.value[1])} – ${formatNs(p.value[5])}, quartiles ${formatNs(p.value[2])} – ` +
        `${formatNs(p.value[4])}, median ${formatNs(p.value[3])}` :
        `sample #${p.dataIndex}: ${formatNs(p.data[0])}`)},
    xAxis: {type: 'value', scale: true, axisLabel: {formatter: (v) => formatNs(v)}},
    yAxis: [
      {type: 'category', data: ['samples'], axisLabel: {show: false}, axisTick: {show: false}},
      {type: 'value', min: -0.5, max: 0.5, show: false},
    ],
    series: [
      {type: 'boxplot', layout: 'horizontal', yAxisIndex: 0, data: [boxStats(samples)],
        itemStyle: {color: '#e8eefb', borderColor: palette[0]}, boxWidth: [20, 60]},
      {type: 'scatter', yAxisIndex: 1, symbolSize: 4, itemStyle: {color: palette[1], opacity: 0.6},
        data: samples.map((v, i) => [v, jitter(i)])},
    ],
  });
}
