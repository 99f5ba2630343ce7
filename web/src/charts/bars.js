// Horizontal bars of a statistic per strategy, sorted fastest first, with the 95%
// confidence interval of the median drawn as whiskers (a custom series).
import {escapeHtml} from '../dom.js';
import {formatNs} from '../format.js';
import {drawChart, palette} from './setup.js';

// rows: [{label, value, low, high, color?}] in display order (top = first); a row's
// own colour (its strategy's) over `color`.
// min/max: the value axis' bounds (sharedBarAxis: one scale for a group's devices);
// undefined lets ECharts choose.
export function drawBarsWithWhiskers(el, rows, {title, logScale = false, min, max, color = palette[0]} = {}) {
  const labels = rows.map((r) => r.label);
  const whiskerSeries = {
    type: 'custom',
    name: '95% CI',
    silent: true,
    z: 3,
    renderItem(params, api) {
      const y = api.value(0);
      const low = api.coord([api.value(1), y]);
      const high = api.coord([api.value(2), y]);
      const half = api.size([0, 1])[1] * 0.18;
      const style = {stroke: '#222', lineWidth: 1.2};
      return {
        type: 'group',
        children: [
          {type: 'line', shape: {x1: low[0], y1: low[1], x2: high[0], y2: high[1]}, style},
          {type: 'line', shape: {x1: low[0], y1: low[1] - half, x2: low[0], y2: low[1] + half}, style},
          {type: 'line', shape: {x1: high[0], y1: high[1] - half, x2: high[0], y2: high[1] + half}, style},
        ],
      };
    },
    encode: {y: 0, x: [1, 2]},
    data: rows.map((r, i) => [i, r.low, r.high]),
  };
  return drawChart(el, {
    title: title ? {text: title, left: 'center', textStyle: {fontSize: 13}} : undefined,
    grid: {left: 8, right: 24, top: title ? 32 : 12, bottom: 28, containLabel: true},
    tooltip: {
      trigger: 'item',
      formatter: (p) => {
        const r = rows[p.dataIndex];
        if (!r) return '';
        return `<b>${escapeHtml(r.label)}</b><br>median ${escapeHtml(formatNs(r.value))}` +
          `<br>95% CI ${escapeHtml(formatNs(r.low))} – ${escapeHtml(formatNs(r.high))}`;
      },
    },
    xAxis: {
      type: logScale ? 'log' : 'value',
      min: min !== undefined ? min : logScale ? undefined : 0,
      max,
      splitNumber: 4,
      axisLabel: {formatter: (v) => formatNs(v), hideOverlap: true, fontSize: 10},
      splitLine: {lineStyle: {color: '#eee'}},
    },
    yAxis: {type: 'category', data: labels, inverse: true, axisLabel: {fontSize: 11}},
    series: [
      {
        type: 'bar',
        name: 'median',
        data: rows.map((r) => (r.color ? {value: r.value, itemStyle: {color: r.color}} : r.value)),
        itemStyle: {color},
        barMaxWidth: 22,
      },
      whiskerSeries,
    ],
  });
}
