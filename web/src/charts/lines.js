// Line charts: case history over runs (with change points), memory (RSS vs live
// tasks with least-squares lines) and load (latency percentiles and throughput vs
// users).
import {escapeHtml} from '../dom.js';
import {formatNs, formatTime} from '../format.js';
import {strategyColour} from '../strategy_colours.js';
import {drawChart, palette} from './setup.js';

// The marker of a coordinator change by state (docs/health.md, "Confirmed changes").
const kStateMarks = {
  confirmed: {label: '✓', color: '#c9302c'},
  not_reproduced: {label: '✗', color: '#5cb85c'},
  suspected: {label: '?', color: '#f0ad4e'},
  unconfirmed: {label: '?', color: '#777'},
};

// series: [{name, points: [{t_ms, median_ns, ci_low_ns, ci_high_ns}], changes: [index],
//           states: [{index, state, id}]}]
export function drawHistory(el, series) {
  const chartSeries = [];
  series.forEach((s, i) => {
    const color = palette[i % palette.length];
    chartSeries.push({
      type: 'line', name: s.name, showSymbol: true, symbolSize: 5, itemStyle: {color},
      data: s.points.map((p) => [p.t_ms, p.median_ns]),
      markPoint: {
        symbol: 'pin', symbolSize: 34, itemStyle: {color: '#d9534f'},
        label: {formatter: '∆', color: '#fff'},
        // One mark per point: a change the coordinator recorded (its state) replaces the
        // plain change-point pin on the same point.
        data: s.changes.filter((index) => !(s.states || []).some((m) => m.index === index))
          .map((index) => ({coord: [s.points[index].t_ms, s.points[index].median_ns],
            name: 'change'})).concat((s.states || []).map((m) => {
          const mark = kStateMarks[m.state] || kStateMarks.unconfirmed;
          return {coord: [s.points[m.index].t_ms, s.points[m.index].median_ns], symbol: 'circle', symbolSize: 22,
            itemStyle: {color: mark.color}, label: {formatter: mark.label, color: '#fff'},
            name: `change ${m.id}: ${m.state.replace('_', ' ')}`};
        })),
      },
      // Device fingerprint changes (new kernel, governor, ...): a dashed line where the
      // new segment starts, named by what changed.
      markLine: {
        symbol: 'none', silent: false, lineStyle: {color, type: 'dashed'},
        label: {formatter: 'device', color},
        data: (s.events || []).map((e) => ({xAxis: s.points[e.index].t_ms, name: e.text})),
      },
    });
    chartSeries.push({
      type: 'custom', name: s.name, silent: true, itemStyle: {color},
      renderItem(params, api) {
        const low = api.coord([api.value(0), api.value(1)]);
        const high = api.coord([api.value(0), api.value(2)]);
        return {type: 'line', shape: {x1: low[0], y1: low[1], x2: high[0], y2: high[1]},
          style: {stroke: color, lineWidth: 1, opacity: 0.6}};
      },
      data: s.points.map((p) => [p.t_ms, p.ci_low_ns, p.ci_high_ns]),
    });
  });
  return drawChart(el, {
    grid: {left: 8, right: 24, top: 36, bottom: 28, containLabel: true},
    legend: {top: 0, data: series.map((s) => s.name)},
    tooltip: {trigger: 'item', formatter: (p) => p.seriesType === 'line' ?
      `<b>${escapeHtml(p.seriesName)}</b><br>${escapeHtml(formatTime(p.data[0]))}<br>` +
      `median ${escapeHtml(formatNs(p.data[1]))}` : escapeHtml(p.name || '')},
    xAxis: {type: 'time'},
    yAxis: {type: 'value', scale: true, axisLabel: {formatter: (v) => formatNs(v)}},
    series: chartSeries,
  });
}

// curves: [{name (a strategy: its colour), points: [[tasks, kib]], slope, intercept, r2}]
export function drawMemory(el, curves) {
  const series = [];
  curves.forEach((c) => {
    const color = strategyColour(c.name);
    const label = `${c.name}: ${c.slope.toFixed(1)} KiB/task`;
    series.push({type: 'scatter', name: label, itemStyle: {color}, symbolSize: 7, data: c.points});
    const xs = c.points.map((p) => p[0]).filter((x) => x > 0);
    if (xs.length) {
      const lo = Math.min(...xs);
      const hi = Math.max(...xs);
      const fitted = [];
      for (let k = 0; k <= 40; k++) {
        const x = lo * Math.pow(hi / lo, k / 40);
        fitted.push([x, c.intercept + c.slope * x]);
      }
      series.push({type: 'line', name: label, showSymbol: false, lineStyle: {color, type: 'dashed'},
        itemStyle: {color}, data: fitted});
    }
  });
  return drawChart(el, {
    grid: {left: 8, right: 24, top: 48, bottom: 36, containLabel: true},
    legend: {top: 0, type: 'scroll'},
    tooltip: {trigger: 'item', formatter: (p) =>
      `${escapeHtml(p.seriesName)}<br>${p.data[0]} tasks: ${Number(p.data[1]).toFixed(0)} KiB`},
    xAxis: {type: 'log', name: 'live tasks', nameLocation: 'middle', nameGap: 24},
    yAxis: {type: 'value', name: 'KiB above baseline', nameTextStyle: {align: 'left'}},
    series,
  });
}

// curves: [{name (a strategy: its colour), points: [{users, p50, p95, p99, throughput}]}] (latencies in ms)
export function drawLoad(el, curves, metric) {
  const series = curves.map((c) => ({
    type: 'line', name: c.name, itemStyle: {color: strategyColour(c.name)}, symbolSize: 6,
    data: c.points.map((p) => [p.users, p[metric]]),
  }));
  const isThroughput = metric === 'throughput';
  return drawChart(el, {
    title: {text: isThroughput ? 'throughput (req/s)' : `${metric} latency (ms)`, left: 'center', top: 0,
      textStyle: {fontSize: 13}},
    grid: {left: 8, right: 24, top: 64, bottom: 36, containLabel: true},
    legend: {top: 28, type: 'scroll'},
    tooltip: {trigger: 'item', formatter: (p) =>
      `${escapeHtml(p.seriesName)}<br>${p.data[0]} users: ${Number(p.data[1]).toFixed(1)}`},
    xAxis: {type: 'value', name: 'users', nameLocation: 'middle', nameGap: 24},
    yAxis: {type: 'value', scale: true},
    series,
  });
}
